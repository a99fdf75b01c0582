package exec

import (
	"bytes"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// Column chunks read without a copy.
//
// arrow-go's RowGroupReader reads a column chunk by allocating a buffer of
// the chunk's size and copying the chunk into it (ReaderProperties.
// GetStream), although the scan's source already holds those bytes in
// its read-ahead. On a 10-million-row GROUP BY that allocation, zeroing
// and copy was a sixth of the scan's CPU, most of it first-touch page
// faults on fresh memory. chunkPageReader builds the same page reader over
// the source's own bytes instead (countingReader.view: a slice of the
// read-ahead request that holds the chunk).

// chunkStream is a parquet.BufferedReader over bytes already in memory.
// Peek, Discard and Read serve the page reader's sequential reads from
// buf; Outer and Reset, which only dictionary-page lookups and seeks to a
// row use, come from an arrow-go reader over the same bytes.
type chunkStream struct {
	parquet.BufferedReader
	buf []byte
	pos int
}

func newChunkStream(buf []byte) (*chunkStream, error) {
	props := parquet.ReaderProperties{BufferedStreamEnabled: true, BufferSize: 1}
	outer, err := props.GetStream(bytes.NewReader(buf), 0, int64(len(buf)))
	if err != nil {
		return nil, err
	}
	return &chunkStream{BufferedReader: outer, buf: buf}, nil
}

func (c *chunkStream) Peek(n int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("peek of %d bytes", n)
	}
	end := min(c.pos+n, len(c.buf))
	if end-c.pos < n {
		return c.buf[c.pos:end], io.EOF
	}
	return c.buf[c.pos:end], nil
}

func (c *chunkStream) Discard(n int) (int, error) {
	if n < 0 {
		return 0, fmt.Errorf("discard of %d bytes", n)
	}
	k := min(n, len(c.buf)-c.pos)
	c.pos += k
	if k < n {
		return k, io.EOF
	}
	return k, nil
}

func (c *chunkStream) Read(p []byte) (int, error) {
	if c.pos >= len(c.buf) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	k := copy(p, c.buf[c.pos:])
	c.pos += k
	return k, nil
}

func (c *chunkStream) BufferSize() int { return len(c.buf) }

// chunkRange is the byte range of a column chunk: from its dictionary
// page, if it has one, for its total compressed size (as arrow-go's
// RowGroupReader computes it).
func chunkRange(cc *metadata.ColumnChunkMetaData) (off, n int64) {
	off = cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && off > cc.DictionaryPageOffset() {
		off = cc.DictionaryPageOffset()
	}
	return off, cc.TotalCompressedSize()
}

// chunkPageReader returns the page reader of column leaf in row group rg,
// over the source's bytes without a copy, and whether it is one of ours
// (over those bytes, so reusable for another chunk). Files arrow-go reads
// with special care fall back to its own reader: encrypted chunks, and
// files of old parquet-mr writers whose sizes leave out the dictionary
// page header (PARQUET-816).
//
// reuse, when not nil, is a page reader of ours done with its chunk: it
// is reset onto this one, keeping its decompression and page buffers.
// A fresh reader allocates them for every chunk: on files of small row
// groups (TPC-H's, 16,384 rows, chunks of a few tens of KiB) that was a
// fifth of the bytes Q3 allocated at SF 1 (about 200 of 1,080 MB a run),
// all of it zeroed. On the fallback path reuse is closed.
func (s *ParquetScan) chunkPageReader(rg *file.RowGroupReader, leaf int, reuse file.PageReader) (file.PageReader, bool, error) {
	cc, err := rg.MetaData().ColumnChunk(leaf)
	if err != nil {
		return nil, false, err
	}
	if cc.CryptoMetadata() != nil || s.md.WriterVersion().LessThan(metadata.Parquet816FixedVersion) {
		if reuse != nil {
			reuse.Close()
		}
		pr, err := rg.GetColumnPageReader(leaf)
		return pr, false, err
	}
	off, n := chunkRange(cc)
	if off < 0 || n < 0 {
		return nil, false, fmt.Errorf("column chunk at offset %d of %d bytes", off, n)
	}
	buf, err := s.src.view(off, n)
	if err != nil {
		return nil, false, fmt.Errorf("column chunk at offset %d of %d bytes: %w", off, n, err)
	}
	st, err := newChunkStream(buf)
	if err != nil {
		return nil, false, err
	}
	if reuse != nil {
		reuse.Reset(st, cc.NumValues(), cc.Compression(), nil)
		if err := reuse.Err(); err != nil {
			reuse.Close()
			return nil, false, err
		}
		return reuse, true, nil
	}
	pr, err := file.NewPageReader(st, cc.NumValues(), cc.Compression(), memory.DefaultAllocator, nil)
	return pr, err == nil, err
}

// chunkColumnReader is rg.Column(leaf) over chunkPageReader.
func (s *ParquetScan) chunkColumnReader(rg *file.RowGroupReader, leaf int) (file.ColumnChunkReader, error) {
	pr, _, err := s.chunkPageReader(rg, leaf, nil)
	if err != nil {
		return nil, err
	}
	return file.NewColumnReader(s.md.Schema.Column(leaf), pr, memory.DefaultAllocator, s.pf.BufferPool()), nil
}
