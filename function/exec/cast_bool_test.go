package exec

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestCastNumbersToBool pins the number -> bool casts (one generic kernel
// for int64, float64 and both decimal layouts): zero is false (-0 too),
// anything else true (NaN too), NULL stays NULL; sliced inputs.
func TestCastNumbersToBool(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	valid := []bool{true, true, true, false, true, true}
	want := []any{false, true, true, nil, true, false} // rows 1.. (row 0 is sliced off)
	cases := []struct {
		name  string
		build func() arrow.Array
	}{
		{"int64", func() arrow.Array {
			b := array.NewInt64Builder(mem)
			defer b.Release()
			b.AppendValues([]int64{9, 0, 7, -1, 3, math.MinInt64, 0}, append([]bool{true}, valid...))
			return b.NewArray()
		}},
		{"float64", func() arrow.Array {
			b := array.NewFloat64Builder(mem)
			defer b.Release()
			b.AppendValues([]float64{9, math.Copysign(0, -1), math.NaN(), 0.5, 3, math.Inf(-1), 0}, append([]bool{true}, valid...))
			return b.NewArray()
		}},
		{"decimal64", func() arrow.Array {
			b := array.NewDecimal64Builder(mem, dec(12, 2).Arrow().(*arrow.Decimal64Type))
			defer b.Release()
			b.AppendValues([]decimal.Decimal64{9, 0, 1, -100, 3, 5, 0}, append([]bool{true}, valid...))
			return b.NewArray()
		}},
		{"decimal128", func() arrow.Array {
			b := array.NewDecimal128Builder(mem, dec(38, 2).Arrow().(*arrow.Decimal128Type))
			defer b.Release()
			b.AppendValues([]decimal128.Num{decimal128.FromI64(9), {}, decimal128.New(1, 0), decimal128.FromI64(-1), decimal128.FromI64(3), decimal128.New(-1, 0), {}},
				append([]bool{true}, valid...))
			return b.NewArray()
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			full := c.build()
			defer full.Release()
			a := array.NewSlice(full, 1, int64(full.Len()))
			defer a.Release()
			got, err := castArray(mem, a, plan.BoolType)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			bs := got.(*array.Boolean)
			for i, w := range want {
				switch {
				case w == nil && !bs.IsNull(i):
					t.Errorf("row %d: %v, want NULL", i, bs.Value(i))
				case w != nil && (bs.IsNull(i) || bs.Value(i) != w.(bool)):
					t.Errorf("row %d: null=%v %v, want %v", i, bs.IsNull(i), bs.Value(i), w)
				}
			}
		})
	}
}
