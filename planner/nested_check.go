package planner

import (
	"fmt"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// checkNested refuses (SL005) the plans that would compare, order, hash or
// compute over LIST, STRUCT or MAP values, which the engine carries
// through scans, filters, projections, sorts, joins and shuffles as
// payload but has no kernels for yet: sort, group, join and partition
// keys, aggregate arguments (but count), window keys, and any operator or
// function over a nested value but IS [NOT] NULL. It runs on the lowered
// graph, so every construct that turns into one of those is covered.
func checkNested(g *plan.Graph) error {
	for _, s := range g.Stages {
		for _, k := range s.Output.Keys {
			if k >= 0 && k < len(s.Root.Schema) && s.Root.Schema[k].Type.IsNested() {
				return nestedErr("hashing (GROUP BY, DISTINCT, a join or set operation key) on", s.Root.Schema[k].Type)
			}
		}
		if err := checkNestedNode(s.Root); err != nil {
			return err
		}
	}
	return nil
}

func nestedErr(what string, t plan.DataType) error {
	return &Error{Code: CodeUnsupported, Msg: fmt.Sprintf("unsupported: %s a value of type %s (nested types are read, filtered, sorted by other columns, joined on other columns and returned; not compared or computed on yet)", what, t)}
}

func checkNestedNode(n *plan.Node) error {
	if n == nil {
		return nil
	}
	exprs := append([]*plan.Expr{n.Predicate}, n.Exprs...)
	for _, r := range n.Rows {
		exprs = append(exprs, r...)
	}
	for _, r := range n.Expand {
		exprs = append(exprs, r...)
	}
	if n.Scan != nil {
		exprs = append(exprs, n.Scan.Filter)
	}
	keyed := func(what string, es ...*plan.Expr) error {
		for _, e := range es {
			if e != nil && e.Type.IsNested() {
				return nestedErr(what, e.Type)
			}
		}
		return nil
	}
	for _, k := range n.SortKeys {
		if err := keyed("ordering by", k.Expr); err != nil {
			return err
		}
		exprs = append(exprs, k.Expr)
	}
	if a := n.Aggregate; a != nil {
		if err := keyed("grouping by", a.GroupBy...); err != nil {
			return err
		}
		exprs = append(exprs, a.GroupBy...)
		for _, c := range a.Aggs {
			if c.Func != plan.AggCount && c.Func != plan.AggCountStar || c.Distinct {
				if err := keyed(fmt.Sprintf("aggregate %s of", c.Func), append([]*plan.Expr{c.Arg}, c.More...)...); err != nil {
					return err
				}
			}
			exprs = append(append(exprs, c.Arg), c.More...)
		}
	}
	if j := n.Join; j != nil {
		if err := keyed("joining on", append(append([]*plan.Expr{}, j.LeftKeys...), j.RightKeys...)...); err != nil {
			return err
		}
		exprs = append(append(append(exprs, j.LeftKeys...), j.RightKeys...), j.Filter)
	}
	if w := n.Window; w != nil {
		if err := keyed("partitioning a window by", w.PartitionBy...); err != nil {
			return err
		}
		exprs = append(exprs, w.PartitionBy...)
		for _, k := range w.OrderBy {
			if err := keyed("ordering a window by", k.Expr); err != nil {
				return err
			}
		}
		for _, c := range w.Calls {
			if err := keyed(fmt.Sprintf("window function %s of", c.Func), c.Args...); err != nil {
				return err
			}
		}
	}
	for _, e := range exprs {
		if err := checkNestedExpr(e); err != nil {
			return err
		}
	}
	for _, in := range n.Inputs {
		if err := checkNestedNode(in); err != nil {
			return err
		}
	}
	return nil
}

// checkNestedExpr refuses an operator or function over a nested value, or
// one whose result is nested, but a column reference, a NULL literal and
// IS [NOT] NULL.
func checkNestedExpr(e *plan.Expr) error {
	if e == nil {
		return nil
	}
	switch e.Op {
	case plan.OpColumn, plan.OpLiteral:
		return nil
	case plan.OpFunc:
		if f, ok := exec.LookupFunction(e.Func); ok && f.Nested {
			for _, a := range e.Args {
				if err := checkNestedExpr(a); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if e.Type.IsNested() {
		return nestedErr(fmt.Sprintf("%s giving", e.Op), e.Type)
	}
	for _, a := range e.Args {
		if a != nil && a.Type.IsNested() && e.Op != plan.OpIsNull && e.Op != plan.OpIsNotNull {
			return nestedErr(fmt.Sprintf("%s over", e.Op), a.Type)
		}
		if err := checkNestedExpr(a); err != nil {
			return err
		}
	}
	return nil
}
