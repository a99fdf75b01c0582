package kernel

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/zeebo/xxh3"
)

// TestKeyEncodingOrder: the key encodings of nested values order as
// DuckDB orders the values (checked with DuckDB 1.5: ORDER BY over these
// values gives the order listed), and equal values encode equally.
func TestKeyEncodingOrder(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	st := arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true})
	cases := []struct {
		typ  arrow.DataType
		json string // in ascending order; equal neighbours marked by repeating
	}{
		// select l from (values ...) order by l: [], [0,5], [1], [1,2], [NULL]
		{arrow.ListOf(arrow.PrimitiveTypes.Int64), `[[], [-7, 1], [0, 5], [1], [1], [1, 2], [1, null], [null]]`},
		// {'a':1,'b':'x'} < {'a':1,'b':NULL} < {'a':NULL,'b':'a'}
		{st, `[{"a":-1,"b":"zz"}, {"a":1,"b":""}, {"a":1,"b":"x"}, {"a":1,"b":"x\u0000"}, {"a":1,"b":"xa"}, {"a":1,"b":null}, {"a":null,"b":"a"}]`},
		{arrow.ListOf(arrow.PrimitiveTypes.Float64), `[[-1e300], [-0.5], [0], [1.5], [1e300]]`},
		// map([0],[9]) < map([1],[2]) < map([1,2],[2,3])
		{arrow.MapOf(arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64), `[[{"key":0,"value":9}], [{"key":1,"value":2}], [{"key":1,"value":2},{"key":2,"value":3}]]`},
		{arrow.ListOf(arrow.ListOf(arrow.BinaryTypes.String)), `[[["a"]], [["a"], []], [["a", null]], [["b"]], [null]]`},
	}
	for _, tc := range cases {
		a, _, err := array.FromJSON(mem, tc.typ, strings.NewReader(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		enc, err := EncodeKeys(mem, a)
		if err != nil {
			t.Fatal(err)
		}
		s := enc.(*array.String)
		for i := 1; i < a.Len(); i++ {
			c := bytes.Compare([]byte(s.Value(i-1)), []byte(s.Value(i)))
			same := array.SliceEqual(a, int64(i-1), int64(i), a, int64(i), int64(i+1))
			if same && c != 0 || !same && c >= 0 {
				t.Errorf("%s: rows %d and %d: encodings compare %d (equal values: %v)", tc.typ, i-1, i, c, same)
			}
		}
		h1, h2 := make([]uint64, a.Len()), make([]uint64, a.Len())
		if err := Fold(a, h1); err != nil {
			t.Fatal(err)
		}
		sl := array.NewSlice(a, 1, int64(a.Len()))
		if err := Fold(sl, h2[1:]); err != nil {
			t.Fatal(err)
		}
		for i := 1; i < a.Len(); i++ {
			if h1[i] != h2[i] {
				t.Errorf("%s row %d: hash of a sliced array differs", tc.typ, i)
			}
		}
		sl.Release()
		enc.Release()
		a.Release()
	}
}

// TestNestedHashGolden pins the partitioning hash of nested values (part of
// the storage format, as TestHashGolden in package shuffle): the key
// encoding written out by hand, its XXH3, folded into HashSeed.
func TestNestedHashGolden(t *testing.T) {
	a, _, err := array.FromJSON(memory.DefaultAllocator, arrow.ListOf(arrow.PrimitiveTypes.Int64), strings.NewReader(`[[1, null], [], null]`))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	got := make([]uint64, 3)
	for i := range got {
		got[i] = HashSeed
	}
	if err := Fold(a, got); err != nil {
		t.Fatal(err)
	}
	one := []byte{0x01, 0x01, 0x80, 0, 0, 0, 0, 0, 0, 0x01, 0x01, 0x02, 0x00} // [1, NULL]: elem, valid, 1 with the sign flipped; elem, NULL; end
	want := []uint64{combine(HashSeed, xxh3.Hash(one)), combine(HashSeed, xxh3.Hash([]byte{0x00})), combine(HashSeed, NullHash)}
	pinned := []uint64{0x705ce44bdca2701b}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("row %d: hash %#016x, the definition gives %#016x", i, got[i], want[i])
		}
	}
	if got[0] != pinned[0] {
		t.Errorf("row 0: hash %#016x, pinned %#016x (the partitioning hash changed!)", got[0], pinned[0])
	}
}

// BenchmarkEncodeKeys: key encodings of a list<int64> column (4 elements a
// row) and of a struct of an int64 and a string.
func BenchmarkEncodeKeys(b *testing.B) {
	const n = 100_000
	lb := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Int64)
	vb := lb.ValueBuilder().(*array.Int64Builder)
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true})
	sb := array.NewStructBuilder(memory.DefaultAllocator, st)
	for i := 0; i < n; i++ {
		lb.Append(true)
		for k := 0; k < 4; k++ {
			vb.Append(int64(i*4 + k))
		}
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int64Builder).Append(int64(i))
		sb.FieldBuilder(1).(*array.StringBuilder).Append("value")
	}
	for _, c := range []struct {
		name string
		a    arrow.Array
	}{{"list4", lb.NewArray()}, {"struct", sb.NewArray()}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				e, err := EncodeKeys(memory.DefaultAllocator, c.a)
				if err != nil {
					b.Fatal(err)
				}
				e.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
	}
}
