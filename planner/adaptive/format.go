package adaptive

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// FormatPlan renders what a round leaves behind: the stage graph (with
// formatGraph, EXPLAIN's formatter; nil uses plan.FormatGraph) followed by
// every stage's task plan (TaskPlan) the re-planner decided.
// It is a Round's PlanAfter.
func (s *State) FormatPlan(formatGraph func(*plan.Graph) string) string {
	if formatGraph == nil {
		formatGraph = func(g *plan.Graph) string { return plan.FormatGraph(g, nil) }
	}
	var b strings.Builder
	b.WriteString(formatGraph(s.Graph))
	ids := make([]int, 0, len(s.Graph.Stages))
	for _, st := range s.Graph.Stages {
		ids = append(ids, st.ID)
	}
	sort.Ints(ids)
	b.WriteString("tasks\n")
	for _, id := range ids {
		b.WriteString(s.describeTasks(id))
	}
	return b.String()
}

// FormatRound renders one round the way EXPLAIN ANALYZE prints it (as
// DataFusion's EXPLAIN VERBOSE prints the plan after each rule): the
// statistics the rules saw, each rule that fired with its note (or why
// its rewrite was discarded), and the plan after the round, or SAME TEXT
// AS ABOVE when it equals prevPlan, the plan after the round before.
func FormatRound(r Round, prevPlan string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "== adaptive round %d (after stages %v)\n", r.Round, r.After)
	if len(r.Fired) == 0 {
		b.WriteString("rules fired: none\n")
	}
	for _, id := range r.After {
		if st := r.Stats[id]; st != nil {
			fmt.Fprintf(&b, "statistics of stage %d: rows=%d bytes=%d non-empty partitions=%d\n", id, st.Rows, st.Bytes, len(st.Partitions))
			for _, sum := range st.Summaries {
				fmt.Fprintf(&b, "  summary of column %d: %s\n", sum.Column, describeSummary(sum))
			}
		}
	}
	for _, n := range r.Scheduling {
		fmt.Fprintf(&b, "scheduling: %s\n", n)
	}
	for _, f := range r.Fired {
		if f.Discarded != "" {
			fmt.Fprintf(&b, "rule %s: discarded: %s\n", f.Rule, f.Discarded)
		} else {
			fmt.Fprintf(&b, "rule %s: %s\n", f.Rule, f.Note)
		}
	}
	if r.PlanAfter == prevPlan {
		b.WriteString("plan after round: SAME TEXT AS ABOVE\n")
	} else {
		b.WriteString("plan after round:\n")
		b.WriteString(r.PlanAfter)
	}
	return b.String()
}

// describeSummary renders a column summary for EXPLAIN ANALYZE.
func describeSummary(s plan.ColumnSummary) string {
	out := fmt.Sprintf("rows=%d nulls=%d", s.Rows, s.Nulls)
	if s.HasRange {
		out += fmt.Sprintf(" min=%s max=%s", s.Min.Format(s.Type), s.Max.Format(s.Type))
	}
	if s.Exact {
		out += fmt.Sprintf(" distinct=%d", len(s.Values))
	} else if s.HasRange {
		out += fmt.Sprintf(" distinct>%d", plan.MaxSummaryValues)
	}
	return out
}
