package adaptive

import (
	"fmt"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// SelectJoin picks each partitioned join's strategy from the real sizes of
// its inputs.
//
// Broadcast: the build side of a partitioned join (a hash exchange from a
// finished stage B) takes at most Config.BroadcastBytes in memory (rows
// times the schema's nominal row width: compressed shuffle bytes understate
// what every probe task must hold and hash) and the probe side's
// stage A has not started. The join moves into A: A's tasks join their rows
// with all of B (a Whole read) and A's shuffle carries the join result,
// partitioned on the same probe keys, so the join stage's other operators
// still see rows partitioned as before. The join stage reads A only and no
// longer reads B. For a selective build side A shuffles far fewer rows, and
// the join stage's tasks build no hash table. Only join types that keep
// rows per probe row (inner, left, semi, anti) can be broadcast this way.
//
// Build side: when both sides of an inner join have finished and the probe
// side turned out smaller than the build side, the two are swapped so the
// hash table is built over the smaller one; a projection restores the
// column order. A semi or anti join whose preserved (probe) side turned out
// a quarter of its subquery side or less becomes the right semi or right
// anti join with the sides swapped, and a right semi or right anti join
// whose build side turned out four times its probe side or more goes
// back: the same rows and columns, the hash table on the smaller side.
//
// Safe because the join's result does not depend on which task evaluates
// it or which side is hashed: every probe row meets every build row of its
// key in exactly one task.
type SelectJoin struct{}

func (SelectJoin) Name() string { return "select-join" }

func (SelectJoin) Apply(s *State) (string, error) {
	var notes []string
	for _, st := range s.Graph.Stages {
		if !s.Pending(st.ID) {
			continue
		}
		before := len(notes)
		st.Root = rewriteJoins(s, st, st.Root, &notes)
		if len(notes) > before {
			reorderInputs(st) // a swap reads the sides the other way round
		}
	}
	return strings.Join(notes, "; "), nil
}

func rewriteJoins(s *State, st *plan.Stage, n *plan.Node, notes *[]string) *plan.Node {
	for i, c := range n.Inputs {
		n.Inputs[i] = rewriteJoins(s, st, c, notes)
	}
	if n.Kind != plan.KindHashJoin || n.Join == nil {
		return n
	}
	probe, build := n.Inputs[0], n.Inputs[1]
	if probe.Kind != plan.KindExchange || build.Kind != plan.KindExchange || probe.Whole || build.Whole {
		return n
	}
	a, b := s.Graph.Stage(probe.Stage), s.Graph.Stage(build.Stage)
	if a.Output.Kind != plan.PartitionHash || b.Output.Kind != plan.PartitionHash {
		return n
	}
	bStats, bDone := s.Done[b.ID]
	aStats, aDone := s.Done[a.ID]
	switch t := n.Join.Type; {
	case bDone && s.Pending(a.ID) && len(s.Graph.Consumers(a.ID)) == 1 && s.broadcastable(MemoryBytes(bStats, build.Schema)) && t.PerProbeRow():
		// (The join moves into A: only when this stage is A's one reader;
		// a stage reused by several readers keeps its output.)
		a.Root = &plan.Node{Kind: plan.KindHashJoin, Schema: n.Schema, Join: n.Join, Limit: -1,
			Inputs: []*plan.Node{a.Root, {Kind: plan.KindExchange, Stage: b.ID, Schema: build.Schema, Whole: true, Limit: -1}}}
		a.Inputs = append(a.Inputs, b.ID)
		out := &plan.Node{Kind: plan.KindExchange, Stage: a.ID, Schema: n.Schema, Limit: -1}
		if !readsStage(st.Root, b.ID, n) {
			st.Inputs = removeInt(st.Inputs, b.ID)
		}
		*notes = append(*notes, fmt.Sprintf("stage %d: %s join with stage %d (%d rows, ~%d bytes in memory <= %d) broadcast into stage %d",
			st.ID, t, b.ID, bStats.Rows, MemoryBytes(bStats, build.Schema), s.Config.BroadcastBytes, a.ID))
		return out
	case aDone && bDone && !n.Join.NullAware && (t == plan.JoinSemi || t == plan.JoinAnti) && aStats.Bytes*semiSwapRatio < bStats.Bytes,
		aDone && bDone && t.BuildOnly() && bStats.Bytes > aStats.Bytes*semiSwapRatio:
		*notes = append(*notes, fmt.Sprintf("stage %d: %s join's build side swapped to stage %d (%d bytes, the other %d)",
			st.ID, t, a.ID, aStats.Bytes, bStats.Bytes))
		return swapSemi(n)
	case aDone && bDone && n.Join.Type == plan.JoinInner && aStats.Bytes < bStats.Bytes:
		*notes = append(*notes, fmt.Sprintf("stage %d: build side swapped to stage %d (%d bytes < %d)",
			st.ID, a.ID, aStats.Bytes, bStats.Bytes))
		return swapSides(n)
	}
	return n
}

// broadcastable reports whether a side of mem bytes may be broadcast: under
// BroadcastBytes, and never above UnbroadcastBytes (so that the two rules
// cannot undo each other when configured inconsistently).
func (s *State) broadcastable(mem int64) bool {
	if s.Config.UnbroadcastBytes > 0 && mem > s.Config.UnbroadcastBytes {
		return false
	}
	return mem <= s.Config.BroadcastBytes
}

// swapSides turns probe ⋈ build into build ⋈ probe with a projection that
// restores the original column order.
func swapSides(n *plan.Node) *plan.Node {
	probe, build := n.Inputs[0], n.Inputs[1]
	np, nb := len(probe.Schema), len(build.Schema)
	j := *n.Join
	j.LeftKeys, j.RightKeys = n.Join.RightKeys, n.Join.LeftKeys
	if j.Filter != nil {
		j.Filter = remapColumns(j.Filter, func(i int) int {
			if i < np {
				return i + nb
			}
			return i - np
		})
	}
	schema := append(append(plan.Schema{}, build.Schema...), probe.Schema...)
	joined := &plan.Node{Kind: plan.KindHashJoin, Schema: schema, Join: &j, Inputs: []*plan.Node{build, probe}, Limit: -1}
	exprs := make([]*plan.Expr, 0, np+nb)
	for i, f := range probe.Schema {
		exprs = append(exprs, plan.Column(nb+i, f.Name, f.Type))
	}
	for i, f := range build.Schema {
		exprs = append(exprs, plan.Column(i, f.Name, f.Type))
	}
	return &plan.Node{Kind: plan.KindProject, Schema: n.Schema, Exprs: exprs, Inputs: []*plan.Node{joined}, Limit: -1}
}

// semiSwapRatio is how many times the bytes of one side of a semi or
// anti join the other must have for select-join to build on the first
// (planner.rightSemiRatio at planning).
const semiSwapRatio = 4

// swapSemi turns a semi or anti join into the right semi or right anti
// join with its sides swapped, and back: the same output rows and
// columns (the preserved side's), the hash table on the other side.
func swapSemi(n *plan.Node) *plan.Node {
	probe, build := n.Inputs[0], n.Inputs[1]
	np, nb := len(probe.Schema), len(build.Schema)
	j := *n.Join
	j.LeftKeys, j.RightKeys = n.Join.RightKeys, n.Join.LeftKeys
	switch n.Join.Type {
	case plan.JoinSemi:
		j.Type = plan.JoinRightSemi
	case plan.JoinAnti:
		j.Type = plan.JoinRightAnti
	case plan.JoinRightSemi:
		j.Type = plan.JoinSemi
	case plan.JoinRightAnti:
		j.Type = plan.JoinAnti
	}
	if j.Filter != nil {
		j.Filter = remapColumns(j.Filter, func(i int) int {
			if i < np {
				return i + nb
			}
			return i - np
		})
	}
	return &plan.Node{Kind: plan.KindHashJoin, Schema: n.Schema, Join: &j, Inputs: []*plan.Node{build, probe}, Limit: n.Limit}
}

// reorderInputs lists st's inputs in the order its exchanges are read
// (after the tree under it changed).
func reorderInputs(st *plan.Stage) {
	var ins []int
	plan.Walk(st.Root, func(x *plan.Node) {
		if x.Kind == plan.KindExchange {
			ins = append(ins, x.Stage)
		}
	})
	st.Inputs = ins
}

func remapColumns(e *plan.Expr, f func(int) int) *plan.Expr {
	c := *e
	if c.Op == plan.OpColumn {
		c.Col = f(c.Col)
	}
	c.Args = make([]*plan.Expr, len(e.Args))
	for i, a := range e.Args {
		c.Args[i] = remapColumns(a, f)
	}
	return &c
}

// readsStage reports whether the tree under root, other than within skip,
// has an exchange leaf reading stage id.
func readsStage(root *plan.Node, id int, skip *plan.Node) bool {
	found := false
	var walk func(*plan.Node)
	walk = func(n *plan.Node) {
		if n == skip {
			return
		}
		if n.Kind == plan.KindExchange && n.Stage == id {
			found = true
		}
		for _, c := range n.Inputs {
			walk(c)
		}
	}
	walk(root)
	return found
}

// MemoryBytes estimates the in-memory size of a stage output: rows times
// the nominal width of its schema (8 bytes per fixed-width value, 24 per
// string, plus the string's share of the compressed bytes as a floor).
func MemoryBytes(st *StageStats, schema plan.Schema) int64 {
	width := int64(0)
	for _, f := range schema {
		switch f.Type.ID {
		case plan.String:
			width += 24
		case plan.Bool:
			width++
		default:
			width += 8
		}
	}
	return max(st.Rows*width, st.Bytes)
}

func removeInt(xs []int, x int) []int {
	out := xs[:0:0]
	for _, y := range xs {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}
