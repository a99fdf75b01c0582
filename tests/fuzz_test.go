package tests

import (
	"context"
	"crypto/sha1"
	"database/sql"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/planner/plan"
)

// A differential and metamorphic SQL fuzzer (issue 29). Queries come from
// the generator in fuzz_gen_test.go, deterministic from a seed, and are
// checked by three oracles:
//
//   - diff: the query's answer on sluice against DuckDB's on the same
//     Parquet files (as multisets, or in order under a total ORDER BY,
//     floats within compareRows' tolerance);
//   - TLP, ternary logic partitioning (Rigger and Su, OOPSLA 2020, as in
//     SQLancer): a query Q and its three partitions by a predicate p
//     (WHERE p, WHERE NOT p, WHERE p IS NULL, as one UNION ALL query) must
//     agree: tlp-where (count(*)), tlp-agg (min/max/sum/count recombined
//     over the partitions), tlp-group (the same per group), tlp-having (the
//     partitions of HAVING p hold the groups of Q), tlp-distinct (the
//     DISTINCT rows of Q are those of the partitions);
//   - NoREC, non-optimizing reference engine construction (Rigger and Su,
//     ESEC/FSE 2020): SELECT count(*) FROM F WHERE p equals the sum of
//     CASE WHEN p THEN 1 ELSE 0 END over F, p evaluated as a value so no
//     rewrite of the WHERE applies.
//
// The metamorphic oracles run on sluice alone. A refusal (SL005) is
// counted by the construct the error names, never a failure; an internal
// error (SL9xx, SL200 "failed after N attempts", or no code) always is.
//
// TestFuzzSample is a short fixed-seed run in `make test`; `make fuzz`
// runs TestFuzzLong with a random seed (FUZZ_SEED replays one), prints the
// counts and writes every mismatch, shrunk, to testdata/fuzz/.

var (
	fuzzN        = flag.Int("fuzz-n", 0, "TestFuzzLong: generated queries for the differential oracle (0 skips the test)")
	fuzzChecks   = flag.Int("fuzz-checks", 500, "TestFuzzLong: TLP and NoREC checks")
	fuzzSeed     = flag.Uint64("fuzz-seed", 0, "TestFuzzLong: seed (0: a random one, printed)")
	fuzzOut      = flag.String("fuzz-out", filepath.Join("testdata", "fuzz"), "TestFuzzLong: folder for the shrunk mismatches")
	fuzzMinimize = flag.Int("fuzz-minimize", 300, "query runs one shrink may spend")
	fuzzCase     = flag.String("fuzz-case", "", "run only these cases (comma-separated, e.g. q17,c4) of the seed")
	fuzzVerbose  = flag.Bool("fuzz-v", false, "log every case")
)

// fuzzSampleSeed fixes TestFuzzSample's queries.
const fuzzSampleSeed = 20260429

// knownMismatch is an open bug the fixed-seed sample meets: a case that
// matches it (its SQL the pattern, or the case the match function) is run
// and counted but does not fail the test. Each entry names its bug and
// gives its minimal query; remove the entry when the bug is fixed.
type knownMismatch struct {
	bug     string
	pattern *regexp.Regexp
	match   func(c *fcase) bool
}

// knownMismatches is the skip list of TestFuzzSample (TestFuzzLong
// reports matching failures as known, and still writes them out).
// It is empty: its one entry (the decimal common type of decimal(38,4)
// and decimal(38,2), where sluice kept scale 4 and DuckDB cuts to 2) is
// fixed, and its records are in fuzz_regressions.slt.
var knownMismatches = []knownMismatch{}

// walkQueries calls fn on q and every query inside it.
func walkQueries(q *selectQ, fn func(*selectQ)) {
	if q == nil {
		return
	}
	fn(q)
	for _, w := range q.with {
		walkQueries(w.q, fn)
	}
	for _, s := range q.setops {
		walkQueries(s.q, fn)
	}
	var from func([]*fromItem)
	from = func(fs []*fromItem) {
		for _, f := range fs {
			walkQueries(f.sub, fn)
			from(f.nested)
			for _, n := range f.on {
				walkNodes(n, fn)
			}
		}
	}
	from(q.from)
	for _, ns := range [][]*node{q.items, q.where, q.having, q.qualify} {
		for _, n := range ns {
			walkNodes(n, fn)
		}
	}
}

func walkNodes(n *node, fn func(*selectQ)) {
	if n == nil {
		return
	}
	for _, k := range n.kids {
		walkNodes(k, fn)
	}
	walkQueries(n.sub, fn)
}

// knownBug returns the bug a failing case is known for, or "".
func knownBug(c *fcase) string {
	sqls := c.queries()
	for _, k := range knownMismatches {
		if k.match != nil && k.match(c) {
			return k.bug
		}
		if k.pattern == nil {
			continue
		}
		for _, s := range sqls {
			if k.pattern.MatchString(s) {
				return k.bug
			}
		}
	}
	return ""
}

// ---- cases ----

// fcase is one generated test.
type fcase struct {
	name   string
	oracle string // diff, tlp-where, tlp-agg, tlp-group, tlp-having, tlp-distinct, norec
	q      *selectQ
	// p is the metamorphic oracles' predicate (of HAVING for tlp-having).
	p *node
	// combine says how tlp-agg and tlp-group recombine each select item
	// over the partitions: key, min, max, sum, count.
	combine []string
	// norecInline: NoREC's reference sums CASE WHEN p inside the
	// aggregate (else over a derived table's column).
	norecInline bool
	adaptive    bool
	tags        []string
}

func (c *fcase) clone() *fcase {
	d := *c
	d.q = c.q.clone()
	d.p = c.p.clone()
	return &d
}

// edit applies the k-th shrinking edit; false when there is none.
func (c *fcase) edit(k int) bool {
	e := &editor{k: k, fixed: c.oracle != "diff"}
	e.query(c.q, true)
	if !e.done && c.p != nil {
		e.node(&c.p)
	}
	return e.done
}

var oracles = []string{"tlp-where", "tlp-agg", "tlp-group", "tlp-having", "tlp-distinct", "norec"}

// genCase generates case idx of the given kind ("q": differential, "c":
// metamorphic) of a run.
func genCase(seed uint64, kind string, idx int, light bool) *fcase {
	g := newFgen(seed^map[string]uint64{"q": 0, "c": 0x5bd1e995}[kind], idx, light)
	c := &fcase{name: fmt.Sprintf("%s%d", kind, idx), adaptive: idx%4 != 3}
	if kind == "q" {
		c.oracle = "diff"
		c.q = g.diffQuery()
	} else {
		c.oracle = oracles[g.pickW(4, 3, 2, 2, 1, 4)]
		g.oracleCase(c)
	}
	for t := range g.tags {
		c.tags = append(c.tags, t)
	}
	sort.Strings(c.tags)
	return c
}

// oracleCase fills a metamorphic case: a FROM (joins of every kind), a
// base WHERE sometimes, the items the oracle needs and a predicate.
func (g *fgen) oracleCase(c *fcase) {
	q := &selectQ{}
	g.top = q
	sc := g.fromClause(q, 1+g.intn(5), true)
	ec := &ectx{sc: sc, sub: 1}
	if g.chance(0.3) {
		q.where = append(q.where, g.boolExpr(ec, 2))
	}
	c.q = q
	c.p = g.boolExpr(ec, 1+g.intn(3))
	switch c.oracle {
	case "tlp-where", "norec":
		q.items = []*node{leafN(fInt, "count(*)")}
		c.norecInline = g.chance(0.5)
	case "tlp-agg":
		for i := 1 + g.intn(4); i > 0; i-- {
			n, how := g.decomposable(ec)
			q.items = append(q.items, n)
			c.combine = append(c.combine, how)
		}
	case "tlp-group", "tlp-having":
		ac, _ := g.grouped(q, ec, 1+g.intn(2), true, false)
		for range q.items {
			c.combine = append(c.combine, "key")
		}
		for i := 1 + g.intn(3); i > 0; i-- {
			n, how := g.decomposable(ec)
			q.items = append(q.items, n)
			c.combine = append(c.combine, how)
		}
		if c.oracle == "tlp-having" {
			c.p = g.boolExpr(ac, 1+g.intn(2))
		}
	case "tlp-distinct":
		q.distinct = true
		for i := 1 + g.intn(2); i > 0; i-- {
			k, _ := g.groupKey(ec, true)
			q.items = append(q.items, k)
		}
	}
}

// decomposable returns an aggregate that recombines over partitions and
// how: min, max, sum or count.
func (g *fgen) decomposable(c *ectx) (*node, string) {
	in := &ectx{sc: c.sc}
	switch g.pickW(3, 3, 3, 3) {
	case 0, 1:
		fn := []string{"min", "max"}[g.intn(2)]
		t := g.scopeType(in, g.anyType)
		return nf(t, fn+"(%s)", g.expr(in, t, 1+g.intn(2))), fn
	case 2:
		t := pick(g, []ftype{fInt, fDec})
		return nf(t, "sum(%s)", g.expr(in, t, 1+g.intn(2))), "sum"
	default:
		if g.chance(0.3) {
			return leafN(fInt, "count(*)"), "count"
		}
		if g.chance(0.2) {
			return nf(fInt, "count(*) FILTER (WHERE %s)", g.boolExpr(in, 1)), "count"
		}
		return nf(fInt, "count(%s)", g.expr(in, g.scopeType(in, g.anyType), 1+g.intn(2))), "count"
	}
}

// partitions returns q's three partitions by p as one UNION ALL query:
// p, NOT p and p IS NULL added to WHERE (to HAVING when having).
func partitions(q *selectQ, p *node, having bool) *selectQ {
	preds := []*node{
		p.clone(),
		nf(fBool, "(NOT %s)", p.clone()),
		nf(fBool, "(%s IS NULL)", p.clone()),
	}
	var out *selectQ
	for _, pp := range preds {
		b := q.clone()
		if having {
			b.having = append(b.having, pp)
		} else {
			b.where = append(b.where, pp)
		}
		if out == nil {
			out = b
			continue
		}
		b.with = nil
		out.setops = append(out.setops, &setop{op: "UNION ALL", q: b})
	}
	return out
}

// queries returns the SQL a case runs: the query (diff); Q and its
// partitions (TLP); the optimized and the reference query (NoREC).
func (c *fcase) queries() []string {
	switch c.oracle {
	case "diff":
		return []string{c.q.sql()}
	case "tlp-having":
		return []string{c.q.sql(), partitions(c.q, c.p, true).sql()}
	case "norec":
		opt := c.q.clone()
		opt.where = append(opt.where, c.p.clone())
		ref := c.q.clone()
		cw := nf(fInt, "CASE WHEN %s THEN 1 ELSE 0 END", c.p.clone())
		if c.norecInline {
			ref.items = []*node{nf(fInt, "sum(%s)", cw)}
			return []string{opt.sql(), ref.sql()}
		}
		ref.items = []*node{cw}
		outer := &selectQ{with: ref.with, items: []*node{leafN(fInt, "sum(t.c0)")}, from: []*fromItem{{sub: ref, alias: "t"}}}
		ref.with = nil
		return []string{opt.sql(), outer.sql()}
	default:
		return []string{c.q.sql(), partitions(c.q, c.p, false).sql()}
	}
}

// ---- running ----

type fuzzEnv struct {
	st *local.Stack
	db *sql.DB
}

func newFuzzEnv(t *testing.T) *fuzzEnv {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	return &fuzzEnv{st: st, db: db}
}

// qres is one engine's answer.
type qres struct {
	rows []row
	err  error
	code string
}

func (r qres) String() string {
	if r.err != nil {
		return "error: " + oneLine(r.err.Error())
	}
	return strings.Join(renderRows(r.rows, ""), "\n")
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}

const fuzzTimeout = 90 * time.Second

func (e *fuzzEnv) sluice(q string, adaptive bool) qres {
	ctx, cancel := context.WithTimeout(context.Background(), fuzzTimeout)
	defer cancel()
	res, err := e.st.Query(ctx, q, &adaptive, nil)
	if err != nil {
		code := plan.CodeOf(err)
		if code == "" && errors.Is(err, context.DeadlineExceeded) {
			code = "timeout"
		}
		return qres{err: err, code: code}
	}
	defer res.Release()
	return qres{rows: sluiceRows(res)}
}

func (e *fuzzEnv) duck(q string) qres {
	ctx, cancel := context.WithTimeout(context.Background(), fuzzTimeout)
	defer cancel()
	out, err := duckQuery(ctx, e.db, q)
	if err != nil {
		return qres{err: err, code: "duckdb"}
	}
	return qres{rows: out}
}

// internalCode reports whether a sluice error is a bug: SL9xx, SL200
// (failed after N attempts) or no code at all.
func internalCode(code string) bool {
	return code == "" || strings.HasPrefix(code, "SL9") || code == plan.CodeRetriesExhausted
}

// outcome is what one case came to.
type outcome struct {
	kind string // pass, mismatch, internal, error-mismatch, refused, rejected, duck-rejected, both-failed, user-error, timeout
	// key groups outcomes for the statistics: the refusal's construct, the
	// error's kind.
	key    string
	detail string
	sluice []qres
	duck   []qres
}

func (o outcome) failure() bool {
	switch o.kind {
	case "mismatch", "internal", "error-mismatch":
		return true
	}
	return false
}

var (
	reNames  = regexp.MustCompile(`\b[a-z]+[0-9]+\.[a-z_0-9]+`)
	reNums   = regexp.MustCompile(`[0-9]+`)
	reQuoted = regexp.MustCompile(`"[^"]*"|'[^']*'`)
)

// constructKey names an error's construct for the statistics: its
// message with the code, names, numbers and quoted text taken out.
func constructKey(err error) string {
	return errKey(err, true)
}

func errKey(err error, quoted bool) string {
	s := err.Error()
	if i := strings.Index(s, "unsupported: "); i >= 0 {
		s = s[i+len("unsupported: "):]
	} else if i := strings.Index(s, ": "); i >= 0 && i < 40 {
		s = s[i+2:]
	}
	s = strings.SplitN(s, "\n", 2)[0]
	s = reNames.ReplaceAllString(s, "<col>")
	if quoted {
		s = reQuoted.ReplaceAllString(s, "<s>")
		s = reNums.ReplaceAllString(s, "N")
	}
	if len(s) > 140 {
		s = s[:140]
	}
	return s
}

// classify turns the answers to one query into an outcome (diff).
func classify(s, d qres, ordered bool) outcome {
	o := outcome{sluice: []qres{s}, duck: []qres{d}}
	switch {
	case s.code == plan.CodeUnsupported:
		o.kind, o.key = "refused", constructKey(s.err)
	case s.code == "timeout":
		o.kind, o.key = "timeout", "timeout"
	case s.err != nil && internalCode(s.code):
		o.kind, o.key = "internal", s.code+" "+constructKey(s.err)
	case s.err != nil && d.err != nil:
		o.kind, o.key = "both-failed", s.code+" / "+errKey(d.err, false)
	case d.err != nil:
		o.kind, o.key = "duck-rejected", errKey(d.err, false)
	case s.err != nil && strings.HasPrefix(s.code, "SL0"):
		o.kind, o.key = "rejected", s.code+" "+constructKey(s.err)
	case s.err != nil:
		o.kind, o.key = "error-mismatch", s.code+" "+constructKey(s.err)
	default:
		if diff := fuzzDiff(s.rows, d.rows, ordered); diff != "" {
			o.kind, o.detail = "mismatch", diff
		} else {
			o.kind = "pass"
		}
	}
	return o
}

// fuzzDiff compares rows as compareRows does, except that unordered rows
// that differ only within the float tolerance across the sort keys'
// rounding still match, and NaN equals NaN.
func fuzzDiff(got, want []row, ordered bool) string {
	d := rowsDiff(got, want, ordered)
	if d == "" || ordered || len(got) != len(want) {
		return d
	}
	used := make([]bool, len(want))
next:
	for _, g := range got {
		for j, w := range want {
			if !used[j] && rowsEqual(g, w) {
				used[j] = true
				continue next
			}
		}
		return d
	}
	return ""
}

func rowsEqual(a, b row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equalValue(a[i], b[i]) {
			return false
		}
	}
	return true
}

// run runs a case on sluice (and DuckDB for diff) and judges it.
func (e *fuzzEnv) run(c *fcase) outcome {
	qs := c.queries()
	if c.oracle == "diff" {
		s := e.sluice(qs[0], c.adaptive)
		if s.code == plan.CodeUnsupported {
			return classify(s, qres{}, false)
		}
		return classify(s, e.duck(qs[0]), c.q.totalOrder())
	}
	o := outcome{}
	for _, q := range qs {
		s := e.sluice(q, c.adaptive)
		o.sluice = append(o.sluice, s)
		if s.err != nil {
			switch {
			case s.code == plan.CodeUnsupported:
				o.kind, o.key = "refused", constructKey(s.err)
			case s.code == "timeout":
				o.kind, o.key = "timeout", "timeout"
			case internalCode(s.code):
				o.kind, o.key = "internal", s.code+" "+constructKey(s.err)
			default:
				o.kind, o.key = "user-error", s.code+" "+constructKey(s.err)
			}
			return o
		}
	}
	if d := c.judge(o.sluice[0].rows, o.sluice[1].rows); d != "" {
		o.kind, o.detail = "mismatch", d
	} else {
		o.kind = "pass"
	}
	return o
}

// judge checks a metamorphic oracle: a is Q's answer, b the partitions'
// (the reference's for NoREC).
func (c *fcase) judge(a, b []row) string {
	switch c.oracle {
	case "norec":
		x, y := scalarOf(a), scalarOf(b)
		if y == nil {
			y = 0.0
		}
		if !equalValue(x, y) {
			return fmt.Sprintf("count(*) WHERE p = %v, sum(CASE WHEN p THEN 1 ELSE 0 END) = %v", x, y)
		}
		return ""
	case "tlp-where":
		sum := 0.0
		var parts []string
		for _, r := range b {
			f, _ := r[0].(float64)
			sum += f
			parts = append(parts, renderValue(r[0]))
		}
		if !equalValue(scalarOf(a), sum) {
			return fmt.Sprintf("count(*) = %v, partitions %s sum to %v", scalarOf(a), strings.Join(parts, " + "), sum)
		}
		return ""
	case "tlp-agg", "tlp-group":
		comb := recombine(b, c.combine)
		if d := fuzzDiff(a, comb, false); d != "" {
			return "Q differs from its partitions recombined: " + d
		}
		return ""
	case "tlp-distinct":
		if d := fuzzDiff(distinctRows(a), distinctRows(b), false); d != "" {
			return "DISTINCT rows of Q differ from those of its partitions: " + d
		}
		return ""
	default: // tlp-having
		if d := fuzzDiff(b, a, false); d != "" {
			return "the HAVING partitions differ from Q's groups: " + d
		}
		return ""
	}
}

func scalarOf(rs []row) any {
	if len(rs) != 1 || len(rs[0]) != 1 {
		return fmt.Sprintf("%d rows", len(rs))
	}
	return rs[0][0]
}

func distinctRows(rs []row) []row {
	seen := map[string]bool{}
	var out []row
	for _, r := range rs {
		k := rowKey(r)
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// recombine folds the partitions' rows into one row per key: min of the
// mins, max of the maxes, sum of the sums and of the counts (NULLs, the
// aggregates of an empty partition, ignored).
func recombine(rs []row, how []string) []row {
	var order []string
	groups := map[string]row{}
	for _, r := range rs {
		var kparts []string
		for i, h := range how {
			if h == "key" {
				kparts = append(kparts, rowKey(row{r[i]}))
			}
		}
		k := strings.Join(kparts, "\x00")
		acc, ok := groups[k]
		if !ok {
			groups[k] = append(row(nil), r...)
			order = append(order, k)
			continue
		}
		for i, h := range how {
			if h == "key" {
				continue
			}
			acc[i] = combineValue(acc[i], r[i], h)
		}
	}
	out := make([]row, 0, len(order))
	for _, k := range order {
		out = append(out, groups[k])
	}
	return out
}

func combineValue(a, b any, how string) any {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	switch how {
	case "sum", "count":
		fa, _ := a.(float64)
		fb, _ := b.(float64)
		return fa + fb
	}
	less := false
	switch x := a.(type) {
	case float64:
		less = x < b.(float64)
	case string:
		less = x < b.(string)
	case bool:
		less = !x && b.(bool)
	}
	if (how == "min") == less {
		return a
	}
	return b
}

// ---- statistics ----

type fuzzStats struct {
	generated, compared, matched, mismatched int
	refused, rejected, duckRejected          int
	bothFailed, errMismatch, internal        int
	timeouts, userErrors, known              int
	checks, checksPassed, checksFailed       int
	checksRefused, checksSkipped             int
	byOracle                                 map[string]*[3]int // run, passed, failed
	refusedBy, rejectedBy, duckBy, internBy  map[string]int
	failures                                 []*finding
	start                                    time.Time
}

type finding struct {
	c         *fcase // as generated
	min       *fcase // shrunk
	o         outcome
	known     string
	file      string
	shrunkRun int
}

func newFuzzStats() *fuzzStats {
	return &fuzzStats{byOracle: map[string]*[3]int{}, refusedBy: map[string]int{}, rejectedBy: map[string]int{},
		duckBy: map[string]int{}, internBy: map[string]int{}, start: time.Now()}
}

func (s *fuzzStats) add(c *fcase, o outcome) {
	bo := s.byOracle[c.oracle]
	if bo == nil {
		bo = &[3]int{}
		s.byOracle[c.oracle] = bo
	}
	bo[0]++
	diff := c.oracle == "diff"
	if diff {
		s.generated++
	} else {
		s.checks++
	}
	switch o.kind {
	case "pass":
		bo[1]++
		if diff {
			s.compared++
			s.matched++
		} else {
			s.checksPassed++
		}
	case "mismatch":
		bo[2]++
		if diff {
			s.compared++
			s.mismatched++
		} else {
			s.checksFailed++
		}
	case "refused":
		s.refusedBy[o.key]++
		if diff {
			s.refused++
		} else {
			s.checksRefused++
		}
	case "internal":
		bo[2]++
		s.internal++
		s.internBy[o.key]++
	case "error-mismatch":
		bo[2]++
		s.errMismatch++
	case "rejected":
		s.rejected++
		s.rejectedBy[o.key]++
	case "duck-rejected":
		s.duckRejected++
		s.duckBy[o.key]++
	case "both-failed":
		s.bothFailed++
		s.duckBy["(both failed) "+o.key]++
	case "timeout":
		s.timeouts++
	case "user-error":
		s.userErrors++
		s.checksSkipped++
		s.rejectedBy["(check) "+o.key]++
	}
}

func topN(m map[string]int, n int) []string {
	type kv struct {
		k string
		v int
	}
	var kvs []kv
	for k, v := range m {
		kvs = append(kvs, kv{k, v})
	}
	sort.Slice(kvs, func(i, j int) bool {
		if kvs[i].v != kvs[j].v {
			return kvs[i].v > kvs[j].v
		}
		return kvs[i].k < kvs[j].k
	})
	var out []string
	for i, x := range kvs {
		if i == n {
			break
		}
		out = append(out, fmt.Sprintf("%5d  %s", x.v, x.k))
	}
	return out
}

func (s *fuzzStats) report(seed uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "fuzz seed %d, %s\n", seed, time.Since(s.start).Round(time.Second))
	fmt.Fprintf(&b, "differential: generated %d, compared %d, matched %d, mismatched %d, refused (SL005) %d, errors where DuckDB answers %d, rejected by sluice (SL0xx) %d, rejected by DuckDB %d, both failed %d\n",
		s.generated, s.compared, s.matched, s.mismatched, s.refused, s.errMismatch, s.rejected, s.duckRejected, s.bothFailed)
	fmt.Fprintf(&b, "TLP/NoREC: checks %d, passed %d, failed %d, refused %d, skipped (user errors) %d\n",
		s.checks, s.checksPassed, s.checksFailed, s.checksRefused, s.checksSkipped)
	fmt.Fprintf(&b, "internal errors %d, timeouts %d, known bugs %d\n", s.internal, s.timeouts, s.known)
	var names []string
	for k := range s.byOracle {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := s.byOracle[k]
		fmt.Fprintf(&b, "  %-13s run %4d  passed %4d  failed %d\n", k, v[0], v[1], v[2])
	}
	section := func(title string, m map[string]int) {
		if len(m) > 0 {
			fmt.Fprintf(&b, "%s:\n  %s\n", title, strings.Join(topN(m, 15), "\n  "))
		}
	}
	section("refused by construct (top)", s.refusedBy)
	section("internal errors", s.internBy)
	section("rejected by sluice", s.rejectedBy)
	section("rejected by DuckDB (generator)", s.duckBy)
	return b.String()
}

// ---- shrinking and records ----

// stillFails reports whether a shrunk candidate fails as the original
// did: the same outcome kind (and code, for errors), DuckDB still
// accepting a differential query.
func (e *fuzzEnv) stillFails(c *fcase, want outcome) bool {
	o := e.run(c)
	if o.kind != want.kind {
		return false
	}
	switch o.kind {
	case "internal", "error-mismatch":
		return o.sluice[0].code == want.sluice[0].code || o.sluice[len(o.sluice)-1].code == want.sluice[len(want.sluice)-1].code
	}
	return true
}

// shrink removes parts of a failing case while it still fails.
func (e *fuzzEnv) shrink(c *fcase, o outcome, budget int) (*fcase, int) {
	cur := c
	runs := 0
	seen := map[string]bool{strings.Join(c.queries(), ";"): true}
	for progress := true; progress && runs < budget; {
		progress = false
		for k := 0; runs < budget; k++ {
			cand := cur.clone()
			if !cand.edit(k) {
				break
			}
			key := strings.Join(cand.queries(), ";")
			if seen[key] {
				continue
			}
			seen[key] = true
			runs++
			if e.stillFails(cand, o) {
				cur = cand
				progress = true
				k--
			}
		}
	}
	return cur, runs
}

func typeLetters(rs []row, n int) string {
	letters := make([]byte, n)
	for i := range letters {
		letters[i] = 'T'
		seen := false
		for _, r := range rs {
			if i >= len(r) || r[i] == nil {
				continue
			}
			switch v := r[i].(type) {
			case bool:
				letters[i] = 'B'
			case float64:
				if letters[i] != 'R' {
					letters[i] = 'I'
				}
				if v != math.Trunc(v) {
					letters[i] = 'R'
				}
			}
			seen = true
		}
		_ = seen
	}
	return string(letters)
}

// record renders a finding as sqllogictest-like records: each query with
// DuckDB's answer as the expectation and sluice's in comments.
func (e *fuzzEnv) record(f *finding, seed uint64) string {
	c := f.min
	var b strings.Builder
	fmt.Fprintf(&b, "# fuzz: %s (%s) found by seed %d case %s (%s)\n", f.o.kind, c.oracle, seed, c.name, map[bool]string{true: "adaptive", false: "static"}[c.adaptive])
	if f.known != "" {
		fmt.Fprintf(&b, "# known: %s\n", f.known)
	}
	fmt.Fprintf(&b, "# constructs: %s\n", strings.Join(f.c.tags, ", "))
	if f.o.detail != "" {
		for _, l := range strings.Split(f.o.detail, "\n") {
			fmt.Fprintf(&b, "# %s\n", l)
		}
	}
	if c.p != nil {
		fmt.Fprintf(&b, "# predicate p: %s\n", c.p.sql())
	}
	fmt.Fprintf(&b, "# as generated:\n#   %s\n", strings.Join(f.c.queries(), "\n#   "))
	for i, q := range c.queries() {
		s := e.sluice(q, c.adaptive)
		d := e.duck(q)
		b.WriteString("\n# sluice:\n")
		for _, l := range strings.Split(s.String(), "\n") {
			fmt.Fprintf(&b, "#   %s\n", l)
		}
		sortMode := "rowsort"
		if c.oracle == "diff" && c.q.totalOrder() {
			sortMode = "nosort"
		}
		if d.err != nil {
			fmt.Fprintf(&b, "# DuckDB: error: %s\n", oneLine(d.err.Error()))
			continue
		}
		ncols := 0
		if len(d.rows) > 0 {
			ncols = len(d.rows[0])
		} else if c.oracle == "diff" {
			ncols = len(c.q.items)
		} else if i == 0 || c.oracle != "norec" {
			ncols = len(c.q.items)
		} else {
			ncols = 1
		}
		fmt.Fprintf(&b, "query %s %s\n%s\n----\n", typeLetters(d.rows, ncols), sortMode, q)
		for _, l := range renderRows(d.rows, sortMode) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// ---- the run ----

type fuzzConfig struct {
	seed            uint64
	queries, checks int
	shrinkBudget    int
	outDir          string // "" writes no files
	only            map[string]bool
	light           bool
	shrinkKnown     bool
	logAll          bool
}

func (e *fuzzEnv) fuzz(t *testing.T, cfg fuzzConfig) *fuzzStats {
	s := newFuzzStats()
	var cases []func() *fcase
	// Interleave the differential cases and the checks.
	total := cfg.queries + cfg.checks
	qi, ci := 0, 0
	for i := 0; i < total; i++ {
		if ci < cfg.checks && (qi >= cfg.queries || ci*total <= i*cfg.checks) {
			idx := ci
			cases = append(cases, func() *fcase { return genCase(cfg.seed, "c", idx, cfg.light) })
			ci++
		} else {
			idx := qi
			cases = append(cases, func() *fcase { return genCase(cfg.seed, "q", idx, cfg.light) })
			qi++
		}
	}
	for i, mk := range cases {
		c := mk()
		if cfg.only != nil && !cfg.only[c.name] {
			continue
		}
		t0 := time.Now()
		o := e.run(c)
		s.add(c, o)
		if cfg.logAll || *fuzzVerbose || o.kind == "timeout" || o.kind == "rejected" {
			// Timeouts and sluice's rejections of what DuckDB answers are
			// not failures, but each is worth a look: say which query.
			t.Logf("%s %s %s %v %s\n  %s\n  sluice: %s", c.name, c.oracle, o.kind, time.Since(t0).Round(time.Millisecond), o.key, strings.Join(c.queries(), "\n  "), firstErr(o.sluice))
		}
		if !o.failure() {
			if (i+1)%100 == 0 {
				t.Logf("%d/%d cases, %s", i+1, total, time.Since(s.start).Round(time.Second))
			}
			continue
		}
		f := &finding{c: c, min: c, o: o, known: knownBug(c)}
		if f.known != "" {
			s.known++
		}
		if cfg.shrinkBudget > 0 && (f.known == "" || cfg.shrinkKnown) {
			f.min, f.shrunkRun = e.shrink(c, o, cfg.shrinkBudget)
			if k := knownBug(f.min); k != "" && f.known == "" {
				f.known = k
				s.known++
			}
		}
		if cfg.outDir != "" {
			rec := e.record(f, cfg.seed)
			h := sha1.Sum([]byte(strings.Join(f.min.queries(), ";")))
			f.file = filepath.Join(cfg.outDir, fmt.Sprintf("%s-%s-%s.slt", f.o.kind, f.min.oracle, hex.EncodeToString(h[:])[:10]))
			if err := os.MkdirAll(cfg.outDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f.file, []byte(rec), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s.failures = append(s.failures, f)
		t.Logf("%s: %s %s (%s)%s\n  %s\n  %s", c.name, c.oracle, o.kind, o.key, map[bool]string{true: " known: " + f.known, false: ""}[f.known != ""],
			strings.Join(f.min.queries(), "\n  "), oneLine(o.detail))
	}
	return s
}

// TestFuzzSample runs a fixed-seed sample of the fuzzer: 150 queries
// against DuckDB and 60 TLP/NoREC checks. Everything it checks must pass
// (known bugs aside, see knownMismatches); refusals are counted only.
func TestFuzzSample(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	env := newFuzzEnv(t)
	cfg := fuzzConfig{seed: fuzzSampleSeed, queries: 150, checks: 60, shrinkBudget: 40, light: true}
	cfg.only = onlyCases()
	s := env.fuzz(t, cfg)
	t.Log("\n" + s.report(cfg.seed))
	for _, f := range s.failures {
		if f.known == "" {
			t.Errorf("%s %s %s: %s\n  %s\n  sluice: %s\n  %s", f.c.name, f.c.oracle, f.o.kind, f.o.key,
				strings.Join(f.min.queries(), "\n  "), firstErr(f.o.sluice), oneLine(f.o.detail))
		}
	}
	if s.duckRejected > 0 || s.rejected > 0 {
		t.Logf("the generator made %d queries DuckDB rejects and %d sluice rejects (see above)", s.duckRejected, s.rejected)
	}
}

func firstErr(rs []qres) string {
	for _, r := range rs {
		if r.err != nil {
			return oneLine(r.err.Error())
		}
	}
	return "ok"
}

func onlyCases() map[string]bool {
	if *fuzzCase == "" {
		return nil
	}
	m := map[string]bool{}
	for _, s := range strings.Split(*fuzzCase, ",") {
		m[strings.TrimSpace(s)] = true
	}
	return m
}

// TestFuzzLong is `make fuzz`: -fuzz-n queries and -fuzz-checks checks
// from -fuzz-seed (random when 0), every failure shrunk and written under
// -fuzz-out. It fails when anything failed.
func TestFuzzLong(t *testing.T) {
	if *fuzzN <= 0 {
		t.Skip("run with -fuzz-n N (make fuzz)")
	}
	seed := *fuzzSeed
	if seed == 0 {
		seed = rand.Uint64() % 1_000_000_000
	}
	t.Logf("fuzz seed %d (replay: make fuzz FUZZ_SEED=%d)", seed, seed)
	env := newFuzzEnv(t)
	cfg := fuzzConfig{seed: seed, queries: *fuzzN, checks: *fuzzChecks, shrinkBudget: *fuzzMinimize, shrinkKnown: true, outDir: *fuzzOut, only: onlyCases()}
	s := env.fuzz(t, cfg)
	rep := s.report(seed)
	fmt.Println(rep)
	for _, f := range s.failures {
		fmt.Printf("%s %s %s %s%s\n  file %s\n  %s\n", f.c.name, f.c.oracle, f.o.kind, f.o.key,
			map[bool]string{true: " (known: " + f.known + ")", false: ""}[f.known != ""], f.file, strings.Join(f.min.queries(), "\n  "))
	}
	if len(s.failures) > s.known {
		t.Errorf("%d failures (%d known)", len(s.failures), s.known)
	}
}

// TestFuzzGenDeterministic: the generator makes the same cases from the
// same seed (no stack needed).
func TestFuzzGenDeterministic(t *testing.T) {
	for _, kind := range []string{"q", "c"} {
		for i := 0; i < 200; i++ {
			a, b := genCase(fuzzSampleSeed, kind, i, i%2 == 0), genCase(fuzzSampleSeed, kind, i, i%2 == 0)
			if qa, qb := strings.Join(a.queries(), ";"), strings.Join(b.queries(), ";"); qa != qb {
				t.Fatalf("%s%d differs between two generations:\n%s\n%s", kind, i, qa, qb)
			}
		}
	}
}

var fuzzSQL = flag.String("fuzz-sql", "", "TestFuzzSQL: run this SQL on sluice (adaptive and static) and DuckDB, print the answers and compare them")

// TestFuzzSQL replays one query (-fuzz-sql) on both engines, to look at a
// finding: go test ./tests/ -run TestFuzzSQL -v -args -fuzz-sql "SELECT ...".
// It fails when sluice's rows differ from DuckDB's (as multisets) or one
// engine fails where the other does not.
func TestFuzzSQL(t *testing.T) {
	if *fuzzSQL == "" {
		t.Skip("run with -fuzz-sql")
	}
	env := newFuzzEnv(t)
	d := env.duck(*fuzzSQL)
	t.Logf("DuckDB:\n%s", d)
	for _, adaptive := range []bool{true, false} {
		r := env.sluice(*fuzzSQL, adaptive)
		t.Logf("sluice (adaptive %v):\n%s", adaptive, r)
		// Rows compared as multisets: an ORDER BY's order is not checked.
		if o := classify(r, d, false); o.kind != "pass" && o.kind != "refused" {
			t.Errorf("adaptive %v: %s %s %s", adaptive, o.kind, o.key, o.detail)
		}
	}
}
