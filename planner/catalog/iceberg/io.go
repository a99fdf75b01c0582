package iceberg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/sluicedb/sluice/shuffle/objstore"
)

// FS is an iceberg-go file IO over one bucket of sluice's object store:
// the names it takes are s3:// URIs (s3a and s3n too) of that bucket. It
// reads, which is all sluice does with Iceberg tables, and writes, so
// tests and tools can write tables with iceberg-go through the same
// store. iceberg-go's IO interface takes no context: the one FS was made
// with bounds every request.
type FS struct {
	ctx    context.Context
	b      objstore.Bucket
	bucket string
}

// NewFS returns the IO for bucket b, named bucket in s3:// URIs.
func NewFS(ctx context.Context, b objstore.Bucket, bucket string) *FS {
	return &FS{ctx: ctx, b: b, bucket: bucket}
}

// ErrOtherBucket is matched by the error of a URI outside the bucket.
var ErrOtherBucket = errors.New("not in the bucket sluice runs on")

// Key returns the object key of an s3:// URI of f's bucket.
func (f *FS) Key(name string) (string, error) {
	u, err := url.Parse(name)
	if err != nil {
		return "", fmt.Errorf("iceberg: path %q: %w", name, err)
	}
	switch u.Scheme {
	case "s3", "s3a", "s3n":
	default:
		return "", fmt.Errorf("iceberg: path %q: want an s3:// URI", name)
	}
	if u.Host != f.bucket {
		return "", fmt.Errorf("iceberg: path %q: %w (%s)", name, ErrOtherBucket, f.bucket)
	}
	return strings.TrimPrefix(u.Path, "/"), nil
}

// URI returns the s3:// URI of key.
func (f *FS) URI(key string) string { return "s3://" + f.bucket + "/" + key }

// Open implements icebergio.IO.
func (f *FS) Open(name string) (icebergio.File, error) {
	key, err := f.Key(name)
	if err != nil {
		return nil, err
	}
	info, err := f.b.Stat(f.ctx, key)
	if err != nil {
		return nil, notExist(name, err)
	}
	ra := objstore.NewReaderAt(f.ctx, f.b, key, info.Size)
	return &object{SectionReader: io.NewSectionReader(ra, 0, info.Size), name: key, size: info.Size}, nil
}

// ReadFile implements icebergio.ReadFileIO.
func (f *FS) ReadFile(name string) ([]byte, error) {
	key, err := f.Key(name)
	if err != nil {
		return nil, err
	}
	b, err := f.b.Get(f.ctx, key)
	if err != nil {
		return nil, notExist(name, err)
	}
	return b, nil
}

// Remove implements icebergio.IO.
func (f *FS) Remove(name string) error {
	key, err := f.Key(name)
	if err != nil {
		return err
	}
	return f.b.Delete(f.ctx, key)
}

// Create implements icebergio.WriteFileIO: the object is put when the
// writer is closed.
func (f *FS) Create(name string) (icebergio.FileWriter, error) {
	key, err := f.Key(name)
	if err != nil {
		return nil, err
	}
	return &writer{fs: f, key: key}, nil
}

// WriteFile implements icebergio.WriteFileIO.
func (f *FS) WriteFile(name string, p []byte) error {
	key, err := f.Key(name)
	if err != nil {
		return err
	}
	return f.b.Put(f.ctx, key, p)
}

func notExist(name string, err error) error {
	if errors.Is(err, objstore.ErrNotFound) {
		return fmt.Errorf("iceberg: %s: %w (%w)", name, fs.ErrNotExist, err)
	}
	return fmt.Errorf("iceberg: %s: %w", name, err)
}

type object struct {
	*io.SectionReader
	name string
	size int64
}

func (f *object) Close() error { return nil }
func (f *object) Stat() (fs.FileInfo, error) {
	return fileInfo{name: path.Base(f.name), size: f.size}, nil
}

type fileInfo struct {
	name string
	size int64
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.size }
func (i fileInfo) Mode() fs.FileMode  { return 0o444 }
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return nil }

type writer struct {
	fs     *FS
	key    string
	buf    bytes.Buffer
	closed bool
}

func (w *writer) Write(p []byte) (int, error)         { return w.buf.Write(p) }
func (w *writer) ReadFrom(r io.Reader) (int64, error) { return w.buf.ReadFrom(r) }
func (w *writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	return w.fs.b.Put(w.fs.ctx, w.key, w.buf.Bytes())
}
