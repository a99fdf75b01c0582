package coordinator

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestAIMDLimit: a 429 cuts the limit by limitBeta once per epoch (a
// second 429 of requests sent before the cut does not cut again), never
// below the floor; an invocation that ran while tasks wait and the limit
// binds grows it, by one up to the limit of the last cut, then by one per
// round (doubling), never above the configured slots; it does not grow
// while the tasks in flight drain to a cut limit, nor without demand.
func TestAIMDLimit(t *testing.T) {
	type step struct {
		op     string // "429 now" (a request of the current epoch), "429 old" (of the epoch before), "ran" (binding, tasks waiting), "ran draining" (in flight over the limit), "ran idle" (nobody waits)
		n      int    // times
		lo, hi int    // the limit after, within [lo, hi]
	}
	for _, tc := range []struct {
		name           string
		ceiling, floor int
		steps          []step
	}{
		{"no throttling: stays at the slots", 3000, 1, []step{{"ran", 10000, 3000, 3000}}},
		{"shrinks on a 429", 3000, 1, []step{{"429 now", 1, 2100, 2100}}},
		{"a burst of one overshoot is one cut", 3000, 1, []step{{"429 now", 1, 2100, 2100}, {"429 old", 500, 2100, 2100}}},
		{"each later overshoot cuts again", 3000, 1, []step{{"429 now", 3, 1029, 1029}}},
		{"grows by one per run", 3000, 1, []step{{"429 now", 1, 2100, 2100}, {"ran", 50, 2150, 2150}}},
		{"no growth while draining to the cut", 3000, 1, []step{{"429 now", 1, 2100, 2100}, {"ran draining", 500, 2100, 2100}}},
		{"no growth without tasks waiting", 3000, 1, []step{{"429 now", 1, 2100, 2100}, {"ran idle", 500, 2100, 2100}}},
		{"fast to the last cut, then one per round", 3000, 1, []step{
			{"429 now", 2, 1470, 1470}, // the last cut was at 2100
			{"ran", 630, 2100, 2100},   // one per run up to it
			{"ran", 2100, 2100, 2102},  // then about one in a round of 2,100
			{"ran", 2100, 2102, 2106},  // about twice that in the next
			{"ran", 12600, 2300, 2999}, // faster each round (e^6 in six)
			{"ran", 20000, 3000, 3000}, // up to the slots, no further
		}},
		{"floor of one", 3000, 1, []step{{"429 now", 100, 1, 1}, {"ran", 2, 2, 2}, {"ran", 100, 60, 102}}},
		{"floor above one", 64, 4, []step{{"429 now", 100, 4, 4}}},
		{"floor above the ceiling is the ceiling", 2, 8, []step{{"429 now", 5, 2, 2}}},
		{"one slot", 1, 1, []step{{"429 now", 3, 1, 1}, {"ran", 3, 1, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAIMDLimit(tc.ceiling, tc.floor)
			if a.cur() != tc.ceiling {
				t.Fatalf("starts at %d, want the ceiling %d", a.cur(), tc.ceiling)
			}
			for i, s := range tc.steps {
				for range s.n {
					switch s.op {
					case "429 now":
						if !a.throttled(a.epoch) {
							t.Fatalf("step %d: a 429 of the current epoch did not cut the limit", i)
						}
					case "429 old":
						if a.throttled(a.epoch - 1) {
							t.Fatalf("step %d: a 429 of an older epoch cut the limit", i)
						}
					case "ran":
						a.ran(a.cur(), true)
					case "ran draining":
						a.ran(a.cur()+1, true)
					case "ran idle":
						a.ran(a.cur(), false)
					}
				}
				if got := a.cur(); got < s.lo || got > s.hi {
					t.Fatalf("step %d (%s x%d): limit %d, want %d..%d", i, s.op, s.n, got, s.lo, s.hi)
				}
			}
		})
	}
}

// TestDispatcherFollowsThrottling: a throttled slot is given back and the
// limit cut, so released slots are not handed out again until the tasks
// in flight are under the new limit; the throttled attempt then gets the
// first slot, ahead of its job's tasks queued before it; runs grow the
// limit back and hand out the slots it adds.
func TestDispatcherFollowsThrottling(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := newDispatcher(10, true)
	var slots []*slot
	for range 10 {
		s, err := d.take(ctx, "j", 5)
		if err != nil {
			t.Fatal(err)
		}
		slots = append(slots, s)
	}
	granted := make(chan string, 8)
	queue := func(name string) {
		before := d.waitingCount()
		go func() {
			s, err := d.take(ctx, "j", 5)
			if err != nil {
				t.Error(err)
				return
			}
			_ = s
			granted <- name
		}()
		for d.waitingCount() == before {
			time.Sleep(100 * time.Microsecond)
		}
	}
	queue("q1")
	queue("q2")
	// slots[0] is throttled: the limit goes to 7, its slot back (9 in use).
	back := make(chan error, 1)
	go func() {
		err := slots[0].throttled(ctx, 0)
		if err == nil {
			granted <- "throttled"
		}
		back <- err
	}()
	for d.waitingCount() != 3 {
		time.Sleep(100 * time.Microsecond)
	}
	if l, n := d.limit(); l != 7 || n != 1 {
		t.Fatalf("after a 429: limit %d, %d throttled; want 7, 1", l, n)
	}
	// A 429 of another slot of the same epoch does not cut again.
	d.mu.Lock()
	cutAgain := d.lim.throttled(slots[1].epoch)
	d.mu.Unlock()
	if cutAgain {
		t.Fatal("a second 429 of the cut epoch cut the limit again")
	}
	// Two releases: 9 -> 7 in use, nothing granted (7 is the limit).
	slots[1].release()
	slots[2].release()
	select {
	case g := <-granted:
		t.Fatalf("%s granted a slot with the tasks in flight at the limit", g)
	case <-time.After(20 * time.Millisecond):
	}
	// One more release: the throttled attempt goes first.
	slots[3].release()
	if g := <-granted; g != "throttled" {
		t.Fatalf("%s got the slot, want the throttled attempt", g)
	}
	if err := <-back; err != nil {
		t.Fatal(err)
	}
	// An invocation ran: the limit grows to 8 and q1 gets the new slot.
	slots[4].ran()
	if g := <-granted; g != "q1" {
		t.Fatalf("%s got the grown slot, want q1", g)
	}
	if l, _ := d.limit(); l != 8 {
		t.Fatalf("limit %d after a run, want 8", l)
	}
	slots[5].release()
	if g := <-granted; g != "q2" {
		t.Fatalf("%s, want q2", g)
	}
}

// TestThrottledAttemptCancelled: an attempt waiting for a slot again after
// a 429 ends with its context, and its slot is not leaked.
func TestThrottledAttemptCancelled(t *testing.T) {
	d := newDispatcher(2, true)
	ctx := context.Background()
	a, _ := d.take(ctx, "j", 0)
	b, _ := d.take(ctx, "j", 0)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.throttled(cctx, time.Hour) }()
	for d.inUseCount() != 1 {
		time.Sleep(100 * time.Microsecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	a.release() // not held: a no-op
	b.release()
	if n := d.inUseCount(); n != 0 {
		t.Fatalf("%d slots in use after all were given back", n)
	}
}

func (d *dispatcher) inUseCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inUse
}

// TestLambdaInvokerReturnsThrottled: under withThrottleReturn a 429 comes
// back at once as a *ThrottledError (one request, the Retry-After kept),
// without it the invoker retries as before.
func TestLambdaInvokerReturnsThrottled(t *testing.T) {
	f := &fakeLambda{respond: func(n int64, body []byte, w http.ResponseWriter) {
		if n == 1 {
			throttle(w)
			return
		}
		echoResult(w, body)
	}}
	inv, _ := newTestLambda(t, f, nil)
	_, err := inv.Invoke(withThrottleReturn(context.Background()), testSpec(t, 0))
	var te *ThrottledError
	if !errors.Is(err, ErrThrottled) || !errors.As(err, &te) {
		t.Fatalf("err %v, want a ThrottledError", err)
	}
	if f.calls.Load() != 1 {
		t.Fatalf("%d requests, want 1 (no retry)", f.calls.Load())
	}
	f.calls.Store(0)
	if _, err := inv.Invoke(context.Background(), testSpec(t, 0)); err != nil {
		t.Fatalf("without the marker: %v", err)
	}
	if f.calls.Load() != 2 {
		t.Fatalf("%d requests without the marker, want 2 (retried)", f.calls.Load())
	}
}

// TestHTTPInvokerReturnsThrottled: under withThrottleReturn the HTTP
// invoker returns a 429 at once, with the Retry-After it was sent.
func TestHTTPInvokerReturnsThrottled(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/invoke" {
			return
		}
		calls.Add(1)
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	inv := NewHTTPInvoker([]string{srv.URL}, 1)
	defer inv.Close()
	_, err := inv.Invoke(withThrottleReturn(context.Background()), testSpec(t, 0))
	var te *ThrottledError
	if !errors.As(err, &te) || !errors.Is(err, ErrThrottled) || te.RetryAfter != 2*time.Second {
		t.Fatalf("err %v, want a ThrottledError with Retry-After 2s", err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

// TestAIMDLimitLow: the low-water mark keeps a cut the limit has grown
// back from before it is read, and each read starts a new period.
func TestAIMDLimitLow(t *testing.T) {
	a := newAIMDLimit(3000, 1)
	if got := a.takeLow(); got != 3000 {
		t.Fatalf("before any cut: low %d, want 3000", got)
	}
	a.throttled(a.epoch) // 3000 -> 2100
	for range 5000 {
		a.ran(a.cur(), true)
	}
	if a.cur() < 2900 {
		t.Fatalf("limit %d, want it grown back near 3000", a.cur())
	}
	if got := a.takeLow(); got != 2100 {
		t.Errorf("after a cut and regrowth: low %d, want 2100", got)
	}
	if got, cur := a.takeLow(), a.cur(); got != cur {
		t.Errorf("a new period: low %d, want the current limit %d", got, cur)
	}
}
