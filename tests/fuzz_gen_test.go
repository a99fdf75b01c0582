package tests

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// The query generator of the differential and metamorphic fuzzer
// (fuzz_test.go): typed expressions over the TPC-H tables, joins of every
// kind sized so that results stay small, subqueries, grouping, windows
// and set operations. Everything it makes is deterministic from the
// generator's seed, and meant to be SQL that DuckDB and sluice both
// accept with one answer: orders are total before a LIMIT, integer
// products stay in 32 bits (DuckDB's INTEGER columns), sums are never
// over doubles, and the deliberate differences the README lists
// (timestamp - timestamp, mod of doubles, casts of timestamps to text)
// are not generated.

// scol is a column in scope: a qualified reference and what it holds.
type scol struct {
	ref string
	typ ftype
	dom *fcol // the base column's domain, nil when computed
	ndv float64
}

// frel is one FROM item in scope.
type frel struct {
	alias string
	cols  []scol
	keys  []string // references that together are unique; nil when unknown
	rows  float64
}

// fscope is the relations a query's expressions can read, with an
// estimate of how many rows their join has.
type fscope struct {
	rels []*frel
	rows float64
}

// orderKeys returns references that order the scope's rows totally (the
// keys of every relation: unique even over outer joins, whose padded rows
// keep the preserved side's key), or nil.
func (s *fscope) orderKeys() []string {
	var out []string
	for _, r := range s.rels {
		if r.keys == nil {
			return nil
		}
		out = append(out, r.keys...)
	}
	return out
}

// ectx is where an expression is generated.
type ectx struct {
	sc *fscope
	// agg: an aggregate context (select list or HAVING of a grouped
	// query): leaves are group keys, aggregates and literals.
	agg  bool
	keys []*node
	// win: window functions may appear (select list of an ungrouped query).
	win bool
	// sub is how many more levels of subqueries may be nested.
	sub int
}

type fgen struct {
	r    *rand.Rand
	n    int             // alias counter
	tags map[string]bool // constructs used, for the statistics
	top  *selectQ        // the statement, which holds the CTEs
	ctes []*cteRel
	// maxRows bounds the estimated rows of any join the generator builds.
	maxRows float64
	// weights are the tables' odds as a FROM item.
	weights map[string]int
	// sortExpr, when set, makes an expression over the query being
	// finished, for limitAll.
	sortExpr func() *node
	// depth counts nested derived tables.
	depth int
}

type cteRel struct {
	name string
	rel  *frel // its columns, with the CTE's name as the qualifier
}

// newFgen returns the generator of case idx of a run: each case has its
// own stream, so one case replays alone from (seed, idx).
// light makes smaller queries (fewer large tables, smaller joins), for
// the sample that runs in `make test`.
func newFgen(seed uint64, idx int, light bool) *fgen {
	g := &fgen{
		r:       rand.New(rand.NewPCG(seed, uint64(idx)*0x9E3779B97F4A7C15+1)),
		tags:    map[string]bool{},
		maxRows: 120000,
		weights: tableWeights,
	}
	if light {
		g.maxRows = 20000
		g.weights = lightWeights
	}
	return g
}

func (g *fgen) chance(p float64) bool { return g.r.Float64() < p }
func (g *fgen) intn(n int) int        { return g.r.IntN(n) }

// pickW returns an index with probability proportional to its weight.
func (g *fgen) pickW(ws ...int) int {
	total := 0
	for _, w := range ws {
		total += w
	}
	x := g.intn(total)
	for i, w := range ws {
		if x < w {
			return i
		}
		x -= w
	}
	return len(ws) - 1
}

func pick[T any](g *fgen, xs []T) T { return xs[g.intn(len(xs))] }

func (g *fgen) alias(prefix string) string {
	g.n++
	return fmt.Sprintf("%s%d", prefix, g.n)
}

func (g *fgen) tag(s string) { g.tags[s] = true }

// nf makes a node from a format with one %s per kid.
func nf(t ftype, f string, kids ...*node) *node { return &node{f: f, kids: kids, typ: t} }

// leafN makes a node of literal text.
func leafN(t ftype, s string) *node { return &node{f: s, typ: t} }

// ---- literals ----

var fuzzWords = []string{"", "a", "ASIA", "final", "Brand#23", "1-URGENT", "O", "F", "MAIL", "zzz", "Customer#000000001", "BUILDING", " "}

// edgeDates are month ends and leap days, for month arithmetic.
var edgeDates = []string{"1992-02-29", "1996-01-31", "1998-12-31", "1995-03-31", "1993-12-31", "1996-02-29", "1994-05-31"}

var sqlTypeName = map[ftype]string{fInt: "BIGINT", fDec: "DECIMAL(15,2)", fDbl: "DOUBLE", fStr: "VARCHAR", fDate: "DATE", fTS: "TIMESTAMP", fBool: "BOOLEAN"}

func intLit(v int) *node {
	if v < 0 {
		return leafN(fInt, fmt.Sprintf("(%d)", v))
	}
	return leafN(fInt, strconv.Itoa(v))
}

func strLit(s string) *node { return leafN(fStr, "'"+strings.ReplaceAll(s, "'", "''")+"'") }

func nullOf(t ftype) *node { return leafN(t, "CAST(NULL AS "+sqlTypeName[t]+")") }

func (g *fgen) date() string {
	return time.Date(1992, 1, 1+g.intn(2557), 0, 0, 0, 0, time.UTC).Format("2006-01-02")
}

// lit returns a literal of type t, in dom's range when dom is given.
func (g *fgen) lit(t ftype, dom *fcol) *node {
	switch t {
	case fInt:
		lo, hi := 0, 30
		if dom != nil && dom.typ == fInt {
			lo, hi = int(dom.lo), int(dom.hi)
		}
		v := lo + g.intn(hi-lo+1)
		switch {
		case g.chance(0.08):
			v = hi + 1
		case g.chance(0.05):
			v = lo - 1
		}
		return intLit(v)
	case fDec:
		lo, hi := 0.0, 100.0
		if dom != nil && dom.typ == fDec {
			lo, hi = dom.lo, dom.hi
		}
		v := lo + g.r.Float64()*(hi-lo)
		if g.chance(0.3) {
			v = float64(int(v))
		}
		s := fmt.Sprintf("%.2f", v)
		if v < 0 {
			s = "(" + s + ")"
		}
		return leafN(fDec, s)
	case fDbl:
		return leafN(fDbl, fmt.Sprintf("CAST(%d.5 AS DOUBLE)", g.intn(100)))
	case fStr:
		if dom != nil && len(dom.vals) > 0 && g.chance(0.9) {
			return strLit(pick(g, dom.vals))
		}
		return strLit(pick(g, fuzzWords))
	case fDate:
		if g.chance(0.12) {
			g.tag("edge date")
			return leafN(fDate, "DATE '"+pick(g, edgeDates)+"'")
		}
		return leafN(fDate, "DATE '"+g.date()+"'")
	case fTS:
		if g.chance(0.5) {
			return leafN(fTS, "TIMESTAMP '"+g.date()+"'")
		}
		return leafN(fTS, fmt.Sprintf("TIMESTAMP '%s %02d:%02d:00'", g.date(), g.intn(24), g.intn(60)))
	default:
		return leafN(fBool, pick(g, []string{"TRUE", "FALSE"}))
	}
}

// litFor returns a literal to compare with a: in a's domain when a is a
// column (dates and timestamps compare with either literal).
func (g *fgen) litFor(a *node) *node {
	t := a.typ
	if t == fTS && g.chance(0.5) {
		t = fDate
	}
	if t == fDbl && g.chance(0.5) {
		t = fInt
	}
	return g.lit(t, a.col)
}

// ---- columns ----

// col returns a column of type t in scope (comments and addresses
// rarely), or nil.
func (g *fgen) col(sc *fscope, t ftype) *node {
	var cs []scol
	var ws []int
	for _, r := range sc.rels {
		for _, c := range r.cols {
			if c.typ != t {
				continue
			}
			w := 6
			if c.dom != nil && (strings.HasSuffix(c.dom.name, "comment") || strings.HasSuffix(c.dom.name, "address")) {
				w = 1
			}
			cs = append(cs, c)
			ws = append(ws, w)
		}
	}
	if len(cs) == 0 {
		return nil
	}
	c := cs[g.pickW(ws...)]
	return &node{f: c.ref, typ: t, col: c.dom}
}

// lowCardCol returns a column with few distinct values, or nil.
func (g *fgen) lowCardCol(sc *fscope) *node {
	var cs []scol
	for _, r := range sc.rels {
		for _, c := range r.cols {
			if c.ndv <= 60 && c.typ != fBool {
				cs = append(cs, c)
			}
		}
	}
	if len(cs) == 0 {
		return nil
	}
	c := pick(g, cs)
	return &node{f: c.ref, typ: c.typ, col: c.dom}
}

// ---- expressions ----

func (g *fgen) anyType() ftype {
	return []ftype{fInt, fDec, fStr, fDate}[g.pickW(4, 3, 3, 2)]
}

func (g *fgen) cmpType() ftype {
	return []ftype{fInt, fDec, fStr, fDate, fTS, fDbl, fBool}[g.pickW(8, 6, 6, 4, 1, 1, 1)]
}

// scopeType returns the type of a column in scope (mostly), so that
// expressions read columns rather than fold to constants.
func (g *fgen) scopeType(c *ectx, fallback func() ftype) ftype {
	if c.agg || g.chance(0.15) {
		return fallback()
	}
	var ts []ftype
	for _, r := range c.sc.rels {
		for _, col := range r.cols {
			if col.dom != nil && (strings.HasSuffix(col.dom.name, "comment") || strings.HasSuffix(col.dom.name, "address")) && g.chance(0.7) {
				continue
			}
			ts = append(ts, col.typ)
		}
	}
	if len(ts) == 0 {
		return fallback()
	}
	return pick(g, ts)
}

// expr returns an expression of type t of depth at most d.
func (g *fgen) expr(c *ectx, t ftype, d int) *node {
	if d <= 0 || g.chance(0.25) {
		return g.leaf(c, t)
	}
	switch t {
	case fInt:
		return g.intExpr(c, d)
	case fDec:
		return g.decExpr(c, d)
	case fDbl:
		return g.dblExpr(c, d)
	case fStr:
		return g.strExpr(c, d)
	case fDate:
		return g.dateExpr(c, d)
	case fTS:
		return g.tsExpr(c, d)
	default:
		return g.boolExpr(c, d)
	}
}

func (g *fgen) leaf(c *ectx, t ftype) *node {
	if c.agg {
		return g.aggLeaf(c, t)
	}
	if c.win && g.chance(0.35) {
		if w := g.window(c, t); w != nil {
			return w
		}
	}
	if g.chance(0.82) {
		if n := g.col(c.sc, t); n != nil {
			return n
		}
	}
	if g.chance(0.07) {
		g.tag("NULL literal")
		return nullOf(t)
	}
	switch t {
	case fDbl:
		x := g.col(c.sc, fInt)
		if x == nil {
			x = g.col(c.sc, fDec)
		}
		if x != nil {
			return nf(fDbl, "CAST(%s AS DOUBLE)", x)
		}
	case fTS:
		if d := g.col(c.sc, fDate); d != nil {
			return g.tsOf(d)
		}
	case fBool:
		return g.compare(c, 1)
	}
	return g.lit(t, nil)
}

// aggLeaf is a leaf in an aggregate context.
func (g *fgen) aggLeaf(c *ectx, t ftype) *node {
	var ks []*node
	for _, k := range c.keys {
		if k.typ == t {
			ks = append(ks, k)
		}
	}
	switch {
	case len(ks) > 0 && g.chance(0.4):
		return pick(g, ks).clone()
	case g.chance(0.85):
		return g.aggregate(c, t)
	}
	return g.lit(t, nil)
}

func (g *fgen) minmax() string { return pick(g, []string{"min", "max"}) }

// aggregate returns an aggregate call of type t over c's scope.
func (g *fgen) aggregate(c *ectx, t ftype) *node {
	in := &ectx{sc: c.sc}
	arg := func(t ftype) *node { return g.expr(in, t, 1+g.intn(2)) }
	var n *node
	switch t {
	case fInt:
		switch g.pickW(4, 3, 2, 3, 2) {
		case 0:
			n = leafN(fInt, "count(*)")
		case 1:
			n = nf(fInt, "count(%s)", arg(g.scopeType(in, g.anyType)))
		case 2:
			g.tag("count(DISTINCT)")
			n = nf(fInt, "count(DISTINCT %s)", arg(g.scopeType(in, g.anyType)))
		case 3:
			n = nf(fInt, "sum(%s)", arg(fInt))
		default:
			a := arg(fInt)
			if g.chance(0.15) {
				g.tag("median/percentile")
				n = nf(fInt, "percentile_disc("+pick(g, []string{"0.1", "0.5", "0.75"})+") WITHIN GROUP (ORDER BY %s)", a)
				break
			}
			n = nf(fInt, g.minmax()+"(%s)", a)
			n.col = a.col
		}
	case fDec:
		switch g.pickW(5, 4, 1) {
		case 0:
			n = nf(fDec, "sum(%s)", arg(fDec))
		case 1:
			a := arg(fDec)
			n = nf(fDec, g.minmax()+"(%s)", a)
			n.col = a.col
		default:
			g.tag("sum(DISTINCT)")
			n = nf(fDec, "sum(DISTINCT %s)", arg(fDec))
		}
	case fDbl:
		switch g.pickW(1, 8, 2) {
		case 0:
			g.tag("avg(DISTINCT)")
			n = nf(fDbl, "avg(DISTINCT %s)", arg(pick(g, []ftype{fInt, fDec})))
		case 1:
			n = nf(fDbl, "avg(%s)", arg(pick(g, []ftype{fInt, fDec})))
		default:
			g.tag("median/percentile")
			if g.chance(0.5) {
				n = nf(fDbl, "median(%s)", arg(fInt))
			} else {
				n = nf(fDbl, "percentile_cont("+pick(g, []string{"0.25", "0.5", "0.9"})+") WITHIN GROUP (ORDER BY %s)", arg(fInt))
			}
		}
	case fStr:
		if k := g.lowCardCol(c.sc); k != nil && k.typ == fStr && g.chance(0.25) {
			// Distinct values in their own order: one answer.
			g.tag("string_agg")
			n = &node{f: "string_agg(DISTINCT %s, ',' ORDER BY %s)", kids: []*node{k, k.clone()}, typ: fStr}
			break
		}
		a := arg(fStr)
		n = nf(fStr, g.minmax()+"(%s)", a)
		n.col = a.col
	case fDate, fTS:
		a := arg(t)
		n = nf(t, g.minmax()+"(%s)", a)
		n.col = a.col
	default:
		g.tag("bool_and/bool_or")
		n = nf(fBool, pick(g, []string{"bool_and", "bool_or"})+"(%s)", g.boolExpr(in, 1))
	}
	if g.chance(0.12) && !strings.Contains(n.f, "WITHIN GROUP") && !strings.HasPrefix(n.f, "string_agg") {
		g.tag("aggregate FILTER")
		n = &node{f: n.f + " FILTER (WHERE %s)", kids: append(n.kids, g.boolExpr(in, 1)), typ: n.typ, col: n.col}
	}
	return n
}

// generic returns one of the forms every type has: coalesce, nullif,
// CASE, greatest/least, a typed NULL.
func (g *fgen) generic(c *ectx, t ftype, d int) *node {
	e := func() *node { return g.expr(c, t, d-1) }
	switch g.pickW(3, 2, 5, 2, 1) {
	case 0:
		g.tag("coalesce")
		if g.chance(0.3) {
			return nf(t, "coalesce(%s, %s, %s)", e(), e(), e())
		}
		return nf(t, "coalesce(%s, %s)", e(), e())
	case 1:
		g.tag("nullif")
		a := e()
		b := g.litFor(a)
		if g.chance(0.4) {
			b = e()
		}
		b.typ = a.typ
		return nf(t, "nullif(%s, %s)", a, b)
	case 2:
		if g.chance(0.35) {
			g.tag("CASE without ELSE")
			return nf(t, "CASE WHEN %s THEN %s END", g.boolExpr(c, d-1), e())
		}
		if g.chance(0.3) {
			g.tag("simple CASE")
			x := g.expr(c, fInt, d-1)
			if g.chance(0.5) {
				if s := g.col(c.sc, fStr); s != nil && !c.agg {
					x = s
				}
			}
			return nf(t, "CASE %s WHEN %s THEN %s WHEN %s THEN %s ELSE %s END", x, g.litFor(x), e(), g.litFor(x), e(), e())
		}
		g.tag("CASE")
		return nf(t, "CASE WHEN %s THEN %s ELSE %s END", g.boolExpr(c, d-1), e(), e())
	case 3:
		if t != fBool {
			g.tag("greatest/least")
			fn := pick(g, []string{"greatest", "least"})
			if g.chance(0.3) {
				return nf(t, fn+"(%s, %s, %s)", e(), e(), e())
			}
			return nf(t, fn+"(%s, %s)", e(), e())
		}
	}
	g.tag("NULL literal")
	return nullOf(t)
}

func (g *fgen) intExpr(c *ectx, d int) *node {
	e := func(t ftype) *node { return g.expr(c, t, d-1) }
	switch g.pickW(5, 1, 2, 2, 6, 3, 2, 2, 2, 1, 2) {
	case 0:
		return nf(fInt, "(%s "+pick(g, []string{"+", "-"})+" %s)", e(fInt), e(fInt))
	case 1:
		// One side a small constant: the int32 columns stay in 32 bits.
		return nf(fInt, "(%s * %s)", g.leaf(c, fInt), intLit(1+g.intn(12)))
	case 2:
		if g.chance(0.5) {
			return nf(fInt, "abs(%s)", e(fInt))
		}
		return nf(fInt, "sign(%s)", e(pick(g, []ftype{fInt, fDec})))
	case 3:
		g.tag("modulo")
		m := intLit(g.intn(9))
		if g.chance(0.15) {
			m = intLit(-1 - g.intn(4))
		}
		if g.chance(0.5) {
			return nf(fInt, "(%s %% %s)", e(fInt), m)
		}
		return nf(fInt, "mod(%s, %s)", e(fInt), m)
	case 4:
		return g.generic(c, fInt, d)
	case 5:
		g.tag("date part")
		x := e(fDate)
		switch g.intn(3) {
		case 0:
			return nf(fInt, "extract("+pick(g, []string{"year", "month", "day", "quarter", "dow", "doy"})+" FROM %s)", x)
		case 1:
			return nf(fInt, pick(g, []string{"year", "month", "dayofmonth", "dayofweek", "quarter"})+"(%s)", x)
		default:
			return nf(fInt, "date_part('"+pick(g, []string{"year", "month", "day", "week", "doy", "isodow", "yearweek", "isoyear", "decade"})+"', %s)", x)
		}
	case 6:
		if g.chance(0.6) {
			return nf(fInt, "length(%s)", e(fStr))
		}
		return nf(fInt, "strpos(%s, %s)", e(fStr), strLit(pick(g, []string{"A", "a", "#", " ", "-", "O"})))
	case 7:
		g.tag("date arithmetic")
		if g.chance(0.5) {
			return nf(fInt, "(%s - %s)", e(fDate), e(fDate))
		}
		return nf(fInt, "date_diff('day', %s, %s)", e(fDate), e(fDate))
	case 8:
		g.tag("cast")
		if g.chance(0.6) {
			return nf(fInt, "CAST(%s AS BIGINT)", e(fDec))
		}
		g.tag("try_cast")
		return nf(fInt, "try_cast(%s AS BIGINT)", nf(fStr, "substring(%s, "+strconv.Itoa(1+g.intn(10))+", "+strconv.Itoa(1+g.intn(3))+")", e(fStr)))
	case 9:
		g.tag("integer division //")
		if g.chance(0.2) {
			return nf(fInt, "(%s // %s)", e(fInt), intLit(-1-g.intn(5)))
		}
		return nf(fInt, "(%s // %s)", e(fInt), intLit(g.intn(8)))
	default:
		if c.sub > 0 && !c.agg {
			return g.scalarSub(c, fInt)
		}
		return g.generic(c, fInt, d)
	}
}

func (g *fgen) decExpr(c *ectx, d int) *node {
	e := func(t ftype) *node { return g.expr(c, t, d-1) }
	switch g.pickW(5, 3, 2, 2, 5, 1, 1) {
	case 0:
		b := e(fDec)
		if g.chance(0.3) {
			b = e(fInt)
		}
		return nf(fDec, "(%s "+pick(g, []string{"+", "-"})+" %s)", e(fDec), b)
	case 1:
		a := g.leaf(c, fDec)
		switch g.intn(3) {
		case 0:
			return nf(fDec, "(%s * %s)", a, intLit(1+g.intn(12)))
		case 1:
			g.tag("decimal product")
			return nf(fDec, "(%s * %s)", a, g.leaf(c, fDec))
		default:
			g.tag("decimal product")
			return nf(fDec, "(%s * (1 - %s))", a, g.leaf(c, fDec))
		}
	case 2:
		return nf(fDec, "abs(%s)", e(fDec))
	case 3:
		switch g.intn(3) {
		case 0:
			return nf(fDec, "round(%s, %s)", e(fDec), intLit(g.intn(4)-1))
		case 1:
			return nf(fDec, "floor(%s)", e(fDec))
		default:
			return nf(fDec, "ceil(%s)", e(fDec))
		}
	case 4:
		return g.generic(c, fDec, d)
	case 5:
		g.tag("cast")
		return nf(fDec, "CAST(%s AS DECIMAL(15,2))", e(fInt))
	default:
		if c.sub > 0 && !c.agg {
			return g.scalarSub(c, fDec)
		}
		return g.generic(c, fDec, d)
	}
}

func (g *fgen) dblExpr(c *ectx, d int) *node {
	num := func() *node { return g.expr(c, pick(g, []ftype{fInt, fDec}), d-1) }
	switch g.pickW(4, 2, 3, 1) {
	case 0:
		g.tag("division /")
		if g.chance(0.3) {
			g.tag("division by zero")
			return nf(fDbl, "(%s / (%s %% 3))", num(), g.expr(c, fInt, d-1))
		}
		return nf(fDbl, "(%s / %s)", num(), num())
	case 1:
		g.tag("cast")
		return nf(fDbl, "CAST(%s AS DOUBLE)", num())
	case 2:
		return g.generic(c, fDbl, d)
	default:
		return nf(fDbl, "sqrt(abs(%s))", num())
	}
}

func (g *fgen) strExpr(c *ectx, d int) *node {
	s := func() *node { return g.expr(c, fStr, d-1) }
	small := func(lo, n int) *node { return intLit(lo + g.intn(n)) }
	// edge: sometimes a position or length of zero or below.
	edge := func(n *node, vals ...int) *node {
		if g.chance(0.12) {
			g.tag("edge string position")
			return intLit(pick(g, vals))
		}
		return n
	}
	switch g.pickW(3, 3, 2, 2, 2, 3, 1, 1, 1, 2, 5, 2) {
	case 0:
		return nf(fStr, pick(g, []string{"upper", "lower"})+"(%s)", s())
	case 1:
		return nf(fStr, "substring(%s, %s, %s)", s(), edge(small(1, 5), 0, -2, -5), edge(small(1, 8), 0))
	case 2:
		return nf(fStr, pick(g, []string{"left", "right"})+"(%s, %s)", s(), edge(small(0, 8), -1, -3))
	case 3:
		return nf(fStr, pick(g, []string{"trim", "ltrim", "rtrim"})+"(%s)", s())
	case 4:
		return nf(fStr, "replace(%s, %s, %s)", s(), strLit(pick(g, []string{"A", "E", " ", "#", "0"})), strLit(pick(g, []string{"", "x", "--"})))
	case 5:
		g.tag("concat")
		if g.chance(0.5) {
			return nf(fStr, "concat(%s, %s)", s(), s())
		}
		return nf(fStr, "(%s || %s)", s(), s())
	case 6:
		return nf(fStr, pick(g, []string{"lpad", "rpad"})+"(%s, %s, %s)", s(), edge(small(1, 20), 0), strLit("*"))
	case 7:
		return nf(fStr, "split_part(%s, %s, %s)", s(), strLit(pick(g, []string{" ", "#", "-"})), edge(small(1, 3), -1, -2))
	case 8:
		return nf(fStr, "reverse(%s)", s())
	case 9:
		g.tag("cast")
		return nf(fStr, "CAST(%s AS VARCHAR)", g.expr(c, pick(g, []ftype{fInt, fDate, fDec}), d-1))
	case 10:
		return g.generic(c, fStr, d)
	default:
		g.tag("date formatting")
		x := g.expr(c, fDate, d-1)
		switch g.intn(3) {
		case 0:
			return nf(fStr, "strftime(%s, %s)", x, leafN(fStr, pick(g, []string{"'%Y-%m'", "'%d/%m/%Y'", "'%j'"})))
		case 1:
			return nf(fStr, "dayname(%s)", x)
		default:
			return nf(fStr, "monthname(%s)", x)
		}
	}
}

func (g *fgen) dateExpr(c *ectx, d int) *node {
	x := func() *node { return g.expr(c, fDate, d-1) }
	switch g.pickW(4, 2, 2, 1, 4) {
	case 0:
		g.tag("date arithmetic")
		n := intLit(g.intn(400))
		if g.chance(0.3) {
			if k := g.col(c.sc, fInt); k != nil && !c.agg {
				// DuckDB adds INTEGER (not BIGINT) days to a date.
				n = nf(fInt, "CAST((%s %% 61) AS INTEGER)", k)
			}
		}
		return nf(fDate, "(%s "+pick(g, []string{"+", "-"})+" %s)", x(), n)
	case 1:
		return nf(fDate, "last_day(%s)", x())
	case 2:
		a := x()
		return nf(fDate, "make_date(year(%s), month(%s), 1)", a, a.clone())
	case 3:
		return g.lit(fDate, nil)
	default:
		return g.generic(c, fDate, d)
	}
}

// tsOf returns a timestamp computed from the date expression x.
func (g *fgen) tsOf(x *node) *node {
	switch g.intn(3) {
	case 0:
		g.tag("interval")
		unit := pick(g, []string{"DAY", "MONTH", "YEAR"})
		n := 1 + g.intn(40)
		if unit == "YEAR" {
			n = 1 + g.intn(3)
		}
		return nf(fTS, fmt.Sprintf("(%%s %s INTERVAL '%d' %s)", pick(g, []string{"+", "-"}), n, unit), x)
	case 1:
		g.tag("date_trunc")
		return nf(fTS, "date_trunc('"+pick(g, []string{"month", "year", "quarter", "week"})+"', %s)", x)
	default:
		g.tag("cast")
		return nf(fTS, "CAST(%s AS TIMESTAMP)", x)
	}
}

func (g *fgen) tsExpr(c *ectx, d int) *node {
	if g.chance(0.6) {
		return g.tsOf(g.expr(c, fDate, d-1))
	}
	if g.chance(0.3) {
		g.tag("interval")
		return nf(fTS, fmt.Sprintf("(%%s + INTERVAL '%d' DAY)", 1+g.intn(30)), g.expr(c, fTS, d-1))
	}
	return g.generic(c, fTS, d)
}

// ---- predicates ----

func (g *fgen) boolExpr(c *ectx, d int) *node {
	if d <= 0 {
		return g.compare(c, 1)
	}
	b := func() *node { return g.boolExpr(c, d-1) }
	switch g.pickW(10, 3, 1, 2, 3, 3, 4, 2, 1, 4, 1, 2) {
	case 0:
		return g.compare(c, d)
	case 1:
		g.tag("IS [NOT] NULL")
		return nf(fBool, pick(g, []string{"(%s IS NULL)", "(%s IS NOT NULL)"}), g.expr(c, g.scopeType(c, g.anyType), d-1))
	case 2:
		g.tag("IS [NOT] DISTINCT FROM")
		t := g.scopeType(c, g.cmpType)
		a := g.expr(c, t, d-1)
		bb := g.litFor(a)
		if g.chance(0.5) {
			bb = g.expr(c, t, d-1)
		}
		return nf(fBool, pick(g, []string{"(%s IS DISTINCT FROM %s)", "(%s IS NOT DISTINCT FROM %s)"}), a, bb)
	case 3:
		g.tag("BETWEEN")
		t := []ftype{fInt, fDec, fDate, fStr}[g.pickW(3, 3, 3, 1)]
		a := g.expr(c, t, d-1)
		return nf(fBool, pick(g, []string{"(%s BETWEEN %s AND %s)", "(%s NOT BETWEEN %s AND %s)"}), a, g.litFor(a), g.litFor(a))
	case 4:
		g.tag("IN list")
		t := []ftype{fInt, fStr, fDec, fDate}[g.pickW(4, 4, 1, 1)]
		a := g.expr(c, t, d-1)
		n := 1 + g.intn(4)
		kids := []*node{a}
		ph := make([]string, n)
		for i := range ph {
			ph[i] = "%s"
			if g.chance(0.12) {
				g.tag("NULL in IN list")
				kids = append(kids, nullOf(t))
			} else {
				kids = append(kids, g.litFor(a))
			}
		}
		op := "IN"
		if g.chance(0.35) {
			op = "NOT IN"
		}
		return nf(fBool, "(%s "+op+" ("+strings.Join(ph, ", ")+"))", kids...)
	case 5:
		g.tag("LIKE")
		a := g.expr(c, fStr, d-1)
		pats := []string{"%a%", "A%", "%E", "%#%", "_%", "%"}
		if a.col != nil && len(a.col.pats) > 0 {
			pats = a.col.pats
		}
		p := pick(g, pats)
		op := pick(g, []string{"LIKE", "LIKE", "NOT LIKE", "ILIKE"})
		if op == "ILIKE" {
			p = strings.ToLower(p)
		}
		return nf(fBool, "(%s "+op+" %s)", a, strLit(p))
	case 6:
		if g.chance(0.5) {
			return nf(fBool, "(%s AND %s)", b(), b())
		}
		g.tag("OR")
		return nf(fBool, "(%s OR %s)", b(), b())
	case 7:
		g.tag("NOT")
		return nf(fBool, "(NOT %s)", b())
	case 8:
		g.tag("IS [NOT] TRUE/FALSE")
		return nf(fBool, pick(g, []string{"(%s IS TRUE)", "(%s IS NOT TRUE)", "(%s IS FALSE)", "(%s IS NOT FALSE)"}), b())
	case 9:
		if c.sub > 0 && !c.agg {
			return g.subqueryPred(c, d)
		}
		return g.compare(c, d)
	case 10:
		return g.generic(c, fBool, d)
	default:
		a := g.expr(c, fStr, d-1)
		switch g.intn(3) {
		case 0:
			return nf(fBool, "starts_with(%s, %s)", a, strLit(pick(g, []string{"A", "B", "Customer#0000001", "Brand#1", "1-", "S"})))
		case 1:
			return nf(fBool, "contains(%s, %s)", a, strLit(pick(g, []string{"A", "ly", " ", "#00", "IN"})))
		default:
			g.tag("regexp")
			return nf(fBool, "regexp_matches(%s, %s)", a, strLit(pick(g, []string{"^[A-M]", "[0-9]$", "^.{4,8}$", "A.*A", "(IN|AN)"})))
		}
	}
}

// compare returns a comparison of two expressions of one type family,
// often a column against a literal of its domain.
func (g *fgen) compare(c *ectx, d int) *node {
	t := g.scopeType(c, g.cmpType)
	a := g.expr(c, t, d-1)
	var b *node
	if g.chance(0.6) {
		b = g.litFor(a)
		if (t == fDate || t == fInt && a.col != nil) && g.chance(0.1) && !strings.HasPrefix(b.f, "(") {
			// An untyped string literal, cast to the other side's type.
			g.tag("string literal as date/int")
			b = strLit(strings.TrimSuffix(strings.TrimPrefix(b.f, "DATE '"), "'"))
		}
	} else {
		t2 := t
		switch {
		case t == fInt && g.chance(0.3):
			t2 = fDec
		case t == fDate && g.chance(0.2):
			t2 = fTS
		}
		b = g.expr(c, t2, d-1)
	}
	op := pick(g, []string{"=", "<>", "<", "<=", ">", ">="})
	if t == fBool {
		op = pick(g, []string{"=", "<>"})
	}
	return nf(fBool, "(%s "+op+" %s)", a, b)
}

// ---- subqueries ----

// subSelect returns the body of a subquery over one or two tables and
// the context of its expressions; corr asks for a correlation with c.
func (g *fgen) subSelect(c *ectx, corr bool) (*selectQ, *ectx) {
	q := &selectQ{}
	n := 1
	if g.chance(0.2) {
		n = 2
	}
	sc := g.fromClause(q, n, false)
	ic := &ectx{sc: sc, sub: c.sub - 1}
	if corr {
		if ps := g.correlation(sc, c.sc); ps != nil {
			q.where = append(q.where, ps...)
		}
	}
	for i := g.intn(3); i > 0; i-- {
		q.where = append(q.where, g.boolExpr(ic, 1+g.intn(2)))
	}
	return q, ic
}

// correlation returns conditions tying inner to outer: an equality of
// integer columns (of one key domain when there is one), sometimes with
// a non-equality.
func (g *fgen) correlation(inner, outer *fscope) []*node {
	var ins, outs []scol
	for _, r := range inner.rels {
		for _, c := range r.cols {
			if c.typ == fInt {
				ins = append(ins, c)
			}
		}
	}
	for _, r := range outer.rels {
		for _, c := range r.cols {
			if c.typ == fInt {
				outs = append(outs, c)
			}
		}
	}
	if len(ins) == 0 || len(outs) == 0 {
		return nil
	}
	type pair struct{ i, o scol }
	var same []pair
	for _, i := range ins {
		for _, o := range outs {
			if i.dom != nil && o.dom != nil && i.dom.tag != "" && i.dom.tag == o.dom.tag {
				same = append(same, pair{i, o})
			}
		}
	}
	var p pair
	if len(same) > 0 && g.chance(0.85) {
		p = pick(g, same)
	} else {
		p = pair{pick(g, ins), pick(g, outs)}
	}
	g.tag("correlated subquery")
	ref := func(c scol) *node { return &node{f: c.ref, typ: fInt, col: c.dom} }
	out := []*node{nf(fBool, "(%s = %s)", ref(p.i), ref(p.o))}
	if g.chance(0.15) {
		g.tag("non-equality correlation")
		out = append(out, nf(fBool, "(%s "+pick(g, []string{"<", ">=", "<>"})+" %s)", ref(pick(g, ins)), ref(pick(g, outs))))
	}
	if g.chance(0.1) {
		g.tag("non-equality correlation")
		out = out[1:]
		if len(out) == 0 {
			out = []*node{nf(fBool, "(%s < %s)", ref(p.i), ref(p.o))}
		}
	}
	return out
}

// scalarSub returns a scalar subquery of type t: an aggregate, often
// correlated.
func (g *fgen) scalarSub(c *ectx, t ftype) *node {
	g.tag("scalar subquery")
	q, ic := g.subSelect(c, g.chance(0.55))
	q.items = []*node{g.aggregate(ic, t)}
	return &node{f: "(%s)", sub: q, typ: t}
}

// subqueryPred returns EXISTS, IN, NOT IN, a quantified comparison or a
// comparison with a scalar subquery.
func (g *fgen) subqueryPred(c *ectx, d int) *node {
	switch g.pickW(3, 3, 3, 1, 2, 1) {
	case 5:
		g.tag("row-valued IN (subquery)")
		a, b := g.expr(c, fInt, d-1), g.expr(c, fInt, d-1)
		q, ic := g.subSelect(c, g.chance(0.3))
		q.items = []*node{g.inItem(ic, a), g.inItem(ic, b)}
		op := pick(g, []string{"IN", "NOT IN"})
		return &node{f: "((%s, %s) " + op + " (%s))", kids: []*node{a, b}, sub: q, typ: fBool}
	case 0:
		q, _ := g.subSelect(c, g.chance(0.75))
		q.items = []*node{intLit(1)}
		if g.chance(0.4) {
			g.tag("NOT EXISTS")
			return &node{f: "(NOT EXISTS (%s))", sub: q, typ: fBool}
		}
		g.tag("EXISTS")
		return &node{f: "(EXISTS (%s))", sub: q, typ: fBool}
	case 1, 2:
		t := fInt
		if g.chance(0.2) {
			t = fStr
		}
		a := g.expr(c, t, d-1)
		q, ic := g.subSelect(c, g.chance(0.3))
		item := g.inItem(ic, a)
		if g.chance(0.3) {
			g.tag("NULLs in the IN subquery")
			if g.chance(0.5) {
				item = nf(t, "nullif(%s, %s)", item, g.litFor(item))
			} else {
				item = nf(t, "CASE WHEN %s THEN %s END", g.boolExpr(ic, 1), item)
			}
		}
		q.items = []*node{item}
		if g.chance(0.5) {
			g.tag("NOT IN (subquery)")
			return &node{f: "(%s NOT IN (%s))", kids: []*node{a}, sub: q, typ: fBool}
		}
		g.tag("IN (subquery)")
		return &node{f: "(%s IN (%s))", kids: []*node{a}, sub: q, typ: fBool}
	case 3:
		g.tag("quantified ANY/ALL")
		a := g.expr(c, fInt, d-1)
		q, ic := g.subSelect(c, g.chance(0.3))
		q.items = []*node{g.inItem(ic, a)}
		f := "(%s " + pick(g, []string{"=", "<>", "<", ">="}) + " " + pick(g, []string{"ANY", "ALL", "SOME"}) + " (%s))"
		return &node{f: f, kids: []*node{a}, sub: q, typ: fBool}
	default:
		t := pick(g, []ftype{fInt, fDec})
		a := g.expr(c, t, d-1)
		s := g.scalarSub(c, t)
		return nf(fBool, "(%s "+pick(g, []string{"=", "<", ">", "<>"})+" %s)", a, s)
	}
}

// inItem returns the select item of an IN subquery for the outer value a:
// a column of a's key domain when there is one.
func (g *fgen) inItem(ic *ectx, a *node) *node {
	if a.col != nil && a.col.tag != "" {
		var cs []scol
		for _, r := range ic.sc.rels {
			for _, c := range r.cols {
				if c.dom != nil && c.dom.tag == a.col.tag {
					cs = append(cs, c)
				}
			}
		}
		if len(cs) > 0 {
			c := pick(g, cs)
			return &node{f: c.ref, typ: c.typ, col: c.dom}
		}
	}
	return g.expr(ic, a.typ, 1)
}

// ---- windows ----

// window returns a window function call of type t, or nil. Functions
// whose value depends on the order of peers (row_number, lag, ntile,
// first_value, ROWS frames) get the scope's total order.
func (g *fgen) window(c *ectx, t ftype) *node {
	var parts []string
	for i := g.intn(3); i > 0; i-- {
		if k := g.lowCardCol(c.sc); k != nil {
			parts = append(parts, k.f)
		}
	}
	total := c.sc.orderKeys()
	dir := func() string {
		return pick(g, []string{"", " DESC", " NULLS FIRST", " DESC NULLS LAST"})
	}
	var ord []string
	ordered := false
	useTotal := total != nil && g.chance(0.6)
	switch {
	case useTotal:
		for _, k := range total {
			ord = append(ord, k+dir())
		}
		ordered = true
	case g.chance(0.6):
		for i := 1 + g.intn(2); i > 0; i-- {
			if k := g.col(c.sc, g.anyType()); k != nil {
				ord = append(ord, k.f+dir())
				ordered = true
			}
		}
	}
	over := func(frame string) string {
		var b []string
		if len(parts) > 0 {
			b = append(b, "PARTITION BY "+strings.Join(parts, ", "))
		}
		if len(ord) > 0 {
			b = append(b, "ORDER BY "+strings.Join(ord, ", "))
		}
		if frame != "" {
			b = append(b, frame)
		}
		return " OVER (" + strings.Join(b, " ") + ")"
	}
	// A RANGE frame with offsets needs one numeric ORDER BY key.
	rangeKey := false
	if !useTotal && g.chance(0.2) {
		if k := g.col(c.sc, pick(g, []ftype{fInt, fDec})); k != nil {
			ord = []string{k.f + pick(g, []string{"", " DESC"})}
			ordered, rangeKey = true, true
		}
	}
	frame := func() string {
		if !ordered {
			return ""
		}
		exclude := ""
		if g.chance(0.15) {
			g.tag("frame EXCLUDE")
			exclude = " EXCLUDE " + pick(g, []string{"GROUP", "TIES"})
			if useTotal {
				exclude = " EXCLUDE " + pick(g, []string{"CURRENT ROW", "GROUP", "TIES", "NO OTHERS"})
			}
		}
		switch g.intn(7) {
		case 0:
			if useTotal {
				return "ROWS BETWEEN " + strconv.Itoa(1+g.intn(3)) + " PRECEDING AND CURRENT ROW" + exclude
			}
		case 1:
			if useTotal {
				return "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 FOLLOWING" + exclude
			}
		case 2:
			return "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW" + exclude
		case 3:
			return "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
		case 4:
			g.tag("GROUPS frame")
			return "GROUPS BETWEEN " + strconv.Itoa(g.intn(3)) + " PRECEDING AND " + pick(g, []string{"CURRENT ROW", "1 FOLLOWING"}) + exclude
		case 5:
			if rangeKey {
				g.tag("RANGE offset frame")
				return "RANGE BETWEEN " + strconv.Itoa(1+g.intn(10)) + " PRECEDING AND " + pick(g, []string{"CURRENT ROW", "5 FOLLOWING"}) + exclude
			}
		}
		return ""
	}
	arg := func(t ftype) *node {
		if n := g.col(c.sc, t); n != nil {
			return n
		}
		return nil
	}
	g.tag("window function")
	switch t {
	case fInt:
		switch g.intn(6) {
		case 0:
			if useTotal {
				return leafN(fInt, "row_number()"+over(""))
			}
			return leafN(fInt, "rank()"+over(""))
		case 1:
			return leafN(fInt, pick(g, []string{"rank()", "dense_rank()"})+over(""))
		case 2:
			if useTotal {
				return leafN(fInt, "ntile("+strconv.Itoa(2+g.intn(4))+")"+over(""))
			}
			return leafN(fInt, "count(*)"+over(frame()))
		case 3:
			if a := arg(fInt); a != nil {
				return nf(fInt, "sum(%s)"+over(frame()), a)
			}
		case 4:
			if a := arg(fInt); a != nil && useTotal {
				g.tag("lag/lead")
				fn := pick(g, []string{"lag", "lead"})
				switch g.intn(3) {
				case 0:
					return nf(fInt, fn+"(%s)"+over(""), a)
				case 1:
					return nf(fInt, fn+"(%s, "+strconv.Itoa(1+g.intn(3))+")"+over(""), a)
				default:
					return nf(fInt, fn+"(%s, 1, %s)"+over(""), a, g.lit(fInt, a.col))
				}
			}
		default:
			if a := arg(fInt); a != nil {
				return nf(fInt, pick(g, []string{"min", "max", "count"})+"(%s)"+over(frame()), a)
			}
		}
		return leafN(fInt, "count(*)"+over(""))
	case fDec:
		a := arg(fDec)
		if a == nil {
			return nil
		}
		if useTotal && g.chance(0.3) {
			g.tag("first_value/last_value")
			if g.chance(0.3) {
				g.tag("nth_value")
				return nf(fDec, "nth_value(%s, "+strconv.Itoa(1+g.intn(3))+")"+over(frame()), a)
			}
			return nf(fDec, pick(g, []string{"first_value", "last_value", "lag", "lead"})+"(%s)"+over(""), a)
		}
		return nf(fDec, pick(g, []string{"sum", "min", "max"})+"(%s)"+over(frame()), a)
	case fDbl:
		if ordered && g.chance(0.4) {
			return leafN(fDbl, pick(g, []string{"percent_rank()", "cume_dist()"})+over(""))
		}
		a := arg(pick(g, []ftype{fInt, fDec}))
		if a == nil {
			return nil
		}
		return nf(fDbl, "avg(%s)"+over(frame()), a)
	case fStr, fDate:
		a := arg(t)
		if a == nil {
			return nil
		}
		if useTotal && g.chance(0.5) {
			return nf(t, pick(g, []string{"first_value", "lag", "lead"})+"(%s)"+over(""), a)
		}
		return nf(t, g.minmax()+"(%s)"+over(frame()), a)
	}
	return nil
}

// ---- FROM ----

var (
	tableWeights = map[string]int{"region": 2, "nation": 4, "supplier": 3, "customer": 3, "part": 3, "partsupp": 2, "orders": 3, "lineitem": 2}
	lightWeights = map[string]int{"region": 3, "nation": 5, "supplier": 4, "customer": 2, "part": 2, "partsupp": 1, "orders": 2, "lineitem": 1}
)

func (g *fgen) baseTable() *ftable {
	ws := make([]int, len(fuzzTables))
	for i, t := range fuzzTables {
		ws[i] = g.weights[t.name]
	}
	return fuzzTables[g.pickW(ws...)]
}

func (g *fgen) baseRel(t *ftable) (*fromItem, *frel) {
	a := g.alias(t.prefix)
	rel := &frel{alias: a, rows: t.rows}
	for i := range t.cols {
		c := &t.cols[i]
		rel.cols = append(rel.cols, scol{ref: a + "." + c.name, typ: c.typ, dom: c, ndv: c.ndv})
	}
	for _, k := range t.key {
		rel.keys = append(rel.keys, a+"."+k)
	}
	return &fromItem{table: t.name, alias: a}, rel
}

// relation returns a FROM item: mostly a table, sometimes (derived) a
// derived table or a CTE.
func (g *fgen) relation(derived bool) (*fromItem, *frel) {
	if derived && g.top != nil {
		switch {
		case len(g.ctes) > 0 && g.chance(0.15):
			g.tag("CTE referenced twice")
			return g.cteRef(pick(g, g.ctes))
		case g.chance(0.07):
			g.tag("CTE")
			q, rel := g.derivedQuery()
			name := g.alias("w")
			g.top.with = append(g.top.with, &cte{name: name, q: q})
			cr := &cteRel{name: name, rel: rel}
			g.ctes = append(g.ctes, cr)
			return g.cteRef(cr)
		case g.chance(0.12):
			g.tag("derived table")
			q, rel := g.derivedQuery()
			a := g.alias("d")
			return &fromItem{sub: q, alias: a}, rel.as(a)
		}
	}
	return g.baseRel(g.baseTable())
}

func (g *fgen) cteRef(cr *cteRel) (*fromItem, *frel) {
	a := g.alias("v")
	return &fromItem{table: cr.name, alias: a}, cr.rel.as(a)
}

// as returns the relation under another qualifier.
func (r *frel) as(alias string) *frel {
	out := &frel{alias: alias, rows: r.rows}
	for _, c := range r.cols {
		c.ref = alias + c.ref[strings.IndexByte(c.ref, '.'):]
		out.cols = append(out.cols, c)
	}
	if r.keys != nil {
		out.keys = []string{}
		for _, k := range r.keys {
			out.keys = append(out.keys, alias+k[strings.IndexByte(k, '.'):])
		}
	}
	return out
}

// fromClause fills q.from with n relations joined and returns their
// scope; derived allows derived tables and CTEs.
func (g *fgen) fromClause(q *selectQ, n int, derived bool) *fscope {
	item, rel := g.relation(derived)
	q.from = append(q.from, item)
	sc := &fscope{rels: []*frel{rel}, rows: rel.rows}
	for i := 1; i < n; i++ {
		g.join(q, sc, derived)
	}
	return sc
}

// equiPair finds an integer column pair between left and right to join
// on (a key domain in common when there is one, sometimes any pair) and
// the estimated rows of that join.
func (g *fgen) equiPair(left, right *fscope) (l, r scol, est float64, ok bool) {
	type pair struct {
		l, r scol
		est  float64
	}
	var same, other []pair
	for _, lr := range left.rels {
		for _, lc := range lr.cols {
			if lc.typ != fInt {
				continue
			}
			for _, rr := range right.rels {
				for _, rc := range rr.cols {
					if rc.typ != fInt {
						continue
					}
					est := left.rows * right.rows / max(lc.ndv, rc.ndv, 1)
					if est > g.maxRows {
						continue
					}
					p := pair{lc, rc, est}
					if lc.dom != nil && rc.dom != nil && lc.dom.tag != "" && lc.dom.tag == rc.dom.tag {
						same = append(same, p)
					} else if lc.ndv >= 5 && rc.ndv >= 5 {
						other = append(other, p)
					}
				}
			}
		}
	}
	var p pair
	switch {
	case len(same) > 0 && (len(other) == 0 || g.chance(0.85)):
		p = pick(g, same)
	case len(other) > 0:
		p = pick(g, other)
	default:
		return scol{}, scol{}, 0, false
	}
	return p.l, p.r, p.est, true
}

func colNode(c scol) *node { return &node{f: c.ref, typ: c.typ, col: c.dom} }

// join attaches one more relation (or a parenthesized join of two) to q's
// FROM with a join of some kind, keeping the estimated rows in bounds.
func (g *fgen) join(q *selectQ, sc *fscope, derived bool) {
	kinds := []string{"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN"}
	kind := kinds[g.pickW(40, 25, 10, 10, 5)]
	for try := 0; try < 6; try++ {
		var item *fromItem
		var right *fscope
		if g.chance(0.1) {
			item, right = g.nestedJoin()
			if item == nil {
				continue
			}
		} else {
			it, rel := g.relation(derived)
			item, right = it, &fscope{rels: []*frel{rel}, rows: rel.rows}
		}
		cross := sc.rows*right.rows <= 20000
		var on []*node
		var est float64
		l, r, e, ok := g.equiPair(sc, right)
		switch {
		case kind == "CROSS JOIN" && cross:
			est = sc.rows * right.rows
		case ok && !(cross && g.chance(0.15)):
			on = append(on, nf(fBool, "(%s = %s)", colNode(l), colNode(r)))
			est = e
		case cross:
			// A join without an equality: every pair a candidate.
			g.tag("non-equi join")
			est = sc.rows * right.rows
			both := &fscope{rels: append(append([]*frel(nil), sc.rels...), right.rels...)}
			on = append(on, g.boolExpr(&ectx{sc: both}, 1))
		default:
			continue
		}
		if kind == "CROSS JOIN" && !cross {
			kind = "JOIN"
		}
		switch kind {
		case "LEFT JOIN":
			est = max(est, sc.rows)
		case "RIGHT JOIN":
			est = max(est, right.rows)
		case "FULL JOIN":
			est = max(est, sc.rows+right.rows)
		}
		if est > g.maxRows {
			continue
		}
		if kind != "CROSS JOIN" {
			// More conditions: a filter on the new side (what makes an
			// outer join pad), a comparison across, or anything.
			both := &fscope{rels: append(append([]*frel(nil), sc.rels...), right.rels...)}
			for i := g.pickW(5, 4, 1); i > 0; i-- {
				switch g.intn(3) {
				case 0:
					on = append(on, g.compare(&ectx{sc: right}, 1))
				case 1:
					on = append(on, g.compare(&ectx{sc: both}, 1))
				default:
					on = append(on, g.boolExpr(&ectx{sc: both}, 2))
				}
			}
		}
		g.tag(kind)
		item.join, item.on = kind, on
		q.from = append(q.from, item)
		sc.rels = append(sc.rels, right.rels...)
		sc.rows = max(est, 1)
		return
	}
}

// nestedJoin returns a parenthesized join of two tables on a key.
func (g *fgen) nestedJoin() (*fromItem, *fscope) {
	a, ra := g.baseRel(g.baseTable())
	left := &fscope{rels: []*frel{ra}, rows: ra.rows}
	for try := 0; try < 4; try++ {
		b, rb := g.baseRel(g.baseTable())
		right := &fscope{rels: []*frel{rb}, rows: rb.rows}
		l, r, est, ok := g.equiPair(left, right)
		if !ok {
			continue
		}
		b.join = pick(g, []string{"JOIN", "LEFT JOIN", "JOIN"})
		if b.join == "LEFT JOIN" {
			est = max(est, ra.rows)
		}
		b.on = []*node{nf(fBool, "(%s = %s)", colNode(l), colNode(r))}
		if g.chance(0.5) {
			b.on = append(b.on, g.compare(&ectx{sc: right}, 1))
		}
		g.tag("parenthesized join")
		return &fromItem{nested: []*fromItem{a, b}}, &fscope{rels: []*frel{ra, rb}, rows: max(est, 1)}
	}
	return nil, nil
}

// ---- grouping ----

// groupKey returns a grouping key and its estimated distinct values;
// lowCard keeps to keys with few values.
func (g *fgen) groupKey(c *ectx, lowCard bool) (*node, float64) {
	switch g.pickW(8, 2, 1, 1, 1, 1) {
	case 0:
		if lowCard {
			if k := g.lowCardCol(c.sc); k != nil {
				return k, g.ndvOf(c.sc, k.f)
			}
		} else {
			k := g.col(c.sc, g.scopeType(c, g.anyType))
			if k != nil {
				return k, g.ndvOf(c.sc, k.f)
			}
		}
	case 1:
		if d := g.col(c.sc, fDate); d != nil {
			switch g.intn(3) {
			case 0:
				return nf(fInt, "extract(year FROM %s)", d), 8
			case 1:
				return nf(fInt, "month(%s)", d), 12
			default:
				g.tag("date_trunc")
				return nf(fTS, "date_trunc('year', %s)", d), 8
			}
		}
	case 2:
		if k := g.col(c.sc, fInt); k != nil {
			g.tag("modulo")
			return nf(fInt, "(%s %% 4)", k), 4
		}
	case 3:
		if s := g.col(c.sc, fStr); s != nil {
			return nf(fStr, "substring(%s, 1, 1)", s), 30
		}
	case 4:
		return g.compare(c, 1), 3
	case 5:
		x, y := g.col(c.sc, fInt), g.col(c.sc, fInt)
		if x != nil && y != nil {
			// 0/0, 1/0, 0/1, 1/1: NaN and Infinity as keys.
			g.tag("NaN/Infinity key")
			return nf(fDbl, "(CAST((%s %% 2) AS DOUBLE) / CAST((%s %% 2) AS DOUBLE))", x, y), 5
		}
	}
	if k := g.lowCardCol(c.sc); k != nil {
		return k, g.ndvOf(c.sc, k.f)
	}
	return g.compare(c, 1), 3
}

func (g *fgen) ndvOf(sc *fscope, ref string) float64 {
	for _, r := range sc.rels {
		for _, c := range r.cols {
			if c.ref == ref {
				return max(c.ndv, 1)
			}
		}
	}
	return sc.rows
}

// grouped fills q's GROUP BY with n keys (plain, ROLLUP, CUBE or GROUPING
// SETS), puts the keys first in the select list and returns the context
// for the aggregate items and the estimated groups.
func (g *fgen) grouped(q *selectQ, c *ectx, n int, lowCard, sets bool) (*ectx, float64) {
	var keys []*node
	groups := 1.0
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		k, ndv := g.groupKey(c, lowCard)
		if seen[k.sql()] {
			continue
		}
		seen[k.sql()] = true
		keys = append(keys, k)
		groups *= ndv + 1
	}
	groups = min(groups, c.sc.rows+1)
	gr := &grouping{}
	mode := 0
	if sets {
		mode = g.pickW(10, 3, 2, 3)
	}
	switch mode {
	case 0:
		gr.keys = keys
	case 1, 2:
		if len(keys) > 1 && g.chance(0.3) {
			gr.plain, keys = keys[:1], keys[1:]
		}
		gr.mode = []string{"", "ROLLUP", "CUBE"}[mode]
		gr.keys = keys
		g.tag(gr.mode)
	default:
		gr.mode = "GROUPING SETS"
		gr.keys = keys
		// Every key in some set (else it is no grouping column).
		all := make([]int, len(keys))
		for i := range all {
			all[i] = i
		}
		gr.sets = append(gr.sets, all)
		for i := g.intn(3); i > 0; i-- {
			var s []int
			for j := range keys {
				if g.chance(0.5) {
					s = append(s, j)
				}
			}
			gr.sets = append(gr.sets, s)
		}
		g.tag("GROUPING SETS")
	}
	q.group = gr
	all := append(append([]*node(nil), gr.plain...), gr.keys...)
	for _, k := range all {
		q.items = append(q.items, k.clone())
	}
	if gr.mode != "" && g.chance(0.4) {
		g.tag("GROUPING()")
		q.items = append(q.items, nf(fInt, "grouping(%s)", pick(g, gr.keys).clone()))
	}
	return &ectx{sc: c.sc, agg: true, keys: all}, groups
}

// ---- queries ----

// orderAll orders q by every output column, each in a random direction.
func (g *fgen) orderAll(q *selectQ) {
	q.order = nil
	for _, i := range g.r.Perm(len(q.items)) {
		o := orderKey{pos: i + 1, desc: g.chance(0.4)}
		switch g.intn(4) {
		case 0:
			o.nulls = "NULLS FIRST"
		case 1:
			o.nulls = "NULLS LAST"
		}
		q.order = append(q.order, o)
	}
}

// limitAll orders q totally and keeps a few rows.
func (g *fgen) limitAll(q *selectQ) {
	g.orderAll(q)
	if g.sortExpr != nil && !q.distinct && q.group == nil && len(q.setops) == 0 && g.chance(0.3) {
		// An expression that is not an output column first: the output
		// columns after it still order totally.
		g.tag("ORDER BY expression")
		q.order = append([]orderKey{{e: g.sortExpr(), desc: g.chance(0.5), nulls: pick(g, []string{"", "NULLS FIRST", "NULLS LAST"})}}, q.order...)
	}
	g.sortExpr = nil
	q.limit = 1 + g.intn(25)
	if g.chance(0.15) {
		g.tag("OFFSET")
		q.offset = 1 + g.intn(10)
	}
}

func (g *fgen) where(q *selectQ, c *ectx, max int) {
	c = c.noWin()
	for i := g.intn(max + 1); i > 0; i-- {
		q.where = append(q.where, g.boolExpr(c, 1+g.intn(3)))
	}
}

// diffQuery returns a query for the differential oracle.
func (g *fgen) diffQuery() *selectQ {
	switch g.pickW(35, 18, 14, 12, 8) {
	case 0:
		return g.aggQuery()
	case 1:
		return g.projQuery()
	case 2:
		return g.setopQuery()
	case 3:
		return g.windowQuery()
	default:
		// A query over a derived table or CTE.
		q := &selectQ{}
		g.top = q
		it, rel := g.derivedQuery()
		if g.chance(0.5) {
			name := g.alias("w")
			q.with = append(q.with, &cte{name: name, q: it})
			cr := &cteRel{name: name, rel: rel}
			g.ctes = append(g.ctes, cr)
			item, r := g.cteRef(cr)
			q.from = []*fromItem{item}
			g.tag("CTE")
			return g.finishOver(q, &fscope{rels: []*frel{r}, rows: rel.rows})
		}
		a := g.alias("d")
		q.from = []*fromItem{{sub: it, alias: a}}
		g.tag("derived table")
		return g.finishOver(q, &fscope{rels: []*frel{rel.as(a)}, rows: rel.rows})
	}
}

// finishOver completes q over the scope sc: sometimes joined to a table,
// then aggregated or projected with a total order and a LIMIT.
func (g *fgen) finishOver(q *selectQ, sc *fscope) *selectQ {
	if g.chance(0.4) {
		g.join(q, sc, false)
	}
	c := &ectx{sc: sc, sub: 1}
	g.where(q, c, 2)
	if g.chance(0.5) {
		ac, groups := g.grouped(q, c, 1+g.intn(2), false, true)
		for i := 1 + g.intn(2); i > 0; i-- {
			q.items = append(q.items, g.expr(ac, g.anyAggType(), 1+g.intn(2)))
		}
		if groups > 40 {
			g.limitAll(q)
		}
		return q
	}
	for i := 1 + g.intn(3); i > 0; i-- {
		q.items = append(q.items, g.expr(c, g.scopeType(c, g.anyType), 2))
	}
	g.limitAll(q)
	return q
}

func (g *fgen) anyAggType() ftype {
	return []ftype{fInt, fDec, fDbl, fStr, fDate, fBool}[g.pickW(6, 4, 2, 2, 2, 1)]
}

// aggQuery: aggregates, grouped (plain, ROLLUP, CUBE, GROUPING SETS) or
// not, with HAVING.
func (g *fgen) aggQuery() *selectQ {
	q := &selectQ{}
	g.top = q
	sc := g.fromClause(q, 1+g.intn(4), true)
	c := &ectx{sc: sc, sub: 1}
	g.where(q, c, 3)
	if g.chance(0.25) {
		for i := 1 + g.intn(4); i > 0; i-- {
			q.items = append(q.items, g.expr(&ectx{sc: sc, agg: true}, g.anyAggType(), 1+g.intn(2)))
		}
		return q
	}
	ac, groups := g.grouped(q, c, 1+g.intn(3), g.chance(0.6), true)
	for i := 1 + g.intn(3); i > 0; i-- {
		q.items = append(q.items, g.expr(ac, g.anyAggType(), 1+g.intn(2)))
	}
	if g.chance(0.35) {
		g.tag("HAVING")
		q.having = append(q.having, g.boolExpr(ac, 1+g.intn(2)))
	}
	if groups > 40 || g.chance(0.2) {
		g.limitAll(q)
	}
	return q
}

// projQuery: rows of expressions (DISTINCT sometimes, windows sometimes),
// ordered totally and limited.
func (g *fgen) projQuery() *selectQ {
	q := &selectQ{}
	g.top = q
	sc := g.fromClause(q, 1+g.intn(4), true)
	c := &ectx{sc: sc, sub: 1 + g.intn(2), win: g.chance(0.2)}
	g.where(q, c, 3)
	for i := 1 + g.intn(4); i > 0; i-- {
		q.items = append(q.items, g.expr(c, g.scopeType(c, g.anyType), 1+g.intn(3)))
	}
	if g.chance(0.2) {
		g.tag("DISTINCT")
		q.distinct = true
	}
	nc := c.noWin()
	nc.sub = 0
	g.sortExpr = func() *node { return g.expr(nc, g.scopeType(nc, g.anyType), 2) }
	g.limitAll(q)
	return q
}

// branch returns a SELECT of one value of each type in ts.
func (g *fgen) branch(ts []ftype, table *ftable) *selectQ {
	q := &selectQ{}
	item, rel := g.baseRel(table)
	q.from = []*fromItem{item}
	sc := &fscope{rels: []*frel{rel}, rows: rel.rows}
	if g.chance(0.3) {
		g.join(q, sc, false)
	}
	c := &ectx{sc: sc, sub: 1}
	for _, t := range ts {
		e := g.col(sc, t)
		if e == nil || g.chance(0.3) {
			e = g.expr(c, t, 1+g.intn(2))
		}
		q.items = append(q.items, e)
	}
	g.where(q, c, 2)
	return q
}

var setOps = []string{"UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"}

// setopQuery: two or three branches under set operations, ordered and
// limited or aggregated in an outer query.
func (g *fgen) setopQuery() *selectQ {
	n := 1 + g.intn(3)
	var ts []ftype
	for i := 0; i < n; i++ {
		ts = append(ts, []ftype{fInt, fStr, fDec, fDate}[g.pickW(4, 3, 2, 1)])
	}
	t := g.baseTable()
	first := g.branch(ts, t)
	for i := 1 + g.intn(2); i > 0; i-- {
		bt := t
		if g.chance(0.3) {
			bt = g.baseTable()
		}
		op := pick(g, setOps)
		g.tag(op)
		first.setops = append(first.setops, &setop{op: op, q: g.branch(ts, bt)})
	}
	if g.chance(0.5) {
		g.limitAll(first)
		return first
	}
	// SELECT aggregates FROM (set operation) d
	q := &selectQ{}
	a := g.alias("d")
	q.from = []*fromItem{{sub: first, alias: a}}
	rel := &frel{alias: a, rows: 1000}
	for i, t := range ts {
		rel.cols = append(rel.cols, scol{ref: fmt.Sprintf("%s.c%d", a, i), typ: t, dom: first.items[i].col, ndv: 1000})
	}
	sc := &fscope{rels: []*frel{rel}, rows: 1000}
	q.items = append(q.items, leafN(fInt, "count(*)"))
	for i := g.intn(3); i > 0; i-- {
		q.items = append(q.items, g.aggregate(&ectx{sc: sc}, g.anyAggType()))
	}
	return q
}

// windowQuery: window functions over a FROM, aggregated outside or
// ordered totally and limited.
func (g *fgen) windowQuery() *selectQ {
	in := &selectQ{}
	g.top = in
	sc := g.fromClause(in, 1+g.intn(2), false)
	c := &ectx{sc: sc, win: true}
	g.where(in, c.noWin(), 2)
	var ts []ftype
	for i := 1 + g.intn(2); i > 0; i-- {
		t := []ftype{fInt, fDec, fDbl, fStr, fDate}[g.pickW(6, 3, 2, 1, 1)]
		w := g.window(c, t)
		if w == nil {
			continue
		}
		ts = append(ts, t)
		in.items = append(in.items, w)
	}
	if len(in.items) == 0 {
		in.items = append(in.items, leafN(fInt, "rank() OVER ()"))
		ts = append(ts, fInt)
	}
	if g.chance(0.3) {
		k, _ := g.groupKey(&ectx{sc: sc}, true)
		in.items = append(in.items, k)
		ts = append(ts, k.typ)
	}
	if g.chance(0.25) {
		if w := g.window(c, fInt); w != nil {
			g.tag("QUALIFY")
			in.qualify = append(in.qualify, nf(fBool, "(%s "+pick(g, []string{"<=", "=", ">"})+" %s)", w, intLit(1+g.intn(3))))
		}
	}
	if g.chance(0.4) {
		g.limitAll(in)
		return in
	}
	q := &selectQ{}
	a := g.alias("d")
	q.from = []*fromItem{{sub: in, alias: a}}
	rel := &frel{alias: a, rows: sc.rows}
	for i, t := range ts {
		rel.cols = append(rel.cols, scol{ref: fmt.Sprintf("%s.c%d", a, i), typ: t, ndv: 50})
	}
	osc := &fscope{rels: []*frel{rel}, rows: sc.rows}
	if g.chance(0.3) {
		q.where = append(q.where, g.compare(&ectx{sc: osc}, 1))
	}
	if g.chance(0.4) {
		ac, _ := g.grouped(q, &ectx{sc: osc}, 1, true, false)
		q.items = append(q.items, g.aggregate(ac, g.anyAggType()))
		g.limitAll(q)
		return q
	}
	q.items = append(q.items, leafN(fInt, "count(*)"))
	for i := 1 + g.intn(3); i > 0; i-- {
		q.items = append(q.items, g.aggregate(&ectx{sc: osc}, pick(g, []ftype{fInt, fDec, fStr, fDbl})))
	}
	return q
}

func (c *ectx) noWin() *ectx {
	d := *c
	d.win = false
	return &d
}

// derivedQuery returns a query to use as a derived table or CTE and the
// relation it makes (qualified by "_" until renamed with as).
func (g *fgen) derivedQuery() (*selectQ, *frel) {
	q := &selectQ{}
	var keys []int
	rows := 0.0
	g.depth++
	defer func() { g.depth-- }()
	switch g.pickW(4, 3, 2, 1, 1) {
	case 0:
		sc := g.fromClause(q, 1+g.intn(2), g.depth < 2 && g.chance(0.3))
		c := &ectx{sc: sc, sub: 1}
		g.where(q, c, 1)
		ac, groups := g.grouped(q, c, 1+g.intn(2), false, g.chance(0.2))
		if q.group.mode == "" {
			for i := range q.items {
				keys = append(keys, i)
			}
		}
		for i := 1 + g.intn(2); i > 0; i-- {
			q.items = append(q.items, g.aggregate(ac, g.anyAggType()))
		}
		if g.chance(0.2) {
			q.having = append(q.having, g.boolExpr(ac, 1))
		}
		rows = groups
	case 1, 3, 4:
		t := g.baseTable()
		item, rel := g.baseRel(t)
		q.from = []*fromItem{item}
		sc := &fscope{rels: []*frel{rel}, rows: rel.rows}
		c := &ectx{sc: sc, sub: 1}
		for _, k := range rel.keys {
			keys = append(keys, len(q.items))
			q.items = append(q.items, &node{f: k, typ: fInt, col: t.col(k[strings.IndexByte(k, '.')+1:])})
		}
		for i := 1 + g.intn(3); i > 0; i-- {
			q.items = append(q.items, g.expr(c, g.scopeType(c, g.anyType), 1+g.intn(2)))
		}
		g.where(q, c, 2)
		rows = t.rows
		if g.chance(0.3) {
			g.tag("window function")
			cw := &ectx{sc: sc, win: true}
			if w := g.window(cw, pick(g, []ftype{fInt, fDec})); w != nil {
				q.items = append(q.items, w)
			}
		}
		if g.chance(0.25) {
			g.tag("LIMIT in a derived table")
			g.orderAll(q)
			q.limit = 20 + g.intn(500)
			rows = float64(q.limit)
		}
	default:
		var ts []ftype
		for i := 1 + g.intn(2); i > 0; i-- {
			ts = append(ts, []ftype{fInt, fStr, fDec}[g.intn(3)])
		}
		t := g.baseTable()
		q = g.branch(ts, t)
		op := pick(g, setOps)
		g.tag(op)
		q.setops = append(q.setops, &setop{op: op, q: g.branch(ts, t)})
		rows = 2 * t.rows
		if !strings.HasSuffix(op, "ALL") {
			for i := range q.items {
				keys = append(keys, i)
			}
		}
	}
	rel := &frel{alias: "_", rows: max(rows, 1)}
	for i, it := range q.items {
		ndv := rows
		if it.col != nil {
			ndv = min(it.col.ndv, rows)
		}
		rel.cols = append(rel.cols, scol{ref: fmt.Sprintf("_.c%d", i), typ: it.typ, dom: it.col, ndv: max(ndv, 1)})
	}
	if keys != nil {
		rel.keys = []string{}
		for _, k := range keys {
			rel.keys = append(rel.keys, fmt.Sprintf("_.c%d", k))
		}
	}
	return q, rel
}
