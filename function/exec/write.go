package exec

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// FileWriter writes record batches as one table file.
type FileWriter interface {
	Write(rec arrow.RecordBatch) error
	// Close finishes the file (a Parquet footer); it does not close the
	// underlying writer.
	Close() error
}

// Write formats.
const (
	FormatParquet = "parquet"
	FormatCSV     = "csv"
)

// NewFileWriter returns a writer of format ("parquet": zstd-compressed
// row groups of up to 1 Mi rows with statistics; "csv": a header line,
// then comma-separated values, NULL as the empty field) into w.
func NewFileWriter(w io.Writer, schema *arrow.Schema, format string) (FileWriter, error) {
	switch format {
	case FormatParquet:
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithMaxRowGroupLength(1<<20), parquet.WithStats(true))
		fw, err := pqarrow.NewFileWriter(widenSchema(schema), nopCloser{w}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			return nil, fmt.Errorf("parquet writer: %w", err)
		}
		return &parquetWriter{fw}, nil
	case FormatCSV:
		return &csvWriter{csv.NewWriter(w, widenSchema(schema), csv.WithHeader(true), csv.WithNullWriter(""))}, nil
	}
	return nil, fmt.Errorf("unknown file format %q (want parquet or csv)", format)
}

type parquetWriter struct{ fw *pqarrow.FileWriter }

func (p *parquetWriter) Write(rec arrow.RecordBatch) error {
	// WriteBuffered keeps adding to the current row group, so small batches
	// do not make small row groups.
	rec = widenDecimals(rec)
	defer rec.Release()
	if err := p.fw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("write parquet: %w", err)
	}
	return nil
}

func (p *parquetWriter) Close() error {
	if err := p.fw.Close(); err != nil {
		return fmt.Errorf("finish parquet: %w", err)
	}
	return nil
}

type csvWriter struct{ w *csv.Writer }

func (c *csvWriter) Write(rec arrow.RecordBatch) error {
	rec = widenDecimals(rec)
	defer rec.Release()
	if err := c.w.Write(rec); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

func (c *csvWriter) Close() error {
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// nopCloser keeps the Parquet writer from closing the caller's writer.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// widenSchema gives decimal64 columns (which the Parquet writer does not
// take) the decimal128 type of the same precision and scale.
func widenSchema(s *arrow.Schema) *arrow.Schema {
	fs := s.Fields()
	for i, f := range fs {
		if d, ok := f.Type.(*arrow.Decimal64Type); ok {
			fs[i].Type = &arrow.Decimal128Type{Precision: d.Precision, Scale: d.Scale}
		}
	}
	return arrow.NewSchema(fs, nil)
}

// widenDecimals returns rec with its decimal64 columns as decimal128 (a
// new reference the caller releases).
func widenDecimals(rec arrow.RecordBatch) arrow.RecordBatch {
	cols := make([]arrow.Array, rec.NumCols())
	var release []arrow.Array
	for i, c := range rec.Columns() {
		d, ok := c.(*array.Decimal64)
		if !ok {
			cols[i] = c
			continue
		}
		dt := d.DataType().(*arrow.Decimal64Type)
		b := array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: dt.Precision, Scale: dt.Scale})
		b.Reserve(d.Len())
		for j := 0; j < d.Len(); j++ {
			if d.IsNull(j) {
				b.AppendNull()
			} else {
				b.Append(decimal128.FromI64(int64(d.Value(j))))
			}
		}
		cols[i] = b.NewArray()
		b.Release()
		release = append(release, cols[i])
	}
	out := array.NewRecordBatch(widenSchema(rec.Schema()), cols, rec.NumRows())
	for _, a := range release {
		a.Release()
	}
	return out
}
