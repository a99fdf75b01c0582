package planner

import (
	"sort"

	"github.com/sluicedb/sluice/planner/plan"
)

// reorderJoins picks the order of inner joins and the build side of every
// join from estimated sizes (estimate.go).
//
// Trigger: a tree of inner joins (the FROM list and its WHERE conditions,
// explicit INNER JOINs, scalar subqueries); outer, semi and anti joins
// bound such trees and are ordered inside. The tree is flattened into its
// inputs and conditions and rebuilt left-deep, greedily: it starts from the
// input with the most rows (the fact table, which then stays the probe side
// of every join and is never shuffled when the others are small enough to
// broadcast), and at each step joins the input that an equality connects
// to what is joined so far and that gives the fewest rows; an input
// connected by other conditions only comes next, and one not connected at
// all (a cross product) last. Each condition sits on the first join that
// has all its columns. The smaller side (in estimated bytes) is the build
// (right) side; for a left, right or full join with the bigger side on the
// right the sides are swapped (left becomes right join and vice versa).
//
// Safe because inner joins are commutative and associative when every
// condition is applied once all its columns are present, and swapping the
// sides of an outer join while mirroring its type keeps its rows; column
// order does not matter since operators refer to columns by id.
type reorderJoins struct{}

func (reorderJoins) name() string { return "reorder_joins" }

func (r reorderJoins) apply(root node, rc *ruleCtx) (node, error) {
	es := newEstimator(rc.md)
	return r.walk(root, es), nil
}

func (r reorderJoins) walk(n node, es *estimator) node {
	if j, ok := n.(*joinNode); ok && j.typ == plan.JoinInner {
		var leaves []node
		var conds []*plan.Expr
		var flatten func(n node)
		flatten = func(n node) {
			if x, ok := n.(*joinNode); ok && x.typ == plan.JoinInner {
				flatten(x.left)
				flatten(x.right)
				conds = append(conds, x.conds...)
				return
			}
			leaves = append(leaves, r.walk(n, es))
		}
		flatten(j)
		// A canonical order (by the first column each input produces, which
		// is FROM-clause order for tables) makes ties break the same way
		// whatever the tree looked like, so the rule is idempotent.
		sort.SliceStable(leaves, func(a, b int) bool { return minCol(leaves[a]) < minCol(leaves[b]) })
		out := r.order(leaves, conds, es)
		if j.cols != nil {
			if top, ok := out.(*joinNode); ok {
				c := *top
				c.cols = j.cols
				out = &c
			}
		}
		return out
	}
	ch := n.children()
	if len(ch) == 0 {
		return n
	}
	nc := make([]node, len(ch))
	for i, c := range ch {
		nc[i] = r.walk(c, es)
	}
	n = n.withChildren(nc)
	if j, ok := n.(*joinNode); ok && (j.typ == plan.JoinLeft || j.typ == plan.JoinRight || j.typ == plan.JoinFull) {
		if es.bytes(j.right) > es.bytes(j.left) {
			c := *j
			c.left, c.right, c.typ = j.right, j.left, mirror(j.typ)
			if c.cols != nil {
				c.cols = reorderCols(c.cols, c.fullOutput())
			}
			return &c
		}
	}
	return n
}

// reorderCols returns the ids of cols in the order they have in full.
func reorderCols(cols, full []colID) []colID {
	keep := colSet(cols)
	var out []colID
	for _, id := range full {
		if keep[id] {
			out = append(out, id)
		}
	}
	return out
}

// order builds a left-deep join tree of leaves (see reorderJoins).
func (r reorderJoins) order(leaves []node, conds []*plan.Expr, es *estimator) node {
	owner := map[colID]int{}
	for i, l := range leaves {
		for _, id := range l.output() {
			owner[id] = i
		}
	}
	// The leaves each condition reads; conditions on one leaf go into it
	// (push_down_filters already put them there; this only keeps the rule
	// complete), conditions on none stay on top.
	var top []*plan.Expr
	type cond = joinCond
	var cs []*cond
	single := map[int][]*plan.Expr{}
	for _, c := range conds {
		ls := map[int]bool{}
		for id := range refs(c) {
			if i, ok := owner[id]; ok {
				ls[i] = true
			}
		}
		switch len(ls) {
		case 0:
			top = append(top, c)
		case 1:
			for i := range ls {
				single[i] = append(single[i], c)
			}
		default:
			cs = append(cs, &cond{e: c, leaves: ls})
		}
	}
	for i, extra := range single {
		leaves[i] = wrapFilter(leaves[i], extra)
	}
	if len(leaves) == 1 {
		return wrapFilter(leaves[0], top)
	}

	start := 0
	for i := range leaves {
		if es.rows(leaves[i]) > es.rows(leaves[start]) {
			start = i
		}
	}
	in := map[int]bool{start: true}
	tree := leaves[start]
	for len(in) < len(leaves) {
		best, bestClass := -1, 3
		var bestRows, bestBytes float64
		var bestConds, bestInner []*cond
		var bestNode node
		var bestGroup []int
		for k := range leaves {
			if in[k] {
				continue
			}
			connecting, exprs := r.connecting(cs, in, []int{k})
			class := joinClass(tree, leaves[k], connecting)
			rows := es.joinRows(tree, leaves[k], exprs)
			bytes := es.bytes(leaves[k])
			var unit node = leaves[k]
			group := []int{k}
			var inner []*cond // conditions within the arm, held by its own joins
			// A snowflake arm: k with the inputs reached only through it
			// (nation behind supplier), joined first as one bushy input
			// when that gives fewer rows than joining k alone: a filter on
			// the arm's far end then reduces the big side at its first
			// join, not after it.
			if class == 0 {
				if g := satellites(k, cs, in); len(g) > 1 {
					armConds := armConditions(cs, g)
					ls := make([]node, len(g))
					for i, li := range g {
						ls[i] = leaves[li]
					}
					exprs := make([]*plan.Expr, len(armConds))
					for i, c := range armConds {
						exprs[i] = c.e
					}
					sub := r.order(ls, exprs, es)
					subConds, subExprs := r.connecting(cs, in, g)
					if subRows := es.joinRows(tree, sub, subExprs); subRows < rows && joinClass(tree, sub, subConds) == 0 {
						unit, group, rows, connecting, inner = sub, g, subRows, subConds, armConds
						bytes = es.bytes(sub)
					}
				}
			}
			if best < 0 || class < bestClass || class == bestClass && (rows < bestRows || rows == bestRows && bytes < bestBytes) {
				best, bestClass, bestRows, bestBytes, bestConds = k, class, rows, bytes, connecting
				bestNode, bestGroup, bestInner = unit, group, inner
			}
		}
		j := &joinNode{typ: plan.JoinInner, left: tree, right: bestNode}
		for _, c := range bestConds {
			c.used = true
			j.conds = append(j.conds, c.e)
		}
		for _, c := range bestInner {
			c.used = true // held by the arm's joins
		}
		if es.bytes(j.right) > es.bytes(j.left) {
			j.left, j.right = j.right, j.left
		}
		for _, i := range bestGroup {
			in[i] = true
		}
		tree = j
	}
	return wrapFilter(tree, top)
}

// joinCond is a condition of a join tree being ordered: the leaves it
// reads and whether a join holds it yet.
type joinCond struct {
	e      *plan.Expr
	leaves map[int]bool
	used   bool
}

// connecting returns the conditions not yet used that join the leaves of
// group to those in (every leaf they read is in one or the other, at least
// one in group and one in in).
func (reorderJoins) connecting(cs []*joinCond, in map[int]bool, group []int) ([]*joinCond, []*plan.Expr) {
	member := map[int]bool{}
	for _, i := range group {
		member[i] = true
	}
	var out []*joinCond
	var exprs []*plan.Expr
	for _, c := range cs {
		if c.used {
			continue
		}
		touchesGroup, touchesIn, inside := false, false, true
		for i := range c.leaves {
			switch {
			case member[i]:
				touchesGroup = true
			case in[i]:
				touchesIn = true
			default:
				inside = false
			}
		}
		if inside && touchesGroup && touchesIn {
			out = append(out, c)
			exprs = append(exprs, c.e)
		}
	}
	return out, exprs
}

// joinClass ranks joining right to tree on conds: 0 when an equality
// connects them, 1 another condition, 2 none (a cross product).
func joinClass(tree, right node, conds []*joinCond) int {
	if len(conds) == 0 {
		return 2
	}
	lcols, rcols := colSet(tree.output()), colSet(right.output())
	for _, c := range conds {
		if _, _, ok := equiSides(c.e, lcols, rcols); ok {
			return 0
		}
	}
	return 1
}

// satellites returns k and the inputs not yet joined that conditions
// connect to k only through each other: its component among the inputs
// outside in, leaving out those a condition connects to in directly. The
// first is k; the others in index order.
func satellites(k int, cs []*joinCond, in map[int]bool) []int {
	touchesIn := map[int]bool{}
	for _, c := range cs {
		if c.used {
			continue
		}
		hit := false
		for i := range c.leaves {
			if in[i] {
				hit = true
			}
		}
		if hit {
			for i := range c.leaves {
				touchesIn[i] = true
			}
		}
	}
	seen := map[int]bool{k: true}
	out := []int{k}
	for q := 0; q < len(out); q++ {
		at := out[q]
		for _, c := range cs {
			if c.used || !c.leaves[at] {
				continue
			}
			var next []int
			ok := true
			for i := range c.leaves {
				if in[i] || i != k && touchesIn[i] {
					ok = false
				}
				if !seen[i] {
					next = append(next, i)
				}
			}
			if !ok {
				continue
			}
			sort.Ints(next)
			for _, i := range next {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	if len(out) > 2 {
		sort.Ints(out[1:])
	}
	return out
}

// armConditions returns the conditions not yet used whose leaves are all in group.
func armConditions(cs []*joinCond, group []int) []*joinCond {
	member := map[int]bool{}
	for _, i := range group {
		member[i] = true
	}
	var out []*joinCond
	for _, c := range cs {
		if c.used {
			continue
		}
		all := true
		for i := range c.leaves {
			all = all && member[i]
		}
		if all {
			out = append(out, c)
		}
	}
	return out
}

// minCol is the smallest column id n produces.
func minCol(n node) colID {
	m := -1
	for _, id := range n.output() {
		if m < 0 || id < m {
			m = id
		}
	}
	return m
}
