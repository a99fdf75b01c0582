package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// windowStreamInput is n rows in random order: a partition key p (3
// values), an ORDER BY key o with many ties and NULLs, int and float
// values with NULLs (floats are quarters, so sums are exact in any order)
// and a string.
func windowStreamInput(rng *rand.Rand, n int) []col {
	p, o, v, f, s := make([]any, n), make([]any, n), make([]any, n), make([]any, n), make([]any, n)
	for i := 0; i < n; i++ {
		p[i] = int64(rng.Intn(3))
		if rng.Intn(10) > 0 {
			o[i] = int64(rng.Intn(n/6 + 1))
		}
		if rng.Intn(7) > 0 {
			v[i] = int64(rng.Intn(201) - 100)
		}
		if rng.Intn(7) > 0 {
			f[i] = float64(rng.Intn(400)-200) / 4
		}
		if rng.Intn(7) > 0 {
			s[i] = fmt.Sprintf("s%02d", rng.Intn(40))
		}
	}
	return []col{ints("p", p...), ints("o", o...), ints("v", v...), floats("f", f...), strs("s", s...)}
}

// streamableCalls are the window calls a partition larger than the budget
// can still compute, one per function and frame kind.
func streamableCalls() []plan.WindowCall {
	v, f, s := cref(2, i64T), cref(3, f64T), cref(4, strT)
	up := plan.FrameBound{Kind: plan.BoundUnboundedPreceding}
	uf := plan.FrameBound{Kind: plan.BoundUnboundedFollowing}
	cur := plan.FrameBound{Kind: plan.BoundCurrentRow}
	pre := func(n float64) plan.FrameBound { return plan.FrameBound{Kind: plan.BoundPreceding, Offset: n} }
	fol := func(n float64) plan.FrameBound { return plan.FrameBound{Kind: plan.BoundFollowing, Offset: n} }
	fr := func(m plan.FrameMode, a, b plan.FrameBound) plan.Frame { return plan.Frame{Mode: m, Start: a, End: b} }
	rows, rng, groups := plan.FrameRows, plan.FrameRange, plan.FrameGroups
	sumT := plan.SumType(i64T)
	agg := func(fn plan.AggFunc, t plan.DataType, x *plan.Expr, frame plan.Frame) plan.WindowCall {
		c := plan.WindowCall{Func: plan.WindowFunc(fn), Type: t, Frame: frame}
		if x != nil {
			c.Args = []*plan.Expr{x}
		}
		return c
	}
	val := func(fn plan.WindowFunc, frame plan.Frame, more ...*plan.Expr) plan.WindowCall {
		return plan.WindowCall{Func: fn, Type: i64T, Args: append([]*plan.Expr{v}, more...), Frame: frame}
	}
	exclCur := fr(rows, pre(2), fol(2))
	exclCur.Exclude = plan.ExcludeCurrentRow
	return []plan.WindowCall{
		// one pass: carries
		{Func: plan.WinRowNumber, Type: i64T},
		{Func: plan.WinRank, Type: i64T},
		{Func: plan.WinDenseRank, Type: i64T},
		{Func: plan.WinLag, Type: i64T, Args: []*plan.Expr{v}},
		{Func: plan.WinLag, Type: i64T, Args: []*plan.Expr{v, litI(3), litI(0)}},
		{Func: plan.WinLead, Type: i64T, Args: []*plan.Expr{v}},
		{Func: plan.WinLead, Type: i64T, Args: []*plan.Expr{v, litI(4)}},
		agg(plan.AggSum, sumT, v, fr(rng, up, cur)),
		agg(plan.AggSum, sumT, v, fr(rows, up, cur)),
		agg(plan.AggSum, sumT, v, fr(groups, up, cur)),
		agg(plan.AggAvg, f64T, f, fr(rng, up, cur)),
		agg(plan.AggAvg, f64T, v, fr(rows, up, cur)),
		agg(plan.AggSum, f64T, f, fr(rows, up, fol(1))),
		agg(plan.AggMin, strT, s, fr(rows, up, cur)),
		agg(plan.AggMax, i64T, v, fr(rng, up, cur)),
		agg(plan.AggCount, i64T, v, fr(rows, up, pre(2))),
		agg(plan.AggCountStar, i64T, nil, fr(rows, up, fol(3))),
		agg(plan.AggSum, sumT, v, fr(rows, pre(3), fol(2))),
		agg(plan.AggMax, f64T, f, fr(rows, pre(2), cur)),
		agg(plan.AggAvg, f64T, v, fr(rows, fol(1), fol(4))),
		agg(plan.AggMin, i64T, v, fr(rows, pre(5), pre(2))),
		agg(plan.AggCount, i64T, v, exclCur),
		agg(plan.AggSum, sumT, v, fr(rng, cur, cur)),
		val(plan.WinFirstValue, fr(rng, up, cur)),
		val(plan.WinFirstValue, fr(rows, up, pre(2))),
		val(plan.WinNthValue, fr(rows, up, cur), litI(3)),
		val(plan.WinNthValue, fr(rng, up, cur), litI(2)),
		val(plan.WinLastValue, fr(rng, up, cur)),
		val(plan.WinLastValue, fr(rows, up, fol(1))),
		val(plan.WinFirstValue, fr(rows, fol(2), uf)),
		val(plan.WinNthValue, fr(rows, pre(1), uf), litI(2)),
		val(plan.WinFirstValue, exclCur),
		// two passes: the partition's size or its whole frame
		{Func: plan.WinPercentRank, Type: f64T},
		{Func: plan.WinCumeDist, Type: f64T},
		{Func: plan.WinNtile, Type: i64T, Args: []*plan.Expr{litI(4)}},
		{Func: plan.WinNtile, Type: i64T, Args: []*plan.Expr{litI(7)}},
		agg(plan.AggSum, sumT, v, fr(rows, up, uf)),
		agg(plan.AggCountStar, i64T, nil, fr(rng, up, uf)),
		agg(plan.AggMax, strT, s, fr(rows, up, uf)),
		agg(plan.AggAvg, f64T, f, fr(groups, up, uf)),
		val(plan.WinFirstValue, fr(rows, up, uf)),
		val(plan.WinLastValue, fr(rng, up, uf)),
		val(plan.WinNthValue, fr(rows, up, uf), litI(5)),
		val(plan.WinLastValue, fr(rows, cur, uf)),
		val(plan.WinLastValue, fr(rng, cur, uf)),
		val(plan.WinLastValue, fr(rows, fol(3), uf)),
		agg(plan.AggSum, sumT, v, fr(rows, cur, uf)),
		agg(plan.AggCount, i64T, v, fr(rows, fol(2), uf)),
		agg(plan.AggAvg, f64T, f, fr(rng, cur, uf)),
		agg(plan.AggCountStar, i64T, nil, fr(groups, cur, uf)),
		agg(plan.AggSum, f64T, f, fr(rows, pre(3), uf)),
	}
}

// runWindow runs calls over in (one record) and returns its rows in the
// operator's order, and the rows it streamed.
func runWindow(t *testing.T, in []col, partitionBy []*plan.Expr, orderBy []plan.SortKey, calls []plan.WindowCall,
	opts Options, force bool) ([][]any, int64, error) {
	t.Helper()
	schema := schemaOf(in)
	out := append(plan.Schema{}, schema...)
	for i, c := range calls {
		out = append(out, plan.Field{Name: fmt.Sprint("w", i), Type: c.Type, Nullable: true})
	}
	mem := opts.Mem
	if mem == nil {
		mem = checkedMem(t)
	}
	n := &plan.Node{Kind: plan.KindWindow, Schema: out,
		Window: &plan.Window{PartitionBy: partitionBy, OrderBy: orderBy, Calls: calls}}
	op, err := NewWindow(newSource(schema.Arrow(), mkRec(mem, in...)), n, opts)
	if err != nil {
		return nil, 0, err
	}
	op.(*windowOp).forceStream = force
	defer op.Close()
	var rs [][]any
	for {
		rec, err := op.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		rs = append(rs, rows([]arrow.RecordBatch{rec})...)
		rec.Release()
	}
	return rs, op.(*windowOp).streamed, nil
}

// A window partition streamed in chunks of 1, 2, 7 and many rows gives
// exactly the rows of the in-memory computation, for every streamable
// function and frame, with and without PARTITION BY and ORDER BY, over
// random input with ties and NULL keys (several seeds).
func TestWindowStreamEqualsInMemory(t *testing.T) {
	checkStreamEqualsInMemory(t, streamableCalls())
}

// checkStreamEqualsInMemory streams each of calls alone, then all in one
// node, and compares with the in-memory rows.
func checkStreamEqualsInMemory(t *testing.T, all []plan.WindowCall) {
	o := cref(1, i64T)
	orders := []struct {
		name string
		keys []plan.SortKey
	}{
		{"order by o", []plan.SortKey{{Expr: o}}},
		{"order by o desc nulls first", []plan.SortKey{{Expr: o, Desc: true, NullsFirst: true}}},
		{"no order by", nil},
	}
	seeds := int64(3)
	chunks := []int{1, 2, 7, 1000}
	if testing.Short() || raceEnabled {
		seeds = 1
	}
	if raceEnabled {
		// One chunk size, the one whose leaks are checked: the operator
		// runs on one goroutine, the detector finds nothing more in others.
		chunks = []int{7}
	}
	for seed := int64(1); seed <= seeds; seed++ {
		in := windowStreamInput(rand.New(rand.NewSource(seed)), 160)
		for _, ord := range orders {
			for _, part := range [][]*plan.Expr{nil, {cref(0, i64T)}} {
				seen := map[string]bool{}
				var list []plan.WindowCall
				for _, call := range all {
					if ord.keys == nil && call.Func.UsesFrame() && call.Frame.Mode != plan.FrameRows {
						// without ORDER BY only RANGE/GROUPS frames of the whole partition are defined
						call.Frame = plan.Frame{Mode: plan.FrameRange, Start: plan.FrameBound{Kind: plan.BoundUnboundedPreceding},
							End: plan.FrameBound{Kind: plan.BoundCurrentRow}}
					}
					if k := fmt.Sprint(call.Func, call.Frame, call.Args); !seen[k] {
						seen[k] = true
						list = append(list, call)
					}
				}
				// Each call alone (its own look-back, look-ahead and peers),
				// then all of them in one node (the widest of each).
				sets := [][]plan.WindowCall{list}
				for _, c := range list {
					sets = append(sets, []plan.WindowCall{c})
				}
				for ci, calls := range sets {
					call := calls[0]
					twoPass := false
					for _, c := range calls {
						sc, err := (&windowOp{w: &plan.Window{OrderBy: ord.keys}}).streamPlan(c)
						if err != nil {
							t.Fatalf("%s %v: %v", c.Func, c.Frame, err)
						}
						twoPass = twoPass || sc.twoPass
					}
					want, _, err := runWindow(t, in, part, ord.keys, calls, Options{Mem: memory.DefaultAllocator}, false)
					if err != nil {
						t.Fatalf("seed %d %s call %d in memory: %v", seed, ord.name, ci, err)
					}
					for _, chunk := range chunks {
						name := fmt.Sprintf("seed %d, %s, partitions %d, chunk %d, %s %v", seed, ord.name, len(part), chunk, call.Func, call.Frame)
						if len(calls) > 1 {
							name = fmt.Sprintf("seed %d, %s, partitions %d, chunk %d, all %d calls", seed, ord.name, len(part), chunk, len(calls))
						}
						pool, check := spillPool(t, 1<<30)
						var mem memory.Allocator = memory.DefaultAllocator
						if chunk == 7 { // leaks checked on one chunk size (the checked allocator is slow)
							mem = checkedMem(t)
						}
						got, streamed, err := runWindow(t, in, part, ord.keys, calls, Options{Mem: mem, Pool: pool, BatchRows: chunk}, true)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						if streamed == 0 && (part == nil || chunk < len(in[0].vals)/3) { // one batch of whole partitions is computed in memory
							t.Fatalf("%s: nothing streamed", name)
						}
						if twoPass && pool.SpillCount() == 0 && streamed > 0 {
							t.Fatalf("%s: two passes spilled nothing", name)
						}
						if !reflect.DeepEqual(got, want) {
							for i := range want {
								if i >= len(got) || !reflect.DeepEqual(got[i], want[i]) {
									t.Fatalf("%s: row %d streamed %v, in memory %v", name, i, got[min(i, len(got)-1)], want[i])
								}
							}
							t.Fatalf("%s: %d rows streamed, %d in memory", name, len(got), len(want))
						}
						check()
					}
				}
			}
		}
	}
}

// All streamable calls in one node under a real tiny budget (the sort
// below spills too): one partition of 6000 rows, no PARTITION BY, equals
// the in-memory rows; two-pass calls spill the partition.
func TestWindowStreamOverBudget(t *testing.T) {
	in := windowStreamInput(rand.New(rand.NewSource(7)), 6000)
	ord := []plan.SortKey{{Expr: cref(1, i64T)}}
	calls := streamableCalls()
	want, _, err := runWindow(t, in, nil, ord, calls, Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	pool, check := spillPool(t, 128<<10)
	got, streamed, err := runWindow(t, in, nil, ord, calls, Options{Mem: checkedMem(t), Pool: pool, BatchRows: 500}, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range min(len(got), len(want)) {
		for c := range want[i] {
			if !reflect.DeepEqual(got[i][c], want[i][c]) {
				t.Fatalf("row %d column %d (call %s %v): streamed %v, in memory %v", i, c, calls[c-5].Func, calls[c-5].Frame, got[i][c], want[i][c])
			}
		}
	}
	if streamed != 6000 || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d rows streamed; equal to in memory: %v", streamed, reflect.DeepEqual(got, want))
	}
	t.Logf("6000 rows, %d calls, budget 128 KiB: peak %d, %d spill files, %d bytes spilled", len(calls), pool.Peak(), pool.SpillCount(), pool.SpillBytes())
	if pool.Peak() > 4*pool.Limit() {
		t.Errorf("peak %d for a budget of %d", pool.Peak(), pool.Limit())
	}
	check()
}

// A call that cannot be streamed over a partition larger than the budget
// is SL104 naming the call, its frame and what to do: nth_value of an n
// not constant, or with EXCLUDE and an UNBOUNDED bound (lag/lead of an
// offset not constant and EXCLUDE of the other calls stream).
func TestWindowStreamUnsupported(t *testing.T) {
	in := windowStreamInput(rand.New(rand.NewSource(3)), 200)
	v := cref(2, i64T)
	cur := plan.FrameBound{Kind: plan.BoundCurrentRow}
	uf := plan.FrameBound{Kind: plan.BoundUnboundedFollowing}
	for _, tc := range []struct {
		call plan.WindowCall
		want string
	}{
		{plan.WindowCall{Func: plan.WinNthValue, Type: i64T, Args: []*plan.Expr{v, litI(2)},
			Frame: plan.Frame{Mode: plan.FrameRows, Start: cur, End: uf, Exclude: plan.ExcludeCurrentRow}},
			"nth_value OVER (ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING EXCLUDE CURRENT ROW) cannot be computed in chunks (nth_value with EXCLUDE and an UNBOUNDED bound)"},
		{plan.WindowCall{Func: plan.WinNthValue, Type: i64T, Args: []*plan.Expr{v, cref(1, i64T)},
			Frame: plan.Frame{Mode: plan.FrameRange, Start: plan.FrameBound{Kind: plan.BoundUnboundedPreceding}, End: cur}},
			"cannot be computed in chunks (n is not a positive constant)"},
	} {
		pool, check := spillPool(t, 1<<30)
		_, _, err := runWindow(t, in, nil, []plan.SortKey{{Expr: cref(1, i64T)}}, []plan.WindowCall{tc.call},
			Options{Mem: checkedMem(t), Pool: pool, BatchRows: 16}, true)
		if plan.CodeOf(err) != plan.CodeMemoryLimit || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "add PARTITION BY") {
			t.Errorf("%s: got %v, want SL104 naming %q", tc.call.Func, err, tc.want)
		}
		check()
	}
}

// frameCalls are the calls issue 28 adds to the streamed partition: min
// and max to UNBOUNDED FOLLOWING (block summaries of the first pass),
// RANGE and GROUPS offsets and EXCLUDE (a sliding window of rows held as
// wide as the frame), DISTINCT over the whole partition (the existing
// external sort over the spill file).
func frameCalls() []plan.WindowCall {
	v, f, s := cref(2, i64T), cref(3, f64T), cref(4, strT)
	up := plan.FrameBound{Kind: plan.BoundUnboundedPreceding}
	uf := plan.FrameBound{Kind: plan.BoundUnboundedFollowing}
	cur := plan.FrameBound{Kind: plan.BoundCurrentRow}
	pre := func(n float64) plan.FrameBound { return plan.FrameBound{Kind: plan.BoundPreceding, Offset: n} }
	fol := func(n float64) plan.FrameBound { return plan.FrameBound{Kind: plan.BoundFollowing, Offset: n} }
	fr := func(m plan.FrameMode, a, b plan.FrameBound) plan.Frame { return plan.Frame{Mode: m, Start: a, End: b} }
	ex := func(e plan.FrameExclude, frame plan.Frame) plan.Frame { frame.Exclude = e; return frame }
	rows, rng, groups := plan.FrameRows, plan.FrameRange, plan.FrameGroups
	sumT := plan.SumType(i64T)
	agg := func(fn plan.AggFunc, t plan.DataType, x *plan.Expr, frame plan.Frame) plan.WindowCall {
		c := plan.WindowCall{Func: plan.WindowFunc(fn), Type: t, Frame: frame}
		if x != nil {
			c.Args = []*plan.Expr{x}
		}
		return c
	}
	dist := func(c plan.WindowCall) plan.WindowCall { c.Distinct = true; return c }
	val := func(fn plan.WindowFunc, frame plan.Frame, more ...*plan.Expr) plan.WindowCall {
		return plan.WindowCall{Func: fn, Type: i64T, Args: append([]*plan.Expr{v}, more...), Frame: frame}
	}
	return []plan.WindowCall{
		// 1. min/max to UNBOUNDED FOLLOWING
		agg(plan.AggMax, i64T, v, fr(rows, cur, uf)),
		agg(plan.AggMin, strT, s, fr(rows, pre(2), uf)),
		agg(plan.AggMax, f64T, f, fr(rows, fol(3), uf)),
		agg(plan.AggMin, i64T, v, fr(rng, cur, uf)),
		agg(plan.AggMax, strT, s, fr(groups, cur, uf)),
		agg(plan.AggMin, f64T, f, fr(rng, pre(2), uf)),
		agg(plan.AggMax, i64T, v, fr(groups, fol(1), uf)),
		// 2. RANGE and GROUPS offsets
		agg(plan.AggSum, sumT, v, fr(rng, pre(3), cur)),
		agg(plan.AggCount, i64T, v, fr(rng, pre(2), fol(2))),
		agg(plan.AggAvg, f64T, f, fr(rng, fol(1), fol(4))),
		agg(plan.AggMin, i64T, v, fr(rng, pre(5), pre(1))),
		agg(plan.AggMax, strT, s, fr(groups, pre(1), fol(1))),
		agg(plan.AggSum, sumT, v, fr(groups, pre(2), pre(1))),
		agg(plan.AggCountStar, i64T, nil, fr(groups, cur, fol(2))),
		val(plan.WinFirstValue, fr(rng, pre(3), fol(3))),
		val(plan.WinLastValue, fr(groups, pre(1), fol(2))),
		val(plan.WinNthValue, fr(rng, pre(4), cur), litI(2)),
		// ... from UNBOUNDED PRECEDING to an offset
		agg(plan.AggSum, sumT, v, fr(rng, up, fol(2))),
		agg(plan.AggCountStar, i64T, nil, fr(groups, up, pre(1))),
		agg(plan.AggMax, i64T, v, fr(rng, up, pre(3))),
		val(plan.WinFirstValue, fr(rng, up, pre(2))),
		val(plan.WinLastValue, fr(rng, up, fol(3))),
		val(plan.WinLastValue, fr(groups, up, pre(1))),
		// ... from an offset to UNBOUNDED FOLLOWING
		agg(plan.AggSum, sumT, v, fr(rng, pre(3), uf)),
		agg(plan.AggCount, i64T, v, fr(groups, fol(1), uf)),
		agg(plan.AggAvg, f64T, f, fr(rng, fol(2), uf)),
		val(plan.WinLastValue, fr(rng, fol(2), uf)),
		val(plan.WinFirstValue, fr(rng, pre(2), uf)),
		val(plan.WinNthValue, fr(groups, pre(1), uf), litI(3)),
		// 3. EXCLUDE
		agg(plan.AggSum, sumT, v, ex(plan.ExcludeGroup, fr(rows, pre(2), fol(2)))),
		agg(plan.AggCount, i64T, v, ex(plan.ExcludeTies, fr(rows, pre(3), fol(1)))),
		agg(plan.AggMax, i64T, v, ex(plan.ExcludeCurrentRow, fr(rng, pre(2), fol(2)))),
		val(plan.WinFirstValue, ex(plan.ExcludeGroup, fr(groups, pre(1), fol(1)))),
		agg(plan.AggSum, sumT, v, ex(plan.ExcludeTies, fr(rng, cur, cur))),
		val(plan.WinLastValue, ex(plan.ExcludeTies, fr(rows, pre(2), fol(2)))),
		agg(plan.AggMin, strT, s, ex(plan.ExcludeGroup, fr(groups, cur, fol(1)))),
		// 4. DISTINCT over the whole partition
		dist(agg(plan.AggCount, i64T, v, fr(rows, up, uf))),
		dist(agg(plan.AggSum, sumT, v, fr(rng, up, uf))),
		dist(agg(plan.AggAvg, f64T, f, fr(rows, up, uf))),
		dist(agg(plan.AggCount, i64T, s, fr(groups, up, uf))),
	}
}

// The frames of issue 28 streamed in chunks give the in-memory rows.
func TestWindowStreamFramesEqualsInMemory(t *testing.T) {
	checkStreamEqualsInMemory(t, frameCalls())
	// With the calls of before in one node: the frames found among the
	// rows held cut where the calls that need whole peer groups cut too.
	in := windowStreamInput(rand.New(rand.NewSource(5)), 160)
	calls := append(streamableCalls(), frameCalls()...)
	o := cref(1, i64T)
	for _, ord := range [][]plan.SortKey{{{Expr: o}}, {{Expr: o, Desc: true, NullsFirst: true}}} {
		for _, part := range [][]*plan.Expr{nil, {cref(0, i64T)}} {
			want, _, err := runWindow(t, in, part, ord, calls, Options{Mem: memory.DefaultAllocator}, false)
			if err != nil {
				t.Fatal(err)
			}
			chunks := []int{3, 7}
			if raceEnabled {
				chunks = chunks[1:]
			}
			for _, chunk := range chunks {
				pool, check := spillPool(t, 1<<30)
				got, streamed, err := runWindow(t, in, part, ord, calls, Options{Mem: checkedMem(t), Pool: pool, BatchRows: chunk}, true)
				if err != nil {
					t.Fatalf("%v, partitions %d, chunk %d: %v", ord, len(part), chunk, err)
				}
				if streamed == 0 || pool.SpillCount() == 0 || !reflect.DeepEqual(got, want) {
					t.Fatalf("%v, partitions %d, chunk %d: %d rows streamed, %d spill files, equal to in memory: %v",
						ord, len(part), chunk, streamed, pool.SpillCount(), reflect.DeepEqual(got, want))
				}
				check()
			}
		}
	}
}

// The calls of frameCalls under a real tiny budget (the sort below
// spills too): one partition of 6000 rows equals the in-memory rows, the
// two-pass calls spill it; a RANGE frame wider than the budget (a large
// offset, or a peer group of NULL keys larger than the budget) is SL104
// naming the call.
func TestWindowStreamFramesOverBudget(t *testing.T) {
	n := 6000
	if raceEnabled {
		n = 3000
	}
	in := windowStreamInput(rand.New(rand.NewSource(11)), n)
	ord := []plan.SortKey{{Expr: cref(1, i64T)}}
	calls := append(streamableCalls(), frameCalls()...)
	want, _, err := runWindow(t, in, nil, ord, calls, Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	pool, check := spillPool(t, 128<<10)
	got, streamed, err := runWindow(t, in, nil, ord, calls, Options{Mem: checkedMem(t), Pool: pool, BatchRows: 500}, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range min(len(got), len(want)) {
		for c := range want[i] {
			if !reflect.DeepEqual(got[i][c], want[i][c]) {
				t.Fatalf("row %d column %d (call %s %v): streamed %v, in memory %v", i, c, calls[c-5].Func, calls[c-5].Frame, got[i][c], want[i][c])
			}
		}
	}
	if streamed != int64(n) || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d rows streamed; equal to in memory: %v", streamed, reflect.DeepEqual(got, want))
	}
	if pool.SpillCount() == 0 {
		t.Fatal("nothing spilled")
	}
	t.Logf("%d rows, %d calls, budget 128 KiB: peak %d, %d spill files, %d bytes spilled", n, len(calls), pool.Peak(), pool.SpillCount(), pool.SpillBytes())
	if pool.Peak() > 4*pool.Limit() {
		t.Errorf("peak %d for a budget of %d", pool.Peak(), pool.Limit())
	}
	check()

	v := cref(2, i64T)
	wide := plan.WindowCall{Func: plan.WindowFunc(plan.AggSum), Type: plan.SumType(i64T), Args: []*plan.Expr{v},
		Frame: plan.Frame{Mode: plan.FrameRange, Start: plan.FrameBound{Kind: plan.BoundPreceding, Offset: 1e6}, End: plan.FrameBound{Kind: plan.BoundCurrentRow}}}
	// Every key NULL: one peer group, the frame of every row.
	nulls := append([]col{}, in...)
	nulls[1] = ints("o", make([]any, n)...)
	for _, c := range []struct {
		name string
		in   []col
	}{{"wide offset", in}, {"NULL peers", nulls}} {
		pool, check := spillPool(t, 128<<10)
		// A narrow frame found among the rows held beside it: SL104 names the wide one.
		narrow := plan.WindowCall{Func: plan.WindowFunc(plan.AggCount), Type: i64T, Args: []*plan.Expr{v},
			Frame: plan.Frame{Mode: plan.FrameRows, Start: plan.FrameBound{Kind: plan.BoundPreceding, Offset: 1},
				End: plan.FrameBound{Kind: plan.BoundFollowing, Offset: 1}, Exclude: plan.ExcludeGroup}}
		_, _, err := runWindow(t, c.in, nil, ord, []plan.WindowCall{narrow, wide}, Options{Mem: checkedMem(t), Pool: pool, BatchRows: 500}, false)
		if plan.CodeOf(err) != plan.CodeMemoryLimit || !strings.Contains(err.Error(), "sum OVER (RANGE BETWEEN 1e+06 PRECEDING AND CURRENT ROW) needs the rows of a frame larger than the budget") {
			t.Errorf("%s: got %v, want SL104 naming the frame", c.name, err)
		}
		check()
	}
}

// excludeCalls are EXCLUDE CURRENT ROW / GROUP / TIES over frames from
// UNBOUNDED PRECEDING or to UNBOUNDED FOLLOWING (skExclude): the rows
// before those held and after them are each one carry.
func excludeCalls() []plan.WindowCall {
	v, f, s := cref(2, i64T), cref(3, f64T), cref(4, strT)
	up := plan.FrameBound{Kind: plan.BoundUnboundedPreceding}
	uf := plan.FrameBound{Kind: plan.BoundUnboundedFollowing}
	cur := plan.FrameBound{Kind: plan.BoundCurrentRow}
	pre := func(n float64) plan.FrameBound { return plan.FrameBound{Kind: plan.BoundPreceding, Offset: n} }
	fol := func(n float64) plan.FrameBound { return plan.FrameBound{Kind: plan.BoundFollowing, Offset: n} }
	ex := func(e plan.FrameExclude, m plan.FrameMode, a, b plan.FrameBound) plan.Frame {
		return plan.Frame{Mode: m, Start: a, End: b, Exclude: e}
	}
	rows, rng, groups := plan.FrameRows, plan.FrameRange, plan.FrameGroups
	xcur, xgrp, xties := plan.ExcludeCurrentRow, plan.ExcludeGroup, plan.ExcludeTies
	sumT := plan.SumType(i64T)
	agg := func(fn plan.AggFunc, t plan.DataType, x *plan.Expr, frame plan.Frame) plan.WindowCall {
		c := plan.WindowCall{Func: plan.WindowFunc(fn), Type: t, Frame: frame}
		if x != nil {
			c.Args = []*plan.Expr{x}
		}
		return c
	}
	val := func(fn plan.WindowFunc, frame plan.Frame) plan.WindowCall {
		return plan.WindowCall{Func: fn, Type: i64T, Args: []*plan.Expr{v}, Frame: frame}
	}
	return []plan.WindowCall{
		// the whole partition less the row or its peers (two passes)
		agg(plan.AggSum, sumT, v, ex(xcur, rows, up, uf)),
		agg(plan.AggCount, i64T, v, ex(xgrp, rows, up, uf)),
		agg(plan.AggAvg, f64T, f, ex(xties, rng, up, uf)),
		agg(plan.AggCountStar, i64T, nil, ex(xgrp, groups, up, uf)),
		agg(plan.AggMin, i64T, v, ex(xcur, rows, up, uf)),
		agg(plan.AggMax, strT, s, ex(xties, rng, up, uf)),
		agg(plan.AggMax, f64T, f, ex(xgrp, rows, up, uf)),
		val(plan.WinFirstValue, ex(xcur, rows, up, uf)),
		val(plan.WinLastValue, ex(xties, rng, up, uf)),
		val(plan.WinFirstValue, ex(xgrp, groups, up, uf)),
		// from UNBOUNDED PRECEDING (one pass)
		agg(plan.AggSum, sumT, v, ex(xcur, rng, up, cur)),
		agg(plan.AggAvg, f64T, f, ex(xties, rng, up, cur)),
		agg(plan.AggCountStar, i64T, nil, ex(xcur, rows, up, cur)),
		agg(plan.AggMin, f64T, f, ex(xgrp, rows, up, fol(2))),
		agg(plan.AggAvg, f64T, v, ex(xcur, rows, up, pre(1))),
		agg(plan.AggSum, sumT, v, ex(xties, rng, up, fol(3))),
		agg(plan.AggCount, i64T, v, ex(xgrp, rng, up, fol(2))),
		agg(plan.AggMin, strT, s, ex(xties, rows, up, pre(2))),
		agg(plan.AggMax, i64T, v, ex(xgrp, groups, up, cur)),
		val(plan.WinFirstValue, ex(xgrp, rng, up, cur)),
		val(plan.WinLastValue, ex(xcur, rows, up, cur)),
		val(plan.WinLastValue, ex(xties, groups, up, fol(1))),
		// to UNBOUNDED FOLLOWING (two passes)
		agg(plan.AggCountStar, i64T, nil, ex(xgrp, rng, cur, uf)),
		agg(plan.AggMax, i64T, v, ex(xcur, rows, pre(3), uf)),
		agg(plan.AggSum, f64T, f, ex(xgrp, rng, pre(2), uf)),
		agg(plan.AggSum, f64T, f, ex(xgrp, rows, fol(1), uf)),
		agg(plan.AggMin, strT, s, ex(xties, groups, cur, uf)),
		agg(plan.AggCount, i64T, v, ex(xcur, rows, cur, uf)),
		val(plan.WinFirstValue, ex(xcur, rows, cur, uf)),
		val(plan.WinFirstValue, ex(xties, groups, cur, uf)),
		val(plan.WinLastValue, ex(xgrp, groups, pre(1), uf)),
		val(plan.WinLastValue, ex(xcur, rows, cur, uf)),
	}
}

// EXCLUDE with an UNBOUNDED bound streamed in chunks gives the in-memory
// rows.
func TestWindowStreamExcludeEqualsInMemory(t *testing.T) {
	checkStreamEqualsInMemory(t, excludeCalls())
}

// lagCalls are lag/lead of offsets that are not constants (skLagSort): a
// column with NULLs, an expression with negative values (the other way),
// far targets, defaults of a constant and of a column.
func lagCalls() []plan.WindowCall {
	o, v, s := cref(1, i64T), cref(2, i64T), cref(4, strT)
	mod := plan.Call(plan.OpMod, i64T, v, litI(7))                                        // -6..6, NULL
	far := plan.Call(plan.OpSub, i64T, plan.Call(plan.OpMul, i64T, o, litI(3)), litI(20)) // -20..,NULL
	lag := func(fn plan.WindowFunc, t plan.DataType, args ...*plan.Expr) plan.WindowCall {
		return plan.WindowCall{Func: fn, Type: t, Args: args}
	}
	return []plan.WindowCall{
		lag(plan.WinLag, i64T, v, o),
		lag(plan.WinLead, i64T, v, o, litI(-1)),
		lag(plan.WinLag, i64T, v, mod),
		lag(plan.WinLead, strT, s, mod, plan.Literal(plan.Value{S: "none"}, strT)),
		lag(plan.WinLag, i64T, o, far, v),
		lag(plan.WinLead, i64T, v, far),
		lag(plan.WinLag, i64T, v, plan.Literal(plan.Value{Null: true}, i64T), litI(5)),
	}
}

// lag/lead of offsets that are not constants streamed in chunks give the
// in-memory rows.
func TestWindowStreamLagEqualsInMemory(t *testing.T) {
	checkStreamEqualsInMemory(t, lagCalls())
}

// The calls of excludeCalls and lagCalls under a real tiny budget (the
// sorts spill too): one partition of 6000 rows, no PARTITION BY, equals
// the in-memory rows and spills.
func TestWindowStreamCornersOverBudget(t *testing.T) {
	n := 6000
	if raceEnabled {
		n = 3000
	}
	in := windowStreamInput(rand.New(rand.NewSource(13)), n)
	ord := []plan.SortKey{{Expr: cref(1, i64T)}}
	calls := append(excludeCalls(), lagCalls()...)
	want, _, err := runWindow(t, in, nil, ord, calls, Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	pool, check := spillPool(t, 128<<10)
	got, streamed, err := runWindow(t, in, nil, ord, calls, Options{Mem: checkedMem(t), Pool: pool, BatchRows: 500}, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range min(len(got), len(want)) {
		for c := range want[i] {
			if !reflect.DeepEqual(got[i][c], want[i][c]) {
				t.Fatalf("row %d column %d (call %s %v): streamed %v, in memory %v", i, c, calls[c-5].Func, calls[c-5].Frame, got[i][c], want[i][c])
			}
		}
	}
	if streamed != int64(n) || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d rows streamed; equal to in memory: %v", streamed, reflect.DeepEqual(got, want))
	}
	if pool.SpillCount() == 0 {
		t.Fatal("nothing spilled")
	}
	t.Logf("%d rows, %d calls, budget 128 KiB: peak %d, %d spill files, %d bytes spilled", n, len(calls), pool.Peak(), pool.SpillCount(), pool.SpillBytes())
	if pool.Peak() > 4*pool.Limit() {
		t.Errorf("peak %d for a budget of %d", pool.Peak(), pool.Limit())
	}
	check()
}

// peerCalls need a row's whole peer group: cume_dist, and aggregates and
// first_value from UNBOUNDED PRECEDING to the end of the row's peers
// (RANGE and GROUPS).
func peerCalls() []plan.WindowCall {
	v, f, s := cref(2, i64T), cref(3, f64T), cref(4, strT)
	up := plan.FrameBound{Kind: plan.BoundUnboundedPreceding}
	cur := plan.FrameBound{Kind: plan.BoundCurrentRow}
	agg := func(fn plan.AggFunc, t plan.DataType, x *plan.Expr, m plan.FrameMode) plan.WindowCall {
		c := plan.WindowCall{Func: plan.WindowFunc(fn), Type: t, Frame: plan.Frame{Mode: m, Start: up, End: cur}}
		if x != nil {
			c.Args = []*plan.Expr{x}
		}
		return c
	}
	return []plan.WindowCall{
		{Func: plan.WinCumeDist, Type: f64T},
		agg(plan.AggSum, plan.SumType(i64T), v, plan.FrameRange),
		agg(plan.AggAvg, f64T, f, plan.FrameRange),
		agg(plan.AggCountStar, i64T, nil, plan.FrameGroups),
		agg(plan.AggCount, i64T, v, plan.FrameRange),
		agg(plan.AggMax, strT, s, plan.FrameRange),
		agg(plan.AggMin, i64T, v, plan.FrameGroups),
		{Func: plan.WinFirstValue, Type: i64T, Args: []*plan.Expr{v}, Frame: plan.Frame{Mode: plan.FrameRange, Start: up, End: cur}},
		{Func: plan.WinRank, Type: i64T},
		{Func: plan.WinPercentRank, Type: f64T},
	}
}

// Peer groups of ties larger than the budget (an ORDER BY key of one
// value and NULL, every row a peer of about half of the partition):
// each call of peerCalls alone and all of them together equal the
// in-memory rows under a real tiny budget, where they were SL104.
func TestWindowStreamBigPeerGroups(t *testing.T) {
	n := 6000
	in := windowStreamInput(rand.New(rand.NewSource(17)), n)
	rng := rand.New(rand.NewSource(18))
	keys := make([]any, n)
	for i := range keys {
		if rng.Intn(2) == 0 {
			keys[i] = int64(1)
		}
	}
	in[1] = ints("o", keys...)
	calls := peerCalls()
	sets := [][]plan.WindowCall{calls}
	for _, c := range calls {
		sets = append(sets, []plan.WindowCall{c})
	}
	for _, ord := range [][]plan.SortKey{{{Expr: cref(1, i64T)}}, {{Expr: cref(1, i64T), Desc: true, NullsFirst: true}}} {
		for _, cs := range sets {
			want, _, err := runWindow(t, in, nil, ord, cs, Options{}, false)
			if err != nil {
				t.Fatal(err)
			}
			pool, check := spillPool(t, 128<<10)
			got, streamed, err := runWindow(t, in, nil, ord, cs, Options{Mem: checkedMem(t), Pool: pool, BatchRows: 500}, false)
			if err != nil {
				t.Fatalf("%d calls, first %s %v: %v", len(cs), cs[0].Func, cs[0].Frame, err)
			}
			if streamed != int64(n) || !reflect.DeepEqual(got, want) || pool.SpillCount() == 0 {
				t.Fatalf("%d calls, first %s %v: %d rows streamed, %d spill files; equal to in memory: %v",
					len(cs), cs[0].Func, cs[0].Frame, streamed, pool.SpillCount(), reflect.DeepEqual(got, want))
			}
			if pool.Peak() > 4*pool.Limit() {
				t.Errorf("peak %d for a budget of %d", pool.Peak(), pool.Limit())
			}
			check()
		}
	}
}
