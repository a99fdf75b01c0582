package coordinator

import (
	"container/heap"
	"context"
	"sync"
)

// dispatcher bounds the tasks a coordinator has in flight. When tasks
// wait, a free slot goes, with fair sharing (the default), to the job
// holding the fewest slots among those waiting (max-min fair share of the
// concurrency cap: a job with a few tasks is not queued behind the
// thousands of another), and within a job to the task with the least
// input first. Without it, it goes to the least input first over all
// jobs, first come first served among equals. Small stages (typically the
// build sides of joins) then finish early, so the re-planner sees their
// real sizes before the big stages are far along.
type dispatcher struct {
	// onQueue, when set, is called (without the lock) each time a task
	// starts waiting for a slot: the packer sends its open pack then.
	onQueue func()
	fair    bool

	mu      sync.Mutex
	free    int
	jobs    map[string]*jobSlots // jobs holding or waiting for slots
	waiting int
	seq     uint64
	grants  uint64
}

// jobSlots is one job's share of the dispatcher.
type jobSlots struct {
	held    int
	waiters waitHeap
	granted uint64 // when it was last granted a slot (d.grants); 0: never
}

func newDispatcher(n int, fair bool) *dispatcher {
	return &dispatcher{free: n, fair: fair, jobs: map[string]*jobSlots{}}
}

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

func (d *dispatcher) jobLocked(job string) *jobSlots {
	j := d.jobs[job]
	if j == nil {
		j = &jobSlots{}
		d.jobs[job] = j
	}
	return j
}

// acquire waits for a slot for a task of job; lower prio goes first
// within the job (and across jobs without fair sharing).
func (d *dispatcher) acquire(ctx context.Context, job string, prio int64) error {
	d.mu.Lock()
	j := d.jobLocked(job)
	if d.free > 0 && d.waiting == 0 {
		d.free--
		j.held++
		d.grants++
		j.granted = d.grants
		d.mu.Unlock()
		return nil
	}
	d.seq++
	w := &waiter{prio: prio, seq: d.seq, ready: make(chan struct{})}
	heap.Push(&j.waiters, w)
	d.waiting++
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
			heap.Remove(&j.waiters, w.index)
			d.waiting--
			d.forgetLocked(job, j)
			return ctx.Err()
		}
		// The slot was handed to us as we gave up: pass it on.
		d.releaseLocked(job)
		return ctx.Err()
	}
}

// queued reports whether tasks are waiting for a slot.
func (d *dispatcher) queued() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.waiting > 0
}

// share returns the slots job holds and its tasks waiting for one.
func (d *dispatcher) share(job string) (held, queued int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if j := d.jobs[job]; j != nil {
		return j.held, len(j.waiters)
	}
	return 0, 0
}

// release frees a slot job held.
func (d *dispatcher) release(job string) {
	d.mu.Lock()
	d.releaseLocked(job)
	d.mu.Unlock()
}

func (d *dispatcher) forgetLocked(job string, j *jobSlots) {
	if j.held == 0 && len(j.waiters) == 0 {
		delete(d.jobs, job)
	}
}

func (d *dispatcher) releaseLocked(job string) {
	if j := d.jobs[job]; j != nil {
		j.held--
		d.forgetLocked(job, j)
	}
	if d.waiting == 0 {
		d.free++
		return
	}
	// The next job: the fewest slots held, then the least recently
	// granted (round robin among equals) (fair); or the best head waiter
	// (not fair); ties go to the earliest waiting.
	var next *jobSlots
	for _, j := range d.jobs {
		if len(j.waiters) == 0 {
			continue
		}
		if next == nil || d.before(j, next) {
			next = j
		}
	}
	w := heap.Pop(&next.waiters).(*waiter)
	d.waiting--
	next.held++
	d.grants++
	next.granted = d.grants
	close(w.ready)
}

// before reports whether job a's head waiter goes before job b's.
func (d *dispatcher) before(a, b *jobSlots) bool {
	ha, hb := a.waiters[0], b.waiters[0]
	if d.fair && a.held != b.held {
		return a.held < b.held
	}
	if d.fair && a.granted != b.granted {
		return a.granted < b.granted
	}
	if !d.fair && ha.prio != hb.prio {
		return ha.prio < hb.prio
	}
	return ha.seq < hb.seq
}
