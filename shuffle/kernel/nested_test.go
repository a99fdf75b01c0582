package kernel

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestTakeNested gathers rows of nested columns (lists of structs of
// lists, maps, sliced sources, NULLs at every level) and checks each
// against the source row it came from.
func TestTakeNested(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	inner := arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true})
	cases := []struct {
		typ  arrow.DataType
		json string
	}{
		{arrow.ListOf(arrow.PrimitiveTypes.Int64), `[[1,2,3], null, [], [null, 5], [6]]`},
		{arrow.ListOf(inner), `[[{"a":1,"b":["x","y"]}, null], null, [{"a":null,"b":null}], [], [{"a":4,"b":[null,"zz"]}]]`},
		{inner, `[{"a":1,"b":["x"]}, null, {"a":null,"b":[]}, {"a":3,"b":null}, {"a":5,"b":["p","q"]}]`},
		{arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), `[[{"key":"k","value":1}], null, [], [{"key":"a","value":null},{"key":"b","value":2}], [{"key":"z","value":9}]]`},
	}
	for _, tc := range cases {
		full, _, err := array.FromJSON(mem, tc.typ, strings.NewReader(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		for _, off := range []int{0, 1} {
			src := array.NewSlice(full, int64(off), int64(full.Len()))
			if !TakeSupported(src.DataType()) {
				t.Fatalf("%s: not supported", tc.typ)
			}
			idx := []int32{3, 0, -1, 2, 2, int32(src.Len() - 1), 1}
			got, err := TakeNullable(mem, src, idx)
			if err != nil {
				t.Fatal(err)
			}
			for i, j := range idx {
				want := "(null)"
				if j >= 0 && src.IsValid(int(j)) {
					want = src.ValueStr(int(j))
				}
				g := "(null)"
				if got.IsValid(i) {
					g = got.ValueStr(i)
				}
				if g != want {
					t.Errorf("%s offset %d row %d: got %s, want %s", tc.typ, off, i, g, want)
				}
			}
			// TakeMulti over two sources, and a second batch in one builder.
			multi, err := TakeMulti(mem, src.DataType(), []arrow.Array{src, full}, []int32{1, 0, -1, 1}, []int32{0, 1, 0, int32(full.Len() - 1)})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{rowStr(full, 0), rowStr(src, 1), "(null)", rowStr(full, full.Len()-1)}
			for i, w := range want {
				if g := rowStr(multi, i); g != w {
					t.Errorf("%s multi row %d: got %s, want %s", tc.typ, i, g, w)
				}
			}
			multi.Release()
			got.Release()
			src.Release()
		}
		full.Release()
	}
}

func rowStr(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "(null)"
	}
	return a.ValueStr(i)
}
