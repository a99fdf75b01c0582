package coordinator

import (
	"context"
	"fmt"
	"sort"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/adaptive"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
)

// The task builder: the one place a stage's adaptive.TaskPlan (and, for a
// scan stage, its table's files: scans.go) becomes the tasks it runs. A
// new way to shape a stage's tasks adds a TaskPlan field, the rule that
// sets it, and its case here.

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

// taskWork is what one task of a stage reads.
type taskWork struct {
	splits []function.Split
	inputs []function.Input
	// reads are the task's hash-exchange inputs, after inputs: their refs
	// are built when the task's spec is (readInputs), not when the stage's
	// tasks are planned: 2,000 tasks reading a partition of each of
	// 10,000 upstream tasks would otherwise hold 20 M refs (1.3 GB) for
	// the stage's whole run.
	reads []hashRead
	// filesPruned is how many files of the stage's table its partition
	// filter excluded (the same in every task of the stage).
	filesPruned int
	// bytes is the stage's total input, the task's dispatch priority.
	bytes int64
	// arrival, when set, announced the task to the packer.
	arrival *arrival
	// memory is the size of the function the task runs on
	// (TaskPlan.FunctionMemory; 0: Config.FunctionMemory).
	memory int64
}

// hashRead is a task's read of a hash exchange: the committed objects of
// some partitions of an upstream stage's output, or, for a skew split
// (ranged), objects [lo, hi) of one partition's.
type hashRead struct {
	stage  int
	out    *stageOutput
	parts  []int
	ranged bool
	lo, hi int
}

// readInputs returns every input of the task with its objects: inputs,
// then reads.
func (w *taskWork) readInputs() []function.Input {
	if len(w.reads) == 0 {
		return w.inputs
	}
	out := append(make([]function.Input, 0, len(w.inputs)+len(w.reads)), w.inputs...)
	for _, r := range w.reads {
		var objs []shuffle.ObjectRef
		for _, p := range r.parts {
			objs = append(objs, r.out.partObjects(p)...)
		}
		if r.ranged {
			objs = objs[r.lo:r.hi]
		}
		out = append(out, function.Input{Stage: r.stage, Objects: objs})
	}
	return out
}

// tasksOf plans the tasks of a stage from its task plan, the table files
// and the upstream outputs: a scan stage runs the tasks
// TaskPlan.ScanSplits cuts its files into; a combining stage
// TaskPlan.Combine runs of its input's objects; a stage reading hash
// exchanges a task per TaskPlan.Groups group plus one per TaskPlan.Skew
// split; any other stage one task.
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
		for _, splits := range run.state.Tasks.Of(st.ID).ScanSplits(in.files, in.values, c.cfg.SplitBytes) {
			work = append(work, taskWork{splits: toSplits(splits), inputs: whole, filesPruned: in.pruned})
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
				w.reads = append(w.reads, hashRead{stage: in, out: run.outputs[in], parts: group})
			}
			work = append(work, w)
		}
		for _, sk := range tp.Skew {
			w := taskWork{inputs: append([]function.Input(nil), whole...)}
			for _, in := range hash {
				r := hashRead{stage: in, out: run.outputs[in], parts: []int{sk.Part}}
				if in == sk.Input {
					r.ranged, r.lo, r.hi = true, sk.Lo, sk.Hi
				}
				w.reads = append(w.reads, r)
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
		for _, in := range w.readInputs() {
			for _, o := range in.Objects {
				total += o.Bytes
			}
		}
	}
	mem := run.state.Tasks.Of(st.ID).FunctionMemory
	for i := range work {
		work[i].bytes, work[i].memory = total, mem
	}
	return work, nil
}

// toSplits converts the re-planner's scan splits to the task spec's (the
// same fields).
func toSplits(splits []adaptive.ScanSplit) []function.Split {
	if splits == nil {
		return nil
	}
	out := make([]function.Split, len(splits))
	for i, sp := range splits {
		out[i] = function.Split(sp)
	}
	return out
}
