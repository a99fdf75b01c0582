package planner

import (
	"slices"

	"github.com/sluicedb/sluice/planner/plan"
)

// copyFresh returns a copy of the plan n in which every column n's
// operators define gets a new id (the same name and type), with m mapping
// each old id to its new one; ids n only reads (outer columns) are kept.
// Used to read the same input twice in one plan (decorrelation's distinct
// outer values), since a column id must be defined in one place. ok is
// false for an operator it does not know, and for LIMIT and window
// functions: over rows that tie in their order, two copies could pick
// different rows (or number them differently), and the copy must yield
// the same values as the original.
func copyFresh(n node, md *metadata, m map[colID]colID) (node, bool) {
	fresh := func(ids []colID) []colID {
		out := make([]colID, len(ids))
		for i, id := range ids {
			nid := md.add(md.col(id))
			m[id] = nid
			out[i] = nid
		}
		return out
	}
	x := func(e *plan.Expr) *plan.Expr {
		if e == nil {
			return nil
		}
		return substTopDown(e, func(c *plan.Expr) *plan.Expr {
			if c.Op == plan.OpColumn {
				if nid, ok := m[c.Col]; ok {
					return md.ref(nid)
				}
			}
			return nil
		})
	}
	xs := func(es []*plan.Expr) []*plan.Expr {
		if es == nil {
			return nil
		}
		out := make([]*plan.Expr, len(es))
		for i, e := range es {
			out[i] = x(e)
		}
		return out
	}
	keys := func(ks []sortKey) []sortKey {
		if ks == nil {
			return nil
		}
		out := make([]sortKey, len(ks))
		for i, k := range ks {
			out[i] = k
			out[i].expr = x(k.expr)
		}
		return out
	}
	ids := func(in []colID) []colID {
		if in == nil {
			return nil
		}
		out := make([]colID, len(in))
		for i, id := range in {
			out[i] = id
			if nid, ok := m[id]; ok {
				out[i] = nid
			}
		}
		return out
	}
	one := func(in node) (node, bool) { return copyFresh(in, md, m) }
	switch n := n.(type) {
	case *scanNode:
		c := *n
		c.cols = fresh(n.cols)
		if n.out != nil {
			c.out = make([]colID, len(n.out))
			for i, id := range n.out {
				c.out[i] = m[id]
			}
		}
		c.ords = append([]int{}, n.ords...)
		c.filters = xs(n.filters)
		return &c, true
	case *valuesNode:
		c := *n
		c.cols = fresh(n.cols)
		return &c, true
	case *filterNode:
		in, ok := one(n.input)
		if !ok {
			return nil, false
		}
		return &filterNode{input: in, conds: xs(n.conds)}, true
	case *projectNode:
		in, ok := one(n.input)
		if !ok {
			return nil, false
		}
		exprs := xs(n.exprs)
		return &projectNode{input: in, exprs: exprs, cols: fresh(n.cols)}, true
	case *aggregateNode:
		in, ok := one(n.input)
		if !ok {
			return nil, false
		}
		c := *n
		c.input = in
		c.groups = xs(n.groups)
		c.aggs = make([]aggExpr, len(n.aggs))
		for i, a := range n.aggs {
			c.aggs[i] = a
			c.aggs[i].arg = x(a.arg)
			c.aggs[i].more = xs(a.more)
			c.aggs[i].order = keys(a.order)
		}
		c.groupCols = fresh(n.groupCols)
		c.aggCols = fresh(n.aggCols)
		return &c, true
	case *sortNode:
		in, ok := one(n.input)
		if !ok {
			return nil, false
		}
		return &sortNode{input: in, keys: keys(n.keys)}, true
	case *singleRowNode:
		in, ok := one(n.input)
		if !ok {
			return nil, false
		}
		return &singleRowNode{input: in}, true
	case *joinNode:
		if n.dependent {
			return nil, false
		}
		l, ok := one(n.left)
		if !ok {
			return nil, false
		}
		r, ok := one(n.right)
		if !ok {
			return nil, false
		}
		c := *n
		c.left, c.right = l, r
		c.conds = xs(n.conds)
		c.cols = ids(n.cols)
		if n.scalar {
			c.scalarCol = ids([]colID{n.scalarCol})[0]
		}
		return &c, true
	case *unionNode:
		c := *n
		c.inputs = nil
		c.inCols = nil
		for i, in := range n.inputs {
			x, ok := one(in)
			if !ok {
				return nil, false
			}
			c.inputs = append(c.inputs, x)
			c.inCols = append(c.inCols, ids(n.inCols[i]))
		}
		c.cols = fresh(n.cols)
		return &c, true
	}
	return nil, false
}

// unstableCols returns the output columns of n whose values may differ
// between two runs of the same plan: aggregates whose result depends on
// the order rows arrive in (a float64 sum or average, whose rounding
// does; string_agg without ORDER BY), and whatever is computed from them.
// A copy made by copyFresh yields the same values in its other columns.
func unstableCols(n node) map[colID]bool {
	out := map[colID]bool{}
	for _, c := range n.children() {
		for id := range unstableCols(c) {
			out[id] = true
		}
	}
	switch n := n.(type) {
	case *aggregateNode:
		for i, a := range n.aggs {
			info := aggInfo(a.fn)
			float := a.typ.ID == plan.Float64 && !info.Selects && !info.ZeroOnEmpty
			if float || info.OrderSensitive && len(a.order) == 0 || slices.ContainsFunc(a.args(), func(e *plan.Expr) bool { return touches(e, out) }) {
				out[n.aggCols[i]] = true
			}
		}
		for i, g := range n.groups {
			if touches(g, out) {
				out[n.groupCols[i]] = true
			}
		}
	case *projectNode:
		for i, e := range n.exprs {
			if touches(e, out) {
				out[n.cols[i]] = true
			}
		}
	case *unionNode:
		for _, in := range n.inCols {
			for i, id := range in {
				if out[id] {
					out[n.cols[i]] = true
				}
			}
		}
	case *valuesNode, *scanNode:
	}
	return out
}
