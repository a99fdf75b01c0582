package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestReuseStages(t *testing.T) {
	i64 := Schema{{Name: "x", Type: Int64Type}}
	scan := func(table string, filter *Expr) *Node {
		return &Node{Kind: KindScan, Schema: i64, Limit: -1, Scan: &Scan{Table: table, Format: "parquet", Columns: []string{"x"}, Filter: filter}}
	}
	exch := func(id int) *Node { return &Node{Kind: KindExchange, Stage: id, Schema: i64, Limit: -1} }
	hash := Partitioning{Kind: PartitionHash, Keys: []int{0}, Count: 4}
	one := Partitioning{Kind: PartitionSingle, Count: 1}
	join := func(a, b int) *Node {
		return &Node{Kind: KindHashJoin, Schema: append(append(Schema{}, i64...), i64...), Limit: -1,
			Join:   &Join{Type: JoinInner, LeftKeys: []*Expr{Column(0, "x", Int64Type)}, RightKeys: []*Expr{Column(0, "x", Int64Type)}},
			Inputs: []*Node{exch(a), exch(b)}}
	}
	union := func(ids ...int) *Node {
		n := &Node{Kind: KindUnion, Schema: i64, Limit: -1}
		for _, id := range ids {
			n.Inputs = append(n.Inputs, exch(id))
		}
		return n
	}
	random := &Expr{Op: OpFunc, Func: "random", Type: Float64Type}
	cases := []struct {
		name   string
		g      *Graph
		merges int
		want   string // stages as id:inputs after
	}{
		{
			name: "equal scans in different readers",
			g: &Graph{Result: 4, Columns: []string{"x"}, Stages: []*Stage{
				{ID: 0, Root: scan("t", nil), Output: hash},
				{ID: 1, Root: scan("t", nil), Output: hash},
				{ID: 2, Root: exch(0), Output: one, Inputs: []int{0}},
				{ID: 3, Root: exch(1), Output: one, Inputs: []int{1}},
				{ID: 4, Root: union(2, 3), Output: one, Inputs: []int{2, 3}},
			}},
			// 1 folds into 0; 3 (now equal to 2) stays, since the union
			// reads both.
			merges: 1, want: "0:[] 1:[0] 2:[0] 3:[1 2]",
		},
		{
			name: "a chain folds bottom-up",
			g: &Graph{Result: 6, Columns: []string{"x"}, Stages: []*Stage{
				{ID: 0, Root: scan("t", nil), Output: hash},
				{ID: 1, Root: scan("t", nil), Output: hash},
				{ID: 2, Root: exch(0), Output: hash, Inputs: []int{0}},
				{ID: 3, Root: exch(1), Output: hash, Inputs: []int{1}},
				{ID: 4, Root: join(2, 0), Output: one, Inputs: []int{2, 0}},
				{ID: 5, Root: exch(3), Output: one, Inputs: []int{3}},
				{ID: 6, Root: union(4, 5), Output: one, Inputs: []int{4, 5}},
			}},
			// 1 into 0, then 3 into 2 (their readers 5 and 4 differ).
			merges: 2, want: "0:[] 1:[0] 2:[1 0] 3:[1] 4:[2 3]",
		},
		{
			name: "different filters stay apart",
			g: &Graph{Result: 2, Columns: []string{"x", "x"}, Stages: []*Stage{
				{ID: 0, Root: scan("t", nil), Output: hash},
				{ID: 1, Root: scan("t", Call(OpIsNull, BoolType, Column(0, "x", Int64Type))), Output: hash},
				{ID: 2, Root: join(0, 1), Output: one, Inputs: []int{0, 1}},
			}},
			merges: 0, want: "0:[] 1:[] 2:[0 1]",
		},
		{
			name: "one reader of both: a self-join keeps two stages",
			g: &Graph{Result: 2, Columns: []string{"x", "x"}, Stages: []*Stage{
				{ID: 0, Root: scan("t", nil), Output: hash},
				{ID: 1, Root: scan("t", nil), Output: hash},
				{ID: 2, Root: join(0, 1), Output: one, Inputs: []int{0, 1}},
			}},
			merges: 0, want: "0:[] 1:[] 2:[0 1]",
		},
		{
			name: "volatile functions are evaluated twice",
			g: &Graph{Result: 4, Columns: []string{"x"}, Stages: []*Stage{
				{ID: 0, Root: scan("t", Call(OpGt, BoolType, random, Literal(Value{F: 0.5}, Float64Type))), Output: hash},
				{ID: 1, Root: scan("t", Call(OpGt, BoolType, random, Literal(Value{F: 0.5}, Float64Type))), Output: hash},
				{ID: 2, Root: exch(0), Output: one, Inputs: []int{0}},
				{ID: 3, Root: exch(1), Output: one, Inputs: []int{1}},
				{ID: 4, Root: union(2, 3), Output: one, Inputs: []int{2, 3}},
			}},
			merges: 0, want: "0:[] 1:[] 2:[0] 3:[1] 4:[2 3]",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			notes := c.g.ReuseStages()
			if len(notes) != c.merges {
				t.Fatalf("%d merges (%v), want %d", len(notes), notes, c.merges)
			}
			var got []string
			for _, s := range c.g.Stages {
				got = append(got, fmt.Sprintf("%d:%v", s.ID, s.Inputs))
			}
			if strings.Join(got, " ") != c.want {
				t.Fatalf("stages %s, want %s", strings.Join(got, " "), c.want)
			}
			if c.g.Result != c.g.Stages[len(c.g.Stages)-1].ID {
				t.Fatalf("result %d is not the last stage", c.g.Result)
			}
			for _, s := range c.g.Stages {
				Walk(s.Root, func(n *Node) {
					if n.Kind == KindExchange && !slices.Contains(s.Inputs, n.Stage) {
						t.Fatalf("stage %d reads stage %d, not among its inputs %v", s.ID, n.Stage, s.Inputs)
					}
				})
			}
		})
	}
}
