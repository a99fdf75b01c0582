package adaptive

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// FuseSingle runs a one-task stage inside the one stage that reads it.
//
// Trigger: a pending stage S that scans no table and will run as one task
// (one group of input partitions, after coalescing; no skew split, no
// combining) and writes a single partition, read by exactly one pending
// stage C through one exchange, and C reads nothing else. The typical
// pair is a final aggregation that coalescing packed into one task and
// the result stage that sorts its rows.
//
// Rewrite: C's exchange leaf is replaced by S's fragment, C reads S's
// inputs with S's partition group, and S is skipped ("fused into C"). One
// task computes what two did one after the other, so the job saves a
// stage barrier (a commit, a re-plan round, a dispatch) and an invocation,
// and S's output is never written.
//
// Safe because C's one task now evaluates exactly S's fragment over the
// same input partitions S's one task would have read, and consumes its
// rows as it would have read them back; S's single output partition had
// no other reader.
type FuseSingle struct{}

func (FuseSingle) Name() string { return "fuse-single" }

func (FuseSingle) Apply(s *State) (string, error) {
	var notes []string
	for _, st := range slices.Clone(s.Graph.Stages) {
		c, ok := s.fusible(st)
		if !ok {
			continue
		}
		n := 0
		plan.Walk(c.Root, func(x *plan.Node) {
			if x.Kind == plan.KindExchange && x.Stage == st.ID {
				n++
			}
		})
		if n != 1 {
			continue
		}
		c.Root = replaceExchange(c.Root, st.ID, func() *plan.Node { return st.Root })
		c.Inputs = slices.Clone(st.Inputs)
		s.Tasks.Edit(c.ID).Groups = s.Tasks.Of(st.ID).Groups
		// S reads nothing any more: its inputs' readers are the stages
		// that run (rules that count a stage's readers see C alone).
		st.Root = &plan.Node{Kind: plan.KindEmpty, Schema: st.Root.Schema, Limit: -1}
		st.Inputs = nil
		s.skip(st.ID, fmt.Sprintf("fused into stage %d", c.ID))
		notes = append(notes, fmt.Sprintf("stage %d (one task) runs inside stage %d, its only reader", st.ID, c.ID))
	}
	return strings.Join(notes, "; "), nil
}

// fusible returns S's one reader when S can run inside it.
func (s *State) fusible(st *plan.Stage) (*plan.Stage, bool) {
	if !s.Pending(st.ID) || st.ID == s.Graph.Result || st.Output.Kind != plan.PartitionSingle || st.Root == nil {
		return nil, false
	}
	tp := s.Tasks.Of(st.ID)
	groups, known := tp.Groups, tp.Groups != nil
	if !known || len(groups) != 1 || len(tp.Skew) > 0 || tp.Combine > 0 {
		return nil, false // a scan stage, several tasks, or split
	}
	if _, splits := plan.SplitObjectsInput(st); splits {
		return nil, false
	}
	cons := s.Graph.Consumers(st.ID)
	if len(cons) != 1 {
		return nil, false
	}
	c := s.Graph.Stage(cons[0])
	if c == nil || !s.Pending(c.ID) || len(c.Inputs) != 1 || len(s.Tasks.Of(c.ID).Skew) > 0 || s.Tasks.Of(c.ID).Combine > 0 {
		return nil, false
	}
	// Scan stages run a task per split, whatever their groups say: neither
	// side may scan (a scan stage that also reads a broadcast has groups).
	if st.Root.Kind == plan.KindWrite || scans(st.Root) || scans(c.Root) {
		return nil, false
	}
	return c, true
}

// scans reports whether a fragment reads a table.
func scans(root *plan.Node) bool {
	found := false
	plan.Walk(root, func(n *plan.Node) {
		if n.SplitScan() {
			found = true
		}
	})
	return found
}

// replaceExchange returns n with every exchange leaf reading stage id
// replaced by frag() (a fresh copy for each leaf, when frag makes one).
func replaceExchange(n *plan.Node, id int, frag func() *plan.Node) *plan.Node {
	if n.Kind == plan.KindExchange && n.Stage == id {
		return frag()
	}
	for i, in := range n.Inputs {
		n.Inputs[i] = replaceExchange(in, id, frag)
	}
	return n
}
