package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// DefaultMinRead is the default smallest ranged GET a ReaderAt issues.
const DefaultMinRead = 64 << 10

// ReaderAt reads one object through ranged GETs. It implements io.ReaderAt
// (safe for concurrent use), io.ReadSeeker (one reader at a time) and
// Size, so it satisfies arrow-go's parquet.ReaderAtSeeker and ipc's
// ReadAtSeeker.
//
// Small reads are coalesced: a read shorter than the minimum read size
// fetches a window of that size (shifted back at the end of the object, so
// that reading a footer's last bytes also fetches the footer before them)
// and keeps the last few windows in a small cache. Reads of at least the
// minimum size go straight to one GET each and are not cached.
type ReaderAt struct {
	ctx     context.Context
	b       Bucket
	key     string
	minRead int64
	nblocks int

	sizeOnce sync.Once
	size     int64
	sizeErr  error
	sized    bool // size given to NewReaderAt (never changes)

	mu     sync.Mutex
	blocks []block // most recently used first
	pos    int64   // Read/Seek position

	requests atomic.Int64
	fetched  atomic.Int64
	cached   atomic.Int64 // bytes read from the range cache instead
	changed  atomic.Bool  // a GET found another version than etag

	etag  string      // the version read (WithVersion); "" any
	cache *RangeCache // WithVersion's cache, nil none

	prefetchOpts PrefetchOptions
	pf           *prefetcher // read-ahead of planned ranges (Prefetch); under mu

	tail atomic.Pointer[tailFetch] // FetchTail's fetch, once started
}

// tailFetch is a FetchTail in flight; done is closed when it ended.
type tailFetch struct{ done chan struct{} }

// FetchTail starts fetching the object's last bytes (a window of the
// minimum read size, where a Parquet file's footer is) in the background,
// into the small-read cache, so that whoever opens the file later finds
// its footer there instead of waiting for the GET: a scan warms the next
// file of its task while it decodes the current one. Reads made before
// the fetch ended wait for it. It does nothing when the object's size is
// not known (it never asks), when there is no cache, or after the first
// call. A failed fetch is forgotten: the read that needs the bytes
// fetches them again and reports the error.
func (r *ReaderAt) FetchTail() {
	if r.nblocks == 0 {
		return
	}
	if !r.sized || r.size <= 0 {
		return
	}
	size := r.size
	t := &tailFetch{done: make(chan struct{})}
	if !r.tail.CompareAndSwap(nil, t) {
		return
	}
	start := max(size-r.minRead, 0)
	go func() {
		defer close(t.done)
		data, err := r.fetch(start, size-start)
		if err != nil {
			return
		}
		r.mu.Lock()
		r.blocks = append([]block{{off: start, data: data}}, r.blocks...)
		if len(r.blocks) > r.nblocks {
			r.blocks = r.blocks[:r.nblocks]
		}
		r.mu.Unlock()
	}()
}

// waitTail waits for a FetchTail in flight.
func (r *ReaderAt) waitTail() {
	if t := r.tail.Load(); t != nil {
		<-t.done
	}
}

type block struct {
	off  int64
	data []byte
}

// ReaderAtOption configures NewReaderAt.
type ReaderAtOption func(*ReaderAt)

// WithMinRead sets the smallest ranged GET (default DefaultMinRead).
func WithMinRead(n int64) ReaderAtOption {
	return func(r *ReaderAt) {
		if n > 0 {
			r.minRead = n
		}
	}
}

// WithCacheBlocks sets how many small-read windows are cached (default 4).
func WithCacheBlocks(n int) ReaderAtOption {
	return func(r *ReaderAt) {
		if n >= 0 {
			r.nblocks = n
		}
	}
}

// WithVersion makes the reader read only the version etag of the object
// (from the listing the reader's caller planned with): every GET asks for
// it (MatchGetter) and fails with ErrChanged when the object was replaced
// since, so the reader never mixes the bytes of two versions. With a
// cache, ranges of that version are read from it and fetched ranges are
// kept in it. An empty etag changes nothing.
func WithVersion(etag string, cache *RangeCache) ReaderAtOption {
	return func(r *ReaderAt) {
		r.etag = etag
		if etag != "" {
			r.cache = cache
		}
	}
}

// NewReaderAt returns a reader of the object key of the given size (from a
// List or Stat; a negative size makes the reader Stat the object on first
// use). ctx bounds every request the reader makes.
func NewReaderAt(ctx context.Context, b Bucket, key string, size int64, opts ...ReaderAtOption) *ReaderAt {
	r := &ReaderAt{ctx: ctx, b: b, key: key, size: size, minRead: DefaultMinRead, nblocks: 4}
	if size >= 0 {
		r.sizeOnce.Do(func() {})
		r.sized = true
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

func (r *ReaderAt) objectSize() (int64, error) {
	r.sizeOnce.Do(func() {
		info, err := r.b.Stat(r.ctx, r.key)
		r.requests.Add(1)
		r.size, r.sizeErr = info.Size, err
	})
	return r.size, r.sizeErr
}

// Size returns the object's size (-1 if it could not be determined).
func (r *ReaderAt) Size() int64 {
	n, err := r.objectSize()
	if err != nil {
		return -1
	}
	return n
}

// Key returns the key of the object read.
func (r *ReaderAt) Key() string { return r.key }

// Requests returns the number of requests the reader has made.
func (r *ReaderAt) Requests() int64 { return r.requests.Load() }

// BytesFetched returns the number of bytes the reader has downloaded.
func (r *ReaderAt) BytesFetched() int64 { return r.fetched.Load() }

// Changed reports whether a read found the object replaced by another
// version than the one WithVersion named (the error may reach the caller
// re-worded by a decoder that does not wrap it).
func (r *ReaderAt) Changed() bool { return r.changed.Load() }

// BytesCached returns the number of bytes the reader found in its range
// cache (WithVersion) instead of downloading them.
func (r *ReaderAt) BytesCached() int64 { return r.cached.Load() }

// ReadAt implements io.ReaderAt.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	r.waitTail()
	size, err := r.objectSize()
	if err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, fmt.Errorf("objstore: ReadAt %s: negative offset %d", r.key, off)
	}
	if off >= size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	want := int64(len(p))
	if rem := size - off; want > rem {
		want = rem
	}
	if want == 0 {
		return 0, nil
	}
	if n, ok := r.readPlanned(p[:want], off); ok {
		return r.done(n, len(p))
	}
	if n, ok := r.fromCache(p[:want], off); ok {
		return r.done(n, len(p))
	}
	if want >= r.minRead || r.nblocks == 0 {
		data, err := r.fetch(off, want)
		if err != nil {
			return 0, err
		}
		n := copy(p, data)
		return r.done(n, len(p))
	}
	// Small read: fetch a window of minRead bytes containing it.
	start, n := off, r.minRead
	if start+n > size {
		start = size - n
		if start < 0 {
			start = 0
		}
		n = size - start
	}
	data, err := r.fetch(start, n)
	if err != nil {
		return 0, err
	}
	r.mu.Lock()
	r.blocks = append([]block{{off: start, data: data}}, r.blocks...)
	if len(r.blocks) > r.nblocks {
		r.blocks = r.blocks[:r.nblocks]
	}
	r.mu.Unlock()
	c := copy(p, data[off-start:])
	return r.done(c, len(p))
}

// View returns the n bytes at off, as ReadAt would read them, without
// copying them where it can: a range inside a planned read-ahead request
// is a slice of that request's bytes, and a large unplanned range is the
// GET's own buffer; only a small read is copied out of the block cache.
// The bytes are shared: the caller must not modify them. At the end of
// the object the slice is shorter than n and the error is io.EOF.
func (r *ReaderAt) View(off, n int64) ([]byte, error) {
	r.waitTail()
	size, err := r.objectSize()
	if err != nil {
		return nil, err
	}
	if off < 0 || n < 0 {
		return nil, fmt.Errorf("objstore: View %s: negative offset %d or length %d", r.key, off, n)
	}
	want := min(n, max(size-off, 0))
	var b []byte
	if want > 0 {
		var ok bool
		if b, ok = r.planned(off, want); !ok {
			if want >= r.minRead || r.nblocks == 0 {
				if b, err = r.fetch(off, want); err != nil {
					return nil, err
				}
			} else {
				b = make([]byte, want)
				k, err := r.ReadAt(b, off)
				if err != nil && k < len(b) {
					return b[:k], err
				}
			}
		}
	}
	if int64(len(b)) < n {
		return b, io.EOF
	}
	return b[:n], nil
}

func (r *ReaderAt) done(n, want int) (int, error) {
	if n < want {
		return n, io.EOF
	}
	return n, nil
}

func (r *ReaderAt) fromCache(p []byte, off int64) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	end := off + int64(len(p))
	for i, b := range r.blocks {
		if b.off <= off && end <= b.off+int64(len(b.data)) {
			n := copy(p, b.data[off-b.off:])
			if i > 0 { // move to front
				copy(r.blocks[1:i+1], r.blocks[:i])
				r.blocks[0] = b
			}
			return n, true
		}
	}
	return 0, false
}

func (r *ReaderAt) fetch(off, n int64) ([]byte, error) {
	if r.cache == nil {
		return r.get(off, n)
	}
	data, mem, err := r.cache.Read(r.b.Name(), r.key, r.etag, off, n, r.get)
	r.cached.Add(mem)
	return data, err
}

// get fetches [off, off+n) of the reader's version from the bucket.
func (r *ReaderAt) get(off, n int64) ([]byte, error) {
	r.requests.Add(1)
	data, err := GetRangeMatch(r.ctx, r.b, r.key, r.etag, off, n)
	if err != nil {
		if errors.Is(err, ErrChanged) {
			r.changed.Store(true)
		}
		return nil, err
	}
	r.fetched.Add(int64(len(data)))
	if int64(len(data)) != n {
		return nil, fmt.Errorf("objstore: ReadAt %s: got %d bytes at %d, want %d (object changed?): %w",
			r.key, len(data), off, n, io.ErrUnexpectedEOF)
	}
	return data, nil
}

// Read implements io.Reader from the Seek position.
func (r *ReaderAt) Read(p []byte) (int, error) {
	r.mu.Lock()
	pos := r.pos
	r.mu.Unlock()
	n, err := r.ReadAt(p, pos)
	r.mu.Lock()
	r.pos = pos + int64(n)
	r.mu.Unlock()
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// Seek implements io.Seeker.
func (r *ReaderAt) Seek(offset int64, whence int) (int64, error) {
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		r.mu.Lock()
		base = r.pos
		r.mu.Unlock()
	case io.SeekEnd:
		size, err := r.objectSize()
		if err != nil {
			return 0, err
		}
		base = size
	default:
		return 0, errors.New("objstore: Seek: invalid whence")
	}
	pos := base + offset
	if pos < 0 {
		return 0, fmt.Errorf("objstore: Seek %s: negative position %d", r.key, pos)
	}
	r.mu.Lock()
	r.pos = pos
	r.mu.Unlock()
	return pos, nil
}
