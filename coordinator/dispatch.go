package coordinator

import (
	"container/heap"
	"context"
	"sync"
)

// dispatcher bounds the tasks a coordinator has in flight and, when tasks
// wait, hands free slots to the stage with the least input first. Small
// stages (typically the build sides of joins) then finish early, so the
// re-planner sees their real sizes before the big stages are far along.
type dispatcher struct {
	// onQueue, when set, is called (without the lock) each time a task
	// starts waiting for a slot: the packer sends its open pack then.
	onQueue func()

	mu      sync.Mutex
	free    int
	waiters waitHeap
	seq     uint64
}

func newDispatcher(n int) *dispatcher { return &dispatcher{free: n} }

type waiter struct {
	prio  int64
	seq   uint64
	ready chan struct{}
	index int
}

type waitHeap []*waiter

func (h waitHeap) Len() int { return len(h) }
func (h waitHeap) Less(i, j int) bool {
	if h[i].prio != h[j].prio {
		return h[i].prio < h[j].prio
	}
	return h[i].seq < h[j].seq
}
func (h waitHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *waitHeap) Push(x any)   { w := x.(*waiter); w.index = len(*h); *h = append(*h, w) }
func (h *waitHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	*h = old[:len(old)-1]
	w.index = -1
	return w
}

// acquire waits for a slot; lower prio goes first.
func (d *dispatcher) acquire(ctx context.Context, prio int64) error {
	d.mu.Lock()
	if d.free > 0 && len(d.waiters) == 0 {
		d.free--
		d.mu.Unlock()
		return nil
	}
	d.seq++
	w := &waiter{prio: prio, seq: d.seq, ready: make(chan struct{})}
	heap.Push(&d.waiters, w)
	d.mu.Unlock()
	if d.onQueue != nil {
		d.onQueue()
	}
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		d.mu.Lock()
		defer d.mu.Unlock()
		if w.index >= 0 {
			heap.Remove(&d.waiters, w.index)
			return ctx.Err()
		}
		// The slot was handed to us as we gave up: pass it on.
		d.releaseLocked()
		return ctx.Err()
	}
}

// queued reports whether tasks are waiting for a slot.
func (d *dispatcher) queued() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.waiters) > 0
}

// release frees a slot.
func (d *dispatcher) release() {
	d.mu.Lock()
	d.releaseLocked()
	d.mu.Unlock()
}

func (d *dispatcher) releaseLocked() {
	if len(d.waiters) > 0 {
		w := heap.Pop(&d.waiters).(*waiter)
		close(w.ready)
		return
	}
	d.free++
}
