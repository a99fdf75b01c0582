package planner

import (
	"math"

	"github.com/sluicedb/sluice/planner/plan"
)

// Size estimates for join ordering and the broadcast decision. They are
// deliberately simple: table row counts from the catalog (or, without
// them, the file size over a nominal row width), a constant selectivity
// per kind of predicate, and a join rule that treats an equality as a
// key/foreign-key match. Sizes are in memory, at nominal widths per type
// (strings defaultStrWidth): a broadcast build side is held whole in the
// memory of every task that reads it, so that is the size that matters,
// not the compressed bytes of the files.
//
// Per column the estimate keeps the number of distinct values (ndv, at
// most the rows) and the size of the domain the values come from (base:
// the row count of the table the column was read from, which for a key is
// its number of distinct values). An equality a = b is taken to relate a
// key of the smaller domain to a reference to it, so both sides have at
// most min(base) distinct values, and the join yields
// rows(l) * rows(r) / max(ndv(a), ndv(b)) rows, ndv capped at that domain.
// A key join with a filtered dimension thus keeps the filtered fraction of
// the fact rows.
//
// When the files' footers give both columns' distinct values in their
// tables (dist; an estimate near the rows is taken as a key, dist = rows),
// the join follows the total-domain rule of DuckDB's estimator instead:
// rows(l) * rows(r) / max(dist(a), dist(b)). It holds where min(base)
// does not: a referencing table smaller than the one it references (1,000
// customers referencing 7,200 household profiles: min(base) takes 1,000 as
// the domain and gives every customer 7 profiles). Without the counts,
// min(base) is kept, but a join on a column taken as a key yields at most
// the rows of its larger side, so such errors do not compound. And the
// unfiltered counts are what match: a filter on a dimension keeps a
// fraction of its keys, and of the fact rows with them, whatever fraction
// of the keys the fact references (a date dimension of 73,049 days with a
// fact that has sales on 1,823 of them). The min(base) rule would take the
// fact's 1,823 as the key domain and keep every fact row.
//
// An aggregate has at most as many groups as the product of its keys'
// distinct values, and the keys read from one scan (a dimension's name,
// address and key) at most as many combinations as that scan's rows: the
// estimate keeps each column's scan (src) for that bound. Without it the
// groups of an aggregate over a fact joined with a dimension were the join's
// rows, and chains of self-joins over such aggregates (TPC-DS q04, q64)
// compounded to 10^14 rows at SF 0.01, which the static partition count,
// taken from the largest estimate, then followed.

// colStat is the estimate of one column.
type colStat struct {
	ndv   float64 // distinct values
	base  float64 // size of the value domain
	width float64 // bytes per value
	// dist is the column's distinct values in its table before any
	// filter, from the footers (0: unknown).
	dist float64
	// src is the scan the column was read from (nil: computed).
	src *scanNode
}

// estimate is the estimate of one operator's output.
type estimate struct {
	rows float64
	cols map[colID]colStat
}

type estimator struct {
	md    *metadata
	cache map[node]*estimate
}

func newEstimator(md *metadata) *estimator {
	return &estimator{md: md, cache: map[node]*estimate{}}
}

// Unknown sizes: a table without statistics is assumed large, so it is
// never broadcast by accident.
const (
	unknownRows     = 1e7
	defaultStrWidth = 24
	// informativeDistinct: a column's distinct estimate counts as
	// a key (dist = rows) from this fraction of its table's rows on.
	informativeDistinct = 0.9
)

// typeWidth is the nominal size of a value of t.
func typeWidth(t plan.DataType) float64 {
	switch t.ID {
	case plan.Bool:
		return 1
	case plan.Date:
		return 4
	case plan.Decimal:
		if t.Wide() {
			return 16
		}
	case plan.String:
		return defaultStrWidth
	}
	return 8
}

// bytes is the estimated size of n's output.
func (es *estimator) bytes(n node) float64 {
	e := es.of(n)
	w := 0.0
	for _, id := range n.output() {
		if c, ok := e.cols[id]; ok {
			w += c.width
		} else {
			w += typeWidth(es.md.col(id).typ)
		}
	}
	return e.rows * w
}

func (es *estimator) rows(n node) float64 { return es.of(n).rows }

// of returns the estimate of n's output.
func (es *estimator) of(n node) *estimate {
	if e, ok := es.cache[n]; ok {
		return e
	}
	e := es.compute(n)
	e.rows = math.Max(e.rows, 1)
	for id, c := range e.cols {
		c.ndv = math.Max(1, math.Min(c.ndv, e.rows))
		e.cols[id] = c
	}
	es.cache[n] = e
	return e
}

func (es *estimator) compute(n node) *estimate {
	switch n := n.(type) {
	case *scanNode:
		rows := float64(n.table.Rows)
		if rows <= 0 {
			// No row count: what the files would hold at the nominal
			// (uncompressed) row width, an overestimate.
			rows = unknownRows
			if n.table.Bytes > 0 {
				w := 0.0
				for _, f := range n.table.Columns {
					w += typeWidth(f.Type)
				}
				rows = float64(n.table.Bytes) / math.Max(w, 1)
			}
		}
		e := &estimate{rows: rows, cols: map[colID]colStat{}}
		for i, id := range n.cols {
			ndv, dist := rows, 0.0
			if d := n.table.Distinct[n.table.Columns[n.ords[i]].Name]; d > 0 && es.md.col(id).path == nil {
				// The footers' estimate (catalog/distinct.go): a string
				// of few values (a status, a flag) is no key, nor is a
				// reference to a key. The domain stays the table's rows.
				ndv = math.Min(rows, float64(d))
				dist = ndv
				if ndv >= informativeDistinct*rows {
					// Near the rows: the footers take it for a key
					// (the estimate of a key is a little off either way).
					dist = rows
				}
			}
			e.cols[id] = colStat{ndv: ndv, base: rows, width: typeWidth(es.md.col(id).typ), dist: dist, src: n}
		}
		e.rows *= es.selectivity(n.filters, e)
		pinConstants(n.filters, e)
		return e
	case *filterNode:
		e := es.copyOf(n.input)
		e.rows *= es.selectivity(n.conds, e)
		pinConstants(n.conds, e)
		return e
	case *projectNode:
		in := es.of(n.input)
		e := &estimate{rows: in.rows, cols: map[colID]colStat{}}
		for i, id := range n.cols {
			e.cols[id] = es.exprStat(n.exprs[i], in)
		}
		return e
	case *aggregateNode:
		in := es.of(n.input)
		groups := 1.0
		if len(n.groups) > 0 {
			groups = es.combinations(n.groups, in)
		}
		e := &estimate{rows: groups, cols: map[colID]colStat{}}
		for i, id := range n.groupCols {
			s := es.exprStat(n.groups[i], in)
			e.cols[id] = s
		}
		for i, id := range n.aggCols {
			e.cols[id] = colStat{ndv: groups, base: groups, width: typeWidth(n.aggs[i].typ)}
		}
		return e
	case *sortNode:
		return es.copyOf(n.input)
	case *singleRowNode:
		// At most one row (per key combination): more fails the query.
		e := es.copyOf(n.input)
		if len(n.keys) == 0 {
			e.rows = 1
		} else {
			e.rows = es.combinations(n.keys, e)
		}
		return e
	case *limitNode:
		e := es.copyOf(n.input)
		if n.limit >= 0 {
			e.rows = math.Min(e.rows, float64(n.limit))
		}
		return e
	case *unionNode:
		e := &estimate{cols: map[colID]colStat{}}
		for i, in := range n.inputs {
			ie := es.of(in)
			e.rows += ie.rows
			for k, id := range n.cols {
				s := ie.cols[n.inCols[i][k]]
				c := e.cols[id]
				c.ndv += s.ndv
				c.base += s.base
				c.width = math.Max(c.width, s.width)
				if i == 0 || c.dist > 0 && s.dist > 0 {
					c.dist += s.dist
				} else {
					c.dist = 0
				}
				c.src = nil
				e.cols[id] = c
			}
		}
		return e
	case *joinNode:
		return es.join(n)
	case *valuesNode:
		return es.estimateValues(n)
	case *expandNode:
		in := es.of(n.input)
		e := &estimate{rows: in.rows * float64(len(n.projs)), cols: map[colID]colStat{}}
		for i, id := range n.cols {
			e.cols[id] = es.exprStat(n.projs[0][i], in)
		}
		return e
	case *unnestNode:
		e := es.copyOf(n.input)
		e.rows *= 4 // a guess: no statistics of list lengths
		e.cols[n.elem] = colStat{ndv: e.rows, base: e.rows, width: typeWidth(n.list.Type.Elem())}
		return e
	case *windowNode:
		e := es.copyOf(n.input)
		for i, id := range n.cols {
			e.cols[id] = colStat{ndv: e.rows, base: e.rows, width: typeWidth(n.calls[i].typ)}
		}
		return e
	}
	return &estimate{rows: unknownRows, cols: map[colID]colStat{}}
}

func (es *estimator) copyOf(n node) *estimate {
	in := es.of(n)
	e := &estimate{rows: in.rows, cols: make(map[colID]colStat, len(in.cols))}
	for id, c := range in.cols {
		e.cols[id] = c
	}
	return e
}

// combinations estimates the distinct combinations of the values of exprs
// over an input: the product of their distinct values, where the columns
// read from one scan together have at most as many combinations as the
// scan's rows, and in all at most the input's rows.
func (es *estimator) combinations(exprs []*plan.Expr, in *estimate) float64 {
	total := 1.0
	perSrc := map[*scanNode]float64{}
	for _, x := range exprs {
		st := es.exprStat(x, in)
		if st.src == nil {
			total *= st.ndv
			continue
		}
		p, ok := perSrc[st.src]
		if !ok {
			p = 1
		}
		perSrc[st.src] = p * st.ndv
	}
	for src, p := range perSrc {
		total *= math.Min(p, es.rows(src))
	}
	return math.Min(total, in.rows)
}

// pinConstants sets the distinct values of a column a condition equates
// with a constant to one.
func pinConstants(conds []*plan.Expr, e *estimate) {
	for _, c := range conds {
		if c.Op != plan.OpEq {
			continue
		}
		a, b := c.Args[0], c.Args[1]
		if isLit(a) {
			a, b = b, a
		}
		if a.Op != plan.OpColumn || !isLit(b) {
			continue
		}
		if st, ok := e.cols[a.Col]; ok {
			st.ndv = 1
			e.cols[a.Col] = st
		}
	}
}

// exprStat estimates the values of an expression over an input.
func (es *estimator) exprStat(x *plan.Expr, in *estimate) colStat {
	if x.Op == plan.OpColumn {
		if c, ok := in.cols[x.Col]; ok {
			return c
		}
	}
	if x.Op == plan.OpLiteral {
		return colStat{ndv: 1, base: 1, width: typeWidth(x.Type)}
	}
	return colStat{ndv: in.rows, base: in.rows, width: typeWidth(x.Type)}
}

// join estimates a join from its sides and conditions.
func (es *estimator) join(n *joinNode) *estimate {
	l, r := es.of(n.left), es.of(n.right)
	rows := es.joinRows(n.left, n.right, n.conds)
	e := &estimate{cols: map[colID]colStat{}}
	switch n.typ {
	case plan.JoinSemi:
		rows = math.Min(rows, l.rows)
	case plan.JoinAnti:
		rows = math.Max(l.rows-math.Min(rows, l.rows), l.rows*0.1)
	case plan.JoinLeft:
		rows = math.Max(rows, l.rows)
	case plan.JoinRight:
		rows = math.Max(rows, r.rows)
	case plan.JoinFull:
		rows = math.Max(rows, l.rows+r.rows)
	}
	e.rows = rows
	for id, c := range l.cols {
		e.cols[id] = c
	}
	if n.typ != plan.JoinSemi && n.typ != plan.JoinAnti {
		for id, c := range r.cols {
			e.cols[id] = c
		}
	}
	return e
}

// joinRows estimates the rows of an inner join of left and right on conds.
func (es *estimator) joinRows(left, right node, conds []*plan.Expr) float64 {
	l, r := es.of(left), es.of(right)
	lcols, rcols := colSet(left.output()), colSet(right.output())
	rows := l.rows * r.rows
	best := rows
	residual := 1.0
	for _, c := range conds {
		a, b, ok := equiSides(c, lcols, rcols)
		if !ok {
			residual *= es.condSelectivity(c, nil)
			continue
		}
		sa, sb := es.exprStat(a, l), es.exprStat(b, r)
		if sa.dist > 0 && sb.dist > 0 {
			ndv := math.Max(sa.dist, sb.dist) // the total domain
			best = math.Min(best, rows/math.Max(ndv, 1))
			continue
		}
		dom := math.Min(sa.base, sb.base)
		ndv := math.Max(math.Min(sa.ndv, dom), math.Min(sb.ndv, dom))
		// A column without a count is taken as a key: one side at least
		// is one, so the join has at most the other side's rows.
		best = math.Min(best, math.Min(rows/math.Max(ndv, 1), math.Max(l.rows, r.rows)))
	}
	return math.Max(best*residual, 1)
}

// equiSides returns the left and right operands of c when it is an
// equality between an expression over left and one over right, or an IS
// NOT DISTINCT FROM between them (nullSafeEq: the operands of its
// equality).
func equiSides(c *plan.Expr, lcols, rcols map[colID]bool) (l, r *plan.Expr, ok bool) {
	l, r, _, ok = keySides(c, lcols, rcols)
	return l, r, ok
}

// keySides is equiSides telling whether the equality is NULL-safe (IS NOT
// DISTINCT FROM: NULL matches NULL).
func keySides(c *plan.Expr, lcols, rcols map[colID]bool) (l, r *plan.Expr, nullSafe, ok bool) {
	if eq := nullSafeEq(c); eq != nil {
		c, nullSafe = eq, true
	}
	if c.Op != plan.OpEq {
		return nil, nil, false, false
	}
	a, b := c.Args[0], c.Args[1]
	if len(refs(a)) == 0 || len(refs(b)) == 0 {
		return nil, nil, false, false
	}
	switch {
	case within(a, lcols) && within(b, rcols):
		return a, b, nullSafe, true
	case within(a, rcols) && within(b, lcols):
		return b, a, nullSafe, true
	}
	return nil, nil, false, false
}

// nullSafeEq returns the equality x = y of c when c is x IS NOT DISTINCT
// FROM y as the binder builds it (notDistinct):
//
//	CASE WHEN x IS NULL THEN y IS NULL WHEN y IS NULL THEN false ELSE x' = y' END
//
// where x' and y' are x and y brought to one type; nil otherwise.
func nullSafeEq(c *plan.Expr) *plan.Expr {
	if c.Op != plan.OpCase || len(c.Args) != 5 {
		return nil
	}
	x, y, y2, f, eq := c.Args[0], c.Args[1], c.Args[2], c.Args[3], c.Args[4]
	if x.Op != plan.OpIsNull || y.Op != plan.OpIsNull || y2.Op != plan.OpIsNull || eq.Op != plan.OpEq ||
		!isLit(f) || f.Value.Null || f.Value.B || exprKey(y.Args[0]) != exprKey(y2.Args[0]) ||
		exprKey(uncast(x.Args[0])) != exprKey(uncast(eq.Args[0])) || exprKey(uncast(y.Args[0])) != exprKey(uncast(eq.Args[1])) {
		return nil
	}
	return eq
}

// uncast strips the casts around e: a cast does not change whether a value
// is NULL.
func uncast(e *plan.Expr) *plan.Expr {
	for e.Op == plan.OpCast && len(e.Args) == 1 {
		e = e.Args[0]
	}
	return e
}

// selectivity is the fraction of rows that pass all conds. A lower and an
// upper bound on one expression (BETWEEN) together keep rangeSelectivity,
// not the product of two open ranges.
func (es *estimator) selectivity(conds []*plan.Expr, e *estimate) float64 {
	s := 1.0
	lower, upper := map[string]bool{}, map[string]bool{}
	for _, c := range conds {
		if x, dir := rangeBound(c); x != nil {
			k := exprKey(x)
			if dir > 0 && lower[k] || dir < 0 && upper[k] {
				s *= rangeSelectivity / openRangeSelectivity
				delete(lower, k)
				delete(upper, k)
				continue
			}
			if dir > 0 {
				upper[k] = true
			} else {
				lower[k] = true
			}
		}
		s *= es.condSelectivity(c, e)
	}
	return s
}

const (
	openRangeSelectivity = 0.3
	rangeSelectivity     = 0.25
)

// rangeBound returns the expression a comparison with a constant bounds,
// and whether from above (1) or below (-1).
func rangeBound(c *plan.Expr) (*plan.Expr, int) {
	var dir int
	switch c.Op {
	case plan.OpLt, plan.OpLe:
		dir = 1
	case plan.OpGt, plan.OpGe:
		dir = -1
	default:
		return nil, 0
	}
	a, b := c.Args[0], c.Args[1]
	switch {
	case isLit(b) && len(refs(a)) > 0:
		return a, dir
	case isLit(a) && len(refs(b)) > 0:
		return b, -dir
	}
	return nil, 0
}

// condSelectivity is the fraction of rows a predicate keeps: a constant
// per kind of predicate (equality with a constant keeps 1/ndv when the
// column's distinct values are known to be few).
func (es *estimator) condSelectivity(c *plan.Expr, e *estimate) float64 {
	colVsLit := func() (*plan.Expr, bool) {
		a, b := c.Args[0], c.Args[1]
		if isLit(b) && len(refs(a)) > 0 {
			return a, true
		}
		if isLit(a) && len(refs(b)) > 0 {
			return b, true
		}
		return nil, false
	}
	switch c.Op {
	case plan.OpAnd:
		return es.condSelectivity(c.Args[0], e) * es.condSelectivity(c.Args[1], e)
	case plan.OpOr:
		a, b := es.condSelectivity(c.Args[0], e), es.condSelectivity(c.Args[1], e)
		return a + b - a*b
	case plan.OpNot:
		return 1 - es.condSelectivity(c.Args[0], e)
	case plan.OpEq:
		if x, ok := colVsLit(); ok {
			s := 0.1
			if e != nil && x.Op == plan.OpColumn {
				if st, ok := e.cols[x.Col]; ok && st.ndv < 10 {
					s = 1 / st.ndv
				}
			}
			return s
		}
		return 0.1
	case plan.OpNe:
		return 0.9
	case plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe:
		if _, ok := colVsLit(); ok {
			return openRangeSelectivity
		}
		return 0.5
	case plan.OpLike:
		if c.Negated {
			return 0.9
		}
		return 0.1
	case plan.OpIn:
		s := math.Min(0.5, 0.1*float64(len(c.Args)-1))
		if c.Negated {
			return 1 - s
		}
		return s
	case plan.OpIsNull:
		return 0.05
	case plan.OpIsNotNull:
		return 0.95
	case plan.OpLiteral:
		if c.Value.Null || !c.Value.B {
			return 0
		}
		return 1
	}
	return 0.5
}
