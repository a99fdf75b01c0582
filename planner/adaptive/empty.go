package adaptive

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// PropagateEmpty turns the consumers of empty inputs into empty results.
//
// Trigger: a finished (or skipped) stage produced zero rows. Every exchange
// leaf reading it becomes an Empty leaf, and operators over an empty input
// that can only produce no rows (filter, project, sort, limit, grouped
// aggregation) collapse into Empty too. A stage whose whole fragment
// collapses is skipped: no function is invoked for it, and its own consumers
// see an empty input in turn. A stage all of whose consumers are skipped is
// skipped as well, since nothing would read what it writes.
//
// A running stage whose consumers are all skipped is marked skipped too,
// and the driver cancels its in-flight tasks (rule 5 of the brief, "cancel
// redundant work"): e.g. the build side of an inner join came back empty
// while the probe side still runs.
//
// Safe because each collapse is exact SQL semantics: an aggregation without
// GROUP BY over no rows still yields one row, so it is kept and runs; a
// left join keeps its probe rows when the build side is empty.
type PropagateEmpty struct{}

func (PropagateEmpty) Name() string { return "propagate-empty" }

func (PropagateEmpty) Apply(s *State) (string, error) {
	var notes []string
	for changed := true; changed; {
		changed = false
		for _, st := range s.Graph.Stages {
			if !s.Pending(st.ID) {
				continue
			}
			var empty []int
			for _, in := range st.Inputs {
				if s.isEmpty(in) {
					empty = append(empty, in)
				}
			}
			if len(empty) > 0 && replaceExchanges(st.Root, empty) {
				st.Root = collapse(st.Root)
				st.Inputs = readStages(st.Root)
				changed = true
				if st.Root.Kind == plan.KindEmpty {
					s.skip(st.ID, fmt.Sprintf("input stage %s is empty", joinInts(empty)))
					notes = append(notes, fmt.Sprintf("stage %d skipped: input stage %s empty", st.ID, joinInts(empty)))
				} else {
					notes = append(notes, fmt.Sprintf("stage %d: input stage %s empty, fragment reduced", st.ID, joinInts(empty)))
					if !s.readsHashInput(st) {
						s.Tasks.Edit(st.ID).Groups = [][]int{{0}} // nothing left to partition by: one task
					}
				}
			}
		}
		// Stages whose every consumer is skipped are useless, including
		// running ones: the driver cancels those.
		for _, st := range s.Graph.Stages {
			_, done := s.Done[st.ID]
			if done || s.Skipped(st.ID) || st.ID == s.Graph.Result {
				continue
			}
			// A stage nothing reads any more (its readers collapsed) or
			// whose every reader is skipped is useless.
			cons := s.Graph.Consumers(st.ID)
			all := true
			for _, c := range cons {
				if !s.Skipped(c) {
					all = false
				}
			}
			if all {
				what := "skipped"
				if s.Running[st.ID] {
					what = "cancelled"
				}
				s.skip(st.ID, "no consumer needs its output")
				notes = append(notes, fmt.Sprintf("stage %d %s: every consumer skipped", st.ID, what))
				changed = true
			}
		}
	}
	return strings.Join(notes, "; "), nil
}

// readsHashInput reports whether st still has an exchange leaf reading a
// non-empty hash-partitioned stage.
func (s *State) readsHashInput(st *plan.Stage) bool {
	found := false
	plan.Walk(st.Root, func(n *plan.Node) {
		if n.Kind == plan.KindExchange && !s.isEmpty(n.Stage) &&
			s.Graph.Stage(n.Stage).Output.Kind == plan.PartitionHash {
			found = true
		}
	})
	return found
}

func (s *State) isEmpty(id int) bool {
	if s.Skipped(id) {
		return true
	}
	st, ok := s.Done[id]
	return ok && st.Rows == 0
}

func (s *State) skip(id int, why string) {
	// A skipped stage runs no tasks: what shaped them goes (its skew
	// tasks stay, unread, as they always did).
	t := s.Tasks.Edit(id)
	t.Skipped, t.Reason = true, why
	t.Groups, t.Combine, t.ScanTasks = nil, 0, 0
}

// replaceExchanges replaces exchange leaves reading any of stages with Empty
// leaves of the same schema; it reports whether it replaced any.
func replaceExchanges(n *plan.Node, stages []int) bool {
	changed := false
	for i, c := range n.Inputs {
		if c.Kind == plan.KindExchange && containsInt(stages, c.Stage) {
			n.Inputs[i] = &plan.Node{Kind: plan.KindEmpty, Schema: c.Schema, Limit: -1}
			changed = true
			continue
		}
		if replaceExchanges(c, stages) {
			changed = true
		}
	}
	if n.Kind == plan.KindExchange && containsInt(stages, n.Stage) {
		*n = plan.Node{Kind: plan.KindEmpty, Schema: n.Schema, Limit: -1}
		changed = true
	}
	return changed
}

// collapse folds operators that can only produce no rows over their Empty
// inputs into Empty, bottom up, following SQL semantics per operator.
func collapse(n *plan.Node) *plan.Node {
	for i, c := range n.Inputs {
		n.Inputs[i] = collapse(c)
	}
	if len(n.Inputs) == 0 {
		return n
	}
	empty := func(i int) bool { return n.Inputs[i].Kind == plan.KindEmpty }
	allEmpty := true
	for i := range n.Inputs {
		allEmpty = allEmpty && empty(i)
	}
	out := false
	switch n.Kind {
	case plan.KindFilter, plan.KindProject, plan.KindSort, plan.KindLimit, plan.KindUnion, plan.KindWindow, plan.KindExpand, plan.KindUnnest, plan.KindWrite:
		// A writer writes no file for no rows (the commit step writes
		// the one empty file an empty result gets).
		out = allEmpty
	case plan.KindAggregate:
		// Partial aggregation never emits a row for no input; final and
		// single emit one row when there is no GROUP BY.
		out = allEmpty && (n.Aggregate.Mode == plan.AggPartial || len(n.Aggregate.GroupBy) > 0)
	case plan.KindCrossJoin:
		out = (empty(0) || empty(1)) && (n.Join == nil || n.Join.Type == "" || n.Join.Type == plan.JoinInner)
	case plan.KindHashJoin:
		probe, build := empty(0), empty(1)
		switch n.Join.Type {
		case plan.JoinInner, plan.JoinSemi:
			out = probe || build
		case plan.JoinLeft, plan.JoinAnti:
			out = probe // an empty build side keeps every probe row
		case plan.JoinRight, plan.JoinRightAnti:
			out = build // an empty probe side keeps every build row
		case plan.JoinRightSemi:
			out = probe || build
		case plan.JoinFull:
			out = probe && build
		}
	}
	if out {
		return &plan.Node{Kind: plan.KindEmpty, Schema: n.Schema, Limit: -1}
	}
	return n
}

// readStages lists, in first-read order, the stages n's exchange leaves read.
func readStages(n *plan.Node) []int {
	var out []int
	plan.Walk(n, func(x *plan.Node) {
		if x.Kind == plan.KindExchange && !containsInt(out, x.Stage) {
			out = append(out, x.Stage)
		}
	})
	return out
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func joinInts(xs []int) string {
	xs = append([]int(nil), xs...)
	sort.Ints(xs)
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}
