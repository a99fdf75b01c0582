package coordinator

import (
	"context"
	"fmt"
	"io"
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

// taskRuns divides the stage's committed data objects into k runs as
// objectGroups does, as ranges [lo, hi) of its tasks (every partition of
// their objects), without building their refs; ok=false when the output is
// not one data object per task without replacements (then objectGroups).
// Tasks that wrote nothing count for no object, as in objectGroups.
func (o *stageOutput) taskRuns(k int) (runs [][2]int, ok bool) {
	if o == nil || !o.index().fast {
		return nil, false
	}
	var full []int // tasks with an object
	for i := range o.tasks {
		if o.tasks[i].keys != nil {
			return nil, false
		}
		if o.tasks[i].len() > 0 {
			full = append(full, i)
		}
	}
	k = max(1, min(k, len(full)))
	if len(full) == 0 {
		return [][2]int{{0, 0}}, true
	}
	runs = make([][2]int, k)
	for i := range runs {
		first, last := full[i*len(full)/k], full[(i+1)*len(full)/k-1]
		runs[i] = [2]int{first, last + 1}
	}
	return runs, true
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
// (ranged), objects [lo, hi) of one partition's; or, for a combining
// task (tasks), every partition of the objects of tasks [lo, hi).
type hashRead struct {
	stage  int
	out    *stageOutput
	parts  []int
	ranged bool
	tasks  bool
	lo, hi int
}

// objects returns the read's refs.
func (r *hashRead) objects() []shuffle.ObjectRef {
	var objs []shuffle.ObjectRef
	if r.tasks {
		n := 0
		for t := r.lo; t < r.hi; t++ {
			n += r.out.tasks[t].len()
		}
		objs = make([]shuffle.ObjectRef, 0, n)
		for t := r.lo; t < r.hi; t++ {
			tp := &r.out.tasks[t]
			for j := range tp.len() {
				objs = append(objs, tp.stat(j).Ref())
			}
		}
		r.out.refsBuilt.Add(int64(len(objs)))
		return objs
	}
	for _, p := range r.parts {
		objs = append(objs, r.out.partObjects(p)...)
	}
	if r.ranged {
		objs = objs[r.lo:r.hi]
	}
	return objs
}

// refsOf returns a combining read's refs (tasks) as a shuffle.RefsOf:
// the same refs as objects, in the same order, given one at a time from
// the packed partitions, so a spec encodes them without building the
// list (ok false for other reads).
func (r *hashRead) refsOf() (refs *shuffle.RefsOf, ok bool) {
	if !r.tasks {
		return nil, false
	}
	// starts[i] is the index of task lo+i's first ref.
	starts := make([]int, 0, r.hi-r.lo+1)
	n := 0
	for t := r.lo; t < r.hi; t++ {
		starts = append(starts, n)
		n += r.out.tasks[t].len()
	}
	starts = append(starts, n)
	cur := 0 // the task of the last ref given (refs are asked for in order)
	out := r.out
	r.out.refsBuilt.Add(int64(n))
	return &shuffle.RefsOf{N: n, Ref: func(i int) shuffle.ObjectRef {
		if i < starts[cur] || i >= starts[cur+1] {
			cur = sort.Search(len(starts)-1, func(k int) bool { return starts[k+1] > i })
		}
		tp := &out.tasks[r.lo+cur]
		return tp.stat(i - starts[cur]).Ref()
	}}, true
}

// bytes returns the bytes the read fetches, from the output's index
// (without building the refs) when it can.
func (r *hashRead) bytes() int64 {
	var n int64
	x := r.out.index()
	switch {
	case r.tasks:
		for t := r.lo; t < r.hi; t++ {
			n += x.taskBytes[t]
		}
	case r.ranged || !x.fast:
		for _, o := range r.objects() {
			n += o.Bytes
		}
	default:
		for _, p := range r.parts {
			n += x.partBytes[p]
		}
	}
	return n
}

// refs returns how many refs objects builds, from the output's index.
func (r *hashRead) refs() int64 {
	var n int64
	switch {
	case r.tasks:
		for t := r.lo; t < r.hi; t++ {
			n += int64(r.out.tasks[t].len())
		}
	case r.ranged:
		n = int64(r.hi - r.lo)
	default:
		x := r.out.index()
		for _, p := range r.parts {
			n += int64(x.partRefs[p])
		}
	}
	return n
}

// refs returns how many refs the task's spec lists.
func (w *taskWork) refs() int64 {
	var n int64
	for _, in := range w.inputs {
		n += int64(len(in.Objects))
	}
	for i := range w.reads {
		n += w.reads[i].refs()
	}
	return n
}

// print writes what the read reads, for workPrint: the partitions (or
// tasks) and the digest of the output's objects, not every ref.
func (r *hashRead) print(h io.Writer) {
	fmt.Fprintf(h, "r%d:%v/%v/%d-%d/%x;", r.stage, r.ranged, r.tasks, r.lo, r.hi, r.out.index().digest)
	for _, p := range r.parts {
		fmt.Fprintf(h, "%d,", p)
	}
}

// readInputs returns every input of the task with its objects: inputs,
// then reads.
func (w *taskWork) readInputs() []function.Input {
	if len(w.reads) == 0 {
		return w.inputs
	}
	out := append(make([]function.Input, 0, len(w.inputs)+len(w.reads)), w.inputs...)
	for i := range w.reads {
		out = append(out, function.Input{Stage: w.reads[i].stage, Objects: w.reads[i].objects()})
	}
	return out
}

// specInputs returns every input of the task for its spec, as
// readInputs, but a combining read's refs as a RefsOf (encoded without
// the list being built).
func (w *taskWork) specInputs() []function.Input {
	if len(w.reads) == 0 {
		return w.inputs
	}
	out := append(make([]function.Input, 0, len(w.inputs)+len(w.reads)), w.inputs...)
	for i := range w.reads {
		r := &w.reads[i]
		if refs, ok := r.refsOf(); ok {
			out = append(out, function.Input{Stage: r.stage, Refs: refs})
			continue
		}
		out = append(out, function.Input{Stage: r.stage, Objects: r.objects()})
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
		k := run.state.Tasks.Of(st.ID).Combine
		if runs, ok := run.outputs[split].taskRuns(k); ok {
			for _, tr := range runs {
				w := taskWork{inputs: whole}
				w.reads = []hashRead{{stage: split, out: run.outputs[split], tasks: true, lo: tr[0], hi: tr[1]}}
				work = append(work, w)
			}
			break
		}
		for _, objs := range run.outputs[split].objectGroups(k) {
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
	total := workBytes(work)
	mem := run.state.Tasks.Of(st.ID).FunctionMemory
	for i := range work {
		work[i].bytes, work[i].memory = total, mem
	}
	return work, nil
}

// workBytes returns the input bytes of a stage's tasks: their splits,
// inputs and reads (a read's from its output's index, without building
// its refs).
func workBytes(work []taskWork) int64 {
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
		for i := range w.reads {
			total += w.reads[i].bytes()
		}
	}
	return total
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
