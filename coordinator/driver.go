package coordinator

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/adaptive"
	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
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

// stageOutput is what a finished stage produced: statistics for the
// re-planner and the committed objects per partition for its consumers.
type stageOutput struct {
	Stats   adaptive.StageStats         `json:"stats"`
	Objects map[int][]shuffle.ObjectRef `json:"objects"`
}

// allObjects returns the committed objects of every partition, in
// partition order.
func (o *stageOutput) allObjects() []shuffle.ObjectRef {
	parts := make([]int, 0, len(o.Objects))
	for p := range o.Objects {
		parts = append(parts, p)
	}
	sort.Ints(parts)
	var out []shuffle.ObjectRef
	for _, p := range parts {
		out = append(out, o.Objects[p]...)
	}
	return out
}

// objectGroups divides the stage's committed data objects into k runs
// (at least one, at most one per object) and returns the refs of each run:
// every partition of its objects. Objects are ordered by the task that
// wrote them, so an object lost and written again by its task keeps its
// place, and a task run again (a retry, a repair, a resumed stage) reads
// the same objects.
func (o *stageOutput) objectGroups(k int) [][]shuffle.ObjectRef {
	if o == nil {
		return make([][]shuffle.ObjectRef, 1) // a skipped input: one task reading nothing
	}
	byKey := map[string][]shuffle.ObjectRef{}
	var keys []string
	for _, r := range o.allObjects() {
		if _, ok := byKey[r.Key]; !ok {
			keys = append(keys, r.Key)
		}
		byKey[r.Key] = append(byKey[r.Key], r)
	}
	task := func(key string) int {
		info, err := shuffle.ParseKey(key)
		if err != nil {
			return -1
		}
		return info.Task
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if ti, tj := task(keys[i]), task(keys[j]); ti != tj {
			return ti < tj
		}
		return keys[i] < keys[j]
	})
	k = max(1, min(k, len(keys)))
	groups := make([][]shuffle.ObjectRef, k)
	for i := range groups {
		for _, key := range keys[i*len(keys)/k : (i+1)*len(keys)/k] {
			groups[i] = append(groups[i], byKey[key]...)
		}
	}
	return groups
}

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
	// scans caches the files each scan stage reads (loop goroutine only).
	scans map[int]*scanInput
	// scheduling collects the loop's notes for the next round record;
	// holdWhy says why each held probe stage waits (loop goroutine only).
	scheduling []string
	holdWhy    map[int]string
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
	defer c.chargeDriver(ctx, job, &s3)

	log := c.log.With("job", job)
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
	err = c.loop(ctx, run)
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
	return err == nil && JobState(m["state"]).Terminal()
}

// load rebuilds a job's run state from Redis.
func (c *Coordinator) load(ctx context.Context, job string, fence int64) (*jobRun, error) {
	m, err := c.store.Job(ctx, job)
	if err != nil {
		return nil, err
	}
	run := &jobRun{id: job, fence: fence, adaptive: m["adaptive"] == "1", outputs: map[int]*stageOutput{},
		times: newStageTimes(), repairs: newRepairState(), workReq: make(chan workRequest), outage: &outageClock{}}
	run.graph = adaptive.NewExecutionGraph(run.adaptive)
	run.round, _ = strconv.Atoi(m["round"])
	var g plan.Graph
	if err := json.Unmarshal([]byte(m["graph"]), &g); err != nil {
		return nil, fmt.Errorf("%w: decode plan of job %s: %w", errCorruptRecord, job, err)
	}
	tasks, err := decodeTaskPlans(m)
	if err != nil {
		return nil, fmt.Errorf("%w: job %s: %w", errCorruptRecord, job, err)
	}
	run.state = adaptive.State{Graph: &g, Done: map[int]*adaptive.StageStats{}, Running: map[int]bool{},
		Tasks: tasks, Config: c.cfg.AQE, Log: c.log.With("job", job)}
	for _, st := range g.Stages {
		sm, err := c.store.Stage(ctx, job, st.ID)
		if err != nil {
			return nil, err
		}
		if StageState(sm["state"]) == StageDone {
			var out stageOutput
			if err := json.Unmarshal([]byte(sm["output"]), &out); err != nil {
				return nil, fmt.Errorf("%w: decode output of stage %d: %w", errCorruptRecord, st.ID, err)
			}
			run.outputs[st.ID] = &out
			run.state.Done[st.ID] = &out.Stats
		}
		if StageState(sm["state"]) == StageRunning && !run.state.Skipped(st.ID) {
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
	held := map[int]time.Time{}   // probe stages held for a runtime filter: since when they could have started
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
		for _, id := range append(c.ready(run), resumed...) {
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
		launch := map[int][]taskWork{}
		announced := 0
		holds := c.filterHolds(run, works, running, stageBytes, resumed)
		for id, work := range works {
			if h, ok := holds[id]; ok {
				since, seen := held[id]
				if !seen {
					since, held[id] = time.Now(), time.Now()
					c.log.Info("probe stage held for a runtime filter", "job", run.id, "stage", id, "build", h.build, "reason", h.reason)
				}
				if waited := time.Since(since); waited < c.cfg.RuntimeFilterWait {
					continue
				}
				run.scheduling = append(run.scheduling, fmt.Sprintf("stage %d started unfiltered after waiting %s for build stage %d (runtime filter wait timeout %s)",
					id, time.Since(since).Round(time.Millisecond), h.build, c.cfg.RuntimeFilterWait))
				c.log.Info("runtime filter wait timed out", "job", run.id, "stage", id, "build", h.build)
			} else if since, seen := held[id]; seen {
				run.scheduling = append(run.scheduling, fmt.Sprintf("stage %d started after waiting %s for its build side (%s)",
					id, time.Since(since).Round(time.Millisecond), run.holdWhy[id]))
			}
			delete(held, id)
			if run.graph.Adaptive() && c.cfg.DeferProbeRatio > 0 && !slices.Contains(resumed, id) && c.deferProbe(run, id, works, running, stageBytes) {
				continue
			}
			launch[id] = work
			announced += len(work)
		}
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
		var wake <-chan time.Time // the end of the earliest hold
		if len(held) > 0 {
			first := time.Duration(math.MaxInt64)
			for _, since := range held {
				first = min(first, time.Until(since.Add(c.cfg.RuntimeFilterWait)))
			}
			wake = time.After(max(first, 0))
		}
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

// deferProbe reports whether stage a should wait: it is the probe side of a
// partitioned join whose build side b is running (or starting now) and is
// at most 1/DeferProbeRatio of a's input. Waiting for b lets the re-planner see b's
// real size and broadcast it into a (select-join) before a shuffles
// anything; b being much smaller, the wait is short.
func (c *Coordinator) deferProbe(run *jobRun, a int, starting map[int][]taskWork, running map[int]context.CancelFunc, bytes map[int]int64) bool {
	deferIt := false
	for _, st := range run.state.Graph.Stages {
		if !run.state.Pending(st.ID) {
			continue
		}
		plan.Walk(st.Root, func(n *plan.Node) {
			if deferIt || n.Kind != plan.KindHashJoin || n.Join == nil || len(n.Inputs) != 2 {
				return
			}
			p, b := n.Inputs[0], n.Inputs[1]
			if p.Kind != plan.KindExchange || b.Kind != plan.KindExchange || p.Stage != a || p.Whole || b.Whole {
				return
			}
			if !n.Join.Type.PerProbeRow() {
				return
			}
			// Only a hash-partitioned build side can be broadcast into the
			// probe stage, and only into a stage that this join alone reads
			// (select-join's conditions): otherwise waiting gains nothing.
			// (TPC-H Q3's orders scan waited for the customer scan, whose
			// output the planner had already made a broadcast.)
			if bs := run.state.Graph.Stage(b.Stage); bs == nil || bs.Output.Kind != plan.PartitionHash || len(run.state.Graph.Consumers(a)) != 1 {
				return
			}
			_, bRunning := running[b.Stage]
			_, bStarting := starting[b.Stage]
			if _, done := run.state.Done[b.Stage]; done || !(bRunning || bStarting) {
				return
			}
			if bytes[b.Stage]*c.cfg.DeferProbeRatio <= bytes[a] {
				deferIt = true
			}
		})
	}
	return deferIt
}

// filterHold is why a probe stage waits: the build stage whose runtime
// filter would prune its scan.
type filterHold struct {
	build  int
	reason string
}

// filterHolds returns the stages among those ready to start (starting)
// that should wait for a runtime filter: the scan of stage a feeds the
// probe side of a join whose build stage b the runtime-filter rule asked
// for a key summary (plan.Stage.Summarize), b is running or starts now,
// and the estimates say the wait is worth it: a reads at least
// RuntimeFilterRatio times b's input, and b's input is at most
// RuntimeFilterBuildBytes. Otherwise both run at once and the filter
// applies only if a has not started when b is done. A stage resumed
// from another coordinator never waits. Each hold is also noted for the
// next round record.
func (c *Coordinator) filterHolds(run *jobRun, starting map[int][]taskWork, running map[int]context.CancelFunc, bytes map[int]int64, resumed []int) map[int]filterHold {
	if !run.graph.Adaptive() || c.cfg.RuntimeFilterWait <= 0 || c.cfg.RuntimeFilterRatio <= 0 {
		return nil
	}
	holds := map[int]filterHold{}
	for _, e := range adaptive.FilterEdges(run.state.Graph) {
		a, b := e.Probe, e.Build
		if _, ok := starting[a]; !ok || slices.Contains(resumed, a) {
			continue
		}
		if _, h := holds[a]; h {
			continue
		}
		if _, done := run.state.Done[b]; done {
			continue
		}
		if bs := run.state.Graph.Stage(b); bs == nil || !slices.Contains(bs.Summarize, e.BuildColumn) {
			continue // the rule did not ask b for a summary: no filter will come
		}
		_, bRunning := running[b]
		_, bStarting := starting[b]
		if !bRunning && !bStarting {
			continue // b waits for its own inputs: holding a would wait on them too
		}
		if bStarting && !bRunning && c.cfg.DeferProbeRatio > 0 && c.deferProbe(run, b, starting, running, bytes) {
			continue // b itself waits: it would not run while a is held
		}
		pb, bb := bytes[a], bytes[b]
		if bb > c.cfg.RuntimeFilterBuildBytes || bb*c.cfg.RuntimeFilterRatio > pb {
			continue
		}
		holds[a] = filterHold{build: b, reason: fmt.Sprintf("runtime filter from build stage %d: probe reads %d bytes, build %d (>= %dx)", b, pb, bb, c.cfg.RuntimeFilterRatio)}
	}
	// A build side held itself (a chain of filters) does not run: its
	// probe side does not wait for it.
	for changed := true; changed; {
		changed = false
		for a, h := range holds {
			if _, bh := holds[h.build]; bh {
				if _, r := running[h.build]; !r {
					delete(holds, a)
					changed = true
				}
			}
		}
	}
	if run.holdWhy == nil {
		run.holdWhy = map[int]string{}
	}
	for a, h := range holds {
		if _, noted := run.holdWhy[a]; !noted {
			run.scheduling = append(run.scheduling, fmt.Sprintf("stage %d held for %s (at most %s)", a, h.reason, c.cfg.RuntimeFilterWait))
		}
		run.holdWhy[a] = h.reason
	}
	return holds
}

// ready returns stages not done or skipped whose inputs all are.
func (c *Coordinator) ready(run *jobRun) []int {
	var out []int
	for _, st := range run.state.Graph.Stages {
		if !run.state.Pending(st.ID) {
			continue
		}
		ok := true
		for _, in := range st.Inputs {
			_, done := run.state.Done[in]
			if !done && !run.state.Skipped(in) {
				ok = false
			}
		}
		if ok {
			out = append(out, st.ID)
		}
	}
	return out
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

// taskWork is what one task of a stage reads.
type taskWork struct {
	splits []function.Split
	inputs []function.Input
	// filesPruned is how many files of the stage's table its partition
	// filter excluded (the same in every task of the stage).
	filesPruned int
	// bytes is the stage's total input, the task's dispatch priority.
	bytes int64
	// arrival, when set, announced the task to the packer.
	arrival *arrival
}

// tasksOf plans the tasks of a stage from the table files and upstream
// outputs.
func (c *Coordinator) tasksOf(ctx context.Context, run *jobRun, st *plan.Stage) ([]taskWork, error) {
	g := run.state.Graph
	scans := scanNodes(st)
	if len(scans) > 1 {
		return nil, fmt.Errorf("stage %d scans %d tables; one scan per stage is supported", st.ID, len(scans))
	}
	// Inputs every task reads whole (single/broadcast outputs).
	var whole []function.Input
	var hash []int
	split, splits := plan.SplitObjectsInput(st)
	for _, in := range st.Inputs {
		if run.state.Skipped(in) {
			continue
		}
		if splits && in == split {
			continue // divided among the tasks below
		}
		if g.Stage(in).Output.Kind == plan.PartitionHash && !plan.WholeRead(st, in) {
			hash = append(hash, in)
			continue
		}
		whole = append(whole, function.Input{Stage: in, Objects: run.outputs[in].allObjects()})
	}
	var work []taskWork
	switch {
	case len(scans) == 1:
		in, err := c.scanInput(ctx, run, st.ID, scans[0])
		if err != nil {
			return nil, err
		}
		var tasks [][]function.Split
		if k := run.state.Tasks.Of(st.ID).ScanTasks; k > 0 {
			tasks = SplitsInto(in.files, k) // size-scans sized the stage
		} else {
			tasks = Splits(in.files, c.cfg.SplitBytes)
		}
		for _, splits := range tasks {
			for i := range splits {
				splits[i].Partition = in.values[splits[i].Key]
			}
			work = append(work, taskWork{splits: splits, inputs: whole, filesPruned: in.pruned})
		}
		if len(work) == 0 { // a table with no files still runs its fragment once
			work = append(work, taskWork{inputs: whole, filesPruned: in.pruned})
		}
	case splits:
		// A combining stage (combine-objects): each task reads every
		// partition of a contiguous run of the input's objects.
		for _, objs := range run.outputs[split].objectGroups(run.state.Tasks.Of(st.ID).Combine) {
			w := taskWork{inputs: append([]function.Input(nil), whole...)}
			w.inputs = append(w.inputs, function.Input{Stage: split, Objects: objs})
			work = append(work, w)
		}
	case len(hash) > 0:
		tp := run.state.Tasks.Of(st.ID)
		for _, group := range tp.Groups {
			w := taskWork{inputs: append([]function.Input(nil), whole...)}
			for _, in := range hash {
				var objs []shuffle.ObjectRef
				for _, p := range group {
					objs = append(objs, run.outputs[in].Objects[p]...)
				}
				w.inputs = append(w.inputs, function.Input{Stage: in, Objects: objs})
			}
			work = append(work, w)
		}
		for _, sk := range tp.Skew {
			w := taskWork{inputs: append([]function.Input(nil), whole...)}
			for _, in := range hash {
				objs := run.outputs[in].Objects[sk.Part]
				if in == sk.Input {
					objs = objs[sk.Lo:sk.Hi]
				}
				w.inputs = append(w.inputs, function.Input{Stage: in, Objects: objs})
			}
			work = append(work, w)
		}
	default:
		work = append(work, taskWork{inputs: whole})
	}
	var total int64
	for _, w := range work {
		for _, sp := range w.splits {
			total += sp.Size
		}
		for _, in := range w.inputs {
			for _, o := range in.Objects {
				total += o.Bytes
			}
		}
	}
	for i := range work {
		work[i].bytes = total
	}
	return work, nil
}

// scanNodes returns the table scans in a stage's fragment whose splits
// are its tasks (not those inline-scans put there: their files are in the
// plan).
func scanNodes(st *plan.Stage) []*plan.Node {
	var scans []*plan.Node
	plan.Walk(st.Root, func(n *plan.Node) {
		if n.SplitScan() {
			scans = append(scans, n)
		}
	})
	return scans
}

// scanInput is what a scan stage reads: the table's files its partition
// filter keeps, their partition values by key, how many files the filter
// dropped, and the bytes of the kept row groups.
type scanInput struct {
	layout *layout.Table
	files  []layout.File
	values map[string][]plan.Value
	pruned int
	bytes  int64
	// filter is the scan's pruning filter the files were pruned with (a
	// runtime filter added since prunes them again).
	filter string
}

// scanInput lists the files a scan stage reads, once per job run (an
// external table is listed again only by the next run): its tasks, a
// repair of one of them and size-scans all see one listing. It also sets
// the scan's format, CSV dialect and partition columns.
func (c *Coordinator) scanInput(ctx context.Context, run *jobRun, stage int, scan *plan.Node) (*scanInput, error) {
	filter := ""
	if scan.Scan.Filter != nil {
		fj, _ := json.Marshal(scan.Scan.Filter)
		filter = string(fj)
	}
	var lay *layout.Table
	if in, ok := run.scans[stage]; ok {
		scan.Scan.Format, scan.Scan.CSV, scan.Scan.JSON, scan.Scan.Partitions = in.layout.Format, in.layout.CSV, in.layout.JSON, in.layout.Partitions
		if in.filter == filter {
			return in, nil
		}
		lay = in.layout // the same listing, pruned by the filter as it is now
	} else {
		var err error
		if lay, err = c.tables.Layout(ctx, scan.Scan.Table); err != nil {
			return nil, err
		}
	}
	// Set before pruning: the partition filter reads the partition columns.
	scan.Scan.Format, scan.Scan.CSV, scan.Scan.JSON, scan.Scan.Partitions = lay.Format, lay.CSV, lay.JSON, lay.Partitions
	files, values, pruned, err := prunePartitions(scan, lay)
	if err != nil {
		return nil, err
	}
	if pruned > 0 {
		c.log.Info("partition pruning", "job", run.id, "stage", stage, "table", scan.Scan.Table, "files", len(lay.Files), "pruned", pruned)
	}
	in := &scanInput{layout: lay, files: files, values: values, pruned: pruned, filter: filter}
	for _, f := range files {
		for _, rg := range f.RowGroups {
			in.bytes += rg.Bytes
		}
	}
	if run.scans == nil {
		run.scans = map[int]*scanInput{}
	}
	run.scans[stage] = in
	return in, nil
}

// measureScans records, for size-scans, the table bytes every pending
// scan stage of an adaptive job reads.
func (c *Coordinator) measureScans(ctx context.Context, run *jobRun) error {
	if !run.graph.Adaptive() {
		return nil
	}
	for _, st := range run.state.Graph.Stages {
		if !run.state.Pending(st.ID) {
			continue
		}
		if _, ok := run.state.Scans[st.ID]; ok {
			continue
		}
		scans := scanNodes(st)
		if len(scans) != 1 {
			continue // tasksOf reports a stage of several scans
		}
		in, err := c.scanInput(ctx, run, st.ID, scans[0])
		if err != nil {
			return err
		}
		if run.state.Scans == nil {
			run.state.Scans = map[int]adaptive.ScanSize{}
		}
		size := adaptive.ScanSize{Bytes: in.bytes, Splits: len(Splits(in.files, c.cfg.SplitBytes))}
		if len(in.files) <= adaptive.MaxInlineFiles && in.bytes <= run.state.Config.InlineScanBytes {
			// Small enough for inline-scans: its readers may read the
			// files themselves.
			size.Files = make([]plan.ScanFile, len(in.files))
			for i, f := range in.files {
				size.Files[i] = plan.ScanFile{Key: f.Key, Size: f.Size, Partition: in.values[f.Key]}
			}
		}
		run.state.Scans[st.ID] = size
	}
	return nil
}

// prunePartitions drops the files of a hive-partitioned table whose
// partition values the scan's filter excludes (exec.PartitionFilter), and
// returns the kept files, every kept file's partition values by key, and
// how many files were dropped.
func prunePartitions(scan *plan.Node, lay *layout.Table) ([]layout.File, map[string][]plan.Value, int, error) {
	if len(lay.Partitions) == 0 {
		return lay.Files, nil, 0, nil
	}
	values := make(map[string][]plan.Value, len(lay.Files))
	var kept []layout.File
	for _, f := range lay.Files {
		v, err := lay.PartitionValues(f)
		if err != nil {
			return nil, nil, 0, plan.Errorf(plan.CodeBadPartitions, "table %s: %w", scan.Scan.Table, err)
		}
		if !exec.PartitionFilter(scan, v) {
			continue
		}
		kept = append(kept, f)
		values[f.Key] = v
	}
	return kept, values, len(lay.Files) - len(kept), nil
}

// ExplainPruning returns, for every scan with a filter of a
// hive-partitioned table in g, a line saying how many of the table's files
// its partition filter prunes now (as the scan stage will when it starts),
// for EXPLAIN.
func ExplainPruning(ctx context.Context, tables Tables, g *plan.Graph) (string, error) {
	var b strings.Builder
	for _, st := range g.Stages {
		var err error
		plan.Walk(st.Root, func(n *plan.Node) {
			if err != nil || n.Kind != plan.KindScan || n.Scan.Filter == nil {
				return
			}
			var lay *layout.Table
			if lay, err = tables.Layout(ctx, n.Scan.Table); err != nil || len(lay.Partitions) == 0 {
				return
			}
			c, sc := *n, *n.Scan
			sc.Partitions = lay.Partitions
			c.Scan = &sc
			var kept []layout.File
			var pruned int
			if kept, _, pruned, err = prunePartitions(&c, lay); err == nil {
				fmt.Fprintf(&b, "partition pruning: stage %d scan %s: %d of %d files pruned, %d read\n", st.ID, n.Scan.Table, pruned, len(lay.Files), len(kept))
			}
		})
		if err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// Splits packs table files' row groups into scan tasks of about target
// bytes. A task's splits never cut a row group.
func Splits(files []layout.File, target int64) [][]function.Split {
	var cur int64
	return cutRowGroups(files, func(b int64) bool {
		start := cur > 0 && cur+b > target
		if start {
			cur = 0
		}
		cur += b
		return start
	})
}

// SplitsInto cuts files into at most k tasks of contiguous row groups
// holding about equal bytes: a row group goes to the task in whose share
// of the total its middle byte falls.
func SplitsInto(files []layout.File, k int) [][]function.Split {
	var total int64
	for _, f := range files {
		for _, rg := range f.RowGroups {
			total += rg.Bytes
		}
	}
	k64 := int64(max(k, 1))
	var seen int64
	task := int64(-1)
	return cutRowGroups(files, func(b int64) bool {
		t := min(k64-1, (seen+b/2)*k64/max(total, 1))
		seen += b
		start := task >= 0 && t != task
		task = t
		return start
	})
}

// cutRowGroups walks the row groups of files in order, starting a new
// task before a row group (of b bytes) when newTask(b) says so; each task
// holds one split per file it reads from.
func cutRowGroups(files []layout.File, newTask func(b int64) bool) [][]function.Split {
	var tasks [][]function.Split
	var cur []function.Split
	for _, f := range files {
		var sp *function.Split
		for i, rg := range f.RowGroups {
			if newTask(rg.Bytes) && len(cur) > 0 {
				tasks = append(tasks, cur)
				cur, sp = nil, nil
			}
			if sp == nil {
				cur = append(cur, function.Split{Key: f.Key, Size: f.Size})
				sp = &cur[len(cur)-1]
			}
			sp.RowGroups = append(sp.RowGroups, i)
		}
	}
	if len(cur) > 0 {
		tasks = append(tasks, cur)
	}
	return tasks
}

// runStage runs every task of a stage, records its output in Redis and
// returns it. It touches no shared run state: the loop owns that.
func (c *Coordinator) runStage(ctx context.Context, run *jobRun, st *plan.Stage, work []taskWork, planKey string) (*stageOutput, error) {
	log := c.log.With("job", run.id, "stage", st.ID)
	body, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encode stage %d: %w", st.ID, err)
	}
	if err := c.bucket.Put(ctx, planKey, body); err != nil {
		return nil, fmt.Errorf("upload plan of stage %d: %w", st.ID, err)
	}
	started := time.Now()
	kv := []any{"tasks", len(work), "plan_key", planKey, "started", started.UTC().Format(time.RFC3339Nano)}
	if len(work) > 0 && work[0].filesPruned > 0 {
		kv = append(kv, "files_pruned", work[0].filesPruned)
	}
	if err := c.store.StartStage(ctx, run.id, run.fence, st.ID, kv...); err != nil {
		return nil, err
	}
	log.Info("stage started", "tasks", len(work))

	results := make([]*function.TaskResult, len(work))
	var limit int64
	if c.cfg.LimitEarlyStop {
		limit = stageLimit(st)
	}
	first := c.runTasks(ctx, run, st, planKey, work, results, limit, nil)
	if first == nil && limit > 0 {
		// Safety net of LIMIT early stop: failed attempts may have inflated
		// the counter; if the committed rows fall short, run the tasks that
		// stopped early again, to the end.
		var rows int64
		var again []int
		for t, r := range results {
			rows += r.Rows
			if r.StoppedEarly {
				again = append(again, t)
			}
		}
		if rows < limit && len(again) > 0 {
			log.Warn("LIMIT early stop fell short; re-running tasks that stopped early", "rows", rows, "limit", limit, "tasks", len(again))
			for _, t := range again {
				if err := c.store.Reopen(ctx, run.id, run.fence, st.ID, t); err != nil {
					return nil, err
				}
			}
			first = c.runTasks(ctx, run, st, planKey, work, results, 0, again)
		}
	}
	if first != nil {
		if ctx.Err() == nil && !errors.Is(first, ErrStaleFence) && !errors.Is(first, errCancelled) {
			// Failed for good: the stage says so (the job fails next).
			_ = c.store.FailStage(context.WithoutCancel(ctx), run.id, run.fence, st.ID, "error", first.Error())
		}
		return nil, first
	}
	out := &stageOutput{Objects: map[int][]shuffle.ObjectRef{}}
	parts := map[int]*adaptive.PartitionStats{}
	var inRows, inBytes, peakMem, spillBytes, spillFiles, gets, puts int64
	invoked, rgPruned := 0, 0
	dataObjects := map[string]bool{}
	for _, r := range results {
		if r.S3 != nil {
			gets += r.S3.Get + r.S3.Head
			puts += r.S3.Put
		}
		inRows += r.InputRows
		inBytes += r.InputBytes
		rgPruned += r.RowGroupsPruned
		peakMem = max(peakMem, r.PeakMemoryBytes)
		spillBytes += r.SpillBytes
		spillFiles += r.SpillFiles
		if !r.NotInvoked && !r.SharedInvocation {
			invoked++
		}
		for _, p := range r.Partitions {
			dataObjects[p.Ref().Key] = true
			out.Objects[p.Partition] = append(out.Objects[p.Partition], p.Ref())
			ps := parts[p.Partition]
			if ps == nil {
				ps = &adaptive.PartitionStats{Partition: p.Partition}
				parts[p.Partition] = ps
			}
			ps.Rows += p.Rows
			ps.Bytes += p.Bytes
			ps.Objects++
			out.Stats.Rows += p.Rows
			out.Stats.Bytes += p.Bytes
		}
	}
	out.Stats.Objects = len(dataObjects)
	out.Stats.Summaries = stageSummaries(st, results)
	for _, ps := range parts {
		out.Stats.Partitions = append(out.Stats.Partitions, *ps)
	}
	sort.Slice(out.Stats.Partitions, func(i, j int) bool {
		return out.Stats.Partitions[i].Partition < out.Stats.Partitions[j].Partition
	})
	oj, _ := json.Marshal(out)
	mj, _ := json.Marshal(function.AggregateMetrics(results)) // per-operator and phase metrics (kept with the stage)
	if err := c.store.FinishStage(ctx, run.id, run.fence, st.ID, "output", string(oj), "metrics", string(mj),
		"rows", out.Stats.Rows, "bytes", out.Stats.Bytes, "input_rows", inRows, "input_bytes", inBytes, "invoked", invoked,
		"row_groups_pruned", rgPruned,
		"peak_memory", peakMem, "spill_bytes", spillBytes, "spill_files", spillFiles,
		// The committed attempts' requests (the web UI shows s3_* fields
		// as the stage's cost); the job's cost report has every attempt's.
		"s3_get", gets, "s3_put", puts,
		"seconds", time.Since(started).Seconds()); err != nil {
		return nil, err
	}
	log.Info("stage done", "rows", out.Stats.Rows, "bytes", out.Stats.Bytes, "seconds", time.Since(started).Seconds())
	return out, nil
}

// runTasks runs the given tasks of a stage (all when only is nil) and fills
// results; it returns the first error that fails the stage.
func (c *Coordinator) runTasks(ctx context.Context, run *jobRun, st *plan.Stage, planKey string, work []taskWork,
	results []*function.TaskResult, limit int64, only []int) error {
	if only == nil {
		for t := range work {
			only = append(only, t)
		}
	}
	errs := make(chan error, len(only))
	run.times.tracker(st.ID).setTasks(len(work))
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, t := range only {
		go func(t int) {
			res, err := c.runTask(tctx, run, st, planKey, t, work[t], limit)
			results[t] = res
			if err != nil {
				cancel() // one task failing for good fails the stage
			}
			errs <- err
		}(t)
	}
	var first error
	for range only {
		if err := <-errs; err != nil && (first == nil || errors.Is(first, context.Canceled)) {
			first = err
		}
	}
	return first
}

// stageLimit returns the row count a stage needs in total when its
// fragment ends in a bare LIMIT (no sort below it in the stage: any rows
// will do), or 0.
func stageLimit(st *plan.Stage) int64 {
	if st.Root.Kind != plan.KindLimit || st.Root.Limit < 0 {
		return 0
	}
	sorted := false
	plan.Walk(st.Root, func(n *plan.Node) {
		if n.Kind == plan.KindSort {
			sorted = true
		}
	})
	if sorted {
		return 0
	}
	return st.Root.Limit + st.Root.Offset
}

func joinKey(prefix, rest string) string {
	prefix = strings.Trim(prefix, "/")
	if prefix == "" {
		return rest
	}
	return prefix + "/" + rest
}
