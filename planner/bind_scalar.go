package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/sluicedb/sluice/planner/plan"
)

// singleRowNode passes its input on and fails the query at run time when
// it yields more than one row (see plan.KindSingleRow); with keys (a
// correlated scalar subquery, decorrelated), more than one row of the
// same keys none of which is NULL.
type singleRowNode struct {
	input node
	keys  []*plan.Expr
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

// lowerSingleRow gathers the rows into one task and checks them there;
// with keys, it partitions them by the keys (unless they already are) and
// each task checks its keys.
func (l *lowerer) lowerSingleRow(n *singleRowNode) (*fragment, error) {
	f, err := l.lower(n.input)
	if err != nil {
		return nil, err
	}
	if len(n.keys) == 0 {
		f = l.gather(f)
		f.root = &plan.Node{Kind: plan.KindSingleRow, Schema: f.root.Schema, Inputs: []*plan.Node{f.root}}
		return f, nil
	}
	cols := f.cols
	f, pos, err := l.keyColumns(f, n.keys)
	if err != nil {
		return nil, err
	}
	keyRefs := make([]*plan.Expr, len(pos))
	for i, p := range pos {
		keyRefs[i] = l.md.ref(f.cols[p])
	}
	if _, ok := partitionedOn(f, keyRefs); !ok && !f.single {
		id := l.closeStage(f, plan.Partitioning{Kind: plan.PartitionHash, Keys: pos, Count: l.opts.Partitions})
		f = l.exchange(id, f.root.Schema, f.cols, false)
	}
	phys := make([]*plan.Expr, len(keyRefs))
	for i, k := range keyRefs {
		if phys[i], err = l.phys(k, f.cols); err != nil {
			return nil, err
		}
	}
	f.root = &plan.Node{Kind: plan.KindSingleRow, Schema: f.root.Schema, Inputs: []*plan.Node{f.root}, Exprs: phys}
	if len(f.cols) != len(cols) {
		// Drop the key columns keyColumns added.
		exprs := make([]*plan.Expr, len(cols))
		for i, id := range cols {
			exprs[i] = l.md.ref(id)
		}
		return l.project(f, exprs, cols)
	}
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

// bindInValue binds x IN (q) where it is a value rather than a conjunct
// of WHERE or HAVING (under OR or NOT, in the select list): a mark of
// whether x matched, with IN's three-valued logic. It is built from two
// scalar subqueries over q's column v (subqueryRewrite), which
// decorrelation handles as any other (so q may be correlated):
//
//	m = (SELECT max(1) FROM (q) s(v) WHERE s.v = x)        -- x matched
//	k = (SELECT max(CASE WHEN s.v IS NULL THEN 2 ELSE 1 END) FROM (q) s(v))
//	                                                        -- NULL: q empty, 2: q has a NULL
//	x IN (q) = CASE WHEN m IS NOT NULL THEN true
//	                WHEN k IS NULL THEN false
//	                WHEN x IS NULL OR k = 2 THEN NULL
//	                ELSE false END
//
// m correlates on x by equality, so it becomes a join on x = v with q
// grouped by v; k is one row per query when q is uncorrelated.
//
// A row (x1, x2, ...) IN (q) is the same with m matching every column
// (v1 = x1 AND v2 = x2 ...), "x IS NULL" true when any xi is NULL and k = 2
// when a row of q has a NULL in any column: DuckDB's semantics (which
// differ from the SQL standard's: (1, 2) IN (SELECT 3, NULL) is NULL
// there, as here).
func (b *binder) bindInValue(sl *pg.SubLink, c *exprCtx) (*plan.Expr, error) {
	xs := []*pg.Node{sl.Testexpr}
	if row := sl.Testexpr.GetRowExpr(); row != nil {
		xs = row.Args
	}
	n, err := b.subqueryColumns(sl, c)
	if err != nil {
		return nil, err
	}
	if n != len(xs) {
		return nil, b.errorf(CodeType, sl.Location, "type mismatch: subquery has %d columns, IN needs %d", n, len(xs))
	}
	r := &subqueryRewrite{b: b, sl: sl, c: c, n: n}
	var eq *pg.Node
	for i, x := range xs {
		e := &pg.Node{Node: &pg.Node_AExpr{AExpr: &pg.A_Expr{Kind: pg.A_Expr_Kind_AEXPR_OP, Name: []*pg.Node{pgStr("=")},
			Lexpr: r.col(i), Rexpr: proto.Clone(x).(*pg.Node), Location: sl.Location}}}
		if eq == nil {
			eq = e
		} else {
			eq = &pg.Node{Node: &pg.Node_BoolExpr{BoolExpr: &pg.BoolExpr{Boolop: pg.BoolExprType_AND_EXPR, Args: []*pg.Node{eq, e}, Location: -1}}}
		}
	}
	m, err := r.scalar(r.call("max", pgInt(1)), eq)
	if err != nil {
		return nil, err
	}
	k, err := r.kind()
	if err != nil {
		return nil, err
	}
	var unknown *plan.Expr
	for _, xn := range xs {
		x, err := b.bindExpr(xn, c)
		if err != nil {
			return nil, err
		}
		isNull := plan.Call(plan.OpIsNull, plan.BoolType, x)
		if unknown == nil {
			unknown = isNull
		} else {
			unknown = plan.Call(plan.OpOr, plan.BoolType, unknown, isNull)
		}
	}
	unknown = plan.Call(plan.OpOr, plan.BoolType, unknown,
		plan.Call(plan.OpEq, plan.BoolType, k, plan.Literal(plan.Value{I: 2}, k.Type)))
	return plan.Call(plan.OpCase, plan.BoolType,
		plan.Call(plan.OpIsNotNull, plan.BoolType, m), boolLit(true),
		plan.Call(plan.OpIsNull, plan.BoolType, k), boolLit(false),
		unknown, nullOf(plan.BoolType),
		boolLit(false)), nil
}
