package objstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
)

// Mem is an in-memory Bucket. It keeps the Bucket guarantees (it passes
// objstoretest.AcceptanceTest) and is meant for unit tests of code above the bucket and
// for single-process tools; it is not durable.
type Mem struct {
	name  string
	mu    sync.RWMutex
	objs  map[string][]byte
	etags map[string]string // of objs: the MD5 of the bytes, as S3's single-part PUT
}

var _ Bucket = (*Mem)(nil)

// NewMem returns an empty in-memory bucket.
func NewMem(name string) *Mem {
	return &Mem{name: name, objs: map[string][]byte{}, etags: map[string]string{}}
}

// Name returns "mem://<name>".
func (m *Mem) Name() string { return "mem://" + m.name }

func (m *Mem) notFound(key string) error {
	return fmt.Errorf("objstore: GET %s/%s: %w", m.Name(), key, ErrNotFound)
}

// Put implements Bucket.
func (m *Mem) Put(ctx context.Context, key string, data []byte) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	sum := md5.Sum(data)
	m.mu.Lock()
	m.objs[key] = bytes.Clone(data)
	m.etags[key] = hex.EncodeToString(sum[:])
	m.mu.Unlock()
	count(ctx, RequestStats{Put: 1, BytesWritten: int64(len(data))})
	return nil
}

// PutReader implements Bucket.
func (m *Mem) PutReader(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	var data []byte
	var err error
	if size >= 0 {
		data = make([]byte, size)
		_, err = io.ReadFull(r, data)
	} else {
		data, err = io.ReadAll(r)
	}
	if err != nil {
		return fmt.Errorf("objstore: PUT %s/%s: %w", m.Name(), key, err)
	}
	return m.Put(ctx, key, data)
}

// Get implements Bucket.
func (m *Mem) Get(ctx context.Context, key string) ([]byte, error) {
	return m.GetRange(ctx, key, 0, -1)
}

// GetRange implements Bucket.
func (m *Mem) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	return m.getRange(ctx, key, "", off, n)
}

// GetRangeMatch implements MatchGetter.
func (m *Mem) GetRangeMatch(ctx context.Context, key, etag string, off, n int64) ([]byte, error) {
	return m.getRange(ctx, key, etag, off, n)
}

func (m *Mem) getRange(ctx context.Context, key, etag string, off, n int64) ([]byte, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	data, ok := m.objs[key]
	tag := m.etags[key]
	m.mu.RUnlock()
	count(ctx, RequestStats{Get: 1})
	if !ok {
		return nil, m.notFound(key)
	}
	if etag != "" && etag != tag {
		return nil, fmt.Errorf("objstore: GET %s/%s: ETag %s, not %s: %w", m.Name(), key, tag, etag, ErrChanged)
	}
	size := int64(len(data))
	if off < 0 || off > size {
		return nil, fmt.Errorf("objstore: GET %s/%s: offset %d of %d: %w", m.Name(), key, off, size, ErrInvalidRange)
	}
	end := size
	if n >= 0 && off+n < size {
		end = off + n
	}
	count(ctx, RequestStats{BytesRead: end - off})
	return bytes.Clone(data[off:end]), nil
}

// Stat implements Bucket.
func (m *Mem) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	if err := ValidateKey(key); err != nil {
		return ObjectInfo{}, err
	}
	m.mu.RLock()
	data, ok := m.objs[key]
	tag := m.etags[key]
	m.mu.RUnlock()
	if !ok {
		return ObjectInfo{}, m.notFound(key)
	}
	return ObjectInfo{Key: key, Size: int64(len(data)), ETag: tag}, nil
}

// List implements Bucket.
func (m *Mem) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	count(ctx, RequestStats{List: 1})
	m.mu.RLock()
	var out []ObjectInfo
	for k, v := range m.objs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, ObjectInfo{Key: k, Size: int64(len(v)), ETag: m.etags[k]})
		}
	}
	m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Delete implements Bucket.
func (m *Mem) Delete(ctx context.Context, keys ...string) error {
	for _, k := range keys {
		if err := ValidateKey(k); err != nil {
			return err
		}
	}
	count(ctx, RequestStats{Delete: 1})
	m.mu.Lock()
	for _, k := range keys {
		delete(m.objs, k)
	}
	m.mu.Unlock()
	return nil
}

// DeletePrefix implements Bucket.
func (m *Mem) DeletePrefix(ctx context.Context, prefix string) error {
	if prefix == "" {
		return &KeyError{Key: prefix, Reason: "DeletePrefix needs a non-empty prefix"}
	}
	if err := ValidatePrefix(prefix); err != nil {
		return err
	}
	m.mu.Lock()
	for k := range m.objs {
		if strings.HasPrefix(k, prefix) {
			delete(m.objs, k)
		}
	}
	m.mu.Unlock()
	return nil
}
