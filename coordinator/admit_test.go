package coordinator

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sluicedb/sluice/function"
)

// TestAdmissionControl: with MaxJobs 1, a second job is queued (no task of
// it runs) while the first runs, a third queued one can be cancelled
// without running, and the second runs once the first finishes, first
// come first served; the admission sets are empty afterwards.
func TestAdmissionControl(t *testing.T) {
	ctx := context.Background()
	e := newFakeEnv(t, 2)
	gate := make(chan struct{})
	var mu sync.Mutex
	gated := "" // the first job a task is seen of: its tasks wait for the gate
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		mu.Lock()
		if gated == "" {
			gated = s.Job
		}
		wait := s.Job == gated
		mu.Unlock()
		if wait {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err(), true
			}
		}
		return nil, nil, false
	}
	cfg := testConfig("c1")
	cfg.MaxJobs = 1
	c := e.coordinator(t, cfg)
	first, err := c.Submit(ctx, "select", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitState := func(job string, want JobState) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			m, err := c.store.Job(ctx, job)
			if err == nil && m.State == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s: state %v (%v), want %s", job, m.State, err, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitState(first, StateRunning)
	second, err := c.Submit(ctx, "select", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	third, err := c.Submit(ctx, "select", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // several admission attempts
	waitState(second, StateQueued)
	waitState(third, StateQueued)
	if p, err := c.store.QueuePosition(ctx, second); p != 1 || err != nil {
		t.Errorf("second job's queue position %d (%v), want 1", p, err)
	}
	if p, _ := c.store.QueuePosition(ctx, third); p != 2 {
		t.Errorf("third job's queue position %d, want 2", p)
	}
	if js, err := c.store.Status(ctx, third); err != nil || js.State != StateQueued ||
		js.Waiting != "queued by admission control (--max-jobs): number 2 in line" {
		t.Errorf("third job's status: %v %q (%v)", js.State, js.Waiting, err)
	}
	if err := c.store.Cancel(ctx, third); err != nil {
		t.Fatal(err)
	}
	waitState(third, StateCancelled)
	for _, j := range []string{second, third} {
		if n := len(e.inv.specsOfJob(j)); n != 0 {
			t.Errorf("queued job %s ran %d tasks", j, n)
		}
	}
	close(gate)
	if m := waitJob(t, c, first); m.State != StateSucceeded {
		t.Fatalf("first job %s: %s", m.State, m.Error)
	}
	if m := waitJob(t, c, second); m.State != StateSucceeded {
		t.Fatalf("second job %s: %s", m.State, m.Error)
	}
	if len(e.inv.specsOfJob(second)) == 0 {
		t.Error("the admitted job ran no task")
	}
	// A job leaves admission just after its record turns final
	// (Store.FinishJob: record, then admission, then the running index),
	// so the sets empty a moment after waitJob returns.
	for _, key := range []string{"sluice:{admission}:queued", "sluice:{admission}:admitted"} {
		var n int64
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if n = c.store.rdb.ZCard(ctx, key).Val(); n == 0 || time.Now().After(deadline) {
				break
			}
		}
		if n != 0 {
			t.Errorf("%s holds %d jobs 5 s after all finished", key, n)
		}
	}
}

func (f *fakeInvoker) specsOfJob(job string) []*function.TaskSpec {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*function.TaskSpec
	for _, s := range f.specs {
		if s.Job == job {
			out = append(out, s)
		}
	}
	return out
}
