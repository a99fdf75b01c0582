package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/function/redisdb"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
)

// stageTimes keeps, per stage, the durations of its finished tasks (for
// hedging). Task goroutines share it: it is safe for concurrent use.
type stageTimes struct {
	mu       sync.Mutex
	trackers map[int]*stageTracker
}

func newStageTimes() *stageTimes { return &stageTimes{trackers: map[int]*stageTracker{}} }

func (x *stageTimes) tracker(stage int) *stageTracker {
	x.mu.Lock()
	defer x.mu.Unlock()
	tr := x.trackers[stage]
	if tr == nil {
		tr = &stageTracker{}
		x.trackers[stage] = tr
	}
	return tr
}

// stageTracker keeps the durations of a stage's finished tasks, for
// hedging stragglers.
type stageTracker struct {
	mu    sync.Mutex
	tasks int
	done  []time.Duration
}

func (s *stageTracker) setTasks(n int) {
	s.mu.Lock()
	s.tasks = max(s.tasks, n)
	s.mu.Unlock()
}

func (s *stageTracker) add(d time.Duration) {
	s.mu.Lock()
	s.done = append(s.done, d)
	s.mu.Unlock()
}

// hedgeAfter returns how long an attempt may run before a duplicate is
// started: factor times the median duration of the stage's finished
// tasks, at least floor; ok is false until half of the stage's tasks (and
// at least two) finished, as a median of fewer says little.
func (s *stageTracker) hedgeAfter(factor float64, floor time.Duration) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.done)
	if n < 2 || n*2 < s.tasks {
		return 0, false
	}
	ds := append([]time.Duration(nil), s.done...)
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	med := ds[n/2]
	return max(time.Duration(float64(med)*factor), floor), true
}

// attemptOutcome is how one attempt ended.
type attemptOutcome struct {
	attempt int
	res     *function.TaskResult // committed result (this attempt's or the winner's)
	retry   string               // set when another attempt should run
	noCount bool                 // the retry does not spend the task's budget (a lost input)
	lost    string               // the input object found missing or corrupt, to repair before retrying
	timeout bool                 // the retried attempt ran past its deadline
	outage  string               // the retry waits for this service (within the outage budget)
	err     error                // fails the task (and stage)
	took    time.Duration
}

// maxAttemptsTotal bounds the attempts of one task whatever their fate
// (failures, hedges, attempts abandoned by coordinators that died).
func (c *Coordinator) maxAttemptsTotal() int { return 10*c.cfg.MaxAttempts + 100 }

// runTask runs attempts of one task until one commits, the retry budget
// (MaxAttempts failed attempts) is spent, or the error is the user's. An
// attempt running much longer than its stage's median gets a duplicate
// (hedging); the first to commit wins and the others are cancelled. With
// limit > 0 the task takes part in LIMIT early stop: it is not invoked at
// all once the stage has enough rows.
func (c *Coordinator) runTask(ctx context.Context, run *jobRun, st *plan.Stage, sp stagePlan, t int, w taskWork, limit int64) (*function.TaskResult, error) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops attempts still running once the task is decided
	tr := run.times.tracker(st.ID)
	outs := make(chan attemptOutcome, 4)
	// An attempt runs on the platform from when it takes its dispatch
	// slot until it ends, except while it waits for a slot again after a
	// 429 (the platform runs nothing of it then): began says when it
	// starts (or again) and stops running. Only a running attempt is
	// hedged, and its time counts from when it last started.
	type began struct {
		attempt int
		at      time.Time
		running bool
	}
	running := make(chan began, 4)
	live := map[int]time.Time{} // attempts in flight: since when each runs (zero: not running)
	inflight, hedges := 0, 0
	var lastErr string
	lastTimeout := false       // the last failed attempt ran past its deadline
	var runningSince time.Time // start of the oldest attempt running
	oldestRunning := func() time.Time {
		var since time.Time
		for _, at := range live {
			if !at.IsZero() && (since.IsZero() || at.Before(since)) {
				since = at
			}
		}
		return since
	}
	log := c.log.With("job", run.id, "stage", st.ID, "task", t)

	// start opens an attempt and runs it in the background. done is set
	// when there is nothing to run (the task is committed, or failed).
	start := func() (res *function.TaskResult, done bool, err error) {
		var a AttemptStart
		err = run.open(ctx, func(ctx context.Context) (err error) {
			a, err = c.store.Begin(ctx, run.id, run.fence, st.ID, t)
			return err
		})
		if err != nil {
			return nil, true, err
		}
		if a.Committed {
			res, err := c.committedResult(ctx, run, st.ID, t)
			return res, true, err
		}
		if a.Failures >= c.cfg.MaxAttempts || a.Attempt > c.maxAttemptsTotal() {
			if lastErr == "" {
				if m, err := c.store.Task(ctx, run.id, st.ID, t); err == nil {
					lastErr = m.Error
				}
			}
			msg := fmt.Sprintf("stage %d task %d failed after %d attempts: %s", st.ID, t, a.Attempt-1, lastErr)
			_ = c.store.Fail(ctx, run.id, run.fence, st.ID, t, msg, TaskFailed)
			c.metrics.Tasks.WithLabelValues("failed").Inc()
			code := plan.CodeRetriesExhausted
			if lastTimeout {
				code = plan.CodeTaskTimeout
			}
			return nil, true, &JobError{Code: code, Msg: msg}
		}
		inflight++
		live[a.Attempt] = time.Time{}
		go func(attempt int) {
			queued := time.Now()
			sl, err := c.dispatch.take(tctx, run.id, w.bytes)
			if err != nil {
				outs <- attemptOutcome{attempt: attempt, err: err}
				return
			}
			at := time.Now()
			running <- began{attempt, at, true}
			sl.state = func(run bool) {
				select {
				case running <- began{attempt, time.Now(), run}:
				case <-tctx.Done():
				}
			}
			o := c.attempt(tctx, run, st, sp, t, run.repairs.fix(w), limit, attempt, at.Sub(queued), sl, log.With("attempt", attempt))
			sl.release()
			o.attempt, o.took = attempt, time.Since(at)
			if o.lost != "" {
				// Outside the dispatch slot: running the producer needs one.
				if err := c.repair(tctx, run, o.lost, log); err != nil {
					o = attemptOutcome{attempt: attempt, err: err}
				}
			}
			outs <- o
		}(a.Attempt)
		return nil, false, nil
	}

	if res, done, err := start(); done {
		w.arrival.arrive() // committed already, or failed for good: no invocation
		return res, err
	}
	var hedgeTimer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case b := <-running:
			if _, ok := live[b.attempt]; !ok {
				continue // an attempt that already ended
			}
			if b.running {
				live[b.attempt] = b.at
			} else {
				live[b.attempt] = time.Time{} // throttled: waiting for a slot again
			}
			runningSince = oldestRunning()
			hedgeTimer = c.hedgeCheck(tr, runningSince, hedges)
		case <-hedgeTimer:
			hedgeTimer = nil
			after, ok := tr.hedgeAfter(c.cfg.HedgeFactor, c.cfg.HedgeAfter)
			if !ok || time.Since(runningSince) < after {
				hedgeTimer = c.hedgeCheck(tr, runningSince, hedges)
				continue
			}
			if inflight != 1 || runningSince.IsZero() {
				continue // a duplicate runs already, or the attempt waits for a slot (not running)
			}
			hedges++
			c.metrics.Hedges.Inc()
			log.Info("straggler: starting a duplicate attempt", "running", time.Since(runningSince).String(), "threshold", after.String())
			if res, done, err := start(); done {
				return res, err
			}
		case o := <-outs:
			inflight--
			delete(live, o.attempt)
			runningSince = oldestRunning()
			switch {
			case o.res != nil:
				tr.add(o.took)
				run.progressed()
				c.outageOver(run)
				c.metrics.Tasks.WithLabelValues("committed").Inc()
				return o.res, nil
			case o.err != nil:
				if errors.Is(o.err, context.Canceled) && ctx.Err() == nil && inflight > 0 {
					continue // a duplicate was cancelled; the other attempt goes on
				}
				return nil, o.err
			}
			lastErr, lastTimeout = o.retry, o.timeout
			if inflight > 0 {
				continue // another attempt of the task is still running
			}
			runningSince, hedgeTimer = time.Time{}, nil
			switch {
			case o.outage != "":
				c.metrics.Retries.Inc()
				c.outageBackoff(ctx, run)
			case !o.noCount:
				c.metrics.Retries.Inc()
				c.backoff(ctx, o.attempt)
			}
			if res, done, err := start(); done {
				return res, err
			}
		}
	}
}

// hedgeCheck returns when to look again at whether the running attempt is
// a straggler, or nil when hedging is off or was done.
func (c *Coordinator) hedgeCheck(tr *stageTracker, since time.Time, hedges int) <-chan time.Time {
	if c.cfg.HedgeFactor <= 0 || hedges >= 1 || since.IsZero() {
		return nil
	}
	if after, ok := tr.hedgeAfter(c.cfg.HedgeFactor, c.cfg.HedgeAfter); ok {
		return time.After(max(time.Until(since.Add(after)), 10*time.Millisecond))
	}
	// Not enough finished tasks for a median yet: look again later.
	return time.After(max(c.cfg.HedgeAfter/2, 100*time.Millisecond))
}

// attempt runs one attempt of a task while holding a dispatch slot and
// says how it ended: committed (res), to be retried (retry), or failing the
// task (err). An attempt that will never commit has its output deleted.
// waited is how long the attempt waited for its dispatch slot (the queue
// phase of its metrics, with the invocation's overhead); sl is the slot.
func (c *Coordinator) attempt(ctx context.Context, run *jobRun, st *plan.Stage, sp stagePlan, t int, w taskWork,
	limit int64, attempt int, waited time.Duration, sl *slot, log *slog.Logger) attemptOutcome {
	ended := func(o attemptOutcome, label string) attemptOutcome {
		c.metrics.Attempts.WithLabelValues(label).Inc()
		if errors.Is(o.err, ErrStaleFence) {
			c.metrics.StaleFence.Inc()
		}
		return o
	}
	limitKey := redisdb.LimitKey(run.id, st.ID)
	if limit > 0 {
		if n, _ := c.store.rdb.Get(ctx, limitKey).Int64(); n >= limit {
			w.arrival.arrive()
			// The stage already has enough rows: commit an empty output
			// without invoking a function.
			res := &function.TaskResult{Job: run.id, Stage: st.ID, Task: t, Attempt: attempt, Fence: run.fence,
				StoppedEarly: true, NotInvoked: true}
			rj, _ := json.Marshal(res)
			now := time.Now()
			if _, err := c.store.CommitAt(ctx, run.id, run.fence, st.ID, t, attempt, rj, AttemptTimes{Invoked: now, Ended: now}); err != nil {
				return ended(attemptOutcome{err: err}, outcomeStale)
			}
			res, err := c.committedResult(ctx, run, st.ID, t)
			return ended(attemptOutcome{res: res, err: err}, outcomeSkipped)
		}
	}
	prefix := shuffle.SpreadAttemptPrefix(c.cfg.Prefix, c.cfg.KeySpread, run.id, st.ID, t, attempt)
	// The spec's refs are built and encoded within the coordinator's
	// budget of refs in memory at once (specRefs): 168 combining tasks of
	// 115,000 refs each, started together, held 1 GB of refs and 0.4 GB
	// of their encodings at once otherwise.
	weight := min(max(w.refs(), 1), c.specRefs.max)
	if err := c.specRefs.sem.Acquire(ctx, weight); err != nil {
		return ended(attemptOutcome{err: err}, outcomeCancelled)
	}
	encoded := sync.OnceFunc(func() { c.specRefs.sem.Release(weight) })
	defer encoded()
	w.inputs, w.reads = w.specInputs(), nil // this attempt's copy of the work
	deadline := c.taskDeadline(w)
	spec := &function.TaskSpec{
		Version: function.SpecVersion, Job: run.id, Stage: st.ID, Task: t, Attempt: attempt,
		Fence: run.fence, Bucket: c.cfg.Bucket, Prefix: c.cfg.Prefix, PlanKey: sp.key, Plan: sp.body,
		Splits: w.splits, Inputs: w.inputs,
		OutputPrefix:   prefix,
		ShuffleCodec:   c.cfg.ShuffleCodec,
		Deadline:       time.Now().Add(deadline),
		FunctionMemory: c.cfg.FunctionMemory,
	}
	w.inputs = nil // the spec holds them (and drops them once encoded: invoke)
	if w.memory > 0 {
		spec.FunctionMemory = w.memory
	}
	if limit > 0 {
		spec.Limit, spec.LimitKey = limit, limitKey
	}
	began := time.Now()
	times := func() AttemptTimes { return AttemptTimes{Invoked: began, Ended: time.Now()} }
	var packBytes int64 // 0: invoked alone
	if run.graph.Adaptive() && c.packer != nil && spec.FunctionMemory == c.cfg.FunctionMemory {
		// (A pack runs on the configured size: a task sized otherwise
		// goes alone, to a function of its size.)
		if b := specBytes(spec); b <= c.cfg.PackBytes {
			packBytes = max(b, 1)
		}
	}
	if packBytes == 0 {
		w.arrival.arrive()
	}
	if !c.cfg.AdaptiveConcurrency {
		sl = nil // the invoker retries 429s itself, holding the slot
	}
	res, err := c.invoke(withTask(ctx, fmt.Sprintf("%s/%d/%d", run.id, st.ID, t)), run, spec, deadline, packBytes, w.arrival, encoded, sl)
	c.metrics.Invocation.Observe(time.Since(began).Seconds())
	c.chargeAttempt(ctx, run.id, res, time.Since(began), spec.FunctionMemory)
	if err != nil {
		c.discard(prefix)
		if ctx.Err() != nil {
			return ended(attemptOutcome{err: ctx.Err()}, outcomeCancelled)
		}
		label := outcomeInvoke
		if errors.Is(err, context.DeadlineExceeded) {
			label = outcomeTimeout
			err = fmt.Errorf("attempt %d ran past the task deadline (%v): %w", attempt, deadline, err)
		}
		log.Warn("task attempt failed", "err", err)
		if c.withinOutage(ctx, run, functionsDown(err), err.Error()) {
			if err := c.store.FailAt(ctx, run.id, run.fence, st.ID, t, attempt, err.Error(), TaskWaiting, times()); err != nil {
				return ended(attemptOutcome{err: err}, label)
			}
			return ended(attemptOutcome{retry: err.Error(), noCount: true, outage: functionsDown(err)}, label)
		}
		c.metrics.Failures.WithLabelValues(string(plan.ClassTransient)).Inc()
		if err := c.store.FailAt(ctx, run.id, run.fence, st.ID, t, attempt, err.Error(), TaskRetrying, times()); err != nil {
			return ended(attemptOutcome{err: err}, label)
		}
		return ended(attemptOutcome{retry: err.Error(), timeout: label == outcomeTimeout}, label)
	}
	if res.Error != "" {
		c.discard(prefix)
		if ctx.Err() != nil {
			// The attempt was stopped (its task decided, its stage or job
			// cancelled): whatever it reports comes from the stop and is
			// no failure of the task.
			return ended(attemptOutcome{err: ctx.Err()}, outcomeCancelled)
		}
		switch class := resultClass(res); {
		case res.Kind == function.ErrCancelled, res.Kind == function.ErrInputLost:
		case !class.Retryable():
			// The query's fault (or a bug): another attempt fails the
			// same way, so the task fails on this one.
			code := res.Code
			if code == "" {
				code = plan.CodeRuntime // a function that reports no codes
			}
			log.Info("task failed: not retried", "err", res.Error, "code", code, "class", class)
			c.metrics.Failures.WithLabelValues(string(class)).Inc()
			_ = c.store.FailAt(ctx, run.id, run.fence, st.ID, t, attempt, code+": "+res.Error, TaskFailed, times())
			c.metrics.Tasks.WithLabelValues("failed").Inc()
			return ended(attemptOutcome{err: &JobError{Code: code, Msg: fmt.Sprintf("stage %d task %d: %s", st.ID, t, res.Error)}}, outcomeUser)
		}
		switch res.Kind {
		case function.ErrCancelled:
			if ctx.Err() != nil {
				return ended(attemptOutcome{err: ctx.Err()}, outcomeCancelled)
			}
			if cancelled, _ := c.store.Cancelled(ctx, run.id); cancelled {
				return ended(attemptOutcome{err: errCancelled}, outcomeCancelled)
			}
			// Stopped without the job being cancelled (its own deadline):
			// retry like any transient failure.
		case function.ErrInputLost:
			if res.LostKey == "" {
				break // an older function that does not name the object: retry
			}
			log.Warn("task input lost: running its producer again", "err", res.Error, "object", res.LostKey)
			if err := c.store.FailAt(ctx, run.id, run.fence, st.ID, t, attempt, res.Error, TaskInputLost, times()); err != nil {
				return ended(attemptOutcome{err: err}, outcomeInputLost)
			}
			return ended(attemptOutcome{retry: res.Error, noCount: true, lost: res.LostKey}, outcomeInputLost)
		}
		log.Warn("task attempt failed", "err", res.Error, "kind", res.Kind)
		if res.Kind == function.ErrTransient && c.withinOutage(ctx, run, res.Outage, res.Error) {
			if err := c.store.FailAt(ctx, run.id, run.fence, st.ID, t, attempt, res.Error, TaskWaiting, times()); err != nil {
				return ended(attemptOutcome{err: err}, outcomeTransient)
			}
			return ended(attemptOutcome{retry: res.Error, noCount: true, outage: res.Outage}, outcomeTransient)
		}
		c.metrics.Failures.WithLabelValues(string(plan.ClassTransient)).Inc()
		if err := c.store.FailAt(ctx, run.id, run.fence, st.ID, t, attempt, res.Error, TaskRetrying, times()); err != nil {
			return ended(attemptOutcome{err: err}, outcomeTransient)
		}
		return ended(attemptOutcome{retry: res.Error}, outcomeTransient)
	}
	if res.Phases != nil {
		// Queue: the slot wait, and the invocation's round trip not spent
		// in the function (network, cold start); no clocks compared.
		res.Phases.Queue = waited.Seconds() + max(time.Since(began).Seconds()-res.Seconds, 0)
	}
	rj, _ := json.Marshal(res)
	won, err := c.store.CommitAt(ctx, run.id, run.fence, st.ID, t, attempt, rj, times())
	if err != nil {
		return ended(attemptOutcome{err: err}, outcomeStale)
	}
	if !won {
		// Another attempt committed first: this one's output is garbage.
		c.discard(prefix)
		res, err := c.committedResult(ctx, run, st.ID, t)
		return ended(attemptOutcome{res: res, err: err}, outcomeLostRace)
	}
	return ended(attemptOutcome{res: res}, outcomeCommitted)
}

// resultClass is the class of a failed task result: its code's, or for a
// function that reports no code, what its kind says.
func resultClass(res *function.TaskResult) plan.Class {
	if res.Code != "" {
		return plan.ClassOf(res.Code)
	}
	if res.Kind == function.ErrUser {
		return plan.ClassUser
	}
	return plan.ClassTransient
}

// discard deletes the objects of an attempt that will never be committed,
// in the background and best effort (what it misses, the job's GC takes).
func (c *Coordinator) discard(attemptPrefix string) {
	// Not tracked by c.wg: task goroutines may still end after Close.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.bucket.DeletePrefix(ctx, attemptPrefix); err == nil {
			c.metrics.GCObjects.Inc()
		}
	}()
}

func (c *Coordinator) committedResult(ctx context.Context, run *jobRun, stage, t int) (*function.TaskResult, error) {
	m, err := c.store.Task(ctx, run.id, stage, t)
	if err != nil {
		return nil, err
	}
	res, err := m.Result()
	if err != nil {
		return nil, fmt.Errorf("task %d/%d: %w", stage, t, err)
	}
	return res, nil
}

// A task of packBytes > 0 input bytes goes through the packer and may share
// its invocation with other small tasks (the result then says
// SharedInvocation unless it is the member that counts the invocation).
//
// With a dispatch slot sl (AdaptiveConcurrency), an invocation the
// platform throttles (ErrThrottled: a 429, which the invoker returns at
// once) is no failure of the attempt: the slot goes back to the dispatcher,
// which cuts its limit, and the same attempt is invoked again once it has
// a slot, its deadline counted from then. Only an attempt throttled
// throttleQuiet times in a row while no task of the job commits for the
// outage budget fails (with ErrThrottled, as before the limit: a platform
// that runs nothing at all, e.g. a function with no concurrency).
func (c *Coordinator) invoke(ctx context.Context, run *jobRun, spec *function.TaskSpec, deadline time.Duration, packBytes int64, a *arrival, encoded func(), sl *slot) (*function.TaskResult, error) {
	enc, err := spec.EncodeParts()
	if err != nil {
		return nil, err
	}
	// The encoded spec is what travels: a reader of 10,000 objects holds
	// their refs (600 KB) for the invocation's length otherwise.
	spec.Splits, spec.Inputs = nil, nil
	encoded()
	var out []byte
	shared := false
	for throttles := 0; ; throttles++ {
		ictx, cancel := context.WithTimeout(withFunctionMemory(ctx, spec.FunctionMemory), deadline)
		if sl != nil {
			ictx = withThrottleReturn(ictx)
		}
		if packBytes > 0 {
			out, shared, err = c.packer.invoke(ictx, enc.Body(), packBytes, time.Now().Add(deadline), a)
		} else {
			out, err = c.invoker.Invoke(ictx, enc.Body())
		}
		if err == nil && ictx.Err() != nil && ctx.Err() == nil {
			err = ictx.Err() // an invoker that returned a result past the deadline
		}
		cancel()
		if sl == nil || ctx.Err() != nil || !errors.Is(err, ErrThrottled) {
			if err == nil && !shared {
				// The platform ran an invocation: the limit grows once
				// for it, not once per member of a pack (the member
				// that counts the invocation reports it).
				sl.ran()
			}
			break
		}
		c.metrics.Throttled.Inc()
		if throttles+1 >= throttleQuiet && !c.withinOutage(ctx, run, "functions", err.Error()) {
			break // throttled without end: fails as any invocation error
		}
		if err := sl.throttled(ctx, c.throttleWait(err, throttles)); err != nil {
			return nil, fmt.Errorf("invoke: waiting for a function slot after a 429: %w", err)
		}
		// The wait was not the attempt's: its deadline starts again (the
		// spec's head encoded again, its inputs as they were).
		spec.Deadline = time.Now().Add(deadline)
		if err := enc.SetDeadline(spec.Deadline); err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, fmt.Errorf("invoke: %w", err)
	}
	var res function.TaskResult
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("decode task result: %w", err)
	}
	if res.Job != spec.Job || res.Stage != spec.Stage || res.Task != spec.Task || res.Attempt != spec.Attempt || res.Fence != spec.Fence {
		return nil, fmt.Errorf("task result is for %s/%d/%d/a%d (fence %d), not the attempt invoked",
			res.Job, res.Stage, res.Task, res.Attempt, res.Fence)
	}
	res.SharedInvocation = shared
	return &res, nil
}

// throttleQuiet is how many times in a row an attempt is throttled before
// the job's outage clock is asked whether the functions are down
// (outage.go): it then shows "waiting for functions" and, past the outage
// budget without a commit, the attempt fails.
const throttleQuiet = 3

// throttleWait is how long an attempt throttled for the n-th time in a row
// (from 0) waits before it queues for a slot again: the platform's
// Retry-After when it sent one; none the first time (the limit was just
// cut, so a slot comes back only as invocations end, when the platform
// has room); then RetryBackoff doubling, up to 20 times it, with jitter.
func (c *Coordinator) throttleWait(err error, n int) time.Duration {
	base := max(c.cfg.RetryBackoff, time.Millisecond)
	var te *ThrottledError
	if errors.As(err, &te) && te.RetryAfter > 0 {
		return min(te.RetryAfter, 20*base)
	}
	if n == 0 {
		return 0
	}
	d := min(base<<min(n-1, 10), 20*base)
	return d/2 + rand.N(d/2+1)
}

// specBytes is the input a task reads: its table splits and shuffle
// objects.
func specBytes(spec *function.TaskSpec) int64 {
	var n int64
	for _, sp := range spec.Splits {
		n += sp.Size
	}
	for _, in := range spec.Inputs {
		for _, o := range in.Objects {
			n += o.Bytes
		}
		if in.Refs != nil && in.Objects == nil {
			for i := range in.Refs.N {
				n += in.Refs.Ref(i).Bytes
			}
		}
	}
	return n
}

func (c *Coordinator) backoff(ctx context.Context, attempt int) {
	d := c.cfg.RetryBackoff << (min(attempt, 20) - 1)
	if d > 10*time.Second || d <= 0 {
		d = 10 * time.Second
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// PlanKey is the object key of a stage's plan fragment for a round. The
// fence is part of it: a fragment is immutable once written (functions
// cache it by key), and two coordinators (a stale one and its successor)
// may plan the same stage in the same round differently.
func PlanKey(prefix, job string, stage, round int, fence int64) string {
	return joinKey(prefix, "jobs/"+job+"/plans/"+strconv.Itoa(stage)+"-r"+strconv.Itoa(round)+"-f"+strconv.FormatInt(fence, 10)+".json")
}

// resumable returns the stages this driver found running when it loaded
// the job and has not restarted yet (once: the loop starts them now).
func (c *Coordinator) resumable(run *jobRun) []int {
	var out []int
	for _, id := range run.resume {
		_, done := run.state.Done[id]
		if !done && !run.state.Skipped(id) {
			out = append(out, id)
		}
	}
	run.resume = nil
	return out
}

// workPrint fingerprints the tasks of a stage (what each reads).
func workPrint(work []taskWork) string {
	h := fnv.New64a()
	for t, w := range work {
		fmt.Fprintf(h, "t%d:", t)
		for _, sp := range w.splits {
			fmt.Fprintf(h, "s%s/%d/%v;", sp.Key, sp.Size, sp.RowGroups)
		}
		for _, in := range w.inputs {
			fmt.Fprintf(h, "i%d:", in.Stage)
			for _, o := range in.Objects {
				h.Write([]byte(o.Key)) // (as Fprintf "%s,", cheaper)
				h.Write([]byte{','})
			}
		}
		// A hash-exchange read prints its partitions and its output's
		// digest: its refs are tasks x partitions of the upstream stage
		// (19 M for 10,000 x 2,000), too many to build to print them.
		for i := range w.reads {
			w.reads[i].print(h)
		}
	}
	return strconv.Itoa(len(work)) + "-" + strconv.FormatUint(h.Sum64(), 16)
}

// recordWork records the fingerprint of a stage's tasks as it starts. A
// stage resumed after a takeover must be split into the same tasks as when
// it started, or its committed tasks would not fit the others (another
// coordinator with other settings, a table changed in between): when the
// fingerprints differ, its committed tasks are dropped and the whole stage
// runs again.
func (c *Coordinator) recordWork(ctx context.Context, run *jobRun, stage int, work []taskWork, resumed bool) error {
	fp := workPrint(work)
	if resumed {
		sm, err := c.store.Stage(ctx, run.id, stage)
		if err != nil {
			return err
		}
		if sm.Work == fp {
			return nil
		}
		n := sm.Tasks
		c.log.Warn("a resumed stage plans other tasks than when it started: running all of it again",
			"job", run.id, "stage", stage, "tasks_then", n, "tasks_now", len(work))
		for t := 0; t < n; t++ {
			if err := c.store.Reopen(ctx, run.id, run.fence, stage, t); err != nil {
				return err
			}
		}
	}
	return c.store.SetStage(ctx, run.id, run.fence, stage, "work", fp)
}
