package planner

import (
	"fmt"

	"github.com/sluicedb/sluice/planner/plan"
)

// expandDistinctAggregates plans DISTINCT aggregates over different
// arguments, or next to plain aggregates (sum(DISTINCT x), avg(y),
// count(DISTINCT z) in one query), as Spark's RewriteDistinctAggregates
// does, in two aggregations over one expansion of the input:
//
//   - every input row is copied once per distinct argument x_j (copy j
//     carries x_j, the other arguments NULL) and once for the plain
//     aggregates (copy 0 carries their arguments);
//   - the first aggregation groups by the keys, the copy number and the
//     x_j, so each distinct value of x_j is one group, and computes the
//     plain aggregates in the copy-0 group;
//   - the second groups by the keys: a distinct aggregate is the plain
//     aggregate over its x_j (each value once; NULL in the other copies,
//     which aggregates ignore), a plain one takes its copy-0 value.
//
// A count over no rows is 0, not NULL: counts are coalesced to 0 above.
// The input is read once and every stage stays partitioned by the keys.
func (b *binder) expandDistinctAggregates(root node, ag *aggBuilder) node {
	nkeys := len(ag.groups)
	// The distinct arguments, each once, in first-use order.
	var dargs []*plan.Expr
	dindex := map[string]int{}
	for _, a := range ag.aggs {
		if a.distinct {
			if _, ok := dindex[exprKey(a.arg)]; !ok {
				dindex[exprKey(a.arg)] = len(dargs) + 1 // copy numbers 1..k
				dargs = append(dargs, a.arg)
			}
		}
	}
	// The plain aggregates' arguments (count(*) counts a 1 of copy 0),
	// then their ORDER BY keys (string_agg(x ORDER BY y)).
	one := intLit(1)
	var pargs, okeys []*plan.Expr
	for _, a := range ag.aggs {
		if a.distinct {
			continue
		}
		if a.arg == nil {
			pargs = append(pargs, one)
		} else {
			pargs = append(pargs, a.arg)
		}
		pargs = append(pargs, a.more...) // arg_min's key: NULL in the other copies
		for _, o := range a.order {
			okeys = append(okeys, o.expr)
		}
	}
	nargs := len(pargs)
	pargs = append(pargs, okeys...)
	x := &expandNode{input: root}
	keyCols := make([]colID, nkeys)
	for i, g := range ag.groups {
		keyCols[i] = b.md.add(column{name: exprName(g), typ: g.Type, nullable: b.nullable(g)})
	}
	gid := b.md.add(column{name: "distinct_id", typ: plan.Int64Type})
	dCols := make([]colID, len(dargs))
	for j, d := range dargs {
		dCols[j] = b.md.add(column{name: exprName(d), typ: d.Type, nullable: true})
	}
	pCols := make([]colID, len(pargs))
	for i, p := range pargs {
		pCols[i] = b.md.add(column{name: fmt.Sprintf("arg%d", i), typ: p.Type, nullable: true})
	}
	x.cols = append(append(append(append([]colID(nil), keyCols...), gid), dCols...), pCols...)
	for c := 0; c <= len(dargs); c++ {
		p := append([]*plan.Expr(nil), ag.groups...)
		p = append(p, intLit(int64(c)))
		for j, d := range dargs {
			if c == j+1 {
				p = append(p, d)
			} else {
				p = append(p, nullOf(d.Type))
			}
		}
		for _, a := range pargs {
			if c == 0 {
				p = append(p, a)
			} else {
				p = append(p, nullOf(a.Type))
			}
		}
		x.projs = append(x.projs, p)
	}
	// First aggregation: by keys, copy number and distinct arguments.
	first := &aggregateNode{input: x}
	for _, id := range append(append(append([]colID(nil), keyCols...), gid), dCols...) {
		first.groups = append(first.groups, b.md.ref(id))
		first.groupCols = append(first.groupCols, b.md.add(b.md.col(id)))
	}
	k, ko := 0, 0
	plainCol := map[int]colID{} // index in ag.aggs -> first-level result
	for i, a := range ag.aggs {
		if a.distinct {
			continue
		}
		fa := a
		fa.arg = b.md.ref(pCols[k])
		if a.fn == plan.AggCountStar {
			fa.fn = plan.AggCount
		}
		k++
		fa.more = nil
		for range a.more {
			fa.more = append(fa.more, b.md.ref(pCols[k]))
			k++
		}
		if len(a.order) > 0 {
			fa.order = append([]sortKey(nil), a.order...)
			for o := range fa.order {
				fa.order[o].expr = b.md.ref(pCols[nargs+ko])
				ko++
			}
		}
		col := b.md.add(column{name: b.md.col(ag.aggCols[i]).name, typ: a.typ, nullable: true})
		first.aggs = append(first.aggs, fa)
		first.aggCols = append(first.aggCols, col)
		plainCol[i] = col
	}
	// Second aggregation: by keys.
	second := &aggregateNode{input: first}
	for i := 0; i < nkeys; i++ {
		second.groups = append(second.groups, b.md.ref(first.groupCols[i]))
		second.groupCols = append(second.groupCols, b.md.add(b.md.col(ag.groupCols[i])))
	}
	firstGid := first.groupCols[nkeys]
	for i, a := range ag.aggs {
		var sa aggExpr
		if a.distinct {
			sa = a
			sa.distinct = false
			sa.arg = b.md.ref(first.groupCols[nkeys+dindex[exprKey(a.arg)]])
		} else {
			// The copy-0 group's value (NULL in the other copies' groups).
			v := plan.Call(plan.OpCase, a.typ,
				plan.Call(plan.OpEq, plan.BoolType, b.md.ref(firstGid), intLit(0)), b.md.ref(plainCol[i]), nullOf(a.typ))
			sa = aggExpr{fn: plan.AggMin, arg: v, typ: a.typ}
		}
		second.aggs = append(second.aggs, sa)
		second.aggCols = append(second.aggCols, b.md.add(b.md.col(ag.aggCols[i])))
	}
	// Project to ag's columns, counts over no rows as 0.
	proj := &projectNode{input: second}
	for i := range ag.groupCols {
		proj.exprs = append(proj.exprs, b.md.ref(second.groupCols[i]))
	}
	for i, a := range ag.aggs {
		e := b.md.ref(second.aggCols[i])
		if !a.distinct && isCount(a.fn) {
			e = plan.Call(plan.OpCase, a.typ, plan.Call(plan.OpIsNull, plan.BoolType, e), intLit(0), e)
		}
		proj.exprs = append(proj.exprs, e)
	}
	proj.cols = append(append([]colID(nil), ag.groupCols...), ag.aggCols...)
	return proj
}

// isCount reports whether an aggregate is 0, not NULL, over no rows.
func isCount(fn plan.AggFunc) bool { return aggInfo(fn).ZeroOnEmpty }

// expandOrderedAggregates plans ordered aggregates with different ORDER BYs
// in one aggregation (string_agg(a, ',' ORDER BY x), string_agg(b, ','
// ORDER BY y)): the aggregation takes each group's values in the order its
// rows arrive, and a task sorts its rows one way. Every input row is
// copied once per distinct ORDER BY (copy j carries the arguments of the
// aggregates ordered that way and its own sort keys, NULL in the other
// copies; copy 1 also carries the unordered aggregates' arguments), and
// the rows are sorted by the copy number, then each copy's keys: the rows
// of copy j reach the aggregation in copy j's order, and every aggregate
// sees only its own copy (aggregates skip NULL arguments).
func (b *binder) expandOrderedAggregates(root node, ag *aggBuilder, orders []string) node {
	group := map[string]int{} // sortKeysKey -> copy number 1..m
	for i, k := range orders {
		group[k] = i + 1
	}
	copyOf := func(a aggExpr) int {
		if len(a.order) == 0 {
			return 1
		}
		return group[sortKeysKey(a.order)]
	}
	x := &expandNode{input: root}
	keyCols := make([]colID, len(ag.groups))
	for i, g := range ag.groups {
		keyCols[i] = b.md.add(column{name: exprName(g), typ: g.Type, nullable: b.nullable(g)})
	}
	gid := b.md.add(column{name: "order_id", typ: plan.Int64Type})
	args := make([]*plan.Expr, len(ag.aggs))
	argCols := make([]colID, len(ag.aggs))
	moreCols := make([][]colID, len(ag.aggs)) // arg_min's key
	for i, a := range ag.aggs {
		args[i] = a.arg
		if args[i] == nil {
			args[i] = intLit(1) // count(*) counts the 1s of its copy
		}
		if a.fn == plan.AggList {
			// list keeps NULLs: its values travel as one-element lists,
			// NULL only in the other copies (AggListWrapped).
			args[i] = plan.CallFunc("list_value", plan.ListOf(args[i].Type), args[i])
		}
		argCols[i] = b.md.add(column{name: fmt.Sprintf("arg%d", i), typ: args[i].Type, nullable: true})
		for j, m := range a.more {
			moreCols[i] = append(moreCols[i], b.md.add(column{name: fmt.Sprintf("arg%d_%d", i, j+1), typ: m.Type, nullable: true}))
		}
	}
	var allMore []colID
	for _, ms := range moreCols {
		allMore = append(allMore, ms...)
	}
	// Each order's keys, in copy order.
	var okeys []sortKey
	var ocopy []int
	seen := map[int]bool{}
	for _, a := range ag.aggs {
		c := copyOf(a)
		if len(a.order) == 0 || seen[c] {
			continue
		}
		seen[c] = true
		for _, k := range a.order {
			okeys = append(okeys, k)
			ocopy = append(ocopy, c)
		}
	}
	okeyCols := make([]colID, len(okeys))
	for i, k := range okeys {
		okeyCols[i] = b.md.add(column{name: exprName(k.expr), typ: k.expr.Type, nullable: true})
	}
	x.cols = append(append(append(append(append([]colID(nil), keyCols...), gid), argCols...), okeyCols...), allMore...)
	for c := 1; c <= len(orders); c++ {
		p := append([]*plan.Expr(nil), ag.groups...)
		p = append(p, intLit(int64(c)))
		for i, a := range ag.aggs {
			if copyOf(a) == c {
				p = append(p, args[i])
			} else {
				p = append(p, nullOf(args[i].Type))
			}
		}
		for i, k := range okeys {
			if ocopy[i] == c {
				p = append(p, k.expr)
			} else {
				p = append(p, nullOf(k.expr.Type))
			}
		}
		for _, a := range ag.aggs {
			for _, m := range a.more {
				if copyOf(a) == c {
					p = append(p, m)
				} else {
					p = append(p, nullOf(m.Type))
				}
			}
		}
		x.projs = append(x.projs, p)
	}
	// One sort for all: the copy number, then each copy's keys.
	combined := []sortKey{{expr: b.md.ref(gid)}}
	for i, k := range okeys {
		combined = append(combined, sortKey{expr: b.md.ref(okeyCols[i]), desc: k.desc, nullsFirst: k.nullsFirst})
	}
	n := &aggregateNode{input: x, groupCols: ag.groupCols, aggCols: ag.aggCols}
	for _, id := range keyCols {
		n.groups = append(n.groups, b.md.ref(id))
	}
	for i, a := range ag.aggs {
		na := a
		na.arg = b.md.ref(argCols[i])
		na.more = nil
		for _, id := range moreCols[i] {
			na.more = append(na.more, b.md.ref(id))
		}
		if a.fn == plan.AggCountStar {
			na.fn = plan.AggCount
		}
		if a.fn == plan.AggList {
			na.fn = plan.AggListWrapped
		}
		if len(a.order) > 0 {
			na.order = combined
		}
		n.aggs = append(n.aggs, na)
	}
	return n
}
