package coordinator

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// peakCounter counts calls in flight and keeps their peak.
type peakCounter struct{ n, peak atomic.Int64 }

func (p *peakCounter) enter() {
	n := p.n.Add(1)
	for {
		m := p.peak.Load()
		if n <= m || p.peak.CompareAndSwap(m, n) {
			return
		}
	}
}

func (p *peakCounter) leave() { p.n.Add(-1) }

// TestJobRunOpen runs open for many tasks at once: at most the limit of
// opens run at once, every task is opened once, and an error stops the
// rest cleanly: the failing open's error comes back as it was, the tasks
// still waiting return the context's error without opening, and no token
// is left held.
func TestJobRunOpen(t *testing.T) {
	fail := errors.New("task_begin refused")
	for _, tc := range []struct {
		name   string
		limit  int
		tasks  int
		failAt int // the open that fails, counted from 1 as they run (0: none)
	}{
		{"one at a time", 1, 20, 0},
		{"fewer tasks than the limit", 64, 10, 0},
		{"many tasks, limit 4", 4, 200, 0},
		{"many tasks, the job's limit", maxOpening, 1000, 0},
		{"an error stops the rest", 4, 200, 10},
		{"an error with the job's limit", maxOpening, 1000, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := &jobRun{opens: make(chan struct{}, tc.limit)}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var inFlight peakCounter
			var began atomic.Int64
			failed := -1 // the task whose open failed
			opened := make([]atomic.Int64, tc.tasks)
			errs := make([]error, tc.tasks)
			var wg sync.WaitGroup
			for task := range tc.tasks {
				wg.Go(func() {
					errs[task] = run.open(ctx, func(ctx context.Context) error {
						inFlight.enter()
						defer inFlight.leave()
						opened[task].Add(1)
						time.Sleep(200 * time.Microsecond) // a round trip
						if began.Add(1) == int64(tc.failAt) {
							failed = task // read after wg.Wait
							cancel()      // as runTasks does: one task failing fails the stage
							return fail
						}
						return ctx.Err()
					})
				})
			}
			wg.Wait()
			if p := inFlight.peak.Load(); p > int64(tc.limit) {
				t.Errorf("%d opens at once, over the limit of %d", p, tc.limit)
			} else if tc.failAt == 0 && tc.tasks >= 2*tc.limit && p < 2 && tc.limit > 1 {
				t.Errorf("at most %d open at once: not run in parallel", p)
			}
			if n := len(run.opens); n != 0 {
				t.Errorf("%d tokens still held after every open returned", n)
			}
			var skipped int
			for task := range tc.tasks {
				n, err := opened[task].Load(), errs[task]
				switch {
				case n > 1:
					t.Errorf("task %d opened %d times", task, n)
				case tc.failAt == 0:
					if n != 1 || err != nil {
						t.Errorf("task %d: opened %d times, error %v", task, n, err)
					}
				case task == failed:
					if !errors.Is(err, fail) {
						t.Errorf("failing task %d: error %v, want %v", task, err, fail)
					}
				case n == 0:
					skipped++
					if !errors.Is(err, context.Canceled) {
						t.Errorf("task %d never opened: error %v, want the context's", task, err)
					}
				}
			}
			if tc.failAt > 0 {
				// At most limit-1 other opens ran beside the failing one.
				if want := tc.tasks - tc.failAt - (tc.limit - 1); skipped < want {
					t.Errorf("%d tasks not opened after open %d failed, want at least %d", skipped, tc.failAt, want)
				}
				t.Logf("%d of %d tasks not opened after open %d (task %d) failed", skipped, tc.tasks, tc.failAt, failed)
			}
		})
	}
}

// TestJobRunOpenUnbounded: a run without a bound (as finish builds one)
// opens at once.
func TestJobRunOpenUnbounded(t *testing.T) {
	run := &jobRun{}
	called := false
	if err := run.open(context.Background(), func(context.Context) error { called = true; return nil }); err != nil || !called {
		t.Fatalf("open: called %v, error %v", called, err)
	}
}

// beginCounter is a go-redis hook that counts the task_begin scripts in
// flight, each held a little (a slow Redis), and their peak.
type beginCounter struct {
	peakCounter
	total atomic.Int64
}

func (h *beginCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (h *beginCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if len(args) < 2 {
			return next(ctx, cmd)
		}
		name, _ := args[0].(string)
		body, _ := args[1].(string)
		isBegin := (strings.EqualFold(name, "evalsha") && body == trTaskBegin.script.Hash()) ||
			(strings.EqualFold(name, "eval") && strings.Contains(body, "task_begin"))
		if !isBegin {
			return next(ctx, cmd)
		}
		h.enter()
		defer h.leave()
		h.total.Add(1)
		time.Sleep(time.Millisecond)
		return next(ctx, cmd)
	}
}

func (h *beginCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestStageOpensBounded runs a job whose scan stage has many more tasks
// than maxOpening against a Redis that answers task_begin slowly: the
// stage's tasks never have more than maxOpening task_begin round trips
// in flight at once (unbounded, all of them were), and the job succeeds.
func TestStageOpensBounded(t *testing.T) {
	tasks := 4 * maxOpening
	e := newFakeEnv(t, tasks)
	h := &beginCounter{}
	e.rdb.AddHook(h)
	cfg := testConfig("c1")
	cfg.Concurrency = tasks
	c := e.coordinator(t, cfg)
	job, err := c.Submit(context.Background(), "select", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := waitJob(t, c, job); m.State != StateSucceeded {
		t.Fatalf("job %s: %s %s", job, m.State, m.Error)
	}
	peak, total := h.peak.Load(), h.total.Load()
	t.Logf("task_begin: %d in all, at most %d in flight", total, peak)
	if total < int64(tasks) {
		t.Fatalf("%d task_begin round trips seen for %d scan tasks: the hook does not see them", total, tasks)
	}
	if peak > maxOpening {
		t.Errorf("%d task_begin round trips in flight at once, over maxOpening %d", peak, maxOpening)
	}
	if peak < 2 {
		t.Errorf("at most %d task_begin in flight: opens not run in parallel", peak)
	}
}
