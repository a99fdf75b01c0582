package adaptive

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
)

// TaskPlan is everything that decides how one pending stage becomes tasks
// (as Ballista keeps a stage's decisions with its ExecutionStage): the
// rules write it, the driver stores it with the job as one record and
// builds the stage's tasks from it in one place (coordinator's tasksOf).
//
// A new way to shape a stage's tasks is a field here, the rule that sets
// it, and the lines of the task builder that read it. What a stage's
// fragment computes (a runtime filter on its scan, the key summaries its
// tasks write) is not here but in the fragment (plan.Stage), which the
// functions read.
type TaskPlan struct {
	// Groups holds, for a stage that reads exchanges, the partitions each
	// of its tasks reads (one task per group). A stage without exchange
	// inputs (a scan stage) has none (nil).
	Groups [][]int `json:"groups"`
	// Skew holds the tasks of the stage's split skewed partitions (which
	// then appear in no group of Groups).
	Skew []SkewTask `json:"skew,omitempty"`
	// Combine, for a stage that splits an input's objects among its tasks
	// (plan.Node.SplitObjects: a stage combine-objects added), is how many
	// tasks it runs; each task reads a contiguous run of about 1/n of the
	// objects. 0: not a combining stage.
	Combine int `json:"combine,omitempty"`
	// ScanTasks, for a scan stage size-scans sized, is how many tasks it
	// runs; each reads a contiguous run of about 1/n of the table's row
	// groups. 0: a task per static split.
	ScanTasks int `json:"scan_tasks,omitempty"`
	// FunctionMemory is the size of the functions that run the stage's
	// tasks, in bytes, as size-functions chose it (0: the configured
	// --function-memory).
	FunctionMemory int64 `json:"function_memory,omitempty"`
	// Skipped: the stage will not run (its output is empty, or nothing
	// needs it), for Reason.
	Skipped bool   `json:"skipped,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Clone returns a deep copy of t.
func (t *TaskPlan) Clone() *TaskPlan {
	c := *t
	if t.Groups != nil {
		c.Groups = make([][]int, len(t.Groups))
		for i, g := range t.Groups {
			c.Groups[i] = slices.Clone(g)
		}
	}
	c.Skew = slices.Clone(t.Skew)
	return &c
}

// Tasks returns how many tasks the plan assigns, and whether it assigns
// them at all (a stage reading exchanges, a combining stage, a scan stage
// size-scans sized: at most that many, fewer row groups make fewer). A
// skipped stage has none.
func (t TaskPlan) Tasks() (int, bool) {
	switch {
	case t.Skipped:
		return 0, false
	case t.ScanTasks > 0:
		return t.ScanTasks, true
	case t.Combine > 0:
		return t.Combine, true
	case t.Groups != nil:
		return len(t.Groups) + len(t.Skew), true
	}
	return 0, false
}

// ScanSplits cuts the files a scan stage reads into its tasks, as its
// task plan says: ScanTasks tasks of contiguous row groups when size-scans
// sized the stage (SplitsInto), otherwise static splits of splitBytes
// (Splits). Each split carries its file's partition values. A table
// with no row groups still runs the stage's fragment once: one task that
// reads nothing.
func (t TaskPlan) ScanSplits(files []layout.File, values map[string][]plan.Value, splitBytes int64) [][]ScanSplit {
	var tasks [][]ScanSplit
	if t.ScanTasks > 0 {
		tasks = SplitsInto(files, t.ScanTasks)
	} else {
		tasks = Splits(files, splitBytes)
	}
	for _, splits := range tasks {
		for i := range splits {
			splits[i].Partition = values[splits[i].Key]
		}
	}
	if len(tasks) == 0 {
		tasks = [][]ScanSplit{nil}
	}
	return tasks
}

// TaskPlans holds the task plan of every stage that has one, by stage id.
type TaskPlans map[int]*TaskPlan

// Of returns stage id's task plan, the zero plan when it has none. It is
// for reading: Edit returns the plan to change.
func (p TaskPlans) Of(id int) TaskPlan {
	if t := p[id]; t != nil {
		return *t
	}
	return TaskPlan{}
}

// Edit returns stage id's task plan to change, adding an empty one.
func (p TaskPlans) Edit(id int) *TaskPlan {
	t := p[id]
	if t == nil {
		t = &TaskPlan{}
		p[id] = t
	}
	return t
}

// Skipped returns the skipped stages and why.
func (p TaskPlans) Skipped() map[int]string {
	out := map[int]string{}
	for id, t := range p {
		if t.Skipped {
			out[id] = t.Reason
		}
	}
	return out
}

// Counts returns the task count of every stage whose tasks the plans
// assign (TaskPlan.Tasks).
func (p TaskPlans) Counts() map[int]int {
	out := make(map[int]int, len(p))
	for id, t := range p {
		if n, ok := t.Tasks(); ok {
			out[id] = n
		}
	}
	return out
}

// Clone deep-copies every plan (never nil).
func (p TaskPlans) Clone() TaskPlans {
	c := make(TaskPlans, len(p))
	for id, t := range p {
		c[id] = t.Clone()
	}
	return c
}

// InitialTaskPlans returns the task plans of a job at submit: one task
// per partition for every stage that reads exchanges (InitialGroups).
func InitialTaskPlans(g *plan.Graph) TaskPlans {
	out := TaskPlans{}
	for id, groups := range InitialGroups(g) {
		out[id] = &TaskPlan{Groups: groups}
	}
	return out
}

// LegacyTaskPlans builds task plans from the per-field maps job records
// held before TaskPlan (groups, skew, combine, scan_tasks, skipped), so a
// job written by an older coordinator resumes unchanged.
func LegacyTaskPlans(groups map[int][][]int, skew map[int][]SkewTask, combine, scanTasks map[int]int, skipped map[int]string) TaskPlans {
	p := TaskPlans{}
	for id, g := range groups {
		p.Edit(id).Groups = g
	}
	for id, ts := range skew {
		p.Edit(id).Skew = ts
	}
	for id, n := range combine {
		p.Edit(id).Combine = n
	}
	for id, n := range scanTasks {
		p.Edit(id).ScanTasks = n
	}
	for id, why := range skipped {
		t := p.Edit(id)
		t.Skipped, t.Reason = true, why
	}
	return p
}

// describeTasks is stage id's line of the "tasks" section of
// State.FormatPlan: how its task plan splits it into tasks.
func (s *State) describeTasks(id int) string {
	var b strings.Builder
	tp := s.Tasks.Of(id)
	if tp.Skipped {
		fmt.Fprintf(&b, "  stage %d: skipped (%s)\n", id, tp.Reason)
	} else if n := tp.Combine; n > 0 {
		in, _ := plan.SplitObjectsInput(s.Graph.Stage(id))
		m := 0
		if st := s.Done[in]; st != nil {
			m = st.MapObjects()
		}
		fmt.Fprintf(&b, "  stage %d: %d tasks over the %d map objects of stage %d\n", id, n, m, in)
	} else if n := tp.ScanTasks; n > 0 {
		fmt.Fprintf(&b, "  stage %d: %d tasks over the scan's row groups\n", id, n)
	} else if gr := tp.Groups; gr != nil && !ScanStage(s.Graph.Stage(id)) {
		// (A scan stage that reads a broadcast has a group, but its
		// tasks are its splits.)
		fmt.Fprintf(&b, "  stage %d: %d tasks, partitions %v\n", id, len(gr)+len(tp.Skew), gr)
		for _, t := range tp.Skew {
			fmt.Fprintf(&b, "    skew task: partition %d, map outputs [%d,%d) of stage %d\n", t.Part, t.Lo, t.Hi, t.Input)
		}
	} else if ScanStage(s.Graph.Stage(id)) {
		fmt.Fprintf(&b, "  stage %d: one task per scan split\n", id)
	} else {
		fmt.Fprintf(&b, "  stage %d: 1 task (no inputs split among tasks)\n", id)
	}
	if tp.FunctionMemory > 0 && !tp.Skipped {
		fmt.Fprintf(&b, "    on functions of %d MiB\n", tp.FunctionMemory>>20)
	}
	return b.String()
}
