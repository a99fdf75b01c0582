package adaptive

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// CombineObjects adds a combining stage between a finished stage and its
// pending readers when reading the stage's map objects directly would cost
// too many GET requests: the two-level exchange of Lambada and Starling.
//
// Why. A finished stage P wrote M data objects (one per task that wrote
// rows), each holding a byte range per partition. A reading task fetches,
// from every object holding any of its partitions, its ranges in one merged
// ranged GET (more only past 16 MiB), so readers of R tasks in all issue up
// to M x R GETs, however few bytes each range holds: 1,000 map objects read
// by 1,000 tasks are 1M GETs ($0.40 at list price, and minutes of one S3
// prefix's ~5,500 GET/s). With a combining stage in between, K tasks each
// read a contiguous run of ~M/K of P's objects whole (one GET per object,
// M in all), and each writes one object holding the same partitions (same
// partitioning, same schema: 2 PUTs a task); the readers then issue at most
// K x R GETs.
//
// Trigger: a finished stage P (not itself a combining stage, so the rule
// fires once per exchange) has pending readers whose inputs have all
// finished (their task counts settled by split-skew and coalescing), and
// the GETs those readers would issue,
//
//	G = sum over their tasks of min(M, objects holding the task's partitions of P)
//
// (a task reading P whole counts M), exceed Config.GetBudget. Left out: a
// reader whose skew tasks split P's partitions by map output (combining
// merges the outputs it splits by). A reader that scans a table (one that
// reads a broadcast, say) reads P whole in each of its tasks, the table's
// splits: size-scans' count (TaskPlan.ScanTasks) or the static splits the
// driver measured (State.Scans); without either it is left out.
//
// K comes from the byte sizes and the budget. With T =
// Config.TargetPartitionBytes, the input coalescing gives a task, K = ceil(
// bytes(P) / T) tasks of the usual size, but no more than the budget allows
// the readers (floor(budget / R)), and no fewer than tasks of
// combineStretch x T (a combining task only streams: its memory is the
// shuffle writer's bounded buffer, so a bigger input costs time, not
// memory):
//
//	K = max(1, ceil(bytes(P) / (combineStretch x T)), min(ceil(bytes(P) / T), floor(budget / R)))
//
// The rule fires only when that at least halves the GETs, the combining
// stage's own counted, since the combining stage is one more round of
// writing and reading P's bytes:
//
//	2K <= M (each task merges two objects or more), and 2 (M + K x R) <= G.
//
// For example, with T = 64 MiB and the default budget of 10,000: M = 1,000
// objects holding 640 MiB, read by R = 500 tasks, cost G = 500,000 GETs; K
// = max(3, min(10, 20)) = 10, and the readers issue 5,000 GETs after the
// combining stage's 1,000. With 6,400 MiB, K = max(25, min(100, 20)) = 25:
// 12,500 GETs, over the budget but a fortieth of G, so the rule fires and
// says so. With 64 GiB in only M = 100 objects (G = 50,000), K = 256 > M/2:
// each reader's range of an object is ~1.3 MiB, not a small read, and the
// rule leaves them.
//
// Safe because the combining stage is a pass-through (an exchange read,
// plan.Node.SplitObjects, written with P's own partitioning), and the
// partitioning hash is a function of the row's keys: every row lands in the
// partition it was in, so each reader reads the same rows as before, from
// fewer objects. Each of P's objects is read by exactly one combining task.
type CombineObjects struct{}

func (CombineObjects) Name() string { return "combine-objects" }

func (CombineObjects) Apply(s *State) (string, error) {
	if s.Config.GetBudget <= 0 {
		return "", nil
	}
	var notes []string
	for _, p := range slices.Clone(s.Graph.Stages) {
		stats, done := s.Done[p.ID]
		if !done || stats == nil {
			continue
		}
		if _, combining := plan.SplitObjectsInput(p); combining {
			continue
		}
		m := stats.MapObjects()
		if m < 2 {
			continue
		}
		var readers []*plan.Stage
		var gets, tasks int64
		for _, c := range s.Graph.Stages {
			g, n, ok := s.readGets(c, p, m)
			if !ok {
				continue
			}
			readers = append(readers, c)
			gets += g
			tasks += n
		}
		if gets <= s.Config.GetBudget {
			continue
		}
		k := combineTasks(stats.Bytes, s.Config.TargetPartitionBytes, s.Config.GetBudget, tasks)
		after := int64(m) + k*tasks
		if 2*k > int64(m) || 2*after > gets {
			continue
		}
		c := s.combine(p, readers, int(k))
		ids := make([]string, len(readers))
		for i, r := range readers {
			ids[i] = fmt.Sprint(r.ID)
		}
		over := ""
		if k*tasks > s.Config.GetBudget {
			over = ", still over budget"
		}
		notes = append(notes, fmt.Sprintf("stage %d's %d map objects read by stage %s in %d tasks: ~%d GETs > budget %d; new stage %d combines them in %d tasks, ~%d GETs with its own%s",
			p.ID, m, strings.Join(ids, ","), tasks, gets, s.Config.GetBudget, c, k, after, over))
	}
	return strings.Join(notes, "; "), nil
}

// combineStretch is how many times the usual task input
// (Config.TargetPartitionBytes) a combining task may read to keep the
// readers within the GET budget.
const combineStretch = 4

// combineTasks returns K, the combining tasks for bytes read by readers of
// tasks tasks in all (see CombineObjects).
func combineTasks(bytes, target, budget, tasks int64) int64 {
	if target <= 0 {
		return 1
	}
	usual := (bytes + target - 1) / target
	fewest := (bytes + combineStretch*target - 1) / (combineStretch * target)
	return max(1, fewest, min(usual, budget/max(tasks, 1)))
}

// readGets returns the GETs stage c's tasks would issue reading finished
// stage p (m map objects) and its task count, or ok=false when c is not a
// reader the rule may redirect.
func (s *State) readGets(c, p *plan.Stage, m int) (gets, tasks int64, ok bool) {
	if !s.Pending(c.ID) || !slices.Contains(c.Inputs, p.ID) || !s.allDone(c.Inputs) {
		return 0, 0, false
	}
	if _, combining := plan.SplitObjectsInput(c); combining {
		return 0, 0, false
	}
	for _, t := range s.Tasks.Of(c.ID).Skew {
		if t.Input == p.ID {
			return 0, 0, false
		}
	}
	tasks, known := s.taskCount(c) // inlinescans.go
	if !known {
		return 0, 0, false
	}
	// A scan stage reads its other inputs whole (plan.Validate), in every
	// one of its tasks.
	if scans(c.Root) || p.Output.Kind != plan.PartitionHash || plan.WholeRead(c, p.ID) {
		return tasks * int64(m), tasks, true
	}
	objects := func(parts ...int) int64 {
		var n int64
		for _, q := range parts {
			n += int64(s.Done[p.ID].Partition(q).Objects)
		}
		return min(n, int64(m))
	}
	tp := s.Tasks.Of(c.ID)
	for _, g := range tp.Groups {
		gets += objects(g...)
	}
	for _, t := range tp.Skew {
		gets += objects(t.Part)
	}
	return gets, tasks, true
}

// scanTasks returns how many tasks pending scan stage id will run: the
// count size-scans chose, or one per static split of the table the driver
// measured; known=false when the driver measured nothing (static jobs).
func (s *State) scanTasks(id int) (n int64, known bool) {
	if k := s.Tasks.Of(id).ScanTasks; k > 0 {
		return int64(k), true
	}
	if size, ok := s.Scans[id]; ok && size.Splits > 0 {
		return int64(size.Splits), true
	}
	return 0, false
}

// combine inserts a stage splitting p's objects among k tasks, written with
// p's partitioning, and makes readers read it instead of p. It returns the
// new stage's id.
func (s *State) combine(p *plan.Stage, readers []*plan.Stage, k int) int {
	id := 0
	for _, x := range s.Graph.Stages {
		id = max(id, x.ID+1)
	}
	out := p.Output
	out.Keys = slices.Clone(out.Keys)
	s.Graph.Stages = append(s.Graph.Stages, &plan.Stage{ID: id, Inputs: []int{p.ID}, Output: out,
		Root: &plan.Node{Kind: plan.KindExchange, Stage: p.ID, Schema: slices.Clone(p.Root.Schema), Limit: -1,
			Whole: true, SplitObjects: true}})
	for _, r := range readers {
		plan.Walk(r.Root, func(n *plan.Node) {
			if n.Kind == plan.KindExchange && n.Stage == p.ID {
				n.Stage = id
			}
		})
		for i, in := range r.Inputs {
			if in == p.ID {
				r.Inputs[i] = id
			}
		}
	}
	s.Tasks.Edit(id).Combine = k
	return id
}
