package main

import (
	"fmt"
	"io"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/coordinator/sqlsession"
)

// printPhases prints, per stage, where its tasks' time went: queue,
// startup, read, compute, write and commit, each as the sum over the
// stage's tasks and the slowest task's (seconds).
func printPhases(w io.Writer, js *coordinator.JobStatus) {
	have := false
	for _, s := range js.Stages {
		have = have || s.Metrics != nil
	}
	if !have {
		return
	}
	fmt.Fprintln(w, "  time by phase, seconds (sum over tasks / slowest task):")
	fmt.Fprintf(w, "  %-6s %15s %15s %15s %15s %15s %15s\n", "stage", "queue", "startup", "read", "compute", "write", "commit")
	for _, s := range js.Stages {
		m := s.Metrics
		if m == nil {
			continue
		}
		p, x := m.PhaseSum, m.PhaseMax
		cell := func(sum, mx float64) string { return fmt.Sprintf("%.3f/%.3f", sum, mx) }
		fmt.Fprintf(w, "  %-6d %15s %15s %15s %15s %15s %15s\n", s.ID, cell(p.Queue, x.Queue), cell(p.Startup, x.Startup),
			cell(p.Read, x.Read), cell(p.Compute, x.Compute), cell(p.Write, x.Write), cell(p.Commit, x.Commit))
	}
}

// printOperatorMetrics prints every finished stage's fragment with its
// operators' metrics (coordinator.WriteOperatorMetrics).
func printOperatorMetrics(w io.Writer, js *coordinator.JobStatus) {
	fmt.Fprintln(w)
	sqlsession.WriteOperatorMetrics(w, js)
}
