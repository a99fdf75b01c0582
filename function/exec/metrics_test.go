package exec

import (
	"context"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Every operator of a built fragment is metered once, keyed by its
// pre-order node id, with the rows and batches it returned.
func TestBuildMetrics(t *testing.T) {
	mem := checkedMem(t)
	scanSchema := plan.Schema{{Name: "k", Type: strT}, {Name: "v", Type: i64T}}
	scan := &plan.Node{Kind: plan.KindScan, Schema: scanSchema, Scan: &plan.Scan{Table: "t", Columns: []string{"k", "v"}}}
	filter := &plan.Node{Kind: plan.KindFilter, Schema: scanSchema, Inputs: []*plan.Node{scan},
		Predicate: call(plan.OpGt, boolT, cref(1, i64T), litI(0))}
	aggSchema := plan.Schema{{Name: "k", Type: strT}, {Name: "s", Type: i64T}}
	agg := &plan.Node{Kind: plan.KindAggregate, Schema: aggSchema, Inputs: []*plan.Node{filter},
		Aggregate: &plan.Aggregate{Mode: plan.AggSingle, GroupBy: []*plan.Expr{cref(0, strT)},
			Aggs: []plan.AggCall{{Func: plan.AggSum, Arg: cref(1, i64T), Type: i64T}}}}
	limit := &plan.Node{Kind: plan.KindLimit, Schema: aggSchema, Inputs: []*plan.Node{agg}, Limit: 2}
	leaves := &fakeLeaves{recs: func() []arrow.RecordBatch {
		return []arrow.RecordBatch{
			mkRec(mem, strs("k", "a", "b", "a", "c"), ints("v", 1, 5, 2, -1)),
			mkRec(mem, strs("k", "c", "b", nil), ints("v", 10, 1, 4)),
		}
	}}
	m := NewMetrics()
	op, err := Build(context.Background(), limit, leaves, Options{Mem: mem, BatchRows: 8, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	releaseRecs(drainAll(t, op))
	got := m.Snapshot()
	type row struct {
		Node          int
		Kind          string
		Rows, Batches int64
		Leaf          bool
	}
	var rs []row
	for _, o := range got {
		rs = append(rs, row{o.Node, o.Kind, o.Rows, o.Batches, o.Leaf})
		if o.ComputeNanos < 0 || o.WallNanos < o.ComputeNanos {
			t.Errorf("node %d: compute %d ns, wall %d ns: want 0 <= compute <= wall", o.Node, o.ComputeNanos, o.WallNanos)
		}
	}
	// 7 rows scanned in 2 batches, 5 with v > 0 (a 1, b 5, a 2, c 10, b 1;
	// the NULL key's 4 too: 6), 4 groups (a, b, c, NULL), 2 kept.
	want := []row{
		{0, "limit", 2, 1, false},
		{1, "aggregate", 4, 1, false},
		{2, "filter", 6, 2, false},
		{3, "scan", 7, 2, true},
	}
	if !reflect.DeepEqual(rs, want) {
		t.Fatalf("metrics:\n got %+v\nwant %+v", rs, want)
	}
}

// Without Options.Metrics nothing is wrapped.
func TestBuildNoMetrics(t *testing.T) {
	empty := &plan.Node{Kind: plan.KindEmpty, Schema: plan.Schema{{Name: "x", Type: i64T}}}
	op, err := Build(context.Background(), empty, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if _, ok := op.(*opMeter); ok {
		t.Fatal("operator metered without Options.Metrics")
	}
}

func TestNodeIDsPreOrder(t *testing.T) {
	a := &plan.Node{Kind: plan.KindScan}
	b := &plan.Node{Kind: plan.KindExchange}
	j := &plan.Node{Kind: plan.KindHashJoin, Inputs: []*plan.Node{a, b}}
	p := &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{j}}
	ids := NodeIDs(p)
	if ids[p] != 0 || ids[j] != 1 || ids[a] != 2 || ids[b] != 3 || len(ids) != 4 {
		t.Fatalf("ids %v", ids)
	}
}

// BenchmarkMetricsOverhead runs filter -> project over 64 batches of 8192
// rows with and without the per-operator meters.
func BenchmarkMetricsOverhead(b *testing.B) {
	mem := memory.NewGoAllocator()
	vals := make([]any, 8192)
	for i := range vals {
		vals[i] = int64(i)
	}
	batch := mkRec(mem, ints("v", vals...))
	defer batch.Release()
	schema := plan.Schema{{Name: "v", Type: i64T}}
	scan := &plan.Node{Kind: plan.KindScan, Schema: schema, Scan: &plan.Scan{Table: "t", Columns: []string{"v"}}}
	filter := &plan.Node{Kind: plan.KindFilter, Schema: schema, Inputs: []*plan.Node{scan},
		Predicate: call(plan.OpGt, boolT, cref(0, i64T), litI(100))}
	proj := &plan.Node{Kind: plan.KindProject, Schema: schema, Inputs: []*plan.Node{filter},
		Exprs: []*plan.Expr{call(plan.OpAdd, i64T, cref(0, i64T), litI(1))}}
	leaves := &fakeLeaves{recs: func() []arrow.RecordBatch {
		out := make([]arrow.RecordBatch, 64)
		for i := range out {
			batch.Retain()
			out[i] = batch
		}
		return out
	}}
	for _, metered := range []bool{false, true} {
		name := "plain"
		if metered {
			name = "metered"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				opts := Options{Mem: mem}
				if metered {
					opts.Metrics = NewMetrics()
				}
				op, err := Build(context.Background(), proj, leaves, opts)
				if err != nil {
					b.Fatal(err)
				}
				recs, err := Drain(context.Background(), op)
				if err != nil {
					b.Fatal(err)
				}
				releaseRecs(recs)
				op.Close()
			}
		})
	}
}
