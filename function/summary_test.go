package function

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// TestSummarizer: the summaries a task reports cover exactly the rows
// added: counts, NULLs, range, and the distinct set up to the bound.
func TestSummarizer(t *testing.T) {
	schema := plan.Schema{{Name: "k", Type: plan.Int64Type}, {Name: "s", Type: plan.StringType}, {Name: "f", Type: plan.Float64Type}}
	batch := func(lo, n int, nullEvery int) arrow.RecordBatch {
		kb := array.NewInt64Builder(memory.DefaultAllocator)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		fb := array.NewFloat64Builder(memory.DefaultAllocator)
		defer kb.Release()
		defer sb.Release()
		defer fb.Release()
		for i := lo; i < lo+n; i++ {
			if nullEvery > 0 && i%nullEvery == 0 {
				kb.AppendNull()
				sb.AppendNull()
			} else {
				kb.Append(int64(i))
				sb.Append(fmt.Sprintf("v%05d", i))
			}
			fb.Append(float64(i))
		}
		cols := []arrow.Array{kb.NewArray(), sb.NewArray(), fb.NewArray()}
		defer func() {
			for _, c := range cols {
				c.Release()
			}
		}()
		return array.NewRecordBatch(schema.Arrow(), cols, int64(n))
	}
	for _, tc := range []struct {
		name     string
		batches  [][3]int // lo, n, null every
		rows     int64
		nulls    int64
		min, max int64
		exact    bool
		values   int
	}{
		{"small", [][3]int{{10, 5, 0}, {3, 2, 0}}, 7, 0, 3, 14, true, 7},
		{"nulls", [][3]int{{1, 10, 5}}, 10, 2, 1, 9, true, 8},
		{"past the bound", [][3]int{{0, 1000, 0}, {1000, 100, 0}}, 1100, 0, 0, 1099, false, 0},
		{"repeats stay exact", [][3]int{{0, 1000, 0}, {0, 1000, 0}}, 2000, 0, 0, 999, true, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSummarizer([]int{0, 1, 2}, schema)
			for _, b := range tc.batches {
				rec := batch(b[0], b[1], b[2])
				s.add(rec)
				rec.Release() // the summary keeps copies of strings
			}
			sums := s.result()
			if len(sums) != 3 {
				t.Fatalf("%d summaries", len(sums))
			}
			k, str, f := sums[0], sums[1], sums[2]
			for _, sum := range sums {
				if err := sum.Validate(); err != nil {
					t.Fatal(err)
				}
			}
			if k.Rows != tc.rows || k.Nulls != tc.nulls || !k.HasRange || k.Min.I != tc.min || k.Max.I != tc.max || k.Exact != tc.exact || len(k.Values) != tc.values {
				t.Fatalf("int summary %+v", k)
			}
			if str.Min.S != fmt.Sprintf("v%05d", tc.min) || str.Max.S != fmt.Sprintf("v%05d", tc.max) || str.Exact != tc.exact || len(str.Values) != tc.values {
				t.Fatalf("string summary min %q max %q exact %v values %d", str.Min.S, str.Max.S, str.Exact, len(str.Values))
			}
			if f.Rows != tc.rows || f.HasRange || f.Exact {
				t.Fatalf("float summary %+v: counts only", f)
			}
		})
	}
}

// TestSummarizerBloom: once a column's distinct values pass the bound,
// the summary carries a Bloom filter holding every non-NULL value seen,
// those before the overflow included, hashed as the probe side hashes a
// column of the same type.
func TestSummarizerBloom(t *testing.T) {
	mem := memory.DefaultAllocator
	for _, tc := range []struct {
		name string
		t    plan.DataType
		make func(lo, n int) arrow.Array
	}{
		{"int64", plan.Int64Type, func(lo, n int) arrow.Array {
			b := array.NewInt64Builder(mem)
			defer b.Release()
			for i := lo; i < lo+n; i++ {
				b.Append(int64(i) * 31)
			}
			b.AppendNull()
			return b.NewArray()
		}},
		{"date", plan.DateType, func(lo, n int) arrow.Array {
			b := array.NewDate32Builder(mem)
			defer b.Release()
			for i := lo; i < lo+n; i++ {
				b.Append(arrow.Date32(i))
			}
			return b.NewArray()
		}},
		{"string", plan.StringType, func(lo, n int) arrow.Array {
			b := array.NewStringBuilder(mem)
			defer b.Release()
			for i := lo; i < lo+n; i++ {
				b.Append(fmt.Sprintf("k%d", i))
			}
			return b.NewArray()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := plan.Schema{{Name: "k", Type: tc.t}}
			s := newSummarizer([]int{0}, schema)
			var cols []arrow.Array
			for _, lo := range []int{0, 900, 1800, 5000} { // overflows in the second batch
				c := tc.make(lo, 900)
				cols = append(cols, c)
				rec := array.NewRecordBatch(schema.Arrow(), []arrow.Array{c}, int64(c.Len()))
				s.add(rec)
				rec.Release()
			}
			sum := s.result()[0]
			if err := sum.Validate(); err != nil {
				t.Fatal(err)
			}
			if sum.Exact || len(sum.Bloom) == 0 || len(sum.Bloom) > plan.SummaryBloomBytes {
				t.Fatalf("exact %v, bloom of %d bytes", sum.Exact, len(sum.Bloom))
			}
			f, err := kernel.BloomFromBytes(sum.Bloom)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cols {
				h := make([]uint64, c.Len())
				if err := kernel.HashKeys(c, h); err != nil {
					t.Fatal(err)
				}
				for i, v := range h {
					if c.IsValid(i) && !f.MayContain(v) {
						t.Fatalf("value %d of a batch is not in the filter", i)
					}
				}
				c.Release()
			}
		})
	}
}
