package adaptive

import (
	"fmt"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// Unbroadcast turns a broadcast join whose build side came back big into a
// partitioned join, adding two stages to the running plan.
//
// Trigger: a pending stage P holds a hash join whose build side reads a
// finished broadcast stage B that takes more than Config.UnbroadcastBytes
// in memory (the planner's estimate was far off), the join keys are plain
// columns of equal types on both sides, and the rows of the join reach P's
// root only through row-local operators (so P's own output does not depend
// on how its input is partitioned). Then the probe side of the join moves
// into a new stage P1 hash-partitioned on the probe keys, a new stage B2
// repartitions B on the build keys, and P joins partition by partition.
// Every task of P then holds 1/N of B instead of all of it.
//
// Safe because a partitioned join computes the same rows as a broadcast
// join for these join types (inner, left, semi, anti): every probe row meets
// every build row of its key, in exactly one task.
type Unbroadcast struct{}

func (Unbroadcast) Name() string { return "unbroadcast" }

func (Unbroadcast) Apply(s *State) (string, error) {
	if s.Config.UnbroadcastBytes <= 0 {
		return "", nil
	}
	var notes []string
	for _, st := range append([]*plan.Stage(nil), s.Graph.Stages...) {
		if !s.Pending(st.ID) {
			continue
		}
		var target *plan.Node
		plan.Walk(st.Root, func(n *plan.Node) {
			if target == nil && s.unbroadcastable(st, n) {
				target = n
			}
		})
		if target == nil {
			continue
		}
		notes = append(notes, s.unbroadcast(st, target))
	}
	return strings.Join(notes, "; "), nil
}

func (s *State) unbroadcastable(st *plan.Stage, n *plan.Node) bool {
	if n.Kind != plan.KindHashJoin || n.Join == nil || len(n.Inputs) != 2 {
		return false
	}
	build := n.Inputs[1]
	if build.Kind != plan.KindExchange {
		return false
	}
	b := s.Graph.Stage(build.Stage)
	stats, done := s.Done[b.ID]
	if !done || b.Output.Kind != plan.PartitionBroadcast || MemoryBytes(stats, build.Schema) <= s.Config.UnbroadcastBytes {
		return false
	}
	if !n.Join.Splittable() || len(n.Join.LeftKeys) == 0 {
		return false
	}
	for i, l := range n.Join.LeftKeys {
		r := n.Join.RightKeys[i]
		if l.Op != plan.OpColumn || r.Op != plan.OpColumn || l.Type != r.Type {
			return false
		}
	}
	return plan.RowLocal(st.Root, n)
}

func (s *State) unbroadcast(st *plan.Stage, n *plan.Node) string {
	g := s.Graph
	build := n.Inputs[1]
	b := g.Stage(build.Stage)
	count := 0
	for _, x := range g.Stages {
		if x.Output.Kind == plan.PartitionHash && x.Output.Count > count {
			count = x.Output.Count
		}
	}
	if count == 0 {
		count = 8
	}
	next := 0
	for _, x := range g.Stages {
		next = max(next, x.ID+1)
	}
	keys := func(es []*plan.Expr) []int {
		out := make([]int, len(es))
		for i, e := range es {
			out[i] = e.Col
		}
		return out
	}
	probe := n.Inputs[0]
	p1 := &plan.Stage{ID: next, Root: probe, Inputs: readStages(probe),
		Output: plan.Partitioning{Kind: plan.PartitionHash, Keys: keys(n.Join.LeftKeys), Count: count}}
	b2 := &plan.Stage{ID: next + 1, Root: &plan.Node{Kind: plan.KindExchange, Stage: b.ID, Schema: build.Schema, Limit: -1},
		Inputs: []int{b.ID}, Output: plan.Partitioning{Kind: plan.PartitionHash, Keys: keys(n.Join.RightKeys), Count: count}}
	g.Stages = append(g.Stages, p1, b2)
	n.Inputs = []*plan.Node{
		{Kind: plan.KindExchange, Stage: p1.ID, Schema: probe.Schema, Limit: -1},
		{Kind: plan.KindExchange, Stage: b2.ID, Schema: build.Schema, Limit: -1},
	}
	st.Inputs = readStages(st.Root)
	// P1 takes over the partitioned inputs P had; P now reads P1 and B2
	// partition by partition.
	if old := s.Tasks.Of(st.ID).Groups; old != nil && len(p1.Inputs) > 0 {
		s.Tasks.Edit(p1.ID).Groups = old
	}
	groups := make([][]int, count)
	for p := range groups {
		groups[p] = []int{p}
	}
	s.Tasks.Edit(st.ID).Groups = groups
	return fmt.Sprintf("stage %d: broadcast side stage %d is %d rows (~%d bytes in memory > %d): join partitioned, new stages %d (probe side) and %d (build side)",
		st.ID, b.ID, s.Done[b.ID].Rows, MemoryBytes(s.Done[b.ID], build.Schema), s.Config.UnbroadcastBytes, p1.ID, b2.ID)
}
