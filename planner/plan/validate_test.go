package plan

import (
	"errors"
	"strings"
	"testing"
)

// validGraph: two scans hash-partitioned on k (x4), joined partition by
// partition in stage 2, sorted in the result stage 3.
func validGraph() *Graph {
	kv := Schema{{Name: "k", Type: Int64Type}, {Name: "v", Type: StringType}}
	k := Schema{{Name: "k", Type: Int64Type}}
	joined := append(append(Schema{}, kv...), k...)
	out := Schema{{Name: "k", Type: Int64Type}, {Name: "v", Type: StringType}}
	hash := Partitioning{Kind: PartitionHash, Keys: []int{0}, Count: 4}
	single := Partitioning{Kind: PartitionSingle, Count: 1}
	return &Graph{Result: 3, Columns: []string{"k", "v"}, Stages: []*Stage{
		{ID: 0, Output: hash, Root: &Node{Kind: KindScan, Schema: kv, Limit: -1, Scan: &Scan{Table: "t", Format: "parquet", Columns: []string{"k", "v"}}}},
		{ID: 1, Output: hash, Root: &Node{Kind: KindScan, Schema: k, Limit: -1, Scan: &Scan{Table: "u", Format: "parquet", Columns: []string{"k"}}}},
		{ID: 2, Inputs: []int{0, 1}, Output: single, Root: &Node{Kind: KindProject, Schema: out, Limit: -1,
			Exprs: []*Expr{Column(0, "k", Int64Type), Column(1, "v", StringType)},
			Inputs: []*Node{{Kind: KindHashJoin, Schema: joined, Limit: -1,
				Join: &Join{Type: JoinInner, LeftKeys: []*Expr{Column(0, "k", Int64Type)}, RightKeys: []*Expr{Column(0, "k", Int64Type)}},
				Inputs: []*Node{
					{Kind: KindExchange, Stage: 0, Schema: kv, Limit: -1},
					{Kind: KindExchange, Stage: 1, Schema: k, Limit: -1},
				}}}}},
		{ID: 3, Inputs: []int{2}, Output: single, Root: &Node{Kind: KindSort, Schema: out, Limit: -1,
			SortKeys: []SortKey{{Expr: Column(0, "k", Int64Type)}},
			Inputs:   []*Node{{Kind: KindExchange, Stage: 2, Schema: out, Limit: -1}}}},
	}}
}

func join(g *Graph) *Node { return g.Stage(2).Root.Inputs[0] }

func TestValidate(t *testing.T) {
	if err := validGraph().Validate(); err != nil {
		t.Fatalf("valid graph: %v", err)
	}
	// A runtime filter on a shuffle read (the adaptive rule's).
	g := validGraph()
	x := join(g).Inputs[0]
	x.Predicate = Call(OpIn, BoolType, Column(0, "k", Int64Type), Literal(Value{I: 1}, Int64Type), Literal(Value{I: 5}, Int64Type))
	x.RuntimeFilters = []RuntimeFilter{{Stage: 1, Column: 0, Kind: "set", Values: 2}}
	if err := g.Validate(); err != nil {
		t.Fatalf("graph with a filtered exchange: %v", err)
	}
	if got := FormatGraph(g, nil); !strings.Contains(got, "Exchange: stage=0 hash(k) x4 filter=(k@0 IN (1, 5)) runtime_filters=[#0 from stage 1: set of 2] schema=") {
		t.Errorf("EXPLAIN of the filtered exchange:\n%s", got)
	}
	cases := []struct {
		name   string
		break_ func(g *Graph)
		want   string // in the error
	}{
		// graph level
		{"duplicate stage id", func(g *Graph) { g.Stages[1].ID = 0 }, "two stages with id 0"},
		{"missing result stage", func(g *Graph) { g.Result = 9 }, "result stage 9 does not exist"},
		{"result not single", func(g *Graph) { g.Result = 0; g.Columns = []string{"k", "v"} }, "want single"},
		{"result columns", func(g *Graph) { g.Columns = []string{"k"} }, "Columns names 1"},
		{"cycle", func(g *Graph) {
			// stage 0 reads stage 3 (whole), which reads 2, which reads 0
			s := g.Stage(0)
			s.Inputs = []int{3}
			s.Root = &Node{Kind: KindExchange, Stage: 3, Schema: g.Stage(3).Root.Schema, Whole: true}
			s.Output.Keys = []int{0}
			g.Stage(2).Root.Inputs[0].Inputs[0].Schema = s.Root.Schema
			join(g).Schema = append(append(Schema{}, s.Root.Schema...), join(g).Inputs[1].Schema...)
		}, "cycle"},
		// stage inputs = exchange leaves
		{"input not read", func(g *Graph) { g.Stage(3).Inputs = []int{2, 0} }, "differ from the stages its exchange leaves read"},
		{"exchange not in inputs", func(g *Graph) { g.Stage(2).Inputs = []int{0} }, "differ from the stages its exchange leaves read"},
		{"input listed twice", func(g *Graph) { g.Stage(3).Inputs = []int{2, 2} }, "listed twice"},
		{"dangling exchange", func(g *Graph) { g.Stage(3).Root.Inputs[0].Stage = 7; g.Stage(3).Inputs = []int{7} }, "stage 7, which does not exist"},
		{"exchange reads own stage", func(g *Graph) { g.Stage(3).Root.Inputs[0].Stage = 3; g.Stage(3).Inputs = []int{3} }, "its own stage"},
		// exchange schemas = upstream root schemas
		{"exchange nullability", func(g *Graph) { join(g).Inputs[1].Schema = Schema{{Name: "k", Type: Int64Type, Nullable: true}} }, "differs from stage 1's output schema"},
		{"exchange field name", func(g *Graph) { join(g).Inputs[1].Schema = Schema{{Name: "kk", Type: Int64Type}} }, "differs from stage 1's output schema"},
		// partitioning
		{"hash key out of range", func(g *Graph) { g.Stage(1).Output.Keys = []int{3} }, "hash key #3 outside"},
		{"hash without keys", func(g *Graph) { g.Stage(1).Output.Keys = nil }, "without keys"},
		{"hash count zero", func(g *Graph) { g.Stage(1).Output.Count = 0 }, "into 0 partitions"},
		{"broadcast of two", func(g *Graph) { g.Stage(1).Output = Partitioning{Kind: PartitionBroadcast, Count: 2} }, "want 1"},
		{"unknown kind", func(g *Graph) { g.Stage(1).Output.Kind = "range" }, `unknown partitioning "range"`},
		{"hash inputs of different counts", func(g *Graph) { g.Stage(1).Output.Count = 8 }, "partitioned differently"},
		{"hash inputs of different key types", func(g *Graph) { g.Stage(0).Output.Keys = []int{1} }, "partitioned differently"},
		{"scan stage reads a hash input partition-wise", func(g *Graph) {
			s := g.Stage(1)
			s.Inputs = []int{0}
			s.Root = &Node{Kind: KindUnion, Schema: s.Root.Schema, Inputs: []*Node{s.Root,
				{Kind: KindProject, Schema: s.Root.Schema, Exprs: []*Expr{Column(0, "k", Int64Type)},
					Inputs: []*Node{{Kind: KindExchange, Stage: 0, Schema: g.Stage(0).Root.Schema}}}}}
		}, "scans a table and reads hash input 0"},
		// node fields
		{"two scans", func(g *Graph) {
			s := g.Stage(1)
			s.Root = &Node{Kind: KindUnion, Schema: s.Root.Schema, Inputs: []*Node{s.Root, s.Root}}
		}, "2 scans"},
		{"whole on a scan", func(g *Graph) { g.Stage(1).Root.Whole = true }, "Whole set"},
		{"scan columns", func(g *Graph) { g.Stage(1).Root.Scan.Columns = nil }, "reads 0 columns into 1"},
		{"scan without Scan", func(g *Graph) { g.Stage(1).Root.Scan = nil }, "no Scan"},
		{"sort with two inputs", func(g *Graph) { r := g.Stage(3).Root; r.Inputs = append(r.Inputs, r.Inputs[0]) }, "2 inputs, want 1"},
		{"unknown node kind", func(g *Graph) { g.Stage(3).Root.Kind = "teleport" }, "unknown node kind"},
		{"filter without predicate", func(g *Graph) {
			r := g.Stage(3).Root
			g.Stage(3).Root = &Node{Kind: KindFilter, Schema: r.Schema, Inputs: []*Node{r}}
		}, "no Predicate"},
		{"filter predicate not boolean", func(g *Graph) {
			r := g.Stage(3).Root
			g.Stage(3).Root = &Node{Kind: KindFilter, Schema: r.Schema, Inputs: []*Node{r}, Predicate: Column(0, "k", Int64Type)}
		}, "predicate of type int64"},
		{"exchange filter not boolean", func(g *Graph) {
			join(g).Inputs[0].Predicate = Column(0, "k", Int64Type)
		}, "exchange predicate of type int64"},
		{"exchange filter column", func(g *Graph) {
			join(g).Inputs[1].Predicate = Call(OpEq, BoolType, Column(1, "v", StringType), Literal(Value{S: "x"}, StringType))
		}, "outside the 1 input columns"},
		{"exchange bloom column", func(g *Graph) {
			x := join(g).Inputs[1]
			x.Predicate = Literal(Value{B: true}, BoolType)
			x.Bloom = &BloomProbe{Column: 1, Bits: make([]byte, 32)}
		}, "Bloom filter on column 1 of an exchange of 1 columns"},
		{"exchange bloom without predicate", func(g *Graph) {
			join(g).Inputs[0].Bloom = &BloomProbe{Column: 0, Bits: make([]byte, 32)}
		}, "Bloom filter on an exchange without a predicate"},
		{"project width", func(g *Graph) { g.Stage(2).Root.Exprs = g.Stage(2).Root.Exprs[:1] }, "1 exprs for 2 schema fields"},
		{"project type", func(g *Graph) { g.Stage(2).Root.Schema[1].Type = Int64Type }, "expr 1 has type string"},
		{"column out of range", func(g *Graph) { g.Stage(3).Root.SortKeys[0].Expr = Column(5, "x", Int64Type) }, "outside the 2 input columns"},
		{"column type", func(g *Graph) { g.Stage(3).Root.SortKeys[0].Expr = Column(1, "v", Int64Type) }, "has type int64, input column has string"},
		{"sort schema", func(g *Graph) { g.Stage(3).Root.Schema = g.Stage(3).Root.Schema[:1]; g.Columns = g.Columns[:1] }, "schema differs from its input's"},
		{"join key counts", func(g *Graph) { join(g).Join.RightKeys = nil }, "1 left keys and 0 right keys"},
		{"hash join without keys", func(g *Graph) { join(g).Join.LeftKeys, join(g).Join.RightKeys = nil, nil }, "hash join without keys"},
		{"join key types", func(g *Graph) {
			join(g).Join.LeftKeys[0] = Column(1, "v", StringType)
		}, "compares string with int64"},
		{"join key over the wrong side", func(g *Graph) { join(g).Join.RightKeys[0] = Column(1, "v", StringType) }, "right key"},
		{"semi join output", func(g *Graph) { join(g).Join.Type = JoinSemi }, "semi join output schema"},
		{"unknown join type", func(g *Graph) { join(g).Join.Type = "lateral" }, `unknown join type "lateral"`},
		{"join without Join", func(g *Graph) { join(g).Join = nil }, "no Join"},
		{"aggregate width", func(g *Graph) {
			r := g.Stage(3).Root
			g.Stage(3).Root = &Node{Kind: KindAggregate, Schema: r.Schema, Inputs: []*Node{r},
				Aggregate: &Aggregate{Mode: AggSingle, GroupBy: []*Expr{Column(0, "k", Int64Type)},
					Aggs: []AggCall{{Func: AggAvg, Arg: Column(0, "k", Int64Type), Type: Float64Type}, {Func: AggCountStar, Type: Int64Type}}}}
		}, "has 2 output columns, want 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := validGraph()
			c.break_(g)
			err := g.Validate()
			if err == nil {
				t.Fatal("Validate accepted the broken graph")
			}
			if !errors.Is(err, ErrInvalidPlan) {
				t.Errorf("error %v does not wrap ErrInvalidPlan", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to say %q", err, c.want)
			}
		})
	}
}

func TestCloneIsDeep(t *testing.T) {
	g := validGraph()
	c, err := g.Clone()
	if err != nil {
		t.Fatal(err)
	}
	c.Stage(3).Root.SortKeys[0].Desc = true
	c.Stage(2).Inputs[0] = 9
	join(c).Join.Type = JoinLeft
	if g.Stage(3).Root.SortKeys[0].Desc || g.Stage(2).Inputs[0] != 0 || join(g).Join.Type != JoinInner {
		t.Error("changing the clone changed the original")
	}
	if FormatGraph(g, nil) == FormatGraph(c, nil) {
		t.Error("clone and original print the same after a change")
	}
}

// combineGraph is validGraph with a combining stage 4 between stages 0 and
// 2: its tasks divide stage 0's objects among them and write the same
// partitioning.
func combineGraph() *Graph {
	g := validGraph()
	up := g.Stage(0)
	g.Stages = append(g.Stages, &Stage{ID: 4, Inputs: []int{0}, Output: up.Output,
		Root: &Node{Kind: KindExchange, Stage: 0, Schema: up.Root.Schema, Limit: -1, Whole: true, SplitObjects: true}})
	join(g).Inputs[0].Stage = 4
	g.Stage(2).Inputs = []int{4, 1}
	return g
}

func TestValidateSplitObjects(t *testing.T) {
	if err := combineGraph().Validate(); err != nil {
		t.Fatalf("valid combining graph: %v", err)
	}
	// A stage that splits stage 0's objects, read by nobody.
	orphan := func(g *Graph, root *Node, inputs ...int) {
		g.Stages = append(g.Stages, &Stage{ID: 5, Inputs: inputs, Root: root,
			Output: Partitioning{Kind: PartitionHash, Keys: []int{0}, Count: 4}})
	}
	leaf := func(g *Graph, id int) *Node {
		return &Node{Kind: KindExchange, Stage: id, Schema: g.Stage(id).Root.Schema, Limit: -1, Whole: true, SplitObjects: true}
	}
	cases := []struct {
		name   string
		break_ func(g *Graph)
		want   string
	}{
		{"split without whole", func(g *Graph) { g.Stage(4).Root.Whole = false }, "not a whole exchange"},
		{"split under a sort", func(g *Graph) {
			r := g.Stage(4).Root
			g.Stage(4).Root = &Node{Kind: KindSort, Schema: r.Schema, Limit: -1, Inputs: []*Node{r},
				SortKeys: []SortKey{{Expr: Column(0, "k", Int64Type)}}}
		}, "needs all its rows"},
		{"split of two inputs", func(g *Graph) {
			kv := g.Stage(0).Root.Schema
			orphan(g, &Node{Kind: KindHashJoin, Schema: append(append(Schema{}, kv...), g.Stage(1).Root.Schema...), Limit: -1,
				Join:   &Join{Type: JoinInner, LeftKeys: []*Expr{Column(0, "k", Int64Type)}, RightKeys: []*Expr{Column(0, "k", Int64Type)}},
				Inputs: []*Node{leaf(g, 0), leaf(g, 1)}}, 0, 1)
		}, "two inputs"},
		{"split and partition-wise read", func(g *Graph) {
			kv := g.Stage(0).Root.Schema
			orphan(g, &Node{Kind: KindHashJoin, Schema: append(append(Schema{}, kv...), g.Stage(1).Root.Schema...), Limit: -1,
				Join:   &Join{Type: JoinInner, LeftKeys: []*Expr{Column(0, "k", Int64Type)}, RightKeys: []*Expr{Column(0, "k", Int64Type)}},
				Inputs: []*Node{leaf(g, 0), {Kind: KindExchange, Stage: 1, Schema: g.Stage(1).Root.Schema, Limit: -1}}}, 0, 1)
		}, "reads hash input 1 partition by partition"},
		{"split and not split", func(g *Graph) {
			kv := g.Stage(0).Root.Schema
			orphan(g, &Node{Kind: KindHashJoin, Schema: append(append(Schema{}, kv...), kv...), Limit: -1,
				Join:   &Join{Type: JoinInner, LeftKeys: []*Expr{Column(0, "k", Int64Type)}, RightKeys: []*Expr{Column(0, "k", Int64Type)}},
				Inputs: []*Node{leaf(g, 0), {Kind: KindExchange, Stage: 0, Schema: kv, Limit: -1, Whole: true}}}, 0)
		}, "both split by objects and not"},
		{"split in a scan stage", func(g *Graph) {
			s := g.Stage(1)
			s.Inputs = []int{0}
			s.Root = &Node{Kind: KindUnion, Schema: s.Root.Schema, Inputs: []*Node{s.Root,
				{Kind: KindProject, Schema: s.Root.Schema, Exprs: []*Expr{Column(0, "k", Int64Type)},
					Inputs: []*Node{leaf(g, 0)}}}}
		}, "scans a table and splits the objects of input 0"},
		{"split on a scan", func(g *Graph) { r := g.Stage(1).Root; r.Whole, r.SplitObjects = false, true }, "not a whole exchange"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := combineGraph()
			c.break_(g)
			err := g.Validate()
			if err == nil {
				t.Fatal("Validate accepted the broken graph")
			}
			if !errors.Is(err, ErrInvalidPlan) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want ErrInvalidPlan saying %q", err, c.want)
			}
		})
	}
	if got := FormatGraph(combineGraph(), nil); !strings.Contains(got, "Exchange: stage=0 whole, objects split among tasks") {
		t.Errorf("the combining stage prints as:\n%s", got)
	}
}
