package kernel

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// takeTypes are the column types the take covers: every engine type layout
// (bool, int64, float64, decimal64, decimal128, string, date32, timestamp,
// null) and the other types the shuffle writer accepts.
var takeTypes = []arrow.DataType{
	arrow.Null,
	arrow.FixedWidthTypes.Boolean,
	arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Float64,
	&arrow.Decimal64Type{Precision: 15, Scale: 2},
	&arrow.Decimal128Type{Precision: 38, Scale: 4},
	arrow.BinaryTypes.String,
	arrow.FixedWidthTypes.Date32,
	&arrow.TimestampType{Unit: arrow.Microsecond},
	arrow.PrimitiveTypes.Int8,
	arrow.PrimitiveTypes.Int16,
	arrow.PrimitiveTypes.Int32,
	arrow.PrimitiveTypes.Uint8,
	arrow.PrimitiveTypes.Uint16,
	arrow.PrimitiveTypes.Uint32,
	arrow.PrimitiveTypes.Uint64,
	arrow.PrimitiveTypes.Float32,
	arrow.FixedWidthTypes.Date64,
	arrow.BinaryTypes.LargeString,
	arrow.BinaryTypes.Binary,
}

// randArray returns a random array of type t with n rows, about nullPct
// percent of them NULL, sliced from offset off of a longer array.
func randArray(t testing.TB, mem memory.Allocator, r *rand.Rand, dt arrow.DataType, n, off, nullPct int) arrow.Array {
	t.Helper()
	total := n + off + r.Intn(3)
	if dt.ID() == arrow.NULL {
		a := array.NewNull(total)
		defer a.Release()
		return array.NewSlice(a, int64(off), int64(off+n))
	}
	if fw, ok := dt.(arrow.FixedWidthDataType); ok && dt.ID() != arrow.BOOL {
		// Fixed width: random value bytes (NULL rows' too) and validity.
		w := fw.BitWidth() / 8
		vals := memory.NewResizableBuffer(mem)
		vals.Resize(total * w)
		r.Read(vals.Bytes())
		valid := memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(total))))
		for i := 0; i < total; i++ {
			bitutil.SetBitTo(valid.Bytes(), i, r.Intn(100) >= nullPct)
		}
		d := array.NewData(dt, total, []*memory.Buffer{valid, vals}, nil, array.UnknownNullCount, 0)
		full := array.MakeFromData(d)
		d.Release()
		vals.Release()
		valid.Release()
		defer full.Release()
		return array.NewSlice(full, int64(off), int64(off+n))
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for i := 0; i < total; i++ {
		if r.Intn(100) < nullPct {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.BooleanBuilder:
			b.Append(r.Intn(2) == 0)
		case *array.StringBuilder:
			b.Append(randString(r))
		case *array.LargeStringBuilder:
			b.Append(randString(r))
		case *array.BinaryBuilder:
			b.Append([]byte(randString(r)))
		default:
			t.Fatalf("no generator for %s", dt)
		}
	}
	a := b.NewArray()
	defer a.Release()
	return array.NewSlice(a, int64(off), int64(off+n))
}

func randString(r *rand.Rand) string {
	s := make([]byte, r.Intn(12))
	for i := range s {
		s[i] = byte('a' + r.Intn(26))
	}
	return string(s)
}

// row is the naive reference's view of one row: NULL, or its value bytes.
func row(a arrow.Array, i int) (bool, []byte) {
	if a.DataType().ID() == arrow.NULL || a.IsNull(i) {
		return false, nil
	}
	switch a := a.(type) {
	case *array.Boolean:
		if a.Value(i) {
			return true, []byte{1}
		}
		return true, []byte{0}
	case *array.String:
		return true, []byte(a.Value(i))
	case *array.LargeString:
		return true, []byte(a.Value(i))
	case *array.Binary:
		return true, a.Value(i)
	}
	w := a.DataType().(arrow.FixedWidthDataType).BitWidth() / 8
	d := a.Data()
	j := d.Offset() + i
	return true, d.Buffers()[1].Bytes()[j*w : (j+1)*w]
}

// checkRows compares got with the reference rows want (src, row) pairs,
// src < 0 meaning NULL.
func checkRows(t *testing.T, got arrow.Array, dt arrow.DataType, srcs []arrow.Array, bi, ri []int32) {
	t.Helper()
	if !arrow.TypeEqual(got.DataType(), dt) {
		t.Fatalf("type %s, want %s", got.DataType(), dt)
	}
	if got.Len() != len(bi) {
		t.Fatalf("%d rows, want %d", got.Len(), len(bi))
	}
	if got.Data().Offset() != 0 {
		t.Fatalf("offset %d", got.Data().Offset())
	}
	nulls := 0
	for i := range bi {
		wantOK, want := false, []byte(nil)
		if bi[i] >= 0 {
			wantOK, want = row(srcs[bi[i]], int(ri[i]))
		}
		gotOK, gotV := row(got, i)
		if !wantOK {
			nulls++
		}
		if gotOK != wantOK || !bytes.Equal(gotV, want) {
			t.Fatalf("row %d (source %d row %d): got (%v, %x), want (%v, %x)", i, bi[i], ri[i], gotOK, gotV, wantOK, want)
		}
	}
	if got.NullN() != nulls {
		t.Fatalf("NullN %d, want %d", got.NullN(), nulls)
	}
	if vb := got.Data().Buffers()[0]; vb != nil && dt.ID() != arrow.NULL {
		if set := bitutil.CountSetBits(vb.Bytes(), 0, got.Len()); set != got.Len()-nulls {
			t.Fatalf("validity has %d set bits, want %d", set, got.Len()-nulls)
		}
	}
}

// TestTakeDifferential checks Take, TakeNullable, TakeMulti and a reused
// Builder against the naive reference over random arrays of every type,
// with and without nulls, sliced and not.
func TestTakeDifferential(t *testing.T) {
	cases := []struct {
		name    string
		n, off  int
		nullPct int
	}{
		{"empty", 0, 0, 0},
		{"dense", 200, 0, 0},
		{"nulls", 200, 0, 30},
		{"all-null", 70, 0, 100},
		{"sliced", 150, 13, 0},
		{"sliced-nulls", 150, 7, 40},
		{"one", 1, 3, 50},
	}
	for _, dt := range takeTypes {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%s", dt, c.name), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
				defer mem.AssertSize(t, 0)
				r := rand.New(rand.NewSource(int64(len(c.name)*7919 + int(dt.ID()))))
				a := randArray(t, mem, r, dt, c.n, c.off, c.nullPct)
				defer a.Release()

				// Take: random indexes with repeats, and NULLs (-1).
				k := r.Intn(2*c.n + 1)
				idx, nidx := make([]int32, k), make([]int32, k)
				zeros := make([]int32, k)
				for i := range idx {
					if c.n > 0 {
						idx[i] = int32(r.Intn(c.n))
					}
					nidx[i] = idx[i]
					if c.n == 0 || r.Intn(4) == 0 {
						nidx[i] = -1
					}
				}
				if c.n > 0 {
					got, err := Take(mem, a, idx)
					if err != nil {
						t.Fatal(err)
					}
					checkRows(t, got, dt, []arrow.Array{a}, zeros, idx)
					got.Release()
				}
				got, err := TakeNullable(mem, a, nidx)
				if err != nil {
					t.Fatal(err)
				}
				bi := make([]int32, k)
				for i, j := range nidx {
					bi[i] = min(j, 0)
				}
				checkRows(t, got, dt, []arrow.Array{a}, bi, nidx)
				got.Release()

				// TakeMulti over three sources (one of them a), some NULL.
				srcs := []arrow.Array{a, randArray(t, mem, r, dt, 40, 5, c.nullPct), randArray(t, mem, r, dt, 9, 0, c.nullPct)}
				defer srcs[1].Release()
				defer srcs[2].Release()
				for _, withNull := range []bool{false, true} {
					bi, ri := make([]int32, k), make([]int32, k)
					for i := range bi {
						s := r.Intn(3)
						if srcs[s].Len() == 0 {
							s = 1
						}
						bi[i], ri[i] = int32(s), int32(r.Intn(srcs[s].Len()))
						if withNull && r.Intn(3) == 0 {
							bi[i] = -1
						}
					}
					got, err := TakeMulti(mem, dt, srcs, bi, ri)
					if err != nil {
						t.Fatal(err)
					}
					checkRows(t, got, dt, srcs, bi, ri)
					got.Release()
				}

				// A Builder reused across batches: appends from several
				// sources (nullable and not) grow it past its reservation.
				b, err := NewBuilder(mem, dt)
				if err != nil {
					t.Fatal(err)
				}
				defer b.Release()
				for round := 0; round < 3; round++ {
					b.Reserve(7)
					var wantB, wantR []int32
					for step := 0; step < 4; step++ {
						s := srcs[1+step%2]
						m := r.Intn(50)
						idx := make([]int32, m)
						for i := range idx {
							idx[i] = int32(r.Intn(s.Len()))
						}
						if step == 1 { // NULLs before rows of a source without any
							for i := range idx {
								if r.Intn(2) == 0 {
									idx[i] = -1
								}
							}
							err = b.AppendNullable(s, idx)
						} else {
							err = b.Append(s, idx)
						}
						if err != nil {
							t.Fatal(err)
						}
						for _, j := range idx {
							if j < 0 {
								wantB, wantR = append(wantB, -1), append(wantR, 0)
							} else {
								wantB, wantR = append(wantB, int32(1+step%2)), append(wantR, j)
							}
						}
					}
					// Rows of several sources at once.
					mb, mr := make([]int32, 30), make([]int32, 30)
					for i := range mb {
						mb[i] = int32(1 + r.Intn(2))
						mr[i] = int32(r.Intn(srcs[mb[i]].Len()))
					}
					if err := b.AppendMulti(srcs, mb, mr); err != nil {
						t.Fatal(err)
					}
					wantB, wantR = append(wantB, mb...), append(wantR, mr...)
					if b.Len() != len(wantB) {
						t.Fatalf("Len %d, want %d", b.Len(), len(wantB))
					}
					got := b.Finish()
					checkRows(t, got, dt, srcs, wantB, wantR)
					got.Release()
				}
			})
		}
	}
}

func TestTakeErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	if _, err := NewBuilder(mem, arrow.ListOf(arrow.FixedWidthTypes.Time32s)); err == nil {
		t.Error("NewBuilder(list of time32): no error")
	}
	ints := array.NewInt64Builder(mem)
	ints.AppendValues([]int64{1, 2, 3}, nil)
	a := ints.NewArray()
	ints.Release()
	defer a.Release()
	cases := []struct {
		name string
		t    arrow.DataType
	}{
		{"narrower", arrow.PrimitiveTypes.Int32},
		{"string", arrow.BinaryTypes.String},
		{"null", arrow.Null},
		{"decimal128", &arrow.Decimal128Type{Precision: 38}},
	}
	for _, c := range cases {
		if _, err := TakeMulti(mem, c.t, []arrow.Array{a}, []int32{0}, []int32{1}); err == nil {
			t.Errorf("%s: TakeMulti of an int64 source: no error", c.name)
		}
	}
	// Layout-compatible types mix (a decimal64 column from int64 values).
	got, err := TakeMulti(mem, &arrow.Decimal64Type{Precision: 18}, []arrow.Array{a}, []int32{0, -1}, []int32{2, 0})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if got.NullN() != 1 || got.(*array.Decimal64).Value(0) != 3 {
		t.Errorf("TakeMulti into decimal64: %v", got)
	}
}

// TestBuilderReserveBytes: after a Finish, Reserve sizes a variable-width
// builder's bytes from the last array's average width, so a batch like the
// last one is appended without the bytes buffer growing; the arrays stay
// equal to their source rows.
func TestBuilderReserveBytes(t *testing.T) {
	cases := []struct {
		name  string
		typ   arrow.DataType
		width int
	}{
		{"string", arrow.BinaryTypes.String, 10},
		{"large string", arrow.BinaryTypes.LargeString, 37},
		{"binary", arrow.BinaryTypes.Binary, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			vals := make([]string, 200)
			for i := range vals {
				vals[i] = fmt.Sprintf("%0*d", tc.width, i)
			}
			bld := array.NewBuilder(mem, tc.typ)
			for _, v := range vals {
				switch b := bld.(type) {
				case *array.StringBuilder:
					b.Append(v)
				case *array.LargeStringBuilder:
					b.Append(v)
				case *array.BinaryBuilder:
					b.Append([]byte(v))
				}
			}
			src := bld.NewArray()
			bld.Release()
			defer src.Release()
			idx := make([]int32, 100)
			for i := range idx {
				idx[i] = int32(i)
			}
			b, err := NewBuilder(mem, tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Append(src, idx); err != nil {
				t.Fatal(err)
			}
			first := b.Finish()
			defer first.Release()
			b.Reserve(100)
			if b.data == nil || b.data.Len() < 100*tc.width {
				t.Fatalf("reserved %v bytes, want at least %d", b.data, 100*tc.width)
			}
			before := &b.data.Bytes()[0]
			for i := range idx {
				idx[i] = int32(100 + i)
			}
			if err := b.Append(src, idx); err != nil {
				t.Fatal(err)
			}
			if &b.data.Bytes()[0] != before {
				t.Error("the bytes buffer grew although it was reserved")
			}
			second := b.Finish()
			defer second.Release()
			for i := 0; i < 100; i++ {
				if got, want := second.ValueStr(i), src.ValueStr(100+i); got != want {
					t.Fatalf("row %d = %q, want %q", i, got, want)
				}
			}
		})
	}
}
