package planner

import "github.com/sluicedb/sluice/planner/plan"

// pushDownFilters moves filter conjuncts as close to the scans as they can
// go: through projections (substituting the projected expressions), sorts
// and other filters, below an aggregation when they only read group keys,
// into each input of a UNION ALL, into the side of a join whose columns
// they read, and into the scan itself (scanNode.filters), where the
// physical plan also uses them to prune row groups. A conjunct relating
// both sides of an inner join becomes part of the join's condition (an
// equality there is a hash key). Filters never cross a LIMIT.
//
// Joins: a condition above a join may go to a side whose rows the join
// passes on unchanged (the left of a left, semi or anti join, either side
// of an inner join). In an ON clause, a condition on the side whose rows
// the join does not preserve may filter that side first (the right of a
// left join, the subquery of a semi or anti join); the rest stays in the
// join. An outer join becomes inner (or full becomes left/right) when a
// condition above it rejects the NULLs it would add: those rows would be
// filtered anyway.
//
// ORs: conjuncts common to every branch of an OR are taken out of it
// ((a AND b) OR (a AND c) is a AND (b OR c)), so a join key written in
// each branch (TPC-H Q19) becomes a key; and an OR relating both sides of
// an inner join also filters each side by what it implies there (the OR
// of each branch's conjuncts on that side, when every branch has some),
// while the OR itself stays on the join.
//
// Safe because every expression is deterministic and each move keeps the
// set of rows a predicate keeps.
type pushDownFilters struct{}

func (pushDownFilters) name() string { return "push_down_filters" }

func (r pushDownFilters) apply(root node, rc *ruleCtx) (node, error) {
	return r.push(root, nil, rc.md), nil
}

// push returns n with conds (over n's output) applied at or below it.
func (r pushDownFilters) push(n node, conds []*plan.Expr, md *metadata) node {
	conds = factorOrs(conds)
	switch n := n.(type) {
	case *filterNode:
		return r.push(n.input, append(append([]*plan.Expr{}, n.conds...), conds...), md)
	case *scanNode:
		c := *n
		c.filters = dedupe(append(append([]*plan.Expr{}, n.filters...), conds...))
		return &c
	case *projectNode:
		subst := map[colID]*plan.Expr{}
		for i, id := range n.cols {
			subst[id] = n.exprs[i]
		}
		var below []*plan.Expr
		for _, cond := range conds {
			below = append(below, substCols(cond, subst))
		}
		c := *n
		c.input = r.push(n.input, below, md)
		return &c
	case *sortNode:
		c := *n
		c.input = r.push(n.input, conds, md)
		return &c
	case *aggregateNode:
		subst := map[colID]*plan.Expr{}
		for i, id := range n.groupCols {
			subst[id] = n.groups[i]
		}
		var below, above []*plan.Expr
		for _, cond := range conds {
			cols := map[colID]bool{}
			exprCols(cond, cols)
			onlyKeys := len(n.groups) > 0
			for id := range cols {
				if subst[id] == nil {
					onlyKeys = false
				}
			}
			if onlyKeys {
				below = append(below, substCols(cond, subst))
			} else {
				above = append(above, cond)
			}
		}
		c := *n
		c.input = r.push(n.input, below, md)
		return wrapFilter(&c, above)
	case *unionNode:
		c := *n
		c.inputs = make([]node, len(n.inputs))
		for i, in := range n.inputs {
			subst := map[colID]*plan.Expr{}
			for k, id := range n.cols {
				subst[id] = md.ref(n.inCols[i][k])
			}
			var below []*plan.Expr
			for _, cond := range conds {
				below = append(below, substCols(cond, subst))
			}
			c.inputs[i] = r.push(in, below, md)
		}
		return &c
	case *joinNode:
		return r.pushJoin(n, conds, md)
	default: // limit, and any operator not taught yet: stop here
		ch := n.children()
		nc := make([]node, len(ch))
		for i, x := range ch {
			nc[i] = r.push(x, nil, md)
		}
		return wrapFilter(n.withChildren(nc), conds)
	}
}

func (r pushDownFilters) pushJoin(n *joinNode, conds []*plan.Expr, md *metadata) node {
	lcols, rcols := colSet(n.left.output()), colSet(n.right.output())
	j := *n
	// Outer joins whose added NULL rows a condition above rejects.
	for _, cond := range conds {
		rejL, rejR := nullRejects(cond, lcols), nullRejects(cond, rcols)
		switch {
		case j.typ == plan.JoinLeft && rejR, j.typ == plan.JoinRight && rejL:
			j.typ = plan.JoinInner
		case j.typ == plan.JoinFull && rejL && rejR:
			j.typ = plan.JoinInner
		case j.typ == plan.JoinFull && rejL:
			j.typ = plan.JoinLeft
		case j.typ == plan.JoinFull && rejR:
			j.typ = plan.JoinRight
		}
	}
	var toLeft, toRight, stay, above []*plan.Expr
	place := func(cond *plan.Expr, fromAbove bool) {
		inL, inR := within(cond, lcols), within(cond, rcols)
		if len(refs(cond)) == 0 {
			inL, inR = j.typ != plan.JoinRight && j.typ != plan.JoinFull, false
			if !fromAbove {
				inL = j.typ == plan.JoinInner || j.typ == plan.JoinSemi
				inR = !inL && (j.typ == plan.JoinLeft || j.typ == plan.JoinAnti)
			}
		}
		switch j.typ {
		case plan.JoinInner:
			switch {
			case inL:
				toLeft = append(toLeft, cond)
			case inR:
				toRight = append(toRight, cond)
			default:
				stay = append(stay, cond)
			}
		case plan.JoinLeft, plan.JoinSemi, plan.JoinAnti:
			switch {
			case fromAbove && inL:
				toLeft = append(toLeft, cond)
			case fromAbove:
				above = append(above, cond)
			case inR:
				toRight = append(toRight, cond)
			case inL && j.typ == plan.JoinSemi:
				toLeft = append(toLeft, cond)
			default:
				stay = append(stay, cond)
			}
		case plan.JoinRight:
			switch {
			case fromAbove && inR:
				toRight = append(toRight, cond)
			case fromAbove:
				above = append(above, cond)
			case inL:
				toLeft = append(toLeft, cond)
			default:
				stay = append(stay, cond)
			}
		default: // full
			if fromAbove {
				above = append(above, cond)
			} else {
				stay = append(stay, cond)
			}
		}
	}
	for _, cond := range factorOrs(n.conds) {
		place(cond, false)
	}
	for _, cond := range conds {
		place(cond, true)
	}
	if j.typ == plan.JoinInner {
		for _, cond := range stay {
			if x := impliedBy(cond, lcols); x != nil {
				toLeft = append(toLeft, x)
			}
			if x := impliedBy(cond, rcols); x != nil {
				toRight = append(toRight, x)
			}
		}
	}
	j.conds = stay
	j.left = r.push(n.left, toLeft, md)
	j.right = r.push(n.right, toRight, md)
	return wrapFilter(&j, above)
}

// nullRejects reports whether cond is NULL or false whenever every column
// of cols it reads is NULL (so it rejects rows an outer join padded with
// NULLs on that side). Conservative: only strict operators count.
func nullRejects(cond *plan.Expr, cols map[colID]bool) bool {
	switch cond.Op {
	case plan.OpAnd:
		return nullRejects(cond.Args[0], cols) || nullRejects(cond.Args[1], cols)
	case plan.OpOr:
		return nullRejects(cond.Args[0], cols) && nullRejects(cond.Args[1], cols)
	case plan.OpIsNotNull:
		return strictIn(cond.Args[0], cols)
	case plan.OpEq, plan.OpNe, plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe, plan.OpLike, plan.OpIn, plan.OpNot:
		return strictIn(cond, cols)
	}
	return false
}

// factorOrs takes the conjuncts common to all branches of each OR out of
// it: (a AND b) OR (a AND c) becomes a, b OR c.
func factorOrs(conds []*plan.Expr) []*plan.Expr {
	var out []*plan.Expr
	for _, c := range conds {
		out = append(out, factorOr(c)...)
	}
	return dedupe(out)
}

func factorOr(c *plan.Expr) []*plan.Expr {
	if c.Op != plan.OpOr {
		return []*plan.Expr{c}
	}
	var branches [][]*plan.Expr
	for _, b := range splitDisjuncts(c) {
		branches = append(branches, splitConjuncts(b))
	}
	in := func(e *plan.Expr, branch []*plan.Expr) bool {
		k := exprKey(e)
		for _, x := range branch {
			if exprKey(x) == k {
				return true
			}
		}
		return false
	}
	var common []*plan.Expr
	for _, e := range dedupe(branches[0]) {
		all := true
		for _, b := range branches[1:] {
			all = all && in(e, b)
		}
		if all {
			common = append(common, e)
		}
	}
	if len(common) == 0 {
		return []*plan.Expr{c}
	}
	var rest *plan.Expr
	for _, b := range branches {
		var left []*plan.Expr
		for _, e := range b {
			if !in(e, common) {
				left = append(left, e)
			}
		}
		if len(left) == 0 { // this branch is just the common part: the OR is implied
			return common
		}
		if rest == nil {
			rest = conjoin(left)
		} else {
			rest = plan.Call(plan.OpOr, plan.BoolType, rest, conjoin(left))
		}
	}
	return append(common, factorOr(rest)...)
}

// splitDisjuncts flattens nested ORs.
func splitDisjuncts(e *plan.Expr) []*plan.Expr {
	if e.Op == plan.OpOr {
		return append(splitDisjuncts(e.Args[0]), splitDisjuncts(e.Args[1])...)
	}
	return []*plan.Expr{e}
}

// impliedBy returns what an OR implies about the columns of cols alone:
// the OR of each branch's conjuncts over cols, or nil when some branch has
// none.
func impliedBy(c *plan.Expr, cols map[colID]bool) *plan.Expr {
	if c.Op != plan.OpOr || within(c, cols) {
		return nil
	}
	var out *plan.Expr
	for _, b := range splitDisjuncts(c) {
		var mine []*plan.Expr
		for _, e := range splitConjuncts(b) {
			if len(refs(e)) > 0 && within(e, cols) {
				mine = append(mine, e)
			}
		}
		if len(mine) == 0 {
			return nil
		}
		if out == nil {
			out = conjoin(mine)
		} else {
			out = plan.Call(plan.OpOr, plan.BoolType, out, conjoin(mine))
		}
	}
	return out
}

// dedupe drops repeated conditions, keeping the first.
func dedupe(conds []*plan.Expr) []*plan.Expr {
	seen := map[string]bool{}
	out := conds[:0:0]
	for _, c := range conds {
		k := exprKey(c)
		if !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	return out
}
