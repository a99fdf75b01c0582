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
	if nullColumn(ln, l) {
		le = nullOf(plan.NullType)
	}
	if nullColumn(rn, r) {
		re = nullOf(plan.NullType)
	}
	return supertype(le, re)
}
