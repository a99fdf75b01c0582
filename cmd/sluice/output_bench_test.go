package main

import (
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkWriteResult measures the CSV and JSON printers over a wide
// result of the usual types (ns per row).
func BenchmarkWriteResult(b *testing.B) {
	const n = 100_000
	dec := &arrow.Decimal64Type{Precision: 15, Scale: 2}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.PrimitiveTypes.Int64},
		{Name: "q", Type: dec}, {Name: "p", Type: dec}, {Name: "d", Type: arrow.FixedWidthTypes.Date32},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, nil)
	bl := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for i := 0; i < n; i++ {
		bl.Field(0).(*array.Int64Builder).Append(int64(i))
		bl.Field(1).(*array.Int64Builder).Append(int64(i * 7 % 200000))
		bl.Field(2).(*array.Decimal64Builder).Append(decimal.Decimal64(int64(i%50+1) * 100))
		bl.Field(3).(*array.Decimal64Builder).Append(decimal.Decimal64(int64(i)*37 + 90001))
		bl.Field(4).(*array.Date32Builder).Append(arrow.Date32(8000 + i%2500))
		bl.Field(5).(*array.StringBuilder).Append("DELIVER IN PERSON")
	}
	rec := bl.NewRecordBatch()
	defer rec.Release()
	for _, format := range []string{"csv", "json"} {
		b.Run(format, func(b *testing.B) {
			for b.Loop() {
				if err := writeResult(io.Discard, format, schema, []arrow.RecordBatch{rec}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
		})
	}
}
