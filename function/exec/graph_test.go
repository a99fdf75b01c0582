package exec

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestRunGraph runs small stage graphs over constant leaves in process:
// every stage one task, exchanges handed over in memory.
func TestRunGraph(t *testing.T) {
	schema := plan.Schema{{Name: "k", Type: plan.Int64Type}, {Name: "s", Type: plan.StringType, Nullable: true}}
	row := func(k int64, s string) []*plan.Expr {
		return []*plan.Expr{plan.Literal(plan.Value{I: k}, plan.Int64Type), plan.Literal(plan.Value{S: s}, plan.StringType)}
	}
	values := &plan.Node{Kind: plan.KindValues, Schema: schema, Limit: -1, Rows: [][]*plan.Expr{row(3, "c"), row(1, "a"), row(2, "b")}}
	k := plan.Column(0, "k", plan.Int64Type)
	sorted := func(stage int, desc bool) *plan.Node {
		return &plan.Node{Kind: plan.KindSort, Schema: schema, Limit: -1, SortKeys: []plan.SortKey{{Expr: k, Desc: desc}},
			Inputs: []*plan.Node{{Kind: plan.KindExchange, Schema: schema, Stage: stage}}}
	}
	cases := []struct {
		name string
		g    *plan.Graph
		want string
		err  string
	}{
		{"one stage", &plan.Graph{Stages: []*plan.Stage{{ID: 0, Root: values}}, Result: 0, Columns: []string{"x", "y"}},
			"x,y|3,c|1,a|2,b", ""},
		{"an exchange", &plan.Graph{Stages: []*plan.Stage{
			{ID: 0, Root: values, Output: plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{0}, Count: 8}},
			{ID: 1, Root: sorted(0, false), Inputs: []int{0}}}, Result: 1, Columns: []string{"k", "s"}},
			"k,s|1,a|2,b|3,c", ""},
		{"a stage read twice", &plan.Graph{Stages: []*plan.Stage{
			{ID: 0, Root: values},
			{ID: 1, Root: &plan.Node{Kind: plan.KindUnion, Schema: schema, Limit: -1,
				Inputs: []*plan.Node{sorted(0, true), sorted(0, false)}}, Inputs: []int{0}}}, Result: 1},
			"k,s|3,c|2,b|1,a|1,a|2,b|3,c", ""},
		{"a scan", &plan.Graph{Stages: []*plan.Stage{{ID: 0, Root: &plan.Node{Kind: plan.KindScan, Schema: schema,
			Scan: &plan.Scan{Table: "t", Format: "parquet"}}}}}, "", "a table scan"},
		{"no such stage", &plan.Graph{Stages: []*plan.Stage{{ID: 1, Root: sorted(0, false), Inputs: []int{0}}}, Result: 1}, "", "no stage 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, recs, err := RunGraph(context.Background(), tc.g, Options{})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer releaseRecords(recs)
			if got := graphText(s, recs); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func graphText(s *arrow.Schema, recs []arrow.RecordBatch) string {
	var names []string
	for _, f := range s.Fields() {
		names = append(names, f.Name)
	}
	out := []string{strings.Join(names, ",")}
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			var vals []string
			for j := 0; j < int(r.NumCols()); j++ {
				vals = append(vals, fmt.Sprint(r.Column(j).ValueStr(i)))
			}
			out = append(out, strings.Join(vals, ","))
		}
	}
	return strings.Join(out, "|")
}
