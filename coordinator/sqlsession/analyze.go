package sqlsession

import (
	"fmt"
	"io"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/plan"
)

// The parts of a finished job's analysis that every front end prints the
// same way: the CLI's --stats and --analyze, and EXPLAIN ANALYZE over SQL
// (the shell, psql, Flight SQL).

// WriteRoundNotes writes what every adaptive rule that fired did, one line
// per rule and round (runtime filters: source stage, kind, size).
func WriteRoundNotes(w io.Writer, js *coordinator.JobStatus, indent string) {
	for _, r := range js.Rounds {
		for _, f := range r.Fired {
			if f.Discarded != "" {
				fmt.Fprintf(w, "%sadaptive round %d (after stages %v): %s discarded: %s\n", indent, r.Round, r.After, f.Rule, f.Discarded)
				continue
			}
			fmt.Fprintf(w, "%sadaptive round %d (after stages %v): %s: %s\n", indent, r.Round, r.After, f.Rule, f.Note)
		}
	}
}

// WriteOperatorMetrics writes every finished stage's fragment, as it ran
// (after re-planning: runtime filters on their scans and the Filter
// nodes that apply them), with its operators' metrics summed over the
// stage's tasks, the way DataFusion's EXPLAIN ANALYZE prints metrics=[...]
// on each plan line: a runtime filter's rows dropped are its Filter's
// input rows less its output rows.
func WriteOperatorMetrics(w io.Writer, js *coordinator.JobStatus) {
	fmt.Fprintln(w, "== operator metrics (summed over each stage's tasks)")
	for _, s := range js.Stages {
		if s.Metrics == nil || s.Plan == nil {
			fmt.Fprintf(w, "Stage %d: %s, no metrics\n", s.ID, s.State)
			continue
		}
		fmt.Fprintf(w, "Stage %d [%s] tasks=%d\n", s.ID, s.Output, s.Metrics.Tasks)
		if wm := s.Metrics.Operator(function.WriterNode); wm != nil {
			fmt.Fprintf(w, "  ShuffleWriter: metrics=[%s]\n", wm.Format())
		}
		fmt.Fprint(w, planner.FormatFragment(s.Plan, 2, func(id int, n *plan.Node) string {
			if o := s.Metrics.Operator(id); o != nil && o.Kind == string(n.Kind) {
				return "metrics=[" + o.Format() + "]"
			}
			return ""
		}))
	}
}
