package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// packFixture returns a bucket holding the plan of a stage that reads an
// empty exchange, and the encoded spec of a task of it (job, task).
func packFixture(t *testing.T) (*objstore.Mem, func(job string, task int) []byte) {
	t.Helper()
	mem := objstore.NewMem("t")
	schema := plan.Schema{{Name: "x", Type: plan.Int64Type}}
	st := plan.Stage{ID: 1, Root: &plan.Node{Kind: plan.KindExchange, Stage: 0, Schema: schema},
		Output: plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, Inputs: []int{0}}
	body, _ := json.Marshal(st)
	if err := mem.Put(context.Background(), "plan.json", body); err != nil {
		t.Fatal(err)
	}
	return mem, func(job string, task int) []byte {
		b, _ := (&function.TaskSpec{Version: function.SpecVersion, Job: job, Stage: 1, Task: task, Attempt: 1, PlanKey: "plan.json",
			Inputs: []function.Input{{Stage: 0}}, OutputPrefix: shuffle.AttemptPrefix("", job, 1, task, 1)}).Encode()
		return b
	}
}

// TestPacker sends tasks through the packer to a real function pool and
// checks how many invocations they cost, that each gets its own result,
// and that exactly one member of a pack counts the invocation.
func TestPacker(t *testing.T) {
	ctx := context.Background()
	mem, spec := packFixture(t)
	for ci, tc := range []struct {
		name      string
		announce  int     // tasks announced before they are sent
		bytes     []int64 // input bytes of each task sent (0: it arrives without invoking)
		max       int64
		wantCalls int64
	}{
		{name: "announced tasks share one invocation", announce: 3, bytes: []int64{10, 10, 10}, max: 100, wantCalls: 1},
		{name: "a full pack closes, the rest goes in the next", announce: 3, bytes: []int64{60, 60, 60}, max: 100, wantCalls: 3},
		{name: "an announced task that needs no invocation does not hold the pack", announce: 3, bytes: []int64{10, 0, 10}, max: 100, wantCalls: 1},
		{name: "unannounced tasks go alone", bytes: []int64{10, 10}, max: 100, wantCalls: 2},
	} {
		job := fmt.Sprintf("j%d", ci) // a job per case: attempts never overwrite each other
		t.Run(tc.name, func(t *testing.T) {
			pool := function.NewPool(function.NewRuntime(mem, nil, nil), 4)
			p := newPacker(ctx, pool, tc.max)
			arrivals := p.expect(tc.announce)
			var wg sync.WaitGroup
			var mu sync.Mutex
			counted := 0
			for i, b := range tc.bytes {
				var a *arrival
				if i < len(arrivals) {
					a = arrivals[i]
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					if b == 0 {
						a.arrive()
						return
					}
					if a == nil {
						// Unannounced: sent one after the other.
						mu.Lock()
						defer mu.Unlock()
					}
					out, shared, err := p.invoke(ctx, spec(job, i), b, time.Now().Add(time.Minute), a)
					if err != nil {
						t.Errorf("task %d: %v", i, err)
						return
					}
					var res function.TaskResult
					if err := json.Unmarshal(out, &res); err != nil || res.Error != "" || res.Task != i {
						t.Errorf("task %d: result for task %d, error %q %v", i, res.Task, res.Error, err)
					}
					if a != nil {
						mu.Lock()
						defer mu.Unlock()
					}
					if !shared {
						counted++
					}
				}()
			}
			wg.Wait()
			if got := pool.Invocations(); got != tc.wantCalls {
				t.Errorf("%d invocations, want %d", got, tc.wantCalls)
			}
			if int64(counted) != tc.wantCalls {
				t.Errorf("%d results count an invocation, want %d", counted, tc.wantCalls)
			}
		})
	}
}

// TestPackerSendsWhenSlotsQueue: a pack waiting for announced tasks is
// sent as soon as a task queues for a function slot (those tasks cannot
// arrive while the pack's members hold the slots). With a window of an
// hour, only that rule lets the first task finish.
func TestPackerSendsWhenSlotsQueue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mem, spec := packFixture(t)
	pool := function.NewPool(function.NewRuntime(mem, nil, nil), 1)
	d := newDispatcher(1, true)
	p := newPacker(ctx, pool, 1<<20)
	p.window = time.Hour
	p.queued, d.onQueue = d.queued, p.flush
	arrivals := p.expect(2)
	run := func(task int) error {
		if err := d.acquire(ctx, "q", 0); err != nil {
			return err
		}
		defer d.release("q")
		_, _, err := p.invoke(ctx, spec("q", task), 10, time.Now().Add(time.Minute), arrivals[task])
		return err
	}
	first := make(chan error, 1)
	go func() { first <- run(0) }()
	// Task 0 holds the one slot and waits in the pack for task 1, which
	// queues for the slot: the pack must go.
	for !p.hasOpenPack() {
		time.Sleep(time.Millisecond)
	}
	second := make(chan error, 1)
	go func() { second <- run(1) }()
	for _, ch := range []chan error{first, second} {
		if err := <-ch; err != nil {
			t.Fatalf("a task did not finish: %v (the pack waited for a task queued behind it)", err)
		}
	}
	if got := pool.Invocations(); got != 2 {
		t.Errorf("%d invocations, want 2 (each task alone)", got)
	}
}
