package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// Subqueries become joins, never per-row execution:
//
//   - a conjunct EXISTS (q) / NOT EXISTS (q) of WHERE or HAVING is a semi /
//     anti join with q; when q is correlated the decorrelate_subqueries
//     rule turns its correlated conditions into the join's condition.
//     Uncorrelated, it is a one-row count of q (limited to one row) that
//     the query is cross-joined with and filtered on.
//   - a conjunct x IN (q) is a semi join on x = q's column; x NOT IN (q) a
//     null-aware anti join (NOT IN's NULL semantics, see plan.Join).
//   - a scalar subquery (q) anywhere in an expression is a join with q's
//     one value column: uncorrelated, q must be one aggregate row and the
//     join is a cross join; correlated, it is a left join that
//     decorrelation turns into an aggregation grouped by the correlated
//     columns (and a later rule into an inner join when the value is
//     compared).

// subqueries collects the scalar subqueries of one clause.
type subqueries struct {
	items []*joinNode // right, scalar, scalarCol, dependent and loc set
}

// boundPred is a bound WHERE or HAVING clause.
type boundPred struct {
	conds []*plan.Expr // plain conjuncts
	joins []*joinNode  // semi and anti joins, left side unset
	subs  *subqueries  // scalar subqueries the conjuncts use
}

// flattenAnd splits a parse tree at its top-level ANDs.
func flattenAnd(n *pg.Node) []*pg.Node {
	if be := n.GetBoolExpr(); be != nil && be.Boolop == pg.BoolExprType_AND_EXPR {
		var out []*pg.Node
		for _, a := range be.Args {
			out = append(out, flattenAnd(a)...)
		}
		return out
	}
	return []*pg.Node{n}
}

// predicateSubLink returns the EXISTS or IN subquery a conjunct is, and
// whether it is negated; nil if the conjunct is something else.
func predicateSubLink(n *pg.Node) (*pg.SubLink, bool) {
	negated := false
	if be := n.GetBoolExpr(); be != nil && be.Boolop == pg.BoolExprType_NOT_EXPR && len(be.Args) == 1 {
		n, negated = be.Args[0], true
	}
	sl := n.GetSubLink()
	if sl == nil {
		return nil, false
	}
	switch sl.SubLinkType {
	case pg.SubLinkType_EXISTS_SUBLINK:
		return sl, negated
	case pg.SubLinkType_ANY_SUBLINK:
		// A row-valued NOT IN is a value (bindInValue): its NULL semantics
		// are not those of a null-aware anti join on several keys.
		if negated && sl.Testexpr.GetRowExpr() != nil {
			return nil, false
		}
		if len(sl.OperName) == 0 || len(sl.OperName) == 1 && sl.OperName[0].GetString_().GetSval() == "=" {
			return sl, negated
		}
	}
	return nil, false
}

// bindPredicate binds a WHERE or HAVING clause conjunct by conjunct.
// leaf, if set, is applied to every bound expression over the input (the
// grouping check of HAVING).
func (b *binder) bindPredicate(ast *pg.Node, c *exprCtx, leaf func(*plan.Expr) (*plan.Expr, error)) (*boundPred, error) {
	p := &boundPred{subs: &subqueries{}}
	c = c.with(func(c *exprCtx) { c.subs = p.subs })
	conjuncts := flattenAnd(ast)
	clause := c.clause
	if len(conjuncts) > 1 {
		clause = "AND"
	}
	for _, conj := range conjuncts {
		if sl, negated := predicateSubLink(conj); sl != nil {
			if err := b.bindSubqueryPredicate(p, sl, negated, c, leaf); err != nil {
				return nil, err
			}
			continue
		}
		e, err := b.bindExpr(conj, c)
		if err != nil {
			return nil, err
		}
		if leaf != nil {
			if e, err = leaf(e); err != nil {
				return nil, err
			}
		}
		if e, err = b.requireBool(e, clause, exprLoc(conj)); err != nil {
			return nil, err
		}
		// Conjuncts shared by every OR branch stand alone, so that
		// decorrelation can pull a correlation repeated in each branch
		// (TPC-DS q41) and pushdown can use it.
		for _, x := range factorOrs(splitConjuncts(e)) {
			if !isTrueLit(x) {
				p.conds = append(p.conds, x)
			}
		}
	}
	return p, nil
}

// applyPredicate puts a bound predicate over root: the scalar subqueries
// its conditions use, its semi and anti joins, then a filter.
func (b *binder) applyPredicate(root node, p *boundPred) node {
	root = b.attachScalars(root, p.subs)
	for _, j := range p.joins {
		c := *j
		c.left = root
		root = &c
	}
	if len(p.conds) > 0 {
		root = &filterNode{input: root, conds: p.conds}
	}
	return root
}

// attachScalars joins root with the scalar subqueries of subs.
func (b *binder) attachScalars(root node, subs *subqueries) node {
	for _, s := range subs.items {
		c := *s
		c.left = root
		root = &c
	}
	return root
}

// bindSubqueryPredicate binds a conjunct [NOT] EXISTS (q) or x [NOT] IN (q).
func (b *binder) bindSubqueryPredicate(p *boundPred, sl *pg.SubLink, negated bool, c *exprCtx, leaf func(*plan.Expr) (*plan.Expr, error)) error {
	if c.inAgg {
		return b.unsupported(sl.Location, "subqueries inside aggregate functions")
	}
	sub, err := b.bindQuery(sl.Subselect.GetSelectStmt(), c.scope)
	if err != nil {
		return err
	}
	j := &joinNode{typ: plan.JoinSemi, right: sub, loc: sl.Location, dependent: len(freeCols(sub)) > 0}
	if negated {
		j.typ = plan.JoinAnti
	}
	if sl.SubLinkType == pg.SubLinkType_EXISTS_SUBLINK {
		j.subquery = "EXISTS"
		if negated {
			j.subquery = "NOT EXISTS"
		}
		if j.dependent {
			p.joins = append(p.joins, j)
			return nil
		}
		// Uncorrelated: whether q has a row is one value for the whole
		// query, count(*) of at most one row of q.
		agg := &aggregateNode{
			input:   &limitNode{input: sub, limit: 1},
			aggs:    []aggExpr{{fn: plan.AggCountStar, typ: plan.Int64Type}},
			aggCols: []colID{b.md.add(column{name: "count(*)", typ: plan.Int64Type})},
		}
		p.subs.items = append(p.subs.items, &joinNode{typ: plan.JoinInner, right: agg, scalar: true, scalarCol: agg.aggCols[0], subquery: j.subquery, loc: sl.Location})
		if c.aggs != nil {
			c.aggs.extra[agg.aggCols[0]] = true
		}
		op := plan.OpGt
		if negated {
			op = plan.OpEq
		}
		p.conds = append(p.conds, plan.Call(op, plan.BoolType, b.md.ref(agg.aggCols[0]), intLit(0)))
		return nil
	}
	j.subquery = "IN"
	if negated {
		j.subquery, j.nullAware = "NOT IN", true
	}
	xs := []*pg.Node{sl.Testexpr}
	if row := sl.Testexpr.GetRowExpr(); row != nil {
		xs = row.Args
	}
	out := sub.output()
	if len(out) != len(xs) {
		return b.errorf(CodeType, sl.Location, "type mismatch: subquery has %d columns, IN needs %d", len(out), len(xs))
	}
	constant := true
	for i, xn := range xs {
		lhs, err := b.bindExpr(xn, c)
		if err != nil {
			return err
		}
		if leaf != nil {
			if lhs, err = leaf(lhs); err != nil {
				return err
			}
		}
		eq, err := b.compare(plan.OpEq, lhs, b.md.ref(out[i]), sl.Location)
		if err != nil {
			return err
		}
		if len(refs(lhs)) > 0 && eq.Op == plan.OpEq {
			constant = false
		}
		j.conds = append(j.conds, eq)
	}
	if constant {
		// No column of the query on the left: not a join condition, but
		// one value for the whole query.
		v, err := b.bindInValue(sl, c)
		if err != nil {
			return err
		}
		if negated {
			v = plan.Call(plan.OpNot, plan.BoolType, v)
		}
		p.conds = append(p.conds, v)
		return nil
	}
	p.joins = append(p.joins, j)
	return nil
}

// bindScalarSubquery binds a subquery inside an expression: a scalar
// subquery, whose value column is returned.
func (b *binder) bindScalarSubquery(sl *pg.SubLink, c *exprCtx) (*plan.Expr, error) {
	switch sl.SubLinkType {
	case pg.SubLinkType_EXPR_SUBLINK:
	case pg.SubLinkType_ANY_SUBLINK, pg.SubLinkType_ALL_SUBLINK:
		return b.bindQuantified(sl, c)
	case pg.SubLinkType_EXISTS_SUBLINK:
		return b.bindExistsValue(sl, c)
	case pg.SubLinkType_ARRAY_SUBLINK:
		return b.bindArraySublinkText(sl, c) // arrays_pg.go
	default:
		return nil, b.unsupported(sl.Location, "this kind of subquery")
	}
	if c.subs == nil {
		clause := c.clause
		if clause == "" {
			clause = "this clause"
		}
		return nil, b.unsupported(sl.Location, "subqueries in "+clause)
	}
	if c.inAgg {
		return nil, b.unsupported(sl.Location, "subqueries inside aggregate functions")
	}
	sub, err := b.bindQuery(sl.Subselect.GetSelectStmt(), c.scope)
	if err != nil {
		return nil, err
	}
	out := sub.output()
	if len(out) != 1 {
		return nil, b.errorf(CodeType, sl.Location, "type mismatch: scalar subquery has %d columns, needs one", len(out))
	}
	if pr, ok := sub.(*projectNode); ok && touches(pr.exprs[0], colSet(freeCols(sub))) {
		if agg, isAgg := pr.input.(*aggregateNode); isAgg && len(agg.groups) == 0 {
			return b.outerValueAggregate(pr, agg, sl, c)
		}
		if !oneRow(sub) {
			return b.outerValueSubquery(pr, sl, c)
		}
	}
	j := &joinNode{typ: plan.JoinInner, right: sub, scalar: true, scalarCol: out[0], subquery: "scalar subquery", loc: sl.Location}
	if len(freeCols(sub)) > 0 {
		// Correlated: a left join, each left row gets its value or NULL;
		// a subquery that may yield several rows per outer row is checked
		// per correlation key at run time (decorrelation keys the check).
		j.typ, j.dependent = plan.JoinLeft, true
		if !oneRow(sub) {
			j.right, j.scalarCol = b.scalarValue(sub, out[0])
			out = []colID{j.scalarCol}
		}
	} else if !oneRow(sub) {
		// Checked at run time, NULL for no row (bind_scalar.go).
		j.right, j.scalarCol = b.scalarValue(sub, out[0])
		out = []colID{j.scalarCol}
	}
	c.subs.items = append(c.subs.items, j)
	if c.aggs != nil {
		c.aggs.extra[out[0]] = true
	}
	return b.md.ref(out[0]), nil
}

// oneRow reports whether n always yields exactly one row: projections of
// an aggregation without GROUP BY.
func oneRow(n node) bool {
	for {
		switch x := n.(type) {
		case *projectNode:
			n = x.input
		case *aggregateNode:
			return len(x.groups) == 0
		default:
			return false
		}
	}
}

// outerValueSubquery binds a scalar subquery without aggregates whose
// value reads the outer row, (SELECT f(s.x, a.y) FROM s WHERE ...), where
// pr is its select list: the subquery yields its row's inner columns f
// reads (the row checked to be at most one, as scalarValue does) and a
// match mark, and f is computed over the join, over those columns and the
// outer row's:
//
//	CASE WHEN match IS NULL THEN NULL ELSE f(x', a.y) END
//
// so an outer row the subquery has no row for gets NULL, as per-row
// evaluation gives it, whatever f of NULLs would be.
func (b *binder) outerValueSubquery(pr *projectNode, sl *pg.SubLink, c *exprCtx) (*plan.Expr, error) {
	if c.aggs != nil {
		return nil, b.unsupported(sl.Location, "a correlated scalar subquery whose select list reads the outer row, in a query with aggregates")
	}
	free := colSet(freeCols(pr))
	value := pr.exprs[0]
	inner := &projectNode{input: pr.input}
	subst := map[colID]*plan.Expr{}
	for _, id := range sortedCols(refs(value)) {
		if free[id] {
			continue
		}
		if b.md.col(id).typ.ID == plan.Null {
			subst[id] = nullOf(plan.NullType)
			continue
		}
		inner.exprs = append(inner.exprs, b.md.ref(id))
		inner.cols = append(inner.cols, id)
	}
	inner.exprs = append(inner.exprs, intLit(1))
	inner.cols = append(inner.cols, b.md.add(column{name: "match", typ: plan.Int64Type}))
	agg := &aggregateNode{input: &singleRowNode{input: inner}}
	for i, id := range inner.cols {
		col := b.md.col(id)
		col.nullable = true
		agg.aggs = append(agg.aggs, aggExpr{fn: plan.AggMin, arg: b.md.ref(id), typ: col.typ})
		agg.aggCols = append(agg.aggCols, b.md.add(col))
		if i < len(inner.cols)-1 {
			subst[id] = b.md.ref(agg.aggCols[i])
		}
	}
	match := agg.aggCols[len(agg.aggCols)-1]
	j := &joinNode{typ: plan.JoinInner, right: agg, scalar: true, scalarCol: match, subquery: "scalar subquery", loc: sl.Location}
	if len(freeCols(agg)) > 0 {
		j.typ, j.dependent = plan.JoinLeft, true
	}
	if c.subs == nil {
		return nil, b.unsupported(sl.Location, "subqueries in this clause")
	}
	c.subs.items = append(c.subs.items, j)
	return plan.Call(plan.OpCase, value.Type,
		plan.Call(plan.OpIsNull, plan.BoolType, b.md.ref(match)), nullOf(value.Type),
		substCols(value, subst)), nil
}

// outerValueAggregate binds a scalar subquery whose select list is an
// expression over an aggregation without GROUP BY and the outer row,
// (SELECT count(*) + a.y FROM s WHERE ...), where pr is that select list
// over agg: the subquery yields the aggregates and a mark max(1), NULL
// when it aggregated no rows, and the value is computed over the join,
// each aggregate taking its value over no rows (COUNT's 0, else NULL)
// where the mark is NULL, as per-row evaluation gives it:
//
//	f(CASE WHEN mark IS NULL THEN 0 ELSE count END, a.y)
func (b *binder) outerValueAggregate(pr *projectNode, agg *aggregateNode, sl *pg.SubLink, c *exprCtx) (*plan.Expr, error) {
	if c.aggs != nil {
		return nil, b.unsupported(sl.Location, "a correlated scalar subquery whose select list reads the outer row, in a query with aggregates")
	}
	if c.subs == nil {
		return nil, b.unsupported(sl.Location, "subqueries in this clause")
	}
	a := *agg
	a.aggs = append(append([]aggExpr{}, agg.aggs...), aggExpr{fn: plan.AggMax, arg: intLit(1), typ: plan.Int64Type})
	mark := b.md.add(column{name: "mark", typ: plan.Int64Type, nullable: true})
	a.aggCols = append(append([]colID{}, agg.aggCols...), mark)
	free := colSet(freeCols(pr))
	inner := &projectNode{input: &a}
	subst := map[colID]*plan.Expr{}
	for _, id := range sortedCols(refs(pr.exprs[0])) {
		if free[id] {
			continue
		}
		inner.exprs = append(inner.exprs, b.md.ref(id))
		inner.cols = append(inner.cols, id)
		empty := nullOf(b.md.col(id).typ)
		for i, ac := range agg.aggCols {
			if ac == id && aggInfo(agg.aggs[i].fn).ZeroOnEmpty {
				empty = plan.Literal(plan.Value{I: 0}, agg.aggs[i].typ)
			}
		}
		subst[id] = plan.Call(plan.OpCase, b.md.col(id).typ,
			plan.Call(plan.OpIsNull, plan.BoolType, b.md.ref(mark)), empty, b.md.ref(id))
	}
	inner.exprs = append(inner.exprs, b.md.ref(mark))
	inner.cols = append(inner.cols, mark)
	j := &joinNode{typ: plan.JoinInner, right: inner, scalar: true, scalarCol: mark, subquery: "scalar subquery", loc: sl.Location}
	if len(freeCols(inner)) > 0 {
		j.typ, j.dependent = plan.JoinLeft, true
	}
	c.subs.items = append(c.subs.items, j)
	return substCols(pr.exprs[0], subst), nil
}
