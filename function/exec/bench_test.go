package exec

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

const benchRows = 1 << 20

// benchBatches builds batches of 8192 rows: k int64 in [0, groups),
// d decimal(12,2), s string key of k, c comment-like string.
func benchBatches(groups int) (plan.Schema, []arrow.RecordBatch) {
	mem := memory.DefaultAllocator
	rng := rand.New(rand.NewSource(42))
	schema := plan.Schema{{Name: "k", Type: i64T}, {Name: "d", Type: dec(12, 2)}, {Name: "s", Type: strT}, {Name: "c", Type: strT}}
	words := []string{"furiously", "special", "requests", "carefully", "final", "deposits", "PROMO", "BRASS", "green", "ironic"}
	var recs []arrow.RecordBatch
	for lo := 0; lo < benchRows; lo += 8192 {
		kb := array.NewInt64Builder(mem)
		db := array.NewDecimal64Builder(mem, dec(12, 2).Arrow().(*arrow.Decimal64Type))
		sb := array.NewStringBuilder(mem)
		cb := array.NewStringBuilder(mem)
		for i := 0; i < 8192; i++ {
			k := rng.Intn(groups)
			kb.Append(int64(k))
			db.Append(decimal.Decimal64(rng.Intn(100000)))
			sb.Append(fmt.Sprintf("key#%09d", k))
			c := ""
			for w := 0; w < 5; w++ {
				c += words[rng.Intn(len(words))] + " "
			}
			cb.Append(c)
		}
		cols := []arrow.Array{kb.NewArray(), db.NewArray(), sb.NewArray(), cb.NewArray()}
		recs = append(recs, array.NewRecordBatch(schema.Arrow(), cols, 8192))
		releaseAll(cols)
		kb.Release()
		db.Release()
		sb.Release()
		cb.Release()
	}
	return schema, recs
}

func retainedSource(schema plan.Schema, recs []arrow.RecordBatch) Operator {
	for _, r := range recs {
		r.Retain()
	}
	return newSource(schema.Arrow(), append([]arrow.RecordBatch(nil), recs...)...)
}

func runBench(b *testing.B, mk func() (Operator, error)) {
	b.Helper()
	for i := 0; i < b.N; i++ {
		op, err := mk()
		if err != nil {
			b.Fatal(err)
		}
		drain(op)
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// drain reads op to its end and closes it.
func drain(op Operator) {
	for {
		rec, err := op.Next(context.Background())
		if err != nil {
			break
		}
		rec.Release()
	}
	op.Close()
}

func BenchmarkHashAggregate(b *testing.B) {
	for _, tc := range []struct {
		name   string
		groups int
		key    int
	}{
		{"int64-1Kgroups", 1000, 0},
		{"int64-1Mgroups", 1 << 20, 0},
		{"string-1Kgroups", 1000, 2},
	} {
		b.Run(tc.name, func(b *testing.B) {
			schema, recs := benchBatches(tc.groups)
			defer releaseRecs(recs)
			keyT := schema[tc.key].Type
			out := plan.Schema{{Name: "k", Type: keyT}, {Name: "s", Type: dec(18, 2)}, {Name: "c", Type: i64T}}
			node := aggNode(plan.AggSingle, out, []*plan.Expr{cref(tc.key, keyT)},
				plan.AggCall{Func: plan.AggSum, Arg: cref(1, dec(12, 2)), Type: dec(18, 2)},
				plan.AggCall{Func: plan.AggCountStar, Type: i64T})
			b.ResetTimer()
			runBench(b, func() (Operator, error) { return NewHashAggregate(retainedSource(schema, recs), node, Options{}) })
		})
	}
}

func BenchmarkFilterDecimalCompare(b *testing.B) {
	schema, recs := benchBatches(1000)
	defer releaseRecs(recs)
	pred := call(plan.OpLt, boolT, cref(1, dec(12, 2)), litD("500.00", 5, 2))
	b.Run("kernel", func(b *testing.B) { // the comparison alone
		for i := 0; i < b.N; i++ {
			for _, r := range recs {
				a, err := Eval(pred, r, memory.DefaultAllocator)
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
		}
		b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("operator", func(b *testing.B) { // plus selection of all 4 columns (50% kept)
		node := &plan.Node{Kind: plan.KindFilter, Schema: schema, Predicate: pred}
		runBench(b, func() (Operator, error) { return NewFilter(retainedSource(schema, recs), node, Options{}) })
	})
}

func BenchmarkSort(b *testing.B) {
	schema, recs := benchBatches(1 << 30)
	defer releaseRecs(recs)
	for _, tc := range []struct {
		name  string
		keys  []plan.SortKey
		limit int64
	}{
		{"int64", []plan.SortKey{{Expr: cref(0, i64T)}}, -1},
		{"string+decimal", []plan.SortKey{{Expr: cref(3, strT)}, {Expr: cref(1, dec(12, 2)), Desc: true}}, -1},
		{"top100-decimal", []plan.SortKey{{Expr: cref(1, dec(12, 2)), Desc: true}, {Expr: cref(0, i64T)}}, 100},
	} {
		b.Run(tc.name, func(b *testing.B) {
			runBench(b, func() (Operator, error) {
				return NewSort(retainedSource(schema, recs), sortNode(schema, tc.limit, tc.keys...), Options{})
			})
		})
	}
}

func BenchmarkLike(b *testing.B) {
	_, recs := benchBatches(1000)
	defer releaseRecs(recs)
	for _, p := range []string{"%special%requests%", "PROMO%", "%BRASS ", "%green%", "_u%i_sly%"} {
		b.Run(p, func(b *testing.B) {
			e := like(cref(3, strT), p, false)
			for i := 0; i < b.N; i++ {
				for _, r := range recs {
					a, err := Eval(e, r, memory.DefaultAllocator)
					if err != nil {
						b.Fatal(err)
					}
					a.Release()
				}
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
