package coordinator

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/coordinator/webui"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
)

// TestStageWork: a node names the tables a fragment scans and its one or
// two weightiest operators in the order data flows.
func TestStageWork(t *testing.T) {
	scan := func(table string) *plan.Node {
		return &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: table}, Limit: -1}
	}
	n := func(k plan.Kind, in ...*plan.Node) *plan.Node { return &plan.Node{Kind: k, Inputs: in, Limit: -1} }
	agg := func(mode plan.AggMode, in *plan.Node) *plan.Node {
		a := n(plan.KindAggregate, in)
		a.Aggregate = &plan.Aggregate{Mode: mode}
		return a
	}
	join := func(typ plan.JoinType, l, r *plan.Node) *plan.Node {
		j := n(plan.KindHashJoin, l, r)
		j.Join = &plan.Join{Type: typ}
		return j
	}
	xch := &plan.Node{Kind: plan.KindExchange, Stage: 1, Limit: -1}
	for _, tc := range []struct {
		name   string
		root   *plan.Node
		main   string
		tables string
	}{
		{"scan", n(plan.KindFilter, scan("orders")), "scan", "orders"},
		{"join and partial agg", agg(plan.AggPartial, n(plan.KindProject, join(plan.JoinInner, scan("lineitem"), xch))), "hash join → agg partial", "lineitem"},
		{"three ops: two weightiest", n(plan.KindSort, agg(plan.AggFinal, join(plan.JoinLeft, scan("a"), scan("b")))), "left join → agg final", "a,b"},
		{"final agg and sort", n(plan.KindSort, agg(plan.AggFinal, xch)), "agg final → sort", ""},
		{"repartition", n(plan.KindProject, xch), "repartition", ""},
		{"same table twice", join(plan.JoinInner, scan("t"), scan("t")), "hash join", "t"},
	} {
		main, tables := stageWork(tc.root)
		if main != tc.main || strings.Join(tables, ",") != tc.tables {
			t.Errorf("%s: %q %v, want %q %q", tc.name, main, tables, tc.main, tc.tables)
		}
	}
	if !emptied(n(plan.KindProject, &plan.Node{Kind: plan.KindEmpty})) || emptied(n(plan.KindProject, xch)) {
		t.Errorf("emptied")
	}
}

// TestObjectsView: a task's data object holding several partitions is
// one object; objects written per partition are one each.
func TestObjectsView(t *testing.T) {
	got := objectsView(map[int][]shuffle.ObjectRef{
		0: {{Key: "d/t0", Bytes: 10, Rows: 1}, {Key: "d/t1", Bytes: 5, Rows: 1}},
		1: {{Key: "d/t0", Offset: 10, Bytes: 20, Rows: 2}, {Key: "d/t1", Offset: 5, Bytes: 7, Rows: 3}},
		3: {{Key: "p/3", Bytes: 1, Rows: 1}},
	})
	want := []webui.Object{{Key: "d/t0", Partitions: []int{0, 1}, Bytes: 30, Rows: 3}, {Key: "d/t1", Partitions: []int{0, 1}, Bytes: 12, Rows: 4},
		{Key: "p/3", Partitions: []int{3}, Bytes: 1, Rows: 1}}
	if len(got) != len(want) {
		t.Fatalf("objects %+v", got)
	}
	for i := range want {
		if got[i].Key != want[i].Key || !slices.Equal(got[i].Partitions, want[i].Partitions) || got[i].Bytes != want[i].Bytes || got[i].Rows != want[i].Rows {
			t.Errorf("object %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestByteQuantiles(t *testing.T) {
	if byteQuantiles(nil) != nil {
		t.Error("quantiles of nothing")
	}
	for _, tc := range []struct {
		in   []int64
		want webui.Quantiles
	}{
		{[]int64{7}, webui.Quantiles{7, 7, 7, 7, 7}},
		{[]int64{4, 1, 3, 2}, webui.Quantiles{1, 1, 2, 3, 4}},
		{[]int64{10, 1, 1, 1, 1, 1, 1, 1}, webui.Quantiles{1, 1, 1, 1, 10}},
	} {
		if got := byteQuantiles(tc.in); *got != tc.want {
			t.Errorf("%v: %v, want %v", tc.in, *got, tc.want)
		}
	}
}
