package exec

import (
	"math"
	"reflect"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestCompareNaN: float comparisons and min/max follow DuckDB's total
// order, where NaN equals NaN and is above every other value (+Inf
// included), both array against array and against a constant, over more
// than one byte of the result bitmap.
func TestCompareNaN(t *testing.T) {
	mem := checkedMem(t)
	nan, inf := math.NaN(), math.Inf(1)
	xs := []any{nan, nan, 1.0, inf, 2.0, nan, -inf, 0.0, 5.0, nan}
	ys := []any{nan, 1.0, nan, nan, 2.0, inf, nan, 0.0, 4.0, 3.0}
	rec := mkRec(mem, floats("x", xs...), floats("y", ys...))
	defer rec.Release()
	x, y := plan.Column(0, "x", plan.Float64Type), plan.Column(1, "y", plan.Float64Type)
	boolT := plan.BoolType
	T, F := true, false
	cases := []struct {
		name string
		e    *plan.Expr
		want []any
	}{
		{"x=y", call(plan.OpEq, boolT, x, y), []any{T, F, F, F, T, F, F, T, F, F}},
		{"x<>y", call(plan.OpNe, boolT, x, y), []any{F, T, T, T, F, T, T, F, T, T}},
		{"x<y", call(plan.OpLt, boolT, x, y), []any{F, F, T, T, F, F, T, F, F, F}},
		{"x<=y", call(plan.OpLe, boolT, x, y), []any{T, F, T, T, T, F, T, T, F, F}},
		{"x>y", call(plan.OpGt, boolT, x, y), []any{F, T, F, F, F, T, F, F, T, T}},
		{"x>=y", call(plan.OpGe, boolT, x, y), []any{T, T, F, F, T, T, F, T, T, T}},
		{"x=NaN", call(plan.OpEq, boolT, x, litF(nan)), []any{T, T, F, F, F, T, F, F, F, T}},
		{"x<NaN", call(plan.OpLt, boolT, x, litF(nan)), []any{F, F, T, T, T, F, T, T, T, F}},
		{"NaN>x", call(plan.OpGt, boolT, litF(nan), x), []any{F, F, T, T, T, F, T, T, T, F}},
		{"x>inf", call(plan.OpGt, boolT, x, litF(inf)), []any{T, T, F, F, F, T, F, F, F, T}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Eval(c.e, rec, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			if g := goVals(got); !reflect.DeepEqual(g, c.want) {
				t.Fatalf("got  %v\nwant %v", g, c.want)
			}
		})
	}
	// min/max of one group and of two.
	for _, c := range []struct {
		name     string
		gids     []uint32
		min, max []float64
	}{
		{"one group", nil, []float64{-inf}, []float64{nan}},
		{"two groups", []uint32{0, 1, 0, 1, 0, 1, 1, 1, 1, 1}, []float64{1, -inf}, []float64{nan, nan}},
	} {
		groups := 1
		if c.gids != nil {
			groups = 2
		}
		v := []float64{nan, nan, 1, inf, 2, nan, -inf, 0, 5, nan}
		for _, isMax := range []bool{false, true} {
			st, has := make([]float64, groups), make([]bool, groups)
			minMaxFixed(st, has, c.gids, v, nil, 0, isMax)
			want := c.min
			if isMax {
				want = c.max
			}
			for g := range st {
				if cmpFloat(st[g], want[g]) != 0 {
					t.Errorf("%s: max=%v group %d: %v, want %v", c.name, isMax, g, st[g], want[g])
				}
			}
		}
	}
}
