package kernel

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Nested columns (LIST, MAP, STRUCT) in the take/gather: a builder of a
// nested type keeps one child builder per child array and gathers into
// them recursively. A list (or map, which is a list of key/value structs)
// row j of the source appends its child rows offs[j]..offs[j+1] to the
// child builder and one offset; a struct row appends row j of every field.
// So any nesting the readers give goes through the same typed kernels.

// nestedLayout is the layout of a nested type (ok false for others).
func nestedLayout(t arrow.DataType) (layout, bool) {
	switch t.ID() {
	case arrow.LIST:
		return lList, true
	case arrow.MAP:
		return lMap, true
	case arrow.STRUCT:
		return lStruct, true
	}
	return 0, false
}

// childTypes are the types of t's child arrays.
func childTypes(t arrow.DataType) []arrow.DataType {
	switch tt := t.(type) {
	case *arrow.MapType:
		return []arrow.DataType{tt.Elem()}
	case *arrow.ListType:
		return []arrow.DataType{tt.Elem()}
	case *arrow.StructType:
		out := make([]arrow.DataType, tt.NumFields())
		for i, f := range tt.Fields() {
			out[i] = f.Type
		}
		return out
	}
	return nil
}

// nestedSupported reports whether every child of nested type t is
// supported by the take.
func nestedSupported(t arrow.DataType) bool {
	for _, c := range childTypes(t) {
		if !TakeSupported(c) {
			return false
		}
	}
	return true
}

func (l layout) nested() bool { return l == lList || l == lMap || l == lStruct }

// newKids makes the child builders of a nested builder.
func (b *Builder) newKids() error {
	for _, ct := range childTypes(b.t) {
		k, err := NewBuilder(b.mem, ct)
		if err != nil {
			b.Release()
			return err
		}
		b.kids = append(b.kids, k)
	}
	return nil
}

// child returns child array c of a (for a struct, sliced to a's rows; for
// a list, whole: the offsets index into it).
func child(a arrow.Array, c int) arrow.Array {
	d := a.Data()
	cd := d.Children()[c]
	if a.DataType().ID() == arrow.STRUCT && (d.Offset() != 0 || cd.Len() != a.Len()) {
		s := array.NewSliceData(cd, int64(d.Offset()), int64(d.Offset()+a.Len()))
		defer s.Release()
		return array.MakeFromData(s)
	}
	return array.MakeFromData(cd)
}

// appendNested appends rows idx of src (b.grow(len(idx)) done, validity
// appended); a negative index (nullable) appends NULL.
func (b *Builder) appendNested(src arrow.Array, idx []int32, nullable bool) error {
	if b.lay == lStruct {
		for c, k := range b.kids {
			ca := child(src, c)
			err := k.append(ca, idx, nullable)
			ca.Release()
			if err != nil {
				return err
			}
		}
		return nil
	}
	offs := Values[int32](src) // n values; offs[n] read below
	if src.Len() > 0 {
		d := src.Data()
		offs = asSlice[int32](d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+src.Len()+1]
	}
	out := asSlice[int32](b.vals.Bytes())
	pos := out[b.n]
	bm, boff := Validity(src)
	var cidx []int32
	for i, j := range idx {
		if j >= 0 && (bm == nil || bit(bm, boff+int(j))) {
			for r := offs[j]; r < offs[j+1]; r++ {
				cidx = append(cidx, r)
			}
			pos += offs[j+1] - offs[j]
		}
		out[b.n+i+1] = pos
	}
	ca := child(src, 0)
	defer ca.Release()
	return b.kids[0].append(ca, cidx, false)
}

// appendNulls appends k NULL rows to a builder of any layout.
func (b *Builder) appendNulls(k int) error {
	if k == 0 {
		return nil
	}
	empty := array.MakeArrayOfNull(memory.DefaultAllocator, b.t, 0)
	defer empty.Release()
	idx := make([]int32, k)
	for i := range idx {
		idx[i] = -1
	}
	return b.append(empty, idx, true)
}

// appendMultiNested is AppendMulti for nested layouts: runs of rows from
// one source are appended together.
func (b *Builder) appendMultiNested(srcs []arrow.Array, bi, ri []int32) error {
	for i := 0; i < len(bi); {
		j := i + 1
		for j < len(bi) && bi[j] == bi[i] {
			j++
		}
		var err error
		if bi[i] < 0 {
			err = b.appendNulls(j - i)
		} else {
			err = b.append(srcs[bi[i]], ri[i:j], false)
		}
		if err != nil {
			return err
		}
		i = j
	}
	return nil
}

// finishNested hands over a nested builder's rows as an array.
func (b *Builder) finishNested() arrow.Array {
	n := b.n
	b.grow(0, false)
	valid, nulls := b.valid, b.nulls
	if valid != nil && nulls == 0 {
		valid.Release()
		valid = nil
	}
	if valid != nil {
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
	}
	bufs := []*memory.Buffer{valid}
	if b.lay != lStruct {
		b.vals.Resize((n + 1) * 4)
		bufs = append(bufs, b.vals)
	}
	kids := make([]arrow.ArrayData, len(b.kids))
	for i, k := range b.kids {
		a := k.Finish()
		kids[i] = a.Data()
		kids[i].Retain()
		a.Release()
	}
	d := array.NewData(b.t, n, bufs, kids, nulls, 0)
	a := array.MakeFromData(d)
	d.Release()
	for _, k := range kids {
		k.Release()
	}
	for _, buf := range bufs {
		if buf != nil {
			buf.Release()
		}
	}
	b.n, b.nulls, b.used = 0, 0, 0
	b.valid, b.vals, b.data = nil, nil, nil
	return a
}
