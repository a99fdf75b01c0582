package adaptive

import (
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestCombineReadGets: the GETs a reader of a finished stage would issue,
// and which readers combine-objects may redirect.
func TestCombineReadGets(t *testing.T) {
	// Stage 0 finished: 8 partitions, each in 30 of its 50 map objects.
	stats := &StageStats{Objects: 50}
	for p := 0; p < 8; p++ {
		stats.Partitions = append(stats.Partitions, PartitionStats{Partition: p, Rows: 10, Bytes: 100, Objects: 30})
	}
	cases := []struct {
		name      string
		change    func(s *State)
		gets      int64
		tasks     int64
		redirects bool
	}{
		{"one task per partition", func(*State) {}, 8 * 30, 8, true},
		{"coalesced: a task reads at most every object", func(s *State) { s.Tasks.Edit(1).Groups = [][]int{{0, 1, 2}, {3, 4, 5, 6, 7}} }, 2 * 50, 2, true},
		{"whole read: every task reads every object", func(s *State) {
			s.Graph.Stage(1).Root.Inputs[0].Whole = true
			s.Tasks.Edit(1).Groups = [][]int{{0}, {1}, {2}}
		}, 3 * 50, 3, true},
		{"skew tasks over another input count", func(s *State) {
			s.Tasks.Edit(1).Groups = [][]int{{0, 1, 2, 3, 4, 5, 6}}
			s.Tasks.Edit(1).Skew = []SkewTask{{Part: 7, Input: 9, Lo: 0, Hi: 2}, {Part: 7, Input: 9, Lo: 2, Hi: 4}}
		}, 50 + 2*30, 3, true},
		{"skew tasks splitting its map outputs: left alone", func(s *State) {
			s.Tasks.Edit(1).Skew = []SkewTask{{Part: 7, Input: 0, Lo: 0, Hi: 2}}
		}, 0, 0, false},
		{"running: left alone", func(s *State) { s.Running[1] = true }, 0, 0, false},
		{"scan splits: left alone", func(s *State) { s.Tasks.Edit(1).Groups = nil }, 0, 0, false},
		{"an input not finished: left alone", func(s *State) { delete(s.Done, 0) }, 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newState(aggGraph(true), map[int]*StageStats{0: stats}, 100)
			c.change(s)
			gets, tasks, ok := s.readGets(s.Graph.Stage(1), s.Graph.Stage(0), stats.MapObjects())
			if ok != c.redirects || gets != c.gets || tasks != c.tasks {
				t.Fatalf("readGets = %d GETs, %d tasks, %v; want %d, %d, %v", gets, tasks, ok, c.gets, c.tasks, c.redirects)
			}
		})
	}
}

// TestCombineObjectsFires: over budget, the rule inserts one combining
// stage with the producer's partitioning, the reader reads it, the plan
// validates, and a second run changes nothing; under the budget, or with
// the budget off, nothing changes.
func TestCombineObjectsFires(t *testing.T) {
	stats := &StageStats{Objects: 50, Rows: 80, Bytes: 800}
	for p := 0; p < 8; p++ {
		stats.Partitions = append(stats.Partitions, PartitionStats{Partition: p, Rows: 10, Bytes: 100, Objects: 50})
	}
	for _, c := range []struct {
		budget int64
		fires  bool
	}{{100, true}, {400, false}, {0, false}} {
		s := newState(aggGraph(true), map[int]*StageStats{0: stats}, 400) // K = 2
		s.Config.GetBudget = c.budget
		note, err := CombineObjects{}.Apply(s)
		if err != nil {
			t.Fatal(err)
		}
		if (note != "") != c.fires {
			t.Fatalf("budget %d: note %q, want fired=%v", c.budget, note, c.fires)
		}
		if !c.fires {
			continue
		}
		if err := s.Graph.Validate(); err != nil {
			t.Fatal(err)
		}
		comb := s.Graph.Stage(3)
		if comb == nil || s.Tasks.Of(3).Combine != 2 || comb.Output.Kind != plan.PartitionHash || comb.Output.Count != 8 ||
			s.Graph.Stage(1).Inputs[0] != 3 || s.Graph.Stage(1).Root.Inputs[0].Stage != 3 {
			t.Fatalf("after %q: combine %v, plan\n%s", note, s.Tasks.Of(3).Combine, plan.FormatGraph(s.Graph, nil))
		}
		before := snapshot(t, s)
		if again, _ := (CombineObjects{}).Apply(s); again != "" || snapshot(t, s) != before {
			t.Fatalf("second run: %q", again)
		}
	}
}

// TestCombineTasks: K from the byte sizes and the budget, the examples of
// CombineObjects' doc comment among them.
func TestCombineTasks(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name                         string
		bytes, target, budget, tasks int64
		want                         int64
	}{
		{"usual size within budget", 640 * mib, 64 * mib, 10000, 500, 10},
		{"budget limits, stretched tasks", 6400 * mib, 64 * mib, 10000, 500, 25},
		{"big objects", 64 << 30, 64 * mib, 10000, 500, 256},
		{"tiny input", 100, 64 * mib, 100, 8, 1},
		{"budget below the readers", 8 * mib, 2 * mib, 3, 8, 1},
		{"no target", 8 * mib, 0, 100, 8, 1},
	}
	for _, c := range cases {
		if got := combineTasks(c.bytes, c.target, c.budget, c.tasks); got != c.want {
			t.Errorf("%s: K = %d, want %d", c.name, got, c.want)
		}
	}
}
