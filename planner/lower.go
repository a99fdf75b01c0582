package planner

import (
	"fmt"
	"math"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// Lowering turns the logical plan into plan.Nodes cut into stages at
// exchanges. It walks the tree bottom-up keeping an open fragment: the
// operators of the stage being built, the colIDs of its output in order,
// and whether its rows all sit in one task ("single"). An operator that
// needs its rows together (final aggregation, sort, limit, the result)
// closes the open stage with an output partitioning and opens a new one
// that reads it through an Exchange. A join either broadcasts its build
// side into the probe side's open stage, or hashes both sides on the join
// keys into a new stage (lower_join.go). A stage never holds two scans:
// the build side of a join is always closed into a stage of its own.

type lowerer struct {
	md     *metadata
	opts   Options
	rc     *ruleCtx
	est    *estimator
	stages []*plan.Stage
}

// fragment is the open stage.
type fragment struct {
	root   *plan.Node
	cols   []colID
	single bool
	inputs []int
	// parts are the ways the rows are known to be hash-partitioned (over
	// Options.Partitions partitions, by the engine's hash of the values):
	// for each list of columns, rows with equal values of them are in the
	// same task. Aggregations and joins on such keys need no shuffle.
	parts [][]colID
}

func (l *lowerer) schema(cols []colID) plan.Schema {
	s := make(plan.Schema, len(cols))
	for i, id := range cols {
		c := l.md.col(id)
		name := c.name
		if c.display != "" {
			name = c.display // n1.n_name, as expressions show it
		}
		s[i] = plan.Field{Name: name, Type: c.typ, Nullable: c.nullable}
	}
	return s
}

// phys translates a logical expression (columns by colID) to a physical
// one over the given input columns (columns by position).
func (l *lowerer) phys(e *plan.Expr, cols []colID) (*plan.Expr, error) {
	if e == nil {
		return nil, nil
	}
	pos := make(map[colID]int, len(cols))
	for i, id := range cols {
		if _, dup := pos[id]; !dup {
			pos[id] = i
		}
	}
	var err error
	out := substTopDown(e, func(x *plan.Expr) *plan.Expr {
		if x.Op != plan.OpColumn {
			return nil
		}
		i, ok := pos[x.Col]
		if !ok {
			err = fmt.Errorf("planner: internal error: column %s (#%d) is not in the input", x.Name, x.Col)
			return x
		}
		return plan.Column(i, x.Name, x.Type)
	})
	return out, err
}

// closeStage ends the open fragment as a stage with the given output and
// returns its id.
func (l *lowerer) closeStage(f *fragment, out plan.Partitioning) int {
	id := len(l.stages)
	l.stages = append(l.stages, &plan.Stage{ID: id, Root: f.root, Output: out, Inputs: f.inputs})
	return id
}

// exchange opens a fragment reading stage id.
func (l *lowerer) exchange(id int, schema plan.Schema, cols []colID, single bool) *fragment {
	f := &fragment{
		root:   &plan.Node{Kind: plan.KindExchange, Schema: schema, Stage: id},
		cols:   cols,
		single: single,
		inputs: []int{id},
	}
	if out := l.stages[id].Output; out.Kind == plan.PartitionHash && cols != nil {
		var p []colID
		for _, k := range out.Keys {
			p = append(p, cols[k])
		}
		f.parts = [][]colID{p}
	}
	return f
}

// partitionedOn returns the positions in keys of the columns of one of
// f's partitionings, in its order: f's rows are partitioned by
// keys[idx[0]], keys[idx[1]], ... when those are plain columns.
func partitionedOn(f *fragment, keys []*plan.Expr) (idx []int, ok bool) {
	if f.single {
		return nil, false
	}
	for _, p := range f.parts {
		idx = idx[:0]
		for _, id := range p {
			at := -1
			for j, k := range keys {
				if k.Op == plan.OpColumn && k.Col == id {
					at = j
					break
				}
			}
			if at < 0 {
				break
			}
			idx = append(idx, at)
		}
		if len(p) > 0 && len(idx) == len(p) {
			return append([]int(nil), idx...), true
		}
	}
	return nil, false
}

var single = plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}

// gather makes f single: it closes f's stage with a single output and
// reads it back. A fragment that is already single is returned as is.
func (l *lowerer) gather(f *fragment) *fragment {
	if f.single {
		return f
	}
	id := l.closeStage(f, single)
	return l.exchange(id, f.root.Schema, f.cols, true)
}

// lowerPlan lowers a whole logical plan into a stage graph.
func (l *lowerer) lowerPlan(root node) (*plan.Graph, error) {
	f, err := l.lower(root)
	if err != nil {
		return nil, err
	}
	f = l.gather(f)
	res := l.closeStage(f, single)
	g := &plan.Graph{Stages: l.stages, Result: res}
	for _, id := range root.output() {
		g.Columns = append(g.Columns, l.md.col(id).name)
	}
	return g, nil
}

func (l *lowerer) lower(n node) (*fragment, error) {
	switch n := n.(type) {
	case *scanNode:
		return l.lowerScan(n)
	case *filterNode:
		f, err := l.lower(n.input)
		if err != nil {
			return nil, err
		}
		return l.filter(f, n.conds)
	case *projectNode:
		f, err := l.lowerInput(n.input)
		if err != nil {
			return nil, err
		}
		return l.project(f, n.exprs, n.cols)
	case *aggregateNode:
		f, err := l.lowerInput(n.input)
		if err != nil {
			return nil, err
		}
		return l.aggregate(f, n)
	case *sortNode:
		f, err := l.lower(n.input)
		if err != nil {
			return nil, err
		}
		f = l.gather(f)
		return l.sort(f, n.keys, -1)
	case *limitNode:
		return l.lowerLimit(n)
	case *joinNode:
		return l.lowerJoin(n)
	case *unionNode:
		return l.lowerUnion(n)
	case *valuesNode:
		return l.lowerValues(n)
	case *windowNode:
		return l.lowerWindow(n)
	case *unnestNode:
		return l.lowerUnnest(n)
	case *expandNode:
		return l.lowerExpand(n)
	case *singleRowNode:
		return l.lowerSingleRow(n)
	}
	return nil, fmt.Errorf("planner: internal error: cannot lower %T", n)
}

// lowerInput lowers the input of an operator that reads only the columns
// it names (a projection, an aggregation): a scan's filter-only columns
// need no Project of their own there.
func (l *lowerer) lowerInput(n node) (*fragment, error) {
	if s, ok := n.(*scanNode); ok {
		return l.lowerScanAll(s)
	}
	return l.lower(n)
}

// lowerScan lowers a scan and its filters, and drops the columns only the
// filters read (n.out) right after them.
func (l *lowerer) lowerScan(n *scanNode) (*fragment, error) {
	f, err := l.lowerScanAll(n)
	if err != nil || n.out == nil {
		return f, err
	}
	refs := make([]*plan.Expr, len(n.out))
	for i, id := range n.out {
		refs[i] = l.md.ref(id)
	}
	return l.project(f, refs, n.out)
}

// lowerScanAll lowers a scan and its filters, passing on every column read.
func (l *lowerer) lowerScanAll(n *scanNode) (*fragment, error) {
	names := make([]string, len(n.cols))
	var paths [][]string
	var fields [][][]string
	for i, ord := range n.ords {
		names[i] = n.table.Columns[ord].Name
		if f := n.fields[n.cols[i]]; f != nil {
			if fields == nil {
				fields = make([][][]string, len(n.cols))
			}
			fields[i] = f
		}
		if p := l.md.col(n.cols[i]).path; p != nil {
			if paths == nil {
				paths = make([][]string, len(n.cols))
			}
			paths[i] = p
		}
	}
	f := &fragment{cols: n.cols}
	var prune []*plan.Expr
	for _, c := range n.filters {
		if prunable(c) {
			prune = append(prune, c)
		}
	}
	pf, err := l.phys(conjoin(prune), n.cols)
	if err != nil {
		return nil, err
	}
	f.root = &plan.Node{
		Kind:   plan.KindScan,
		Schema: l.schema(n.cols),
		Scan:   &plan.Scan{Table: n.table.Name, Format: n.table.Format, Columns: names, Paths: paths, Fields: fields, Filter: pf},
	}
	return l.filter(f, n.filters)
}

// prunable reports whether a predicate can prune row groups from min/max
// and null-count statistics: a comparison of a plain column (or a struct
// field of one) with a constant, an IN list of constants, or a NULL test
// of a column.
func prunable(e *plan.Expr) bool {
	col := func(x *plan.Expr) bool {
		if x.Op == plan.OpColumn {
			return true
		}
		// A struct field of a column: a Parquet scan prunes from its
		// leaf's statistics.
		_, _, ok := fieldChain(x)
		return ok && !x.Type.IsNested()
	}
	switch e.Op {
	case plan.OpEq, plan.OpNe, plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe:
		a, b := e.Args[0], e.Args[1]
		return col(a) && isLit(b) || isLit(a) && col(b)
	case plan.OpIn:
		return col(e.Args[0])
	case plan.OpIsNull, plan.OpIsNotNull:
		return col(e.Args[0])
	}
	return false
}

// conjoin ANDs predicates together (nil for none).
func conjoin(es []*plan.Expr) *plan.Expr {
	var out *plan.Expr
	for _, e := range es {
		if out == nil {
			out = e
		} else {
			out = plan.Call(plan.OpAnd, plan.BoolType, out, e)
		}
	}
	return out
}

func (l *lowerer) filter(f *fragment, conds []*plan.Expr) (*fragment, error) {
	if len(conds) == 0 {
		return f, nil
	}
	p, err := l.phys(conjoin(conds), f.cols)
	if err != nil {
		return nil, err
	}
	f.root = &plan.Node{Kind: plan.KindFilter, Schema: f.root.Schema, Inputs: []*plan.Node{f.root}, Predicate: p}
	return f, nil
}

// project appends a projection, unless it would pass its input unchanged.
func (l *lowerer) project(f *fragment, exprs []*plan.Expr, cols []colID) (*fragment, error) {
	identity := len(exprs) == len(f.cols)
	for i := 0; identity && i < len(exprs); i++ {
		out, in := l.md.col(cols[i]), l.md.col(f.cols[i])
		identity = exprs[i].Op == plan.OpColumn && exprs[i].Col == f.cols[i] && out.name == in.name && out.typ == in.typ
	}
	// Partitionings survive through columns passed on as they are.
	var parts [][]colID
	for _, p := range f.parts {
		var q []colID
		for _, id := range p {
			for i, e := range exprs {
				if e.Op == plan.OpColumn && e.Col == id {
					q = append(q, cols[i])
					break
				}
			}
		}
		if len(q) == len(p) {
			parts = append(parts, q)
		}
	}
	f.parts = parts
	if identity { // same columns, names and types: only the ids change
		f.cols = cols
		return f, nil
	}
	pe := make([]*plan.Expr, len(exprs))
	allCols := true
	for i, e := range exprs {
		var err error
		if pe[i], err = l.phys(e, f.cols); err != nil {
			return nil, err
		}
		allCols = allCols && pe[i].Op == plan.OpColumn
	}
	if allCols && f.root.Kind == plan.KindProject {
		// A selection of a projection's columns: one projection.
		below := f.root.Exprs
		for i, e := range pe {
			pe[i] = below[e.Col]
		}
		f.root = f.root.Inputs[0]
	}
	f.root = &plan.Node{Kind: plan.KindProject, Schema: l.schema(cols), Inputs: []*plan.Node{f.root}, Exprs: pe}
	f.cols = cols
	return f, nil
}

// aggregate lowers an aggregation. On a single fragment, or one whose rows
// are already hash-partitioned on some of the group keys (each group whole
// in one task), it is one AggSingle in place. Otherwise it is two-phase:
// the open stage projects the group keys and aggregate arguments,
// aggregates partially and hashes its output on the group keys (single
// partition without keys); the next stage reads that and aggregates
// finally. count(DISTINCT) has no partial form: its rows are hashed on the
// group keys and aggregated in one step after the shuffle.
func (l *lowerer) aggregate(f *fragment, n *aggregateNode) (*fragment, error) {
	outCols := n.output()
	if f.single {
		return l.aggSingle(f, n)
	}
	n = unorderedLists(n)
	if idx, ok := partitionedOn(f, n.groups); ok {
		// Every group is whole in one task already.
		nf, err := l.aggSingle(f, n)
		if err != nil {
			return nil, err
		}
		var p []colID
		for _, i := range idx {
			p = append(p, n.groupCols[i])
		}
		nf.parts = [][]colID{p}
		return nf, nil
	}
	distinct := false
	for _, a := range n.aggs {
		distinct = distinct || a.fn == plan.AggCountDistinct || aggInfo(a.fn).Holistic
	}

	// Project the inputs of the partial aggregation: group keys first, then
	// each distinct aggregate argument.
	var inputs []*plan.Expr
	var inputCols []colID
	index := map[string]int{}
	add := func(e *plan.Expr, c column) int {
		k := exprKey(e)
		if i, ok := index[k]; ok {
			return i
		}
		index[k] = len(inputs)
		inputs = append(inputs, e)
		inputCols = append(inputCols, l.md.add(c))
		return len(inputs) - 1
	}
	groupAt := make([]int, len(n.groups))
	for i, g := range n.groups {
		groupAt[i] = add(g, l.md.col(n.groupCols[i]))
	}
	argAt := make([]int, len(n.aggs))
	moreAt := make([][]int, len(n.aggs))
	orderAt := make([][]int, len(n.aggs))
	for i, a := range n.aggs {
		argAt[i] = -1
		if a.arg != nil {
			argAt[i] = add(a.arg, column{name: exprName(a.arg), typ: a.arg.Type, nullable: true})
		}
		for _, m := range a.more {
			moreAt[i] = append(moreAt[i], add(m, column{name: exprName(m), typ: m.Type, nullable: true}))
		}
		for _, o := range a.order {
			orderAt[i] = append(orderAt[i], add(o.expr, column{name: exprName(o.expr), typ: o.expr.Type, nullable: true}))
		}
	}
	// A group key may repeat another's expression only if GROUP BY listed
	// it twice, which the binder already removed; so keys sit at 0..k-1.
	var err error
	if len(inputs) > 0 {
		if f, err = l.project(f, inputs, inputCols); err != nil {
			return nil, err
		}
	}
	if distinct {
		// count(DISTINCT) has no partial state: shuffle the rows on the
		// group keys and aggregate each group in one place.
		out := single
		if k := len(n.groups); k > 0 {
			out = plan.Partitioning{Kind: plan.PartitionHash, Count: l.opts.Partitions}
			for i := 0; i < k; i++ {
				out.Keys = append(out.Keys, i)
			}
		}
		id := l.closeStage(f, out)
		nf := l.exchange(id, f.root.Schema, f.cols, out.Kind == plan.PartitionSingle)
		nf.single = true // each group is whole in one task
		m := *n
		m.groups, m.aggs = nil, nil
		for i := range n.groups {
			m.groups = append(m.groups, l.md.ref(inputCols[groupAt[i]]))
		}
		for i, a := range n.aggs {
			if argAt[i] >= 0 {
				a.arg = l.md.ref(inputCols[argAt[i]])
			}
			a.more = nil
			for _, at := range moreAt[i] {
				a.more = append(a.more, l.md.ref(inputCols[at]))
			}
			a.order = append([]sortKey(nil), a.order...)
			for j, at := range orderAt[i] {
				a.order[j].expr = l.md.ref(inputCols[at])
			}
			m.aggs = append(m.aggs, a)
		}
		res, err := l.aggSingle(nf, &m)
		if err != nil {
			return nil, err
		}
		res.single = out.Kind == plan.PartitionSingle
		if !res.single {
			res.parts = [][]colID{append([]colID(nil), n.groupCols...)}
		}
		return res, nil
	}

	partial := &plan.Aggregate{Mode: plan.AggPartial}
	var pschema plan.Schema
	for i := range n.groups {
		partial.GroupBy = append(partial.GroupBy, l.colRef(f, groupAt[i]))
		pschema = append(pschema, f.root.Schema[groupAt[i]])
	}
	var calls []plan.AggCall
	for i, a := range n.aggs {
		call := plan.AggCall{Func: a.fn, Type: a.typ, Name: l.md.col(n.aggCols[i]).name}
		if argAt[i] >= 0 {
			call.Arg = l.colRef(f, argAt[i])
		}
		for _, at := range moreAt[i] {
			call.More = append(call.More, l.colRef(f, at))
		}
		calls = append(calls, call)
		for j, t := range exec.AggStateTypes(call) {
			pschema = append(pschema, plan.Field{Name: exec.StateName(call, j), Type: t, Nullable: j == 0 && a.fn != plan.AggCount && a.fn != plan.AggCountStar})
		}
	}
	partial.Aggs = calls
	f.root = &plan.Node{Kind: plan.KindAggregate, Schema: pschema, Inputs: []*plan.Node{f.root}, Aggregate: partial}

	out := single
	if k := len(n.groups); k > 0 {
		out = plan.Partitioning{Kind: plan.PartitionHash, Count: l.opts.Partitions}
		for i := 0; i < k; i++ {
			out.Keys = append(out.Keys, i)
		}
	}
	id := l.closeStage(f, out)

	nf := l.exchange(id, pschema, nil, out.Kind == plan.PartitionSingle)
	// The final phase keeps each call's Arg (a reference into the partial
	// phase's input) only so that its state types (exec.AggStateTypes) can be computed.
	final := &plan.Aggregate{Mode: plan.AggFinal, Aggs: append([]plan.AggCall(nil), calls...)}
	for i := range n.groups {
		final.GroupBy = append(final.GroupBy, plan.Column(i, pschema[i].Name, pschema[i].Type))
	}
	nf.root = &plan.Node{Kind: plan.KindAggregate, Schema: l.schema(outCols), Inputs: []*plan.Node{nf.root}, Aggregate: final}
	nf.cols = outCols
	if len(n.groups) > 0 {
		nf.parts = [][]colID{append([]colID(nil), n.groupCols...)}
	}
	return nf, nil
}

// aggSingle aggregates in one step: f holds every row of each group. An
// ordered aggregate (string_agg(... ORDER BY ...)) has the task's rows
// sorted first: the aggregation takes each group's values in the order
// its rows arrive. (The binder lets every ordered aggregate of a query
// share one ORDER BY.)
func (l *lowerer) aggSingle(f *fragment, n *aggregateNode) (*fragment, error) {
	for _, a := range n.aggs {
		if len(a.order) > 0 {
			var err error
			if f, err = l.sort(f, a.order, -1); err != nil {
				return nil, err
			}
			break
		}
	}
	agg := &plan.Aggregate{Mode: plan.AggSingle}
	for _, g := range n.groups {
		pg, err := l.phys(g, f.cols)
		if err != nil {
			return nil, err
		}
		agg.GroupBy = append(agg.GroupBy, pg)
	}
	for i, a := range n.aggs {
		pa, err := l.phys(a.arg, f.cols)
		if err != nil {
			return nil, err
		}
		var more []*plan.Expr
		for _, m := range a.more {
			pm, err := l.phys(m, f.cols)
			if err != nil {
				return nil, err
			}
			more = append(more, pm)
		}
		agg.Aggs = append(agg.Aggs, plan.AggCall{Func: a.fn, Arg: pa, More: more, Type: a.typ, Name: l.md.col(n.aggCols[i]).name, Fraction: a.fraction, Sep: a.sep, Distinct: a.dedupe})
	}
	outCols := n.output()
	f.root = &plan.Node{Kind: plan.KindAggregate, Schema: l.schema(outCols), Inputs: []*plan.Node{f.root}, Aggregate: agg}
	f.cols = outCols
	return f, nil
}

func (l *lowerer) colRef(f *fragment, i int) *plan.Expr {
	s := f.root.Schema[i]
	return plan.Column(i, s.Name, s.Type)
}

// sort appends a sort (a top-k when limit >= 0).
func (l *lowerer) sort(f *fragment, keys []sortKey, limit int64) (*fragment, error) {
	var pk []plan.SortKey
	for _, k := range keys {
		e, err := l.phys(k.expr, f.cols)
		if err != nil {
			return nil, err
		}
		pk = append(pk, plan.SortKey{Expr: e, Desc: k.desc, NullsFirst: k.nullsFirst})
	}
	f.root = &plan.Node{Kind: plan.KindSort, Schema: f.root.Schema, Inputs: []*plan.Node{f.root}, SortKeys: pk, Limit: limit}
	return f, nil
}

func (l *lowerer) limit(f *fragment, limit, offset int64) *fragment {
	f.root = &plan.Node{Kind: plan.KindLimit, Schema: f.root.Schema, Inputs: []*plan.Node{f.root}, Limit: limit, Offset: offset}
	return f
}

// lowerLimit lowers LIMIT/OFFSET, fused with a Sort right below into a
// top-k. On a partitioned fragment every task first keeps its own top
// limit+offset rows (or first limit+offset rows), then one task finishes.
func (l *lowerer) lowerLimit(n *limitNode) (*fragment, error) {
	s, sorted := n.input.(*sortNode)
	in := n.input
	if sorted {
		in = s.input
	}
	f, err := l.lower(in)
	if err != nil {
		return nil, err
	}
	k := int64(-1) // rows each task must keep (-1: all)
	if n.limit >= 0 && n.limit <= math.MaxInt64-n.offset {
		k = n.limit + n.offset
	}
	if !f.single && k >= 0 {
		if sorted {
			if f, err = l.sort(f, s.keys, k); err != nil {
				return nil, err
			}
		} else {
			f = l.limit(f, k, 0)
		}
	}
	f = l.gather(f)
	if sorted {
		if f, err = l.sort(f, s.keys, k); err != nil {
			return nil, err
		}
	}
	return l.limit(f, n.limit, n.offset), nil
}

// unorderedLists is n with each list(x) of no ORDER BY and no DISTINCT
// planned as list_unordered, which has a partial state (the list so
// far, concatenated in the final step), so the partial aggregation runs
// in the scan's tasks; n itself when there is none.
func unorderedLists(n *aggregateNode) *aggregateNode {
	var m *aggregateNode
	for i, a := range n.aggs {
		if a.fn != plan.AggList || a.distinct || len(a.order) > 0 {
			continue
		}
		if m == nil {
			c := *n
			c.aggs = append([]aggExpr(nil), n.aggs...)
			m = &c
		}
		m.aggs[i].fn = plan.AggListUnordered
	}
	if m == nil {
		return n
	}
	return m
}
