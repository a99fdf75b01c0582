package exec

import (
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestAggregateRegistry checks every entry of the aggregate library is
// whole: a constructor (or a planned aggregate that has one), a state
// layout as wide as NumStates, state names for each column when named,
// and signatures whose result types the planner can use.
func TestAggregateRegistry(t *testing.T) {
	for _, f := range Aggregates() {
		t.Run(string(f.Name), func(t *testing.T) {
			if len(f.Signatures) == 0 {
				t.Fatal("no signatures")
			}
			p, ok := PlannedAggregate(f.Planned())
			if !ok || p.New == nil {
				t.Fatalf("planned as %s, which has no accumulator", f.Planned())
			}
			if f.PlanAs != "" {
				return
			}
			if _, found := LookupAggregate(string(f.Name)); found == f.Internal {
				t.Errorf("found by name: %v, internal: %v", found, f.Internal)
			}
			if f.Holistic {
				if f.NumStates != 0 || f.StateTypes != nil {
					t.Errorf("a holistic aggregate has partial states")
				}
				return
			}
			arg := plan.Float64Type
			if f.Signatures[0].Arg == plan.Bool {
				arg = plan.BoolType
			}
			call := plan.AggCall{Func: f.Name, Arg: plan.Column(0, "x", arg), Type: f.Signatures[0].ReturnType(arg), Name: "a"}
			if f.Signatures[0].Arg == "" {
				call.Arg = nil
			}
			for j := range f.Signatures[0].More {
				call.More = append(call.More, plan.Column(j+1, "y", plan.Int64Type))
			}
			if f.Arity() != 1+len(call.More) {
				t.Errorf("arity %d with %d more arguments", f.Arity(), len(call.More))
			}
			ts := AggStateTypes(call)
			if len(ts) != f.NumStates || AggNumStates(call) != f.NumStates {
				t.Errorf("%d state types, NumStates %d", len(ts), f.NumStates)
			}
			if len(f.StateNames) != 0 && len(f.StateNames) != f.NumStates {
				t.Errorf("%d state names for %d states", len(f.StateNames), f.NumStates)
			}
			for _, mode := range []plan.AggMode{plan.AggPartial, plan.AggFinal, plan.AggSingle} {
				if f.Name == plan.AggCountDistinct && mode != plan.AggSingle {
					continue
				}
				out := plan.Schema{}
				for _, st := range ts {
					out = append(out, plan.Field{Name: "s", Type: st})
				}
				acc, _, err := newAccumulator(call, mode, out, 0, nil)
				if err != nil || acc == nil {
					t.Errorf("%s: %v", mode, err)
				}
			}
		})
	}
}
