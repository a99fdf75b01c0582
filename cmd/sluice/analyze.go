package main

import (
	"fmt"
	"io"

	"github.com/dustin/go-humanize"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/planner/adaptive"
)

// printAnalyze prints a finished job's plan history the way DataFusion's
// EXPLAIN VERBOSE prints a plan after each rule, then what every stage did.
func printAnalyze(w io.Writer, js *coordinator.JobStatus) {
	fmt.Fprintf(w, "job %s: %s (adaptive=%v)\n\n", js.ID, js.State, js.Adaptive)
	fmt.Fprintln(w, "== submitted plan")
	fmt.Fprint(w, js.Explain)
	prev := ""
	for _, r := range js.Rounds {
		fmt.Fprint(w, "\n"+adaptive.FormatRound(r, prev))
		prev = r.PlanAfter
	}
	fmt.Fprintln(w, "\n== stage metrics")
	for _, s := range js.Stages {
		fmt.Fprintf(w, "Stage %d [%s] state=%s tasks=%d functions_invoked=%d input_rows=%d input_bytes=%s output_rows=%d output_bytes=%s elapsed=%.3fs",
			s.ID, s.Output, s.State, s.Tasks, s.Invoked, s.InputRows, humanize.IBytes(uint64(s.InputBytes)),
			s.Rows, humanize.IBytes(uint64(s.Bytes)), s.Seconds)
		if s.FilesPruned > 0 {
			fmt.Fprintf(w, " files_pruned=%d", s.FilesPruned)
		}
		if s.RowGroupsPruned > 0 {
			fmt.Fprintf(w, " row_groups_pruned=%d", s.RowGroupsPruned)
		}
		if s.RowGroupsFromStats > 0 {
			fmt.Fprintf(w, " row_groups_from_stats=%d", s.RowGroupsFromStats)
		}
		if s.Reason != "" {
			fmt.Fprintf(w, " reason=%q", s.Reason)
		}
		if s.PeakMemoryBytes > 0 {
			fmt.Fprintf(w, " peak_task_memory=%s spill_bytes=%s spill_files=%d",
				humanize.IBytes(uint64(s.PeakMemoryBytes)), humanize.IBytes(uint64(s.SpillBytes)), s.SpillFiles)
		}
		fmt.Fprintln(w)
	}
	printPhases(w, js)
	printOperatorMetrics(w, js)
	if js.Error != "" {
		fmt.Fprintf(w, "error: %s\n", js.Error)
	}
}
