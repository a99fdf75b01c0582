package kernel

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestFoldDictionary: a dictionary-encoded string column folds exactly as
// its plain form, NULL rows and NULL entries included, whether the
// dictionary is shorter or longer than the column; an index out of range
// is an error.
func TestFoldDictionary(t *testing.T) {
	mem := memory.DefaultAllocator
	cases := []struct {
		name    string
		dict    []any // nil: a NULL entry
		idx     []any // nil: a NULL row
		binary  bool
		wantErr bool
	}{
		{name: "short dictionary", dict: []any{"a", "bb", ""}, idx: []any{0, 1, 2, 1, nil, 0, 0, 2}},
		{name: "long dictionary", dict: []any{"w", "x", "y", "z", "q", "r", "s", "t", "u", "v"}, idx: []any{9, nil, 3}},
		{name: "null entry", dict: []any{"a", nil}, idx: []any{1, 0, nil, 1}},
		{name: "binary", dict: []any{"k1", "k2"}, idx: []any{1, 1, 0}, binary: true},
		{name: "out of range", dict: []any{"a"}, idx: []any{0, 3}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var vt arrow.DataType = arrow.BinaryTypes.String
			if tc.binary {
				vt = arrow.BinaryTypes.Binary
			}
			db := array.NewBuilder(mem, vt)
			for _, v := range tc.dict {
				switch b := db.(type) {
				case *array.StringBuilder:
					if v == nil {
						b.AppendNull()
					} else {
						b.Append(v.(string))
					}
				case *array.BinaryBuilder:
					b.Append([]byte(v.(string)))
				}
			}
			dict := db.NewArray()
			ib := array.NewInt32Builder(mem)
			pb := array.NewBuilder(mem, vt)
			for _, v := range tc.idx {
				if v == nil {
					ib.AppendNull()
					pb.AppendNull()
					continue
				}
				e := v.(int)
				ib.Append(int32(e))
				switch {
				case e >= len(tc.dict) || tc.dict[e] == nil:
					pb.AppendNull()
				case tc.binary:
					pb.(*array.BinaryBuilder).Append([]byte(tc.dict[e].(string)))
				default:
					pb.(*array.StringBuilder).Append(tc.dict[e].(string))
				}
			}
			ix, plain := ib.NewArray(), pb.NewArray()
			d := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: vt}, ix, dict)
			got, want := make([]uint64, d.Len()), make([]uint64, d.Len())
			for i := range got {
				got[i], want[i] = HashSeed+uint64(i), HashSeed+uint64(i)
			}
			err := Fold(d, got)
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error for an index out of range")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := Fold(plain, want); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("dictionary folds to %x, plain to %x", got, want)
			}
		})
	}
}
