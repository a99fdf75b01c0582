package coordinator

import (
	"container/heap"
	"context"
	"log/slog"
	"math"
	"sync"
	"time"
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
//
// The slots in use are bounded by an effective limit (aimdLimit) that
// follows the platform's real concurrency: it shrinks when an invocation
// is throttled (429) and grows back to the configured slots as
// invocations run (limit.go; slot.throttled, slot.ran).
type dispatcher struct {
	// onQueue, when set, is called (without the lock) each time a task
	// starts waiting for a slot: the packer sends its open pack then.
	onQueue func()
	fair    bool
	// observe, when set, is called under the lock with the effective
	// limit when it may have changed.
	observe func(limit int)
	// log, when set, gets a line when throttling cuts the limit (at most
	// one per logEvery, with the 429s since the last) and when the limit
	// is back at the configured slots.
	log      *slog.Logger
	logEvery time.Duration

	mu        sync.Mutex
	lim       aimdLimit
	inUse     int
	jobs      map[string]*jobSlots // jobs holding or waiting for slots
	waiting   int
	seq       uint64
	grants    uint64
	throttles int64     // 429s reported
	logged    time.Time // last throttling line
	unlogged  int64     // 429s since it
	reduced   bool      // a throttling line was written since the limit was last at its ceiling
}

// jobSlots is one job's share of the dispatcher.
type jobSlots struct {
	held    int
	waiters waitHeap
	granted uint64 // when it was last granted a slot (d.grants); 0: never
}

func newDispatcher(n int, fair bool) *dispatcher {
	return &dispatcher{lim: newAIMDLimit(n, limitFloor), fair: fair, jobs: map[string]*jobSlots{}, logEvery: 10 * time.Second}
}

type waiter struct {
	prio  int64
	seq   uint64
	ready chan struct{}
	index int
	epoch uint64 // the limit's epoch when the slot was granted
}

// slot is a dispatch slot one task attempt holds.
type slot struct {
	d     *dispatcher
	job   string
	epoch uint64 // the limit's epoch when it was granted
	held  bool
	// state, when set, is told when the attempt holding the slot stops
	// running (false: throttled, it gave the slot back and waits) and
	// runs again (true: it has a slot again), for hedging.
	state func(running bool)
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
	_, err := d.take(ctx, job, prio)
	return err
}

// take waits for a slot for a task of job, as acquire, and returns it.
func (d *dispatcher) take(ctx context.Context, job string, prio int64) (*slot, error) {
	epoch, err := d.wait(ctx, job, prio)
	if err != nil {
		return nil, err
	}
	return &slot{d: d, job: job, epoch: epoch, held: true}, nil
}

func (d *dispatcher) wait(ctx context.Context, job string, prio int64) (uint64, error) {
	d.mu.Lock()
	j := d.jobLocked(job)
	if d.inUse < d.lim.cur() && d.waiting == 0 {
		d.inUse++
		j.held++
		d.grants++
		j.granted = d.grants
		epoch := d.lim.epoch
		d.mu.Unlock()
		return epoch, nil
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
		return w.epoch, nil
	case <-ctx.Done():
		d.mu.Lock()
		defer d.mu.Unlock()
		if w.index >= 0 {
			heap.Remove(&j.waiters, w.index)
			d.waiting--
			d.forgetLocked(job, j)
			return 0, ctx.Err()
		}
		// The slot was handed to us as we gave up: pass it on.
		d.releaseLocked(job)
		return 0, ctx.Err()
	}
}

// release gives the slot back (once; nil-safe).
func (s *slot) release() {
	if s == nil || !s.held {
		return
	}
	s.held = false
	s.d.release(s.job)
}

// ran records that the platform ran an invocation sent on this slot: the
// limit grows toward the configured slots (aimdLimit.ran), and a task
// waiting gets the slot it adds.
func (s *slot) ran() {
	if s == nil {
		return
	}
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lim.ran(d.inUse, d.waiting > 0) {
		d.changedLocked()
		d.grantLocked()
	}
}

// throttled records that the platform refused an invocation sent on this
// slot (429): the limit is cut (once per epoch), the slot is given back,
// and after wait the attempt takes a slot again, ahead of its job's other
// waiting tasks (it was dispatched before them). Waiting for the slot is
// not a failure: it ends only with ctx.
func (s *slot) throttled(ctx context.Context, wait time.Duration) error {
	d := s.d
	d.mu.Lock()
	d.throttles++
	d.unlogged++
	cut := d.lim.throttled(s.epoch)
	if cut {
		d.logCutLocked()
	}
	d.changedLocked()
	if s.held {
		s.held = false
		d.releaseLocked(s.job)
	}
	d.mu.Unlock()
	if s.state != nil {
		s.state(false)
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	epoch, err := d.wait(ctx, s.job, math.MinInt64)
	if err != nil {
		return err
	}
	s.epoch, s.held = epoch, true
	if s.state != nil {
		s.state(true)
	}
	return nil
}

// changedLocked reports the limit to observe, and logs its
// return to the configured slots.
func (d *dispatcher) changedLocked() {
	if d.observe != nil {
		d.observe(d.lim.cur())
	}
	if d.reduced && d.lim.cur() >= d.lim.ceiling && d.log != nil {
		d.reduced = false
		d.log.Info("function concurrency back at its configured slots", "slots", d.lim.ceiling, "throttled_total", d.throttles)
	}
}

// logCutLocked logs a cut of the limit, at most once per logEvery.
func (d *dispatcher) logCutLocked() {
	if d.log == nil {
		return
	}
	now := time.Now()
	if !d.logged.IsZero() && now.Sub(d.logged) < d.logEvery {
		return
	}
	d.log.Warn("functions throttled (429): fewer invocations in flight", "limit", d.lim.cur(), "slots", d.lim.ceiling,
		"in_flight", d.inUse, "throttled", d.unlogged, "throttled_total", d.throttles)
	d.logged, d.unlogged, d.reduced = now, 0, true
}

// limit returns the effective limit and the 429s reported so far.
func (d *dispatcher) limit() (limit int, throttled int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lim.cur(), d.throttles
}

// limitLow returns the lowest effective limit since its last call.
func (d *dispatcher) limitLow() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lim.takeLow()
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
	d.inUse--
	d.grantLocked()
}

// grantLocked hands free slots (under the effective limit) to waiters.
func (d *dispatcher) grantLocked() {
	for d.waiting > 0 && d.inUse < d.lim.cur() {
		d.grantOneLocked()
	}
}

func (d *dispatcher) grantOneLocked() {
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
	d.inUse++
	w.epoch = d.lim.epoch
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
