package adaptive

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// SkewTask is one task of a split skewed partition: it reads partition
// Part of every hash input, but of input stage Input only the map outputs
// [Lo, Hi) (in the committed-object order of that partition).
type SkewTask struct {
	Part  int `json:"part"`
	Input int `json:"input"`
	Lo    int `json:"lo"`
	Hi    int `json:"hi"`
}

// SplitSkew splits skewed partitions of a stage's hash inputs.
//
// Trigger: every hash input of a pending stage has finished, and a
// partition holds more than Config.SkewFactor times the median partition's
// rows and more than Config.SkewMinBytes bytes. The partition's rows of one input
// X (the largest input that may be split) are divided into ranges of X's
// map outputs, one task per range; each such task reads the whole partition
// of the other inputs (they are replicated).
//
// Safe only when every row of X is processed independently of the other
// rows of X: X's exchange leaf must be plan.RowLocal under the stage's root
// (filters, projections, partial aggregations and hash joins with X on the
// probe side of a Splittable join); any other operator (a final or single
// aggregation, a sort, a limit, a right or full join) needs all of the
// partition in one task, and the rule leaves such stages alone.
type SplitSkew struct{}

func (SplitSkew) Name() string { return "split-skew" }

func (SplitSkew) Apply(s *State) (string, error) {
	if s.Config.SkewFactor <= 0 {
		return "", nil
	}
	var notes []string
	for _, st := range s.Graph.Stages {
		if !s.Pending(st.ID) || len(s.Tasks.Of(st.ID).Skew) > 0 {
			continue
		}
		ins := hashInputs(s.Graph, st)
		if len(ins) == 0 || !s.allDone(ins) {
			continue
		}
		var splittable []int
		for _, in := range ins {
			if leaf := plan.ExchangeLeaf(st.Root, in); leaf != nil && plan.RowLocal(st.Root, leaf) {
				splittable = append(splittable, in)
			}
		}
		if len(splittable) == 0 {
			continue
		}
		// Skew is judged on rows, the measure of a task's work: compressed
		// bytes hide it (a repeated key compresses very well).
		n := partitionCount(s.Graph, ins)
		bytes := make([]int64, n)
		rows := make([]int64, n)
		var nonEmpty []int64
		for p := range bytes {
			for _, in := range ins {
				ps := s.Done[in].Partition(p)
				bytes[p] += ps.Bytes
				rows[p] += ps.Rows
			}
			if rows[p] > 0 {
				nonEmpty = append(nonEmpty, rows[p])
			}
		}
		if len(nonEmpty) < 2 {
			continue
		}
		sort.Slice(nonEmpty, func(i, j int) bool { return nonEmpty[i] < nonEmpty[j] })
		median := nonEmpty[len(nonEmpty)/2]
		var tasks []SkewTask
		for p, r := range rows {
			if float64(r) <= s.Config.SkewFactor*float64(median) || bytes[p] <= s.Config.SkewMinBytes {
				continue
			}
			// Split the splittable input with the most rows in p.
			x, xs := -1, PartitionStats{}
			for _, in := range splittable {
				if ps := s.Done[in].Partition(p); x < 0 || ps.Rows > xs.Rows {
					x, xs = in, ps
				}
			}
			k := int((xs.Rows + median - 1) / max(median, 1))
			k = min(k, xs.Objects, 64)
			if k < 2 {
				continue
			}
			for i := 0; i < k; i++ {
				tasks = append(tasks, SkewTask{Part: p, Input: x, Lo: i * xs.Objects / k, Hi: (i + 1) * xs.Objects / k})
			}
			notes = append(notes, fmt.Sprintf("stage %d: partition %d (%d rows, median %d) split into %d tasks over stage %d's map outputs",
				st.ID, p, r, median, k, x))
		}
		if len(tasks) == 0 {
			continue
		}
		s.Tasks.Edit(st.ID).Skew = tasks
		// The split partitions leave the ordinary groups.
		split := map[int]bool{}
		for _, t := range tasks {
			split[t.Part] = true
		}
		var groups [][]int
		for _, g := range s.Tasks.Of(st.ID).Groups {
			var keep []int
			for _, p := range g {
				if !split[p] {
					keep = append(keep, p)
				}
			}
			if len(keep) > 0 {
				groups = append(groups, keep)
			}
		}
		s.Tasks.Edit(st.ID).Groups = groups
	}
	return strings.Join(notes, "; "), nil
}

func (s *State) allDone(ids []int) bool {
	for _, id := range ids {
		if _, ok := s.Done[id]; !ok {
			return false
		}
	}
	return true
}

func partitionCount(g *plan.Graph, ins []int) int {
	n := 0
	for _, in := range ins {
		if c := g.Stage(in).Output.Count; c > n {
			n = c
		}
	}
	return n
}
