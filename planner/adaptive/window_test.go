package adaptive

import (
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestSkewNeverSplitsWindowInputs: a window partition must stay whole in
// one task, so split_skew treats a window (and an expand, conservatively)
// above a hash exchange as not splittable, and the empty rule folds
// both over an empty input.
func TestSkewNeverSplitsWindowInputs(t *testing.T) {
	ex := &plan.Node{Kind: plan.KindExchange, Stage: 0}
	win := &plan.Node{Kind: plan.KindWindow, Inputs: []*plan.Node{ex}, Window: &plan.Window{}}
	root := &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{win}}
	if plan.RowLocal(root, plan.ExchangeLeaf(root, 0)) {
		t.Error("split_skew would split a window's input")
	}
	filter := &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{ex}}
	if !plan.RowLocal(filter, plan.ExchangeLeaf(filter, 0)) {
		t.Error("a projection over the exchange should stay splittable")
	}
	for _, k := range []plan.Kind{plan.KindWindow, plan.KindExpand} {
		n := &plan.Node{Kind: k, Inputs: []*plan.Node{{Kind: plan.KindEmpty}}}
		if got := collapse(n); got.Kind != plan.KindEmpty {
			t.Errorf("%s over an empty input: got %s, want empty", k, got.Kind)
		}
	}
}
