package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
)

// A shuffle object that a task finds missing or corrupt (size, checksum,
// row count or Arrow IPC footer wrong) is repaired rather than failing the
// job: the task that wrote it (the producer, of a finished stage) is
// re-opened in Redis and run again as a new attempt, the stage's recorded
// output is updated to the new objects, and the reader retries with them.
// The reader's failed attempt does not count against its retry budget;
// the number of repairs of a job is bounded (MaxInputRepairs).

// workRequest asks the loop goroutine (which owns the plan state) for the
// work of one task of a finished stage.
type workRequest struct {
	stage, task int
	reply       chan workReply
}

type workReply struct {
	st    *plan.Stage
	w     taskWork
	tasks int
	err   error
}

// serveWork answers a work request; it runs in the loop goroutine.
func (c *Coordinator) serveWork(ctx context.Context, run *jobRun, req workRequest) {
	var rep workReply
	st := run.state.Graph.Stage(req.stage)
	if st == nil {
		rep.err = fmt.Errorf("stage %d is not in the plan", req.stage)
	} else if work, err := c.tasksOf(ctx, run, st); err != nil {
		rep.err = err
	} else if req.task >= len(work) {
		rep.err = fmt.Errorf("stage %d has %d tasks now, not %d", req.stage, len(work), req.task+1)
	} else {
		rep = workReply{st: st, w: work[req.task], tasks: len(work)}
	}
	req.reply <- rep
}

// producerWork returns the fragment and work of task t of finished stage s.
func (c *Coordinator) producerWork(ctx context.Context, run *jobRun, s, t int) (workReply, error) {
	req := workRequest{stage: s, task: t, reply: make(chan workReply, 1)}
	select {
	case run.workReq <- req:
	case <-ctx.Done():
		return workReply{}, ctx.Err()
	}
	select {
	case rep := <-req.reply:
		return rep, rep.err
	case <-ctx.Done():
		return workReply{}, ctx.Err()
	}
}

// repairState is what the repairs of lost shuffle objects of one job
// share (task goroutines run them): safe for concurrent use.
type repairState struct {
	mu        sync.Mutex
	replaced  map[string][]shuffle.ObjectRef // lost object key -> its replacement (none: now empty)
	repairing map[string]chan struct{}       // "stage/task" being run again -> closed when done
	count     int                            // repairs started
	outputMu  sync.Mutex                     // serializes updates of a stage's recorded output
}

func newRepairState() *repairState {
	return &repairState{replaced: map[string][]shuffle.ObjectRef{}, repairing: map[string]chan struct{}{}}
}

// fix replaces, in a task's inputs, the objects that were lost and
// written again since the task's work was computed.
func (x *repairState) fix(w taskWork) taskWork {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.replaced) == 0 {
		return w
	}
	out := w
	ins := w.readInputs()
	out.inputs, out.reads = make([]function.Input, len(ins)), nil
	for i, in := range ins {
		objs := make([]shuffle.ObjectRef, 0, len(in.Objects))
		for _, o := range in.Objects {
			objs = append(objs, x.resolve(o, 0)...)
		}
		out.inputs[i] = function.Input{Stage: in.Stage, Objects: objs}
	}
	return out
}

// resolve follows replacements of o (an object lost, its replacement lost
// too, ...). Called with repairMu held.
func (x *repairState) resolve(o shuffle.ObjectRef, depth int) []shuffle.ObjectRef {
	r, ok := x.replaced[o.ID()]
	if !ok || depth > 100 {
		return []shuffle.ObjectRef{o}
	}
	var out []shuffle.ObjectRef
	for _, n := range r {
		out = append(out, x.resolve(n, depth+1)...)
	}
	return out
}

// repair makes the shuffle object key (an ObjectRef ID: a whole object,
// or one partition of a data object) readable again by running the task
// that wrote it once more (unless a concurrent or earlier repair did).
// It returns once readers can retry. Every partition of the lost attempt
// is replaced, since they share its data object.
func (c *Coordinator) repair(ctx context.Context, run *jobRun, key string, log *slog.Logger) error {
	x := run.repairs
	info, err := shuffle.ParseKey(key)
	if key == "" || err != nil || info.Job != run.id || info.Manifest {
		return &JobError{Code: plan.CodeInternal, Msg: fmt.Sprintf("a task reported a lost input %q that is not a shuffle object of job %s", key, run.id)}
	}
	tk := strconv.Itoa(info.Stage) + "/" + strconv.Itoa(info.Task)
	for {
		x.mu.Lock()
		if _, ok := x.replaced[key]; ok {
			x.mu.Unlock()
			return nil
		}
		ch, busy := x.repairing[tk]
		if !busy {
			break // with repairMu held
		}
		x.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if x.count >= c.cfg.MaxInputRepairs {
		x.mu.Unlock()
		return &JobError{Code: plan.CodeInputsLost, Msg: fmt.Sprintf("more than %d shuffle objects of the job were lost or corrupt (last: %s); giving up", c.cfg.MaxInputRepairs, key)}
	}
	x.count++
	done := make(chan struct{})
	x.repairing[tk] = done
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		delete(x.repairing, tk)
		close(done)
		x.mu.Unlock()
	}()

	tm, err := c.store.Task(ctx, run.id, info.Stage, info.Task)
	if err != nil {
		return err
	}
	var old function.TaskResult
	if r, err := tm.Result(); err == nil {
		old = *r
	}
	var res *function.TaskResult
	switch tm.Committed {
	case 0, info.Attempt:
		// The lost object is the task's committed output (or the task was
		// re-opened by a driver that died before running it again).
		sm, err := c.store.Stage(ctx, run.id, info.Stage)
		if err != nil {
			return err
		}
		rep, err := c.producerWork(ctx, run, info.Stage, info.Task)
		if err != nil {
			return fmt.Errorf("run stage %d task %d again (its output %s was lost): %w", info.Stage, info.Task, key, err)
		}
		if n := sm.Tasks; n != rep.tasks {
			return &JobError{Code: plan.CodeInternal, Msg: fmt.Sprintf("cannot run stage %d task %d again (its output %s was lost): the stage ran %d tasks, its plan now gives %d",
				info.Stage, info.Task, key, n, rep.tasks)}
		}
		if tm.Committed != 0 {
			if err := c.store.Reopen(ctx, run.id, run.fence, info.Stage, info.Task); err != nil {
				return err
			}
		}
		c.metrics.InputRepairs.Inc()
		log.Warn("running a committed task again: its output was lost or corrupt",
			"producer_stage", info.Stage, "producer_task", info.Task, "lost", key)
		res, err = c.runTask(ctx, run, rep.st, stagePlan{key: sm.PlanKey}, info.Task, rep.w, 0)
		if err != nil {
			return err
		}
	default:
		// Run again already (by an earlier driver of this job): use the
		// attempt committed since.
		if res, err = tm.Result(); err != nil {
			return fmt.Errorf("task %d/%d: %w", info.Stage, info.Task, err)
		}
	}

	// Old objects of the task -> the new attempt's object of the same
	// partition (none when the partition came out empty).
	oldKeys := map[string]int{key: info.Part}
	if old.Attempt == info.Attempt {
		for _, p := range old.Partitions {
			oldKeys[p.ID()] = p.Partition
		}
	}
	byPart := map[int]shuffle.ObjectRef{}
	for _, p := range res.Partitions {
		byPart[p.Partition] = p.Ref()
	}
	repl := map[string][]shuffle.ObjectRef{}
	for k, p := range oldKeys {
		if r, ok := byPart[p]; ok && r.ID() != k {
			repl[k] = []shuffle.ObjectRef{r}
		} else if !ok {
			repl[k] = nil
		}
	}
	if err := c.replaceOutput(ctx, run, info.Stage, repl); err != nil {
		return err
	}
	x.mu.Lock()
	for k, r := range repl {
		x.replaced[k] = r
	}
	x.mu.Unlock()
	return nil
}

// replaceOutput rewrites the committed objects recorded for a finished
// stage, so that a driver loading the job later reads the new objects.
func (c *Coordinator) replaceOutput(ctx context.Context, run *jobRun, stage int, repl map[string][]shuffle.ObjectRef) error {
	x := run.repairs
	x.outputMu.Lock()
	defer x.outputMu.Unlock()
	sm, err := c.store.Stage(ctx, run.id, stage)
	if err != nil {
		return err
	}
	out, err := sm.Output()
	if err != nil {
		return fmt.Errorf("stage %d: %w", stage, err)
	}
	if out.FromTasks {
		// The record holds no objects: it keeps the replacements, applied
		// when the objects are rebuilt from the task results.
		if out.Replaced == nil {
			out.Replaced = map[string][]shuffle.ObjectRef{}
		}
		for id, refs := range repl {
			out.Replaced[id] = refs
		}
		return c.store.SetStage(ctx, run.id, run.fence, stage, "output", string(out.record(out.Tasks)))
	}
	for p, refs := range out.Objects {
		var n []shuffle.ObjectRef
		for _, r := range refs {
			if rr, ok := repl[r.ID()]; ok {
				n = append(n, rr...)
			} else {
				n = append(n, r)
			}
		}
		out.Objects[p] = n
	}
	oj, _ := json.Marshal(out)
	return c.store.SetStage(ctx, run.id, run.fence, stage, "output", string(oj))
}
