package coordinator

import (
	"testing"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/plan"
)

// TestStageSummaries: a stage's summary merges its committed task
// results; a task that wrote rows without a summary, or summaries that
// do not account for every row written, leave the column without one.
func TestStageSummaries(t *testing.T) {
	st := &plan.Stage{Root: &plan.Node{Kind: plan.KindEmpty, Schema: plan.Schema{{Name: "a", Type: plan.Int64Type}, {Name: "b", Type: plan.StringType}}}, Summarize: []int{0}}
	sum := func(rows int64, vs ...int64) plan.ColumnSummary {
		s := plan.ColumnSummary{Column: 0, Type: plan.Int64Type, Rows: rows, Exact: true}
		for _, v := range vs {
			s.Values = append(s.Values, plan.Value{I: v})
		}
		if len(vs) > 0 {
			s.HasRange, s.Min, s.Max = true, s.Values[0], s.Values[len(vs)-1]
		}
		return s
	}
	res := func(rows int64, s ...plan.ColumnSummary) *function.TaskResult {
		return &function.TaskResult{Rows: rows, Summaries: s}
	}
	for _, tc := range []struct {
		name    string
		results []*function.TaskResult
		want    int // distinct values, -1: no summary
	}{
		{"merged", []*function.TaskResult{res(2, sum(2, 1, 4)), res(3, sum(3, 4, 7, 9))}, 4},
		{"a task not invoked", []*function.TaskResult{res(2, sum(2, 1, 4)), {NotInvoked: true}}, 2},
		{"a task without a summary", []*function.TaskResult{res(2, sum(2, 1, 4)), res(1)}, -1},
		{"rows not accounted for", []*function.TaskResult{res(2, sum(2, 1, 4)), res(5, sum(3, 5))}, -1},
		{"an invalid summary", []*function.TaskResult{res(2, plan.ColumnSummary{Column: 0, Type: plan.Int64Type, Rows: 2, Exact: true, Values: []plan.Value{{I: 3}}})}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := stageSummaries(st, tc.results)
			switch {
			case tc.want < 0 && len(got) != 0:
				t.Fatalf("got %+v, want no summary", got)
			case tc.want >= 0 && (len(got) != 1 || len(got[0].Values) != tc.want):
				t.Fatalf("got %+v, want %d values", got, tc.want)
			}
		})
	}
}
