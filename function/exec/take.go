package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// take gathers rows idx of a into a new array (typed per layout).
func take(mem memory.Allocator, a arrow.Array, idx []int32) (arrow.Array, error) {
	return takeImpl(mem, a, idx, false)
}

// takeNullable is take where a negative index yields NULL.
func takeNullable(mem memory.Allocator, a arrow.Array, idx []int32) (arrow.Array, error) {
	return takeImpl(mem, a, idx, true)
}

func takeImpl(mem memory.Allocator, a arrow.Array, idx []int32, nullable bool) (arrow.Array, error) {
	n := len(idx)
	k, err := kindOf(a.DataType())
	if err != nil {
		return nil, err
	}
	if k == kNull {
		return array.NewNull(n), nil
	}
	if nullable && a.Len() == 0 {
		return makeNulls(mem, a.DataType(), n), nil
	}
	var valid *memory.Buffer
	vb, voff := validityOf(a)
	switch {
	case nullable:
		var out []byte
		valid, out = newBitmap(mem, n)
		fixed := make([]int32, n)
		for i, j := range idx {
			if j >= 0 && isValid(vb, voff, int(j)) {
				setBit(out, i)
			}
			fixed[i] = max(j, 0)
		}
		idx = fixed
	case vb != nil:
		var out []byte
		valid, out = newBitmap(mem, n)
		for i, j := range idx {
			if bit(vb, voff+int(j)) {
				setBit(out, i)
			}
		}
	}
	switch k {
	case kBool:
		src, off := bitsOf(a)
		b, out := newBitmap(mem, n)
		for i, j := range idx {
			if bit(src, off+int(j)) {
				setBit(out, i)
			}
		}
		return makeArray(a.DataType(), n, valid, b), nil
	case kInt64:
		src := values[int64](a)
		b, out := newFixed[int64](mem, n)
		gather(out, src, idx)
		return makeArray(a.DataType(), n, valid, b), nil
	case kFloat64:
		src := values[float64](a)
		b, out := newFixed[float64](mem, n)
		gather(out, src, idx)
		return makeArray(a.DataType(), n, valid, b), nil
	case kDate:
		src := values[int32](a)
		b, out := newFixed[int32](mem, n)
		gather(out, src, idx)
		return makeArray(a.DataType(), n, valid, b), nil
	case kDec128:
		src := values[decimal128.Num](a)
		b, out := newFixed[decimal128.Num](mem, n)
		gather(out, src, idx)
		return makeArray(a.DataType(), n, valid, b), nil
	case kString:
		offs, data := strOffsets(a)
		total := 0
		for _, j := range idx {
			total += int(offs[j+1] - offs[j])
		}
		sb := newStrBuilder(mem, n, total)
		for _, j := range idx {
			sb.append(data[offs[j]:offs[j+1]])
		}
		return sb.finish(valid)
	}
	if valid != nil {
		valid.Release()
	}
	return nil, fmt.Errorf("take: unsupported type %s", a.DataType())
}

func gather[T int64 | float64 | int32 | decimal128.Num](out, src []T, idx []int32) {
	out = out[:len(idx)]
	for i, j := range idx {
		out[i] = src[j]
	}
}

// takeRecord gathers rows idx of every column of rec.
func takeRecord(mem memory.Allocator, rec arrow.RecordBatch, idx []int32) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		t, err := take(mem, c, idx)
		if err != nil {
			releaseAll(cols)
			return nil, fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
		}
		cols[i] = t
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(len(idx)))
	releaseAll(cols)
	return out, nil
}

// takeMulti gathers rows (src[bi[i]], ri[i]) from several arrays of the same
// type into one array.
func takeMulti(mem memory.Allocator, t arrow.DataType, srcs []arrow.Array, bi, ri []int32) (arrow.Array, error) {
	return takeMultiImpl(mem, t, srcs, bi, ri, false)
}

// takeMultiNullable is takeMulti where a negative bi[i] yields NULL (srcs
// may then be empty).
func takeMultiNullable(mem memory.Allocator, t arrow.DataType, srcs []arrow.Array, bi, ri []int32) (arrow.Array, error) {
	return takeMultiImpl(mem, t, srcs, bi, ri, true)
}

func takeMultiImpl(mem memory.Allocator, t arrow.DataType, srcs []arrow.Array, bi, ri []int32, nullable bool) (arrow.Array, error) {
	n := len(bi)
	k, err := kindOf(t)
	if err != nil {
		return nil, err
	}
	if k == kNull {
		return array.NewNull(n), nil
	}
	var nullRows []int32 // nullable: the rows to make NULL
	if nullable {
		for i, b := range bi {
			if b < 0 {
				nullRows = append(nullRows, int32(i))
			}
		}
		if len(nullRows) == n {
			return makeNulls(mem, t, n), nil
		}
		if len(nullRows) > 0 {
			// gather row 0 of source 0 for them, then clear their validity
			fb, fr := make([]int32, n), make([]int32, n)
			for i := range bi {
				if bi[i] >= 0 {
					fb[i], fr[i] = bi[i], ri[i]
				}
			}
			bi, ri = fb, fr
		}
	}
	type vinfo struct {
		bm  []byte
		off int
	}
	vs := make([]vinfo, len(srcs))
	anyNull := false
	for s, a := range srcs {
		if a.DataType().ID() == arrow.NULL {
			return nil, fmt.Errorf("take: mixed null and %s sources", t)
		}
		vs[s].bm, vs[s].off = validityOf(a)
		if vs[s].bm != nil {
			anyNull = true
		}
	}
	var valid *memory.Buffer
	if anyNull || len(nullRows) > 0 {
		var out []byte
		valid, out = newOnes(mem, n)
		if anyNull {
			for i := range bi {
				v := vs[bi[i]]
				if v.bm != nil && !bit(v.bm, v.off+int(ri[i])) {
					clearBit(out, i)
				}
			}
		}
		for _, i := range nullRows {
			clearBit(out, int(i))
		}
	}
	switch k {
	case kBool:
		type bsrc struct {
			bs  []byte
			off int
		}
		ss := make([]bsrc, len(srcs))
		for s, a := range srcs {
			ss[s].bs, ss[s].off = bitsOf(a)
		}
		b, out := newBitmap(mem, n)
		for i := range bi {
			s := ss[bi[i]]
			if bit(s.bs, s.off+int(ri[i])) {
				setBit(out, i)
			}
		}
		return makeArray(t, n, valid, b), nil
	case kInt64:
		return takeMultiFixed[int64](mem, t, srcs, bi, ri, valid), nil
	case kFloat64:
		return takeMultiFixed[float64](mem, t, srcs, bi, ri, valid), nil
	case kDate:
		return takeMultiFixed[int32](mem, t, srcs, bi, ri, valid), nil
	case kDec128:
		return takeMultiFixed[decimal128.Num](mem, t, srcs, bi, ri, valid), nil
	case kString:
		type ssrc struct {
			offs []int32
			data []byte
		}
		ss := make([]ssrc, len(srcs))
		for s, a := range srcs {
			ss[s].offs, ss[s].data = strOffsets(a)
		}
		// Size the data buffer from the sources' average value length (rows
		// are gathered in random order: one pass over them is enough).
		var srcBytes, srcRows int
		for _, s := range ss {
			srcBytes += int(s.offs[len(s.offs)-1] - s.offs[0])
			srcRows += len(s.offs) - 1
		}
		hint := 0
		if srcRows > 0 {
			hint = int(float64(srcBytes) / float64(srcRows) * float64(n) * 1.1)
		}
		sb := newStrBuilder(mem, n, hint)
		for i := range bi {
			s := &ss[bi[i]]
			j := ri[i]
			sb.append(s.data[s.offs[j]:s.offs[j+1]])
		}
		return sb.finish(valid)
	}
	if valid != nil {
		valid.Release()
	}
	return nil, fmt.Errorf("take: unsupported type %s", t)
}

func takeMultiFixed[T int64 | float64 | int32 | decimal128.Num](mem memory.Allocator, t arrow.DataType, srcs []arrow.Array, bi, ri []int32, valid *memory.Buffer) arrow.Array {
	vals := make([][]T, len(srcs))
	for s, a := range srcs {
		vals[s] = values[T](a)
	}
	b, out := newFixed[T](mem, len(bi))
	for i := range bi {
		out[i] = vals[bi[i]][ri[i]]
	}
	return makeArray(t, len(bi), valid, b)
}
