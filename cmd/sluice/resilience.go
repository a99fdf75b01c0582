package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// applyFaults wraps inv in a fault injector when --faults (s.Faults) is
// set. The other failure-handling knobs (retries, deadlines, hedging,
// retention) are rows of the knob table (knobs.go).
func applyFaults(c *cli.Context, s settings, inv *coordinator.Invoker, bucket objstore.Bucket) error {
	if s.Faults != "" {
		fc, err := coordinator.ParseFaults(s.Faults)
		if err != nil {
			return fmt.Errorf("--faults: %w", err)
		}
		*inv = coordinator.NewFaultInvoker(*inv, bucket, fc)
		logger(c).Warn("fault injection is on: function faults will be injected", "faults", s.Faults)
	}
	return nil
}

// jobAttempts sums the attempts and retries (failed attempts) of a job.
func jobAttempts(js *coordinator.JobStatus) (attempts, retries int) {
	for _, s := range js.Stages {
		attempts += s.Attempts
		retries += s.Retries
	}
	return attempts, retries
}

// ownerText names the coordinator driving a job now, or the last one.
func ownerText(js *coordinator.JobStatus) string {
	switch {
	case js.Lease != "":
		return js.Lease
	case js.Owner != "" && !coordinator.Terminal(js.State):
		return js.Owner + " (lease expired)"
	case js.Owner != "":
		return js.Owner
	}
	return "-"
}

// printAttempts prints who drives a job and the attempts of its stages.
func printAttempts(w io.Writer, js *coordinator.JobStatus) {
	fmt.Fprintf(w, "  coordinator: %s (drivers so far: %d)\n", ownerText(js), js.Fence)
	fmt.Fprintf(w, "  %-6s %8s %8s %8s\n", "stage", "tasks", "attempts", "retries")
	for _, s := range js.Stages {
		if s.Attempts == 0 && s.Tasks == 0 {
			continue
		}
		fmt.Fprintf(w, "  %-6d %8d %8d %8d\n", s.ID, s.Tasks, s.Attempts, s.Retries)
	}
	if js.Collected != "" {
		fmt.Fprintf(w, "  shuffle objects deleted at %s (retention)\n", js.Collected)
	}
}
