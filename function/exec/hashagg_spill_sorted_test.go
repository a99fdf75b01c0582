package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// groupedInput is globalInput's rows with group keys beside them: k1 a
// string that is "big" for 60% of the rows (else one of 40 values or
// NULL), k2 an int64 of 2 values, k3 a string of 3 values, and many a
// key of 3,000 values but for 40% of the rows, where it is 0.
func groupedInput(rng *rand.Rand, n, batch int) [][]col {
	in := newGlobalInput(rng, n)
	out := in.batches(batch)
	for b, cols := range out {
		var k1, k2, k3, many []any
		for i := range cols[0].vals {
			r := b*batch + i
			switch v := rng.Intn(100); {
			case v < 60:
				k1 = append(k1, "big")
			case v < 62:
				k1 = append(k1, nil)
			default:
				k1 = append(k1, fmt.Sprintf("k%02d", v%40))
			}
			k2 = append(k2, int64(r%2))
			k3 = append(k3, fmt.Sprintf("c%d", rng.Intn(3)))
			if rng.Intn(10) < 4 {
				many = append(many, int64(0))
			} else {
				many = append(many, int64(1+rng.Intn(3000)))
			}
		}
		out[b] = append(cols, strs("k1", k1...), ints("k2", k2...), strs("k3", k3...), ints("many", many...))
	}
	return out
}

// TestGroupedAggregateSortSpill: a single-mode aggregate with GROUP BY
// whose groups are each larger than the budget (1, 2 and 3 keys of a few
// values), or a few huge groups among thousands of small ones, spills its
// values and aggregates them by sorting (hashagg_spill_sorted.go), where
// grace partitioning alone failed with SL104 ("a group larger than the
// budget"); its rows are exactly the in-memory ones: quantiles, count
// (DISTINCT), string_agg and list in arrival order, DISTINCT ones keeping
// first occurrences, NULL for groups without values. A group's string_agg
// whose result alone passes the budget is SL104 saying so.
func TestGroupedAggregateSortSpill(t *testing.T) {
	rng := rand.New(rand.NewSource(43))
	batches := groupedInput(rng, 40000, 1000)
	inSchema := schemaOf(batches[0])
	f, x, d, s, sp, none, xp := cref(0, f64T), cref(1, i64T), cref(2, dec(12, 2)), cref(3, strT), cref(4, strT), cref(5, f64T), cref(6, i64T)
	k1, k2, k3, many := cref(7, strT), cref(8, i64T), cref(9, strT), cref(10, i64T)
	quantiles := []plan.AggCall{
		{Func: plan.AggMedian, Arg: f, Type: f64T},
		{Func: plan.AggPercentileCont, Arg: f, Type: f64T, Fraction: 0.9},
		{Func: plan.AggPercentileDisc, Arg: f, Type: f64T, Fraction: 0.25},
		{Func: plan.AggMedian, Arg: none, Type: f64T},
		{Func: plan.AggCountStar, Type: i64T},
		{Func: plan.AggSum, Arg: x, Type: i64T},
	}
	distincts := []plan.AggCall{
		{Func: plan.AggCountDistinct, Arg: x, Type: i64T},
		{Func: plan.AggCountDistinct, Arg: d, Type: i64T},
		{Func: plan.AggCountDistinct, Arg: s, Type: i64T},
		{Func: plan.AggCountDistinct, Arg: f, Type: i64T},
		{Func: plan.AggCountDistinct, Arg: none, Type: i64T},
		{Func: plan.AggMax, Arg: s, Type: strT},
	}
	strings_ := []plan.AggCall{
		{Func: plan.AggStringAgg, Arg: sp, Type: strT, Sep: ","},
		{Func: plan.AggStringAgg, Arg: sp, Type: strT, Sep: "|", Distinct: true},
		{Func: plan.AggStringAgg, Arg: call(plan.OpCast, strT, xp), Type: strT, Sep: ";"},
		{Func: plan.AggList, Arg: sp, Type: plan.ListOf(strT), Distinct: true},
		{Func: plan.AggMedian, Arg: f, Type: f64T},
		{Func: plan.AggCount, Arg: x, Type: i64T},
	}
	// a list keeps NULLs: a group's list of 24,000 does not fit 64 KiB
	lists := []plan.AggCall{
		{Func: plan.AggList, Arg: xp, Type: plan.ListOf(i64T)},
		{Func: plan.AggList, Arg: sp, Type: plan.ListOf(strT)},
		{Func: plan.AggList, Arg: none, Type: plan.ListOf(f64T), Distinct: true},
		{Func: plan.AggCountDistinct, Arg: x, Type: i64T},
	}
	mixed := []plan.AggCall{
		{Func: plan.AggMedian, Arg: f, Type: f64T},
		{Func: plan.AggCountDistinct, Arg: x, Type: i64T},
		{Func: plan.AggStringAgg, Arg: sp, Type: strT, Sep: ","},
		{Func: plan.AggListUnordered, Arg: xp, Type: plan.ListOf(i64T)},
		{Func: plan.AggSum, Arg: d, Type: dec(38, 2)},
	}
	cases := []struct {
		name  string
		keys  []*plan.Expr
		calls []plan.AggCall
		limit int64 // default 64 KiB
		// tooLarge: a group's result alone does not fit: SL104 naming it
		tooLarge string
	}{
		{name: "quantiles_1key", keys: []*plan.Expr{k1}, calls: quantiles},
		{name: "quantiles_2keys", keys: []*plan.Expr{k2, k1}, calls: quantiles},
		{name: "quantiles_3keys", keys: []*plan.Expr{k2, k3, k1}, calls: quantiles},
		{name: "distinct_1key", keys: []*plan.Expr{k2}, calls: distincts},
		{name: "distinct_2keys", keys: []*plan.Expr{k3, k2}, calls: distincts},
		{name: "distinct_3keys", keys: []*plan.Expr{k1, k2, k3}, calls: distincts},
		{name: "strings_1key", keys: []*plan.Expr{k1}, calls: strings_},
		{name: "strings_2keys", keys: []*plan.Expr{k1, k2}, calls: strings_},
		{name: "strings_3keys", keys: []*plan.Expr{k3, k1, k2}, calls: strings_},
		{name: "lists_1key", keys: []*plan.Expr{k1}, calls: lists, limit: 1 << 20},
		{name: "lists_2keys", keys: []*plan.Expr{k2, k1}, calls: lists, limit: 512 << 10},
		{name: "lists_3keys", keys: []*plan.Expr{k1, k2, k3}, calls: lists, limit: 256 << 10},
		// thousands of small groups and a huge one: grace partitions
		// first, then the partition of the huge group sorts (its states
		// are the spilled lists)
		{name: "mixed_many_groups", keys: []*plan.Expr{many}, calls: mixed, limit: 256 << 10},
		{name: "mixed_2keys", keys: []*plan.Expr{k2, many}, calls: mixed, limit: 256 << 10},
		{name: "string_agg_too_large", keys: []*plan.Expr{k2}, tooLarge: "string_agg", calls: []plan.AggCall{
			{Func: plan.AggStringAgg, Arg: call(plan.OpCast, strT, x), Type: strT, Sep: ","},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var schema plan.Schema
			for i, k := range c.keys {
				schema = append(schema, plan.Field{Name: fmt.Sprint("k", i), Type: k.Type})
			}
			var aggs []plan.AggCall
			for i, a := range c.calls {
				a.Name = fmt.Sprint("r", i)
				aggs = append(aggs, a)
				schema = append(schema, plan.Field{Name: a.Name, Type: a.Type})
			}
			run := func(opts Options) ([][]any, error) {
				op, err := NewHashAggregate(newSource(inSchema.Arrow(), recsOf(t, batches)...), aggNode(plan.AggSingle, schema, c.keys, aggs...), opts)
				if err != nil {
					t.Fatal(err)
				}
				defer op.Close()
				var recs []arrow.RecordBatch
				defer func() { releaseRecs(recs) }()
				for {
					rec, err := op.Next(context.Background())
					if err == io.EOF {
						rs := rows(recs)
						sortRows(rs)
						return rs, nil
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
			if pool.SpillBytes() == 0 {
				t.Fatalf("nothing spilled under a budget of %d bytes", limit)
			}
			want, err := run(Options{Mem: checkedMem(t)})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d groups spilled, %d in memory", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("row %d: spilled %v, in memory %v", i, trunc(got[i]), trunc(want[i]))
				}
			}
			t.Logf("%d groups, budget %d: %d spill files, %d bytes spilled, peak %d", len(want), limit, pool.SpillCount(), pool.SpillBytes(), pool.Peak())
			// The peak counts the batch that made the aggregate spill, and
			// the hash tables of the count(DISTINCT) calls grow by
			// doubling on it (five of them: up to about 5 budgets at 64
			// KiB), never all the values.
			if pool.Peak() > 6*limit {
				t.Errorf("peak %d, budget %d", pool.Peak(), limit)
			}
			check()
		})
	}
}
