package planner

import (
	"fmt"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// joinNode joins two inputs. Its output is the left columns then the right
// columns (left only for semi and anti joins), or cols when a rule trimmed
// it. conds are the join condition's conjuncts over both sides' columns:
// equalities between a left and a right expression become hash keys when
// the plan is lowered, the rest the join's residual filter. An inner join
// without conds is a cross join.
//
// The binder turns subqueries into joins whose right side is the subquery;
// while that side still refers to columns of the left (or of an enclosing
// query) the join is dependent, and the decorrelate_subqueries rule must
// rewrite it before anything else looks at the plan.
type joinNode struct {
	typ         plan.JoinType
	left, right node
	conds       []*plan.Expr
	// nullAware gives an anti join NOT IN semantics (see plan.Join).
	nullAware bool
	// cols, when set, are the output columns: a subset of the default
	// output, in the same order.
	cols []colID

	dependent bool
	// scalar marks the join of a scalar subquery: the right side yields
	// one value (scalarCol) per left row.
	scalar    bool
	scalarCol colID
	// subquery is "EXISTS", "IN", "NOT IN", ... for joins made from a
	// subquery (messages); loc is its SQL position.
	subquery string
	loc      int32
}

// unionNode concatenates its inputs (UNION ALL). inCols[i] are the
// columns of inputs[i] that feed cols, position by position.
type unionNode struct {
	inputs []node
	inCols [][]colID
	cols   []colID
}

func (n *joinNode) children() []node  { return []node{n.left, n.right} }
func (n *unionNode) children() []node { return n.inputs }

func (n *joinNode) withChildren(ch []node) node {
	c := *n
	c.left, c.right = ch[0], ch[1]
	return &c
}

func (n *unionNode) withChildren(ch []node) node {
	c := *n
	c.inputs = ch
	return &c
}

// fullOutput is the join's output before any trimming.
func (n *joinNode) fullOutput() []colID {
	out := append([]colID{}, n.left.output()...)
	if n.typ != plan.JoinSemi && n.typ != plan.JoinAnti {
		out = append(out, n.right.output()...)
	}
	return out
}

func (n *joinNode) output() []colID {
	if n.cols != nil {
		return n.cols
	}
	return n.fullOutput()
}

func (n *unionNode) output() []colID { return n.cols }

// isCross reports whether n is an inner join without any condition.
func (n *joinNode) isCross() bool { return n.typ == plan.JoinInner && len(n.conds) == 0 }

func (n *joinNode) describe(*metadata) string {
	var b strings.Builder
	if n.isCross() {
		b.WriteString("CrossJoin:")
	} else {
		fmt.Fprintf(&b, "Join: type=%s", n.typ)
	}
	if n.nullAware {
		b.WriteString(" null_aware")
	}
	if n.dependent {
		b.WriteString(" dependent")
	}
	if len(n.conds) > 0 {
		fmt.Fprintf(&b, " on=[%s]", joinExprs(n.conds, " AND "))
	}
	return b.String()
}

func (n *unionNode) describe(m *metadata) string {
	names := make([]string, len(n.cols))
	for i, id := range n.cols {
		names[i] = m.col(id).name
	}
	return fmt.Sprintf("Union: columns=[%s]", strings.Join(names, ", "))
}

// mirror is the join type with its sides swapped.
func mirror(t plan.JoinType) plan.JoinType {
	switch t {
	case plan.JoinLeft:
		return plan.JoinRight
	case plan.JoinRight:
		return plan.JoinLeft
	}
	return t
}

// colSet returns the set of ids.
func colSet(ids []colID) map[colID]bool {
	s := make(map[colID]bool, len(ids))
	for _, id := range ids {
		s[id] = true
	}
	return s
}

// refs returns the columns e refers to.
func refs(e *plan.Expr) map[colID]bool {
	s := map[colID]bool{}
	exprCols(e, s)
	return s
}

// within reports whether every column e refers to is in set.
func within(e *plan.Expr, set map[colID]bool) bool {
	ok := true
	walkExpr(e, func(x *plan.Expr) {
		if x.Op == plan.OpColumn && !set[x.Col] {
			ok = false
		}
	})
	return ok
}

// touches reports whether e refers to any column of set.
func touches(e *plan.Expr, set map[colID]bool) bool {
	hit := false
	walkExpr(e, func(x *plan.Expr) {
		if x.Op == plan.OpColumn && set[x.Col] {
			hit = true
		}
	})
	return hit
}

// produced returns every column produced anywhere in the tree under n
// (including n's own output).
func produced(n node) map[colID]bool {
	s := map[colID]bool{}
	var walk func(node)
	walk = func(n node) {
		for _, id := range n.output() {
			s[id] = true
		}
		switch x := n.(type) {
		case *scanNode:
			for _, id := range x.cols {
				s[id] = true
			}
		case *aggregateNode:
			for _, id := range x.groupCols {
				s[id] = true
			}
			for _, id := range x.aggCols {
				s[id] = true
			}
		case *projectNode:
			for _, id := range x.cols {
				s[id] = true
			}
		case *joinNode:
			for _, id := range x.fullOutput() {
				s[id] = true
			}
		}
		for _, c := range n.children() {
			walk(c)
		}
	}
	walk(n)
	return s
}

// nodeExprs returns the expressions n itself evaluates (not its inputs').
func nodeExprs(n node) []*plan.Expr {
	switch x := n.(type) {
	case *scanNode:
		return x.filters
	case *filterNode:
		return x.conds
	case *projectNode:
		return x.exprs
	case *aggregateNode:
		out := append([]*plan.Expr{}, x.groups...)
		for _, a := range x.aggs {
			out = append(out, a.args()...)
			for _, o := range a.order {
				out = append(out, o.expr)
			}
		}
		return out
	case *sortNode:
		out := make([]*plan.Expr, len(x.keys))
		for i, k := range x.keys {
			out[i] = k.expr
		}
		return out
	case *joinNode:
		return x.conds
	case *unionNode:
		var out []*plan.Expr
		for _, ids := range x.inCols {
			for _, id := range ids {
				out = append(out, &plan.Expr{Op: plan.OpColumn, Col: id})
			}
		}
		return out
	}
	return nil
}

// freeCols returns, in a stable order, the columns referred to under n
// that nothing under n produces: references to an enclosing query.
func freeCols(n node) []colID {
	prod := produced(n)
	var out []colID
	seen := map[colID]bool{}
	var walk func(node)
	walk = func(n node) {
		for _, e := range nodeExprs(n) {
			walkExpr(e, func(x *plan.Expr) {
				if x.Op == plan.OpColumn && !prod[x.Col] && !seen[x.Col] {
					seen[x.Col] = true
					out = append(out, x.Col)
				}
			})
		}
		for _, c := range n.children() {
			walk(c)
		}
	}
	walk(n)
	return out
}
