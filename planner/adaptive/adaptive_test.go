package adaptive

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// aggGraph is scan -> hash(8) -> final aggregate -> single -> sort.
func aggGraph(groupBy bool) *plan.Graph {
	sch := plan.Schema{{Name: "k", Type: plan.Int64Type}, {Name: "n", Type: plan.Int64Type}}
	agg := &plan.Aggregate{Mode: plan.AggFinal, Aggs: []plan.AggCall{{Func: plan.AggCountStar, Type: plan.Int64Type}}}
	out, cols := sch, []string{"k", "n"}
	if groupBy {
		agg.GroupBy = []*plan.Expr{plan.Column(0, "k", plan.Int64Type)}
	} else {
		out, cols = sch[1:], []string{"n"}
	}
	return &plan.Graph{Result: 2, Columns: cols, Stages: []*plan.Stage{
		{ID: 0, Root: &plan.Node{Kind: plan.KindScan, Schema: sch, Scan: &plan.Scan{Table: "t", Columns: []string{"k", "n"}}},
			Output: plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{0}, Count: 8}},
		{ID: 1, Inputs: []int{0}, Root: &plan.Node{Kind: plan.KindAggregate, Schema: out, Aggregate: agg,
			Inputs: []*plan.Node{{Kind: plan.KindExchange, Stage: 0, Schema: sch}}},
			Output: plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}},
		{ID: 2, Inputs: []int{1}, Root: &plan.Node{Kind: plan.KindSort, Schema: out, Limit: -1,
			SortKeys: []plan.SortKey{{Expr: plan.Column(0, out[0].Name, plan.Int64Type)}},
			Inputs:   []*plan.Node{{Kind: plan.KindExchange, Stage: 1, Schema: out}}},
			Output: plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}},
	}}
}

func newState(g *plan.Graph, done map[int]*StageStats, target int64) *State {
	return &State{Graph: g, Done: done, Running: map[int]bool{}, Tasks: InitialTaskPlans(g),
		Config: Config{TargetPartitionBytes: target}}
}

func snapshot(t *testing.T, s *State) string {
	b, err := json.Marshal([]any{s.Graph, s.Tasks})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRules(t *testing.T) {
	stats := func(parts ...PartitionStats) *StageStats {
		s := &StageStats{Partitions: parts}
		for _, p := range parts {
			s.Rows += p.Rows
			s.Bytes += p.Bytes
		}
		return s
	}
	cases := []struct {
		name        string
		groupBy     bool
		scan        *StageStats
		target      int64
		wantFired   []string
		wantSkipped []int
		wantGroups1 [][]int
	}{
		{name: "empty input skips grouped stages", groupBy: true, scan: stats(), target: 100,
			wantFired: []string{"propagate-empty"}, wantSkipped: []int{1, 2}},
		{name: "empty input keeps a global aggregate, run inside the result stage", groupBy: false, scan: stats(), target: 100,
			wantFired: []string{"propagate-empty", "fuse-single"}, wantSkipped: []int{1}},
		{name: "small partitions coalesce", groupBy: true, target: 100,
			scan: stats(PartitionStats{Partition: 0, Rows: 5, Bytes: 40, Objects: 1}, PartitionStats{Partition: 1, Rows: 5, Bytes: 40, Objects: 1}, PartitionStats{Partition: 3, Rows: 5, Bytes: 40, Objects: 1},
				PartitionStats{Partition: 6, Rows: 1, Bytes: 10, Objects: 1}, PartitionStats{Partition: 7, Rows: 1, Bytes: 90, Objects: 1}),
			wantFired: []string{"coalesce-partitions"}, wantGroups1: [][]int{{0, 1}, {3, 6}, {7}}},
		{name: "large partitions stay", groupBy: true, target: 10,
			scan:      stats(PartitionStats{Partition: 0, Rows: 5, Bytes: 40, Objects: 1}, PartitionStats{Partition: 1, Rows: 5, Bytes: 40, Objects: 1}),
			wantFired: []string{"coalesce-partitions"}, wantGroups1: [][]int{{0}, {1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newState(aggGraph(c.groupBy), map[int]*StageStats{0: c.scan}, c.target)
			fired, err := Replan(s, Rules())
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range fired {
				names = append(names, f.Rule)
			}
			if !reflect.DeepEqual(names, c.wantFired) {
				t.Fatalf("fired %v (%+v), want %v", names, fired, c.wantFired)
			}
			for _, id := range c.wantSkipped {
				if !s.Skipped(id) {
					t.Errorf("stage %d not skipped", id)
				}
			}
			if c.wantGroups1 != nil && !reflect.DeepEqual(s.Tasks.Of(1).Groups, c.wantGroups1) {
				t.Errorf("stage 1 groups %v, want %v", s.Tasks.Of(1).Groups, c.wantGroups1)
			}
			// Idempotence: a second run fires nothing and changes nothing.
			before := snapshot(t, s)
			again, err := Replan(s, Rules())
			if err != nil {
				t.Fatal(err)
			}
			if len(again) != 0 || snapshot(t, s) != before {
				t.Fatalf("second run changed the plan: %+v", again)
			}
		})
	}
}
