package pgwire

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgproto3"
)

// lineitemLike is a record of a wide result's usual types: three BIGINTs,
// two DECIMAL(15,2) and a DATE.
func lineitemLike(n int) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	dec := &arrow.Decimal64Type{Precision: 15, Scale: 2}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.PrimitiveTypes.Int64},
		{Name: "c", Type: arrow.PrimitiveTypes.Int64}, {Name: "q", Type: dec}, {Name: "p", Type: dec},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int64Builder).Append(int64(i * 7 % 200000))
		b.Field(2).(*array.Int64Builder).Append(int64(i % 10000))
		b.Field(3).(*array.Decimal64Builder).Append(decimal.Decimal64(int64(i%50+1) * 100))
		b.Field(4).(*array.Decimal64Builder).Append(decimal.Decimal64(int64(i)*37 + 90001))
		b.Field(5).(*array.Date32Builder).Append(arrow.Date32(8000 + i%2500))
	}
	return b.NewRecordBatch()
}

// BenchmarkWriteRows measures the DataRow encoder over a wide result, in
// text and in binary, into a discarded connection.
func BenchmarkWriteRows(b *testing.B) {
	rec := lineitemLike(100_000)
	defer rec.Release()
	for _, format := range []int16{0, 1} {
		name := map[int16]string{0: "text", 1: "binary"}[format]
		b.Run(name, func(b *testing.B) {
			c := &conn{be: pgproto3.NewBackend(bytes.NewReader(nil), io.Discard)}
			fs := fields(rec.Schema(), []int16{format})
			b.ReportAllocs()
			for b.Loop() {
				rec.Retain()
				cur := &rowCursor{recs: []arrow.RecordBatch{rec}}
				if _, _, err := c.writeRows(context.Background(), cur, fs, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rec.NumRows()), "ns/row")
		})
	}
}
