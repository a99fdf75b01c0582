package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/sluicedb/sluice/planner/plan"
)

// singleRowNode passes its input on and fails the query at run time when
// it yields more than one row (see plan.KindSingleRow).
type singleRowNode struct {
	input node
}

func (n *singleRowNode) children() []node { return []node{n.input} }
func (n *singleRowNode) withChildren(ch []node) node {
	c := *n
	c.input = ch[0]
	return &c
}
func (n *singleRowNode) output() []colID           { return n.input.output() }
func (n *singleRowNode) describe(*metadata) string { return "SingleRow:" }

// scalarValue makes a scalar subquery that may yield any number of rows
// yield exactly one: its rows are checked to be at most one (a run-time
// error otherwise, as in DuckDB), and an aggregation without GROUP BY
// turns none into NULL (min of at most one value is that value). It
// returns the new plan and its value column.
func (b *binder) scalarValue(sub node, col colID) (node, colID) {
	c := b.md.col(col)
	agg := &aggregateNode{input: &singleRowNode{input: sub},
		aggs: []aggExpr{{fn: plan.AggMin, arg: b.md.ref(col), typ: c.typ}}}
	c.nullable = true
	agg.aggCols = []colID{b.md.add(c)}
	return agg, agg.aggCols[0]
}

// lowerSingleRow gathers the rows into one task and checks them there.
func (l *lowerer) lowerSingleRow(n *singleRowNode) (*fragment, error) {
	f, err := l.lower(n.input)
	if err != nil {
		return nil, err
	}
	f = l.gather(f)
	f.root = &plan.Node{Kind: plan.KindSingleRow, Schema: f.root.Schema, Inputs: []*plan.Node{f.root}}
	return f, nil
}

// bindExistsValue binds EXISTS (subquery) where it is a value rather than
// a conjunct of WHERE (under OR or NOT, in the select list): as the
// scalar subquery (SELECT max(1) FROM ... WHERE ...) IS NOT NULL, which
// the scalar-subquery decorrelation turns into an aggregation on the
// correlation keys and a left join. Exact for a plain SELECT whose select
// list has no aggregate; other shapes stay refused.
func (b *binder) bindExistsValue(sl *pg.SubLink, c *exprCtx) (*plan.Expr, error) {
	sel := sl.Subselect.GetSelectStmt()
	plain := sel != nil && sel.Op == pg.SetOperation_SETOP_NONE && len(sel.GroupClause) == 0 && sel.HavingClause == nil &&
		sel.LimitCount == nil && sel.LimitOffset == nil && len(sel.DistinctClause) == 0 && len(sel.WindowClause) == 0 &&
		sel.WithClause == nil && len(sel.ValuesLists) == 0
	if plain {
		for _, t := range sel.TargetList {
			plain = plain && !containsAgg(t)
		}
	}
	if !plain {
		return nil, b.unsupported(sl.Location, "EXISTS (subquery) with GROUP BY, HAVING, LIMIT, DISTINCT or aggregates other than as a conjunct of WHERE or HAVING")
	}
	cp := proto.Clone(sel).(*pg.SelectStmt)
	one := &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Ival{Ival: &pg.Integer{Ival: 1}}, Location: -1}}}
	max := &pg.Node{Node: &pg.Node_FuncCall{FuncCall: &pg.FuncCall{
		Funcname: []*pg.Node{{Node: &pg.Node_String_{String_: &pg.String{Sval: "max"}}}}, Args: []*pg.Node{one}, Location: sl.Location}}}
	cp.TargetList = []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: max, Location: -1}}}}
	cp.SortClause = nil
	v, err := b.bindScalarSubquery(&pg.SubLink{SubLinkType: pg.SubLinkType_EXPR_SUBLINK, Location: sl.Location,
		Subselect: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: cp}}}, c)
	if err != nil {
		return nil, err
	}
	return fold(plan.Call(plan.OpIsNotNull, plan.BoolType, v)), nil
}
