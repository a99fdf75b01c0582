package planner

import "github.com/sluicedb/sluice/planner/plan"

// A logicalRule rewrites a whole logical plan. Rules must keep the plan's
// output (columns and rows) unchanged; each one is idempotent.
type logicalRule interface {
	name() string
	apply(root node, md *metadata) node
}

// logicalRules run once each, in this order. The order is the contract:
//
//  1. push_down_filters first, so filters reach the scans before columns are
//     pruned (a scan keeps the columns its filters read);
//  2. prune_columns last, once every operator is where it will stay.
//
// Subquery decorrelation and join ordering will sit before
// push_down_filters (they create the filters and joins it moves).
var logicalRules = []logicalRule{
	pushDownFilters{},
	pruneColumns{},
}

// optimize runs the logical rules and returns the plan and the names of the
// rules that changed it.
func optimize(root node, md *metadata) (node, []string) {
	var fired []string
	for _, r := range logicalRules {
		before := formatLogical(root, md)
		root = r.apply(root, md)
		if formatLogical(root, md) != before {
			fired = append(fired, r.name())
		}
	}
	return root, fired
}

// pushDownFilters moves filter conjuncts as close to the scans as they can
// go: through projections (substituting the projected expressions), sorts
// and other filters, below an aggregation when they only read group keys,
// and into the scan itself (scanNode.filters), where the physical plan also
// uses them to prune row groups. Safe because every expression is
// deterministic and these operators do not change which rows a predicate
// keeps; filters never cross a LIMIT.
type pushDownFilters struct{}

func (pushDownFilters) name() string { return "push_down_filters" }

func (r pushDownFilters) apply(root node, md *metadata) node { return r.push(root, nil, md) }

// push returns n with conds (over n's output) applied at or below it.
func (r pushDownFilters) push(n node, conds []*plan.Expr, md *metadata) node {
	switch n := n.(type) {
	case *filterNode:
		return r.push(n.input, append(append([]*plan.Expr{}, n.conds...), conds...), md)
	case *scanNode:
		c := *n
		c.filters = append(append([]*plan.Expr{}, n.filters...), conds...)
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
	default: // limit, and any operator not taught yet: stop here
		ch := n.children()
		nc := make([]node, len(ch))
		for i, x := range ch {
			nc[i] = r.push(x, nil, md)
		}
		return wrapFilter(n.withChildren(nc), conds)
	}
}

func wrapFilter(n node, conds []*plan.Expr) node {
	if len(conds) == 0 {
		return n
	}
	return &filterNode{input: n, conds: conds}
}

// substCols replaces column references by expressions.
func substCols(e *plan.Expr, subst map[colID]*plan.Expr) *plan.Expr {
	return substTopDown(e, func(x *plan.Expr) *plan.Expr {
		if x.Op == plan.OpColumn {
			if s, ok := subst[x.Col]; ok {
				return s
			}
		}
		return nil
	})
}

// pruneColumns drops the columns no operator above reads: scans read only
// those columns, projections compute only those, aggregations compute only
// the aggregates used. The plan's own output is kept whole. A scan keeps at
// least one column so that it still yields its row count.
type pruneColumns struct{}

func (pruneColumns) name() string { return "prune_columns" }

func (r pruneColumns) apply(root node, md *metadata) node {
	need := map[colID]bool{}
	for _, id := range root.output() {
		need[id] = true
	}
	return r.prune(root, need, md)
}

func (r pruneColumns) prune(n node, need map[colID]bool, md *metadata) node {
	switch n := n.(type) {
	case *scanNode:
		for _, f := range n.filters {
			exprCols(f, need)
		}
		c := *n
		c.cols, c.ords = nil, nil
		for i, id := range n.cols {
			if need[id] {
				c.cols = append(c.cols, id)
				c.ords = append(c.ords, n.ords[i])
			}
		}
		if len(c.cols) == 0 && len(n.cols) > 0 {
			i := narrowest(n.cols, md)
			c.cols, c.ords = []colID{n.cols[i]}, []int{n.ords[i]}
		}
		return &c
	case *filterNode:
		child := copySet(need)
		for _, e := range n.conds {
			exprCols(e, child)
		}
		return n.withChildren([]node{r.prune(n.input, child, md)})
	case *projectNode:
		c := *n
		c.exprs, c.cols = nil, nil
		child := map[colID]bool{}
		for i, id := range n.cols {
			if need[id] {
				c.exprs = append(c.exprs, n.exprs[i])
				c.cols = append(c.cols, id)
				exprCols(n.exprs[i], child)
			}
		}
		c.input = r.prune(n.input, child, md)
		return &c
	case *aggregateNode:
		c := *n
		c.aggs, c.aggCols = nil, nil
		child := map[colID]bool{}
		for _, g := range n.groups {
			exprCols(g, child)
		}
		for i, id := range n.aggCols {
			if need[id] {
				c.aggs = append(c.aggs, n.aggs[i])
				c.aggCols = append(c.aggCols, id)
				exprCols(n.aggs[i].arg, child)
			}
		}
		c.input = r.prune(n.input, child, md)
		return &c
	case *sortNode:
		child := copySet(need)
		for _, k := range n.keys {
			exprCols(k.expr, child)
		}
		return n.withChildren([]node{r.prune(n.input, child, md)})
	default: // limit, and operators that read everything they pass on
		ch := n.children()
		nc := make([]node, len(ch))
		for i, x := range ch {
			nc[i] = r.prune(x, copySet(need), md)
		}
		return n.withChildren(nc)
	}
}

func copySet(s map[colID]bool) map[colID]bool {
	c := make(map[colID]bool, len(s))
	for k, v := range s {
		c[k] = v
	}
	return c
}

// narrowest picks the cheapest column to read when a scan needs none (for
// count(*)): the first of the narrowest type.
func narrowest(cols []colID, md *metadata) int {
	rank := map[plan.TypeID]int{plan.Bool: 0, plan.Date: 1, plan.Int64: 2, plan.Float64: 2, plan.Decimal: 2, plan.String: 3}
	best := 0
	for i, id := range cols {
		if rank[md.col(id).typ.ID] < rank[md.col(cols[best]).typ.ID] {
			best = i
		}
	}
	return best
}
