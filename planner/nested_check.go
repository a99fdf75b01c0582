package planner

import (
	"fmt"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// checkNested refuses (SL005) the plans that would compute over LIST,
// STRUCT or MAP values with what has no kernel for them: aggregates over
// nested arguments but count, count(DISTINCT) and list/array_agg, and
// operators and functions over a nested value but comparisons, IS [NOT]
// NULL and the nested functions. Nested values are hashed, grouped,
// joined on, sorted and compared (by their key encoding, see
// kernel.AppendKey), so sort, group, join, partition and window keys of
// nested types are allowed. It runs on the lowered graph, so every
// construct that turns into one of those is covered.
func checkNested(g *plan.Graph) error {
	for _, s := range g.Stages {
		if err := checkNestedNode(s.Root); err != nil {
			return err
		}
	}
	return nil
}

func nestedErr(what string, t plan.DataType) error {
	return &Error{Code: CodeUnsupported, Msg: fmt.Sprintf("unsupported: %s a value of type %s (nested values are read, compared, grouped, sorted, joined on and returned, and have the nested functions; this has no kernel for them yet)", what, t)}
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
		exprs = append(exprs, k.Expr)
	}
	if a := n.Aggregate; a != nil {
		exprs = append(exprs, a.GroupBy...)
		for _, c := range a.Aggs {
			if !nestedAggOK(c) {
				if err := keyed(fmt.Sprintf("aggregate %s of", c.Func), append([]*plan.Expr{c.Arg}, c.More...)...); err != nil {
					return err
				}
			}
			exprs = append(append(exprs, c.Arg), c.More...)
		}
	}
	if j := n.Join; j != nil {
		exprs = append(append(append(exprs, j.LeftKeys...), j.RightKeys...), j.Filter)
	}
	if w := n.Window; w != nil {
		exprs = append(exprs, w.PartitionBy...)
		for _, k := range w.OrderBy {
			exprs = append(exprs, k.Expr)
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
	case plan.OpCast, plan.OpTryCast: // nested casts: cast_nested.go
		for _, a := range e.Args {
			if err := checkNestedExpr(a); err != nil {
				return err
			}
		}
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
	compares := false
	switch e.Op {
	case plan.OpIsNull, plan.OpIsNotNull, plan.OpEq, plan.OpNe, plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe:
		compares = true
	}
	for _, a := range e.Args {
		if a != nil && a.Type.IsNested() && !compares {
			return nestedErr(fmt.Sprintf("%s over", e.Op), a.Type)
		}
		if err := checkNestedExpr(a); err != nil {
			return err
		}
	}
	return nil
}

// nestedAggOK reports whether aggregate call c takes nested arguments:
// count, count(DISTINCT) (which hashes them), list, min and max, and
// arg_min/arg_max (nested values and keys).
func nestedAggOK(c plan.AggCall) bool {
	switch c.Func {
	case plan.AggCount, plan.AggCountStar, plan.AggCountDistinct, plan.AggList, plan.AggListWrapped, plan.AggListUnordered,
		plan.AggMin, plan.AggMax, // min and max compare nested values by their key encoding
		plan.AggArgMin, plan.AggArgMax, plan.AggArgMinNull, plan.AggArgMaxNull: // as min and max, agg_argminmax_nested.go
		return true
	}
	return false
}
