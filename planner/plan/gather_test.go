package plan

import "testing"

// TestElideGather: a result stage that only gathers a single-output
// stage read by nothing else is dropped, and that stage becomes the
// result; a result stage that computes, reads a broadcast, or reads a
// stage with another reader stays. A write to one file gathers again.
func TestElideGather(t *testing.T) {
	gather := func() *Graph { // result stage 3 only gathers stage 2
		g := validGraph()
		g.Stage(3).Root = g.Stage(3).Root.Inputs[0]
		return g
	}
	cases := []struct {
		name   string
		g      func() *Graph
		elided bool
	}{
		{"result stage gathers", gather, true},
		{"result stage sorts", validGraph, false},
		{"broadcast read", func() *Graph { g := gather(); g.Stage(3).Root.Whole = true; return g }, false},
		{"upstream hash-partitioned", func() *Graph {
			g := gather()
			g.Stage(2).Output = Partitioning{Kind: PartitionHash, Keys: []int{0}, Count: 4}
			return g
		}, false},
		{"upstream read twice", func() *Graph {
			g := gather()
			g.Stages = append(g.Stages, &Stage{ID: 4, Inputs: []int{2}, Output: Partitioning{Kind: PartitionSingle, Count: 1},
				Root: &Node{Kind: KindExchange, Stage: 2, Schema: g.Stage(2).Root.Schema}})
			return g
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := c.g()
			n := len(g.Stages)
			if got := g.ElideGather(); got != c.elided {
				t.Fatalf("ElideGather = %v, want %v", got, c.elided)
			}
			if !c.elided {
				if len(g.Stages) != n {
					t.Fatalf("stages %d, want %d", len(g.Stages), n)
				}
				return
			}
			if g.Result != 2 || len(g.Stages) != n-1 || g.Stage(3) != nil {
				t.Fatalf("result %d, %d stages", g.Result, len(g.Stages))
			}
			if err := g.Validate(); err != nil {
				t.Fatal(err)
			}
			// The join stage reads hash partitions: it may run as several
			// tasks, so a write to one file gathers again.
			if g.OneTask(g.Stage(2)) {
				t.Fatal("OneTask of a stage reading hash partitions")
			}
			if err := g.AddWrite(Write{Format: "csv", File: "out/x.csv"}); err != nil {
				t.Fatal(err)
			}
			if err := g.Validate(); err != nil {
				t.Fatal(err)
			}
			res := g.Stage(g.Result)
			if res.ID == 2 || res.Root.Kind != KindWrite || res.Root.Inputs[0].Kind != KindExchange || !g.OneTask(res) {
				t.Fatalf("write to one file: result stage %d root %s", res.ID, res.Root.Kind)
			}
		})
	}
}
