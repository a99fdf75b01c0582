package planner

import "github.com/sluicedb/sluice/planner/plan"

// nullColumn reports whether column id of n is always the NULL literal of
// a select list (SELECT NULL AS x), through the projections, filters,
// sorts, limits and unions that pass it on. Such a column was given int64
// only because a select list needs a type; in a set operation it takes the
// type of the other branches instead, as in Postgres and DuckDB.
func nullColumn(n node, id colID) bool {
	switch n := n.(type) {
	case *projectNode:
		for i, c := range n.cols {
			if c != id {
				continue
			}
			e := n.exprs[i]
			if e.Op == plan.OpLiteral && e.Value.Null {
				return true
			}
			if e.Op == plan.OpColumn {
				return nullColumn(n.input, e.Col)
			}
			return false
		}
	case *filterNode:
		return nullColumn(n.input, id)
	case *sortNode:
		return nullColumn(n.input, id)
	case *limitNode:
		return nullColumn(n.input, id)
	case *unionNode:
		for i, c := range n.cols {
			if c != id {
				continue
			}
			for j, in := range n.inputs {
				if !nullColumn(in, n.inCols[j][i]) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// setOpType is the type of column i of a set operation whose sides yield
// columns l and r: their common type, where a side's NULL column adopts
// the other side's type.
func (b *binder) setOpType(ln, rn node, l, r colID) (plan.DataType, bool) {
	le, re := b.md.ref(l), b.md.ref(r)
	lnull, rnull := nullColumn(ln, l), nullColumn(rn, r)
	// When both sides are NULL columns their own types decide where they
	// have a common one (a NULL date on each side is a date column, not the
	// default BIGINT of an untyped NULL, to which a date cannot be cast).
	if lnull && rnull {
		if t, ok := supertype(le, re); ok {
			return t, true
		}
	}
	if lnull {
		le = nullOf(plan.NullType)
	}
	if rnull {
		re = nullOf(plan.NullType)
	}
	return supertype(le, re)
}

// intersectExcept plans INTERSECT and EXCEPT over the (type-aligned) sides
// of u as one aggregation: each side's rows get a marker column, the
// union of both is grouped by all columns, and a filter keeps the groups
// found on both sides (INTERSECT) or only on the left (EXCEPT); NULLs
// compare equal, as set operations require. For ALL, each row first gets
// its number among equal rows of its side (row_number over a partition by
// all columns), which makes rows unique, so the same plan keeps min(l, r)
// (INTERSECT ALL) or max(l - r, 0) (EXCEPT ALL) copies.
func (b *binder) intersectExcept(u *unionNode, intersect, all bool) node {
	k := len(u.cols)
	var sides []node
	var sideCols [][]colID
	for i, in := range u.inputs {
		cols := u.inCols[i]
		var root node = in
		var refs []*plan.Expr
		for _, id := range cols {
			refs = append(refs, b.md.ref(id))
		}
		if all {
			rn := b.md.add(column{name: "row_number", typ: plan.Int64Type})
			root = &windowNode{input: in, partition: refs, cols: []colID{rn},
				calls: []windowCall{{fn: plan.WinRowNumber, typ: plan.Int64Type, frame: plan.Frame{Mode: plan.FrameRange,
					Start: plan.FrameBound{Kind: plan.BoundUnboundedPreceding}, End: plan.FrameBound{Kind: plan.BoundCurrentRow}}}}}
			refs = append(refs, b.md.ref(rn))
		}
		p := &projectNode{input: root, exprs: append(refs, intLit(int64(1-i)), intLit(int64(i)))}
		for j, e := range p.exprs {
			name := "marker"
			if j < k {
				name = b.md.col(u.cols[j]).name
			}
			p.cols = append(p.cols, b.md.add(column{name: name, typ: e.Type, nullable: j < k && b.nullable(e)}))
		}
		sides = append(sides, p)
		sideCols = append(sideCols, p.cols)
	}
	uu := &unionNode{inputs: sides, inCols: sideCols}
	for j, id := range sideCols[0] {
		c := b.md.col(id)
		c.nullable = c.nullable || b.md.col(sideCols[1][j]).nullable
		uu.cols = append(uu.cols, b.md.add(c))
	}
	nkeys := len(uu.cols) - 2
	agg := &aggregateNode{input: uu}
	for _, id := range uu.cols[:nkeys] {
		agg.groups = append(agg.groups, b.md.ref(id))
		agg.groupCols = append(agg.groupCols, b.md.add(b.md.col(id)))
	}
	for _, id := range uu.cols[nkeys:] {
		agg.aggs = append(agg.aggs, aggExpr{fn: plan.AggSum, arg: b.md.ref(id), typ: plan.Int64Type})
		agg.aggCols = append(agg.aggCols, b.md.add(column{name: "count", typ: plan.Int64Type, nullable: true}))
	}
	right := plan.Call(plan.OpEq, plan.BoolType, b.md.ref(agg.aggCols[1]), intLit(0))
	if intersect {
		right = plan.Call(plan.OpGt, plan.BoolType, b.md.ref(agg.aggCols[1]), intLit(0))
	}
	f := &filterNode{input: agg, conds: []*plan.Expr{
		plan.Call(plan.OpGt, plan.BoolType, b.md.ref(agg.aggCols[0]), intLit(0)), right}}
	out := &projectNode{input: f}
	for j := 0; j < k; j++ {
		out.exprs = append(out.exprs, b.md.ref(agg.groupCols[j]))
		out.cols = append(out.cols, u.cols[j])
	}
	return out
}
