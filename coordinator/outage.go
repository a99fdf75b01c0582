package coordinator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluicedb/sluice/function/redact"
)

// outageClock is a job's view of an infrastructure outage: since when its
// tasks keep failing because a service (the functions, the object store)
// is unreachable. Retries within Config.OutageBudget of the first such
// failure do not count against MaxAttempts; the job shows "waiting for
// SERVICE: ..." meanwhile. Any committed task ends the outage.
type outageClock struct {
	mu      sync.Mutex
	since   time.Time
	what    string
	waits   int
	spent   bool // the budget ran out (logged once)
	showing bool // the job's "waiting" field is set
}

// withinOutage reports whether a failed attempt whose cause is an outage
// of what ("" : not an outage) may be retried without counting, and if so
// shows it on the job.
func (c *Coordinator) withinOutage(ctx context.Context, run *jobRun, what, msg string) bool {
	if what == "" || c.cfg.OutageBudget <= 0 {
		return false
	}
	o := run.outage
	o.mu.Lock()
	if o.since.IsZero() {
		o.since, o.what, o.spent = time.Now(), what, false
	}
	since, elapsed := o.since, time.Since(o.since)
	if elapsed >= c.cfg.OutageBudget {
		first := !o.spent
		o.spent = true
		o.mu.Unlock()
		if first {
			c.log.Error("outage budget spent: failures count again", "job", run.id, "service", what,
				"budget", c.cfg.OutageBudget.String(), "err", msg)
			c.setWaiting(ctx, run, fmt.Sprintf("%s unavailable for more than %v: %s", what, c.cfg.OutageBudget, redact.String(msg)))
		}
		return false
	}
	o.showing = true
	o.mu.Unlock()
	c.setWaiting(ctx, run, fmt.Sprintf("waiting for %s: %s (since %s, giving up after %v)", what, redact.String(msg),
		since.UTC().Format(time.RFC3339), c.cfg.OutageBudget))
	return true
}

// outageOver ends the job's outage once a task committed.
func (c *Coordinator) outageOver(run *jobRun) {
	o := run.outage
	o.mu.Lock()
	showing := o.showing || o.spent
	was := o.what
	o.since, o.what, o.waits, o.spent, o.showing = time.Time{}, "", 0, false, false
	o.mu.Unlock()
	if showing {
		c.log.Info("outage over", "job", run.id, "service", was)
		c.setWaiting(context.WithoutCancel(c.ctx), run, "")
	}
}

// outageBackoff waits before the next attempt during an outage: 250ms,
// doubling up to 5s over the job's consecutive outage retries.
func (c *Coordinator) outageBackoff(ctx context.Context, run *jobRun) {
	o := run.outage
	o.mu.Lock()
	o.waits++
	n := o.waits
	o.mu.Unlock()
	d := min(250*time.Millisecond<<min(n-1, 5), 5*time.Second)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// setWaiting sets (or with "" clears) the job's "waiting" status, shown to
// clients; best effort.
func (c *Coordinator) setWaiting(ctx context.Context, run *jobRun, msg string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if msg == "" {
		_ = c.store.rdb.HDel(ctx, kJob(run.id), "waiting").Err()
		return
	}
	_ = c.store.rdb.HSet(ctx, kJob(run.id), "waiting", msg).Err()
}

// functionsDown returns "functions" when an invocation failed because no
// function could be reached (refused or reset connections, every endpoint
// ejected, throttled without end), "" otherwise.
func functionsDown(err error) string {
	switch {
	case errors.Is(err, ErrNoEndpoint), errors.Is(err, ErrEndpointEjected), errors.Is(err, ErrThrottled),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EHOSTUNREACH):
		return "functions"
	}
	if s := err.Error(); strings.Contains(s, "connection refused") || strings.Contains(s, "connection reset") {
		return "functions"
	}
	return ""
}

// taskDeadline is the deadline of one attempt of w: TaskDeadlineFloor
// plus the time to read the task's input at TaskBytesPerSecond, at most
// TaskTimeout. A task reading little is given up on in about a minute,
// not after TaskTimeout.
func (c *Coordinator) taskDeadline(w taskWork) time.Duration {
	if c.cfg.TaskDeadlineFloor <= 0 || c.cfg.TaskBytesPerSecond <= 0 {
		return c.cfg.TaskTimeout
	}
	var bytes int64
	for _, sp := range w.splits {
		bytes += sp.Size
	}
	for _, in := range w.inputs {
		for _, o := range in.Objects {
			bytes += o.Bytes
		}
	}
	d := c.cfg.TaskDeadlineFloor + time.Duration(float64(bytes)/float64(c.cfg.TaskBytesPerSecond)*float64(time.Second))
	return min(d, c.cfg.TaskTimeout)
}
