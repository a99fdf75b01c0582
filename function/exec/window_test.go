package exec

import (
	"fmt"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestWindowFunctions checks every window function and frame kind on two
// partitions with peers and a NULL ORDER BY key, fed in two batches in an
// order the operator must sort; values are computed by hand.
func TestWindowFunctions(t *testing.T) {
	in := []col{
		ints("p", 2, 1, 1, 2, 1, 1),
		ints("o", nil, 20, 10, 5, 30, 20),
		ints("v", 6, 2, 1, 5, 4, 3),
	}
	// Rows after sorting by p, o (stable): (1,10,1) (1,20,2) (1,20,3) (1,30,4) (2,5,5) (2,NULL,6).
	p, o, v := cref(0, i64T), cref(1, i64T), cref(2, i64T)
	rng := func(s, e plan.FrameBound) plan.Frame { return plan.Frame{Mode: plan.FrameRange, Start: s, End: e} }
	rows := func(s, e plan.FrameBound) plan.Frame { return plan.Frame{Mode: plan.FrameRows, Start: s, End: e} }
	up := plan.FrameBound{Kind: plan.BoundUnboundedPreceding}
	uf := plan.FrameBound{Kind: plan.BoundUnboundedFollowing}
	cur := plan.FrameBound{Kind: plan.BoundCurrentRow}
	pre := func(n float64) plan.FrameBound { return plan.FrameBound{Kind: plan.BoundPreceding, Offset: n} }
	fol := func(n float64) plan.FrameBound { return plan.FrameBound{Kind: plan.BoundFollowing, Offset: n} }
	def := rng(up, cur)
	groups := func(s, e plan.FrameBound) plan.Frame { return plan.Frame{Mode: plan.FrameGroups, Start: s, End: e} }
	exclude := func(f plan.Frame, x plan.FrameExclude) plan.Frame { f.Exclude = x; return f }
	sumT := plan.SumType(i64T) // decimal(38,0)
	for _, tc := range []struct {
		call plan.WindowCall
		want []any
	}{
		{plan.WindowCall{Func: plan.WinRowNumber, Type: i64T}, []any{int64(1), int64(2), int64(3), int64(4), int64(1), int64(2)}},
		{plan.WindowCall{Func: plan.WinRank, Type: i64T}, []any{int64(1), int64(2), int64(2), int64(4), int64(1), int64(2)}},
		{plan.WindowCall{Func: plan.WinDenseRank, Type: i64T}, []any{int64(1), int64(2), int64(2), int64(3), int64(1), int64(2)}},
		{plan.WindowCall{Func: plan.WinPercentRank, Type: f64T}, []any{0.0, 1.0 / 3, 1.0 / 3, 1.0, 0.0, 1.0}},
		{plan.WindowCall{Func: plan.WinCumeDist, Type: f64T}, []any{0.25, 0.75, 0.75, 1.0, 0.5, 1.0}},
		{plan.WindowCall{Func: plan.WinNtile, Type: i64T, Args: []*plan.Expr{litI(3)}}, []any{int64(1), int64(1), int64(2), int64(3), int64(1), int64(2)}},
		{plan.WindowCall{Func: plan.WinLag, Type: i64T, Args: []*plan.Expr{v}}, []any{nil, int64(1), int64(2), int64(3), nil, int64(5)}},
		{plan.WindowCall{Func: plan.WinLead, Type: i64T, Args: []*plan.Expr{v, litI(1), litI(0)}}, []any{int64(2), int64(3), int64(4), int64(0), int64(6), int64(0)}},
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggSum), Type: sumT, Args: []*plan.Expr{v}, Frame: def}, []any{int64(1), int64(6), int64(6), int64(10), int64(5), int64(11)}},
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggSum), Type: sumT, Args: []*plan.Expr{v}, Frame: rows(pre(1), fol(1))}, []any{int64(3), int64(6), int64(9), int64(7), int64(11), int64(11)}},
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggSum), Type: sumT, Args: []*plan.Expr{v}, Frame: rng(pre(10), cur)}, []any{int64(1), int64(6), int64(6), int64(9), int64(5), int64(6)}},
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggCountStar), Type: i64T, Frame: rng(cur, fol(10))}, []any{int64(3), int64(3), int64(3), int64(1), int64(1), int64(1)}},
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggMin), Type: i64T, Args: []*plan.Expr{v}, Frame: rows(cur, uf)}, []any{int64(1), int64(2), int64(3), int64(4), int64(5), int64(6)}},
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggMax), Type: i64T, Args: []*plan.Expr{o}, Frame: rows(up, cur)}, []any{int64(10), int64(20), int64(20), int64(30), int64(5), int64(5)}},
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggCount), Type: i64T, Args: []*plan.Expr{o}, Frame: rows(up, uf)}, []any{int64(4), int64(4), int64(4), int64(4), int64(1), int64(1)}},
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggAvg), Type: f64T, Args: []*plan.Expr{v}, Frame: def}, []any{1.0, 2.0, 2.0, 2.5, 5.0, 5.5}},
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggSum), Type: sumT, Args: []*plan.Expr{v}, Frame: rows(fol(5), uf)}, []any{nil, nil, nil, nil, nil, nil}},
		{plan.WindowCall{Func: plan.WinFirstValue, Type: i64T, Args: []*plan.Expr{v}, Frame: rows(fol(1), uf)}, []any{int64(2), int64(3), int64(4), nil, int64(6), nil}},
		{plan.WindowCall{Func: plan.WinLastValue, Type: i64T, Args: []*plan.Expr{v}, Frame: def}, []any{int64(1), int64(3), int64(3), int64(4), int64(5), int64(6)}},
		{plan.WindowCall{Func: plan.WinNthValue, Type: i64T, Args: []*plan.Expr{v, litI(2)}, Frame: rows(up, uf)}, []any{int64(2), int64(2), int64(2), int64(2), int64(6), int64(6)}},
		// DISTINCT over whole-partition frames: each value once.
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggCount), Type: i64T, Args: []*plan.Expr{o}, Frame: rows(up, uf), Distinct: true}, []any{int64(3), int64(3), int64(3), int64(3), int64(1), int64(1)}},
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggSum), Type: sumT, Args: []*plan.Expr{o}, Frame: rows(up, uf), Distinct: true}, []any{int64(60), int64(60), int64(60), int64(60), int64(5), int64(5)}},
		// GROUPS frames count peer groups; EXCLUDE leaves the row, its group or its ties out.
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggSum), Type: sumT, Args: []*plan.Expr{v}, Frame: groups(pre(1), cur)}, []any{int64(1), int64(6), int64(6), int64(9), int64(5), int64(11)}},
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggSum), Type: sumT, Args: []*plan.Expr{v}, Frame: exclude(rows(up, uf), plan.ExcludeCurrentRow)}, []any{int64(9), int64(8), int64(7), int64(6), int64(6), int64(5)}},
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggSum), Type: sumT, Args: []*plan.Expr{v}, Frame: exclude(rng(up, uf), plan.ExcludeGroup)}, []any{int64(9), int64(5), int64(5), int64(6), int64(6), int64(5)}},
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggSum), Type: sumT, Args: []*plan.Expr{v}, Frame: exclude(groups(pre(1), fol(1)), plan.ExcludeTies)}, []any{int64(6), int64(7), int64(8), int64(9), int64(11), int64(11)}},
		{plan.WindowCall{Func: plan.WindowFunc(plan.AggCountStar), Type: i64T, Frame: exclude(groups(pre(1), fol(1)), plan.ExcludeGroup)}, []any{int64(2), int64(2), int64(2), int64(2), int64(1), int64(1)}},
		{plan.WindowCall{Func: plan.WinFirstValue, Type: i64T, Args: []*plan.Expr{v}, Frame: exclude(rows(pre(1), fol(1)), plan.ExcludeCurrentRow)}, []any{int64(2), int64(1), int64(2), int64(3), int64(6), int64(5)}},
		{plan.WindowCall{Func: plan.WinLastValue, Type: i64T, Args: []*plan.Expr{v}, Frame: exclude(rows(pre(1), fol(1)), plan.ExcludeCurrentRow)}, []any{int64(2), int64(3), int64(4), int64(3), int64(6), int64(5)}},
	} {
		name := fmt.Sprintf("%s %v", tc.call.Func, tc.call.Frame)
		mem := checkedMem(t)
		schema := schemaOf(in)
		src := newSource(schema.Arrow(), mkRec(mem, sliceCols(in, 0, 3)...), mkRec(mem, sliceCols(in, 3, 6)...))
		n := &plan.Node{Kind: plan.KindWindow, Schema: append(append(plan.Schema{}, schema...), plan.Field{Name: "w", Type: tc.call.Type, Nullable: true}),
			Window: &plan.Window{PartitionBy: []*plan.Expr{p}, OrderBy: []plan.SortKey{{Expr: o}}, Calls: []plan.WindowCall{tc.call}}}
		op, err := NewWindow(src, n, Options{Mem: mem, BatchRows: 4})
		got := runOp(t, op, err)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: got %d rows, want %d", name, len(got), len(tc.want))
		}
		for i, r := range got {
			if fmt.Sprint(r[3]) != fmt.Sprint(tc.want[i]) {
				t.Errorf("%s: row %d (%v): got %v, want %v", name, i, r[:3], r[3], tc.want[i])
			}
		}
	}
}

// TestWindowErrors: bad arguments are errors, never panics.
func TestWindowErrors(t *testing.T) {
	mem := checkedMem(t)
	in := []col{ints("v", 1, 2)}
	schema := schemaOf(in)
	n := &plan.Node{Kind: plan.KindWindow, Schema: append(append(plan.Schema{}, schema...), plan.Field{Name: "w", Type: i64T}),
		Window: &plan.Window{Calls: []plan.WindowCall{{Func: plan.WinNtile, Type: i64T}}}}
	if _, err := NewWindow(newSource(schema.Arrow()), n, Options{Mem: mem}); err == nil {
		t.Error("ntile without an argument: no error")
	}
	n.Window.Calls[0].Args = []*plan.Expr{litI(0)}
	op, err := NewWindow(newSource(schema.Arrow(), mkRec(mem, in...)), n, Options{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Drain(t.Context(), op); err == nil {
		t.Error("ntile(0): no error")
	}
	op.Close()
}
