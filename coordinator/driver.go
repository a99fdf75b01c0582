package coordinator

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluicedb/sluice/planner/adaptive"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// JobError is a job's failure with its registry code (plan.Codes), whose
// class says whose fault it was.
type JobError struct {
	Code string // "" when the failure has no code
	Msg  string
}

func (e *JobError) Error() string {
	if e.Code == "" || strings.HasPrefix(e.Msg, e.Code+":") {
		return e.Msg
	}
	return e.Code + ": " + e.Msg
}

// ErrorCode makes plan.CodeOf see the code.
func (e *JobError) ErrorCode() string { return e.Code }

// jobRun is the in-memory view of one job while this coordinator drives it.
// All of it is rebuilt from Redis when another coordinator takes over.
type jobRun struct {
	id       string
	fence    int64
	adaptive bool
	graph    adaptive.ExecutionGraph
	round    int
	state    adaptive.State
	outputs  map[int]*stageOutput
	// resume lists stages that were running when this driver loaded the
	// job (another coordinator died or lost the lease): they restart first,
	// with the task groups they started with; their committed tasks are
	// adopted, not run again.
	resume []int
	// Shared with task goroutines (the rest is the loop goroutine's):
	times   *stageTimes      // task durations per stage, for hedging
	repairs *repairState     // lost shuffle objects and their replacements
	workReq chan workRequest // asks the loop for the work of a finished stage's task (to run it again)
	outage  *outageClock     // since when the job's attempts meet an infrastructure outage
	opens   chan struct{}    // one token per attempt being opened (task_begin in flight): at most maxOpening
	// scans caches the files each scan stage reads (loop goroutine only).
	scans map[int]*scanInput
	// scheduling collects the loop's notes for the next round record
	// (loop goroutine only).
	scheduling []string
	// held is the job record's "held" field as last written: the stages
	// held for a runtime filter (loop goroutine only).
	held string
	// progress is when a task last committed (or the drive began), in
	// Unix nanoseconds: watchStall looks at the store only after a quiet
	// spell.
	progress atomic.Int64
}

// maxOpening bounds the task attempts one job opens at once: its
// task_begin round trips in flight. A stage starts a goroutine per task
// and each opens its first attempt at once; unbounded, a stage of 10,000
// tasks put about as many commands at once on the process's one go-redis
// client (10,680 round trips in flight against a pool of 1,064, measured
// in the simulation), and every other caller queued behind them: other
// jobs' drivers and tasks (their opens, commits and stage records). In
// `sluice sim`'s mix (one 10,000-task scan beside 20 small jobs, x100)
// that queue became minutes of the small jobs' simulated latency, and how
// long it lasted decided whether fair sharing showed any benefit
// (docs/architecture.md, Scale). An open takes about a round trip, so 64
// at once still feed the dispatcher far faster than functions run, and
// keep the pool's queue short for everyone else.
const maxOpening = 64

// open runs begin, which opens one attempt of a task (a task_begin round
// trip), once fewer than cap(r.opens) opens of the job are in flight, and
// returns its error. Waiting ends with ctx, and a ctx done by the time
// its turn comes opens nothing. A run without opens (nil) opens at once.
// Safe for concurrent use.
func (r *jobRun) open(ctx context.Context, begin func(context.Context) error) error {
	if r.opens != nil {
		select {
		case r.opens <- struct{}{}:
		case <-ctx.Done():
			return fmt.Errorf("waiting to open an attempt: %w", ctx.Err())
		}
		defer func() { <-r.opens }()
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("waiting to open an attempt: %w", err) // ended while it waited: open nothing
		}
	}
	return begin(ctx)
}

// Drive runs job to completion from whatever state Redis holds. It returns
// nil without doing anything when another coordinator holds the job.
func (c *Coordinator) Drive(ctx context.Context, job string) error {
	if !c.claim(job) {
		return nil // this coordinator drives it already
	}
	defer c.unclaim(job)
	fence, ok, err := c.store.Acquire(ctx, job, c.cfg.Owner, c.cfg.LeaseTTL)
	if err != nil || !ok {
		return err
	}
	c.metrics.JobsDriving.Inc()
	defer c.metrics.JobsDriving.Dec()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer c.store.Release(context.WithoutCancel(ctx), job, c.cfg.Owner)
	var retake atomic.Bool
	go c.renew(ctx, cancel, job, fence, &retake)

	// The driver's own requests (plans, specs by reference, LISTs) count
	// to the job's cost; in-process functions count their own.
	var s3 objstore.Counter
	ctx = objstore.WithCounter(ctx, &s3)
	var charged objstore.RequestStats
	charge := func() { // what the driver requested since the last charge
		now := s3.Snapshot()
		c.chargeDriver(ctx, job, now.Sub(charged))
		charged = now
	}
	defer charge()

	log := c.log.With("job", job)
	if err := c.admitJob(ctx, job, fence); err != nil {
		if errors.Is(err, errCancelled) {
			log.Info("queued job cancelled")
			return c.finish(ctx, &jobRun{id: job, fence: fence}, StateCancelled, errCancelled)
		}
		return err
	}
	run, err := c.load(ctx, job, fence)
	if err != nil {
		if errors.Is(err, errCorruptRecord) {
			// No coordinator can drive this record: left running, every
			// recovery would take it, fail again and give it back, a job
			// stuck forever that its client waits on in silence.
			log.Error("job record cannot be loaded: failing the job", "err", err)
			return c.finish(ctx, &jobRun{id: job, fence: fence}, StateFailed, plan.WithCode(plan.CodeInternal, err))
		}
		return err
	}
	if err := c.store.SetJob(ctx, job, fence, "owner", c.cfg.Owner); err != nil {
		return err
	}
	run.progressed()
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); c.watchStall(wctx, run) }()
	err = c.loop(ctx, run)
	stopWatch()
	<-watched // its field is gone before the job's end is recorded
	// The job's cost is whole before its end is recorded: a client that
	// hears of the end (at once, through endings) reads it complete.
	charge()
	switch {
	case err == nil:
		log.Info("job succeeded")
		return c.finish(ctx, run, StateSucceeded, nil)
	case errors.Is(err, errCancelled):
		log.Info("job cancelled")
		return c.finish(ctx, run, StateCancelled, errCancelled)
	case errors.Is(err, ErrStaleFence), errors.Is(err, ErrRedisUnavailable), ctx.Err() != nil:
		if retake.Load() {
			return errRetake
		}
		if errors.Is(err, ErrStaleFence) {
			c.metrics.StaleFence.Inc()
		}
		return err // another coordinator carries on (or this one, once Redis is back)
	default:
		code := plan.CodeOf(err)
		level := slog.LevelWarn
		if cl := plan.ClassOf(code); cl == plan.ClassUser || cl == plan.ClassUnsupported {
			level = slog.LevelInfo // the query's fault: its user is told, operators need not be
		}
		log.Log(ctx, level, "job failed", "err", err, "code", code, "class", plan.ClassOf(code))
		return c.finish(ctx, run, StateFailed, err)
	}
}

var errCancelled = errors.New("cancelled by user")

// errCorruptRecord marks a job record in Redis that does not decode.
var errCorruptRecord = errors.New("corrupt job record")

// errRetake: the driver's lease expired (a Redis outage longer than the
// lease) and this coordinator took it again, with a new fence: the drive
// starts over from Redis.
var errRetake = errors.New("lease taken again: driving the job anew")

// finish records the job's terminal state; cause is nil on success. A
// failed job keeps its error's code and class for the API.
func (c *Coordinator) finish(ctx context.Context, run *jobRun, state JobState, cause error) error {
	var msg, code, class string
	if cause != nil {
		msg = cause.Error()
	}
	if state == StateFailed {
		code = plan.CodeOf(cause)
		class = string(plan.ClassOf(code))
	}
	err := c.store.FinishJob(context.WithoutCancel(ctx), run.id, run.fence, state, c.cfg.RecordRetention,
		"error", msg, "code", code, "class", class, "finished", time.Now().UTC().Format(time.RFC3339Nano))
	if err == nil {
		c.endings.ended(run.id)
		c.metrics.JobsFinished.WithLabelValues(string(state)).Inc()
		if state == StateFailed {
			c.metrics.JobFailures.WithLabelValues(class).Inc()
		}
	}
	return err
}

// renew keeps the lease alive; losing it cancels the drive. The lease is
// lost when another coordinator holds it, when the fence moved on (the
// lease expired, during a Redis outage say, and was taken again, even by
// this coordinator: work in flight carries the old fence), or when the
// job's record vanished from Redis.
func (c *Coordinator) renew(ctx context.Context, cancel context.CancelFunc, job string, fence int64, retake *atomic.Bool) {
	t := time.NewTicker(c.cfg.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f, ok, err := c.store.Acquire(ctx, job, c.cfg.Owner, c.cfg.LeaseTTL)
			switch {
			case errors.Is(err, ErrJobGone):
				c.log.Error("job state vanished from Redis; stopping", "job", job)
				cancel()
				return
			case err == nil && !ok && c.jobFinished(ctx, job):
				// Acquire refuses a finished job as it refuses one held by
				// another; the drive finishing it is not a lost lease.
				return
			case err == nil && (!ok || f != fence):
				c.log.Warn("lost lease", "job", job, "fence", fence, "now", f)
				retake.Store(ok) // ours again, under a new fence
				cancel()
				return
			}
		}
	}
}

// jobFinished reports whether job's record says it reached a terminal
// state (false when the record cannot be read).
func (c *Coordinator) jobFinished(ctx context.Context, job string) bool {
	m, err := c.store.Job(ctx, job)
	return err == nil && m.State.Terminal()
}

// load rebuilds a job's run state from Redis.
func (c *Coordinator) load(ctx context.Context, job string, fence int64) (*jobRun, error) {
	m, err := c.store.Job(ctx, job)
	if err != nil {
		return nil, err
	}
	run := &jobRun{id: job, fence: fence, adaptive: m.Adaptive, round: m.Round, outputs: map[int]*stageOutput{},
		times: newStageTimes(), repairs: newRepairState(), workReq: make(chan workRequest), outage: &outageClock{},
		opens: make(chan struct{}, maxOpening)}
	run.graph = adaptive.NewExecutionGraph(run.adaptive)
	g, err := m.Plan()
	if err != nil {
		return nil, fmt.Errorf("%w: job %s: %w", errCorruptRecord, job, err)
	}
	tasks, err := m.TaskPlans()
	if err != nil {
		return nil, fmt.Errorf("%w: job %s: %w", errCorruptRecord, job, err)
	}
	run.state = adaptive.State{Graph: g, Done: map[int]*adaptive.StageStats{}, Running: map[int]bool{},
		Tasks: tasks, Config: c.cfg.AQE, Log: c.log.With("job", job)}
	for _, st := range g.Stages {
		sm, err := c.store.Stage(ctx, job, st.ID)
		if err != nil {
			return nil, err
		}
		if sm.State == StageDone {
			out, err := c.store.StageOutput(ctx, job, st.ID, sm)
			if err != nil {
				// Corrupt when a record does not decode (errCorruptRecord);
				// failing to read the task results is Redis's error.
				return nil, fmt.Errorf("stage %d: %w", st.ID, err)
			}
			run.outputs[st.ID] = out
			run.state.Done[st.ID] = &out.Stats
		}
		if sm.State == StageRunning && !run.state.Skipped(st.ID) {
			// Running when its driver stopped: it resumes as it started
			// (the re-planner must not change it), adopting its committed
			// tasks.
			run.state.Running[st.ID] = true
			run.resume = append(run.resume, st.ID)
		}
	}
	return run, nil
}

// save persists the re-plannable part of the run: the plan and every
// stage's task plan (one field, fieldTasks).
func (c *Coordinator) save(ctx context.Context, run *jobRun) error {
	g, _ := json.Marshal(run.state.Graph)
	tasks, _ := json.Marshal(run.state.Tasks)
	return c.store.SetJob(ctx, run.id, run.fence, "graph", string(g), fieldTasks, string(tasks),
		"round", strconv.Itoa(run.round))
}

// loop runs the job's stages as their inputs become ready. Every time a
// stage finishes it re-plans (when adaptive), cancels running stages the
// new plan made useless without waiting for them, and starts the stages
// that became ready.
func (c *Coordinator) loop(ctx context.Context, run *jobRun) error {
	g := run.state.Graph
	type finished struct {
		id  int
		out *stageOutput
		err error
	}
	doneCh := make(chan finished)
	running := map[int]context.CancelFunc{}
	stageBytes := map[int]int64{} // input bytes of started stages
	var holds adaptive.Holds      // probe stages held for a runtime filter: since when, and why
	replanNow := true             // false when the loop only woke up to end a hold
	defer func() {
		for _, cancel := range running {
			cancel()
		}
	}()
	for {
		if cancelled, _ := c.store.Cancelled(ctx, run.id); cancelled {
			return errCancelled
		}
		if replanNow {
			if err := c.measureScans(ctx, run); err != nil {
				return err
			}
			if err := c.replan(ctx, run); err != nil {
				return err
			}
		}
		replanNow = true
		for id, cancel := range running {
			if run.state.Skipped(id) {
				c.log.Info("cancelling a stage the re-plan made useless", "job", run.id, "stage", id)
				cancel()
				delete(running, id)
			}
		}
		_, resultDone := run.state.Done[g.Result]
		if resultDone || run.state.Skipped(g.Result) {
			return nil
		}
		works := map[int][]taskWork{}
		resumed := c.resumable(run)
		for _, id := range append(run.state.Ready(), resumed...) {
			if _, ok := running[id]; ok {
				continue
			}
			work, err := c.tasksOf(ctx, run, g.Stage(id))
			if err != nil {
				return err
			}
			works[id] = work
			if len(work) > 0 {
				stageBytes[id] = work[0].bytes
			}
		}
		launch, announced := c.admit(run, works, running, stageBytes, resumed, &holds)
		if run.graph.Adaptive() && c.packer != nil && announced > 0 {
			// Announce every task of this round at once, so the packer
			// waits for all of them before it closes a pack.
			arrivals := c.packer.expect(announced)
			for _, work := range launch {
				for i := range work {
					work[i].arrival, arrivals = arrivals[0], arrivals[1:]
				}
			}
		}
		// Start the stages reading least first: their tasks ask for
		// function slots first, so a small build side (a dimension scan
		// a join waits for) is not queued behind a big scan that only
		// happened to start first.
		order := slices.Collect(maps.Keys(launch))
		slices.SortFunc(order, func(a, b int) int {
			return cmp.Or(cmp.Compare(stageBytes[a], stageBytes[b]), cmp.Compare(a, b))
		})
		for _, id := range order {
			work := launch[id]
			st := g.Stage(id)
			planKey := PlanKey(c.cfg.Prefix, run.id, st.ID, run.round, run.fence)
			if err := c.recordWork(ctx, run, id, work, slices.Contains(resumed, id)); err != nil {
				return err
			}
			sctx, cancel := context.WithCancel(ctx)
			running[id] = cancel
			run.state.Running[id] = true
			go func(id int) {
				out, err := c.runStage(sctx, run, st, work, planKey)
				select {
				case doneCh <- finished{id, out, err}:
				case <-ctx.Done():
				}
			}(id)
		}
		if len(running) == 0 {
			return fmt.Errorf("job %s: no runnable stage but result stage %d not done", run.id, g.Result)
		}
		wake := c.holdsEnd(&holds)
		var f finished
		woke := false
		for {
			select {
			case f = <-doneCh:
			case <-wake:
				woke = true
			case req := <-run.workReq:
				c.serveWork(ctx, run, req)
				continue
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(500 * time.Millisecond):
				if cancelled, _ := c.store.Cancelled(ctx, run.id); cancelled {
					return errCancelled
				}
				continue
			}
			break
		}
		if woke {
			replanNow = false // nothing finished: only the holds changed
			continue
		}
		delete(run.state.Running, f.id)
		cancel, live := running[f.id]
		if !live {
			continue // a stage cancelled by a re-plan: its outcome no longer matters
		}
		cancel()
		delete(running, f.id)
		if f.err != nil {
			return f.err
		}
		run.outputs[f.id] = f.out
		run.state.Done[f.id] = &f.out.Stats
	}
}

// replan lets the job's execution graph (adaptive or static) rewrite the
// pending part of the plan, and records the round.
func (c *Coordinator) replan(ctx context.Context, run *jobRun) error {
	wasSkipped := run.state.Tasks.Skipped()
	fired, err := run.graph.Replan(&run.state)
	if err != nil {
		return err
	}
	// Record only the stages this round skipped: earlier ones are in Redis.
	skipped := run.state.Tasks.Skipped()
	for id, why := range skipped {
		if _, was := wasSkipped[id]; was {
			continue
		}
		if _, done := run.state.Done[id]; done {
			// A finished stage whose output a re-plan made useless stays
			// done in Redis: done is final in the state machine.
			continue
		}
		if err := c.store.SkipStage(ctx, run.id, run.fence, id, "reason", why); errors.Is(err, ErrRefused) {
			// It finished meanwhile (done is final): nothing to skip.
			c.log.Info("re-plan skips a stage that already finished", "job", run.id, "stage", id, "err", err)
		} else if err != nil {
			return err
		}
	}
	var after []int
	for id := range run.state.Done {
		after = append(after, id)
	}
	sort.Ints(after)
	run.round++
	r := adaptive.Round{Round: run.round, After: after, Fired: fired, Scheduling: run.scheduling, Stats: run.state.Done, PlanAfter: run.state.FormatPlan(c.planner.Format)}
	run.scheduling = nil
	rj, _ := json.Marshal(roundRecord{Round: r, Graph: run.state.Graph, Skipped: skipped, Tasks: run.state.Tasks.Counts()})
	if err := c.store.AddRound(ctx, run.id, run.fence, rj); err != nil {
		return err
	}
	for _, f := range fired {
		if f.Discarded != "" {
			continue // logged by the re-planner
		}
		c.log.Info("adaptive rule fired", "job", run.id, "round", run.round, "rule", f.Rule, "note", f.Note)
	}
	return c.save(ctx, run)
}

func joinKey(prefix, rest string) string {
	prefix = strings.Trim(prefix, "/")
	if prefix == "" {
		return rest
	}
	return prefix + "/" + rest
}
