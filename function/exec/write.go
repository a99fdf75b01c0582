package exec

import (
	"bufio"
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
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/sluicedb/sluice/planner/plan"
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
	FormatJSON    = "json"
)

// NewFileWriter returns a writer of the file wr describes into w:
// "parquet": row groups of up to 1 Mi rows with statistics, zstd pages
// unless wr.Compression names another codec; "csv": a header line (unless
// wr.NoHeader), then wr.Delimiter-separated values (',' by default), NULL
// as the empty field; "json": one object per line, keys in column order.
// CSV and JSON are compressed whole when wr.Compression is gzip or zstd.
func NewFileWriter(w io.Writer, schema *arrow.Schema, wr *plan.Write) (FileWriter, error) {
	if err := wr.Check(); err != nil {
		return nil, err
	}
	switch wr.Format {
	case FormatParquet:
		codec := compress.Codecs.Zstd
		switch wr.Compression {
		case "snappy":
			codec = compress.Codecs.Snappy
		case "gzip":
			codec = compress.Codecs.Gzip
		case "lz4":
			codec = compress.Codecs.Lz4Raw
		case "uncompressed":
			codec = compress.Codecs.Uncompressed
		}
		props := parquet.NewWriterProperties(parquet.WithCompression(codec),
			parquet.WithMaxRowGroupLength(1<<20), parquet.WithStats(true))
		fw, err := pqarrow.NewFileWriter(widenSchema(schema), nopCloser{w}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			return nil, fmt.Errorf("parquet writer: %w", err)
		}
		return &parquetWriter{fw}, nil
	}
	cw, err := compressWriter(w, wr.Compression)
	if err != nil {
		return nil, err
	}
	if wr.Format == FormatJSON {
		return &jsonWriter{w: bufio.NewWriter(cw), c: cw}, nil
	}
	opts := []csv.Option{csv.WithHeader(!wr.NoHeader), csv.WithNullWriter(wr.Null)}
	if wr.Delimiter != "" {
		opts = append(opts, csv.WithComma([]rune(wr.Delimiter)[0]))
	}
	return &csvWriter{w: csv.NewWriter(cw, widenSchema(schema), opts...), c: cw}, nil
}

// compressWriter wraps w in the codec's writer ("gzip", "zstd"), or
// returns w itself for none. The returned writer's Close ends the
// compressed stream without closing w.
func compressWriter(w io.Writer, codec string) (io.WriteCloser, error) {
	switch codec {
	case "gzip":
		return gzip.NewWriter(w), nil
	case "zstd":
		zw, err := zstd.NewWriter(w)
		if err != nil {
			return nil, fmt.Errorf("zstd writer: %w", err)
		}
		return zw, nil
	}
	return nopCloser{w}, nil
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

type csvWriter struct {
	w *csv.Writer
	c io.Closer // the compressor, ended after the CSV writer is flushed
}

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
	if err := c.c.Close(); err != nil {
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
