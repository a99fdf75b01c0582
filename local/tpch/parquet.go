package tpch

import (
	"context"
	"errors"
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

func writerProps(rowsPerRowGroup int64) *parquet.WriterProperties {
	return parquet.NewWriterProperties(
		parquet.WithStats(true),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1),
		parquet.WithMaxRowGroupLength(rowsPerRowGroup),
		parquet.WithDictionaryDefault(true),
	)
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
	err = Generate(ctx, table, sf, 0, 1, int(opts.RowsPerRowGroup), write)
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
		return nil, errors.Join(fmt.Errorf("tpch: writing %s: %w", table, err))
	}
	return files, nil
}
