package exec

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/sluicedb/sluice/planner/plan"
)

// globalInput is the rows of the global aggregate tests, generated once
// and kept as Go values for the reference answers.
type globalInput struct {
	f    []any // float64: NULLs, NaN, -0, +0, duplicates
	x    []any // int64: NULLs, 1000 distinct values
	d    []any // decimal(12,2) unscaled: NULLs, 5000 distinct values
	s    []any // string: NULLs, 300 distinct values
	sp   []any // string, mostly NULL (what string_agg and list hold)
	xp   []any // x where sp is not NULL, else NULL
	none []any // float64, every value NULL
}

func newGlobalInput(rng *rand.Rand, n int) *globalInput {
	in := &globalInput{}
	for i := 0; i < n; i++ {
		var f any = float64(rng.Intn(4000)) / 8
		switch r := rng.Intn(50); {
		case r == 0:
			f = nil
		case r == 1:
			f = math.NaN()
		case r == 2:
			f = math.Copysign(0, -1)
		case r == 3:
			f = 0.0
		}
		in.f = append(in.f, f)
		if rng.Intn(9) == 0 {
			in.x, in.d, in.s = append(in.x, nil), append(in.d, nil), append(in.s, nil)
		} else {
			in.x = append(in.x, int64(rng.Intn(1000)-500))
			in.d = append(in.d, int64(rng.Intn(5000)*7))
			in.s = append(in.s, fmt.Sprintf("s%03d", rng.Intn(300)))
		}
		if rng.Intn(60) == 0 {
			in.sp = append(in.sp, fmt.Sprintf("v%d", rng.Intn(40)))
			in.xp = append(in.xp, in.x[i])
		} else {
			in.sp, in.xp = append(in.sp, nil), append(in.xp, nil)
		}
		in.none = append(in.none, nil)
	}
	return in
}

func (in *globalInput) batches(n int) [][]col {
	var out [][]col
	for lo := 0; lo < len(in.f); lo += n {
		hi := min(len(in.f), lo+n)
		out = append(out, []col{floats("f", in.f[lo:hi]...), ints("x", in.x[lo:hi]...), decs("d", 12, 2, in.d[lo:hi]...),
			strs("s", in.s[lo:hi]...), strs("sp", in.sp[lo:hi]...), floats("none", in.none[lo:hi]...), ints("xp", in.xp[lo:hi]...)})
	}
	return out
}

// refQuantile is DuckDB's quantile of the non-NULL values of v (NaN after
// every number): interpolated, or the first value at or past f.
func refQuantile(v []any, f float64, discrete bool) any {
	var xs []float64
	for _, x := range v {
		if x != nil {
			xs = append(xs, x.(float64))
		}
	}
	if len(xs) == 0 {
		return nil
	}
	slices.SortFunc(xs, func(a, b float64) int {
		switch {
		case math.IsNaN(a) && math.IsNaN(b):
			return 0
		case math.IsNaN(a):
			return 1
		case math.IsNaN(b):
			return -1
		}
		return cmp.Compare(a, b)
	})
	r := quantile(xs, f, discrete)
	if math.IsNaN(r) {
		return "NaN"
	}
	return r
}

// refDistinct is the number of distinct non-NULL values of v (-0 = +0,
// NaN = NaN), or, with keep, the values themselves in first-occurrence
// order (a NULL once among them when keepNull).
func refDistinct(v []any, keepNull bool) (int64, []any) {
	seen := map[string]bool{}
	var out []any
	for _, x := range v {
		k := fmt.Sprint(x)
		if x == nil {
			if !keepNull {
				continue
			}
			k = "\x00null"
		}
		if f, ok := x.(float64); ok && f == 0 {
			k = "0"
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, x)
		}
	}
	return int64(len(out)), out
}

func nonNull(v []any) []any {
	var out []any
	for _, x := range v {
		if x != nil {
			out = append(out, x)
		}
	}
	return out
}

func joinAny(v []any, sep string) any {
	if len(v) == 0 {
		return nil
	}
	ss := make([]string, len(v))
	for i, x := range v {
		ss[i] = fmt.Sprint(x)
	}
	return strings.Join(ss, sep)
}

func listOrNull(v []any) any {
	if len(v) == 0 {
		return nil
	}
	return v
}

// cells renders the one output row, a list as []any of its elements.
func cells(t *testing.T, recs []arrow.RecordBatch) []any {
	t.Helper()
	var out []any
	for _, r := range recs {
		if r.NumRows() == 0 {
			continue
		}
		if out != nil || r.NumRows() != 1 {
			t.Fatalf("more than one row")
		}
		for _, c := range r.Columns() {
			if l, ok := c.(*array.List); ok {
				if l.IsNull(0) {
					out = append(out, nil)
					continue
				}
				lo, hi := l.ValueOffsets(0)
				s := array.NewSlice(l.ListValues(), lo, hi)
				out = append(out, goVals(s))
				s.Release()
				continue
			}
			out = append(out, goVals(c)[0])
		}
	}
	return out
}

// TestGlobalAggregateSpill: a single-mode aggregate without GROUP BY
// (median, quantiles, count(DISTINCT) of numbers, decimals and strings,
// string_agg and list with and without DISTINCT, beside sum, count and
// min) over many times its budget spills its values and answers exactly
// what the in-memory aggregate and an independent reference answer; NULLs
// are skipped (kept once by a DISTINCT list), NaN sorts after every
// number, an all-NULL column gives NULL (0 for a count), and a
// string_agg whose result alone passes the budget fails with SL104.
func TestGlobalAggregateSpill(t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	in := newGlobalInput(rng, 40000)
	batches := in.batches(1000)
	inSchema := schemaOf(batches[0])
	f, x, d, s, sp, none := cref(0, f64T), cref(1, i64T), cref(2, dec(12, 2)), cref(3, strT), cref(4, strT), cref(5, f64T)
	xs := &plan.Expr{Op: plan.OpCast, Type: strT, Args: []*plan.Expr{x}}
	_, dsp := refDistinct(in.sp, false)
	_, dspNull := refDistinct(in.sp, true)
	nd, _ := refDistinct(in.d, false)
	ns, _ := refDistinct(in.s, false)
	nx, _ := refDistinct(in.x, false)
	nf, _ := refDistinct(in.f, false)
	strsOf := func(v []any) []any {
		out := make([]any, len(v))
		for i, x := range v {
			if x != nil {
				out[i] = strconv.FormatInt(x.(int64), 10)
			}
		}
		return out
	}
	var sum, cnt int64
	for _, v := range in.x {
		if v != nil {
			sum += v.(int64)
			cnt++
		}
	}
	type ac struct {
		agg  plan.AggCall
		want any
	}
	xp := cref(6, i64T)
	cases := []struct {
		name  string
		limit int64 // default 64 KiB
		calls []ac
		// tooLarge: the result alone does not fit: SL104 naming it
		tooLarge string
	}{
		{name: "quantiles", calls: []ac{
			{plan.AggCall{Func: plan.AggMedian, Arg: f, Type: f64T}, refQuantile(in.f, 0.5, false)},
			{plan.AggCall{Func: plan.AggPercentileCont, Arg: f, Type: f64T, Fraction: 0.9}, refQuantile(in.f, 0.9, false)},
			{plan.AggCall{Func: plan.AggPercentileCont, Arg: f, Type: f64T, Fraction: 0.999}, refQuantile(in.f, 0.999, false)},
			{plan.AggCall{Func: plan.AggPercentileDisc, Arg: f, Type: f64T, Fraction: 0.25}, refQuantile(in.f, 0.25, true)},
			{plan.AggCall{Func: plan.AggPercentileDisc, Arg: f, Type: f64T, Fraction: 1}, refQuantile(in.f, 1, true)},
			{plan.AggCall{Func: plan.AggPercentileDisc, Arg: f, Type: f64T, Fraction: 0}, refQuantile(in.f, 0, true)},
			{plan.AggCall{Func: plan.AggMedian, Arg: none, Type: f64T}, nil},
			{plan.AggCall{Func: plan.AggCountStar, Type: i64T}, int64(len(in.f))},
		}},
		{name: "count_distinct", calls: []ac{
			{plan.AggCall{Func: plan.AggCountDistinct, Arg: x, Type: i64T}, nx},
			{plan.AggCall{Func: plan.AggCountDistinct, Arg: d, Type: i64T}, nd},
			{plan.AggCall{Func: plan.AggCountDistinct, Arg: s, Type: i64T}, ns},
			{plan.AggCall{Func: plan.AggCountDistinct, Arg: f, Type: i64T}, nf},
			{plan.AggCall{Func: plan.AggCountDistinct, Arg: none, Type: i64T}, int64(0)},
			{plan.AggCall{Func: plan.AggSum, Arg: x, Type: i64T}, sum},
		}},
		{name: "mixed", calls: []ac{
			{plan.AggCall{Func: plan.AggMedian, Arg: f, Type: f64T}, refQuantile(in.f, 0.5, false)},
			{plan.AggCall{Func: plan.AggCountDistinct, Arg: s, Type: i64T}, ns},
			{plan.AggCall{Func: plan.AggStringAgg, Arg: sp, Type: strT, Sep: ","}, joinAny(nonNull(in.sp), ",")},
			{plan.AggCall{Func: plan.AggStringAgg, Arg: sp, Type: strT, Sep: "|", Distinct: true}, joinAny(dsp, "|")},
			{plan.AggCall{Func: plan.AggList, Arg: sp, Type: plan.ListOf(strT), Distinct: true}, listOrNull(dspNull)},
			{plan.AggCall{Func: plan.AggStringAgg, Arg: call(plan.OpCast, strT, xp), Type: strT, Sep: ";"}, joinAny(strsOf(nonNull(in.xp)), ";")},
			{plan.AggCall{Func: plan.AggCount, Arg: x, Type: i64T}, cnt},
			{plan.AggCall{Func: plan.AggStringAgg, Arg: call(plan.OpCast, strT, none), Type: strT, Sep: ","}, nil},
			{plan.AggCall{Func: plan.AggList, Arg: xp, Type: plan.ListOf(i64T), Distinct: true}, listOrNull(func() []any { _, v := refDistinct(in.xp, true); return v }())},
		}},
		// a list keeps NULLs: 40,000 of them fit 512 KiB, not 64
		{name: "list", limit: 512 << 10, calls: []ac{
			{plan.AggCall{Func: plan.AggList, Arg: sp, Type: plan.ListOf(strT)}, listOrNull(in.sp)},
			{plan.AggCall{Func: plan.AggList, Arg: xp, Type: plan.ListOf(i64T)}, listOrNull(in.xp)},
			{plan.AggCall{Func: plan.AggMedian, Arg: f, Type: f64T}, refQuantile(in.f, 0.5, false)},
			{plan.AggCall{Func: plan.AggList, Arg: none, Type: plan.ListOf(f64T), Distinct: true}, []any{nil}},
		}},
		{name: "list_too_large", tooLarge: "list", calls: []ac{
			{plan.AggCall{Func: plan.AggList, Arg: x, Type: plan.ListOf(i64T)}, nil},
		}},
		{name: "string_agg_too_large", tooLarge: "string_agg", calls: []ac{
			{plan.AggCall{Func: plan.AggStringAgg, Arg: xs, Type: strT, Sep: ","}, nil},
			{plan.AggCall{Func: plan.AggMedian, Arg: f, Type: f64T}, nil},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var aggs []plan.AggCall
			var schema plan.Schema
			var want []any
			for i, k := range c.calls {
				k.agg.Name = fmt.Sprint("r", i)
				aggs = append(aggs, k.agg)
				schema = append(schema, plan.Field{Name: k.agg.Name, Type: k.agg.Type})
				want = append(want, k.want)
			}
			run := func(opts Options) ([]any, error) {
				op, err := NewHashAggregate(newSource(inSchema.Arrow(), recsOf(t, batches)...), aggNode(plan.AggSingle, schema, nil, aggs...), opts)
				if err != nil {
					t.Fatal(err)
				}
				defer op.Close()
				var recs []arrow.RecordBatch
				defer func() { releaseRecs(recs) }()
				for {
					rec, err := op.Next(context.Background())
					if err == io.EOF {
						return cells(t, recs), nil
					}
					if err != nil {
						return nil, err
					}
					recs = append(recs, rec)
				}
			}
			limit := c.limit
			if limit == 0 {
				limit = 64 << 10
			}
			pool, check := spillPool(t, limit)
			got, err := run(Options{Mem: checkedMem(t), Pool: pool, BatchRows: 700})
			if pool.SpillCount() == 0 {
				t.Fatalf("nothing spilled under a budget of %d bytes", limit)
			}
			if c.tooLarge != "" {
				var mle *MemoryLimitError
				if !errors.As(err, &mle) || plan.CodeOf(err) != plan.CodeMemoryLimit || !strings.Contains(err.Error(), c.tooLarge) ||
					!strings.Contains(err.Error(), "alone does not fit") {
					t.Fatalf("want SL104 naming %s's result, got %v", c.tooLarge, err)
				}
				check()
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mem, err := run(Options{Mem: checkedMem(t)})
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) || !reflect.DeepEqual(mem[i], want[i]) {
					t.Errorf("%s: spilled %v, in memory %v, want %v", aggLabel(aggs[i], i), trunc(got[i]), trunc(mem[i]), trunc(want[i]))
				}
			}
			t.Logf("%d rows, budget %d: %d spill files, %d bytes spilled, peak %d", len(in.f), limit, pool.SpillCount(), pool.SpillBytes(), pool.Peak())
			// the peak counts the batch that made the aggregate spill (a
			// count(DISTINCT)'s hash table grows by doubling), never all
			// the values
			if pool.Peak() > 4*limit {
				t.Errorf("peak %d, budget %d", pool.Peak(), limit)
			}
			check()
		})
	}
}

func trunc(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// TestGlobalAggregateFitsDoesNotSpill: within the budget a global
// aggregate keeps its values in memory (no spill file), and over no rows
// it answers NULL (median, string_agg, list) and 0 (count(DISTINCT)).
func TestGlobalAggregateFitsDoesNotSpill(t *testing.T) {
	aggs := []plan.AggCall{
		{Func: plan.AggMedian, Arg: cref(0, f64T), Type: f64T},
		{Func: plan.AggCountDistinct, Arg: cref(1, strT), Type: i64T},
		{Func: plan.AggStringAgg, Arg: cref(1, strT), Type: strT, Sep: ","},
		{Func: plan.AggList, Arg: cref(1, strT), Type: plan.ListOf(strT)},
	}
	schema := plan.Schema{{Name: "m", Type: f64T}, {Name: "c", Type: i64T}, {Name: "s", Type: strT}, {Name: "l", Type: plan.ListOf(strT)}}
	for _, c := range []struct {
		name  string
		batch [][]col
		want  []any
	}{
		{"rows", [][]col{{floats("f", 3.0, nil, 1.0, math.NaN(), 2.0), strs("s", "b", "a", nil, "b", "c")}},
			[]any{2.5, int64(3), "b,a,b,c", []any{"b", "a", nil, "b", "c"}}},
		{"empty", nil, []any{nil, int64(0), nil, nil}},
		{"all_null", [][]col{{floats("f", nil, nil), strs("s", nil, nil)}}, []any{nil, int64(0), nil, []any{nil, nil}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pool, check := spillPool(t, 1<<20)
			inSchema := plan.Schema{{Name: "f", Type: f64T}, {Name: "s", Type: strT}}
			op, err := NewHashAggregate(newSource(inSchema.Arrow(), recsOf(t, c.batch)...), aggNode(plan.AggSingle, schema, nil, aggs...),
				Options{Mem: checkedMem(t), Pool: pool})
			if err != nil {
				t.Fatal(err)
			}
			recs := drainAll(t, op)
			got := cells(t, recs)
			releaseRecs(recs)
			op.Close()
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
			if pool.SpillCount() != 0 {
				t.Errorf("spilled %d files within the budget", pool.SpillCount())
			}
			check()
		})
	}
}

// TestGlobalAggregateSpillListWrapped: the list of several ORDER BYs
// (list over one-element lists, NULL lists skipped, a NULL element kept)
// spills beside a median and gives the in-memory list.
func TestGlobalAggregateSpillListWrapped(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	lt := plan.ListOf(i64T)
	inSchema := plan.Schema{{Name: "f", Type: f64T, Nullable: true}, {Name: "w", Type: lt, Nullable: true}}
	var want []any
	var fs []any
	type row struct {
		f    float64
		w    int64
		null bool // the list is NULL (another copy's row)
		elem bool // the one element is NULL
	}
	var rs []row
	for i := 0; i < 40000; i++ {
		r := row{f: float64(rng.Intn(1000)), null: rng.Intn(50) != 0, elem: rng.Intn(4) == 0, w: int64(rng.Intn(100))}
		rs = append(rs, r)
		fs = append(fs, r.f)
		if !r.null {
			if r.elem {
				want = append(want, nil)
			} else {
				want = append(want, r.w)
			}
		}
	}
	build := func(t *testing.T) []arrow.RecordBatch {
		mem := checkedMem(t)
		var out []arrow.RecordBatch
		for lo := 0; lo < len(rs); lo += 1000 {
			fb := array.NewFloat64Builder(mem)
			lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int64)
			vb := lb.ValueBuilder().(*array.Int64Builder)
			for _, r := range rs[lo : lo+1000] {
				fb.Append(r.f)
				switch {
				case r.null:
					lb.AppendNull()
				case r.elem:
					lb.Append(true)
					vb.AppendNull()
				default:
					lb.Append(true)
					vb.Append(r.w)
				}
			}
			fa, la := fb.NewArray(), lb.NewArray()
			out = append(out, array.NewRecordBatch(inSchema.Arrow(), []arrow.Array{fa, la}, 1000))
			fa.Release()
			la.Release()
			fb.Release()
			lb.Release()
		}
		return out
	}
	aggs := []plan.AggCall{
		{Func: plan.AggListWrapped, Arg: cref(1, lt), Type: lt},
		{Func: plan.AggMedian, Arg: cref(0, f64T), Type: f64T},
	}
	schema := plan.Schema{{Name: "l", Type: lt}, {Name: "m", Type: f64T}}
	for _, limit := range []int64{0, 64 << 10} {
		opts := Options{Mem: checkedMem(t), BatchRows: 700}
		var check func()
		if limit > 0 {
			opts.Pool, check = spillPool(t, limit)
		}
		op, err := NewHashAggregate(newSource(inSchema.Arrow(), build(t)...), aggNode(plan.AggSingle, schema, nil, aggs...), opts)
		if err != nil {
			t.Fatal(err)
		}
		recs := drainAll(t, op)
		got := cells(t, recs)
		releaseRecs(recs)
		op.Close()
		if !reflect.DeepEqual(got, []any{want, refQuantile(fs, 0.5, false)}) {
			t.Errorf("budget %d: got %v, want %v", limit, trunc(got), trunc([]any{want, refQuantile(fs, 0.5, false)}))
		}
		if limit > 0 {
			if opts.Pool.SpillCount() == 0 {
				t.Errorf("budget %d: nothing spilled", limit)
			}
			check()
		}
	}
}
