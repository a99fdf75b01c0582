package coordinator

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
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

// TestStageSummaryBloom: a stage whose keys overflow the set gets one
// Bloom filter holding every task's keys: the filters of tasks that
// overflowed ORed, the values of tasks still exact added; a task that
// overflowed without a filter leaves the stage with its range only.
func TestStageSummaryBloom(t *testing.T) {
	st := &plan.Stage{Root: &plan.Node{Kind: plan.KindEmpty, Schema: plan.Schema{{Name: "a", Type: plan.Int64Type}}}, Summarize: []int{0}}
	hashOf := func(v int64) uint64 {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		b.Append(v)
		a := b.NewArray()
		defer a.Release()
		h := make([]uint64, 1)
		if err := kernel.HashKeys(a, h); err != nil {
			t.Fatal(err)
		}
		return h[0]
	}
	overflowed := func(lo, hi int64, withBloom bool) plan.ColumnSummary {
		s := plan.ColumnSummary{Column: 0, Type: plan.Int64Type, Rows: hi - lo, HasRange: true, Min: plan.Value{I: lo}, Max: plan.Value{I: hi - 1}}
		if withBloom {
			f, _ := kernel.NewBloom(plan.SummaryBloomBytes)
			for v := lo; v < hi; v++ {
				f.Insert(hashOf(v))
			}
			if lo == 0 {
				f = f.Shrink(0.1) // tasks' filters of different sizes fold to the smallest
			}
			s.Bloom = f.Bytes()
		}
		return s
	}
	exact := plan.ColumnSummary{Column: 0, Type: plan.Int64Type, Rows: 3, Exact: true, HasRange: true,
		Min: plan.Value{I: 1_000_001}, Max: plan.Value{I: 1_000_003}, Values: []plan.Value{{I: 1_000_001}, {I: 1_000_002}, {I: 1_000_003}}}
	sums := stageSummaries(st, []*function.TaskResult{
		{Rows: 2000, Summaries: []plan.ColumnSummary{overflowed(0, 2000, true)}},
		{Rows: 3, Summaries: []plan.ColumnSummary{exact}},
		{Rows: 1500, Summaries: []plan.ColumnSummary{overflowed(5000, 6500, true)}},
	})
	if len(sums) != 1 || sums[0].Exact || len(sums[0].Bloom) == 0 || len(sums[0].Bloom) >= plan.SummaryBloomBytes {
		t.Fatalf("summaries %d, want one with a Bloom filter shrunk to its 3,503 keys", len(sums))
	}
	f, err := kernel.BloomFromBytes(sums[0].Bloom)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int64{{0, 2000}, {1_000_001, 1_000_004}, {5000, 6500}} {
		for v := r[0]; v < r[1]; v++ {
			if !f.MayContain(hashOf(v)) {
				t.Fatalf("key %d missing from the stage's filter", v)
			}
		}
	}
	sums = stageSummaries(st, []*function.TaskResult{
		{Rows: 2000, Summaries: []plan.ColumnSummary{overflowed(0, 2000, true)}},
		{Rows: 1500, Summaries: []plan.ColumnSummary{overflowed(5000, 6500, false)}},
	})
	if len(sums) != 1 || sums[0].Bloom != nil || !sums[0].HasRange {
		t.Fatalf("a task without a filter: the stage keeps its range only, got bloom %d bytes", len(sums[0].Bloom))
	}
}
