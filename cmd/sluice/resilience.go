package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// resilienceFlags configure retries, deadlines, hedging, garbage
// collection and (for tests) fault injection of `coordinator serve`.
func resilienceFlags() []cli.Flag {
	d := coordinator.DefaultConfig()
	return []cli.Flag{
		&cli.IntFlag{Name: "max-attempts", Value: d.MaxAttempts, EnvVars: []string{"SLUICE_MAX_ATTEMPTS"}, Usage: "failed attempts of a task before its job fails"},
		&cli.DurationFlag{Name: "retry-backoff", Value: d.RetryBackoff, Usage: "first backoff after a failed attempt (doubles per attempt, at most 10s)"},
		&cli.DurationFlag{Name: "task-timeout", Value: d.TaskTimeout, EnvVars: []string{"SLUICE_TASK_TIMEOUT"}, Usage: "longest deadline of one task attempt"},
		&cli.DurationFlag{Name: "task-deadline-floor", Value: d.TaskDeadlineFloor, Usage: "deadline of an attempt reading nothing; it grows with the attempt's input (--task-bytes-per-second), up to --task-timeout (0: --task-timeout flat)"},
		&cli.Int64Flag{Name: "task-bytes-per-second", Value: d.TaskBytesPerSecond, Usage: "input read rate an attempt's deadline allows for"},
		&cli.DurationFlag{Name: "outage-budget", Value: d.OutageBudget, EnvVars: []string{"SLUICE_OUTAGE_BUDGET"}, Usage: "how long a job waits out unreachable functions or object store before failures count (0: no waiting)"},
		&cli.DurationFlag{Name: "s3-outage", Value: d.S3Outage, Usage: "how long the coordinator's own object store operations wait for an unreachable store"},
		&cli.Float64Flag{Name: "hedge-factor", Value: d.HedgeFactor, Usage: "duplicate an attempt running this many times its stage's median (0: no hedging)"},
		&cli.DurationFlag{Name: "hedge-after", Value: d.HedgeAfter, Usage: "never duplicate an attempt younger than this"},
		&cli.DurationFlag{Name: "retention", Value: d.Retention, EnvVars: []string{"SLUICE_RETENTION"}, Usage: "delete a finished job's shuffle objects this long after it finished (0: keep them)"},
		&cli.DurationFlag{Name: "record-retention", Value: d.RecordRetention, EnvVars: []string{"SLUICE_RECORD_RETENTION"}, Usage: "expire a finished job's Redis keys (status, history, result index) this long after it finished (0: keep them)"},
		&cli.DurationFlag{Name: "redis-outage", Value: d.RedisOutage, Usage: "how long to wait for an unreachable Redis before leaving a job to other coordinators"},
		&cli.IntFlag{Name: "key-spread", Value: d.KeySpread, Usage: "hex digits of the hash component of shuffle keys after the stage, spreading a stage over S3 key prefixes (0: none, at most 4)"},
		&cli.StringFlag{Name: "faults", EnvVars: []string{"SLUICE_FAULTS"}, Usage: "TESTS ONLY: inject function faults, e.g. crash=0.05,hang=0.01,error=0.05,duplicate=0.05,lose=0.02,corrupt=0.02,seed=1"},
	}
}

// applyResilience sets the resilience flags in cfg and wraps inv in a
// fault injector when --faults is set.
func applyResilience(c *cli.Context, cfg *coordinator.Config, inv *coordinator.Invoker, bucket objstore.Bucket) error {
	cfg.MaxAttempts = c.Int("max-attempts")
	cfg.RetryBackoff = c.Duration("retry-backoff")
	cfg.TaskTimeout = c.Duration("task-timeout")
	cfg.TaskDeadlineFloor = c.Duration("task-deadline-floor")
	cfg.TaskBytesPerSecond = c.Int64("task-bytes-per-second")
	cfg.OutageBudget = c.Duration("outage-budget")
	cfg.S3Outage = c.Duration("s3-outage")
	cfg.HedgeFactor = c.Float64("hedge-factor")
	cfg.HedgeAfter = c.Duration("hedge-after")
	cfg.Retention = c.Duration("retention")
	cfg.RecordRetention = c.Duration("record-retention")
	cfg.RedisOutage = c.Duration("redis-outage")
	cfg.KeySpread = c.Int("key-spread")
	if s := c.String("faults"); s != "" {
		fc, err := coordinator.ParseFaults(s)
		if err != nil {
			return fmt.Errorf("--faults: %w", err)
		}
		*inv = coordinator.NewFaultInvoker(*inv, bucket, fc)
		logger(c).Warn("fault injection is on: function faults will be injected", "faults", s)
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
