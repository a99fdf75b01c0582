package tests

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/local"
)

// gateInvoker records the job of every invocation in the order the
// coordinator made them, and holds the first hold invocations of stage
// holdStage until release is closed.
type gateInvoker struct {
	inner     coordinator.Invoker
	holdStage int
	release   chan struct{}
	held      chan struct{}

	mu    sync.Mutex
	hold  int
	order []string // "<job>/<stage>"
}

func (g *gateInvoker) Invoke(ctx context.Context, body []byte) ([]byte, error) {
	if spec, err := function.DecodeSpec(body); err == nil {
		g.mu.Lock()
		g.order = append(g.order, fmt.Sprintf("%s/%d", spec.Job, spec.Stage))
		wait := spec.Stage == g.holdStage && g.hold > 0
		if wait {
			g.hold--
		}
		g.mu.Unlock()
		if wait {
			g.held <- struct{}{}
			select {
			case <-g.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return g.inner.Invoke(ctx, body)
}

// fairShareRun runs, on a stack allowing two tasks in flight, a big job
// whose second stage has 64 tasks, holds that stage's first two
// invocations (both slots) until its 62 other tasks and one task of each
// of three small jobs queue for a slot, then lets everything run. It
// returns the invocations in order (job/stage) and the jobs' ids.
func fairShareRun(t *testing.T, fair bool) (order []string, big string, small []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gate := &gateInvoker{holdStage: 1, hold: 2, release: make(chan struct{}), held: make(chan struct{}, 2)}
	st := startStack(t, "", func(o *local.Options) {
		o.Functions = 2 // the coordinator's concurrency on the embedded stack
		o.Partitions = 64
		o.Coordinator.FairShare = fair
		o.Coordinator.PackBytes = 0 // one invocation per task
		o.WrapInvoker = func(inv coordinator.Invoker) coordinator.Invoker { gate.inner = inv; return gate }
	})
	if _, err := st.LoadDir(ctx, dataDir(t, *sfFlag)); err != nil {
		t.Fatal(err)
	}
	co, cl, static := st.Coordinator, coordinator.NewClient(st.APIURL, ""), false
	until := func(what string, ok func() bool) {
		for !ok() {
			if ctx.Err() != nil {
				h, q := co.Share(big)
				gate.mu.Lock()
				defer gate.mu.Unlock()
				t.Fatalf("waiting for %s: %v (big job %s: %d slots held, %d tasks queued; %d waiting in all; invoked %v)", what, ctx.Err(), big, h, q, co.Waiting(), gate.order)
			}
			time.Sleep(time.Millisecond)
		}
	}
	big, err := cl.Submit(ctx, "select o_orderpriority, count(*) from orders group by o_orderpriority", &static)
	if err != nil {
		t.Fatal(err)
	}
	<-gate.held
	<-gate.held
	until("the big job's tasks to queue", func() bool { h, q := co.Share(big); return h == 2 && q == 62 })
	for i := range 3 {
		job, err := cl.Submit(ctx, "select count(*) from customer", &static)
		if err != nil {
			t.Fatal(err)
		}
		until(fmt.Sprintf("small job %d to queue", i+1), func() bool { h, q := co.Share(job); return h == 0 && q == 1 })
		small = append(small, job)
	}
	close(gate.release)
	for _, job := range append([]string{big}, small...) {
		js, err := cl.Wait(ctx, job, nil)
		if err != nil {
			t.Fatal(err)
		}
		if js.State != coordinator.StateSucceeded {
			t.Fatalf("job %s: %s %s", job, js.State, js.Error)
		}
	}
	gate.mu.Lock()
	defer gate.mu.Unlock()
	return append([]string(nil), gate.order...), big, small
}

// TestFairShare: three small jobs submitted while a big job's 64 tasks
// wait for the coordinator's two slots. With fair sharing the small
// jobs' first tasks get the first three slots that free (each small job
// holds none, the big job two, then they take turns); without it they
// wait for all 64 of the big stage's tasks (the least input first, and
// the big stage reads fewer bytes than the small jobs' scan of customer). Exact
// orders of admission, with real in-process functions; no timing.
func TestFairShare(t *testing.T) {
	for _, fair := range []bool{true, false} {
		t.Run(fmt.Sprintf("fair=%v", fair), func(t *testing.T) {
			order, big, small := fairShareRun(t, fair)
			bigStage1 := big + "/1"
			firstSmall := -1
			for i, o := range order {
				if o == small[0]+"/0" || o == small[1]+"/0" || o == small[2]+"/0" {
					firstSmall = i
					break
				}
			}
			before := 0 // the big stage's invocations before the first small one
			for _, o := range order[:max(firstSmall, 0)] {
				if o == bigStage1 {
					before++
				}
			}
			scans := 0 // invocations of the big job's first stage
			for _, o := range order {
				if o == big+"/0" {
					scans++
				}
			}
			if fair {
				want := []string{bigStage1, bigStage1, small[0] + "/0", small[1] + "/0", small[2] + "/0"}
				if got := order[scans : scans+5]; fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("fair share: invocations %v, want %v", got, want)
				}
				if before != 2 {
					t.Errorf("fair share: %d of the big stage's invocations before the first small job's, want 2", before)
				}
			} else if before != 64 {
				t.Errorf("without fair share: %d of the big stage's invocations before the first small job's, want 64", before)
			}
			t.Logf("fair share %v: %d of the big stage's 64 invocations before the first small job's", fair, before)
		})
	}
}
