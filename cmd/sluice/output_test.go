package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// result builds an n-row result of a bigint, a decimal(12,2), a varchar
// with NULLs and a date.
func result(t *testing.T, n int) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount", Type: &arrow.Decimal64Type{Precision: 12, Scale: 2}},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i * i * 37))
		b.Field(1).(*array.Decimal64Builder).Append(decimal.Decimal64(int64(i)*12345 - 500))
		if i%3 == 2 {
			b.Field(2).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append("name " + string(rune('a'+i%26)))
		}
		b.Field(3).(*array.Date32Builder).Append(arrow.Date32(19000 + i))
	}
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return schema, []arrow.RecordBatch{rec}
}

// TestTableOutputGolden: table mode right-aligns numbers, puts types under
// the names, says (1 row) / (N rows), and elides the middle of a result
// over maxTableRows with a count of the rows shown. Goldens under
// testdata/, rewritten with -update.
func TestTableOutputGolden(t *testing.T) {
	tests := []struct {
		name string
		rows int
	}{
		{"empty", 0},
		{"one_row", 1},
		{"three_rows", 3},
		{"elided", 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema, recs := result(t, tt.rows)
			var buf bytes.Buffer
			if err := writeResult(&buf, "table", schema, recs); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "table_"+tt.name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("table output differs from %s:\n%s\nwant:\n%s", golden, buf.String(), want)
			}
		})
	}
}
