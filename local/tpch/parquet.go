package tpch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// WriteOptions controls the Parquet layout. Zero fields take the defaults.
type WriteOptions struct {
	RowsPerFile     int64 // default 1,000,000
	RowsPerRowGroup int64 // default 16,384
}

const (
	defaultRowsPerFile     = 1_000_000
	defaultRowsPerRowGroup = 16_384
)

func (o WriteOptions) withDefaults() WriteOptions {
	if o.RowsPerFile <= 0 {
		o.RowsPerFile = defaultRowsPerFile
	}
	if o.RowsPerRowGroup <= 0 {
		o.RowsPerRowGroup = defaultRowsPerRowGroup
	}
	if o.RowsPerRowGroup > o.RowsPerFile {
		o.RowsPerRowGroup = o.RowsPerFile
	}
	return o
}

// WriteParquet writes every table at scale sf as Parquet files
// dir/<table>/<table>-<NNN>.parquet and returns the files written.
func WriteParquet(ctx context.Context, dir string, sf float64, opts WriteOptions) ([]string, error) {
	var all []string
	for _, t := range tableNames {
		files, err := WriteTableParquet(ctx, dir, t, sf, opts)
		all = append(all, files...)
		if err != nil {
			return all, err
		}
	}
	return all, nil
}

// FileName returns the path of file number n of a table under dir.
func FileName(dir, table string, n int) string {
	return filepath.Join(dir, table, fmt.Sprintf("%s-%03d.parquet", table, n))
}

// noDictionary lists the near-unique string columns, for which dictionary
// encoding costs time and saves nothing.
var noDictionary = []string{
	"r_comment", "n_comment",
	"s_name", "s_address", "s_phone", "s_comment",
	"c_name", "c_address", "c_phone", "c_comment",
	"p_name", "p_comment", "ps_comment", "o_comment", "l_comment",
}

func writerProps(rowsPerRowGroup int64) *parquet.WriterProperties {
	props := []parquet.WriterProperty{
		parquet.WithStats(true),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1),
		parquet.WithMaxRowGroupLength(rowsPerRowGroup),
		parquet.WithDictionaryDefault(true),
		// decimal(15,2) as INT64 (the Parquet spec's choice for precision <= 18)
		// rather than FIXED_LEN_BYTE_ARRAY: smaller, faster, plain int64 stats.
		parquet.WithStoreDecimalAsInteger(true),
	}
	for _, c := range noDictionary {
		props = append(props, parquet.WithDictionaryFor(c, false))
	}
	return parquet.NewWriterProperties(props...)
}

// WriteTableParquet writes one table at scale sf as Parquet files
// dir/<table>/<table>-<NNN>.parquet (zstd, column statistics on, one row
// group per RowsPerRowGroup rows) and returns the files written. Files are
// written whole or removed on error.
func WriteTableParquet(ctx context.Context, dir, table string, sf float64, opts WriteOptions) ([]string, error) {
	schema, err := Schema(table)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if err := os.MkdirAll(filepath.Join(dir, table), 0o755); err != nil {
		return nil, err
	}
	var (
		files   []string
		f       *os.File
		fw      *pqarrow.FileWriter
		inFile  int64
		props   = writerProps(opts.RowsPerRowGroup)
		arrowPr = pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	)
	closeFile := func() error {
		if fw == nil {
			return nil
		}
		err := fw.Close() // closes f too
		fw, f, inFile = nil, nil, 0
		return err
	}
	openFile := func() error {
		name := FileName(dir, table, len(files))
		var err error
		if f, err = os.Create(name); err != nil {
			return err
		}
		files = append(files, name)
		if fw, err = pqarrow.NewFileWriter(schema, f, props, arrowPr); err != nil {
			f.Close()
			fw, f = nil, nil
			return err
		}
		return nil
	}
	write := func(rec arrow.RecordBatch) error {
		for off := int64(0); off < rec.NumRows(); {
			if fw == nil {
				if err := openFile(); err != nil {
					return err
				}
			}
			n := min(rec.NumRows()-off, opts.RowsPerFile-inFile)
			part := rec
			if off != 0 || n != rec.NumRows() {
				part = rec.NewSlice(off, off+n)
			}
			err := fw.Write(part)
			if part != rec {
				part.Release()
			}
			if err != nil {
				return err
			}
			off += n
			inFile += n
			if inFile == opts.RowsPerFile {
				if err := closeFile(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err = pipeline(ctx, table, sf, int(opts.RowsPerRowGroup), write)
	if cerr := closeFile(); err == nil {
		err = cerr
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		for _, name := range files {
			os.Remove(name)
		}
		return nil, fmt.Errorf("tpch: writing %s: %w", table, err)
	}
	return files, nil
}

// pipeline generates a table in one goroutine and hands its batches to
// consume in the calling goroutine, so that generation and Parquet encoding
// overlap. A few batches are in flight at most.
func pipeline(ctx context.Context, table string, sf float64, batchRows int, consume func(arrow.RecordBatch) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan arrow.RecordBatch, 2)
	genErr := make(chan error, 1)
	go func() {
		defer close(ch)
		genErr <- Generate(ctx, table, sf, 0, 1, batchRows, func(rec arrow.RecordBatch) error {
			rec.Retain()
			select {
			case ch <- rec:
				return nil
			case <-ctx.Done():
				rec.Release()
				return ctx.Err()
			}
		})
	}()
	var err error
	for rec := range ch {
		if err == nil {
			err = consume(rec)
			if err != nil {
				cancel()
			}
		}
		rec.Release()
	}
	if gerr := <-genErr; err == nil {
		err = gerr
	}
	return err
}
