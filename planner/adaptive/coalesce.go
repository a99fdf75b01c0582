package adaptive

import (
	"fmt"
	"strings"
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
				// Group by where the partition's middle byte falls among
				// k equal shares of the total: k contiguous groups of
				// about total/k bytes each.
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
		notes = append(notes, fmt.Sprintf("stage %d: %d partitions -> %d tasks (target %d bytes)",
			st.ID, before, len(groups), target))
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
