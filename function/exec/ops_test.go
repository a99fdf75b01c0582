package exec

import (
	"context"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

func TestFilterProjectLimit(t *testing.T) {
	mem := checkedMem(t)
	cols := []col{ints("id", 1, 2, 3, 4, 5, 6), strs("name", "a", "b", nil, "d", "e", "f")}
	schema := schemaOf(cols)
	r1 := mkRec(mem, ints("id", 1, 2, 3), strs("name", "a", "b", nil))
	r2 := mkRec(mem, ints("id", 4, 5, 6), strs("name", "d", "e", "f"))
	r3 := mkRec(mem, ints("id"), strs("name"))
	src := newSource(schema.Arrow(), r1, r2, r3)
	opts := Options{Mem: mem, BatchRows: 2}
	filt, err := NewFilter(src, &plan.Node{Kind: plan.KindFilter, Schema: schema,
		Predicate: call(plan.OpOr, boolT, call(plan.OpGt, boolT, cref(0, i64T), litI(3)), call(plan.OpIsNull, boolT, cref(1, strT)))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	projSchema := plan.Schema{{Name: "x", Type: i64T}, {Name: "n", Type: strT}, {Name: "c", Type: d102}}
	proj, err := NewProject(filt, &plan.Node{Kind: plan.KindProject, Schema: projSchema, Exprs: []*plan.Expr{
		call(plan.OpMul, i64T, cref(0, i64T), litI(10)), cref(1, strT), litD("1.50", 3, 2)}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	lim, err := NewLimit(proj, &plan.Node{Kind: plan.KindLimit, Schema: projSchema, Offset: 1, Limit: 2}, opts)
	if err != nil {
		t.Fatal(err)
	}
	recs := drainAll(t, lim)
	defer releaseRecs(recs)
	want := [][]any{{int64(40), "d", "1.50"}, {int64(50), "e", "1.50"}}
	if got := rows(recs); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	for _, r := range recs {
		if !r.Schema().Equal(projSchema.Arrow()) {
			t.Fatalf("schema %v", r.Schema())
		}
	}
}

func TestLimitVariants(t *testing.T) {
	for _, tc := range []struct {
		off, lim int64
		want     []int64
	}{
		{0, -1, []int64{0, 1, 2, 3, 4, 5, 6}},
		{0, 0, nil},
		{2, -1, []int64{2, 3, 4, 5, 6}},
		{3, 1, []int64{3}},
		{6, 5, []int64{6}},
		{7, 5, nil},
		{1, 4, []int64{1, 2, 3, 4}},
	} {
		mem := checkedMem(t)
		schema := plan.Schema{{Name: "v", Type: i64T}}
		src := newSource(schema.Arrow(), mkRec(mem, ints("v", 0, 1, 2)), mkRec(mem, ints("v", 3, 4)), mkRec(mem, ints("v", 5, 6)))
		op, _ := NewLimit(src, &plan.Node{Kind: plan.KindLimit, Schema: schema, Offset: tc.off, Limit: tc.lim}, Options{Mem: mem})
		recs := drainAll(t, op)
		var got []int64
		for _, r := range rows(recs) {
			got = append(got, r[0].(int64))
		}
		releaseRecs(recs)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("offset %d limit %d: got %v want %v", tc.off, tc.lim, got, tc.want)
		}
	}
}

type fakeLeaves struct {
	recs func() []arrow.RecordBatch
}

func (f *fakeLeaves) Scan(ctx context.Context, n *plan.Node) (Operator, error) {
	return newSource(n.Schema.Arrow(), f.recs()...), nil
}

func (f *fakeLeaves) Exchange(ctx context.Context, n *plan.Node) (Operator, error) {
	return nil, errors.New("no exchanges here")
}

func TestBuild(t *testing.T) {
	mem := checkedMem(t)
	scanSchema := plan.Schema{{Name: "k", Type: strT}, {Name: "v", Type: i64T}}
	scan := &plan.Node{Kind: plan.KindScan, Schema: scanSchema, Scan: &plan.Scan{Table: "t", Columns: []string{"k", "v"}}}
	filter := &plan.Node{Kind: plan.KindFilter, Schema: scanSchema, Inputs: []*plan.Node{scan},
		Predicate: call(plan.OpGt, boolT, cref(1, i64T), litI(0))}
	aggSchema := plan.Schema{{Name: "k", Type: strT}, {Name: "s", Type: i64T}, {Name: "c", Type: i64T}}
	agg := &plan.Node{Kind: plan.KindAggregate, Schema: aggSchema, Inputs: []*plan.Node{filter},
		Aggregate: &plan.Aggregate{Mode: plan.AggSingle, GroupBy: []*plan.Expr{cref(0, strT)},
			Aggs: []plan.AggCall{{Func: plan.AggSum, Arg: cref(1, i64T), Type: i64T}, {Func: plan.AggCountStar, Type: i64T}}}}
	sort := &plan.Node{Kind: plan.KindSort, Schema: aggSchema, Inputs: []*plan.Node{agg}, Limit: -1,
		SortKeys: []plan.SortKey{{Expr: cref(1, i64T), Desc: true}}}
	limit := &plan.Node{Kind: plan.KindLimit, Schema: aggSchema, Inputs: []*plan.Node{sort}, Limit: 2}
	leaves := &fakeLeaves{recs: func() []arrow.RecordBatch {
		return []arrow.RecordBatch{
			mkRec(mem, strs("k", "a", "b", "a", "c"), ints("v", 1, 5, 2, -1)),
			mkRec(mem, strs("k", "c", "b", nil), ints("v", 10, 1, 4)),
		}
	}}
	op, err := Build(context.Background(), limit, leaves, Options{Mem: mem, BatchRows: 2})
	if err != nil {
		t.Fatal(err)
	}
	recs := drainAll(t, op)
	defer releaseRecs(recs)
	want := [][]any{{"c", int64(10), int64(1)}, {"b", int64(6), int64(2)}}
	if got := rows(recs); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}

	// Empty leaf
	empty := &plan.Node{Kind: plan.KindEmpty, Schema: scanSchema}
	op, err = Build(context.Background(), empty, nil, Options{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Next(context.Background()); err != io.EOF {
		t.Fatalf("empty: %v", err)
	}
	if !op.Schema().Equal(scanSchema.Arrow()) {
		t.Fatal("empty schema")
	}
	op.Close()
}

// Operators below a Limit see sliced arrays (non-zero offsets).
func TestOperatorsOverSlices(t *testing.T) {
	mem := checkedMem(t)
	in := []col{
		ints("k", 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, nil, nil),
		strs("s", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"),
		bools("b", true, false, nil, true, false, nil, true, false, nil, true, false, nil, true, true),
	}
	schema := schemaOf(in)
	src := newSource(schema.Arrow(), mkRec(mem, in...))
	opts := Options{Mem: mem, BatchRows: 4}
	lim, _ := NewLimit(src, &plan.Node{Kind: plan.KindLimit, Schema: schema, Offset: 3, Limit: -1}, opts)
	filt, _ := NewFilter(lim, &plan.Node{Kind: plan.KindFilter, Schema: schema,
		Predicate: call(plan.OpOr, boolT, cref(2, boolT), call(plan.OpIsNull, boolT, cref(2, boolT)))}, opts)
	srt, _ := NewSort(filt, sortNode(schema, -1, plan.SortKey{Expr: cref(0, i64T), Desc: true}, plan.SortKey{Expr: cref(1, strT)}), opts)
	out := plan.Schema{{Name: "k", Type: i64T}, {Name: "m", Type: strT}, {Name: "c", Type: i64T}}
	agg, err := NewHashAggregate(srt, aggNode(plan.AggSingle, out, []*plan.Expr{cref(0, i64T)},
		plan.AggCall{Func: plan.AggMax, Arg: cref(1, strT), Type: strT},
		plan.AggCall{Func: plan.AggCount, Arg: cref(2, boolT), Type: i64T}), opts)
	got := runOp(t, agg, err)
	// rows after offset 3 with b TRUE or NULL: d(1,T) f(3,N) g(1,T) i(3,N) j(1,T) l(3,N) m(N,T) n(N,T)
	// sorted k desc (NULLs last), s asc: f i l | d g j | m n
	want := [][]any{{int64(3), "l", int64(0)}, {int64(1), "j", int64(3)}, {nil, "n", int64(2)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}
