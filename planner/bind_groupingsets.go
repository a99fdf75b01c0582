package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// GROUPING SETS, ROLLUP and CUBE are one aggregation over an expandNode
// (the DuckDB/DataFusion plan): every input row is copied once per
// grouping set with the keys outside the set replaced by NULL and the
// set's number as an extra group key, so rows of different sets never
// meet in a group. GROUPING(k, ...) is a CASE over that number.

// expandNode emits each input row once per projection; every projection
// yields cols.
type expandNode struct {
	input node
	projs [][]*plan.Expr
	cols  []colID
}

func (n *expandNode) children() []node { return []node{n.input} }
func (n *expandNode) withChildren(ch []node) node {
	c := *n
	c.input = ch[0]
	return &c
}
func (n *expandNode) output() []colID { return n.cols }
func (n *expandNode) describe(m *metadata) string {
	sets := make([]string, len(n.projs))
	for i, p := range n.projs {
		sets[i] = "[" + joinExprs(p, ", ") + "]"
	}
	return "Expand: " + strings.Join(sets, ", ")
}

// hasGroupingSets reports whether a GROUP BY uses GROUPING SETS, ROLLUP
// or CUBE.
func hasGroupingSets(items []*pg.Node) bool {
	for _, g := range items {
		if g.GetGroupingSet() != nil {
			return true
		}
	}
	return false
}

// bindGroupingSets binds a GROUP BY with grouping sets into ag: every key
// once in ag.groups, the sets as lists of key indices in ag.sets (the
// cross product of the items, as SQL defines GROUP BY a, ROLLUP(b, c)).
func (b *binder) bindGroupingSets(items []*pg.Node, targets []*target, sc *scope, ag *aggBuilder) error {
	key := func(n *pg.Node) (int, error) {
		e, err := b.bindGroupItem(n, targets, sc)
		if err != nil {
			return 0, err
		}
		b.addGroup(ag, e)
		return ag.groupKeys[exprKey(e)], nil
	}
	// list binds an element of ROLLUP/CUBE: a key or a parenthesized list.
	list := func(n *pg.Node) ([]int, error) {
		var content []*pg.Node
		switch {
		case n.GetGroupingSet() != nil && n.GetGroupingSet().Kind == pg.GroupingSetKind_GROUPING_SET_SIMPLE:
			content = n.GetGroupingSet().Content
		case n.GetGroupingSet() != nil && n.GetGroupingSet().Kind == pg.GroupingSetKind_GROUPING_SET_EMPTY:
		case n.GetRowExpr() != nil:
			content = n.GetRowExpr().Args
		default:
			content = []*pg.Node{n}
		}
		var out []int
		for _, c := range content {
			k, err := key(c)
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
		return out, nil
	}
	var setsOf func(n *pg.Node) ([][]int, error)
	setsOf = func(n *pg.Node) ([][]int, error) {
		gs := n.GetGroupingSet()
		if gs == nil {
			l, err := list(n)
			return [][]int{l}, err
		}
		switch gs.Kind {
		case pg.GroupingSetKind_GROUPING_SET_EMPTY:
			return [][]int{{}}, nil
		case pg.GroupingSetKind_GROUPING_SET_SIMPLE:
			l, err := list(n)
			return [][]int{l}, err
		case pg.GroupingSetKind_GROUPING_SET_ROLLUP, pg.GroupingSetKind_GROUPING_SET_CUBE:
			var elems [][]int
			for _, c := range gs.Content {
				l, err := list(c)
				if err != nil {
					return nil, err
				}
				elems = append(elems, l)
			}
			var out [][]int
			if gs.Kind == pg.GroupingSetKind_GROUPING_SET_ROLLUP {
				for k := len(elems); k >= 0; k-- {
					var s []int
					for _, e := range elems[:k] {
						s = append(s, e...)
					}
					out = append(out, s)
				}
				return out, nil
			}
			if len(elems) > 12 {
				return nil, b.unsupported(gs.Location, "CUBE of more than 12 elements")
			}
			for mask := (1 << len(elems)) - 1; mask >= 0; mask-- {
				var s []int
				for i, e := range elems {
					if mask&(1<<(len(elems)-1-i)) != 0 {
						s = append(s, e...)
					}
				}
				out = append(out, s)
			}
			return out, nil
		case pg.GroupingSetKind_GROUPING_SET_SETS:
			var out [][]int
			for _, c := range gs.Content {
				s, err := setsOf(c)
				if err != nil {
					return nil, err
				}
				out = append(out, s...)
			}
			return out, nil
		}
		return nil, b.unsupported(gs.Location, "this grouping set")
	}
	sets := [][]int{{}}
	for _, item := range items {
		s, err := setsOf(item)
		if err != nil {
			return err
		}
		var next [][]int
		for _, a := range sets {
			for _, c := range s {
				next = append(next, append(append([]int(nil), a...), c...))
			}
		}
		sets = next
		if len(sets) > 4096 {
			return b.unsupported(-1, "more than 4096 grouping sets")
		}
	}
	ag.sets = sets
	ag.gid = b.md.add(column{name: "grouping_id", typ: plan.Int64Type})
	ag.extra[ag.gid] = true
	return nil
}

// expandGroupingSets puts the expandNode under the aggregation ag
// describes and rewrites ag's keys to its columns, the set number last.
// Sets in skip (the empty ones, which aggregateGroupingSets computes as
// scalar aggregates) get no projection; the others keep their numbers.
func (b *binder) expandGroupingSets(root node, ag *aggBuilder, skip map[int]bool) node {
	in := root.output()
	x := &expandNode{input: root, cols: append([]colID(nil), in...)}
	keyCols := make([]colID, len(ag.groups))
	for i, g := range ag.groups {
		keyCols[i] = b.md.add(column{name: exprName(g), typ: g.Type, nullable: true})
		b.md.cols[ag.groupCols[i]].nullable = true
	}
	gidIn := b.md.add(column{name: "grouping_id", typ: plan.Int64Type})
	x.cols = append(append(x.cols, keyCols...), gidIn)
	for s, set := range ag.sets {
		if skip[s] {
			continue
		}
		in := map[int]bool{}
		for _, k := range set {
			in[k] = true
		}
		var p []*plan.Expr
		for _, id := range root.output() {
			p = append(p, b.md.ref(id))
		}
		for i, g := range ag.groups {
			if in[i] {
				p = append(p, g)
			} else {
				p = append(p, nullOf(g.Type))
			}
		}
		p = append(p, intLit(int64(s)))
		x.projs = append(x.projs, p)
	}
	for i := range ag.groups {
		ag.groups[i] = b.md.ref(keyCols[i])
	}
	ag.groups = append(ag.groups, b.md.ref(gidIn))
	ag.groupCols = append(ag.groupCols, ag.gid)
	return x
}

// aggregateGroupingSets builds the aggregation of a GROUP BY with
// grouping sets over root. An empty grouping set (the grand total of
// ROLLUP and CUBE, or GROUPING SETS (())) yields one row even over no
// input rows, as a GROUP BY without keys does (count 0, sum NULL), but
// the expand-and-group plan has no row to group there. So each empty set
// gets a fallback row, UNION ALLed with the grouped result and kept only
// when the input is empty:
//
//	fallback = (aggregates without keys over an empty VALUES: each one's
//	            value on empty input, as the executor computes it)
//	           CROSS JOIN (count(*) of the input LIMIT 1) WHERE count = 0
//
// The probe reads at most one row of the input (the LIMIT stops its
// scan early), so the grouped aggregation still reads the input once.
// When the input has rows the grouped result has the grand-total group
// already, and the fallback is empty.
func (b *binder) aggregateGroupingSets(root node, ag *aggBuilder) (node, error) {
	var empties []int
	for s, set := range ag.sets {
		if len(set) == 0 {
			empties = append(empties, s)
		}
	}
	groupTypes := make([]plan.DataType, len(ag.groups))
	for i, g := range ag.groups {
		groupTypes[i] = g.Type
	}
	input := root
	x := b.expandGroupingSets(input, ag, nil)
	if len(empties) == 0 {
		return b.buildAggregate(x, ag)
	}
	// fresh returns new columns like cols (each branch has its own).
	fresh := func(cols []colID) []colID {
		out := make([]colID, len(cols))
		for i, id := range cols {
			out[i] = b.md.add(b.md.col(id))
		}
		return out
	}
	// Expressions above the aggregation refer to ag's columns: they are
	// the union's, and each branch has columns of its own.
	out := append(append([]colID(nil), ag.groupCols...), ag.aggCols...)
	gb := *ag
	gb.groupCols, gb.aggCols = fresh(ag.groupCols), fresh(ag.aggCols)
	grouped, err := b.buildAggregate(x, &gb)
	if err != nil {
		return nil, err
	}
	u := &unionNode{inputs: []node{grouped}, inCols: [][]colID{append(append([]colID(nil), gb.groupCols...), gb.aggCols...)}, cols: out}
	for _, s := range empties {
		// The aggregates over no rows: an empty VALUES with the input's
		// columns.
		none := &valuesNode{cols: input.output()}
		eb := &aggBuilder{aggs: append([]aggExpr(nil), ag.aggs...), aggCols: fresh(ag.aggCols), extra: ag.extra, outer: ag.outer}
		empty, err := b.buildAggregate(none, eb)
		if err != nil {
			return nil, err
		}
		// Whether the input is empty.
		cnt := b.md.add(column{name: "count_star()", typ: plan.Int64Type})
		probe := &aggregateNode{input: &limitNode{input: input, limit: 1},
			aggs: []aggExpr{{fn: plan.AggCountStar, typ: plan.Int64Type}}, aggCols: []colID{cnt}}
		isEmpty := &filterNode{input: probe, conds: []*plan.Expr{plan.Call(plan.OpEq, plan.BoolType, b.md.ref(cnt), intLit(0))}}
		j := &joinNode{typ: plan.JoinInner, left: empty, right: isEmpty}
		p := &projectNode{input: j}
		for _, t := range groupTypes {
			p.exprs = append(p.exprs, nullOf(t))
		}
		p.exprs = append(p.exprs, intLit(int64(s)))
		for _, id := range eb.aggCols {
			p.exprs = append(p.exprs, b.md.ref(id))
		}
		p.cols = fresh(out)
		u.inputs = append(u.inputs, p)
		u.inCols = append(u.inCols, p.cols)
	}
	for _, id := range out {
		b.md.cols[id].nullable = true
	}
	return u, nil
}

// bindGroupingFunc binds GROUPING(k1, ..., kn): bit n-i is 1 when key ki
// is not in the row's grouping set.
func (b *binder) bindGroupingFunc(gf *pg.GroupingFunc, c *exprCtx) (*plan.Expr, error) {
	ag := c.aggs
	if ag == nil || c.inAgg {
		return nil, b.errorf(CodeGrouping, gf.Location, "GROUPING is not allowed in %s", c.clause)
	}
	if len(gf.Args) == 0 || len(gf.Args) > 62 {
		return nil, b.errorf(CodeType, gf.Location, "type mismatch: GROUPING takes 1 to 62 arguments")
	}
	var idx []int
	for _, a := range gf.Args {
		e, err := b.bindExpr(a, c.with(func(x *exprCtx) { x.aggs, x.windows = nil, nil }))
		if err != nil {
			return nil, err
		}
		i, ok := ag.groupKeys[exprKey(e)]
		if !ok {
			return nil, b.errorf(CodeGrouping, exprLoc(a), "arguments to GROUPING must be grouping expressions of the associated query level (%s)", exprString(e))
		}
		idx = append(idx, i)
	}
	value := func(set []int) int64 {
		in := map[int]bool{}
		for _, k := range set {
			in[k] = true
		}
		var v int64
		for _, i := range idx {
			v <<= 1
			if !in[i] {
				v |= 1
			}
		}
		return v
	}
	if ag.sets == nil {
		return intLit(0), nil
	}
	gid := b.md.ref(ag.gid)
	var conds, vals []*plan.Expr
	for s, set := range ag.sets {
		if v := value(set); v != 0 {
			conds = append(conds, plan.Call(plan.OpEq, plan.BoolType, gid, intLit(int64(s))))
			vals = append(vals, intLit(v))
		}
	}
	if len(conds) == 0 {
		return intLit(0), nil
	}
	e := &plan.Expr{Op: plan.OpCase, Type: plan.Int64Type}
	for i := range conds {
		e.Args = append(e.Args, conds[i], vals[i])
	}
	e.Args = append(e.Args, intLit(0))
	return e, nil
}

// lowerExpand lowers an expandNode in place: it is row by row, and the
// columns it passes on keep their partitioning.
func (l *lowerer) lowerExpand(n *expandNode) (*fragment, error) {
	f, err := l.lower(n.input)
	if err != nil {
		return nil, err
	}
	var projs [][]*plan.Expr
	for _, p := range n.projs {
		var pp []*plan.Expr
		for _, e := range p {
			x, err := l.phys(e, f.cols)
			if err != nil {
				return nil, err
			}
			pp = append(pp, x)
		}
		projs = append(projs, pp)
	}
	f.root = &plan.Node{Kind: plan.KindExpand, Schema: l.schema(n.cols), Inputs: []*plan.Node{f.root}, Expand: projs}
	f.cols = n.cols
	return f, nil
}

// pruneExpand keeps the columns read above (the set number and the keys
// always: the aggregation above groups by them).
func (r pruneColumns) pruneExpand(n *expandNode, need map[colID]bool, md *metadata) node {
	c := *n
	c.cols = nil
	c.projs = make([][]*plan.Expr, len(n.projs))
	child := map[colID]bool{}
	for i, id := range n.cols {
		if !need[id] {
			continue
		}
		c.cols = append(c.cols, id)
		for s, p := range n.projs {
			c.projs[s] = append(c.projs[s], p[i])
			exprCols(p[i], child)
		}
	}
	if len(c.cols) == 0 { // keep the row count
		c.cols = n.cols[len(n.cols)-1:]
		for s, p := range n.projs {
			c.projs[s] = p[len(p)-1:]
		}
	}
	c.input = r.prune(n.input, child, md)
	return &c
}
