package adaptive

import (
	"fmt"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// CoalescePartitions packs adjacent small shuffle partitions into one task.
//
// Trigger: every hash-partitioned input of a pending stage has finished.
// Partitions are taken in order and packed while the bytes of the group
// (summed over all hash inputs, so the sides of a join stay aligned) stay
// within Config.TargetPartitionBytes; a partition that is empty in every
// input gets no task at all. Fewer tasks means fewer functions invoked.
// With Config.Parallelism set, the target drops to the stage's bytes over
// the parallelism (not below Config.MinPartitionBytes), so that a stage
// whose input fits one target still runs on every slot there is: fewer
// functions must not mean a longer wall time.
//
// Memory bound: compressed shuffle bytes understate what a task holds.
// Where the stage's operators hold an input's rows in memory (a final or
// single aggregate's groups, a join's build side, a full sort, a window:
// heldRowBytes), a partition also weighs its rows times their in-memory
// width plus a hash table's per-row overhead. When those rows over the
// stage come to more than a quarter of Config.FunctionMemory per task
// (half the task's operator budget) in fewer groups than the byte target
// gives, the stage is cut into that many groups balanced by that weight
// instead. TPC-H Q18 at SF 10 on 512 MiB functions: 15 M partial groups
// in 113 MB of shuffle went to 2 tasks of 7.5 M groups each, which
// spilled 349 MiB and took 44 s; a quarter of 512 MiB per task makes 7.
//
// Safe because a task reading partitions {p, q} computes exactly the union
// of what tasks for p and for q would: rows of one key never span groups.
type CoalescePartitions struct{}

func (CoalescePartitions) Name() string { return "coalesce-partitions" }

func (CoalescePartitions) Apply(s *State) (string, error) {
	var notes []string
	for _, st := range s.Graph.Stages {
		if !s.Pending(st.ID) {
			continue
		}
		ins := hashInputs(s.Graph, st)
		if len(ins) == 0 {
			continue
		}
		ready := true
		for _, in := range ins {
			if _, ok := s.Done[in]; !ok {
				ready = false
			}
		}
		if !ready {
			continue
		}
		n := 0
		for _, in := range ins {
			if c := s.Graph.Stage(in).Output.Count; c > n {
				n = c
			}
		}
		split := map[int]bool{}
		for _, t := range s.Tasks.Of(st.ID).Skew {
			split[t.Part] = true
		}
		var total int64
		for p := 0; p < n; p++ {
			if split[p] {
				continue
			}
			for _, in := range ins {
				total += s.Done[in].Partition(p).Bytes
			}
		}
		target := s.Config.coalesceTarget(total)
		// When the parallelism floor lowered the target, the stage is cut
		// into k balanced groups: packing greedily to a target of exactly
		// total/k leaves a remainder that makes k+1 tasks.
		balance := target < s.Config.TargetPartitionBytes
		k := (total + target - 1) / max(target, 1)
		// The memory bound (see the type's comment): weigh partitions by
		// the memory their held rows take when that needs more groups.
		held := heldRowBytes(st, ins)
		var weigh func(p int) int64 // nil: partitions weigh their bytes
		memNote := ""
		if memCap := s.Config.FunctionMemory / 4; memCap > 0 && len(held) > 0 {
			mem := func(p int) int64 {
				var m int64
				for _, in := range ins {
					ps := s.Done[in].Partition(p)
					if w, ok := held[in]; ok {
						m += max(ps.Rows*w, ps.Bytes)
					}
				}
				return m
			}
			var totalMem int64
			for p := 0; p < n; p++ {
				if !split[p] {
					totalMem += mem(p)
				}
			}
			if km := (totalMem + memCap - 1) / memCap; km > k && km > 1 {
				balance, k, total, weigh = true, km, totalMem, mem
				memNote = fmt.Sprintf(", held rows ~%d bytes in memory, at most %d a task", totalMem, memCap)
			}
		}
		var seen, curGroup int64
		var groups [][]int
		var cur []int
		var curBytes int64
		for p := 0; p < n; p++ {
			if split[p] {
				continue // split-skew runs this partition in several tasks
			}
			var b, rows int64
			for _, in := range ins {
				ps := s.Done[in].Partition(p)
				b += ps.Bytes
				rows += ps.Rows
			}
			if b == 0 && rows == 0 {
				continue
			}
			if balance {
				// Group by where the partition's middle weight falls
				// among k equal shares of the total: k contiguous groups
				// of about total/k each.
				if weigh != nil {
					b = weigh(p)
				}
				g := min(k-1, (seen+b/2)*k/max(total, 1))
				if len(cur) > 0 && g != curGroup {
					groups = append(groups, cur)
					cur = nil
				}
				curGroup = g
				seen += b
			} else if len(cur) > 0 && curBytes+b > target {
				groups = append(groups, cur)
				cur, curBytes = nil, 0
			}
			cur = append(cur, p)
			curBytes += b
		}
		if len(cur) > 0 {
			groups = append(groups, cur)
		}
		if len(groups) == 0 && len(split) == 0 {
			continue // every partition empty: propagate-empty's business
		}
		if equalGroups(groups, s.Tasks.Of(st.ID).Groups) {
			continue
		}
		before := len(s.Tasks.Of(st.ID).Groups)
		s.Tasks.Edit(st.ID).Groups = groups
		notes = append(notes, fmt.Sprintf("stage %d: %d partitions -> %d tasks (target %d bytes%s)",
			st.ID, before, len(groups), target, memNote))
	}
	return strings.Join(notes, "; "), nil
}

func equalGroups(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

// heldRowOverhead is what a held row costs beyond its values: a hash
// table's slot and stored hash, a group id, and the slack of growing
// arrays (function/exec's groupTable and join build).
const heldRowOverhead = 32

// heldRowBytes returns, for each of the hash inputs ins of st whose rows
// an operator of the stage holds in memory, the bytes one such row takes
// there: its values' widths (MemoryBytes' nominal widths, 16 for a 128-bit
// decimal) plus heldRowOverhead. An input is held when its exchange
// reaches, through operators that pass rows one by one (filters,
// projections, UNION ALL), a final or single aggregate with group keys,
// the build side of a join, a full sort or a window. Rows that stream
// through a join's probe side or a partial aggregate (which emits its
// groups when over budget) are not.
func heldRowBytes(st *plan.Stage, ins []int) map[int]int64 {
	want := map[int]bool{}
	for _, in := range ins {
		want[in] = true
	}
	out := map[int]int64{}
	var walk func(n *plan.Node, held bool)
	walk = func(n *plan.Node, held bool) {
		switch n.Kind {
		case plan.KindExchange:
			if held && want[n.Stage] && !n.Whole {
				out[n.Stage] = max(out[n.Stage], rowWidth(n.Schema)+heldRowOverhead)
			}
		case plan.KindFilter, plan.KindProject, plan.KindUnion:
			for _, c := range n.Inputs {
				walk(c, held)
			}
		case plan.KindAggregate:
			h := n.Aggregate != nil && n.Aggregate.Mode != plan.AggPartial && len(n.Aggregate.GroupBy) > 0
			for _, c := range n.Inputs {
				walk(c, h)
			}
		case plan.KindHashJoin, plan.KindCrossJoin:
			for i, c := range n.Inputs {
				walk(c, i == 1)
			}
		case plan.KindSort:
			for _, c := range n.Inputs {
				walk(c, n.Limit < 0)
			}
		case plan.KindWindow:
			for _, c := range n.Inputs {
				walk(c, true)
			}
		default:
			for _, c := range n.Inputs {
				walk(c, false)
			}
		}
	}
	if st.Root != nil {
		walk(st.Root, false)
	}
	return out
}

// rowWidth is the nominal in-memory width of a row of schema: 8 bytes a
// fixed-width value, 16 a 128-bit decimal, 1 a bool, 24 a string or
// nested value (its header; the bytes themselves are floored by the
// compressed size where it is used).
func rowWidth(schema plan.Schema) int64 {
	var w int64
	for _, f := range schema {
		switch {
		case f.Type.ID == plan.Bool:
			w++
		case f.Type.Wide():
			w += 16
		case f.Type.ID == plan.String, f.Type.ID == plan.List, f.Type.ID == plan.Struct, f.Type.ID == plan.Map:
			w += 24
		default:
			w += 8
		}
	}
	return w
}
