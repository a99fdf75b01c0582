package planner

import (
	"fmt"
	"math"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// aggInfo is the library entry of a planned aggregate (an empty entry,
// no flags set, for one the library does not know).
func aggInfo(fn plan.AggFunc) *exec.AggregateFunction {
	if f, ok := exec.PlannedAggregate(fn); ok {
		return f
	}
	return &exec.AggregateFunction{Name: fn}
}

// isAggregateName reports whether name is an aggregate of the library.
func isAggregateName(name string) bool {
	_, ok := exec.LookupAggregate(name)
	return ok
}

// aggregateAllowed refuses an aggregate call inside another one, or in a
// clause that takes none (c.aggs nil: WHERE, GROUP BY, ...).
func (b *binder) aggregateAllowed(c *exprCtx, loc int32) error {
	switch {
	case c.inAgg:
		return b.errorf(CodeGrouping, loc, "aggregate function calls cannot be nested")
	case c.aggs == nil:
		return b.errorf(CodeGrouping, loc, "aggregate functions are not allowed in %s", c.clause)
	}
	return nil
}

// bindPercentile binds percentile_cont(f) / percentile_disc(f) WITHIN
// GROUP (ORDER BY x): f a constant in [0, 1], x numeric (as float64).
func (b *binder) bindPercentile(fc *pg.FuncCall, fn plan.AggFunc, c *exprCtx) (*plan.Expr, error) {
	name, loc := funcName(fc), fc.Location
	if err := b.aggregateAllowed(c, loc); err != nil {
		return nil, err
	}
	switch {
	case fc.AggFilter != nil:
		return nil, b.unsupported(loc, "FILTER in aggregate functions")
	case !fc.AggWithinGroup || len(fc.AggOrder) != 1 || len(fc.Args) != 1:
		return nil, b.errorf(CodeType, loc, "type mismatch: %s takes a fraction and WITHIN GROUP (ORDER BY one value)", name)
	}
	inner := c.with(func(c *exprCtx) { c.aggs, c.inAgg = nil, true })
	f, err := b.bindExpr(fc.Args[0], inner)
	if err != nil {
		return nil, err
	}
	if f, err = b.cast(f, plan.Float64Type, loc); err != nil {
		return nil, err
	}
	if !isLit(f) || f.Value.Null || f.Value.F < 0 || f.Value.F > 1 {
		return nil, b.errorf(CodeValue, loc, "%s needs a constant fraction between 0 and 1", name)
	}
	sb := fc.AggOrder[0].GetSortBy()
	if sb == nil {
		return nil, b.unsupported(loc, "this WITHIN GROUP form")
	}
	frac := f.Value.F
	desc := sb.SortbyDir == pg.SortByDir_SORTBY_DESC
	arg, err := b.bindExpr(sb.Node, inner)
	if err != nil {
		return nil, err
	}
	if arg.Type.ID == plan.Null {
		arg = nullOf(plan.Float64Type)
	}
	if !arg.Type.IsNumeric() {
		return nil, b.errorf(CodeType, loc, "type mismatch: %s is not defined for %s", name, arg.Type)
	}
	argType := arg.Type
	if arg, err = b.cast(arg, plan.Float64Type, loc); err != nil {
		return nil, err
	}
	if desc {
		// The fraction f of the values in descending order is minus the
		// fraction f of their negations in ascending order (exact in
		// float64, for the interpolated and the discrete form alike).
		arg = plan.Call(plan.OpNeg, plan.Float64Type, arg)
		v := plan.Call(plan.OpNeg, plan.Float64Type, b.addAgg(c.aggs, aggExpr{fn: fn, arg: arg, typ: plan.Float64Type, fraction: frac}))
		return b.decimalQuantile(v, argType, fn, true, loc)
	}
	return b.decimalQuantile(b.addAgg(c.aggs, aggExpr{fn: fn, arg: arg, typ: plan.Float64Type, fraction: frac}), argType, fn, false, loc)
}

// decimalQuantile gives a quantile of DECIMAL values (v, computed in
// float64) the values' type, as DuckDB does: the discrete form is one of
// the values, and the interpolated form (median, percentile_cont) is
// DuckDB's lo + trunc((hi - lo) * d) on the scaled integers, which is the
// floor of the interpolated value at the type's scale when the values
// ascend (hi >= lo), its ceiling when they descend. Without it the median
// of 1.00 and 2.01 was the DOUBLE 1.505 where DuckDB answers 1.50. The
// tolerance absorbs float64's rounding of the interpolation (150.9999999
// for 151); exact for values of up to 15 digits.
func (b *binder) decimalQuantile(v *plan.Expr, t plan.DataType, fn plan.AggFunc, desc bool, loc int32) (*plan.Expr, error) {
	if t.ID != plan.Decimal {
		return v, nil
	}
	if fn == plan.AggPercentileDisc {
		return b.cast(v, t, loc)
	}
	lit := func(f float64) *plan.Expr { return plan.Literal(plan.Value{F: f}, plan.Float64Type) }
	p10 := math.Pow10(t.Scale)
	x := plan.Call(plan.OpMul, plan.Float64Type, v, lit(p10))
	round := "floor"
	if desc {
		round = "ceil"
		x = plan.Call(plan.OpSub, plan.Float64Type, x, lit(1e-6))
	} else {
		x = plan.Call(plan.OpAdd, plan.Float64Type, x, lit(1e-6))
	}
	r, err := b.callByName(round, []*plan.Expr{x}, loc)
	if err != nil {
		return nil, err
	}
	if r.Type.ID != plan.Float64 {
		if r, err = b.cast(r, plan.Float64Type, loc); err != nil {
			return nil, err
		}
	}
	return b.cast(plan.Call(plan.OpDiv, plan.Float64Type, r, lit(p10)), t, loc)
}

// bindStringAgg binds string_agg(x[, sep]) (sep a constant, default ',';
// x cast to string). Without ORDER BY the order of the values within a
// group is the order the rows arrive in; with it, the rows are sorted in
// the aggregating task first (lower.go aggSingle).
func (b *binder) bindStringAgg(fc *pg.FuncCall, c *exprCtx) (*plan.Expr, error) {
	loc := fc.Location
	if err := b.aggregateAllowed(c, loc); err != nil {
		return nil, err
	}
	switch {
	case fc.AggFilter != nil:
		return nil, b.unsupported(loc, "FILTER in aggregate functions")
	case len(fc.Args) < 1 || len(fc.Args) > 2:
		return nil, b.errorf(CodeType, loc, "type mismatch: string_agg takes a value and an optional separator")
	}
	inner := c.with(func(c *exprCtx) { c.aggs, c.inAgg = nil, true })
	arg, err := b.bindExpr(fc.Args[0], inner)
	if err != nil {
		return nil, err
	}
	argKey := exprKey(arg)
	if arg.Type.ID == plan.Null {
		arg = nullOf(plan.StringType)
	}
	if arg, err = b.cast(arg, plan.StringType, loc); err != nil {
		return nil, err
	}
	sep := ","
	if len(fc.Args) == 2 {
		s, err := b.bindExpr(fc.Args[1], inner)
		if err != nil {
			return nil, err
		}
		if !isStringLit(s) {
			return nil, b.unsupported(loc, "string_agg with a non-constant separator")
		}
		sep = s.Value.S
	}
	a := aggExpr{fn: plan.AggStringAgg, arg: arg, typ: plan.StringType, sep: sep, dedupe: fc.AggDistinct}
	if err := b.aggOrderBy(fc, inner, &a, argKey, arg); err != nil {
		return nil, err
	}
	// Ordered aggregates with different ORDER BYs are planned by
	// expandOrderedAggregates (distinct_aggs.go).
	return b.addAgg(c.aggs, a), nil
}

// sortKeysKey identifies a list of sort keys.
func sortKeysKey(keys []sortKey) string {
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s %v %v;", exprKey(k.expr), k.desc, k.nullsFirst)
	}
	return sb.String()
}

// aggOrderBy binds the ORDER BY of an ordered aggregate call (string_agg,
// list) into a.order; with DISTINCT the keys must be the argument.
func (b *binder) aggOrderBy(fc *pg.FuncCall, inner *exprCtx, a *aggExpr, argKey string, arg *plan.Expr) error {
	name := string(a.fn)
	for _, o := range fc.AggOrder {
		sb := o.GetSortBy()
		if sb == nil || sb.SortbyDir == pg.SortByDir_SORTBY_USING {
			return b.unsupported(exprLoc(o), "this "+name+" ORDER BY item")
		}
		e, err := b.bindExpr(sb.Node, inner)
		if err != nil {
			return err
		}
		if e.Type.ID == plan.Null {
			continue // ordering by a constant NULL orders nothing
		}
		if a.dedupe && exprKey(e) != argKey && exprKey(e) != exprKey(arg) {
			return b.errorf(CodeGrouping, exprLoc(o), "in %s(DISTINCT ...), ORDER BY expressions must be the argument", name)
		}
		a.order = append(a.order, sortKey{expr: e, desc: sb.SortbyDir == pg.SortByDir_SORTBY_DESC,
			nullsFirst: sb.SortbyNulls == pg.SortByNulls_SORTBY_NULLS_FIRST}) // DuckDB: NULLS LAST by default
	}
	return nil
}

// bindListAgg binds list(x [ORDER BY y]) and array_agg: the values of a
// group, NULLs too, as a list. Like string_agg it is holistic: the rows
// of a group meet in one task, sorted there first when ordered.
func (b *binder) bindListAgg(fc *pg.FuncCall, c *exprCtx) (*plan.Expr, error) {
	loc := fc.Location
	if err := b.aggregateAllowed(c, loc); err != nil {
		return nil, err
	}
	switch {
	case fc.AggFilter != nil:
		return nil, b.unsupported(loc, "FILTER in aggregate functions")
	case len(fc.Args) != 1 || fc.AggStar:
		return nil, b.errorf(CodeType, loc, "type mismatch: list takes one value")
	}
	inner := c.with(func(c *exprCtx) { c.aggs, c.inAgg = nil, true })
	arg, err := b.bindExpr(fc.Args[0], inner)
	if err != nil {
		return nil, err
	}
	if arg.Type.ID == plan.Null {
		return nil, b.unsupported(loc, "list of a NULL constant")
	}
	a := aggExpr{fn: plan.AggList, arg: arg, typ: plan.ListOf(arg.Type), dedupe: fc.AggDistinct}
	if err := b.aggOrderBy(fc, inner, &a, exprKey(arg), arg); err != nil {
		return nil, err
	}
	return b.addAgg(c.aggs, a), nil
}
