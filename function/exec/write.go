package exec

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/csv"
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
		fw, err := pqarrow.NewFileWriter(schema, nopCloser{w}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			return nil, fmt.Errorf("parquet writer: %w", err)
		}
		return &parquetWriter{fw}, nil
	case FormatCSV:
		return &csvWriter{csv.NewWriter(w, schema, csv.WithHeader(true), csv.WithNullWriter(""))}, nil
	}
	return nil, fmt.Errorf("unknown file format %q (want parquet or csv)", format)
}

type parquetWriter struct{ fw *pqarrow.FileWriter }

func (p *parquetWriter) Write(rec arrow.RecordBatch) error {
	// WriteBuffered keeps adding to the current row group, so small batches
	// do not make small row groups.
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
