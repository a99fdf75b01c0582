package planner

import "github.com/sluicedb/sluice/planner/plan"

// pruneColumns drops the columns no operator above reads: scans read only
// those columns, projections compute only those, aggregations compute only
// the aggregates used, joins and unions pass on only those. The plan's own
// output is kept whole. Every operator keeps at least one column so that
// its row count survives (a batch of zero columns cannot cross an exchange:
// count(*) over a derived table with LIMIT once counted 0).
type pruneColumns struct{}

func (pruneColumns) name() string { return "prune_columns" }

func (r pruneColumns) apply(root node, rc *ruleCtx) (node, error) {
	need := map[colID]bool{}
	for _, id := range root.output() {
		need[id] = true
	}
	return r.prune(root, need, rc.md), nil
}

func (r pruneColumns) prune(n node, need map[colID]bool, md *metadata) node {
	switch n := n.(type) {
	case *scanNode:
		read := copySet(need)
		for _, f := range n.filters {
			exprCols(f, read)
		}
		c := *n
		c.cols, c.ords, c.out = nil, nil, nil
		var out []colID // what the operators above read
		for i, id := range n.cols {
			if read[id] {
				c.cols = append(c.cols, id)
				c.ords = append(c.ords, n.ords[i])
				if need[id] {
					out = append(out, id)
				}
			}
		}
		if len(c.cols) == 0 && len(n.cols) > 0 {
			i := narrowest(n.cols, md)
			c.cols, c.ords = []colID{n.cols[i]}, []int{n.ords[i]}
		}
		if len(out) < len(c.cols) {
			// Columns only the filters read go right after them; the
			// row count survives in the narrowest column when nothing
			// above reads one.
			if len(out) == 0 {
				out = []colID{c.cols[narrowest(c.cols, md)]}
			}
			if len(out) < len(c.cols) {
				c.out = out
			}
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
		if len(c.cols) == 0 && len(n.cols) > 0 {
			// Nothing above reads a value, but the row count must survive
			// (count(*) over a derived table): keep the cheapest column.
			// An exchange cannot carry a batch of zero columns.
			i := narrowest(n.cols, md)
			c.exprs, c.cols = []*plan.Expr{n.exprs[i]}, []colID{n.cols[i]}
			exprCols(n.exprs[i], child)
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
				for _, e := range n.aggs[i].args() {
					exprCols(e, child)
				}
				for _, o := range n.aggs[i].order {
					exprCols(o.expr, child)
				}
			}
		}
		if len(n.groups) == 0 && len(c.aggCols) == 0 && len(n.aggCols) > 0 {
			// A global aggregate yields one row even when no value is read.
			c.aggs, c.aggCols = n.aggs[:1], n.aggCols[:1]
			for _, e := range n.aggs[0].args() {
				exprCols(e, child)
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
	case *joinNode:
		child := copySet(need)
		for _, e := range n.conds {
			exprCols(e, child)
		}
		c := *n
		c.left = r.prune(n.left, child, md)
		c.right = r.prune(n.right, child, md)
		c.cols = nil
		full := c.fullOutput()
		var keep []colID
		for _, id := range full {
			if need[id] {
				keep = append(keep, id)
			}
		}
		if len(keep) == 0 && len(full) > 0 {
			keep = full[:1] // the row count must survive
		}
		if len(keep) < len(full) {
			c.cols = keep
		}
		return &c
	case *unionNode:
		c := *n
		var keep []int
		for k, id := range n.cols {
			if need[id] {
				keep = append(keep, k)
			}
		}
		if len(keep) == 0 {
			keep = []int{0}
		}
		c.cols = nil
		c.inCols = make([][]colID, len(n.inputs))
		c.inputs = make([]node, len(n.inputs))
		for _, k := range keep {
			c.cols = append(c.cols, n.cols[k])
		}
		for i, in := range n.inputs {
			child := map[colID]bool{}
			for _, k := range keep {
				c.inCols[i] = append(c.inCols[i], n.inCols[i][k])
				child[n.inCols[i][k]] = true
			}
			c.inputs[i] = r.prune(in, child, md)
		}
		return &c
	case *windowNode:
		return r.pruneWindow(n, need, md)
	case *expandNode:
		return r.pruneExpand(n, need, md)
	case *unnestNode:
		return r.pruneUnnest(n, need, md)
	default: // limit, and operators that read everything they pass on
		ch := n.children()
		nc := make([]node, len(ch))
		for i, x := range ch {
			nc[i] = r.prune(x, copySet(need), md)
		}
		return n.withChildren(nc)
	}
}

// narrowest picks the cheapest column to read when a scan needs none (for
// count(*)): the first of the narrowest type.
func narrowest(cols []colID, md *metadata) int {
	rank := map[plan.TypeID]int{plan.Bool: 0, plan.Date: 1, plan.Timestamp: 2, plan.Int64: 2, plan.Float64: 2, plan.Decimal: 2, plan.String: 3}
	best := 0
	for i, id := range cols {
		if rank[md.col(id).typ.ID] < rank[md.col(cols[best]).typ.ID] {
			best = i
		}
	}
	return best
}
