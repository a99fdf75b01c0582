package coordinator

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// grantOrder fills a dispatcher of slots slots with the big job's tasks,
// queues big tasks more of the big job and then small tasks of each small
// job, and releases the big job's slots one by one: it returns the jobs
// in the order the queued tasks were granted a slot.
func grantOrder(t *testing.T, fair bool, slots, big int, small []string, perSmall int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := newDispatcher(slots, fair)
	for range slots {
		if err := d.acquire(ctx, "big", 100); err != nil {
			t.Fatal(err)
		}
	}
	granted := make(chan string, big+len(small)*perSmall)
	queue := func(job string, prio int64) {
		before := d.waitingCount()
		go func() {
			if err := d.acquire(ctx, job, prio); err != nil {
				t.Error(err)
				return
			}
			granted <- job
		}()
		for d.waitingCount() == before { // queued in this order
			time.Sleep(100 * time.Microsecond)
		}
	}
	for range big {
		queue("big", 100)
	}
	for _, j := range small {
		for range perSmall {
			queue(j, 100)
		}
	}
	var order []string
	for range big + len(small)*perSmall {
		// The big job releases one slot; the next queued task gets it
		// and keeps it.
		d.release("big")
		order = append(order, <-granted)
	}
	return order
}

func (d *dispatcher) waitingCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.waiting
}

// TestDispatcherFairShare: with fair sharing, the small jobs' tasks queued
// behind the big job's get the freed slots first (each holds fewer), one
// job after another while they hold fewer than the big job; without it,
// they wait for every big task queued before them.
func TestDispatcherFairShare(t *testing.T) {
	small := []string{"s1", "s2", "s3"}
	fair := fmt.Sprint(grantOrder(t, true, 4, 5, small, 2))
	// Every grant goes to the job holding the fewest slots, the earliest
	// queued among equals: s1, s2 and s3 (holding none) take the first
	// three freed slots while the big job falls from 4 to 1 held; then
	// every job holds one, and at each release the big job (its tasks
	// queued first) is back to the fewest or tied, so its five run; the
	// small jobs' second tasks come last. Each small job's first task ran
	// before any of the big job's queued ones.
	if want := "[s1 s2 s3 big big big big big s1 s2 s3]"; fair != want {
		t.Errorf("fair share granted %s, want %s", fair, want)
	}
	fifo := fmt.Sprint(grantOrder(t, false, 4, 5, small, 2))
	if want := "[big big big big big s1 s1 s2 s2 s3 s3]"; fifo != want {
		t.Errorf("without fair share granted %s, want %s", fifo, want)
	}
}
