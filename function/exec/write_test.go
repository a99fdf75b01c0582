package exec

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/sluicedb/sluice/planner/plan"
)

// TestFileWriter writes int64, string, decimal64 and date columns (with
// nulls) as Parquet and CSV and checks what comes back.
func TestFileWriter(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "price", Type: &arrow.Decimal64Type{Precision: 15, Scale: 2}, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a,b", ""}, []bool{true, false})
	b.Field(2).(*array.Decimal64Builder).AppendValues([]decimal.Decimal64{12345, 0}, []bool{true, false})
	b.Field(3).(*array.Date32Builder).AppendValues([]arrow.Date32{19000, 19001}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()

	gunzip := func(t *testing.T, out []byte) []byte {
		zr, err := gzip.NewReader(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	unzstd := func(t *testing.T, out []byte) []byte {
		zr, err := zstd.NewReader(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const wantJSON = `{"id":1,"name":"a,b","price":123.45,"day":"2022-01-08"}` + "\n" + `{"id":2,"name":null,"price":null,"day":"2022-01-09"}` + "\n"
	tests := []struct {
		w     plan.Write
		check func(t *testing.T, out []byte)
	}{
		{plan.Write{Format: FormatCSV}, func(t *testing.T, out []byte) {
			want := "id,name,price,day\n1,\"a,b\",123.45,2022-01-08\n2,,,2022-01-09\n"
			if string(out) != want {
				t.Fatalf("csv:\n%q\nwant\n%q", out, want)
			}
		}},
		{plan.Write{Format: FormatCSV, NoHeader: true, Delimiter: "|", Compression: "gzip"}, func(t *testing.T, out []byte) {
			want := "1|a,b|123.45|2022-01-08\n2|||2022-01-09\n"
			if got := gunzip(t, out); string(got) != want {
				t.Fatalf("csv:\n%q\nwant\n%q", got, want)
			}
		}},
		{plan.Write{Format: FormatCSV, Null: "NA"}, func(t *testing.T, out []byte) {
			want := "id,name,price,day\n1,\"a,b\",123.45,2022-01-08\n2,NA,NA,2022-01-09\n"
			if string(out) != want {
				t.Fatalf("csv NULL 'NA':\n%q\nwant\n%q", out, want)
			}
		}},
		{plan.Write{Format: FormatCSV, Quote: "'", Null: `\N`}, func(t *testing.T, out []byte) {
			want := "id,name,price,day\n1,'a,b',123.45,2022-01-08\n2,\\N,\\N,2022-01-09\n"
			if string(out) != want {
				t.Fatalf("csv QUOTE:\n%q\nwant\n%q", out, want)
			}
		}},
		{plan.Write{Format: FormatJSON}, func(t *testing.T, out []byte) {
			if string(out) != wantJSON {
				t.Fatalf("json:\n%s\nwant\n%s", out, wantJSON)
			}
		}},
		{plan.Write{Format: FormatJSON, Compression: "zstd"}, func(t *testing.T, out []byte) {
			if got := unzstd(t, out); string(got) != wantJSON {
				t.Fatalf("json:\n%s\nwant\n%s", got, wantJSON)
			}
		}},
		{plan.Write{Format: FormatParquet, Compression: "snappy"}, func(t *testing.T, out []byte) {
			pf, err := file.NewParquetReader(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			c, err := pf.MetaData().RowGroup(0).ColumnChunk(0)
			if err != nil {
				t.Fatal(err)
			}
			if c.Compression().String() != "SNAPPY" {
				t.Fatalf("parquet codec %s, want SNAPPY", c.Compression())
			}
		}},
		{plan.Write{Format: FormatParquet}, func(t *testing.T, out []byte) {
			pf, err := file.NewParquetReader(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := fr.ReadTable(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.Release()
			if tbl.NumRows() != 2 || tbl.NumCols() != 4 {
				t.Fatalf("parquet: %d rows %d cols", tbl.NumRows(), tbl.NumCols())
			}
			price := tbl.Column(2).Data().Chunk(0).(*array.Decimal128)
			if price.Value(0).LowBits() != 12345 || !price.IsNull(1) {
				t.Fatalf("price column: %v", price)
			}
			if got := tbl.Column(1).Data().Chunk(0).(*array.String).Value(0); got != "a,b" {
				t.Fatalf("name: %q", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.w.Ext(), func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewFileWriter(&buf, schema, &tt.w)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			tt.check(t, buf.Bytes())
		})
	}
	for _, bad := range []plan.Write{{Format: "orc"}, {Format: "csv", Delimiter: "ab"}, {Format: "parquet", Compression: "brotli"}, {Format: "json", NoHeader: true}} {
		if _, err := NewFileWriter(&bytes.Buffer{}, schema, &bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestCSVRequote: a quote other than '"' quotes the fields that hold the
// delimiter, the quote or a line break, doubling the quote inside; a '"'
// is then plain text. Exact bytes.
func TestCSVRequote(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"plain", "it's", `say "hi"`, "a;b", "two\nlines", " lead", ""}, []bool{true, true, true, true, true, true, false})
	rec := b.NewRecordBatch()
	defer rec.Release()
	tests := []struct {
		w    plan.Write
		want string
	}{
		{plan.Write{Format: FormatCSV, Quote: "'", Delimiter: ";"}, "s\nplain\n'it''s'\nsay \"hi\"\n'a;b'\n'two\nlines'\n' lead'\n\n"},
		{plan.Write{Format: FormatCSV, Delimiter: ";"}, "s\nplain\nit's\n\"say \"\"hi\"\"\"\n\"a;b\"\n\"two\nlines\"\n\" lead\"\n\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		fw, err := NewFileWriter(&buf, schema, &tt.w)
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := fw.Close(); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tt.want {
			t.Errorf("quote %q:\n%q\nwant\n%q", tt.w.Quote, buf.String(), tt.want)
		}
	}
	for _, w := range []plan.Write{
		{Format: FormatCSV, Quote: "ab"}, {Format: FormatCSV, Quote: ","}, {Format: FormatCSV, Quote: "|", Delimiter: "|"},
		{Format: FormatCSV, Null: "a,b"}, {Format: FormatParquet, Null: "x"}, {Format: FormatJSON, Quote: "'"},
	} {
		if err := w.Check(); err == nil {
			t.Errorf("%+v: no error", w)
		}
	}
}
