package coordinator

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicedb/sluice/function"
)

// TestThrottledAttemptSentAgain: an attempt the platform throttles is
// sent again as the same attempt, its splits as they were and its
// deadline counted from when it is sent again (after the Retry-After
// wait), not from its first send.
func TestThrottledAttemptSentAgain(t *testing.T) {
	e := newFakeEnv(t, 4)
	const wait = 20 * time.Millisecond
	var throttled atomic.Bool
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		if s.Stage == 0 && s.Task == 2 && throttled.CompareAndSwap(false, true) {
			return nil, &ThrottledError{RetryAfter: wait}, true
		}
		return nil, nil, false
	}
	cfg := testConfig("a")
	cfg.RetryBackoff = wait / 10 // throttleWait honours Retry-After up to 20 of it
	c := e.coordinator(t, cfg)
	job, _ := c.Submit(context.Background(), "q", SubmitOptions{})
	waitJob(t, c, job)
	checkDone(t, c, job, 4)
	specs := e.inv.specsOf(0, 2)
	if len(specs) != 2 {
		t.Fatalf("task 0/2 sent %d times, want 2 (throttled, then run)", len(specs))
	}
	a, b := specs[0], specs[1]
	if a.Attempt != 1 || b.Attempt != 1 {
		t.Fatalf("attempts %d and %d, want the same attempt (1) sent twice", a.Attempt, b.Attempt)
	}
	if a.Deadline.IsZero() || b.Deadline.Sub(a.Deadline) < wait {
		t.Fatalf("deadlines %v then %v: the second not counted from after the %v wait", a.Deadline, b.Deadline, wait)
	}
	if len(a.Splits) == 0 || !reflect.DeepEqual(a.Splits, b.Splits) || a.OutputPrefix != b.OutputPrefix {
		t.Fatalf("the spec changed beyond its deadline: %+v\n%+v", a, b)
	}
	if n := metricValue(c.metrics.Throttled); n != 1 {
		t.Fatalf("throttled counted %v, want 1", n)
	}
}

// TestHedgeOnlyRunningAttempts: an attempt waiting for a slot again after
// a 429 is not running on the platform, and is not hedged however long it
// waits; a running straggler under the same settings is (the control).
func TestHedgeOnlyRunningAttempts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		throttle   bool // task 0/5's first send is throttled (a long Retry-After), else it runs long
		wantHedged bool
	}{
		{"throttled, waiting for a slot", true, false},
		{"running straggler", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFakeEnv(t, 8)
			const long = 300 * time.Millisecond
			var first atomic.Bool
			e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
				if s.Stage == 0 && s.Task == 5 && first.CompareAndSwap(false, true) {
					if tc.throttle {
						return nil, &ThrottledError{RetryAfter: long}, true
					}
					select { // a straggler, until its duplicate wins
					case <-ctx.Done():
						return nil, ctx.Err(), true
					case <-time.After(long):
					}
				}
				return nil, nil, false
			}
			cfg := testConfig("a")
			cfg.HedgeFactor = 2
			cfg.HedgeAfter = 10 * time.Millisecond
			cfg.RetryBackoff = long / 10 // the Retry-After is honoured up to 20 of it
			cfg.TaskTimeout = time.Hour
			c := e.coordinator(t, cfg)
			job, _ := c.Submit(context.Background(), "q", SubmitOptions{})
			waitJob(t, c, job)
			checkDone(t, c, job, 8)
			attempts := map[int]bool{}
			for _, s := range e.inv.specsOf(0, 5) {
				attempts[s.Attempt] = true
			}
			hedged := attempts[2] || metricValue(c.metrics.Hedges) > 0
			if hedged != tc.wantHedged {
				t.Fatalf("task 0/5 hedged %v (attempts sent %v, hedges %v), want %v", hedged, attempts, metricValue(c.metrics.Hedges), tc.wantHedged)
			}
		})
	}
}

// TestPackGrowsLimitOnce: a pack of several tasks is one invocation, and
// after a cut it grows the concurrency limit once, not once per member.
func TestPackGrowsLimitOnce(t *testing.T) {
	e := newFakeEnv(t, 1)
	cfg := testConfig("a")
	cfg.Concurrency = 10
	c := e.coordinator(t, cfg)
	if c.packer == nil {
		t.Fatal("packing is off")
	}
	c.packer.queued = nil // the pack waits for its announced members even with tasks queued
	d := c.dispatch
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d.mu.Lock()
	d.lim.throttled(d.lim.epoch) // a 429: 10 -> 7, the last cut at 10
	d.mu.Unlock()
	var slots []*slot
	for range 7 {
		s, err := d.take(ctx, "j", 0)
		if err != nil {
			t.Fatal(err)
		}
		slots = append(slots, s)
	}
	// Four tasks wait: each growth of the limit hands one a slot.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := d.take(ctx, "j", 0)
			if err == nil {
				defer s.release()
				<-ctx.Done()
			}
		}()
	}
	for d.waitingCount() != 4 {
		time.Sleep(100 * time.Microsecond)
	}
	const members = 4
	arrivals := c.packer.expect(members)
	errs := make(chan error, members)
	for i := range members {
		go func() {
			spec := &function.TaskSpec{Version: function.SpecVersion, Job: "j", Stage: 0, Task: i, Attempt: 1,
				PlanKey: "plan", OutputPrefix: "out/", Deadline: time.Now().Add(time.Minute)}
			_, err := c.invoke(ctx, nil, spec, time.Minute, 1, arrivals[i], func() {}, slots[i])
			errs <- err
		}()
	}
	for range members {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := e.inv.calls.Load(); n != 1 {
		t.Fatalf("%d invocations, want the pack's one", n)
	}
	if l, _ := d.limit(); l != 8 {
		t.Fatalf("limit %d after one packed invocation of %d tasks, want 8 (7 grown once)", l, members)
	}
	cancel()
	wg.Wait()
}

// TestHTTPInvoker503: a 503 is throttling. Under withThrottleReturn it
// comes back at once as a *ThrottledError (so the dispatcher gives the
// slot back and cuts its limit); without it, it is retried, and the
// invoker's own slot is free during the backoff: another invocation runs
// before the retry (with one slot).
func TestHTTPInvoker503(t *testing.T) {
	t.Run("returned", func(t *testing.T) {
		var calls atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/invoke" {
				return
			}
			calls.Add(1)
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		defer srv.Close()
		inv := NewHTTPInvoker([]string{srv.URL}, 1)
		defer inv.Close()
		_, err := inv.Invoke(withThrottleReturn(context.Background()), testSpec(t, 0))
		var te *ThrottledError
		if !errors.As(err, &te) || te.RetryAfter != time.Second {
			t.Fatalf("err %v, want a ThrottledError with Retry-After 1s", err)
		}
		if n := calls.Load(); n != 1 {
			t.Fatalf("%d requests, want 1", n)
		}
	})
	t.Run("slot free during the backoff", func(t *testing.T) {
		var mu sync.Mutex
		var order []string
		bStarted := make(chan struct{})
		startB := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/invoke" {
				return
			}
			body, _ := io.ReadAll(r.Body)
			spec, _ := function.DecodeSpec(body)
			name := "B"
			if spec != nil && spec.Task == 1 {
				name = "A"
			}
			mu.Lock()
			order = append(order, name)
			n := len(order)
			mu.Unlock()
			if n == 1 { // A's first request: throttled once B waits for the slot
				close(startB)
				<-bStarted
				time.Sleep(20 * time.Millisecond)
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			echoResult(w, body)
		}))
		defer srv.Close()
		inv := NewHTTPInvoker([]string{srv.URL}, 1)
		defer inv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		errs := make(chan error, 2)
		go func() {
			_, err := inv.Invoke(ctx, specOfTask(1))
			errs <- err
		}()
		<-startB
		go func() {
			close(bStarted)
			_, err := inv.Invoke(ctx, specOfTask(2))
			errs <- err
		}()
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(order) != 3 || order[1] != "B" || order[2] != "A" {
			t.Fatalf("requests %v, want [A B A]: B runs during A's backoff", order)
		}
	})
}

func specOfTask(task int) []byte {
	s := &function.TaskSpec{Version: function.SpecVersion, Job: "j1", Stage: 0, Task: task, Attempt: 1,
		PlanKey: "plan", OutputPrefix: "out/"}
	b, _ := s.Encode()
	return b
}

// throttleFirstBatch refuses the first packed invocation with a 429 and
// records whether a packed invocation asked for 429s back at once.
type throttleFirstBatch struct {
	inner       Invoker
	batches     atomic.Int64
	askedReturn atomic.Bool
}

func (x *throttleFirstBatch) Invoke(ctx context.Context, body []byte) ([]byte, error) {
	if function.IsBatch(body) {
		if throttleReturn(ctx) {
			x.askedReturn.Store(true)
		}
		if x.batches.Add(1) == 1 {
			return nil, &ThrottledError{}
		}
	}
	return x.inner.Invoke(ctx, body)
}

// TestPackThrottledReturns: a pack of tasks that follow the platform's
// concurrency asks the invoker for its 429 at once (as each member alone
// would: the packer's base context carries withThrottleReturn), so the
// members give their slots back, the limit is cut (once), and each is
// sent again and runs.
func TestPackThrottledReturns(t *testing.T) {
	e := newFakeEnv(t, 1)
	cfg := testConfig("a")
	cfg.Concurrency = 10
	c := e.coordinator(t, cfg)
	inv := &throttleFirstBatch{inner: e.inv}
	c.packer.inv = inv
	d := c.dispatch
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const members = 4
	arrivals := c.packer.expect(members)
	errs := make(chan error, members)
	for i := range members {
		s, err := d.take(ctx, "j", 0)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer s.release()
			spec := &function.TaskSpec{Version: function.SpecVersion, Job: "j", Stage: 0, Task: i, Attempt: 1,
				PlanKey: "plan", OutputPrefix: "out/", Deadline: time.Now().Add(time.Minute)}
			_, err := c.invoke(ctx, nil, spec, time.Minute, 1, arrivals[i], func() {}, s)
			errs <- err
		}()
	}
	for range members {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if !inv.askedReturn.Load() {
		t.Fatal("the pack's invocation did not ask for 429s back at once: the invoker would retry them holding every member's slot")
	}
	if l, n := d.limit(); l != 7 || n != members {
		t.Fatalf("limit %d after %d 429s, want 7 (cut once) after %d", l, n, members)
	}
}
