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
		}
	}
}

// checkNode checks that a node's expressions are typed consistently with
// its input schema.
func checkNode(t *testing.T, f string, n *plan.Node) {
	t.Helper()
	var in plan.Schema
	if len(n.Inputs) > 0 {
		in = n.Inputs[0].Schema
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

// TestExplainDeterministic plans the same query many times.
func TestExplainDeterministic(t *testing.T) {
	first := Explain(planFile(t, "testdata/plans/tpch_q1.sql", Options{}))
	for i := 0; i < 20; i++ {
		if got := Explain(planFile(t, "testdata/plans/tpch_q1.sql", Options{})); got != first {
			t.Fatalf("explain differs between runs")
		}
	}
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
