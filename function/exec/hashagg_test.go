package exec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

func aggNode(mode plan.AggMode, schema plan.Schema, groupBy []*plan.Expr, aggs ...plan.AggCall) *plan.Node {
	return &plan.Node{Kind: plan.KindAggregate, Schema: schema,
		Aggregate: &plan.Aggregate{Mode: mode, GroupBy: groupBy, Aggs: aggs}}
}

func runOp(t *testing.T, op Operator, err error) [][]any {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	recs := drainAll(t, op)
	defer releaseRecs(recs)
	return rows(recs)
}

func sortRows(r [][]any) {
	sort.Slice(r, func(i, j int) bool { return fmt.Sprint(r[i]) < fmt.Sprint(r[j]) })
}

func TestHashAggregateSingle(t *testing.T) {
	mem := checkedMem(t)
	in := []col{
		strs("k", "a", "b", "a", nil, "b", nil, "c"),
		ints("g", 1, 1, 1, 2, nil, 2, 3),
		ints("x", 10, 20, nil, 5, 7, 6, nil),
		decs("d", 10, 2, "1.25", "2.50", "0.25", nil, "1.00", "3.00", nil),
		floats("f", 1.0, 2.0, 3.0, nil, 4.0, 5.0, nil),
		dates("dt", "1998-01-01", "1997-05-05", "1999-12-31", nil, "1990-01-01", "2001-01-01", nil),
		strs("s", "zz", "m", "a", "q", nil, "p", nil),
		bools("bl", true, false, false, nil, true, true, nil),
	}
	schema := schemaOf(in)
	r1 := mkRec(mem, sliceCols(in, 0, 4)...)
	r2 := mkRec(mem, sliceCols(in, 4, 7)...)
	k, g, x := cref(0, strT), cref(1, i64T), cref(2, i64T)
	d, f, dt, s, bl := cref(3, d102), cref(4, f64T), cref(5, dateT), cref(6, strT), cref(7, boolT)
	aggs := []plan.AggCall{
		{Func: plan.AggSum, Arg: x, Type: i64T},
		{Func: plan.AggSum, Arg: d, Type: dec(18, 2)},
		{Func: plan.AggSum, Arg: f, Type: f64T},
		{Func: plan.AggCount, Arg: x, Type: i64T},
		{Func: plan.AggCountStar, Type: i64T},
		{Func: plan.AggAvg, Arg: x, Type: f64T},
		{Func: plan.AggAvg, Arg: d, Type: f64T},
		{Func: plan.AggMin, Arg: dt, Type: dateT},
		{Func: plan.AggMax, Arg: s, Type: strT},
		{Func: plan.AggMin, Arg: d, Type: d102},
		{Func: plan.AggMax, Arg: f, Type: f64T},
		{Func: plan.AggMin, Arg: bl, Type: boolT},
	}
	out := plan.Schema{{Name: "k", Type: strT}, {Name: "g", Type: i64T}}
	for i, a := range aggs {
		out = append(out, plan.Field{Name: fmt.Sprint("a", i), Type: a.Type})
	}
	op, err := NewHashAggregate(newSource(schema.Arrow(), r1, r2), aggNode(plan.AggSingle, out, []*plan.Expr{k, g}, aggs...), Options{Mem: mem, BatchRows: 2})
	got := runOp(t, op, err)
	N := any(nil)
	want := [][]any{
		// k, g, sum x, sum d, sum f, count x, count*, avg x, avg d, min dt, max s, min d, max f, min bl
		{"a", int64(1), int64(10), "1.50", 4.0, int64(1), int64(2), 10.0, 0.75, "1998-01-01", "zz", "0.25", 3.0, false},
		{"b", int64(1), int64(20), "2.50", 2.0, int64(1), int64(1), 20.0, 2.5, "1997-05-05", "m", "2.50", 2.0, false},
		{N, int64(2), int64(11), "3.00", 5.0, int64(2), int64(2), 5.5, 3.0, "2001-01-01", "q", "3.00", 5.0, true},
		{"b", N, int64(7), "1.00", 4.0, int64(1), int64(1), 7.0, 1.0, "1990-01-01", N, "1.00", 4.0, true},
		{"c", int64(3), N, N, N, int64(0), int64(1), N, N, N, N, N, N, N},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%v\nwant\n%v", got, want)
	}
}

func sliceCols(cols []col, lo, hi int) []col {
	out := make([]col, len(cols))
	for i, c := range cols {
		out[i] = col{c.name, c.t, c.vals[lo:hi]}
	}
	return out
}

func TestHashAggregateNoGroupBy(t *testing.T) {
	aggs := []plan.AggCall{
		{Func: plan.AggCountStar, Type: i64T},
		{Func: plan.AggCount, Arg: cref(0, i64T), Type: i64T},
		{Func: plan.AggSum, Arg: cref(0, i64T), Type: i64T},
		{Func: plan.AggAvg, Arg: cref(0, i64T), Type: f64T},
		{Func: plan.AggMin, Arg: cref(0, i64T), Type: i64T},
	}
	final := plan.Schema{{Name: "c", Type: i64T}, {Name: "cx", Type: i64T}, {Name: "s", Type: i64T}, {Name: "a", Type: f64T}, {Name: "m", Type: i64T}}
	partial := plan.Schema{{Name: "c", Type: i64T}, {Name: "cx", Type: i64T}, {Name: "s", Type: i64T}, {Name: "as", Type: i64T}, {Name: "ac", Type: i64T}, {Name: "m", Type: i64T}}
	in := plan.Schema{{Name: "x", Type: i64T}}
	N := any(nil)
	for _, tc := range []struct {
		mode   plan.AggMode
		schema plan.Schema
		input  plan.Schema
		want   [][]any
	}{
		{plan.AggSingle, final, in, [][]any{{int64(0), int64(0), N, N, N}}},
		{plan.AggFinal, final, partial, [][]any{{int64(0), int64(0), N, N, N}}},
		{plan.AggPartial, partial, in, nil},
	} {
		mem := checkedMem(t)
		// an empty batch and no batch at all behave the same
		src := newSource(tc.input.Arrow(), mkRec(mem, emptyCols(tc.input)...))
		op, err := NewHashAggregate(src, aggNode(tc.mode, tc.schema, nil, aggs...), Options{Mem: mem})
		if got := runOp(t, op, err); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s over no rows: got %v want %v", tc.mode, got, tc.want)
		}
	}
	// with rows
	mem := checkedMem(t)
	src := newSource(in.Arrow(), mkRec(mem, ints("x", 3, nil, 4)), mkRec(mem, ints("x", 5)))
	op, err := NewHashAggregate(src, aggNode(plan.AggSingle, final, nil, aggs...), Options{Mem: mem})
	if got, want := runOp(t, op, err), [][]any{{int64(4), int64(3), int64(12), 4.0, int64(3)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v want %v", got, want)
	}
}

func emptyCols(s plan.Schema) []col {
	out := make([]col, len(s))
	for i, f := range s {
		out[i] = col{f.Name, f.Type, nil}
	}
	return out
}

// randomAggInput makes batches of (key1 string, key2 int, x int, d decimal, f float).
func randomAggInput(rng *rand.Rand, nrows, ngroups, batch int) [][]col {
	var out [][]col
	for lo := 0; lo < nrows; lo += batch {
		n := min(batch, nrows-lo)
		var k1, k2, x, d, f, u []any
		for i := 0; i < n; i++ {
			u = append(u, int64((lo+i)*7919%1000003)) // unique (nrows < 1000003), not in row order
			g := rng.Intn(ngroups)
			if g%17 == 0 {
				k1 = append(k1, nil)
			} else {
				k1 = append(k1, fmt.Sprintf("key-%d", g%97))
			}
			k2 = append(k2, int64(g/97))
			if rng.Intn(10) == 0 {
				x, d, f = append(x, nil), append(d, nil), append(f, nil)
			} else {
				x = append(x, int64(rng.Intn(1000)-500))
				d = append(d, int64(rng.Intn(100000)))
				f = append(f, float64(rng.Intn(64))/4)
			}
		}
		out = append(out, []col{strs("k1", k1...), ints("k2", k2...), ints("x", x...), decs("d", 12, 2, d...), floats("f", f...), ints("u", u...)})
	}
	return out
}

// TestPartialFinalEqualsSingle: partial tasks then a final aggregation
// equal one single aggregation, with hash collisions forced, and with the
// partial tasks switching to one-row states after 50 rows (adaptive
// partial aggregation, hashagg_skip.go) or never.
func TestPartialFinalEqualsSingle(t *testing.T) {
	defer func(m uint64) { testHashMask = m }(testHashMask)
	for _, c := range []struct {
		mask uint64
		skip bool
	}{{0, false}, {0xff, false}, {0, true}, {0xff, true}} { // 0xff forces hash collisions
		mask := c.mask
		testHashMask = mask
		mem := checkedMem(t)
		rng := rand.New(rand.NewSource(7))
		batches := randomAggInput(rng, 6000, 900, 500)
		inSchema := schemaOf(batches[0])
		keys := []*plan.Expr{cref(0, strT), cref(1, i64T)}
		x, d, f := cref(2, i64T), cref(3, dec(12, 2)), cref(4, f64T)
		aggs := []plan.AggCall{
			{Func: plan.AggSum, Arg: x, Type: i64T},
			{Func: plan.AggSum, Arg: d, Type: dec(18, 2)},
			{Func: plan.AggCount, Arg: x, Type: i64T},
			{Func: plan.AggCountStar, Type: i64T},
			{Func: plan.AggAvg, Arg: d, Type: f64T},
			{Func: plan.AggAvg, Arg: f, Type: f64T},
			{Func: plan.AggMin, Arg: x, Type: i64T},
			{Func: plan.AggMax, Arg: d, Type: dec(12, 2)},
			{Func: plan.AggArgMin, Arg: d, More: []*plan.Expr{cref(5, i64T)}, Type: dec(12, 2)}, // f: no ties
			{Func: plan.AggArgMax, Arg: cref(0, strT), More: []*plan.Expr{cref(5, i64T)}, Type: strT},
			{Func: plan.AggArgMaxNull, Arg: x, More: []*plan.Expr{cref(5, i64T)}, Type: i64T},
		}
		finalSchema := plan.Schema{{Name: "k1", Type: strT}, {Name: "k2", Type: i64T}}
		partialSchema := append(plan.Schema{}, finalSchema...)
		for i, a := range aggs {
			finalSchema = append(finalSchema, plan.Field{Name: fmt.Sprint("r", i), Type: a.Type})
			if a.Func == plan.AggAvg {
				partialSchema = append(partialSchema, plan.Field{Name: fmt.Sprint("s", i), Type: plan.SumType(a.Arg.Type)}, plan.Field{Name: fmt.Sprint("c", i), Type: i64T})
			} else {
				for j, st := range AggStateTypes(a) {
					partialSchema = append(partialSchema, plan.Field{Name: fmt.Sprint("s", i, "_", j), Type: st})
				}
			}
		}
		mk := func(lo, hi int) Operator {
			var recs []arrow.RecordBatch
			for _, b := range batches[lo:hi] {
				recs = append(recs, mkRec(mem, b...))
			}
			return newSource(inSchema.Arrow(), recs...)
		}
		opts := Options{Mem: mem, BatchRows: 256}
		single, err := NewHashAggregate(mk(0, len(batches)), aggNode(plan.AggSingle, finalSchema, keys, aggs...), opts)
		want := runOp(t, single, err)

		// three partial tasks, their outputs concatenated into one final
		var partials []arrow.RecordBatch
		popts := opts
		popts.PartialAggSkipRatio = 2 // never
		if c.skip {
			popts.PartialAggProbeRows, popts.PartialAggSkipRatio = 50, 0.001
		}
		var skipped int64
		for _, r := range [][2]int{{0, 3}, {3, 7}, {7, len(batches)}} {
			p, err := NewHashAggregate(mk(r[0], r[1]), aggNode(plan.AggPartial, partialSchema, keys, aggs...), popts)
			if err != nil {
				t.Fatal(err)
			}
			recs := drainAll(t, p)
			partials = append(partials, recs...)
			skipped += p.(PartialSkipper).PartialSkippedRows()
		}
		if (skipped > 0) != c.skip {
			t.Fatalf("mask %x skip %v: %d rows passed on unaggregated", mask, c.skip, skipped)
		}
		finalKeys := []*plan.Expr{cref(0, strT), cref(1, i64T)}
		finalAggs := make([]plan.AggCall, len(aggs))
		for i, a := range aggs {
			finalAggs[i] = plan.AggCall{Func: a.Func, More: a.More, Type: a.Type} // Args unused in final mode
		}
		final, err := NewHashAggregate(newSource(partialSchema.Arrow(), partials...), aggNode(plan.AggFinal, finalSchema, finalKeys, finalAggs...), opts)
		got := runOp(t, final, err)
		sortRows(want)
		sortRows(got)
		if len(want) == 0 || len(got) != len(want) {
			t.Fatalf("mask %x: %d groups from final, %d from single", mask, len(got), len(want))
		}
		for i := range want {
			if !rowsClose(got[i], want[i]) {
				t.Fatalf("mask %x: row %d: final %v single %v", mask, i, got[i], want[i])
			}
		}
		// reference: the number of groups
		seen := map[string]bool{}
		for _, b := range batches {
			for i := range b[0].vals {
				seen[fmt.Sprint(b[0].vals[i], "|", b[1].vals[i])] = true
			}
		}
		if len(seen) != len(want) {
			t.Fatalf("mask %x: %d groups, reference %d", mask, len(want), len(seen))
		}
	}
}

func rowsClose(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		fa, ok1 := a[i].(float64)
		fb, ok2 := b[i].(float64)
		if ok1 && ok2 {
			if math.Abs(fa-fb) > 1e-9*math.Max(1, math.Abs(fb)) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestHashAggregateManyGroups(t *testing.T) {
	mem := checkedMem(t)
	const n = 200000
	var recs []arrow.RecordBatch
	ref := map[int64]int64{}
	for lo := 0; lo < n; lo += 8192 {
		var ks, vs []any
		for i := lo; i < min(n, lo+8192); i++ {
			k := int64((i * 7919) % 150000)
			ks, vs = append(ks, k), append(vs, int64(i))
			ref[k] += int64(i)
		}
		recs = append(recs, mkRec(mem, ints("k", ks...), ints("v", vs...)))
	}
	schema := plan.Schema{{Name: "k", Type: i64T}, {Name: "s", Type: i64T}}
	op, err := NewHashAggregate(newSource(schema.Arrow(), recs...),
		aggNode(plan.AggSingle, schema, []*plan.Expr{cref(0, i64T)}, plan.AggCall{Func: plan.AggSum, Arg: cref(1, i64T), Type: i64T}),
		Options{Mem: mem})
	got := runOp(t, op, err)
	if len(got) != len(ref) {
		t.Fatalf("%d groups, want %d", len(got), len(ref))
	}
	for _, r := range got {
		if ref[r[0].(int64)] != r[1].(int64) {
			t.Fatalf("group %v: sum %v want %v", r[0], r[1], ref[r[0].(int64)])
		}
	}
}

func TestHashAggregateMemoryLimit(t *testing.T) {
	mem := checkedMem(t)
	var recs []arrow.RecordBatch
	for lo := 0; lo < 100000; lo += 10000 {
		var ks []any
		for i := lo; i < lo+10000; i++ {
			ks = append(ks, fmt.Sprintf("group-%08d", i))
		}
		recs = append(recs, mkRec(mem, strs("k", ks...)))
	}
	schema := plan.Schema{{Name: "k", Type: strT}, {Name: "c", Type: i64T}}
	op, err := NewHashAggregate(newSource(plan.Schema{{Name: "k", Type: strT}}.Arrow(), recs...),
		aggNode(plan.AggSingle, schema, []*plan.Expr{cref(0, strT)}, plan.AggCall{Func: plan.AggCountStar, Type: i64T}),
		Options{Mem: mem, MemoryLimit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	_, err = op.Next(context.Background())
	var mle *MemoryLimitError
	if !errors.Is(err, ErrMemoryLimit) || !errors.As(err, &mle) || mle.Operator != "aggregate" {
		t.Fatalf("want a memory limit error, got %v", err)
	}
}

func TestSumDecimalOverflow(t *testing.T) {
	mem := checkedMem(t)
	in := plan.Schema{{Name: "d", Type: dec(18, 0)}}
	src := newSource(in.Arrow(), mkRec(mem, decs("d", 18, 0, "999999999999999999", "999999999999999999")))
	out := plan.Schema{{Name: "s", Type: dec(18, 0)}}
	op, err := NewHashAggregate(src, aggNode(plan.AggSingle, out, nil, plan.AggCall{Func: plan.AggSum, Arg: cref(0, dec(18, 0)), Type: dec(18, 0)}), Options{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if _, err := op.Next(context.Background()); !errors.Is(err, plan.ErrDecimalOverflow) {
		t.Fatalf("want ErrDecimalOverflow, got %v", err)
	}
}
