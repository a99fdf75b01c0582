package plan

import (
	"errors"
	"fmt"
	"slices"
)

// ErrInvalidPlan is wrapped by every error Validate returns.
var ErrInvalidPlan = errors.New("invalid plan")

// Validate checks the contract the coordinator and the functions rely on,
// the way DataFusion's SanityCheckPlan checks a physical plan after its
// rules: the planner runs it on every graph it builds and the re-planner
// after every rule, so a rewrite that breaks the contract is caught where
// it happens rather than as a wrong answer or a failed task.
//
// It checks that:
//   - stage ids are unique, the result stage exists, has a single output
//     partition and as many columns as Columns;
//   - every stage's Inputs equal the stages its exchange leaves read (each
//     once), every such stage exists, and stages read no cycle;
//   - an exchange leaf's schema equals the root schema of the stage it
//     reads;
//   - partitionings are consistent: hash outputs have keys within the root
//     schema and a count >= 1, single and broadcast outputs one partition;
//     the hash inputs a stage reads partition by partition share one count
//     and key types (partition p of each holds the same keys), and a stage
//     that scans a table (its tasks are scan splits) reads none; a stage
//     has at most one such scan (any other is Inline: every task reads its
//     files whole);
//   - a stage whose tasks split an input's objects (SplitObjects leaves)
//     splits one input, read only through such leaves, scans no table
//     and reads no input partition by partition (its tasks are the object
//     groups), and the leaf's rows reach the root through row-local
//     operators (a task sees only some of the input's rows);
//   - every node has the field of its kind and the number of inputs its
//     kind takes, column references within (and of the type of) the
//     schema they refer to, and an output schema its kind implies.
//
// It returns the first problem found, wrapping ErrInvalidPlan.
func (g *Graph) Validate() error {
	if g == nil {
		return fmt.Errorf("%w: no graph", ErrInvalidPlan)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidPlan, fmt.Sprintf(format, args...))
	}
	byID := make(map[int]*Stage, len(g.Stages))
	for _, s := range g.Stages {
		if s == nil {
			return bad("nil stage")
		}
		if _, dup := byID[s.ID]; dup {
			return bad("two stages with id %d", s.ID)
		}
		byID[s.ID] = s
	}
	res := byID[g.Result]
	if res == nil {
		return bad("result stage %d does not exist", g.Result)
	}
	if res.Output.Kind != PartitionSingle || res.Output.Count != 1 {
		return bad("result stage %d has output %s, want single", g.Result, FormatPartitioning(res.Output, res.Root))
	}
	if res.Root != nil && len(res.Root.Schema) != len(g.Columns) {
		return bad("result stage %d has %d columns, Columns names %d", g.Result, len(res.Root.Schema), len(g.Columns))
	}
	for _, s := range g.Stages {
		if err := g.validateStage(s, byID); err != nil {
			return bad("stage %d: %v", s.ID, err)
		}
		writes := 0
		Walk(s.Root, func(n *Node) {
			if n.Kind == KindWrite {
				writes++
			}
		})
		if writes > 0 && (s.Root.Kind != KindWrite || writes > 1) {
			return bad("stage %d: a write node that is not the stage's root", s.ID)
		}
	}
	if c := g.cycle(byID); c != nil {
		return bad("stages read each other in a cycle: %v", c)
	}
	return nil
}

func (g *Graph) validateStage(s *Stage, byID map[int]*Stage) error {
	if s.Root == nil {
		return errors.New("no root")
	}
	if err := validatePartitioning(s.Output, s.Root.Schema); err != nil {
		return fmt.Errorf("output %w", err)
	}
	for _, c := range s.Summarize {
		if c < 0 || c >= len(s.Root.Schema) {
			return fmt.Errorf("summarizes column %d of %d", c, len(s.Root.Schema))
		}
	}
	var reads []int
	scans := 0
	var nodeErr error
	Walk(s.Root, func(n *Node) {
		if nodeErr != nil {
			return
		}
		if err := validateNode(n); err != nil {
			nodeErr = fmt.Errorf("%s node: %w", n.Kind, err)
			return
		}
		switch n.Kind {
		case KindScan:
			if n.SplitScan() {
				scans++
			}
		case KindExchange:
			up := byID[n.Stage]
			if up == nil {
				nodeErr = fmt.Errorf("exchange reads stage %d, which does not exist", n.Stage)
				return
			}
			if n.Stage == s.ID {
				nodeErr = errors.New("exchange reads its own stage")
				return
			}
			if up.Root != nil && !sameSchema(n.Schema, up.Root.Schema) {
				nodeErr = fmt.Errorf("exchange schema %v differs from stage %d's output schema %v", n.Schema, n.Stage, up.Root.Schema)
				return
			}
			if !slices.Contains(reads, n.Stage) {
				reads = append(reads, n.Stage)
			}
		}
	})
	if nodeErr != nil {
		return nodeErr
	}
	if scans > 1 {
		return fmt.Errorf("%d scans (one scan per stage: its tasks are the scan's splits)", scans)
	}
	seen := map[int]bool{}
	for _, in := range s.Inputs {
		if seen[in] {
			return fmt.Errorf("input %d listed twice", in)
		}
		seen[in] = true
	}
	if !sameSet(reads, s.Inputs) {
		return fmt.Errorf("inputs %v differ from the stages its exchange leaves read %v", s.Inputs, reads)
	}
	if err := validateSplitObjects(s, byID, scans); err != nil {
		return err
	}
	// Hash inputs read partition by partition must be co-partitioned.
	var count int
	var types []DataType
	first := -1
	for _, in := range s.Inputs {
		up := byID[in]
		if up.Output.Kind != PartitionHash || WholeRead(s, in) {
			continue
		}
		if scans > 0 {
			return fmt.Errorf("scans a table and reads hash input %d partition by partition", in)
		}
		var ts []DataType
		for _, k := range up.Output.Keys {
			ts = append(ts, up.Root.Schema[k].Type)
		}
		if first < 0 {
			first, count, types = in, up.Output.Count, ts
			continue
		}
		if up.Output.Count != count || !slices.Equal(ts, types) {
			return fmt.Errorf("hash inputs %d (%d partitions, keys %v) and %d (%d partitions, keys %v) are partitioned differently",
				first, count, types, in, up.Output.Count, ts)
		}
	}
	return nil
}

// validateSplitObjects checks the stage's SplitObjects leaves: its tasks
// are the groups of one input's objects, so nothing else may decide them.
func validateSplitObjects(s *Stage, byID map[int]*Stage, scans int) error {
	in, ok := SplitObjectsInput(s)
	if !ok {
		return nil
	}
	if scans > 0 {
		return fmt.Errorf("scans a table and splits the objects of input %d", in)
	}
	for _, other := range s.Inputs {
		if up := byID[other]; up.Output.Kind == PartitionHash && !WholeRead(s, other) {
			return fmt.Errorf("splits the objects of input %d and reads hash input %d partition by partition", in, other)
		}
	}
	var err error
	Walk(s.Root, func(n *Node) {
		switch {
		case err != nil || n.Kind != KindExchange:
		case n.SplitObjects && n.Stage != in:
			err = fmt.Errorf("splits the objects of two inputs, %d and %d", in, n.Stage)
		case !n.SplitObjects && n.Stage == in:
			err = fmt.Errorf("reads input %d both split by objects and not", in)
		case n.SplitObjects && !RowLocal(s.Root, n):
			err = fmt.Errorf("splits the objects of input %d under an operator that needs all its rows", in)
		}
	})
	return err
}

// SplitObjectsInput returns the input whose objects st's tasks divide
// among them (its exchange leaves are SplitObjects), if any.
func SplitObjectsInput(st *Stage) (int, bool) {
	in, ok := 0, false
	Walk(st.Root, func(n *Node) {
		if !ok && n.Kind == KindExchange && n.SplitObjects {
			in, ok = n.Stage, true
		}
	})
	return in, ok
}

// WholeRead reports whether stage st reads every partition of input stage
// in in each task: its exchange leaves for in are all Whole.
func WholeRead(st *Stage, in int) bool {
	whole, seen := true, false
	Walk(st.Root, func(n *Node) {
		if n.Kind == KindExchange && n.Stage == in {
			seen = true
			whole = whole && n.Whole
		}
	})
	return seen && whole
}

func validatePartitioning(p Partitioning, schema Schema) error {
	switch p.Kind {
	case PartitionHash:
		if p.Count < 1 {
			return fmt.Errorf("hash partitioning into %d partitions", p.Count)
		}
		if len(p.Keys) == 0 {
			return errors.New("hash partitioning without keys")
		}
		for _, k := range p.Keys {
			if k < 0 || k >= len(schema) {
				return fmt.Errorf("hash key #%d outside the %d output columns", k, len(schema))
			}
		}
	case PartitionSingle, PartitionBroadcast:
		if p.Count != 1 {
			return fmt.Errorf("%s partitioning into %d partitions, want 1", p.Kind, p.Count)
		}
		if len(p.Keys) > 0 {
			return fmt.Errorf("%s partitioning with keys", p.Kind)
		}
	default:
		return fmt.Errorf("unknown partitioning %q", p.Kind)
	}
	return nil
}

// validateNode checks one node against its kind's contract (node.go,
// join.go).
func validateNode(n *Node) error {
	inputs := map[Kind]int{KindScan: 0, KindExchange: 0, KindEmpty: 0, KindValues: 0, KindWindow: 1, KindExpand: 1, KindUnnest: 1, KindSingleRow: 1, KindWrite: 1, KindFilter: 1, KindProject: 1,
		KindAggregate: 1, KindSort: 1, KindLimit: 1, KindHashJoin: 2, KindCrossJoin: 2}
	if want, ok := inputs[n.Kind]; ok && len(n.Inputs) != want {
		return fmt.Errorf("%d inputs, want %d", len(n.Inputs), want)
	} else if !ok && n.Kind != KindUnion {
		return fmt.Errorf("unknown node kind")
	}
	for _, c := range n.Inputs {
		if c == nil {
			return errors.New("nil input")
		}
	}
	if n.Whole && n.Kind != KindExchange {
		return errors.New("Whole set on a node that is not an exchange")
	}
	if n.SplitObjects && !n.Whole {
		return errors.New("SplitObjects set on a node that is not a whole exchange")
	}
	var in Schema
	if len(n.Inputs) > 0 {
		in = n.Inputs[0].Schema
	}
	switch n.Kind {
	case KindWrite:
		return validateWrite(n)
	case KindWindow:
		if n.Window == nil {
			return errors.New("no Window")
		}
		if want := len(in) + len(n.Window.Calls); len(n.Schema) != want {
			return fmt.Errorf("window has %d schema fields, want its input's %d plus %d calls", len(n.Schema), len(in), len(n.Window.Calls))
		}
	case KindUnnest:
		if len(n.Exprs) != 1 || n.Exprs[0] == nil || n.Exprs[0].Type.ID != List {
			return errors.New("unnest without one list expression")
		}
		if len(n.Schema) != len(in)+1 || !sameTypes(n.Schema[:len(in)], in) || n.Schema[len(in)].Type != n.Exprs[0].Type.Elem() {
			return errors.New("unnest schema is not its input's and the element")
		}
		if err := exprOver(n.Exprs[0], in, "unnest list"); err != nil {
			return err
		}
	case KindExpand:
		if len(n.Expand) == 0 {
			return errors.New("expand without projections")
		}
		for i, p := range n.Expand {
			if len(p) != len(n.Schema) {
				return fmt.Errorf("expand projection %d has %d expressions for %d schema fields", i, len(p), len(n.Schema))
			}
		}
	case KindScan:
		if n.Scan == nil {
			return errors.New("no Scan")
		}
		if len(n.Scan.Columns) != len(n.Schema) {
			return fmt.Errorf("reads %d columns into %d schema fields", len(n.Scan.Columns), len(n.Schema))
		}
		if len(n.Scan.Paths) > 0 {
			if len(n.Scan.Paths) != len(n.Scan.Columns) {
				return fmt.Errorf("%d paths for %d columns", len(n.Scan.Paths), len(n.Scan.Columns))
			}
			if n.Scan.Format != "parquet" {
				return fmt.Errorf("struct field paths on a %s scan", n.Scan.Format)
			}
		}
		if len(n.Scan.Fields) > 0 {
			if len(n.Scan.Fields) != len(n.Scan.Columns) {
				return fmt.Errorf("%d field lists for %d columns", len(n.Scan.Fields), len(n.Scan.Columns))
			}
			if n.Scan.Format != "parquet" {
				return fmt.Errorf("element fields on a %s scan", n.Scan.Format)
			}
		}
		if len(n.Scan.Files) > 0 && !n.Scan.Inline {
			return errors.New("files listed on a scan that is not inline")
		}
		return exprOver(n.Scan.Filter, n.Schema, "pruning filter")
	case KindExchange:
		if n.Predicate == nil {
			if n.Bloom != nil {
				return errors.New("a Bloom filter on an exchange without a predicate")
			}
			return nil
		}
		if n.SplitObjects {
			return errors.New("a runtime filter on an exchange that splits objects")
		}
		if n.Predicate.Type.ID != Bool && n.Predicate.Type.ID != Null {
			return fmt.Errorf("exchange predicate of type %s", n.Predicate.Type)
		}
		if n.Bloom != nil && (n.Bloom.Column < 0 || n.Bloom.Column >= len(n.Schema)) {
			return fmt.Errorf("a Bloom filter on column %d of an exchange of %d columns", n.Bloom.Column, len(n.Schema))
		}
		return exprOver(n.Predicate, n.Schema, "exchange predicate")
	case KindFilter:
		if n.Predicate == nil {
			return errors.New("no Predicate")
		}
		if n.Predicate.Type.ID != Bool && n.Predicate.Type.ID != Null {
			return fmt.Errorf("predicate of type %s", n.Predicate.Type)
		}
		if !sameSchema(n.Schema, in) {
			return errors.New("schema differs from its input's")
		}
		return exprOver(n.Predicate, in, "predicate")
	case KindProject:
		if len(n.Exprs) != len(n.Schema) {
			return fmt.Errorf("%d exprs for %d schema fields", len(n.Exprs), len(n.Schema))
		}
		for i, e := range n.Exprs {
			if e == nil {
				return fmt.Errorf("expr %d is nil", i)
			}
			if e.Type != n.Schema[i].Type {
				return fmt.Errorf("expr %d has type %s, schema field %s has %s", i, e.Type, n.Schema[i].Name, n.Schema[i].Type)
			}
			if err := exprOver(e, in, "expr"); err != nil {
				return err
			}
		}
	case KindAggregate:
		a := n.Aggregate
		if a == nil {
			return errors.New("no Aggregate")
		}
		// A partial aggregation writes each call's state columns, whose
		// number the aggregate library knows (the executor checks it);
		// here every call has at least one.
		want := len(a.GroupBy) + len(a.Aggs)
		if len(n.Schema) < want || a.Mode != AggPartial && len(n.Schema) != want {
			return fmt.Errorf("%s aggregation of %d keys and %d aggregates has %d output columns, want %d",
				a.Mode, len(a.GroupBy), len(a.Aggs), len(n.Schema), want)
		}
		switch a.Mode {
		case AggPartial, AggSingle:
			for _, e := range a.GroupBy {
				if err := exprOver(e, in, "group key"); err != nil {
					return err
				}
			}
			for _, c := range a.Aggs {
				for _, e := range append([]*Expr{c.Arg}, c.More...) {
					if err := exprOver(e, in, "aggregate argument"); err != nil {
						return err
					}
				}
			}
		case AggFinal:
		default:
			return fmt.Errorf("unknown aggregation mode %q", a.Mode)
		}
	case KindSort:
		if len(n.SortKeys) == 0 {
			return errors.New("no sort keys")
		}
		for _, k := range n.SortKeys {
			if k.Expr == nil {
				return errors.New("nil sort key")
			}
			if err := exprOver(k.Expr, in, "sort key"); err != nil {
				return err
			}
		}
		if !sameSchema(n.Schema, in) {
			return errors.New("schema differs from its input's")
		}
	case KindLimit:
		if !sameSchema(n.Schema, in) {
			return errors.New("schema differs from its input's")
		}
	case KindUnion:
		if len(n.Inputs) == 0 {
			return errors.New("no inputs")
		}
		for i, c := range n.Inputs {
			if !sameTypes(c.Schema, n.Schema) {
				return fmt.Errorf("input %d schema %v differs from %v", i, c.Schema, n.Schema)
			}
		}
	case KindHashJoin, KindCrossJoin:
		return validateJoin(n)
	}
	return nil
}

func validateJoin(n *Node) error {
	j := n.Join
	if j == nil {
		if n.Kind == KindCrossJoin {
			j = &Join{Type: JoinInner}
		} else {
			return errors.New("no Join")
		}
	}
	probe, build := n.Inputs[0].Schema, n.Inputs[1].Schema
	if len(j.LeftKeys) != len(j.RightKeys) {
		return fmt.Errorf("%d left keys and %d right keys", len(j.LeftKeys), len(j.RightKeys))
	}
	if n.Kind == KindHashJoin && len(j.LeftKeys) == 0 {
		return errors.New("hash join without keys")
	}
	if n.Kind == KindCrossJoin && len(j.LeftKeys) > 0 {
		return errors.New("cross join with keys")
	}
	for i := range j.LeftKeys {
		if j.LeftKeys[i] == nil || j.RightKeys[i] == nil {
			return fmt.Errorf("join key %d is nil", i)
		}
		if err := exprOver(j.LeftKeys[i], probe, "left key"); err != nil {
			return err
		}
		if err := exprOver(j.RightKeys[i], build, "right key"); err != nil {
			return err
		}
		if j.LeftKeys[i].Type != j.RightKeys[i].Type {
			return fmt.Errorf("join key %d compares %s with %s", i, j.LeftKeys[i].Type, j.RightKeys[i].Type)
		}
	}
	both := append(append(Schema{}, probe...), build...)
	if err := exprOver(j.Filter, both, "join filter"); err != nil {
		return err
	}
	want := both
	switch j.Type {
	case JoinSemi, JoinAnti:
		want = probe
	case JoinRightSemi, JoinRightAnti:
		want = build
		if j.NullAware {
			return fmt.Errorf("%s join cannot be null-aware", j.Type)
		}
	case JoinInner, JoinLeft, JoinRight, JoinFull, "":
	default:
		return fmt.Errorf("unknown join type %q", j.Type)
	}
	if !sameTypes(n.Schema, want) {
		return fmt.Errorf("%s join output schema %v, want its inputs' %v", j.Type, n.Schema, want)
	}
	return nil
}

// exprOver checks that every column e refers to exists in schema with the
// type e gives it.
func exprOver(e *Expr, schema Schema, what string) error {
	if e == nil {
		return nil
	}
	if e.Op == OpColumn {
		if e.Col < 0 || e.Col >= len(schema) {
			return fmt.Errorf("%s: column %s outside the %d input columns", what, e, len(schema))
		}
		if schema[e.Col].Type != e.Type {
			return fmt.Errorf("%s: column %s has type %s, input column has %s", what, e, e.Type, schema[e.Col].Type)
		}
	}
	for _, a := range e.Args {
		if a == nil {
			return fmt.Errorf("%s: %s with a nil argument", what, e.Op)
		}
		if err := exprOver(a, schema, what); err != nil {
			return err
		}
	}
	return nil
}

func sameSchema(a, b Schema) bool { return slices.Equal(a, b) }

// sameTypes compares column types only: outer joins make columns nullable
// and unions take the first input's names.
func sameTypes(a, b Schema) bool {
	return slices.EqualFunc(a, b, func(x, y Field) bool { return x.Type == y.Type })
}

func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// cycle returns the stages of a cycle of reads, or nil.
func (g *Graph) cycle(byID map[int]*Stage) []int {
	const (
		unseen = iota
		onPath
		finished
	)
	mark := map[int]int{}
	var path []int
	var visit func(id int) []int
	visit = func(id int) []int {
		switch mark[id] {
		case onPath:
			i := slices.Index(path, id)
			return append(append([]int{}, path[i:]...), id)
		case finished:
			return nil
		}
		mark[id] = onPath
		path = append(path, id)
		for _, in := range byID[id].Inputs {
			if c := visit(in); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		mark[id] = finished
		return nil
	}
	for _, s := range g.Stages {
		if c := visit(s.ID); c != nil {
			return c
		}
	}
	return nil
}
