package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// spillPool returns a pool of limit bytes spilling into a fresh directory,
// and a check that the directory is empty afterwards.
func spillPool(t *testing.T, limit int64) (*MemoryPool, func()) {
	t.Helper()
	dir := t.TempDir()
	p := NewMemoryPool(limit, dir, 0)
	return p, func() {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) > 0 {
			t.Errorf("%d spill files left in %s", len(ents), dir)
		}
		if p.SpillDiskBytes() != 0 {
			t.Errorf("pool still accounts %d spill bytes on disk", p.SpillDiskBytes())
		}
	}
}

func recsOf(t *testing.T, batches [][]col) []arrow.RecordBatch {
	mem := checkedMem(t)
	var recs []arrow.RecordBatch
	for _, b := range batches {
		recs = append(recs, mkRec(mem, b...))
	}
	return recs
}

// An external sort under a tiny budget gives exactly the rows, in exactly
// the order (stable), of the in-memory sort.
func TestSortSpillEqualsInMemory(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	batches := randomSortInput(rng, 60000, 3000)
	schema := schemaOf(batches[0])
	for _, tc := range []struct {
		name string
		keys []plan.SortKey
	}{
		{"int", []plan.SortKey{{Expr: cref(0, i64T)}}},
		{"int desc nulls first", []plan.SortKey{{Expr: cref(0, i64T), Desc: true, NullsFirst: true}}},
		{"string, int", []plan.SortKey{{Expr: cref(1, strT)}, {Expr: cref(0, i64T), Desc: true}}},
		{"float expr", []plan.SortKey{{Expr: cast(cref(0, i64T), f64T), Desc: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, err := NewSort(newSource(schema.Arrow(), recsOf(t, batches)...), sortNode(schema, -1, tc.keys...), Options{})
			want := runOp(t, op, err)
			pool, check := spillPool(t, 256<<10)
			op, err = NewSort(newSource(schema.Arrow(), recsOf(t, batches)...), sortNode(schema, -1, tc.keys...),
				Options{Mem: checkedMem(t), Pool: pool, BatchRows: 1000})
			got := runOp(t, op, err)
			if len(got) != 60000 || !reflect.DeepEqual(got, want) {
				t.Fatalf("spilled sort differs from the in-memory sort (%d vs %d rows)", len(got), len(want))
			}
			if pool.SpillCount() < 2 || pool.SpillBytes() == 0 {
				t.Fatalf("expected several sorted runs, got %d files, %d bytes", pool.SpillCount(), pool.SpillBytes())
			}
			if pool.Peak() == 0 || pool.Peak() > 2*pool.Limit() {
				t.Fatalf("peak %d, budget %d: want a peak within a batch of the budget", pool.Peak(), pool.Limit())
			}
			check()
		})
	}
}

// joinSpillInput is a probe and build side of n rows each (with NULLs
// and duplicates): k int64 in 0..n/2, s string, v int64.
func joinSpillInput(t *testing.T, seed int64, n int) (probe, build [][]col) {
	rng := rand.New(rand.NewSource(seed))
	side := func(off int) [][]col {
		var out [][]col
		for lo := 0; lo < n; lo += 2000 {
			var k, s, v []any
			for i := lo; i < min(n, lo+2000); i++ {
				if rng.Intn(25) == 0 {
					k = append(k, nil)
				} else {
					k = append(k, int64(rng.Intn(n/2)))
				}
				s = append(s, fmt.Sprintf("row-%d-%d", off, i))
				v = append(v, int64(rng.Intn(100)))
			}
			out = append(out, []col{ints("k", k...), strs("s", s...), ints("v", v...)})
		}
		return out
	}
	return side(0), side(1)
}

// A grace hash join under a tiny budget gives the rows of the in-memory
// join, for every join type, with and without a residual filter.
func TestHashJoinSpillEqualsInMemory(t *testing.T) {
	probe, build := joinSpillInput(t, 5, 6000)
	ps, bs := schemaOf(probe[0]), schemaOf(build[0])
	filter := plan.Call(plan.OpLt, plan.BoolType, cref(2, i64T), cref(5, i64T))
	for _, tc := range []struct {
		jt        plan.JoinType
		nullAware bool
		filter    *plan.Expr
	}{
		{jt: plan.JoinInner}, {jt: plan.JoinLeft}, {jt: plan.JoinRight}, {jt: plan.JoinFull},
		{jt: plan.JoinSemi}, {jt: plan.JoinAnti}, {jt: plan.JoinAnti, nullAware: true},
		{jt: plan.JoinInner, filter: filter}, {jt: plan.JoinLeft, filter: filter}, {jt: plan.JoinFull, filter: filter},
		{jt: plan.JoinSemi, filter: filter}, {jt: plan.JoinAnti, filter: filter},
		{jt: plan.JoinRightSemi}, {jt: plan.JoinRightAnti}, {jt: plan.JoinRightSemi, filter: filter}, {jt: plan.JoinRightAnti, filter: filter},
	} {
		name := fmt.Sprintf("%s null-aware=%v filter=%v", tc.jt, tc.nullAware, tc.filter != nil)
		t.Run(name, func(t *testing.T) {
			schema := append(plan.Schema{}, ps...)
			if tc.jt.BuildOnly() {
				schema = nil
			}
			if tc.jt != plan.JoinSemi && tc.jt != plan.JoinAnti {
				schema = append(schema, bs...)
			}
			n := &plan.Node{Kind: plan.KindHashJoin, Schema: schema, Join: &plan.Join{Type: tc.jt, NullAware: tc.nullAware,
				LeftKeys: []*plan.Expr{cref(0, i64T)}, RightKeys: []*plan.Expr{cref(0, i64T)}, Filter: tc.filter}}
			run := func(opts Options) [][]any {
				op, err := NewHashJoin(newSource(ps.Arrow(), recsOf(t, probe)...), newSource(bs.Arrow(), recsOf(t, build)...), n, opts)
				got := runOp(t, op, err)
				sortRows(got)
				return got
			}
			want := run(Options{})
			pool, check := spillPool(t, 128<<10)
			got := run(Options{Mem: checkedMem(t), Pool: pool})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("spilled join differs: %d rows vs %d in memory", len(got), len(want))
			}
			if pool.SpillCount() == 0 {
				t.Fatal("the join did not spill")
			}
			check()
		})
	}
}

// A partial and a final aggregate under a tiny budget (the partial one
// flushing its groups, the final one spilling partial states by key hash)
// give the groups of the in-memory aggregation.
func TestHashAggregateSpillEqualsInMemory(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	batches := randomAggInput(rng, 40000, 12000, 2000)
	inSchema := schemaOf(batches[0])
	keys := []*plan.Expr{cref(0, strT), cref(1, i64T)}
	x, d, f := cref(2, i64T), cref(3, dec(12, 2)), cref(4, f64T)
	aggs := []plan.AggCall{
		{Func: plan.AggSum, Arg: x, Type: i64T},
		{Func: plan.AggSum, Arg: d, Type: dec(18, 2)},
		{Func: plan.AggCount, Arg: x, Type: i64T},
		{Func: plan.AggCountStar, Type: i64T},
		{Func: plan.AggAvg, Arg: d, Type: f64T},
		{Func: plan.AggAvg, Arg: f, Type: f64T},
		{Func: plan.AggMin, Arg: x, Type: i64T},
		{Func: plan.AggMax, Arg: d, Type: dec(12, 2)},
		{Func: plan.AggArgMin, Arg: d, More: []*plan.Expr{cref(5, i64T)}, Type: dec(12, 2)}, // f: no ties
		{Func: plan.AggArgMax, Arg: cref(0, strT), More: []*plan.Expr{cref(5, i64T)}, Type: strT},
		{Func: plan.AggArgMaxNull, Arg: x, More: []*plan.Expr{cref(5, i64T)}, Type: i64T},
	}
	finalSchema := plan.Schema{{Name: "k1", Type: strT}, {Name: "k2", Type: i64T}}
	partialSchema := append(plan.Schema{}, finalSchema...)
	for i, a := range aggs {
		finalSchema = append(finalSchema, plan.Field{Name: fmt.Sprint("r", i), Type: a.Type})
		if a.Func == plan.AggAvg {
			partialSchema = append(partialSchema, plan.Field{Name: fmt.Sprint("s", i), Type: plan.SumType(a.Arg.Type)}, plan.Field{Name: fmt.Sprint("c", i), Type: i64T})
		} else {
			for j, st := range AggStateTypes(a) {
				partialSchema = append(partialSchema, plan.Field{Name: fmt.Sprint("s", i, "_", j), Type: st})
			}
		}
	}
	finalAggs := make([]plan.AggCall, len(aggs))
	for i, a := range aggs {
		finalAggs[i] = plan.AggCall{Func: a.Func, More: a.More, Type: a.Type}
	}
	run := func(partialOpts, finalOpts Options) [][]any {
		p, err := NewHashAggregate(newSource(inSchema.Arrow(), recsOf(t, batches)...), aggNode(plan.AggPartial, partialSchema, keys, aggs...), partialOpts)
		if err != nil {
			t.Fatal(err)
		}
		partials := drainAll(t, p)
		final, err := NewHashAggregate(newSource(partialSchema.Arrow(), partials...),
			aggNode(plan.AggFinal, finalSchema, []*plan.Expr{cref(0, strT), cref(1, i64T)}, finalAggs...), finalOpts)
		got := runOp(t, final, err)
		sortRows(got)
		return got
	}
	want := run(Options{}, Options{})
	ppool, pcheck := spillPool(t, 256<<10)
	fpool, fcheck := spillPool(t, 256<<10)
	got := run(Options{Mem: checkedMem(t), Pool: ppool, BatchRows: 1000}, Options{Mem: checkedMem(t), Pool: fpool, BatchRows: 1000})
	if len(want) < 5000 || len(got) != len(want) {
		t.Fatalf("%d groups spilled, %d in memory", len(got), len(want))
	}
	for i := range want {
		if !rowsClose(got[i], want[i]) {
			t.Fatalf("row %d: spilled %v, in memory %v", i, got[i], want[i])
		}
	}
	if fpool.SpillCount() == 0 || fpool.SpillBytes() == 0 {
		t.Fatal("the final aggregate did not spill")
	}
	pcheck()
	fcheck()
}

// Without a spill directory an aggregate over its budget fails with the
// memory-limit error naming the operator and the budget.
func TestSpillImpossibleMemoryLimit(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	batches := randomSortInput(rng, 50000, 5000)
	schema := schemaOf(batches[0])
	op, err := NewSort(newSource(schema.Arrow(), recsOf(t, batches)...), sortNode(schema, -1, plan.SortKey{Expr: cref(0, i64T)}),
		Options{Mem: checkedMem(t), Pool: NewMemoryPool(128<<10, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	_, err = op.Next(context.Background())
	var mle *MemoryLimitError
	if !errors.As(err, &mle) || plan.CodeOf(err) != plan.CodeMemoryLimit || mle.Limit != 128<<10 ||
		!strings.Contains(err.Error(), "sort: memory limit exceeded") || !strings.Contains(err.Error(), "budget 131072 bytes") ||
		!strings.Contains(err.Error(), "no spill directory") {
		t.Fatalf("want SL104 naming the sort and its budget, got %v", err)
	}
}

// Spill files go away when an operator is closed early (an error or a
// cancel upstream of the task's end), not only when it is read to the end.
func TestSpillFilesRemovedOnEarlyClose(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	batches := randomSortInput(rng, 40000, 2000)
	schema := schemaOf(batches[0])
	probe, build := joinSpillInput(t, 9, 6000)
	ps, bs := schemaOf(probe[0]), schemaOf(build[0])
	jn := &plan.Node{Kind: plan.KindHashJoin, Schema: append(append(plan.Schema{}, ps...), bs...), Join: &plan.Join{Type: plan.JoinInner,
		LeftKeys: []*plan.Expr{cref(0, i64T)}, RightKeys: []*plan.Expr{cref(0, i64T)}}}
	for _, tc := range []struct {
		name string
		op   func(opts Options) (Operator, error)
	}{
		{"sort", func(opts Options) (Operator, error) {
			return NewSort(newSource(schema.Arrow(), recsOf(t, batches)...), sortNode(schema, -1, plan.SortKey{Expr: cref(1, strT)}), opts)
		}},
		{"join", func(opts Options) (Operator, error) {
			return NewHashJoin(newSource(ps.Arrow(), recsOf(t, probe)...), newSource(bs.Arrow(), recsOf(t, build)...), jn, opts)
		}},
	} {
		for _, cancelled := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/cancelled=%v", tc.name, cancelled), func(t *testing.T) {
				pool, check := spillPool(t, 128<<10)
				op, err := tc.op(Options{Mem: checkedMem(t), Pool: pool, BatchRows: 500})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				rec, err := op.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				rec.Release()
				if cancelled {
					cancel()
					if _, err := op.Next(ctx); !errors.Is(err, context.Canceled) {
						t.Fatalf("after cancel: %v", err)
					}
				}
				cancel()
				if pool.SpillCount() == 0 {
					t.Fatal("did not spill")
				}
				if err := op.Close(); err != nil {
					t.Fatal(err)
				}
				check()
			})
		}
	}
}

// A single-mode aggregate (count(distinct), median, percentiles,
// string_agg, with ordinary aggregates beside them) under a tiny budget
// spills its groups' states and merges them partition by partition: the
// answer is exactly the in-memory one, string_agg's order included, and
// it spills again (a second level) under a budget smaller still.
func TestSingleAggregateSpillEqualsInMemory(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	batches := randomAggInput(rng, 40000, 3000, 2000)
	inSchema := schemaOf(batches[0])
	keys := []*plan.Expr{cref(0, strT), cref(1, i64T)}
	x, d, f := cref(2, i64T), cref(3, dec(12, 2)), cref(4, f64T)
	aggs := []plan.AggCall{
		{Func: plan.AggCountDistinct, Arg: x, Type: i64T},
		{Func: plan.AggCountDistinct, Arg: d, Type: i64T},
		{Func: plan.AggMedian, Arg: f, Type: f64T},
		{Func: plan.AggPercentileCont, Arg: f, Type: f64T, Fraction: 0.9},
		{Func: plan.AggPercentileDisc, Arg: f, Type: f64T, Fraction: 0.25},
		{Func: plan.AggStringAgg, Arg: &plan.Expr{Op: plan.OpCast, Type: strT, Args: []*plan.Expr{x}}, Type: strT, Sep: "|"},
		{Func: plan.AggSum, Arg: x, Type: i64T},
		{Func: plan.AggAvg, Arg: d, Type: f64T},
		{Func: plan.AggMin, Arg: f, Type: f64T},
		{Func: plan.AggCountStar, Type: i64T},
		{Func: plan.AggSum, Arg: d, Type: dec(38, 2)},
		{Func: plan.AggMax, Arg: cref(0, strT), Type: strT},
		{Func: plan.AggCount, Arg: x, Type: i64T},
	}
	schema := plan.Schema{{Name: "k1", Type: strT}, {Name: "k2", Type: i64T}}
	for i, a := range aggs {
		schema = append(schema, plan.Field{Name: fmt.Sprint("r", i), Type: a.Type})
	}
	run := func(opts Options) [][]any {
		op, err := NewHashAggregate(newSource(inSchema.Arrow(), recsOf(t, batches)...), aggNode(plan.AggSingle, schema, keys, aggs...), opts)
		got := runOp(t, op, err)
		sortRows(got)
		return got
	}
	want := run(Options{})
	if len(want) < 2000 {
		t.Fatalf("%d groups: the case tests little", len(want))
	}
	for _, limit := range []int64{512 << 10, 96 << 10} {
		pool, check := spillPool(t, limit)
		got := run(Options{Mem: checkedMem(t), Pool: pool, BatchRows: 500})
		if !reflect.DeepEqual(got, want) {
			for i := range want {
				if i >= len(got) || !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("budget %d: row %d spilled %v, in memory %v (%d and %d groups)", limit, i, got[min(i, len(got)-1)], want[i], len(got), len(want))
				}
			}
			t.Fatalf("budget %d: %d groups spilled, %d in memory", limit, len(got), len(want))
		}
		if pool.SpillCount() == 0 {
			t.Fatalf("budget %d: nothing spilled", limit)
		}
		t.Logf("budget %d: %d spill files, %d bytes spilled, peak %d", limit, pool.SpillCount(), pool.SpillBytes(), pool.Peak())
		check()
	}
}

// A window with PARTITION BY under a tiny budget computes the complete
// partitions it holds and goes on: the rows are exactly the in-memory
// ones; without PARTITION BY (one partition larger than the budget) it
// streams the partition and its rows are the in-memory ones too.
func TestWindowOverBudgetEqualsInMemory(t *testing.T) {
	if raceEnabled {
		// 4 window runs over 40,000 rows, compared through fmt-sorted rows:
		// minutes under the detector, for a one-goroutine operator
		// (TestWindowStream* cover the same paths at a smaller size).
		t.Skip("too slow under the race detector; runs in make test")
	}
	rng := rand.New(rand.NewSource(31))
	batches := randomAggInput(rng, 40000, 3000, 2000)
	inSchema := schemaOf(batches[0])
	k2, x, f := cref(1, i64T), cref(2, i64T), cref(4, f64T)
	up := plan.FrameBound{Kind: plan.BoundUnboundedPreceding}
	cur := plan.FrameBound{Kind: plan.BoundCurrentRow}
	calls := []plan.WindowCall{
		{Func: plan.WinRowNumber, Type: i64T},
		{Func: plan.WinRank, Type: i64T},
		{Func: plan.WinLag, Type: i64T, Args: []*plan.Expr{x}},
		{Func: plan.WindowFunc(plan.AggSum), Type: plan.SumType(i64T), Args: []*plan.Expr{x}, Frame: plan.Frame{Mode: plan.FrameRange, Start: up, End: cur}},
		{Func: plan.WindowFunc(plan.AggMax), Type: f64T, Args: []*plan.Expr{f}, Frame: plan.Frame{Mode: plan.FrameRows,
			Start: plan.FrameBound{Kind: plan.BoundPreceding, Offset: 3}, End: plan.FrameBound{Kind: plan.BoundFollowing, Offset: 2}}},
	}
	schema := append(plan.Schema{}, inSchema...)
	for i, c := range calls {
		schema = append(schema, plan.Field{Name: fmt.Sprint("w", i), Type: c.Type, Nullable: true})
	}
	orderBy := []plan.SortKey{{Expr: x}, {Expr: f}}
	run := func(partitionBy []*plan.Expr, opts Options) ([][]any, error) {
		n := &plan.Node{Kind: plan.KindWindow, Schema: schema,
			Window: &plan.Window{PartitionBy: partitionBy, OrderBy: orderBy, Calls: calls}}
		op, err := NewWindow(newSource(inSchema.Arrow(), recsOf(t, batches)...), n, opts)
		if err != nil {
			return nil, err
		}
		defer op.Close()
		var rs [][]any
		for {
			rec, err := op.Next(context.Background())
			if err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, err
			}
			rs = append(rs, rows([]arrow.RecordBatch{rec})...)
			rec.Release()
		}
		sortRows(rs)
		return rs, nil
	}
	want, err := run([]*plan.Expr{k2}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pool, check := spillPool(t, 256<<10)
	got, err := run([]*plan.Expr{k2}, Options{Mem: checkedMem(t), Pool: pool, BatchRows: 1000})
	if err != nil {
		t.Fatalf("window over budget with PARTITION BY: %v", err)
	}
	if len(got) != 40000 || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d rows over budget, %d in memory, or they differ", len(got), len(want))
	}
	t.Logf("peak %d of a 256 KiB budget (the sort below spilled %d files)", pool.Peak(), pool.SpillCount())
	check()
	// One partition: the 4000 rows of NULL x and f are one peer group,
	// which the running RANGE sum needs the end of, larger than the
	// budget: the stream goes on in two passes (window_peers.go).
	want3, err := run(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pool3, check3 := spillPool(t, 256<<10)
	got3, err := run(nil, Options{Mem: checkedMem(t), Pool: pool3, BatchRows: 1000})
	if err != nil || !reflect.DeepEqual(got3, want3) {
		t.Fatalf("a peer group larger than the budget: %v; equal to in memory: %v", err, reflect.DeepEqual(got3, want3))
	}
	check3()
	// A key that breaks the ties streams in one pass.
	orderBy = append(orderBy, plan.SortKey{Expr: cref(5, i64T)})
	want, err = run(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pool2, check2 := spillPool(t, 256<<10)
	got, err = run(nil, Options{Mem: checkedMem(t), Pool: pool2, BatchRows: 1000})
	if err != nil {
		t.Fatalf("one partition over budget: %v", err)
	}
	if len(got) != 40000 || !reflect.DeepEqual(got, want) {
		t.Fatalf("one partition: %d rows over budget, %d in memory, or they differ", len(got), len(want))
	}
	t.Logf("one partition: peak %d of a 256 KiB budget, %d spill files", pool2.Peak(), pool2.SpillCount())
	check2()
}

// TestSortHandsOffBudget: a full sort that fits its budget but holds more
// than half of it writes its rows to disk as one run before it emits them,
// so the operator reading its output has the budget (a string_agg's
// aggregation over a 250 KB sort under 256 KiB failed with SL104); under
// half, or without a spill directory, it stays in memory. The rows and
// their order are the in-memory sort's either way.
func TestSortHandsOffBudget(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	batches := randomSortInput(rng, 20000, 2000)
	schema := schemaOf(batches[0])
	keys := []plan.SortKey{{Expr: cref(0, i64T)}, {Expr: cref(1, strT), Desc: true}}
	// What the sort holds when it has read everything: the peak of an
	// unbounded pool.
	big := NewMemoryPool(1<<30, t.TempDir(), 0)
	op, err := NewSort(newSource(schema.Arrow(), recsOf(t, batches)...), sortNode(schema, -1, keys...), Options{Mem: checkedMem(t), Pool: big})
	want := runOp(t, op, err)
	held := big.Peak()
	if big.SpillCount() != 0 || held == 0 {
		t.Fatalf("unbounded sort: %d spills, peak %d", big.SpillCount(), held)
	}
	for _, c := range []struct {
		name     string
		limit    int64
		spillDir bool
		runs     int64
	}{
		{"two thirds of the budget: one run on disk", held * 3 / 2, true, 1},
		{"a third of the budget: in memory", held * 3, true, 0},
		{"no spill directory: in memory", held * 3 / 2, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			pool, check := spillPool(t, c.limit)
			if !c.spillDir {
				pool, check = NewMemoryPool(c.limit, "", 0), func() {}
			}
			op, err := NewSort(newSource(schema.Arrow(), recsOf(t, batches)...), sortNode(schema, -1, keys...),
				Options{Mem: checkedMem(t), Pool: pool, BatchRows: 1000})
			if err != nil {
				t.Fatal(err)
			}
			first, err := op.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// While it emits, a sort that handed off holds at most what
			// its merge reads; one in memory holds everything.
			used := pool.used.Load()
			if c.runs > 0 && used > c.limit/2 {
				t.Errorf("sort holds %d of %d bytes while emitting after handing off", used, c.limit)
			}
			got := rows([]arrow.RecordBatch{first})
			first.Release()
			rest := runOp(t, op, nil)
			got = append(got, rest...)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("rows differ from the in-memory sort (%d vs %d rows)", len(got), len(want))
			}
			if pool.SpillCount() != c.runs {
				t.Fatalf("%d runs spilled, want %d", pool.SpillCount(), c.runs)
			}
			check()
		})
	}
}
