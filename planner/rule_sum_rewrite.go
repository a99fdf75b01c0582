package planner

import (
	"context"

	"github.com/sluicedb/sluice/planner/plan"
)

// rewriteSums turns several sums of one integer column plus or minus a
// constant into one sum and one count of the column, combined in a
// projection above the aggregation (DuckDB's SumRewriterOptimizer,
// ClickHouse's RewriteSumFunctionWithSumAndCountPass):
//
//	sum(x + k) = sum(x) + k * count(x)
//	sum(x - k) = sum(x) - k * count(x)
//	sum(k - x) = k * count(x) - sum(x)
//	sum(x * k) = k * sum(x)     (and sum(k * x))
//
// A query computing 90 sums of ResolutionWidth + k (ClickBench's Q29)
// then aggregates two columns instead of 90.
//
// Trigger: an aggregation with at least two such sums of the same x (not
// DISTINCT), x and k int64 (every SQL integer type is int64 here), k a
// non-NULL literal. One sum(x + k) alone is left as is: it would trade one
// aggregate for two.
//
// Exact: the sums are computed in their own type (decimal(38,0), 128-bit),
// the count is cast to it before it is multiplied by k, and the result is
// the sum's type, so sum(x + k) and its rewrite are equal whenever the
// original does not overflow. NULLs: x + k is NULL exactly when x is, so
// both sums add the same rows; with no non-NULL x, sum(x) is NULL and so
// is the result, as sum(x + k) is. (Where x + k overflows int64 in some
// row the original fails and the rewrite answers.)
type rewriteSums struct{}

func (rewriteSums) name() string { return "rewrite_sums" }

func (r rewriteSums) apply(root node, rc *ruleCtx) (node, error) {
	ch := root.children()
	changed := false
	for i, c := range ch {
		n, err := r.apply(c, rc)
		if err != nil {
			return nil, err
		}
		if n != c {
			ch[i], changed = n, true
		}
	}
	if changed {
		root = root.withChildren(ch)
	}
	agg, ok := root.(*aggregateNode)
	if !ok {
		return root, nil
	}
	return rewriteAggSums(agg, rc)
}

// sumTerm is a sum(x + k) / sum(x - k) / sum(k - x) the rule rewrites.
type sumTerm struct {
	x   *plan.Expr
	k   *plan.Expr // the int64 literal
	op  plan.Op    // OpAdd, OpSub or OpMul
	neg bool       // k - x
}

func matchSumTerm(a aggExpr) (sumTerm, bool) {
	if a.fn != plan.AggSum || a.distinct || a.dedupe || len(a.order) > 0 || a.arg == nil {
		return sumTerm{}, false
	}
	e := a.arg
	if (e.Op != plan.OpAdd && e.Op != plan.OpSub && e.Op != plan.OpMul) || len(e.Args) != 2 || e.Type != plan.Int64Type {
		return sumTerm{}, false
	}
	l, r := e.Args[0], e.Args[1]
	intLit := func(x *plan.Expr) bool {
		return isLit(x) && x.Type == plan.Int64Type && x.Value != nil && !x.Value.Null
	}
	switch {
	case intLit(r) && !isLit(l) && l.Type == plan.Int64Type:
		return sumTerm{x: l, k: r, op: e.Op}, true
	case intLit(l) && !isLit(r) && r.Type == plan.Int64Type:
		if e.Op != plan.OpSub {
			return sumTerm{x: r, k: l, op: e.Op}, true
		}
		return sumTerm{x: r, k: l, op: plan.OpSub, neg: true}, true
	}
	return sumTerm{}, false
}

func rewriteAggSums(n *aggregateNode, rc *ruleCtx) (node, error) {
	terms := map[int]sumTerm{}
	perX := map[string]int{}
	for i, a := range n.aggs {
		if t, ok := matchSumTerm(a); ok {
			terms[i] = t
			perX[exprKey(t.x)]++
		}
	}
	for i, t := range terms {
		if perX[exprKey(t.x)] < 2 || n.aggs[i].typ != plan.DecimalType(38, 0) {
			delete(terms, i)
		}
	}
	if len(terms) == 0 {
		return n, nil
	}
	b := &binder{ctx: context.Background(), md: rc.md, pos: map[*plan.Expr]int32{}}
	out := &aggregateNode{input: n.input, groups: n.groups}
	for _, g := range n.groupCols {
		c := rc.md.col(g)
		out.groupCols = append(out.groupCols, rc.md.add(c))
	}
	// The aggregates kept, and one sum(x) and count(x) per x (reusing
	// one the query already computes).
	keyOf := map[string]int{} // aggregate key -> index in out.aggs
	addAgg := func(a aggExpr, col column) int {
		k := string(a.fn) + "|" + exprKey(a.arg)
		if a.distinct || a.dedupe || len(a.order) > 0 || a.fraction != 0 || a.sep != "" {
			k = "" // not shared
		}
		if i, ok := keyOf[k]; ok && k != "" {
			return i
		}
		out.aggs = append(out.aggs, a)
		out.aggCols = append(out.aggCols, rc.md.add(col))
		if k != "" {
			keyOf[k] = len(out.aggs) - 1
		}
		return len(out.aggs) - 1
	}
	kept := map[int]int{}
	for i, a := range n.aggs {
		if _, ok := terms[i]; !ok {
			kept[i] = addAgg(a, rc.md.col(n.aggCols[i]))
		}
	}
	proj := &projectNode{input: out}
	for i, g := range n.groupCols {
		proj.exprs = append(proj.exprs, rc.md.ref(out.groupCols[i]))
		proj.cols = append(proj.cols, g)
	}
	sumType := plan.DecimalType(38, 0)
	for i, a := range n.aggs {
		proj.cols = append(proj.cols, n.aggCols[i])
		if j, ok := kept[i]; ok {
			proj.exprs = append(proj.exprs, rc.md.ref(out.aggCols[j]))
			continue
		}
		t := terms[i]
		xs := exprString(t.x)
		s := addAgg(aggExpr{fn: plan.AggSum, arg: t.x, typ: sumType}, column{name: "sum(" + xs + ")", typ: sumType, nullable: true})
		sum := rc.md.ref(out.aggCols[s])
		k, err := b.cast(t.k, sumType, 0)
		if err != nil {
			return nil, err
		}
		var e *plan.Expr
		if t.op == plan.OpMul {
			e, err = b.arith(plan.OpMul, k, sum, 0)
		} else {
			c := addAgg(aggExpr{fn: plan.AggCount, arg: t.x, typ: plan.Int64Type}, column{name: "count(" + xs + ")", typ: plan.Int64Type})
			var cnt, kc *plan.Expr
			if cnt, err = b.cast(rc.md.ref(out.aggCols[c]), sumType, 0); err != nil {
				return nil, err
			}
			if kc, err = b.arith(plan.OpMul, k, cnt, 0); err != nil {
				return nil, err
			}
			if t.neg {
				e, err = b.arith(plan.OpSub, kc, sum, 0)
			} else {
				e, err = b.arith(t.op, sum, kc, 0)
			}
		}
		if err != nil {
			return nil, err
		}
		if e.Type != a.typ {
			if e, err = b.cast(e, a.typ, 0); err != nil {
				return nil, err
			}
		}
		proj.exprs = append(proj.exprs, e)
	}
	return proj, nil
}
