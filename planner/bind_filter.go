package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// aggFiltered applies an aggregate's FILTER (WHERE cond) to its argument:
// the argument becomes CASE WHEN cond THEN arg END, which every aggregate
// skips as NULL (count(*) FILTER counts CASE WHEN cond THEN 1 END). arg nil
// stands for count(*). Without FILTER it returns arg.
func (b *binder) aggFiltered(fc *pg.FuncCall, arg *plan.Expr, c *exprCtx) (*plan.Expr, error) {
	if fc.AggFilter == nil {
		return arg, nil
	}
	cond, err := b.bindExpr(fc.AggFilter, c.with(func(c *exprCtx) { c.aggs, c.inAgg, c.windows = nil, true, nil }))
	if err != nil {
		return nil, err
	}
	if cond, err = b.requireBool(cond, "FILTER", exprLoc(fc.AggFilter)); err != nil {
		return nil, err
	}
	if arg == nil {
		arg = intLit(1)
	}
	return b.buildCase([]*plan.Expr{cond}, []*plan.Expr{arg}, nullOf(arg.Type), exprLoc(fc.AggFilter))
}
