package objstore

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Compressed text files. Users keep CSV and JSON in buckets compressed
// whole (events.json.gz, export.csv.zst), as DuckDB, Spark and Athena read
// them: the codec is named by the key's last extension. An object so named
// is decompressed as a stream while it is read; nothing else about the
// file changes (its data extension is the one before the codec's).

// Compression is the codec of a whole-file-compressed object.
type Compression string

const (
	// Uncompressed: the object is the file.
	Uncompressed Compression = ""
	// Gzip: RFC 1952 (.gz, .gzip), multi-member streams included.
	Gzip Compression = "gzip"
	// Zstd: Zstandard frames (.zst, .zstd).
	Zstd Compression = "zstd"
)

// CompressionOf returns the codec a key's last extension names (any case).
func CompressionOf(key string) Compression {
	switch strings.ToLower(path.Ext(key)) {
	case ".gz", ".gzip":
		return Gzip
	case ".zst", ".zstd":
		return Zstd
	}
	return Uncompressed
}

// DataExt returns the lower-case extension of the file a key holds, past
// a codec's extension: ".csv" for "a/b.CSV.gz", ".parquet" for
// "x.parquet". compressed reports whether a codec extension was removed.
func DataExt(key string) (ext string, compressed bool) {
	if CompressionOf(key) != Uncompressed {
		key = strings.TrimSuffix(key, path.Ext(key))
		compressed = true
	}
	return strings.ToLower(path.Ext(key)), compressed
}

// Decompress returns a reader of the uncompressed bytes of r, an object
// compressed with c (r itself when c is Uncompressed). Close releases the
// decoder; it does not close r.
func Decompress(c Compression, r io.Reader) (io.ReadCloser, error) {
	switch c {
	case Uncompressed:
		return io.NopCloser(r), nil
	case Gzip:
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, nil
	case Zstd:
		zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return zstdCloser{zr}, nil
	}
	return nil, fmt.Errorf("unknown compression %q", c)
}

type zstdCloser struct{ *zstd.Decoder }

func (z zstdCloser) Close() error { z.Decoder.Close(); return nil }
