package adaptive

import (
	"bytes"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// testRule is a rule injected into a rule list by tests only.
type testRule struct {
	name  string
	apply func(s *State) (string, error)
}

func (r testRule) Name() string                   { return r.name }
func (r testRule) Apply(s *State) (string, error) { return r.apply(s) }

// TestBrokenRuleDiscarded: a rule that leaves an invalid graph, one that
// fails and one that panics each have their rewrite discarded and logged;
// the rules after them run on the last valid plan, and the result equals
// running the good rules alone.
func TestBrokenRuleDiscarded(t *testing.T) {
	stats := &StageStats{Rows: 10, Bytes: 80, Partitions: []PartitionStats{
		{Partition: 0, Rows: 5, Bytes: 40, Objects: 1}, {Partition: 3, Rows: 5, Bytes: 40, Objects: 1}}}
	broken := []Rule{
		testRule{"drop-input", func(s *State) (string, error) {
			// Forgets the stage's input list but keeps the exchange leaf,
			// and moves the groups so the discard is visible.
			s.Graph.Stage(1).Inputs = nil
			s.Tasks.Edit(1).Groups = [][]int{{0, 1, 2, 3, 4, 5, 6, 7}}
			return "stage 1 reads nothing", nil
		}},
		testRule{"retype-exchange", func(s *State) (string, error) {
			s.Graph.Stage(2).Root.Inputs[0].Schema[0].Type = plan.StringType
			s.Tasks.Edit(2).Skipped, s.Tasks.Edit(2).Reason = true, "oops"
			return "retyped", nil
		}},
		testRule{"fails", func(s *State) (string, error) {
			s.Graph.Stages = nil
			return "", errors.New("cannot decide")
		}},
		testRule{"panics", func(s *State) (string, error) {
			s.Graph.Stage(0).Output.Count = 3
			var n *plan.Node
			return n.Scan.Table, nil
		}},
	}
	good := Rules()

	want := newState(aggGraph(true), map[int]*StageStats{0: stats}, 100)
	wantFired, err := Replan(want, good)
	if err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	s := newState(aggGraph(true), map[int]*StageStats{0: stats}, 100)
	s.Log = slog.New(slog.NewTextHandler(&logs, nil))
	// Broken rules before, between and after the good ones.
	rules := append(append(append([]Rule{}, broken[:2]...), good[:2]...), broken[2])
	rules = append(append(rules, good[2:]...), broken[3])
	g := s.Graph
	fired, err := Replan(s, rules)
	if err != nil {
		t.Fatal(err)
	}
	if s.Graph != g {
		t.Error("Replan replaced the Graph pointer; the driver holds it across rounds")
	}
	if snapshot(t, s) != snapshot(t, want) || !reflect.DeepEqual(s.Tasks, want.Tasks) {
		t.Errorf("plan after broken rules differs from the plan of the good rules alone:\n%s\nwant\n%s", snapshot(t, s), snapshot(t, want))
	}
	var discarded, kept []string
	for _, f := range fired {
		if f.Discarded != "" {
			discarded = append(discarded, f.Rule)
			if f.Note != "" {
				t.Errorf("discarded %s keeps its note %q", f.Rule, f.Note)
			}
		} else {
			kept = append(kept, f.Rule)
		}
	}
	if want := []string{"drop-input", "retype-exchange", "fails", "panics"}; !reflect.DeepEqual(discarded, want) {
		t.Errorf("discarded %v, want %v", discarded, want)
	}
	var wantKept []string
	for _, f := range wantFired {
		wantKept = append(wantKept, f.Rule)
	}
	if !reflect.DeepEqual(kept, wantKept) || len(kept) == 0 {
		t.Errorf("fired %v, want the good rules' %v", kept, wantKept)
	}
	for _, f := range fired {
		switch f.Rule {
		case "drop-input", "retype-exchange":
			if !strings.Contains(f.Discarded, "invalid plan") {
				t.Errorf("%s discarded for %q, want an invalid plan", f.Rule, f.Discarded)
			}
		case "fails":
			if !strings.Contains(f.Discarded, "cannot decide") {
				t.Errorf("fails discarded for %q", f.Discarded)
			}
		case "panics":
			if !strings.Contains(f.Discarded, "panicked") {
				t.Errorf("panics discarded for %q", f.Discarded)
			}
		}
	}
	for _, name := range discarded {
		if !strings.Contains(logs.String(), "rule="+name) {
			t.Errorf("no log line for discarded rule %s:\n%s", name, logs.String())
		}
	}
}

// TestReplanRefusesInvalidInput: a plan that is invalid before any rule ran
// is an error (the re-planner cannot know which plan is the last valid one).
func TestReplanRefusesInvalidInput(t *testing.T) {
	g := aggGraph(true)
	g.Stage(2).Inputs = nil
	s := newState(g, map[int]*StageStats{}, 100)
	if _, err := Replan(s, Rules()); !errors.Is(err, plan.ErrInvalidPlan) {
		t.Fatalf("Replan of an invalid plan: %v, want plan.ErrInvalidPlan", err)
	}
}
