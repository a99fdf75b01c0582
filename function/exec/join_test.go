package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Random join inputs. Probe columns: k1 int64, k2 string, kd date, v int64,
// p decimal(10,2). Build columns: k1 int64, k2 string, kd date, w int64,
// b bool. Keys come from tiny domains (many duplicates) with NULLs.
var (
	jProbeSchema = plan.Schema{{Name: "k1", Type: i64T}, {Name: "k2", Type: strT}, {Name: "kd", Type: dateT}, {Name: "v", Type: i64T}, {Name: "p", Type: d102}}
	jBuildSchema = plan.Schema{{Name: "k1", Type: i64T}, {Name: "k2", Type: strT}, {Name: "kd", Type: dateT}, {Name: "w", Type: i64T}, {Name: "b", Type: boolT}}
)

func randRows(rng *rand.Rand, n int, build bool) [][]any {
	maybe := func(v any) any {
		if rng.Intn(7) == 0 {
			return nil
		}
		return v
	}
	strsDom := []string{"a", "b", "c"}
	datesDom := []string{"1995-03-15", "1996-01-01", "1998-12-01"}
	out := make([][]any, n)
	for i := range out {
		r := []any{
			maybe(int64(rng.Intn(5))),
			maybe(strsDom[rng.Intn(3)]),
			maybe(datesDom[rng.Intn(3)]),
			maybe(int64(rng.Intn(10))),
		}
		if build {
			r = append(r, maybe(rng.Intn(2) == 0))
		} else {
			r = append(r, maybe(plan.FormatDecimal(int64(rng.Intn(10000)-5000), 2)))
		}
		out[i] = r
	}
	return out
}

// batchesOf splits rows into record batches of random sizes.
func batchesOf(t *testing.T, rng *rand.Rand, mem memory.Allocator, schema plan.Schema, rws [][]any) []arrow.RecordBatch {
	t.Helper()
	var recs []arrow.RecordBatch
	for lo := 0; lo < len(rws); {
		hi := min(len(rws), lo+1+rng.Intn(12))
		cols := make([]col, len(schema))
		for c, f := range schema {
			cols[c] = col{f.Name, f.Type, nil}
			for _, r := range rws[lo:hi] {
				cols[c].vals = append(cols[c].vals, r[c])
			}
		}
		recs = append(recs, mkRec(mem, cols...))
		lo = hi
	}
	return recs
}

type joinCase struct {
	keys   [][2]int // probe column, build column
	filter string   // "", "lt", "lt-or-b"
}

func (c joinCase) String() string {
	return fmt.Sprintf("keys=%v/filter=%q", c.keys, c.filter)
}

// refFilter is the Go version of the test filters over a (probe, build) pair;
// it returns TRUE, FALSE or NULL (nil).
func refFilter(kind string, p, b []any) any {
	if kind == "" {
		return true
	}
	var lt any
	if p[3] != nil && b[3] != nil {
		lt = p[3].(int64) < b[3].(int64)
	}
	if kind == "lt" {
		return lt
	}
	bb := b[4]
	if lt == true || bb == true {
		return true
	}
	if lt == false && bb == false {
		return false
	}
	return nil
}

func filterExpr(kind string) *plan.Expr {
	lt := call(plan.OpLt, boolT, cref(3, i64T), cref(5+3, i64T))
	switch kind {
	case "lt":
		return lt
	case "lt-or-b":
		return call(plan.OpOr, boolT, lt, cref(5+4, boolT))
	}
	return nil
}

// refJoin is the nested-loop reference.
func refJoin(jt plan.JoinType, nullAware bool, c joinCase, probe, build [][]any) [][]any {
	keyNull := func(r []any, side int) bool {
		for _, k := range c.keys {
			if r[k[side]] == nil {
				return true
			}
		}
		return false
	}
	match := func(p, b []any) bool {
		for _, k := range c.keys {
			if p[k[0]] == nil || b[k[1]] == nil || p[k[0]] != b[k[1]] {
				return false
			}
		}
		return refFilter(c.filter, p, b) == true
	}
	nulls := func(n int) []any { return make([]any, n) }
	cat := func(a, b []any) []any { return append(append([]any{}, a...), b...) }
	var out [][]any
	if nullAware {
		for _, b := range build {
			if keyNull(b, 1) {
				return nil
			}
		}
	}
	bm := make([]bool, len(build))
	for _, p := range probe {
		matched := false
		for bi, b := range build {
			if match(p, b) {
				matched = true
				bm[bi] = true
				switch jt {
				case plan.JoinInner, plan.JoinLeft, plan.JoinRight, plan.JoinFull:
					out = append(out, cat(p, b))
				}
			}
		}
		switch {
		case (jt == plan.JoinLeft || jt == plan.JoinFull) && !matched:
			out = append(out, cat(p, nulls(len(jBuildSchema))))
		case jt == plan.JoinSemi && matched:
			out = append(out, cat(p, nil))
		case jt == plan.JoinAnti && !matched:
			if nullAware && keyNull(p, 0) && len(build) > 0 {
				continue
			}
			out = append(out, cat(p, nil))
		}
	}
	if jt == plan.JoinRight || jt == plan.JoinFull {
		for bi, b := range build {
			if !bm[bi] {
				out = append(out, cat(nulls(len(jProbeSchema)), b))
			}
		}
	}
	if jt.BuildOnly() {
		for bi, b := range build {
			if bm[bi] == (jt == plan.JoinRightSemi) {
				out = append(out, cat(nil, b))
			}
		}
	}
	return out
}

func joinNode(kind plan.Kind, jt plan.JoinType, nullAware bool, c joinCase) *plan.Node {
	j := &plan.Join{Type: jt, Filter: filterExpr(c.filter), NullAware: nullAware}
	for _, k := range c.keys {
		j.LeftKeys = append(j.LeftKeys, cref(k[0], jProbeSchema[k[0]].Type))
		j.RightKeys = append(j.RightKeys, cref(k[1], jBuildSchema[k[1]].Type))
	}
	schema := append(plan.Schema{}, jProbeSchema...)
	if jt.BuildOnly() {
		schema = nil
	}
	if jt != plan.JoinSemi && jt != plan.JoinAnti {
		schema = append(schema, jBuildSchema...)
	}
	return &plan.Node{Kind: kind, Schema: schema, Join: j}
}

func newJoinOp(kind plan.Kind, probe, build Operator, n *plan.Node, opts Options) (Operator, error) {
	if kind == plan.KindCrossJoin {
		return NewCrossJoin(probe, build, n, opts)
	}
	return NewHashJoin(probe, build, n, opts)
}

var allJoinTypes = []plan.JoinType{plan.JoinInner, plan.JoinLeft, plan.JoinRight, plan.JoinFull, plan.JoinSemi, plan.JoinAnti,
	plan.JoinRightSemi, plan.JoinRightAnti}

func TestHashJoinRandom(t *testing.T) {
	cases := []joinCase{
		{keys: [][2]int{{0, 0}}},
		{keys: [][2]int{{0, 0}}, filter: "lt"},
		{keys: [][2]int{{0, 0}, {1, 1}}},
		{keys: [][2]int{{1, 1}, {0, 0}}, filter: "lt-or-b"},
		{keys: [][2]int{{2, 2}, {1, 1}, {0, 0}}, filter: "lt"},
		{keys: [][2]int{{2, 2}}},
		{keys: [][2]int{{3, 3}}, filter: "lt-or-b"}, // key v = w: mostly non-NULL ints
	}
	rng := rand.New(rand.NewSource(7))
	defer func() { testHashMask = 0 }()
	for round := 0; round < 12; round++ {
		if round == 11 {
			testHashMask = 3 // every hash collides: exercises the slow path
		}
		for _, c := range cases {
			for _, jt := range allJoinTypes {
				for _, na := range []bool{false, true} {
					if na && jt != plan.JoinAnti {
						continue
					}
					runJoinCase(t, rng, plan.KindHashJoin, jt, na, c)
				}
			}
		}
	}
}

func TestCrossJoinRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for round := 0; round < 6; round++ {
		for _, f := range []string{"", "lt", "lt-or-b"} {
			for _, jt := range allJoinTypes {
				runJoinCase(t, rng, plan.KindCrossJoin, jt, false, joinCase{filter: f})
			}
		}
	}
}

func runJoinCase(t *testing.T, rng *rand.Rand, kind plan.Kind, jt plan.JoinType, nullAware bool, c joinCase) {
	t.Helper()
	mem := checkedMem(t)
	np, nb := rng.Intn(40), rng.Intn(30)
	if rng.Intn(4) == 0 {
		nb = 0
	}
	probe, build := randRows(rng, np, false), randRows(rng, nb, true)
	batchRows := []int{1, 3, 7, 64}[rng.Intn(4)]
	n := joinNode(kind, jt, nullAware, c)
	op, err := newJoinOp(kind,
		newSource(jProbeSchema.Arrow(), batchesOf(t, rng, mem, jProbeSchema, probe)...),
		newSource(jBuildSchema.Arrow(), batchesOf(t, rng, mem, jBuildSchema, build)...),
		n, Options{Mem: mem, BatchRows: batchRows})
	if err != nil {
		t.Fatal(err)
	}
	recs := drainAll(t, op)
	defer releaseRecs(recs)
	for _, r := range recs {
		if r.NumRows() == 0 || r.NumRows() > int64(batchRows) {
			t.Fatalf("%s %s: batch of %d rows (BatchRows %d)", kind, jt, r.NumRows(), batchRows)
		}
		if !r.Schema().Equal(n.Schema.Arrow()) {
			t.Fatalf("%s %s: schema %s", kind, jt, r.Schema())
		}
	}
	got := rows(recs)
	want := refJoin(jt, nullAware, c, probe, build)
	sortRows(got)
	sortRows(want)
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s %s null-aware=%v %s (probe %d, build %d rows):\ngot  %d rows %v\nwant %d rows %v",
			kind, jt, nullAware, c, np, nb, len(got), got, len(want), want)
	}
}

func TestHashJoinNullAwareAnti(t *testing.T) {
	N := any(nil)
	for _, tc := range []struct {
		name         string
		probe, build []any
		want         [][]any
	}{
		{"build has NULL", []any{int64(1), int64(2), N}, []any{int64(1), N}, nil},
		{"probe NULL, empty build", []any{int64(1), N}, nil, [][]any{{int64(1)}, {N}}},
		{"probe NULL, build without NULL", []any{int64(1), int64(2), N}, []any{int64(1), int64(3)}, [][]any{{int64(2)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := checkedMem(t)
			s := plan.Schema{{Name: "x", Type: i64T}}
			var brecs []arrow.RecordBatch
			if len(tc.build) > 0 {
				brecs = append(brecs, mkRec(mem, ints("x", tc.build...)))
			}
			n := &plan.Node{Kind: plan.KindHashJoin, Schema: s, Join: &plan.Join{Type: plan.JoinAnti, NullAware: true,
				LeftKeys: []*plan.Expr{cref(0, i64T)}, RightKeys: []*plan.Expr{cref(0, i64T)}}}
			op, err := NewHashJoin(newSource(s.Arrow(), mkRec(mem, ints("x", tc.probe...))), newSource(s.Arrow(), brecs...), n, Options{Mem: mem})
			got := runOp(t, op, err)
			sortRows(got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHashJoinOuterUnmatched(t *testing.T) {
	mem := checkedMem(t)
	ps := plan.Schema{{Name: "a", Type: i64T}, {Name: "s", Type: strT}}
	bs := plan.Schema{{Name: "b", Type: i64T}, {Name: "d", Type: d102}}
	N := any(nil)
	mk := func(jt plan.JoinType) *plan.Node {
		return &plan.Node{Kind: plan.KindHashJoin, Schema: append(append(plan.Schema{}, ps...), bs...),
			Join: &plan.Join{Type: jt, LeftKeys: []*plan.Expr{cref(0, i64T)}, RightKeys: []*plan.Expr{cref(0, i64T)}}}
	}
	for _, tc := range []struct {
		jt   plan.JoinType
		want [][]any
	}{
		{plan.JoinRight, [][]any{{int64(1), "x", int64(1), "1.00"}, {N, N, N, "9.99"}, {N, N, int64(3), "3.00"}}},
		{plan.JoinFull, [][]any{{int64(1), "x", int64(1), "1.00"}, {int64(2), "y", N, N}, {N, N, N, "9.99"}, {N, N, int64(3), "3.00"}, {N, "z", N, N}}},
		{plan.JoinLeft, [][]any{{int64(1), "x", int64(1), "1.00"}, {int64(2), "y", N, N}, {N, "z", N, N}}},
	} {
		probe := mkRec(mem, ints("a", int64(1), int64(2), N), strs("s", "x", "y", "z"))
		build := mkRec(mem, ints("b", int64(1), N, int64(3)), decs("d", 10, 2, "1.00", "9.99", "3.00"))
		op, err := NewHashJoin(newSource(ps.Arrow(), probe), newSource(bs.Arrow(), build), mk(tc.jt), Options{Mem: mem, BatchRows: 2})
		got := runOp(t, op, err)
		sortRows(got)
		sortRows(tc.want)
		if !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("%s: got %v, want %v", tc.jt, got, tc.want)
		}
	}
}

// Duplicate keys: 10 probe rows x 1000 build rows of one key are 10000
// output rows, in batches of at most BatchRows.
func TestHashJoinBoundedBatches(t *testing.T) {
	mem := checkedMem(t)
	s := plan.Schema{{Name: "k", Type: i64T}, {Name: "v", Type: i64T}}
	mkVals := func(n int) (k, v []any) {
		for i := 0; i < n; i++ {
			k = append(k, int64(7))
			v = append(v, int64(i))
		}
		return
	}
	pk, pv := mkVals(10)
	bk, bv := mkVals(1000)
	for _, filter := range []*plan.Expr{nil, call(plan.OpGe, boolT, cref(3, i64T), litI(0))} {
		n := &plan.Node{Kind: plan.KindHashJoin, Schema: append(append(plan.Schema{}, s...), s...),
			Join: &plan.Join{Type: plan.JoinInner, LeftKeys: []*plan.Expr{cref(0, i64T)}, RightKeys: []*plan.Expr{cref(0, i64T)}, Filter: filter}}
		op, err := NewHashJoin(newSource(s.Arrow(), mkRec(mem, ints("k", pk...), ints("v", pv...))),
			newSource(s.Arrow(), mkRec(mem, ints("k", bk...), ints("v", bv...))), n, Options{Mem: mem, BatchRows: 100})
		if err != nil {
			t.Fatal(err)
		}
		recs := drainAll(t, op)
		total := 0
		for _, r := range recs {
			if r.NumRows() > 100 || r.NumRows() == 0 {
				t.Fatalf("batch of %d rows", r.NumRows())
			}
			total += int(r.NumRows())
		}
		releaseRecs(recs)
		if total != 10000 {
			t.Fatalf("%d rows, want 10000", total)
		}
	}
}

func TestHashJoinMemoryLimit(t *testing.T) {
	mem := checkedMem(t)
	s := plan.Schema{{Name: "k", Type: i64T}}
	var recs []arrow.RecordBatch
	for b := 0; b < 20; b++ {
		var v []any
		for i := 0; i < 5000; i++ {
			v = append(v, int64(b*5000+i))
		}
		recs = append(recs, mkRec(mem, ints("k", v...)))
	}
	n := &plan.Node{Kind: plan.KindHashJoin, Schema: append(append(plan.Schema{}, s...), s...),
		Join: &plan.Join{Type: plan.JoinInner, LeftKeys: []*plan.Expr{cref(0, i64T)}, RightKeys: []*plan.Expr{cref(0, i64T)}}}
	op, err := NewHashJoin(newSource(s.Arrow(), mkRec(mem, ints("k", int64(1)))), newSource(s.Arrow(), recs...), n,
		Options{Mem: mem, MemoryLimit: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	_, err = op.Next(context.Background())
	op.Close()
	var mle *MemoryLimitError
	if !errors.Is(err, ErrMemoryLimit) || !errors.As(err, &mle) {
		t.Fatalf("got %v, want a memory limit error", err)
	}
	if !strings.Contains(err.Error(), "hash join (inner) build side") {
		t.Fatalf("error does not name the join: %v", err)
	}
}

func TestHashJoinBadPlans(t *testing.T) {
	s := plan.Schema{{Name: "k", Type: i64T}}
	src := func() Operator { return newSource(s.Arrow()) }
	for _, tc := range []struct {
		name string
		n    *plan.Node
		want string
	}{
		{"no join", &plan.Node{Kind: plan.KindHashJoin, Schema: s}, "no join description"},
		{"key types", &plan.Node{Kind: plan.KindHashJoin, Schema: append(s, s...), Join: &plan.Join{Type: plan.JoinInner,
			LeftKeys: []*plan.Expr{cref(0, i64T)}, RightKeys: []*plan.Expr{cref(0, strT)}}}, "compares int64 with string"},
		{"schema", &plan.Node{Kind: plan.KindHashJoin, Schema: s, Join: &plan.Join{Type: plan.JoinInner,
			LeftKeys: []*plan.Expr{cref(0, i64T)}, RightKeys: []*plan.Expr{cref(0, i64T)}}}, "output schema has 1 columns"},
		{"type", &plan.Node{Kind: plan.KindHashJoin, Schema: s, Join: &plan.Join{Type: "sideways"}}, "unknown join type"},
		{"null-aware inner", &plan.Node{Kind: plan.KindHashJoin, Schema: append(s, s...), Join: &plan.Join{Type: plan.JoinInner, NullAware: true,
			LeftKeys: []*plan.Expr{cref(0, i64T)}, RightKeys: []*plan.Expr{cref(0, i64T)}}}, "null-aware"},
	} {
		_, err := NewHashJoin(src(), src(), tc.n, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// A scalar subquery result (one row) crossed with every probe row, with a
// filter comparing against it.
func TestCrossJoinScalar(t *testing.T) {
	mem := checkedMem(t)
	ls := plan.Schema{{Name: "x", Type: d102}}
	rs := plan.Schema{{Name: "avg", Type: d102}}
	n := &plan.Node{Kind: plan.KindCrossJoin, Schema: append(append(plan.Schema{}, ls...), rs...),
		Join: &plan.Join{Filter: call(plan.OpGt, boolT, cref(0, d102), cref(1, d102))}}
	left := newSource(ls.Arrow(), mkRec(mem, decs("x", 10, 2, "1.00", "5.00", nil, "3.50")), mkRec(mem, decs("x", 10, 2, "9.00")))
	right := newSource(rs.Arrow(), mkRec(mem, decs("avg", 10, 2, "3.00")))
	op, err := NewCrossJoin(left, right, n, Options{Mem: mem})
	got := runOp(t, op, err)
	want := [][]any{{"5.00", "3.00"}, {"3.50", "3.00"}, {"9.00", "3.00"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// no filter, nil Join: the plain product
	mem2 := checkedMem(t)
	n2 := &plan.Node{Kind: plan.KindCrossJoin, Schema: n.Schema}
	op, err = NewCrossJoin(newSource(ls.Arrow(), mkRec(mem2, decs("x", 10, 2, "1.00", "2.00"))),
		newSource(rs.Arrow(), mkRec(mem2, decs("avg", 10, 2, "7.00", "8.00"))), n2, Options{Mem: mem2})
	got = runOp(t, op, err)
	sortRows(got)
	want = [][]any{{"1.00", "7.00"}, {"1.00", "8.00"}, {"2.00", "7.00"}, {"2.00", "8.00"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestUnion(t *testing.T) {
	mem := checkedMem(t)
	s := plan.Schema{{Name: "a", Type: i64T}, {Name: "d", Type: d102}}
	s2 := plan.Schema{{Name: "other", Type: i64T}, {Name: "dd", Type: dec(12, 2)}}
	N := any(nil)
	in1 := newSource(s.Arrow(), mkRec(mem, ints("a", int64(1), int64(2)), decs("d", 10, 2, "1.50", nil)))
	in2 := newSource(s2.Arrow())
	in3 := newSource(s2.Arrow(), mkRec(mem, ints("other", N), decs("dd", 12, 2, "7.25")), mkRec(mem, ints("other", int64(4)), decs("dd", 12, 2, "0.01")))
	n := &plan.Node{Kind: plan.KindUnion, Schema: s}
	op, err := NewUnion([]Operator{in1, in2, in3}, n, Options{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	recs := drainAll(t, op)
	defer releaseRecs(recs)
	for _, r := range recs {
		if !r.Schema().Equal(s.Arrow()) {
			t.Fatalf("schema %s", r.Schema())
		}
	}
	want := [][]any{{int64(1), "1.50"}, {int64(2), N}, {N, "7.25"}, {int64(4), "0.01"}}
	if got := rows(recs); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if !in1.closed || !in2.closed || !in3.closed {
		t.Fatal("inputs not closed")
	}
}

// testLeaves serves scan leaves from fixed sources by table name.
type testLeaves map[string]Operator

func (l testLeaves) Scan(_ context.Context, n *plan.Node) (Operator, error) {
	op, ok := l[n.Scan.Table]
	if !ok {
		return nil, fmt.Errorf("no table %s", n.Scan.Table)
	}
	return op, nil
}

func (l testLeaves) Exchange(context.Context, *plan.Node) (Operator, error) {
	return nil, errors.New("no exchanges")
}

// Build wires joins and unions: (t1 JOIN t2 ON k) UNION ALL (t3 SEMI JOIN t4).
func TestBuildJoinUnion(t *testing.T) {
	mem := checkedMem(t)
	s := plan.Schema{{Name: "k", Type: i64T}, {Name: "s", Type: strT}}
	scan := func(name string) *plan.Node {
		return &plan.Node{Kind: plan.KindScan, Schema: s, Scan: &plan.Scan{Table: name, Format: "parquet", Columns: []string{"k", "s"}}}
	}
	keys := func(j *plan.Join) *plan.Join {
		j.LeftKeys, j.RightKeys = []*plan.Expr{cref(0, i64T)}, []*plan.Expr{cref(0, i64T)}
		return j
	}
	inner := &plan.Node{Kind: plan.KindHashJoin, Schema: append(append(plan.Schema{}, s...), s...),
		Inputs: []*plan.Node{scan("t1"), scan("t2")}, Join: keys(&plan.Join{Type: plan.JoinInner})}
	proj := &plan.Node{Kind: plan.KindProject, Schema: s, Inputs: []*plan.Node{inner}, Exprs: []*plan.Expr{cref(0, i64T), cref(3, strT)}}
	semi := &plan.Node{Kind: plan.KindHashJoin, Schema: s, Inputs: []*plan.Node{scan("t3"), scan("t4")}, Join: keys(&plan.Join{Type: plan.JoinSemi})}
	root := &plan.Node{Kind: plan.KindUnion, Schema: s, Inputs: []*plan.Node{proj, semi}}
	leaves := testLeaves{
		"t1": newSource(s.Arrow(), mkRec(mem, ints("k", int64(1), int64(2)), strs("s", "a", "b"))),
		"t2": newSource(s.Arrow(), mkRec(mem, ints("k", int64(2), int64(2)), strs("s", "x", "y"))),
		"t3": newSource(s.Arrow(), mkRec(mem, ints("k", int64(5), int64(6)), strs("s", "p", "q"))),
		"t4": newSource(s.Arrow(), mkRec(mem, ints("k", int64(6), int64(6)), strs("s", "r", "s"))),
	}
	op, err := Build(context.Background(), root, leaves, Options{Mem: mem})
	got := runOp(t, op, err)
	sortRows(got)
	want := [][]any{{int64(2), "x"}, {int64(2), "y"}, {int64(6), "q"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for name, l := range leaves {
		if !l.(*source).closed {
			t.Fatalf("%s not closed", name)
		}
	}
}

// A NULL-typed key (e.g. x = NULL after constant folding) matches nothing.
func TestHashJoinNullTypedKey(t *testing.T) {
	s := plan.Schema{{Name: "x", Type: i64T}}
	N := any(nil)
	for _, tc := range []struct {
		jt   plan.JoinType
		na   bool
		want [][]any
	}{
		{plan.JoinInner, false, nil},
		{plan.JoinRight, false, [][]any{{N, int64(5)}}},
		{plan.JoinLeft, false, [][]any{{int64(1), N}}},
		{plan.JoinAnti, false, [][]any{{int64(1)}}},
		{plan.JoinAnti, true, nil},
	} {
		mem := checkedMem(t)
		out := append(plan.Schema{}, s...)
		if tc.jt != plan.JoinAnti {
			out = append(out, s...)
		}
		n := &plan.Node{Kind: plan.KindHashJoin, Schema: out, Join: &plan.Join{Type: tc.jt, NullAware: tc.na,
			LeftKeys: []*plan.Expr{cref(0, i64T)}, RightKeys: []*plan.Expr{litNull(plan.NullType)}}}
		op, err := NewHashJoin(newSource(s.Arrow(), mkRec(mem, ints("x", int64(1)))), newSource(s.Arrow(), mkRec(mem, ints("x", int64(5)))), n, Options{Mem: mem})
		if got := runOp(t, op, err); !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("%s: got %v, want %v", tc.jt, got, tc.want)
		}
	}
}
