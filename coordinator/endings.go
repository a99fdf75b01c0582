package coordinator

import "sync"

// endings tells the API's long-polls of a job that this coordinator has
// just recorded its end, so that a client waiting for it hears at once
// instead of at its next look at Redis (every statusRecheck, 20 ms: half
// of that on average was a tenth of a trivial query's wall time). A job
// driven by another coordinator is still seen by the polls.
type endings struct {
	mu      sync.Mutex
	waiters map[string]*ending
}

type ending struct {
	ch chan struct{} // closed when the job ended
	n  int           // waiters holding it
}

// wait returns a channel closed once ended(job) is called, and the
// function that releases it (every caller of wait calls it, once).
func (e *endings) wait(job string) (<-chan struct{}, func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.waiters == nil {
		e.waiters = map[string]*ending{}
	}
	w := e.waiters[job]
	if w == nil {
		w = &ending{ch: make(chan struct{})}
		e.waiters[job] = w
	}
	w.n++
	return w.ch, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		w.n--
		if w.n == 0 && e.waiters[job] == w {
			delete(e.waiters, job)
		}
	}
}

// ended wakes the waiters of job.
func (e *endings) ended(job string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if w := e.waiters[job]; w != nil {
		close(w.ch)
		delete(e.waiters, job)
	}
}
