package planner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

func planFile(t *testing.T, f string, opts Options) *Planned {
	t.Helper()
	sql, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Plan(context.Background(), string(sql), testCatalog, opts)
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	return p
}

// TestGraphJSONRoundTrip encodes every golden query's graph as JSON and
// decodes it back: the plan contract must survive serialization intact.
func TestGraphJSONRoundTrip(t *testing.T) {
	for _, f := range planCases(t) {
		g := planFile(t, f, Options{}).Graph
		data, err := json.Marshal(g)
		if err != nil {
			t.Fatalf("%s: marshal: %v", f, err)
		}
		var back plan.Graph
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("%s: unmarshal: %v", f, err)
		}
		if !reflect.DeepEqual(g, &back) {
			t.Errorf("%s: graph changed in a JSON round trip", f)
		}
		again, _ := json.Marshal(&back)
		if !bytes.Equal(data, again) {
			t.Errorf("%s: JSON not stable across a round trip", f)
		}
		if FormatGraph(&back) != FormatGraph(g) {
			t.Errorf("%s: decoded graph explains differently", f)
		}
	}
}

// TestGraphInvariants checks structural properties every graph must have:
// stage ids are positions, inputs match exchange leaves, the result stage
// is single and last, schemas agree with expressions.
func TestGraphInvariants(t *testing.T) {
	for _, f := range planCases(t) {
		g := planFile(t, f, Options{Partitions: 4}).Graph
		if g.Result != len(g.Stages)-1 {
			t.Errorf("%s: result stage %d is not the last", f, g.Result)
		}
		res := g.Stage(g.Result)
		if res.Output.Kind != plan.PartitionSingle || res.Output.Count != 1 {
			t.Errorf("%s: result output %+v", f, res.Output)
		}
		if len(res.Root.Schema) != len(g.Columns) {
			t.Errorf("%s: result schema %d columns, Columns %d", f, len(res.Root.Schema), len(g.Columns))
		}
		for i, s := range g.Stages {
			if s.ID != i {
				t.Errorf("%s: stage %d has id %d", f, i, s.ID)
			}
			var reads []int
			plan.Walk(s.Root, func(n *plan.Node) {
				if n.Kind == plan.KindExchange {
					reads = append(reads, n.Stage)
					up := g.Stage(n.Stage)
					if up == nil || n.Stage >= s.ID {
						t.Errorf("%s: stage %d reads stage %d", f, s.ID, n.Stage)
					} else if !reflect.DeepEqual(n.Schema, up.Root.Schema) {
						t.Errorf("%s: exchange schema differs from stage %d output", f, n.Stage)
					}
				}
				checkNode(t, f, n)
			})
			if !slices.Equal(reads, s.Inputs) {
				t.Errorf("%s: stage %d inputs %v, exchanges read %v", f, s.ID, s.Inputs, reads)
			}
			if s.Output.Kind == plan.PartitionHash && s.Output.Count != 4 {
				t.Errorf("%s: stage %d hash count %d, want 4", f, s.ID, s.Output.Count)
			}
			checkStage(t, f, g, s)
		}
	}
}

// checkStage checks what the coordinator relies on to split a stage into
// tasks: at most one scan (tasks are the scan's splits, other inputs are
// read whole: single or broadcast only), and hash inputs that all have the
// same partition count and key types, so partition p of each holds the
// same keys.
func checkStage(t *testing.T, f string, g *plan.Graph, s *plan.Stage) {
	t.Helper()
	scans := 0
	plan.Walk(s.Root, func(n *plan.Node) {
		if n.Kind == plan.KindScan {
			scans++
		}
	})
	if scans > 1 {
		t.Errorf("%s: stage %d has %d scans", f, s.ID, scans)
	}
	var hashCount int
	var hashTypes []plan.DataType
	for _, in := range s.Inputs {
		up := g.Stage(in)
		switch up.Output.Kind {
		case plan.PartitionHash:
			if scans > 0 {
				t.Errorf("%s: stage %d scans and reads hash input %d", f, s.ID, in)
			}
			var types []plan.DataType
			for _, k := range up.Output.Keys {
				if k >= len(up.Root.Schema) {
					t.Errorf("%s: stage %d hash key %d out of range", f, in, k)
					return
				}
				types = append(types, up.Root.Schema[k].Type)
			}
			if len(types) == 0 {
				t.Errorf("%s: stage %d hash output without keys", f, in)
			}
			if hashTypes == nil {
				hashCount, hashTypes = up.Output.Count, types
			} else if up.Output.Count != hashCount || !slices.Equal(types, hashTypes) {
				t.Errorf("%s: stage %d reads hash inputs partitioned differently: %d x%v and %d x%v", f, s.ID, hashCount, hashTypes, up.Output.Count, types)
			}
		case plan.PartitionSingle, plan.PartitionBroadcast:
			if up.Output.Count != 1 {
				t.Errorf("%s: stage %d output %+v", f, in, up.Output)
			}
		default:
			t.Errorf("%s: stage %d output kind %q", f, in, up.Output.Kind)
		}
	}
	// A stage whose every input is single runs as one task; one that reads
	// a hash input runs per partition: a broadcast build side of a right or
	// full join would then be joined in several tasks.
	plan.Walk(s.Root, func(n *plan.Node) {
		if n.Join == nil || (n.Join.Type != plan.JoinRight && n.Join.Type != plan.JoinFull) {
			return
		}
		if b := n.Inputs[1]; b.Kind == plan.KindExchange && g.Stage(b.Stage).Output.Kind == plan.PartitionBroadcast && (scans > 0 || hashTypes != nil) {
			t.Errorf("%s: stage %d: %s join with a broadcast build side in a partitioned stage", f, s.ID, n.Join.Type)
		}
	})
}

// checkNode checks that a node's expressions are typed consistently with
// its input schema.
func checkNode(t *testing.T, f string, n *plan.Node) {
	t.Helper()
	var in plan.Schema
	if len(n.Inputs) > 0 {
		in = n.Inputs[0].Schema
	}
	if n.Kind == plan.KindHashJoin || n.Kind == plan.KindCrossJoin {
		checkJoin(t, f, n)
		return
	}
	check := func(e *plan.Expr) {
		walkExpr(e, func(x *plan.Expr) {
			if x.Op == plan.OpColumn && (x.Col >= len(in) || in[x.Col].Type != x.Type) {
				t.Errorf("%s: %s node: column %s does not match input schema", f, n.Kind, x)
			}
			if msg := exprTypeError(x); msg != "" {
				t.Errorf("%s: %s node: %s: %s", f, n.Kind, x, msg)
			}
		})
	}
	switch n.Kind {
	case plan.KindFilter:
		check(n.Predicate)
	case plan.KindProject:
		if len(n.Exprs) != len(n.Schema) {
			t.Errorf("%s: project with %d exprs, %d fields", f, len(n.Exprs), len(n.Schema))
		}
		for i, e := range n.Exprs {
			check(e)
			if e.Type != n.Schema[i].Type {
				t.Errorf("%s: project expr %s type %s, field %s", f, e, e.Type, n.Schema[i].Type)
			}
		}
	case plan.KindSort:
		for _, k := range n.SortKeys {
			check(k.Expr)
		}
	case plan.KindAggregate:
		if n.Aggregate.Mode != plan.AggFinal {
			for _, g := range n.Aggregate.GroupBy {
				check(g)
			}
			for _, a := range n.Aggregate.Aggs {
				check(a.Arg)
			}
		}
	case plan.KindScan:
		if n.Scan.Filter != nil {
			in = n.Schema
			check(n.Scan.Filter)
		}
	case plan.KindUnion:
		for _, c := range n.Inputs {
			if !reflect.DeepEqual(c.Schema, n.Schema) {
				t.Errorf("%s: union input schema %v differs from %v", f, c.Schema, n.Schema)
			}
		}
	}
}

// checkJoin checks a join against plan.Join's contract: keys over their
// own side, pairwise of one type; the filter over [probe..., build...];
// the output schema probe then build columns (probe only for semi/anti).
func checkJoin(t *testing.T, f string, n *plan.Node) {
	t.Helper()
	j := n.Join
	if j == nil || len(n.Inputs) != 2 {
		t.Errorf("%s: %s node without Join or two inputs", f, n.Kind)
		return
	}
	probe, build := n.Inputs[0].Schema, n.Inputs[1].Schema
	inSchema := func(e *plan.Expr, s plan.Schema, what string) {
		walkExpr(e, func(x *plan.Expr) {
			if x.Op == plan.OpColumn && (x.Col >= len(s) || s[x.Col].Type != x.Type) {
				t.Errorf("%s: join %s: column %s does not match its input schema", f, what, x)
			}
			if msg := exprTypeError(x); msg != "" {
				t.Errorf("%s: join %s: %s: %s", f, what, x, msg)
			}
		})
	}
	if len(j.LeftKeys) != len(j.RightKeys) {
		t.Errorf("%s: join with %d left and %d right keys", f, len(j.LeftKeys), len(j.RightKeys))
		return
	}
	if (n.Kind == plan.KindHashJoin) != (len(j.LeftKeys) > 0) {
		t.Errorf("%s: %s with %d keys", f, n.Kind, len(j.LeftKeys))
	}
	if n.Kind == plan.KindCrossJoin && j.Type != plan.JoinInner {
		t.Errorf("%s: cross join of type %s", f, j.Type)
	}
	for i := range j.LeftKeys {
		inSchema(j.LeftKeys[i], probe, "left key")
		inSchema(j.RightKeys[i], build, "right key")
		if j.LeftKeys[i].Type != j.RightKeys[i].Type {
			t.Errorf("%s: join key %d types %s and %s", f, i, j.LeftKeys[i].Type, j.RightKeys[i].Type)
		}
	}
	both := append(append(plan.Schema{}, probe...), build...)
	if j.Filter != nil {
		inSchema(j.Filter, both, "filter")
		if j.Filter.Type != plan.BoolType {
			t.Errorf("%s: join filter of type %s", f, j.Filter.Type)
		}
	}
	if j.NullAware && j.Type != plan.JoinAnti {
		t.Errorf("%s: null-aware %s join", f, j.Type)
	}
	want := both
	if j.Type == plan.JoinSemi || j.Type == plan.JoinAnti {
		want = probe
	}
	if j.Type.BuildOnly() {
		want = build
	}
	if len(want) != len(n.Schema) {
		t.Errorf("%s: join output has %d columns, want %d", f, len(n.Schema), len(want))
		return
	}
	for i := range want {
		if want[i].Type != n.Schema[i].Type || want[i].Name != n.Schema[i].Name {
			t.Errorf("%s: join output column %d is %v, want %v", f, i, n.Schema[i], want[i])
		}
	}
}

// TestRulesFired checks which logical rules changed which plans.
func TestRulesFired(t *testing.T) {
	cases := []struct {
		sql   string
		rules []string
		want  []string // substrings of the logical plan
	}{
		{"select * from orders", nil, nil},
		{"select o_orderkey from orders", []string{"prune_columns"}, []string{"Scan: orders projection=[o_orderkey]"}},
		{"select * from orders where o_orderkey = 1", []string{"push_down_filters"}, []string{"filters=[(o_orderkey = 1)]"}},
		{
			// A HAVING conjunct on a group key moves below the aggregation
			// into the scan; the one on an aggregate stays.
			"select l_returnflag, count(*) from lineitem group by l_returnflag having l_returnflag <> 'N' and count(*) > 1",
			[]string{"push_down_filters", "prune_columns"},
			[]string{"Filter: (count(*) > 1)", "projection=[l_returnflag] filters=[(l_returnflag <> 'N')]"},
		},
		{
			// Without GROUP BY nothing may cross the aggregation.
			"select count(*) from lineitem having count(*) > 1",
			[]string{"prune_columns"},
			[]string{"Filter: (count(*) > 1)"},
		},
		{
			"select count(*) from lineitem",
			[]string{"prune_columns"},
			[]string{"Scan: lineitem projection=[l_shipdate]"}, // the narrowest column
		},
	}
	for _, c := range cases {
		p, err := Plan(context.Background(), c.sql, testCatalog, Options{})
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if !slices.Equal(p.Rules, c.rules) {
			t.Errorf("%s: rules fired %v, want %v", c.sql, p.Rules, c.rules)
		}
		for _, w := range c.want {
			if !strings.Contains(p.Logical, w) {
				t.Errorf("%s: logical plan lacks %q:\n%s", c.sql, w, p.Logical)
			}
		}
	}
}

// TestExplainDeterministic plans every case several times: the text (and
// the graph) must not depend on map order or anything else that varies.
func TestExplainDeterministic(t *testing.T) {
	for _, f := range planCases(t) {
		first := Explain(planFile(t, f, Options{}))
		for i := 0; i < 5; i++ {
			if got := Explain(planFile(t, f, Options{})); got != first {
				t.Fatalf("%s: explain differs between runs", f)
			}
		}
	}
}

// TestRulesIdempotent applies every logical rule once more to each
// optimized plan: nothing may change.
func TestRulesIdempotent(t *testing.T) {
	for _, f := range planCases(t) {
		sql, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		root, rc := bindAndOptimize(t, string(sql))
		want := formatLogical(root, rc.md)
		for _, r := range logicalRules {
			again, err := r.apply(root, rc)
			if err != nil {
				t.Fatalf("%s: %s again: %v", f, r.name(), err)
			}
			if got := formatLogical(again, rc.md); got != want {
				t.Errorf("%s: %s is not idempotent:\n%s\nbecame\n%s", f, r.name(), want, got)
			}
		}
	}
}

// bindAndOptimize binds and optimizes sql against the test catalog.
func bindAndOptimize(t *testing.T, sql string) (node, *ruleCtx) {
	t.Helper()
	sql = rewriteNestedLiterals(sql) // as Plan does
	tree, quals, err := parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	b := &binder{ctx: context.Background(), sql: sql, cat: testCatalog, md: &metadata{}, pos: map[*plan.Expr]int32{}, qualify: quals}
	root, err := b.bindStatement(tree.Stmts[0])
	if err != nil {
		t.Fatal(err)
	}
	rc := &ruleCtx{md: b.md, sql: sql, opts: Options{Partitions: DefaultPartitions, BroadcastBytes: DefaultBroadcastBytes}}
	root, _, _, err = optimize(root, rc, b.outerRefs)
	if err != nil {
		t.Fatal(err)
	}
	return root, rc
}

func temporal(t plan.DataType) bool {
	return t.ID == plan.Date || t.ID == plan.Timestamp || t.ID == plan.Interval
}

// temporalArithError checks the date/time forms of + and - in the plan
// contract: date ± int64 -> date, date - date -> int64, date|timestamp ±
// interval -> timestamp.
func temporalArithError(x *plan.Expr) string {
	l, r := x.Args[0].Type.ID, x.Args[1].Type.ID
	switch {
	case x.Op == plan.OpMod:
		return "modulo of a date or time"
	case l == plan.Date && r == plan.Int64 && x.Type.ID == plan.Date:
	case l == plan.Date && r == plan.Date && x.Op == plan.OpSub && x.Type.ID == plan.Int64:
	case (l == plan.Date || l == plan.Timestamp) && r == plan.Interval && x.Type.ID == plan.Timestamp:
	default:
		return "date/time arithmetic form"
	}
	return ""
}

// exprTypeError checks one operator against the typing rules of the plan
// contract (planner/plan/expr.go); "" if it obeys them.
func exprTypeError(x *plan.Expr) string {
	a := x.Args
	switch x.Op {
	case plan.OpEq, plan.OpNe, plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe:
		if a[0].Type != a[1].Type || x.Type != plan.BoolType {
			return "comparison operands differ"
		}
	case plan.OpAdd, plan.OpSub, plan.OpMod:
		if temporal(a[0].Type) || temporal(a[1].Type) {
			return temporalArithError(x)
		}
		if a[0].Type.ID != a[1].Type.ID || a[0].Type.Scale != a[1].Type.Scale || x.Type.ID != a[0].Type.ID || x.Type.Scale != a[0].Type.Scale {
			return "operands/result differ"
		}
		if !x.Type.IsNumeric() {
			return "not numeric"
		}
	case plan.OpMul:
		if a[0].Type.ID != a[1].Type.ID || x.Type.ID != a[0].Type.ID || !x.Type.IsNumeric() {
			return "operands/result differ"
		}
		if x.Type.ID == plan.Decimal && x.Type.Scale != a[0].Type.Scale+a[1].Type.Scale {
			return "decimal product scale"
		}
	case plan.OpDiv:
		if a[0].Type != plan.Float64Type || a[1].Type != plan.Float64Type || x.Type != plan.Float64Type {
			return "division not in float64"
		}
	case plan.OpNeg:
		if a[0].Type != x.Type || !x.Type.IsNumeric() {
			return "negation type"
		}
	case plan.OpAnd, plan.OpOr, plan.OpNot:
		for _, y := range a {
			if y.Type != plan.BoolType {
				return "logic operand not bool"
			}
		}
	case plan.OpCase:
		if len(a)%2 != 1 {
			return "case without else"
		}
		for i := 0; i+1 < len(a); i += 2 {
			if a[i].Type != plan.BoolType || a[i+1].Type != x.Type {
				return "case branch types"
			}
		}
		if a[len(a)-1].Type != x.Type {
			return "case else type"
		}
	case plan.OpIn:
		for _, y := range a[1:] {
			if y.Op != plan.OpLiteral || y.Type != a[0].Type {
				return "IN item not a literal of the operand type"
			}
		}
	case plan.OpLike:
		if a[0].Type != plan.StringType || a[1].Op != plan.OpLiteral || a[1].Type != plan.StringType {
			return "LIKE operands"
		}
	case plan.OpExtract:
		if a[0].Type != plan.DateType || x.Type != plan.Int64Type {
			return "EXTRACT types"
		}
	case plan.OpSubstring:
		if a[0].Type != plan.StringType || a[1].Type != plan.Int64Type || len(a) > 2 && a[2].Type != plan.Int64Type {
			return "SUBSTRING types"
		}
	case plan.OpCast:
		if len(a) != 1 || a[0].Type == x.Type {
			return "useless cast"
		}
	case plan.OpIsNull, plan.OpIsNotNull:
		if x.Type != plan.BoolType {
			return "null test type"
		}
	}
	if x.Type.ID == plan.Null && x.Op != plan.OpLiteral {
		return "untyped non-literal"
	}
	return ""
}
