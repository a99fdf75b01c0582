package planner

import (
	"fmt"

	"github.com/sluicedb/sluice/planner/plan"
)

// decorrelateSubqueries rewrites every dependent join (a subquery whose
// plan refers to columns of the query around it) into an ordinary join.
//
// Trigger: a join the binder made from a correlated subquery. The
// conditions of the subquery that refer to outer columns are pulled up out
// of its plan, through filters, projections (which then pass on the inner
// columns the conditions read), inner joins and sorts, and become the
// join's condition. Below an aggregation only equalities inner = outer may
// pass: the inner side becomes an extra GROUP BY key and the condition
// compares the key with the outer value (an aggregate per correlation
// value, computed once for all of them). Other correlations below an
// aggregation (non-equalities, alone or with equalities) aggregate per
// distinct outer value instead (distinctOuter).
//
// Why it is safe:
//   - EXISTS / IN: a semi (anti) join keeps a row when some (no) subquery
//     row satisfies the pulled conditions, which is what evaluating the
//     subquery per row would decide.
//   - scalar subqueries: q is an aggregate without GROUP BY. Per outer row
//     it aggregates the rows matching the correlation; grouped by the
//     correlation columns and left-joined, a row without matches gets
//     NULL, which equals q's value over no rows only when that value is
//     NULL (sum, avg, min, max, and strict expressions of them). COUNT is
//     0 over no rows (the "count bug"): when the value over no rows is a
//     constant other than NULL, the subquery side carries a match column
//     and a projection over the join gives that constant to the rows
//     without a match (keepEmptyValue).
//   - NOT IN with a correlation is only rewritten when the compared values
//     cannot be NULL (then it is a plain anti join).
//
// Correlation anywhere else (a select list, an aggregate's argument, below
// a LIMIT, an outer join's inner side, a non-equality below an
// aggregation reading a query further out) is SL005.
type decorrelateSubqueries struct{}

func (decorrelateSubqueries) name() string { return "decorrelate_subqueries" }

func (r decorrelateSubqueries) apply(root node, rc *ruleCtx) (node, error) {
	return r.walk(root, rc)
}

// walk decorrelates bottom-up, so a subquery nested in a subquery is done
// first and its pulled conditions may be pulled further by the outer one.
func (r decorrelateSubqueries) walk(n node, rc *ruleCtx) (node, error) {
	ch := n.children()
	if len(ch) > 0 {
		nc := make([]node, len(ch))
		changed := false
		for i, c := range ch {
			var err error
			if nc[i], err = r.walk(c, rc); err != nil {
				return nil, err
			}
			changed = changed || nc[i] != c
		}
		if changed {
			n = n.withChildren(nc)
		}
	}
	j, ok := n.(*joinNode)
	if !ok || !j.dependent {
		return n, nil
	}
	return r.decorrelate(j, rc)
}

// puller pulls correlated conditions out of a subquery plan.
type puller struct {
	rc   *ruleCtx
	free map[colID]bool // the outer columns
	// agg is the aggregation the conditions crossed, if any, and whether
	// it had GROUP BY keys of its own.
	agg       *aggregateNode
	aggGroups bool
	what      string
	loc       int32
	// outer is the input whose columns the subquery reads (the dependent
	// join's left side): the distinct outer values of a non-equality
	// correlation below an aggregation are read from a copy of it.
	outer node
}

func (r decorrelateSubqueries) decorrelate(j *joinNode, rc *ruleCtx) (node, error) {
	free := freeCols(j.right)
	out := *j
	out.dependent = false
	if len(free) == 0 {
		return &out, nil
	}
	p := &puller{rc: rc, free: colSet(free), what: j.subquery, loc: j.loc, outer: j.left}
	right, preds, err := p.pull(j.right)
	if err != nil {
		return nil, err
	}
	if rest := freeCols(right); len(rest) > 0 {
		return nil, p.fail(fmt.Sprintf("correlated reference to %s in this part of a subquery", rc.md.col(rest[0]).name))
	}
	out.right = right
	out.conds = append(append([]*plan.Expr{}, j.conds...), preds...)
	if j.scalar {
		if p.agg == nil || p.aggGroups {
			return nil, p.fail("correlated scalar subqueries other than an aggregate without GROUP BY")
		}
		empty, err := p.emptyValue(right, j.scalarCol)
		if err != nil {
			return nil, err
		}
		if isNullLit(empty) {
			return &out, nil
		}
		return p.keepEmptyValue(&out, empty), nil
	}
	if p.agg != nil && !p.aggGroups {
		return nil, p.fail("correlated EXISTS or IN over an aggregate without GROUP BY")
	}
	if j.nullAware {
		// NOT IN per outer row: a NULL in another row's subquery result
		// must not matter, which the null-aware anti join (one NULL rule
		// for the whole build side) cannot express. So it is a plain anti
		// join on the correlation, whose match condition holds when the
		// row's NOT IN is FALSE or NULL: x = y OR x IS NULL OR y IS NULL
		// (a NULL x against a non-empty set, or a NULL y, makes NOT IN
		// NULL, which WHERE drops; against an empty set x NOT IN is TRUE
		// whatever x is). Without NULLs it is the equality alone.
		eq := j.conds[0]
		if eq.Op != plan.OpEq || len(eq.Args) != 2 {
			return nil, p.fail("correlated NOT IN of this form")
		}
		match := eq
		for _, side := range eq.Args {
			if nullableExpr(side, rc.md) {
				match = plan.Call(plan.OpOr, plan.BoolType, match, plan.Call(plan.OpIsNull, plan.BoolType, side))
			}
		}
		out.conds[0] = match
		out.nullAware = false
	}
	return &out, nil
}

func (p *puller) fail(what string) *Error {
	return p.rc.unsupported(p.loc, what)
}

// refsFree reports whether e refers to an outer column.
func (p *puller) refsFree(e *plan.Expr) bool { return touches(e, p.free) }

// pull returns n without its correlated conditions, and those conditions
// over n's (new) output and the outer columns.
func (p *puller) pull(n node) (node, []*plan.Expr, error) {
	switch n := n.(type) {
	case *scanNode:
		return n, nil, nil
	case *filterNode:
		in, preds, err := p.pull(n.input)
		if err != nil {
			return nil, nil, err
		}
		var keep []*plan.Expr
		for _, c := range n.conds {
			if p.refsFree(c) {
				preds = append(preds, c)
			} else {
				keep = append(keep, c)
			}
		}
		return wrapFilter(in, keep), preds, nil
	case *projectNode:
		in, preds, err := p.pull(n.input)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range n.exprs {
			if p.refsFree(e) {
				return nil, nil, p.fail("correlated reference in the select list of a subquery")
			}
		}
		c := *n
		c.input = in
		if len(preds) > 0 {
			have := colSet(n.cols)
			c.exprs = append([]*plan.Expr{}, n.exprs...)
			c.cols = append([]colID{}, n.cols...)
			for _, pr := range preds {
				for _, id := range sortedCols(refs(pr)) {
					if !p.free[id] && !have[id] {
						have[id] = true
						c.exprs = append(c.exprs, p.rc.md.ref(id))
						c.cols = append(c.cols, id)
					}
				}
			}
		}
		return &c, preds, nil
	case *aggregateNode:
		in, preds, err := p.pull(n.input)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range nodeExprs(n) {
			if p.refsFree(e) {
				return nil, nil, p.fail("correlated reference in an aggregate or GROUP BY of a subquery")
			}
		}
		c := *n
		c.input = in
		if len(preds) == 0 {
			return &c, nil, nil
		}
		if p.agg != nil {
			return nil, nil, p.fail("correlated conditions below two aggregations")
		}
		c.groups = append([]*plan.Expr{}, n.groups...)
		c.groupCols = append([]colID{}, n.groupCols...)
		// A condition on the outer row alone (a.atthasdef) passes above
		// the aggregation as it is: where it is false the subquery
		// aggregates no rows, and the join above, finding no match, gives
		// the value over no rows (NULL, or COUNT's 0 through
		// keepEmptyValue); an EXISTS or IN over grouped rows has none.
		var outerOnly, corr []*plan.Expr
		for _, pr := range preds {
			if p.outerOnly(pr) {
				outerOnly = append(outerOnly, pr)
			} else {
				corr = append(corr, pr)
			}
		}
		for _, pr := range corr {
			if _, _, ok := p.splitEq(pr); !ok {
				return p.distinctOuter(n, &c, preds)
			}
		}
		out := outerOnly
		for _, pr := range corr {
			inner, outer, _ := p.splitEq(pr)
			k := exprKey(inner)
			at := -1
			for i, g := range c.groups {
				if exprKey(g) == k {
					at = i
				}
			}
			if at < 0 {
				at = len(c.groups)
				c.groups = append(c.groups, inner)
				c.groupCols = append(c.groupCols, p.rc.md.add(column{name: exprName(inner), typ: inner.Type, nullable: nullableExpr(inner, p.rc.md)}))
			}
			out = append(out, plan.Call(plan.OpEq, plan.BoolType, p.rc.md.ref(c.groupCols[at]), outer))
		}
		p.agg, p.aggGroups = &c, len(n.groups) > 0
		return &c, out, nil
	case *sortNode:
		in, preds, err := p.pull(n.input)
		if err != nil {
			return nil, nil, err
		}
		c := *n
		c.input = in
		return &c, preds, nil
	case *limitNode:
		in, preds, err := p.pull(n.input)
		if err != nil {
			return nil, nil, err
		}
		if len(preds) > 0 {
			return nil, nil, p.fail("correlated subqueries with LIMIT or OFFSET")
		}
		c := *n
		c.input = in
		return &c, nil, nil
	case *joinNode:
		l, lp, err := p.pull(n.left)
		if err != nil {
			return nil, nil, err
		}
		r, rp, err := p.pull(n.right)
		if err != nil {
			return nil, nil, err
		}
		c := *n
		c.left, c.right, c.conds = l, r, nil
		var preds []*plan.Expr
		for _, cond := range n.conds {
			if p.refsFree(cond) {
				if n.typ != plan.JoinInner {
					return nil, nil, p.fail("correlated reference in the condition of an outer, semi or anti join")
				}
				preds = append(preds, cond)
			} else {
				c.conds = append(c.conds, cond)
			}
		}
		// Conditions from a side whose rows the join keeps as they are
		// may pass above it.
		leftOK := n.typ == plan.JoinInner || n.typ == plan.JoinLeft || n.typ == plan.JoinSemi || n.typ == plan.JoinAnti
		rightOK := n.typ == plan.JoinInner || n.typ == plan.JoinRight
		if len(lp) > 0 && !leftOK || len(rp) > 0 && !rightOK {
			return nil, nil, p.fail("correlated reference below an outer, semi or anti join")
		}
		if c.cols != nil && len(lp)+len(rp) > 0 {
			c.cols = nil
		}
		return &c, append(append(preds, lp...), rp...), nil
	case *singleRowNode:
		// A scalar subquery's at-most-one-row check, per outer row: after
		// decorrelation, per value of the correlation keys.
		in, preds, err := p.pull(n.input)
		if err != nil {
			return nil, nil, err
		}
		c := *n
		c.input = in
		if len(preds) == 0 {
			return &c, nil, nil
		}
		// The equalities inner = outer key the check: an outer row sees
		// at most the rows of its key values. Other correlated conditions
		// (a.atthasdef on the outer row alone, a.attcollation <>
		// t.typcollation) only narrow what an outer row sees, so they are
		// not keys; the check stays over all the rows of a key value, and
		// may fail where those conditions would have hidden the duplicates
		// from every outer row (an error, never a wrong value; as it does
		// for a key value no outer row has). A condition between inner
		// and outer columns with no equality to key on would make that
		// check one over the whole subquery: refused.
		c.keys = append([]*plan.Expr{}, n.keys...)
		var other []*plan.Expr
		for _, pr := range preds {
			if p.outerOnly(pr) {
				continue
			}
			inner, _, ok := p.splitEq(pr)
			if !ok {
				other = append(other, pr)
				continue
			}
			c.keys = append(c.keys, inner)
		}
		if len(other) > 0 && len(c.keys) == len(n.keys) {
			return nil, nil, p.fail("correlated scalar subquery without an aggregate whose correlation has no equality")
		}
		return &c, preds, nil
	case *unionNode:
		c := *n
		c.inputs = nil
		for _, in := range n.inputs {
			x, preds, err := p.pull(in)
			if err != nil {
				return nil, nil, err
			}
			if len(preds) > 0 {
				return nil, nil, p.fail("correlated reference inside UNION")
			}
			c.inputs = append(c.inputs, x)
		}
		return &c, nil, nil
	}
	// Any other node (VALUES, ...) is kept as it is when nothing below it
	// refers to the outer query.
	for _, id := range freeCols(n) {
		if p.free[id] {
			return nil, nil, p.fail("correlated subquery of this shape")
		}
	}
	return n, nil, nil
}

// distinctOuter pulls correlated conditions preds, not all equalities
// inner = outer, through the aggregation n (c is its copy, over n's input
// without preds): the general unnesting of a dependent join (Neumann and
// Kemper, "Unnesting Arbitrary Queries"). With d the outer columns preds
// read,
//
//	D = SELECT DISTINCT d FROM <a copy of the outer input>
//	J = D JOIN <n's input> ON preds[d := D's columns], aggregated by n's
//	    groups and D's columns
//
// and the condition pulled up is J's D columns = d, so each outer row
// meets the aggregate of the subquery rows matching its own values of d.
// J's join is inner: a value of D without matching rows has no group in
// J, and its outer rows are those of the left join the scalar subquery
// already is, which gets NULL, or the value over no rows through
// keepEmptyValue (COUNT's 0), as for equality correlations. The pulled
// condition is an equality when preds reject a NULL in that column (no
// subquery row matches a NULL, so no group of J has one), else IS NOT
// DISTINCT FROM, so an outer NULL meets the group the subquery rows
// matching NULL formed.
func (p *puller) distinctOuter(n, c *aggregateNode, preds []*plan.Expr) (node, []*plan.Expr, error) {
	md := p.rc.md
	refused := func(why string) (node, []*plan.Expr, error) {
		return nil, nil, p.fail("correlated conditions other than equality below an aggregation" + why)
	}
	if p.outer == nil || len(freeCols(p.outer)) > 0 {
		return refused(" in a subquery")
	}
	used := map[colID]bool{}
	for _, pr := range preds {
		for id := range refs(pr) {
			if p.free[id] {
				used[id] = true
			}
		}
	}
	have := colSet(p.outer.output())
	d := sortedCols(used)
	for _, id := range d {
		if !have[id] {
			// An outer column of a query further out.
			return refused(" reading a query further out")
		}
	}
	// The distinct values of d are those of the input below the outer
	// query's left joins and pass-through projections that keep them (the
	// joins of earlier subqueries): D need not compute those again.
	outer := p.outer
	for {
		if j, ok := outer.(*joinNode); ok && j.typ == plan.JoinLeft && allIn(d, colSet(j.left.output())) {
			outer = j.left
			continue
		}
		if pr, ok := outer.(*projectNode); ok && passesThrough(pr, d) {
			outer = pr.input
			continue
		}
		break
	}
	if unstable := unstableCols(outer); len(unstable) > 0 {
		for _, id := range d {
			if unstable[id] {
				return refused(" over a value whose rounding or order may differ when computed again")
			}
		}
	}
	m := map[colID]colID{}
	cp, ok := copyFresh(outer, md, m)
	if !ok {
		return refused(" of a query with LIMIT, window functions or grouping sets")
	}
	dist := &aggregateNode{input: cp}
	toD := map[colID]*plan.Expr{}
	for _, id := range d {
		col := md.col(id)
		dist.groups = append(dist.groups, md.ref(m[id]))
		dc := md.add(column{name: col.name, typ: col.typ, nullable: col.nullable})
		dist.groupCols = append(dist.groupCols, dc)
		toD[id] = md.ref(dc)
	}
	join := &joinNode{typ: plan.JoinInner, left: dist, right: c.input}
	for _, pr := range preds {
		join.conds = append(join.conds, substCols(pr, toD))
	}
	c.input = join
	var out []*plan.Expr
	for i, id := range d {
		col := md.col(id)
		g := md.add(column{name: col.name, typ: col.typ, nullable: col.nullable})
		c.groups = append(c.groups, md.ref(dist.groupCols[i]))
		c.groupCols = append(c.groupCols, g)
		rejects := !col.nullable
		for _, pr := range preds {
			rejects = rejects || nullRejects(pr, map[colID]bool{id: true})
		}
		if rejects {
			out = append(out, plan.Call(plan.OpEq, plan.BoolType, md.ref(g), md.ref(id)))
			continue
		}
		isNull := func(e *plan.Expr) *plan.Expr { return plan.Call(plan.OpIsNull, plan.BoolType, e) }
		out = append(out, plan.Call(plan.OpCase, plan.BoolType,
			isNull(md.ref(g)), isNull(md.ref(id)),
			isNull(md.ref(id)), boolLit(false),
			plan.Call(plan.OpEq, plan.BoolType, md.ref(g), md.ref(id))))
	}
	p.agg, p.aggGroups = c, len(n.groups) > 0
	return c, out, nil
}

// allIn reports whether every id is in set.
func allIn(ids []colID, set map[colID]bool) bool {
	for _, id := range ids {
		if !set[id] {
			return false
		}
	}
	return true
}

// passesThrough reports whether the projection pr outputs each of ids as
// a plain reference to the same column of its input.
func passesThrough(pr *projectNode, ids []colID) bool {
	for _, id := range ids {
		ok := false
		for i, c := range pr.cols {
			if c == id && pr.exprs[i].Op == plan.OpColumn && pr.exprs[i].Col == id {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// outerOnly reports whether the correlated condition e reads outer
// columns only (a condition on the outer row, such as a.atthasdef).
func (p *puller) outerOnly(e *plan.Expr) bool {
	return len(refs(e)) > 0 && within(e, p.free)
}

// splitEq splits a correlated equality into its inner and outer sides.
func (p *puller) splitEq(e *plan.Expr) (inner, outer *plan.Expr, ok bool) {
	if e.Op != plan.OpEq {
		return nil, nil, false
	}
	a, b := e.Args[0], e.Args[1]
	onlyFree := func(x *plan.Expr) bool { return len(refs(x)) > 0 && within(x, p.free) }
	noFree := func(x *plan.Expr) bool { return len(refs(x)) > 0 && !p.refsFree(x) }
	switch {
	case onlyFree(a) && noFree(b):
		return b, a, true
	case onlyFree(b) && noFree(a):
		return a, b, true
	}
	return nil, nil, false
}

// emptyValue returns the scalar subquery's value over no rows, a literal:
// the expression computing col in the projections on top of the
// decorrelated plan, with each aggregate replaced by its result over no
// rows (0 for counts, NULL otherwise) and folded. A left join row without
// matches gets NULL; when this value is not NULL (the "count bug") the
// join is wrapped by keepEmptyValue.
func (p *puller) emptyValue(right node, col colID) (*plan.Expr, error) {
	value := p.rc.md.ref(col)
	n := right
	for {
		pr, ok := n.(*projectNode)
		if !ok {
			break
		}
		subst := map[colID]*plan.Expr{}
		for i, id := range pr.cols {
			subst[id] = pr.exprs[i]
		}
		value = substCols(value, subst)
		n = pr.input
	}
	if n != node(p.agg) {
		return nil, p.fail("correlated scalar subqueries with HAVING")
	}
	subst := map[colID]*plan.Expr{}
	for i, id := range p.agg.aggCols {
		a := p.agg.aggs[i]
		if aggInfo(a.fn).ZeroOnEmpty {
			subst[id] = plan.Literal(plan.Value{I: 0}, a.typ)
		} else {
			subst[id] = nullOf(a.typ)
		}
	}
	v := foldDeep(substCols(value, subst))
	if !isLit(v) {
		return nil, p.fail(fmt.Sprintf("correlated scalar subquery whose value over no rows is not a constant (%s)", exprString(value)))
	}
	return v, nil
}

// keepEmptyValue fixes the count bug of a decorrelated scalar subquery
// join j whose value over no rows is empty (not NULL): the subquery side
// also yields a TRUE match column, and a projection over the join gives
// the value column back as CASE WHEN match IS NULL THEN empty ELSE value
// END, so a left row without matching subquery rows sees empty (COUNT
// over no rows is 0), as per-row evaluation would.
func (p *puller) keepEmptyValue(j *joinNode, empty *plan.Expr) node {
	md := p.rc.md
	col := md.col(j.scalarCol)
	inner := md.add(column{name: col.name, typ: col.typ, nullable: true})
	match := md.add(column{name: "match", typ: plan.BoolType, nullable: true})
	right := &projectNode{input: j.right}
	for _, id := range j.right.output() {
		right.exprs = append(right.exprs, md.ref(id))
		if id == j.scalarCol {
			right.cols = append(right.cols, inner)
		} else {
			right.cols = append(right.cols, id)
		}
	}
	right.exprs = append(right.exprs, boolLit(true))
	right.cols = append(right.cols, match)
	out := *j
	out.right, out.scalarCol, out.cols = right, inner, nil
	top := &projectNode{input: &out}
	for _, id := range out.left.output() {
		top.exprs = append(top.exprs, md.ref(id))
		top.cols = append(top.cols, id)
	}
	top.exprs = append(top.exprs, plan.Call(plan.OpCase, col.typ,
		plan.Call(plan.OpIsNull, plan.BoolType, md.ref(match)), empty, md.ref(inner)))
	top.cols = append(top.cols, j.scalarCol)
	return top
}

// foldDeep folds e bottom-up.
func foldDeep(e *plan.Expr) *plan.Expr {
	return rewriteExpr(e, func(x *plan.Expr) *plan.Expr {
		if x.Op == plan.OpCase {
			return foldCase(x)
		}
		if r := fold(x); r != x {
			return r
		}
		return nil
	})
}

// foldCase picks the branch of a CASE whose conditions up to it are
// literals (a NULL or false condition does not match); nil when a
// condition before the match is not a literal.
func foldCase(e *plan.Expr) *plan.Expr {
	n := len(e.Args) - 1
	for i := 0; i+1 <= n-1; i += 2 {
		w := e.Args[i]
		if !isLit(w) {
			return nil
		}
		if !w.Value.Null && w.Value.B {
			return e.Args[i+1]
		}
	}
	return e.Args[n]
}

// nullableExpr reports whether e may be NULL (conservatively).
func nullableExpr(e *plan.Expr, md *metadata) bool {
	return mayBeNull(e, func(id colID) bool { return md.col(id).nullable })
}

// sortedCols returns the ids of a set in increasing order.
func sortedCols(s map[colID]bool) []colID {
	out := make([]colID, 0, len(s))
	for id := range s {
		out = append(out, id)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
