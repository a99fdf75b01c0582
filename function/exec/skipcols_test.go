package exec

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// buildNoSkip builds Project, Filter, HashJoin and Scan nodes like Build
// but never tells an operator which columns are unread: the reference the
// skipping build is compared with.
func buildNoSkip(t *testing.T, n *plan.Node, leaves testLeaves, opts Options) Operator {
	t.Helper()
	var ins []Operator
	for _, c := range n.Inputs {
		ins = append(ins, buildNoSkip(t, c, leaves, opts))
	}
	var op Operator
	var err error
	switch n.Kind {
	case plan.KindScan:
		op, err = leaves.Scan(context.Background(), n)
	case plan.KindProject:
		op, err = NewProject(ins[0], n, opts)
	case plan.KindFilter:
		op, err = NewFilter(ins[0], n, opts)
	case plan.KindHashJoin:
		op, err = NewHashJoin(ins[0], ins[1], n, opts)
	default:
		t.Fatalf("buildNoSkip: %s", n.Kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// Project(random columns) over [Filter over] a hash join of every type
// whose probe side is [a Filter over] a scan, with strings among the
// columns: the build that fills unread columns with NULLs gives the rows of
// the one that gathers them all (in memory: the grace join's sub-joins,
// which inherit the skipped columns, are not covered here).
func TestSkipUnreadColumnsRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(24))
	scan := func(name string, s plan.Schema) *plan.Node {
		return &plan.Node{Kind: plan.KindScan, Schema: s, Scan: &plan.Scan{Table: name, Format: "parquet"}}
	}
	cases := []joinCase{
		{keys: [][2]int{{0, 0}}},
		{keys: [][2]int{{0, 0}}, filter: "lt"},
		{keys: [][2]int{{1, 1}, {0, 0}}, filter: "lt-or-b"},
		{keys: [][2]int{{1, 1}}},
	}
	skips := 0
	for round := 0; round < 3; round++ {
		for _, c := range cases {
			for _, jt := range allJoinTypes {
				probeRows := randRows(rng, 20+rng.Intn(150), false)
				buildRows := randRows(rng, 10+rng.Intn(100), true)
				pNode := scan("p", jProbeSchema)
				if rng.Intn(2) == 0 {
					// v > 2 OR k2 IS NULL: reads v and k2
					pNode = &plan.Node{Kind: plan.KindFilter, Schema: jProbeSchema, Inputs: []*plan.Node{pNode},
						Predicate: call(plan.OpOr, boolT, call(plan.OpGt, boolT, cref(3, i64T), litI(2)), call(plan.OpIsNull, boolT, cref(1, strT)))}
				}
				jn := joinNode(plan.KindHashJoin, jt, false, c)
				jn.Inputs = []*plan.Node{pNode, scan("b", jBuildSchema)}
				top := jn
				if rng.Intn(2) == 0 && !jt.BuildOnly() {
					// p IS NOT NULL OR kd IS NULL over the join (its probe columns)
					top = &plan.Node{Kind: plan.KindFilter, Schema: jn.Schema, Inputs: []*plan.Node{jn},
						Predicate: call(plan.OpOr, boolT, call(plan.OpIsNotNull, boolT, cref(4, d102)), call(plan.OpIsNull, boolT, cref(2, dateT)))}
				}
				var exprs []*plan.Expr
				var out plan.Schema
				for i, f := range jn.Schema {
					if rng.Intn(3) == 0 || (i == len(jn.Schema)-1 && len(exprs) == 0) {
						exprs = append(exprs, cref(i, f.Type))
						out = append(out, f)
					}
				}
				root := &plan.Node{Kind: plan.KindProject, Schema: out, Inputs: []*plan.Node{top}, Exprs: exprs}
				name := fmt.Sprintf("round %d %s %s project %v", round, c, jt, exprs)
				run := func(skip bool, opts Options) ([][]any, Operator) {
					leaves := testLeaves{
						"p": newSource(jProbeSchema.Arrow(), batchesOf(t, rng, opts.Mem, jProbeSchema, probeRows)...),
						"b": newSource(jBuildSchema.Arrow(), batchesOf(t, rng, opts.Mem, jBuildSchema, buildRows)...),
					}
					var op Operator
					var err error
					if skip {
						op, err = Build(context.Background(), root, leaves, opts)
					} else {
						op = buildNoSkip(t, root, leaves, opts)
					}
					got := runOp(t, op, err)
					sortRows(got)
					return got, op
				}
				want, _ := run(false, Options{Mem: checkedMem(t), BatchRows: 64})
				got, op := run(true, Options{Mem: checkedMem(t), BatchRows: 64})
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: skipping build gives %d rows %v, want %d rows %v", name, len(got), got, len(want), want)
				}
				var j *joinOp
				switch x := unmetered(op.(*projectOp).in).(type) {
				case *joinOp:
					j = x
				case *filterOp:
					j = x.in.(*joinOp)
				}
				if j.skip != nil {
					skips++
				}
			}
		}
	}
	if skips == 0 {
		t.Fatal("no join was told of unread columns: the cases test nothing")
	}
}

// The join fills the columns the Project above it does not read with NULLs
// (and passes the request on to the filter under it), and the Project's
// output is unchanged.
func TestSkipUnreadColumnsWired(t *testing.T) {
	mem := checkedMem(t)
	s := plan.Schema{{Name: "k", Type: i64T}, {Name: "s", Type: strT}, {Name: "x", Type: i64T}}
	scan := func(name string) *plan.Node {
		return &plan.Node{Kind: plan.KindScan, Schema: s, Scan: &plan.Scan{Table: name, Format: "parquet"}}
	}
	probe := &plan.Node{Kind: plan.KindFilter, Schema: s, Inputs: []*plan.Node{scan("t1")}, Predicate: call(plan.OpGt, boolT, cref(2, i64T), litI(0))}
	join := &plan.Node{Kind: plan.KindHashJoin, Schema: append(append(plan.Schema{}, s...), s...),
		Inputs: []*plan.Node{probe, scan("t2")}, Join: &plan.Join{Type: plan.JoinInner, LeftKeys: []*plan.Expr{cref(0, i64T)}, RightKeys: []*plan.Expr{cref(0, i64T)}}}
	root := &plan.Node{Kind: plan.KindProject, Schema: plan.Schema{s[0], s[1]}, Inputs: []*plan.Node{join}, Exprs: []*plan.Expr{cref(0, i64T), cref(4, strT)}}
	leaves := testLeaves{
		"t1": newSource(s.Arrow(), mkRec(mem, ints("k", int64(1), int64(2), int64(2)), strs("s", "a", "b", "c"), ints("x", int64(1), int64(0), int64(5)))),
		"t2": newSource(s.Arrow(), mkRec(mem, ints("k", int64(2), int64(1)), strs("s", "x", "y"), ints("x", int64(7), int64(8)))),
	}
	op, err := Build(context.Background(), root, leaves, Options{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	j := op.(*projectOp).in.(*joinOp)
	if want := []bool{false, true, true, true, false, true}; !reflect.DeepEqual(j.skip, want) {
		t.Fatalf("join skips %v, want %v", j.skip, want)
	}
	if want := []bool{false, true, true}; !reflect.DeepEqual(j.probe.(*filterOp).skip, want) {
		t.Fatalf("probe filter skips %v, want %v", j.probe.(*filterOp).skip, want)
	}
	// the join's own output: skipped columns are NULL
	rec, err := j.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for c := 1; c < 4; c++ {
		if a := rec.Column(c); a.NullN() != a.Len() || !arrow.TypeEqual(a.DataType(), j.schema.Field(c).Type) {
			t.Fatalf("skipped column %d: %d nulls of %d, type %s", c, a.NullN(), a.Len(), a.DataType())
		}
	}
	got := rows([]arrow.RecordBatch{rec})
	rec.Release()
	if want := [][]any{{int64(1), nil, nil, nil, "y", nil}, {int64(2), nil, nil, nil, "x", nil}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("join rows %v, want %v", got, want)
	}
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkJoinUnreadColumns: the inner join of BenchmarkHashJoin (about
// half of 1M probe rows match, the build side has a string column) under a
// Project that reads the probe columns only; "gather" fills every column,
// "skip" leaves the build columns NULL as Build arranges (same run).
func BenchmarkJoinUnreadColumns(b *testing.B) {
	ps, probe, bs, build := joinBenchInputs()
	defer releaseRecs(probe)
	defer releaseRecs(build)
	n := &plan.Node{Kind: plan.KindHashJoin, Schema: append(append(plan.Schema{}, ps...), bs...), Join: &plan.Join{Type: plan.JoinInner,
		LeftKeys: []*plan.Expr{cref(0, i64T)}, RightKeys: []*plan.Expr{cref(0, i64T)}}}
	proj := []*plan.Expr{cref(0, i64T), cref(1, dec(12, 2))}
	for _, skip := range []bool{false, true} {
		b.Run(map[bool]string{false: "gather", true: "skip"}[skip], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				op, err := NewHashJoin(retainedSource(ps, probe), retainedSource(bs, build), n, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if skip {
					skipUnread(op, proj)
				}
				for {
					rec, err := op.Next(context.Background())
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					rec.Release()
				}
				op.Close()
			}
			b.ReportMetric(float64(benchProbeRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
