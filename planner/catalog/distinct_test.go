package catalog

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/sluicedb/sluice/shuffle/objstore"
)

// distinctFile writes n rows in row groups of rg rows: a unique key, a
// status of five values in every row group, a code sorted across row
// groups (n/100 values), a unique string, and a column of NULLs.
func distinctFile(tb testing.TB, n, rg int, props ...parquet.WriterProperty) []byte {
	tb.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "key", Type: arrow.PrimitiveTypes.Int64},
		{Name: "status", Type: arrow.BinaryTypes.String},
		{Name: "code", Type: arrow.PrimitiveTypes.Int32},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "empty", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	statuses := []string{"Married", "Single", "Divorced", "Widowed", "Unknown"}
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(statuses[(i*7)%5])
		b.Field(2).(*array.Int32Builder).Append(int32(i / 100))
		b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("customer#%09d", i))
		b.Field(4).(*array.StringBuilder).AppendNull()
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	wp := parquet.NewWriterProperties(append([]parquet.WriterProperty{parquet.WithMaxRowGroupLength(int64(rg))}, props...)...)
	w, err := pqarrow.NewFileWriter(schema, &buf, wp, pqarrow.DefaultWriterProps())
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// TestDistinctEstimates: the footers' distinct-value estimates stay
// within a small factor of the truth for a key, a low-cardinality string
// (from its dictionary page's size) and a sorted code, across files, with
// and without dictionary encoding; a column the footers say nothing about
// has none. TestDistinctCountStatistic covers the writers' distinct_count.
func TestDistinctEstimates(t *testing.T) {
	const n, rg = 20_000, 2_000
	type want struct{ lo, hi int64 } // 0, 0: no estimate
	tests := []struct {
		name  string
		files int
		props []parquet.WriterProperty
		want  map[string]want
	}{
		// arrow-go writes unique columns (key, name) plain, since a
		// dictionary would not pay: the key's range is its rows, which
		// says nothing (no estimate: taken as unique, which it is), the
		// name has none either.
		{"dictionary", 1, nil, map[string]want{
			"key": {0, 0}, "status": {5, 25}, "code": {n / 100, n / 50}, "name": {0, 0}, "empty": {1, 1}}},
		// Two copies: the key's range is half the rows, and counts.
		{"two files", 2, nil, map[string]want{
			"key": {n / 2, n}, "status": {5, 25}, "code": {n / 100, n / 50}, "name": {0, 0}, "empty": {1, 1}}},
		{"plain", 1, []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}, map[string]want{
			// Integers have their range (a key's is its rows: none);
			// plain strings nothing but their NULL count.
			"key": {0, 0}, "status": {0, 0}, "code": {n / 100, n / 50}, "name": {0, 0}, "empty": {1, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			b := objstore.NewMem("b")
			for i := range tc.files {
				if err := b.Put(ctx, fmt.Sprintf("t/f%d.parquet", i), distinctFile(t, n, rg, tc.props...)); err != nil {
					t.Fatal(err)
				}
			}
			tb, err := Inspect(ctx, b, "t", "t/")
			if err != nil {
				t.Fatal(err)
			}
			for col, w := range tc.want {
				got := tb.Distinct[col]
				if got < w.lo || got > w.hi {
					t.Errorf("%s: distinct estimate %d, want %d..%d (all: %v)", col, got, w.lo, w.hi, tb.Distinct)
				}
			}
		})
	}
}
