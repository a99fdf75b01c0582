package planner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sluicedb/sluice/planner/plan"
)

// The binder turns a parsed statement into a logical plan: it resolves
// names against the catalog, types and coerces every expression (types.go),
// folds constants (fold.go) and checks grouping. Everything it does not
// support is an SL005 error, found by looking at node types, never by
// recovering from a panic.
//
// Subqueries (bind_subquery.go) become joins whose right side is the
// subquery's plan; a correlated one refers to columns of the enclosing
// query, and the decorrelate_subqueries rule rewrites it into a plain join.
// Common table expressions are inlined: every reference binds the CTE's
// query afresh, so each use has its own column ids.

type binder struct {
	ctx context.Context
	sql string
	cat Catalog
	md  *metadata
	// pos is the parser location of each bound column reference, for
	// errors found after binding (ungrouped columns).
	pos map[*plan.Expr]int32
	// ctes are the common table expressions in view, innermost first.
	ctes *cteEnv
	// outerRefs are the columns some subquery refers to in an enclosing
	// query.
	outerRefs map[colID]bool
	// now is the query's statement time (current_date), fixed once read.
	now time.Time
	// qualify are the statement's QUALIFY clauses (qualify.go).
	qualify *qualifies
	// macroArgs are the bound arguments of the catalog SQL functions
	// being bound, innermost last (virtual.go).
	macroArgs [][]*plan.Expr
	// postgres: Postgres's meaning of ~ and LIKE (Options.Postgres).
	postgres bool
	// srfNoRows is set while a select list is bound when it calls a
	// set-returning function of a NULL array (arrays_pg.go).
	srfNoRows bool
	// unnested are the unnest(list) calls of the select list being bound,
	// each bound to its unnestNode's element column (unnest.go).
	unnested map[*pg.FuncCall]*plan.Expr
	// views are the views being bound, outermost first (bind_view.go).
	views []string
	// params, when set, binds $n as an untyped NULL and records the type
	// its context gives it (ParamTypes, params.go).
	params *paramTyping
}

// cteEnv is a persistent list of the CTEs in view. A CTE's own query sees
// the list as it was before the CTE was defined (no recursion).
type cteEnv struct {
	def  *pg.CommonTableExpr
	next *cteEnv
}

// relation is one FROM item as the scope sees it.
type relation struct {
	alias string // the name columns are qualified with
	table string // the table (or alias) named in messages
	cols  []colID
	names []string // the column names references match, one per col
	// hidden, when set, marks columns only qualified references and t.*
	// see: the sides' columns of JOIN ... USING (bind_using.go).
	hidden []bool
	// skipped are the table's columns of unsupported types (a reference
	// is SL005, not SL003).
	skipped []SkippedColumn
}

// scope is what column references resolve against: the FROM items of one
// SELECT, then those of the enclosing queries (parent) for correlated
// subqueries.
type scope struct {
	rels   []*relation
	parent *scope
	// outer collects the columns of enclosing queries that references in
	// this scope resolved to.
	outer map[colID]bool
}

func newScope(parent *scope) *scope {
	return &scope{parent: parent, outer: map[colID]bool{}}
}

// target is one select-list item after * expansion.
type target struct {
	ast     *pg.Node   // the expression; nil for a column from *
	col     *plan.Expr // for a column from *: its reference
	name    string     // output name ("" until bound, unless aliased)
	aliased bool
	bound   *plan.Expr // after binding (post-aggregation for grouped queries)
}

// aggBuilder collects the GROUP BY keys and aggregate calls of a grouped
// query; the aggregate's output columns replace them in expressions above.
type aggBuilder struct {
	groups    []*plan.Expr
	groupKeys map[string]int
	groupCols []colID
	aggs      []aggExpr
	aggKeys   map[string]int
	aggCols   []colID
	// extra are columns expressions above the aggregation may use besides
	// keys and aggregates: values of scalar subqueries joined after it,
	// and (outer) columns of enclosing queries.
	extra map[colID]bool
	outer map[colID]bool
	// sets are the grouping sets (indices into groups) of GROUPING SETS,
	// ROLLUP and CUBE, and gid the column of the set number
	// (bind_groupingsets.go); nil for a plain GROUP BY.
	sets [][]int
	gid  colID
}

// exprCtx is the context an expression is bound in.
type exprCtx struct {
	clause string // "WHERE", "SELECT", ... for messages
	scope  *scope
	// aggs is non-nil where aggregate calls are allowed; they are
	// collected there and replaced by a reference to their result.
	aggs *aggBuilder
	// inAgg is set while binding an aggregate's argument.
	inAgg bool
	// targets, when set, lets an unresolved bare name fall back to a
	// select-list alias (DuckDB allows aliases in WHERE, GROUP BY, HAVING
	// and ORDER BY expressions).
	targets []*target
	// subs, when set, collects the scalar subqueries of the clause; nil
	// where subqueries are not supported.
	subs *subqueries
	// windows, when set, collects the window function calls of the clause
	// (select list, ORDER BY); inWindow is set inside one (bind_window.go).
	windows  *windowBuilder
	inWindow bool
}

func (c *exprCtx) with(f func(*exprCtx)) *exprCtx {
	n := *c
	f(&n)
	return &n
}

// orderItem is a bound ORDER BY key: an index into the projection (the
// select list followed by hidden sort columns).
type orderItem struct {
	out        int
	desc       bool
	nullsFirst bool
}

func nodeName(n *pg.Node) string {
	if n == nil || n.Node == nil {
		return "empty"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", n.Node), "*pg_query.Node_")
}

// bindStatement binds one parsed statement.
func (b *binder) bindStatement(raw *pg.RawStmt) (node, error) {
	switch s := raw.Stmt.GetNode().(type) {
	case *pg.Node_SelectStmt:
		return b.bindQuery(s.SelectStmt, nil)
	case *pg.Node_ExplainStmt:
		return nil, b.unsupported(raw.StmtLocation, "EXPLAIN statements (use Explain on the plan)")
	default:
		kind := strings.ToUpper(strings.TrimSuffix(nodeName(raw.Stmt), "Stmt"))
		return nil, b.unsupported(raw.StmtLocation, kind+" statements")
	}
}

// bindQuery binds a query: a SELECT or a set operation, with its WITH
// clause. parent is the scope of the enclosing query for a subquery.
func (b *binder) bindQuery(sel *pg.SelectStmt, parent *scope) (node, error) {
	if sel == nil {
		return nil, b.unsupported(-1, "this query form")
	}
	if sel.WithClause != nil {
		saved := b.ctes
		defer func() { b.ctes = saved }()
		if err := b.bindWith(sel.WithClause); err != nil {
			return nil, err
		}
	}
	switch sel.Op {
	case pg.SetOperation_SETOP_NONE:
		return b.bindSelect(sel, parent)
	case pg.SetOperation_SETOP_UNION, pg.SetOperation_SETOP_INTERSECT, pg.SetOperation_SETOP_EXCEPT:
		return b.bindUnion(sel, parent)
	}
	return nil, b.unsupported(-1, "this set operation")
}

// bindWith puts a WITH clause's CTEs in view, in order.
func (b *binder) bindWith(w *pg.WithClause) error {
	if w.Recursive {
		return b.unsupported(w.Location, "WITH RECURSIVE")
	}
	for _, n := range w.Ctes {
		cte := n.GetCommonTableExpr()
		if cte == nil {
			return b.unsupported(exprLoc(n), "this WITH item")
		}
		if cte.Ctequery.GetSelectStmt() == nil {
			return b.unsupported(cte.Location, "data-modifying statements in WITH")
		}
		if cte.SearchClause != nil || cte.CycleClause != nil {
			return b.unsupported(cte.Location, "SEARCH and CYCLE clauses")
		}
		b.ctes = &cteEnv{def: cte, next: b.ctes}
	}
	// Two CTEs of one WITH may not share a name.
	seen := map[string]bool{}
	for _, n := range w.Ctes {
		cte := n.GetCommonTableExpr()
		if seen[strings.ToLower(cte.Ctename)] {
			return b.errorf(CodeAmbiguous, cte.Location, "WITH query name %q specified more than once", cte.Ctename)
		}
		seen[strings.ToLower(cte.Ctename)] = true
	}
	return nil
}

// bindSelect binds a SELECT. The logical plan it builds is
//
//	FROM (scans and joins) -> [scalar subqueries] -> [semi/anti joins]
//	-> Filter(WHERE) -> [Aggregate -> HAVING as WHERE] -> [scalar
//	subqueries of the select list] -> Project(select list + hidden sort
//	keys) -> [Aggregate(DISTINCT)] -> [Sort] -> [Limit] -> [Project(visible
//	columns)]
func (b *binder) bindSelect(sel *pg.SelectStmt, parent *scope) (node, error) {
	if err := b.checkSelectClauses(sel); err != nil {
		return nil, err
	}
	if len(sel.ValuesLists) > 0 {
		return b.bindValues(sel, parent) // values.go
	}
	sc := newScope(parent)
	root, err := b.bindFrom(sel.FromClause, sc)
	if err != nil {
		return nil, err
	}
	return b.bindSelectBody(sel, root, sc)
}

// bindSelectBody binds everything of a SELECT but its FROM clause, over
// root whose relations are in sc.
func (b *binder) bindSelectBody(sel *pg.SelectStmt, root node, sc *scope) (node, error) {
	saved := b.srfNoRows
	b.srfNoRows = false
	n, err := b.bindSelectBodyRows(sel, root, sc)
	noRows := b.srfNoRows
	b.srfNoRows = saved
	if err != nil || !noRows {
		return n, err
	}
	// A set-returning function of a NULL array in the select list: every
	// row gives none (arrays_pg.go).
	return &filterNode{input: n, conds: []*plan.Expr{boolLit(false)}}, nil
}

func (b *binder) bindSelectBodyRows(sel *pg.SelectStmt, root node, sc *scope) (node, error) {
	if b.groupByAll(sel) {
		b.expandGroupByAll(sel)
	}
	targets, err := b.expandTargets(sel.TargetList, sc)
	if err != nil {
		return nil, err
	}
	if len(targets) == 0 {
		return nil, b.unsupported(-1, "SELECT without output columns")
	}

	if sel.WhereClause != nil {
		c := &exprCtx{clause: "WHERE", scope: sc, targets: targets}
		p, err := b.bindPredicate(sel.WhereClause, c, nil)
		if err != nil {
			return nil, err
		}
		root = b.applyPredicate(root, p)
	}
	if root, err = b.bindSelectUnnest(sel, targets, root, sc); err != nil {
		return nil, err
	}

	grouped := len(sel.GroupClause) > 0 || sel.HavingClause != nil
	for _, t := range targets {
		grouped = grouped || t.ast != nil && containsAgg(t.ast)
	}
	for _, s := range sel.SortClause {
		grouped = grouped || containsAgg(s)
	}
	qual := b.qualifyOf(sel)
	don, err := b.distinctOn(sel) // distinct_on.go
	if err != nil {
		return nil, err
	}
	if don != nil {
		if qual != nil {
			return nil, b.unsupported(don.pos, "DISTINCT ON with QUALIFY")
		}
		qual = don
	}
	grouped = grouped || qual != nil && containsAgg(qual.cond)

	var ag *aggBuilder
	post := &subqueries{}
	wb, err := b.newWindowBuilder(sel)
	if err != nil {
		return nil, err
	}
	base := &exprCtx{scope: sc, subs: post, windows: wb}
	if grouped {
		ag = &aggBuilder{groupKeys: map[string]int{}, aggKeys: map[string]int{}, extra: map[colID]bool{}, outer: sc.outer}
		if hasGroupingSets(sel.GroupClause) {
			if err := b.bindGroupingSets(sel.GroupClause, targets, sc, ag); err != nil {
				return nil, err
			}
		}
		for _, g := range sel.GroupClause {
			if ag.sets != nil {
				break
			}
			e, err := b.bindGroupItem(g, targets, sc)
			if err != nil {
				return nil, err
			}
			b.addGroup(ag, e)
		}
		base.aggs = ag
	}

	// The select list.
	for _, t := range targets {
		if err := b.bindTarget(t, base.with(func(c *exprCtx) { c.clause = "SELECT" }), ag); err != nil {
			return nil, err
		}
	}

	var having *boundPred
	if sel.HavingClause != nil {
		c := base.with(func(c *exprCtx) { c.clause = "HAVING"; c.targets = targets; c.windows = nil })
		having, err = b.bindPredicate(sel.HavingClause, c, func(e *plan.Expr) (*plan.Expr, error) {
			return b.grouped(e, ag, "HAVING")
		})
		if err != nil {
			return nil, err
		}
	}

	// QUALIFY: a filter over the windows' results, select-list aliases in
	// view as in ORDER BY.
	var qualify []*plan.Expr
	if qual != nil {
		c := base.with(func(c *exprCtx) { c.clause = "QUALIFY"; c.targets = targets })
		e, err := b.bindExpr(qual.cond, c)
		if err != nil {
			return nil, err
		}
		if e, err = b.grouped(e, ag, "QUALIFY"); err != nil {
			return nil, err
		}
		if e, err = b.requireBool(e, "QUALIFY", exprLoc(qual.cond)); err != nil {
			return nil, err
		}
		if len(wb.calls) == 0 { // as DuckDB
			return nil, b.errorf(CodeGrouping, qual.pos, "QUALIFY needs a window function in the select list or the QUALIFY clause")
		}
		for _, x := range splitConjuncts(e) {
			if !isTrueLit(x) {
				qualify = append(qualify, x)
			}
		}
	}

	distinct := len(sel.DistinctClause) > 0 && don == nil
	outExprs := make([]*plan.Expr, len(targets))
	for i, t := range targets {
		outExprs[i] = t.bound
	}
	var order []orderItem
	sorts := sel.SortClause
	if all, ok := b.orderByAll(sel); ok {
		// ORDER BY ALL: every select-list column, left to right, each
		// with the clause's direction and NULLS placement.
		sorts = nil
		for i := range targets {
			k := &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Ival{Ival: &pg.Integer{Ival: int32(i + 1)}}, Location: all.Location}}}
			sorts = append(sorts, &pg.Node{Node: &pg.Node_SortBy{SortBy: &pg.SortBy{Node: k, SortbyDir: all.SortbyDir, SortbyNulls: all.SortbyNulls, Location: all.Location}}})
		}
	}
	for _, s := range sorts {
		sb := s.GetSortBy()
		if sb.SortbyDir == pg.SortByDir_SORTBY_USING {
			return nil, b.unsupported(sb.Location, "ORDER BY ... USING")
		}
		out, err := b.bindOrderKey(sb.Node, targets, &outExprs, base, ag, distinct)
		if err != nil {
			return nil, err
		}
		order = append(order, orderItem{
			out:        out,
			desc:       sb.SortbyDir == pg.SortByDir_SORTBY_DESC,
			nullsFirst: sb.SortbyNulls == pg.SortByNulls_SORTBY_NULLS_FIRST, // DuckDB: NULLS LAST by default
		})
	}

	limit, offset, err := b.bindLimit(sel)
	if err != nil {
		return nil, err
	}

	// Assemble.
	if ag != nil {
		if ag.sets != nil {
			root, err = b.aggregateGroupingSets(root, ag)
		} else {
			root, err = b.buildAggregate(root, ag)
		}
		if err != nil {
			return nil, err
		}
		if having != nil {
			root = b.applyPredicate(root, having)
		}
	}
	root = b.attachScalars(root, post)
	if len(wb.calls) > 0 {
		root = b.buildWindows(root, wb)
	}
	if len(qualify) > 0 {
		root = &filterNode{input: root, conds: qualify}
	}
	proj := &projectNode{input: root, exprs: outExprs}
	for i, e := range outExprs {
		name := ""
		if i < len(targets) {
			name = targets[i].name
		} else {
			name = exprName(e)
		}
		proj.cols = append(proj.cols, b.md.add(column{name: name, typ: e.Type, nullable: b.nullable(e)}))
	}
	root = proj
	outCols := proj.cols
	if distinct {
		d := &aggregateNode{input: root}
		for _, id := range proj.cols {
			c := b.md.col(id)
			d.groups = append(d.groups, b.md.ref(id))
			d.groupCols = append(d.groupCols, b.md.add(c))
		}
		root, outCols = d, d.groupCols
	}
	if len(order) > 0 {
		s := &sortNode{input: root}
		for _, o := range order {
			s.keys = append(s.keys, sortKey{expr: b.md.ref(outCols[o.out]), desc: o.desc, nullsFirst: o.nullsFirst})
		}
		root = s
	}
	if limit >= 0 || offset > 0 {
		root = &limitNode{input: root, limit: limit, offset: offset}
	}
	if len(outCols) > len(targets) {
		vis := &projectNode{input: root, cols: outCols[:len(targets)]}
		for _, id := range vis.cols {
			vis.exprs = append(vis.exprs, b.md.ref(id))
		}
		root = vis
	}
	return root, nil
}

// buildAggregate puts the aggregation ag describes over root. DISTINCT
// aggregates over one common argument x become two aggregations (group by
// the keys and x, then aggregate x per key), which spreads the work over
// partitions; COUNT(DISTINCT) mixed with other aggregates is one AggSingle
// aggregation with count_distinct after a shuffle on the keys.
func (b *binder) buildAggregate(root node, ag *aggBuilder) (node, error) {
	var orders []string
	for _, a := range ag.aggs {
		if k := sortKeysKey(a.order); len(a.order) > 0 && !slices.Contains(orders, k) {
			orders = append(orders, k)
		}
	}
	if len(orders) > 1 {
		for _, a := range ag.aggs {
			if a.distinct {
				return nil, b.unsupported(-1, "DISTINCT aggregates next to ordered aggregates with different ORDER BYs")
			}
		}
		return b.expandOrderedAggregates(root, ag, orders), nil
	}
	var distinctArg *plan.Expr
	twoLevel, anyDistinct, countOnly := true, false, true
	for _, a := range ag.aggs {
		if !a.distinct {
			continue
		}
		anyDistinct = true
		if distinctArg == nil {
			distinctArg = a.arg
		} else if exprKey(distinctArg) != exprKey(a.arg) {
			twoLevel = false
		}
		if a.fn != plan.AggCount {
			countOnly = false
		}
	}
	if !anyDistinct {
		return &aggregateNode{input: root, groups: ag.groups, groupCols: ag.groupCols, aggs: ag.aggs, aggCols: ag.aggCols}, nil
	}
	for _, a := range ag.aggs {
		// min and max of x ignore duplicates of x anyway (the library's
		// DuplicateInsensitive).
		if !a.distinct && !(aggInfo(a.fn).DuplicateInsensitive && exprKey(a.arg) == exprKey(distinctArg)) {
			twoLevel = false
		}
	}
	if twoLevel {
		inner := &aggregateNode{input: root}
		for i, g := range ag.groups {
			inner.groups = append(inner.groups, g)
			inner.groupCols = append(inner.groupCols, b.md.add(b.md.col(ag.groupCols[i])))
		}
		inner.groups = append(inner.groups, distinctArg)
		xcol := b.md.add(column{name: exprName(distinctArg), typ: distinctArg.Type, nullable: b.nullable(distinctArg)})
		inner.groupCols = append(inner.groupCols, xcol)
		outer := &aggregateNode{input: inner, groupCols: ag.groupCols, aggCols: ag.aggCols}
		for _, id := range inner.groupCols[:len(ag.groups)] {
			outer.groups = append(outer.groups, b.md.ref(id))
		}
		for _, a := range ag.aggs {
			outer.aggs = append(outer.aggs, aggExpr{fn: a.fn, arg: b.md.ref(xcol), typ: a.typ})
		}
		return outer, nil
	}
	if !countOnly {
		return b.expandDistinctAggregates(root, ag), nil
	}
	n := &aggregateNode{input: root, groups: ag.groups, groupCols: ag.groupCols, aggCols: ag.aggCols}
	for _, a := range ag.aggs {
		if a.distinct {
			a.fn, a.distinct = plan.AggCountDistinct, false
		}
		n.aggs = append(n.aggs, a)
	}
	return n, nil
}

// checkSelectClauses rejects SELECT features sluice does not run.
func (b *binder) checkSelectClauses(sel *pg.SelectStmt) error {
	switch {
	case sel.IntoClause != nil:
		return b.unsupported(-1, "SELECT INTO")
	case len(sel.LockingClause) > 0:
		return b.unsupported(-1, "locking clauses (FOR UPDATE/SHARE)")
	case sel.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES:
		return b.unsupported(exprLoc(sel.LimitCount), "FETCH ... WITH TIES")
	case sel.GroupDistinct:
		return b.unsupported(-1, "GROUP BY DISTINCT")
	}
	for _, d := range sel.DistinctClause {
		if d != nil && d.Node != nil && sel.Op != pg.SetOperation_SETOP_NONE {
			return b.unsupported(exprLoc(d), "DISTINCT ON")
		}
	}
	return nil
}

// bindUnion binds UNION [ALL]: each side is a query of its own; column
// types meet in their common type (casts in a projection over a side), the
// names are the left side's. UNION without ALL removes duplicates with an
// aggregation; ORDER BY and LIMIT of the whole apply to the result.
func (b *binder) bindUnion(sel *pg.SelectStmt, parent *scope) (node, error) {
	if err := b.checkSelectClauses(sel); err != nil {
		return nil, err
	}
	l, err := b.bindQuery(sel.Larg, parent)
	if err != nil {
		return nil, err
	}
	r, err := b.bindQuery(sel.Rarg, parent)
	if err != nil {
		return nil, err
	}
	lo, ro := l.output(), r.output()
	if len(lo) != len(ro) {
		return nil, b.errorf(CodeType, -1, "type mismatch: each %s query must have the same number of columns (%d and %d)", map[pg.SetOperation]string{pg.SetOperation_SETOP_UNION: "UNION",
			pg.SetOperation_SETOP_INTERSECT: "INTERSECT", pg.SetOperation_SETOP_EXCEPT: "EXCEPT"}[sel.Op], len(lo), len(ro))
	}
	op := map[pg.SetOperation]string{pg.SetOperation_SETOP_UNION: "UNION",
		pg.SetOperation_SETOP_INTERSECT: "INTERSECT", pg.SetOperation_SETOP_EXCEPT: "EXCEPT"}[sel.Op]
	u := &unionNode{}
	types := make([]plan.DataType, len(lo))
	names := make([]string, len(lo))
	for i := range lo {
		lc, rc := b.md.col(lo[i]), b.md.col(ro[i])
		t, ok := b.setOpType(l, r, lo[i], ro[i])
		if !ok {
			return nil, b.errorf(CodeType, -1, "type mismatch: %s column %d has types %s and %s", op, i+1, lc.typ, rc.typ)
		}
		if t.ID == plan.Null {
			t = plan.Int64Type
		}
		types[i], names[i] = t, lc.name
		u.cols = append(u.cols, b.md.add(column{name: lc.name, typ: t, nullable: lc.nullable || rc.nullable}))
	}
	for _, side := range []node{l, r} {
		in, cols, err := b.castColumns(side, types)
		if err != nil {
			return nil, err
		}
		u.inputs = append(u.inputs, in)
		u.inCols = append(u.inCols, cols)
	}
	var root node = u
	if sel.Op != pg.SetOperation_SETOP_UNION {
		root = b.intersectExcept(u, sel.Op == pg.SetOperation_SETOP_INTERSECT, sel.All)
	} else if !sel.All {
		d := &aggregateNode{input: root}
		for _, id := range u.cols {
			d.groups = append(d.groups, b.md.ref(id))
			d.groupCols = append(d.groupCols, b.md.add(b.md.col(id)))
		}
		root = d
	}
	if len(sel.SortClause) == 0 && sel.LimitCount == nil && sel.LimitOffset == nil {
		return root, nil
	}
	// ORDER BY and LIMIT of a set operation: bind them as a SELECT * over
	// the union's result.
	sc := newScope(parent)
	sc.rels = []*relation{{alias: "", table: "union", cols: root.output(), names: names}}
	star := &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Location: -1, Val: &pg.Node{Node: &pg.Node_ColumnRef{
		ColumnRef: &pg.ColumnRef{Location: -1, Fields: []*pg.Node{{Node: &pg.Node_AStar{AStar: &pg.A_Star{}}}}}}}}}}
	wrapper := &pg.SelectStmt{TargetList: []*pg.Node{star}, SortClause: sel.SortClause,
		LimitCount: sel.LimitCount, LimitOffset: sel.LimitOffset, LimitOption: sel.LimitOption}
	return b.bindSelectBody(wrapper, root, sc)
}

// castColumns returns n with its output cast to types (a projection when
// any column needs a cast) and the columns that carry the result.
func (b *binder) castColumns(n node, types []plan.DataType) (node, []colID, error) {
	out := n.output()
	same := true
	for i, id := range out {
		if b.md.col(id).typ != types[i] {
			same = false
		}
	}
	if same {
		return n, out, nil
	}
	p := &projectNode{input: n}
	for i, id := range out {
		e, err := b.cast(b.md.ref(id), types[i], -1)
		if err != nil {
			return nil, nil, err
		}
		c := b.md.col(id)
		p.exprs = append(p.exprs, e)
		p.cols = append(p.cols, b.md.add(column{name: c.name, typ: types[i], nullable: c.nullable}))
	}
	return p, p.cols, nil
}

// bindFrom binds the FROM clause into sc: a comma list is a chain of
// cross joins, which the WHERE clause's conditions and the join-ordering
// rule turn into proper joins.
func (b *binder) bindFrom(from []*pg.Node, sc *scope) (node, error) {
	if len(from) == 0 {
		return b.oneRow(), nil // values.go
	}
	var root node
	for _, item := range from {
		if root != nil {
			n, ok, err := b.fromUnnest(item, root, sc)
			if err != nil {
				return nil, err
			}
			if ok {
				root = n
				continue
			}
		}
		n, rels, err := b.bindFromItem(item, sc.parent)
		if err != nil {
			return nil, err
		}
		if err := b.addRelations(sc, rels, item); err != nil {
			return nil, err
		}
		if root == nil {
			root = n
		} else {
			root = &joinNode{typ: plan.JoinInner, left: root, right: n}
		}
	}
	return root, nil
}

// addRelations adds rels to sc; two FROM items of one query may not have
// the same name.
func (b *binder) addRelations(sc *scope, rels []*relation, at *pg.Node) error {
	for _, r := range rels {
		for _, o := range sc.rels {
			if r.alias != "" && strings.EqualFold(o.alias, r.alias) {
				return b.errorf(CodeAmbiguous, exprLoc(at), "table name %q specified more than once (use an alias)", r.alias)
			}
		}
		sc.rels = append(sc.rels, r)
	}
	return nil
}

// bindFromItem binds one FROM item: a table or CTE, a derived table, or a
// join. parent is the scope of the enclosing query (a FROM item cannot see
// its siblings, only enclosing queries).
func (b *binder) bindFromItem(item *pg.Node, parent *scope) (node, []*relation, error) {
	switch f := item.Node.(type) {
	case *pg.Node_RangeVar:
		if f.RangeVar.Schemaname == "" && f.RangeVar.Catalogname == "" {
			for e := b.ctes; e != nil; e = e.next {
				if strings.EqualFold(e.def.Ctename, f.RangeVar.Relname) {
					return b.bindCTERef(e, f.RangeVar)
				}
			}
		}
		n, rel, err := b.bindTable(f.RangeVar)
		if err != nil {
			return nil, nil, err
		}
		return n, []*relation{rel}, nil
	case *pg.Node_RangeSubselect:
		rs := f.RangeSubselect
		if rs.Lateral {
			return nil, nil, b.unsupported(exprLoc(item), "LATERAL")
		}
		sub, err := b.bindQuery(rs.Subquery.GetSelectStmt(), parent)
		if err != nil {
			return nil, nil, err
		}
		alias := ""
		var colAliases []*pg.Node
		if rs.Alias != nil {
			alias, colAliases = rs.Alias.Aliasname, rs.Alias.Colnames
		}
		n, rel, err := b.derived(sub, alias, colAliases, exprLoc(item))
		if err != nil {
			return nil, nil, err
		}
		return n, []*relation{rel}, nil
	case *pg.Node_JoinExpr:
		return b.bindJoin(f.JoinExpr, parent)
	case *pg.Node_RangeFunction:
		return b.bindRangeFunction(f.RangeFunction, item, parent) // range_func.go
	}
	return nil, nil, b.unsupported(exprLoc(item), "FROM item "+nodeName(item))
}

// bindJoin binds an explicit JOIN.
func (b *binder) bindJoin(je *pg.JoinExpr, parent *scope) (node, []*relation, error) {
	loc := exprLoc(je.Larg)
	switch {
	case je.Alias != nil:
		return nil, nil, b.unsupported(loc, "aliases on joins")
	}
	var typ plan.JoinType
	switch je.Jointype {
	case pg.JoinType_JOIN_INNER:
		typ = plan.JoinInner
	case pg.JoinType_JOIN_LEFT:
		typ = plan.JoinLeft
	case pg.JoinType_JOIN_RIGHT:
		typ = plan.JoinRight
	case pg.JoinType_JOIN_FULL:
		typ = plan.JoinFull
	default:
		return nil, nil, b.unsupported(loc, "this join type")
	}
	l, lrels, err := b.bindFromItem(je.Larg, parent)
	if err != nil {
		return nil, nil, err
	}
	r, rrels, err := b.bindFromItem(je.Rarg, parent)
	if err != nil {
		return nil, nil, err
	}
	js := newScope(parent)
	if err := b.addRelations(js, lrels, je.Larg); err != nil {
		return nil, nil, err
	}
	if err := b.addRelations(js, rrels, je.Rarg); err != nil {
		return nil, nil, err
	}
	// The padded side's columns are NULL in the rows an outer join pads,
	// whatever their table says. A column keeps its id above the join, so
	// it is marked nullable everywhere: conservative below the join, and
	// right above it, where NOT IN, COUNT and the null analyses read it.
	if typ == plan.JoinLeft || typ == plan.JoinFull {
		b.markNullable(rrels)
	}
	if typ == plan.JoinRight || typ == plan.JoinFull {
		b.markNullable(lrels)
	}
	j := &joinNode{typ: typ, left: l, right: r}
	var using *usingJoin
	if je.IsNatural || len(je.UsingClause) > 0 {
		var err error
		if using, err = b.bindUsing(je, j, lrels, rrels); err != nil {
			return nil, nil, err
		}
	}
	if je.Quals != nil && typ == plan.JoinInner && using == nil && containsSubLink(je.Quals) {
		// An inner join's ON condition means what the same condition in
		// WHERE would: with subqueries it is bound as a predicate over
		// the cross product (scalar subqueries attached, IN and EXISTS as
		// semi and anti joins), and the optimizer moves its equalities
		// into the join. Outer joins keep the refusal below: their ON
		// conditions decide padding, not filtering.
		p, err := b.bindPredicate(je.Quals, &exprCtx{clause: "JOIN ... ON", scope: js}, nil)
		if err != nil {
			return nil, nil, err
		}
		return b.applyPredicate(j, p), js.rels, nil
	}
	if je.Quals != nil {
		cond, err := b.bindExpr(je.Quals, &exprCtx{clause: "JOIN ... ON", scope: js})
		if err != nil {
			return nil, nil, err
		}
		if cond, err = b.requireBool(cond, "JOIN ... ON", exprLoc(je.Quals)); err != nil {
			return nil, nil, err
		}
		for _, c := range splitConjuncts(cond) {
			if !isTrueLit(c) {
				j.conds = append(j.conds, c)
			}
		}
	}
	// An outer join without an equality between its sides is a hash join
	// on a constant key (lowerJoin).
	if using != nil {
		return b.finishUsing(j, js, using)
	}
	return j, js.rels, nil
}

// bindCTERef binds a reference to a CTE: its query, bound afresh in the
// CTE's own environment, renamed by the CTE's and the reference's column
// aliases.
func (b *binder) bindCTERef(e *cteEnv, rv *pg.RangeVar) (node, []*relation, error) {
	saved := b.ctes
	b.ctes = e.next
	sub, err := b.bindQuery(e.def.Ctequery.GetSelectStmt(), nil)
	b.ctes = saved
	if err != nil {
		return nil, nil, err
	}
	n, rel, err := b.derived(sub, e.def.Ctename, e.def.Aliascolnames, rv.Location)
	if err != nil {
		return nil, nil, err
	}
	if rv.Alias != nil {
		rel.alias, rel.table = rv.Alias.Aliasname, rv.Alias.Aliasname
		if len(rv.Alias.Colnames) > 0 {
			if n, rel, err = b.derived(n, rv.Alias.Aliasname, rv.Alias.Colnames, rv.Location); err != nil {
				return nil, nil, err
			}
		}
	}
	return n, []*relation{rel}, nil
}

// derived makes a relation of a subquery's output, renaming columns by
// aliases (a projection gives the renamed columns their names, so plans
// read well).
func (b *binder) derived(sub node, alias string, aliases []*pg.Node, loc int32) (node, *relation, error) {
	out := sub.output()
	if len(aliases) > len(out) {
		return nil, nil, b.errorf(CodeValue, loc, "%q has %d columns available but %d columns specified", alias, len(out), len(aliases))
	}
	rel := &relation{alias: alias, table: alias, cols: out}
	renamed := false
	for i, id := range out {
		name := b.md.col(id).name
		if i < len(aliases) {
			if a := aliases[i].GetString_().GetSval(); a != name {
				name, renamed = a, true
			}
		}
		rel.names = append(rel.names, name)
	}
	if !renamed {
		return sub, rel, nil
	}
	p := &projectNode{input: sub}
	for i, id := range out {
		c := b.md.col(id)
		c.name, c.table, c.display = rel.names[i], alias, ""
		p.exprs = append(p.exprs, b.md.ref(id))
		p.cols = append(p.cols, b.md.add(c))
	}
	rel.cols = p.cols
	return p, rel, nil
}

func (b *binder) bindTable(rv *pg.RangeVar) (node, *relation, error) {
	if rv.Catalogname != "" {
		return nil, nil, b.unsupported(rv.Location, "catalog-qualified table names")
	}
	name := rv.Relname
	if rv.Schemaname != "" && rv.Schemaname != "public" && rv.Schemaname != "main" {
		name = rv.Schemaname + "." + rv.Relname
	}
	info, err := b.cat.Table(b.ctx, name)
	if err != nil && isPath(rv.Relname) && rv.Schemaname == "" {
		return b.bindPath(rv) // read_func.go
	}
	if err != nil {
		if errors.Is(err, ErrUnknownTable) {
			e := b.errorf(CodeUnknownTbl, rv.Location, "unknown table %q", name)
			e.err = err
			return nil, nil, e
		}
		// Not the user's SQL: Redis unreachable (SL203, which the error
		// carries), or an Iceberg catalog or a table's metadata (SL204).
		if plan.CodeOf(err) == "" {
			err = &plan.CodedError{Code: plan.CodeCatalogRead, Err: err}
		}
		return nil, nil, fmt.Errorf("reading table %q from the catalog: %w", name, err)
	}
	if info.View != "" {
		return b.bindView(rv, info)
	}
	return b.bindTableInfo(rv, info)
}

// bindTableInfo binds the table info as the FROM item rv: a scan, or the
// Values leaf of a constant table (virtual.go).
func (b *binder) bindTableInfo(rv *pg.RangeVar, info *TableInfo) (node, *relation, error) {
	alias := info.Name
	if base, _, ok := strings.Cut(alias, "@"); ok && base != "" {
		alias = base // an Iceberg snapshot (t@ref) is qualified as t
	}
	return b.bindTableInfoAs(rv, info, alias)
}

// bindTableInfoAs is bindTableInfo with the relation's name when rv has
// no alias.
func (b *binder) bindTableInfoAs(rv *pg.RangeVar, info *TableInfo, alias string) (node, *relation, error) {
	name := info.Name
	rel := &relation{alias: alias, table: info.Name, skipped: info.Skipped}
	var aliases []*pg.Node
	if rv.Alias != nil {
		rel.alias, aliases = rv.Alias.Aliasname, rv.Alias.Colnames
	}
	if len(aliases) > len(info.Columns) {
		return nil, nil, b.errorf(CodeValue, rv.Location, "table %q has %d columns available but %d columns specified", name, len(info.Columns), len(aliases))
	}
	scan := &scanNode{table: info, alias: rel.alias}
	for i, f := range info.Columns {
		col := column{name: f.Name, typ: f.Type, nullable: f.Nullable, table: rel.alias}
		if rel.alias != alias {
			col.display = rel.alias + "." + f.Name
		}
		id := b.md.add(col)
		rel.cols = append(rel.cols, id)
		name := f.Name
		if i < len(aliases) {
			name = aliases[i].GetString_().GetSval()
		}
		rel.names = append(rel.names, name)
		scan.cols = append(scan.cols, id)
		scan.ords = append(scan.ords, i)
	}
	if info.Constant {
		n, err := b.constantTable(info, rel)
		return n, rel, err
	}
	return scan, rel, nil
}

func isTrueLit(e *plan.Expr) bool { return isLit(e) && !e.Value.Null && e.Value.B }

// expandTargets expands * and t.* in the select list.
func (b *binder) expandTargets(list []*pg.Node, sc *scope) ([]*target, error) {
	var out []*target
	for _, n := range list {
		rt := n.GetResTarget()
		if rt == nil || rt.Val == nil {
			return nil, b.unsupported(exprLoc(n), "select-list item "+nodeName(n))
		}
		if len(rt.Indirection) > 0 {
			return nil, b.unsupported(rt.Location, "indirection in the select list")
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			var qual string
			switch len(cr.Fields) {
			case 1:
			case 2:
				qual = cr.Fields[0].GetString_().GetSval()
			default:
				return nil, b.unsupported(cr.Location, "schema-qualified column references")
			}
			found := false
			for _, r := range sc.rels {
				if qual != "" && !strings.EqualFold(r.alias, qual) {
					continue
				}
				found = true
				for i, id := range r.cols {
					if qual == "" && r.hidden != nil && r.hidden[i] {
						continue
					}
					ref := b.md.ref(id)
					b.pos[ref] = cr.Location
					out = append(out, &target{col: ref, name: r.names[i]})
				}
			}
			if !found {
				return nil, b.errorf(CodeUnknownTbl, cr.Location, "unknown table %q in %s.*", qual, qual)
			}
			continue
		}
		t := &target{ast: rt.Val, name: rt.Name, aliased: rt.Name != ""}
		if !t.aliased {
			if cr := rt.Val.GetColumnRef(); cr != nil {
				t.name = cr.Fields[len(cr.Fields)-1].GetString_().GetSval()
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// bindTarget binds one select-list item (post-aggregation if grouped).
func (b *binder) bindTarget(t *target, c *exprCtx, ag *aggBuilder) error {
	e := t.col
	if e == nil {
		var err error
		if e, err = b.bindExpr(t.ast, c); err != nil {
			return err
		}
	}
	e, err := b.grouped(e, ag, "SELECT")
	if err != nil {
		return err
	}
	if e.Type.ID == plan.Null { // an untyped NULL in the output is an int64 NULL column
		if !b.postgres { // Postgres's untyped NULL stays NULL (shown as text)
			e = nullOf(plan.Int64Type)
		}
	}
	t.bound = e
	if t.name == "" {
		t.name = exprName(e)
	}
	return nil
}

// bindGroupItem binds one GROUP BY item: a select-list position, an input
// column, a select-list alias, a boolean constant (GROUP BY true: one
// group when there are rows, none when there are not, as DuckDB), or an
// expression over input columns.
func (b *binder) bindGroupItem(n *pg.Node, targets []*target, sc *scope) (*plan.Expr, error) {
	c := &exprCtx{clause: "GROUP BY", scope: sc, targets: targets}
	switch x := n.Node.(type) {
	case *pg.Node_GroupingSet:
		return nil, b.unsupported(x.GroupingSet.Location, "GROUPING SETS, ROLLUP and CUBE")
	case *pg.Node_AConst:
		if iv := x.AConst.GetIval(); iv != nil {
			k := int(iv.Ival)
			if k < 1 || k > len(targets) {
				return nil, b.errorf(CodeValue, x.AConst.Location, "GROUP BY position %d is not in select list", k)
			}
			t := targets[k-1]
			if t.col != nil {
				return t.col, nil
			}
			return b.bindExpr(t.ast, c.with(func(c *exprCtx) { c.targets = nil }))
		}
		if bv := x.AConst.GetBoolval(); bv != nil {
			return boolLit(bv.Boolval), nil
		}
		return nil, b.errorf(CodeValue, x.AConst.Location, "non-integer constant in GROUP BY")
	}
	return b.bindExpr(n, c)
}

func (b *binder) addGroup(ag *aggBuilder, e *plan.Expr) {
	k := exprKey(e)
	if _, ok := ag.groupKeys[k]; ok {
		return
	}
	ag.groupKeys[k] = len(ag.groups)
	ag.groups = append(ag.groups, e)
	ag.groupCols = append(ag.groupCols, b.md.add(column{name: exprName(e), typ: e.Type, nullable: b.nullable(e)}))
}

// addAgg registers an aggregate call and returns a reference to its result.
func (b *binder) addAgg(ag *aggBuilder, a aggExpr) *plan.Expr {
	k := fmt.Sprintf("%s(%g,%q):%s", a.fn, a.fraction, a.sep, exprKey(a.arg))
	for _, m := range a.more {
		k += "," + exprKey(m)
	}
	if len(a.order) > 0 {
		k += " order " + sortKeysKey(a.order)
	}
	if a.dedupe {
		k = "dedupe " + k
	}
	if a.distinct {
		k = "distinct " + k
	}
	i, ok := ag.aggKeys[k]
	if !ok {
		i = len(ag.aggs)
		ag.aggKeys[k] = i
		ag.aggs = append(ag.aggs, a)
		nullable := !aggInfo(a.fn).ZeroOnEmpty
		ag.aggCols = append(ag.aggCols, b.md.add(column{name: a.String(), typ: a.typ, nullable: nullable}))
	}
	return b.md.ref(ag.aggCols[i])
}

// grouped rewrites an expression of a grouped query (bound over input
// columns, aggregates already replaced by references to their results) to
// refer to the group keys, and checks that no input column is left outside
// an aggregate. Without aggregation it returns e.
func (b *binder) grouped(e *plan.Expr, ag *aggBuilder, clause string) (*plan.Expr, error) {
	if ag == nil {
		return e, nil
	}
	if ag.sets != nil && e.Op == plan.OpLiteral {
		// A constant key of grouping sets (SELECT 'x' AS c ... ROLLUP (c))
		// is its key column: NULL in the rows of the sets without it.
		// Constants inside other expressions stay constants (Postgres;
		// DuckDB replaces those too).
		if i, ok := ag.groupKeys[exprKey(e)]; ok {
			return b.md.ref(ag.groupCols[i]), nil
		}
	}
	out := substTopDown(e, func(x *plan.Expr) *plan.Expr {
		if x.Op == plan.OpLiteral {
			return nil
		}
		if i, ok := ag.groupKeys[exprKey(x)]; ok {
			return b.md.ref(ag.groupCols[i])
		}
		return nil
	})
	post := map[colID]bool{}
	for _, id := range ag.groupCols {
		post[id] = true
	}
	for _, id := range ag.aggCols {
		post[id] = true
	}
	for id := range ag.extra {
		post[id] = true
	}
	for id := range ag.outer {
		post[id] = true
	}
	var bad *plan.Expr
	walkExpr(out, func(x *plan.Expr) {
		if bad == nil && x.Op == plan.OpColumn && !post[x.Col] {
			bad = x
		}
	})
	if bad != nil {
		loc, ok := b.pos[bad]
		if !ok {
			loc = -1
		}
		return nil, b.errorf(CodeGrouping, loc, "column %q must appear in the GROUP BY clause or be used in an aggregate function (in %s)", bad.Name, clause)
	}
	return out, nil
}

// substTopDown replaces the outermost subexpressions for which f returns
// non-nil, copying only the nodes above a replacement.
func substTopDown(e *plan.Expr, f func(*plan.Expr) *plan.Expr) *plan.Expr {
	if r := f(e); r != nil {
		return r
	}
	var out *plan.Expr
	for i, a := range e.Args {
		na := substTopDown(a, f)
		if na != a {
			if out == nil {
				c := *e
				c.Args = append([]*plan.Expr(nil), e.Args...)
				out = &c
			}
			out.Args[i] = na
		}
	}
	if out == nil {
		return e
	}
	return out
}

// bindOrderKey binds one ORDER BY key to an index into the projection,
// appending a hidden column to outs when the key is not in the select list.
// Resolution order (Postgres, DuckDB): a position; a bare name that is an
// output column name; otherwise an expression over the input (where aliases
// are a fallback), matched against the select list.
func (b *binder) bindOrderKey(n *pg.Node, targets []*target, outs *[]*plan.Expr, base *exprCtx, ag *aggBuilder, distinct bool) (int, error) {
	if ac := n.GetAConst(); ac != nil {
		if ac.GetIval() == nil {
			return 0, b.errorf(CodeValue, ac.Location, "non-integer constant in ORDER BY")
		}
		k := int(ac.GetIval().Ival)
		if k < 1 || k > len(targets) {
			return 0, b.errorf(CodeValue, ac.Location, "ORDER BY position %d is not in select list", k)
		}
		return k - 1, nil
	}
	if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && cr.Fields[0].GetString_() != nil {
		name := cr.Fields[0].GetString_().Sval
		found := -1
		for i, t := range targets {
			if !strings.EqualFold(t.name, name) {
				continue
			}
			if found >= 0 && exprKey(targets[found].bound) != exprKey(t.bound) {
				return 0, b.errorf(CodeAmbiguous, cr.Location, "ORDER BY %q is ambiguous", name)
			}
			if found < 0 {
				found = i
			}
		}
		if found >= 0 {
			return found, nil
		}
	}
	c := base.with(func(c *exprCtx) { c.clause = "ORDER BY"; c.targets = targets })
	e, err := b.bindExpr(n, c)
	if err != nil {
		return 0, err
	}
	if e, err = b.grouped(e, ag, "ORDER BY"); err != nil {
		return 0, err
	}
	k := exprKey(e)
	for i, o := range *outs {
		if exprKey(o) == k {
			return i, nil
		}
	}
	if distinct {
		return 0, b.errorf(CodeGrouping, exprLoc(n), "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
	}
	if e.Type.ID == plan.Null {
		e = nullOf(plan.Int64Type)
	}
	*outs = append(*outs, e)
	return len(*outs) - 1, nil
}

// bindLimit binds LIMIT and OFFSET: constant non-negative integers
// (-1: no limit).
func (b *binder) bindLimit(sel *pg.SelectStmt) (limit, offset int64, err error) {
	get := func(n *pg.Node, what string) (int64, bool, error) {
		if n == nil {
			return 0, false, nil
		}
		e, err := b.bindExpr(n, &exprCtx{clause: what, scope: &scope{}})
		if err != nil {
			return 0, false, err
		}
		b.noteParam(e, plan.Int64Type) // LIMIT $1: bigint, as Postgres infers it
		if !isLit(e) {
			return 0, false, b.errorf(CodeUnsupported, exprLoc(n), "unsupported: non-constant %s", what)
		}
		if e.Value.Null {
			return 0, false, nil
		}
		if e.Type.ID == plan.String {
			// An untyped parameter ($1 sent with no type, as drivers do)
			// arrives as a string: Postgres infers bigint here.
			if n, err := b.cast(e, plan.Int64Type, exprLoc(n)); err == nil && isLit(n) {
				e = n
			}
		}
		if e.Type.ID != plan.Int64 {
			return 0, false, b.errorf(CodeType, exprLoc(n), "type mismatch: %s must be an integer, not %s", what, e.Type)
		}
		if e.Value.I < 0 {
			return 0, false, b.errorf(CodeValue, exprLoc(n), "%s must not be negative", what)
		}
		return e.Value.I, true, nil
	}
	l, hasLimit, err := get(sel.LimitCount, "LIMIT")
	if err != nil {
		return 0, 0, err
	}
	o, _, err := get(sel.LimitOffset, "OFFSET")
	if err != nil {
		return 0, 0, err
	}
	if !hasLimit {
		l = -1
	}
	return l, o, nil
}

// requireBool checks that a predicate is boolean (an untyped NULL becomes a
// boolean NULL).
func (b *binder) requireBool(e *plan.Expr, clause string, loc int32) (*plan.Expr, error) {
	switch e.Type.ID {
	case plan.Bool:
		return e, nil
	case plan.Null:
		b.noteParam(e, plan.BoolType) // WHERE $1, x OR $1: a boolean parameter
		return nullOf(plan.BoolType), nil
	}
	return nil, b.errorf(CodeType, loc, "type mismatch: argument of %s must be bool, not %s", clause, e.Type)
}

// splitConjuncts flattens nested ANDs.
func splitConjuncts(e *plan.Expr) []*plan.Expr {
	if e.Op == plan.OpAnd {
		return append(splitConjuncts(e.Args[0]), splitConjuncts(e.Args[1])...)
	}
	return []*plan.Expr{e}
}

// markNullable marks every column of rels as one that may be NULL (the
// padded side of an outer join).
func (b *binder) markNullable(rels []*relation) {
	for _, r := range rels {
		for _, id := range r.cols {
			b.md.cols[id].nullable = true
		}
	}
}

// nullable reports whether e may be NULL (conservatively).
func (b *binder) nullable(e *plan.Expr) bool { return nullableExpr(e, b.md) }

// funcName returns the unqualified, lower-case name of a function call.
func funcName(fc *pg.FuncCall) string {
	if len(fc.Funcname) == 0 {
		return ""
	}
	return strings.ToLower(fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval())
}

// containsAgg reports whether an expression tree calls an aggregate
// function (not as a window function, and not inside a subquery).
func containsAgg(n *pg.Node) bool {
	found := false
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if found {
			return
		}
		switch x := m.Interface().(type) {
		case *pg.FuncCall:
			agg := isAggregateName(funcName(x))
			_, quantile := quantileFuncs[funcName(x)]
			if (agg || quantile || bivariateAggs[funcName(x)]) && x.Over == nil {
				found = true
				return
			}
		case *pg.SubLink:
			return
		}
		eachChild(m, func(c protoreflect.Message) bool {
			walk(c)
			return found
		})
	}
	if n != nil {
		walk(n.ProtoReflect())
	}
	return found
}

// exprLoc returns the parser location of an expression node (-1 if none).
func exprLoc(n *pg.Node) int32 {
	if n == nil {
		return -1
	}
	loc := int32(-1)
	var walk func(m protoreflect.Message) bool
	walk = func(m protoreflect.Message) bool {
		if f := m.Descriptor().Fields().ByName("location"); f != nil && f.Kind() == protoreflect.Int32Kind {
			if l := int32(m.Get(f).Int()); l >= 0 {
				loc = l
				return true
			}
		}
		done := false
		eachChild(m, func(c protoreflect.Message) bool {
			done = walk(c)
			return done
		})
		return done
	}
	walk(n.ProtoReflect())
	return loc
}

// eachChild calls f on the message-typed children of m in field order (list
// elements in list order) until f returns true.
func eachChild(m protoreflect.Message, f func(protoreflect.Message) bool) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Message() == nil || fd.IsMap() || !m.Has(fd) {
			continue
		}
		if fd.IsList() {
			l := m.Get(fd).List()
			for j := 0; j < l.Len(); j++ {
				if f(l.Get(j).Message()) {
					return
				}
			}
			continue
		}
		if f(m.Get(fd).Message()) {
			return
		}
	}
}

// containsSubLink reports whether the parse tree n holds a subquery.
func containsSubLink(n *pg.Node) bool {
	found := false
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if _, ok := m.Interface().(*pg.SubLink); ok {
			found = true
			return
		}
		eachChild(m, func(c protoreflect.Message) bool {
			walk(c)
			return found
		})
	}
	if n != nil {
		walk(n.ProtoReflect())
	}
	return found
}
