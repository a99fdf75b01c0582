package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// The bivariate aggregates of Postgres and DuckDB: covar_pop, covar_samp,
// corr and the regr_* family, f(y, x) over the rows where both y and x
// are not NULL. They are bound as expressions over aggregates the engine
// has, so they run in partial and final stages like the variance family
// they are built on. With x' and y' the pair-filtered arguments, N their
// count, and the Welford-exact population variances,
//
//	Sxx = N var_pop(x'), Syy = N var_pop(y'),
//	Sxy = N (var_pop(x' + y') - var_pop(x') - var_pop(y')) / 2
//
// (the variance of a sum: stable where sum(x y) - sum(x) sum(y) / N
// cancels), and
//
//	covar_pop = Sxy / N, covar_samp = Sxy / (N - 1) (NULL below 2 rows),
//	corr = Sxy / sqrt(Sxx Syy), regr_slope = Sxy / Sxx,
//	regr_intercept = avg(y') - regr_slope avg(x'), regr_r2 = corr^2 (1
//	when Syy = 0), regr_count = N, regr_avgx/avgy, regr_sxx/syy/sxy.
//
// Every result but regr_count is NULL without rows; covar_samp of one row
// is NULL; corr and regr_slope of a constant x are NaN (0 / 0), as DuckDB's.
var bivariateAggs = map[string]bool{
	"covar_pop": true, "covar_samp": true, "corr": true,
	"regr_slope": true, "regr_intercept": true, "regr_r2": true, "regr_count": true,
	"regr_avgx": true, "regr_avgy": true, "regr_sxx": true, "regr_syy": true, "regr_sxy": true,
}

func (b *binder) bindBivariate(fc *pg.FuncCall, c *exprCtx) (*plan.Expr, error) {
	name, loc := funcName(fc), fc.Location
	if err := b.aggregateAllowed(c, loc); err != nil {
		return nil, err
	}
	switch {
	case fc.AggStar || len(fc.Args) != 2:
		return nil, b.errorf(CodeType, loc, "type mismatch: %s takes two numeric arguments", name)
	case fc.AggDistinct:
		return nil, b.unsupported(loc, "DISTINCT in "+name)
	case len(fc.AggOrder) > 0 || fc.AggWithinGroup:
		return nil, b.unsupported(loc, "ORDER BY in aggregate functions")
	}
	inner := c.with(func(c *exprCtx) { c.aggs, c.inAgg = nil, true })
	var args [2]*plan.Expr
	for i, a := range fc.Args {
		e, err := b.bindExpr(a, inner)
		if err != nil {
			return nil, err
		}
		if e.Type.ID == plan.Null {
			e = nullOf(plan.Float64Type)
		}
		if !e.Type.IsNumeric() {
			return nil, b.errorf(CodeType, exprLoc(a), "type mismatch: %s is not defined for %s", name, e.Type)
		}
		if e, err = b.cast(e, plan.Float64Type, loc); err != nil {
			return nil, err
		}
		if e, err = b.aggFiltered(fc, e, c); err != nil {
			return nil, err
		}
		args[i] = e
	}
	y, x := args[0], args[1]
	f64 := plan.Float64Type
	// The pairs: each argument where the other is not NULL.
	only := func(v, other *plan.Expr) (*plan.Expr, error) {
		return b.buildCase([]*plan.Expr{plan.Call(plan.OpIsNotNull, plan.BoolType, other)}, []*plan.Expr{v}, nullOf(f64), loc)
	}
	xp, err := only(x, y)
	if err != nil {
		return nil, err
	}
	yp, err := only(y, x)
	if err != nil {
		return nil, err
	}
	sum := plan.Call(plan.OpAdd, f64, xp, yp)
	agg := func(fn plan.AggFunc, arg *plan.Expr, t plan.DataType) *plan.Expr {
		return b.addAgg(c.aggs, aggExpr{fn: fn, arg: arg, typ: t})
	}
	count := agg(plan.AggCount, sum, plan.Int64Type)
	if name == "regr_count" {
		return count, nil
	}
	op := func(o plan.Op, l, r *plan.Expr) *plan.Expr { return plan.Call(o, f64, l, r) }
	num := func(v float64) *plan.Expr { return lit(plan.Value{F: v}, f64) }
	n, err := b.cast(count, f64, loc)
	if err != nil {
		return nil, err
	}
	vx, vy := agg(plan.AggVarPop, xp, f64), agg(plan.AggVarPop, yp, f64)
	sxx, syy := op(plan.OpMul, n, vx), op(plan.OpMul, n, vy)
	sxy := op(plan.OpMul, n, op(plan.OpDiv, op(plan.OpSub, op(plan.OpSub, agg(plan.AggVarPop, sum, f64), vx), vy), num(2)))
	// ratio is l / r, NULL where r is 0 (or NULL).
	ratio := func(l, r *plan.Expr) (*plan.Expr, error) {
		return b.buildCase([]*plan.Expr{plan.Call(plan.OpNe, plan.BoolType, r, num(0))}, []*plan.Expr{op(plan.OpDiv, l, r)}, nullOf(f64), loc)
	}
	switch name {
	case "covar_pop":
		return ratio(sxy, n)
	case "covar_samp":
		return ratio(sxy, op(plan.OpSub, n, num(1)))
	case "corr":
		return op(plan.OpDiv, sxy, b.sqrt(op(plan.OpMul, sxx, syy))), nil
	case "regr_slope":
		return op(plan.OpDiv, sxy, sxx), nil
	case "regr_intercept":
		slope := op(plan.OpDiv, sxy, sxx)
		return op(plan.OpSub, agg(plan.AggAvg, yp, f64), op(plan.OpMul, slope, agg(plan.AggAvg, xp, f64))), nil
	case "regr_r2":
		r, err := ratio(sxy, b.sqrt(op(plan.OpMul, sxx, syy)))
		if err != nil {
			return nil, err
		}
		// NULL when Sxx = 0; 1 when only Syy is; corr^2 otherwise.
		return b.buildCase([]*plan.Expr{
			plan.Call(plan.OpEq, plan.BoolType, sxx, num(0)),
			plan.Call(plan.OpEq, plan.BoolType, syy, num(0)),
		}, []*plan.Expr{nullOf(f64), num(1)}, op(plan.OpMul, r, r), loc)
	case "regr_avgx":
		return agg(plan.AggAvg, xp, f64), nil
	case "regr_avgy":
		return agg(plan.AggAvg, yp, f64), nil
	case "regr_sxx":
		return sxx, nil
	case "regr_syy":
		return syy, nil
	}
	return sxy, nil // regr_sxy
}

// sqrt is the library's square root of a float64 expression.
func (b *binder) sqrt(e *plan.Expr) *plan.Expr {
	return plan.CallFunc("sqrt", plan.Float64Type, e)
}
