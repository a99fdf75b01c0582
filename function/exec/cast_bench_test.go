package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// BenchmarkCast measures the per-type cast kernels over 8192-row columns:
// to and from strings, to bool, and between numbers.
func BenchmarkCast(b *testing.B) {
	mem := memory.DefaultAllocator
	_, recs := benchBatches(1000)
	defer releaseRecs(recs)
	recs = recs[:16]
	must := func(a arrow.Array, err error) arrow.Array {
		if err != nil {
			b.Fatal(err)
		}
		return a
	}
	var ints, decs, intStrs, decStrs, dates, stamps, wides []arrow.Array
	for _, r := range recs {
		k, d := r.Column(0), r.Column(1)
		ints = append(ints, k)
		decs = append(decs, d)
		intStrs = append(intStrs, must(castArray(mem, k, strT)))
		decStrs = append(decStrs, must(castArray(mem, d, strT)))
		db := array.NewDate32Builder(mem)
		for _, v := range k.(*array.Int64).Int64Values() {
			db.Append(arrow.Date32(v * 17))
		}
		dt := db.NewArray()
		db.Release()
		dates = append(dates, dt)
		stamps = append(stamps, must(castArray(mem, dt, plan.DataType{ID: plan.Timestamp})))
		wides = append(wides, must(castArray(mem, d, dec(38, 2))))
	}
	defer releaseAll(intStrs)
	defer releaseAll(decStrs)
	defer releaseAll(dates)
	defer releaseAll(stamps)
	defer releaseAll(wides)
	for _, tc := range []struct {
		name string
		src  []arrow.Array
		to   plan.DataType
	}{
		{"int64-string", ints, strT},
		{"decimal-string", decs, strT},
		{"float64-string", nil, strT},
		{"date-string", dates, strT},
		{"timestamp-string", stamps, strT},
		{"decimal128-string", wides, strT},
		{"string-int64", intStrs, i64T},
		{"string-decimal", decStrs, dec(12, 2)},
		{"string-float64", decStrs, plan.Float64Type},
		{"string-decimal128", decStrs, dec(38, 2)},
		{"int64-bool", ints, boolT},
		{"decimal-bool", decs, boolT},
		{"decimal128-bool", wides, boolT},
		{"int64-float64", ints, plan.Float64Type},
	} {
		src := tc.src
		if src == nil { // float64 values: decimal -> float64 first
			for _, d := range decs {
				src = append(src, must(castArray(mem, d, plan.Float64Type)))
			}
			defer releaseAll(src)
		}
		b.Run(tc.name, func(b *testing.B) {
			rows := 0
			for i := 0; i < b.N; i++ {
				for _, a := range src {
					out := must(castArray(mem, a, tc.to))
					rows += out.Len()
					out.Release()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
		})
	}
}
