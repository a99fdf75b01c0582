package sim

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sluicedb/sluice/shuffle/objstore"
)

// StoreConfig is the object store model. Defaults (DefaultStoreConfig)
// are AWS's published S3 figures: 3,500 PUT/COPY/POST/DELETE and 5,500
// GET/HEAD requests per second per partitioned prefix, 503 SlowDown past
// them; first-byte latency and per-stream bandwidth from AWS's S3
// performance guidance (100-200 ms first byte for small objects, about
// 85-90 MB/s per connection).
type StoreConfig struct {
	GetRate, PutRate float64 // requests per simulated second per prefix
	// SplitAfter is how long (simulated) a prefix must be over its rate
	// before S3 splits it into finer prefixes (S3 scales a hot prefix
	// gradually; AWS gives no figure, "minutes" is what users observe: 60 s
	// is optimistic).
	SplitAfter time.Duration
	// FirstByte is the median first-byte latency of a request; Bandwidth
	// the bytes per second of one stream.
	FirstByte time.Duration
	Bandwidth float64
	// RetryUnit is the client's first backoff after a 503 (minio-go's
	// DefaultRetryUnit is 200 ms, doubling, capped at 1 s).
	RetryUnit time.Duration
}

// DefaultStoreConfig returns S3's published figures.
func DefaultStoreConfig() StoreConfig {
	return StoreConfig{GetRate: 5500, PutRate: 3500, SplitAfter: 60 * time.Second,
		FirstByte: 30 * time.Millisecond, Bandwidth: 90e6, RetryUnit: 200 * time.Millisecond}
}

type class int

const (
	classGet class = iota // GET, HEAD
	classPut              // PUT, LIST, DELETE
)

// ring holds a prefix's requests per simulated second (the last len(ring)
// seconds).
const ringSeconds = 1024

type slot struct {
	sec int64
	n   [2]float64
}

// partition is one prefix S3 rates separately.
type partition struct {
	load [ringSeconds]slot
	peak [2]float64
}

// base is a key's rate domain before any split: a stage's prefix or a
// table's folder. depth is how many characters past the base a partition
// key has (grown by splits); lo and hi are the least and greatest keys
// seen, whose common prefix says where keys start to differ.
type base struct {
	depth    int
	lo, hi   string
	overFrom int64 // first simulated second of the current overload run, -1: none
	lastOver int64
	splits   int
	// parts are the prefixes of the base's keys at this depth (keys of
	// Store.parts); a split retires them.
	parts []string
}

// Store is the modelled object store: an objstore.Bucket whose objects
// hold only their sizes (and the bytes of the small objects the
// coordinator itself writes and reads back: plan fragments, specs passed
// by reference), with request counting, per-prefix rates and 503 SlowDown,
// and latency. Functions of the Platform charge their requests in bulk
// (Charge); the coordinator's own calls go through the Bucket methods.
type Store struct {
	cfg   StoreConfig
	clock *Clock
	name  string

	mu      sync.Mutex
	objects map[string]object
	bases   map[string]*base
	parts   map[string]*partition
	// retired are the peaks of the partitions splits retired since the
	// last TakePeaks.
	retiredGet, retiredPut PrefixPeak
	stats                  StoreStats
}

type object struct {
	size int64
	data []byte // nil: a modelled object (size only)
}

// StoreStats counts what the store served.
type StoreStats struct {
	objstore.RequestStats
	// SlowDowns counts requests answered 503 SlowDown (and retried).
	SlowDowns int64
	// Splits counts prefix splits S3 made under load.
	Splits int
}

var _ objstore.Bucket = (*Store)(nil)

// NewStore returns an empty modelled store on clock.
func NewStore(cfg StoreConfig, clock *Clock) *Store {
	return &Store{cfg: cfg, clock: clock, name: "sim://sluice", objects: map[string]object{},
		bases: map[string]*base{}, parts: map[string]*partition{}}
}

// baseOf is the rate domain of key: "…/jobs/<job>/stage-<s>/" for shuffle
// keys, else the key's folder.
func baseOf(key string) string {
	if i := strings.Index(key, "/stage-"); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '/'); j >= 0 {
			return key[:i+1+j+1]
		}
	}
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i+1]
	}
	return ""
}

// partitionLocked returns the prefix key falls in now and its base.
func (s *Store) partitionLocked(key string) (string, *base, *partition) {
	bk := baseOf(key)
	b := s.bases[bk]
	if b == nil {
		b = &base{lo: key, hi: key, overFrom: -1}
		s.bases[bk] = b
	}
	if key < b.lo {
		b.lo = key
	}
	if key > b.hi {
		b.hi = key
	}
	pk := key[:min(len(key), len(bk)+b.depth)]
	p := s.parts[pk]
	if p == nil {
		p = &partition{}
		s.parts[pk] = p
		b.parts = append(b.parts, pk)
	}
	return pk, b, p
}

// splitLocked makes S3 split base b one level finer: past the common
// prefix of the keys seen (where they start to differ), one more
// character.
func (s *Store) splitLocked(bk string, b *base) {
	lcp := 0
	for lcp < len(b.lo) && lcp < len(b.hi) && b.lo[lcp] == b.hi[lcp] {
		lcp++
	}
	b.depth = max(b.depth+1, lcp-len(bk)+1)
	b.splits++
	s.stats.Splits++
	// The prefixes at the old depth take no more requests: keep their
	// peaks, drop their load (24 KB each; a base split 26 times over
	// 10,000 keys held 6 GB).
	for _, pk := range b.parts {
		if p := s.parts[pk]; p != nil {
			s.retirePeaksLocked(pk, p)
			delete(s.parts, pk)
		}
	}
	b.parts = nil
}

func (s *Store) retirePeaksLocked(pk string, p *partition) {
	if p.peak[classGet] > s.retiredGet.Get {
		s.retiredGet = PrefixPeak{Prefix: pk, Get: p.peak[classGet], Put: p.peak[classPut]}
	}
	if p.peak[classPut] > s.retiredPut.Put {
		s.retiredPut = PrefixPeak{Prefix: pk, Get: p.peak[classGet], Put: p.peak[classPut]}
	}
}

func (s *Store) rate(c class) float64 {
	if c == classGet {
		return s.cfg.GetRate
	}
	return s.cfg.PutRate
}

// Charge accounts n requests of class c on key, spread evenly over the
// simulated interval [at, at+dur), against the key's prefix rate. It
// returns how many were answered 503 SlowDown (they are retried, and
// counted again as requests) and the delay the retries add to the caller.
func (s *Store) Charge(c class, key string, n int64, at, dur time.Duration) (slowDowns int64, delay time.Duration) {
	if n <= 0 {
		return 0, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	bk := baseOf(key)
	_, b, p := s.partitionLocked(key)
	first := int64(at / time.Second)
	last := int64((at + max(dur, 0)) / time.Second)
	if last-first > ringSeconds/2 {
		last = first + ringSeconds/2
	}
	secs := float64(last - first + 1)
	share := float64(n) / secs
	limit := s.rate(c)
	var over float64
	for sec := first; sec <= last; sec++ {
		sl := &p.load[sec%ringSeconds]
		if sl.sec != sec {
			*sl = slot{sec: sec}
		}
		before := sl.n[c]
		sl.n[c] += share
		p.peak[c] = max(p.peak[c], sl.n[c])
		if sl.n[c] > limit {
			over += min(share, sl.n[c]-max(before, limit))
			if b.overFrom < 0 || sec > b.lastOver+1 {
				b.overFrom = sec
			}
			b.lastOver = max(b.lastOver, sec)
			if time.Duration(sec-b.overFrom)*time.Second >= s.cfg.SplitAfter {
				s.splitLocked(bk, b)
				b.overFrom = -1
			}
		}
	}
	slowDowns = int64(math.Round(over))
	s.stats.SlowDowns += slowDowns
	if slowDowns > 0 {
		// Throttled requests are retried after the client's backoff; a
		// task whose share was throttled waits about one backoff per
		// doubling of the overload.
		frac := float64(slowDowns) / float64(n)
		delay = time.Duration(float64(s.cfg.RetryUnit) * (1 + math.Log2(1+8*frac)))
	}
	return slowDowns, delay
}

// Count adds requests and bytes to the store's statistics.
func (s *Store) Count(r objstore.RequestStats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Get += r.Get
	s.stats.Put += r.Put
	s.stats.List += r.List
	s.stats.Delete += r.Delete
	s.stats.Head += r.Head
	s.stats.BytesRead += r.BytesRead
	s.stats.BytesWritten += r.BytesWritten
}

// PutSized records an object of size bytes that holds no data (a modelled
// function's output).
func (s *Store) PutSized(key string, size int64) {
	s.mu.Lock()
	s.objects[key] = object{size: size}
	s.mu.Unlock()
}

// Forget drops the bytes of an object the store holds, keeping its size:
// what the platform does with a spec passed by reference once its
// function has read it (a spec object is read once: a retry is another
// attempt, with a spec of its own), so that a stage of 2,000 tasks each
// reading 10,000 objects does not keep 2,000 specs of several hundred KB
// in memory.
func (s *Store) Forget(key string) {
	s.mu.Lock()
	if o, ok := s.objects[key]; ok {
		s.objects[key] = object{size: o.size}
	}
	s.mu.Unlock()
}

// Stats returns what the store served so far.
func (s *Store) Stats() StoreStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// PrefixPeak is the highest per-second request rate one prefix saw.
type PrefixPeak struct {
	Prefix   string
	Get, Put float64
}

// TakePeaks returns the prefixes with the highest GET and PUT rates since
// the last call, and forgets every prefix's peaks.
func (s *Store) TakePeaks() (get, put PrefixPeak) {
	s.mu.Lock()
	defer s.mu.Unlock()
	get, put = s.retiredGet, s.retiredPut
	s.retiredGet, s.retiredPut = PrefixPeak{}, PrefixPeak{}
	for k, p := range s.parts {
		if p.peak[classGet] > get.Get {
			get = PrefixPeak{Prefix: k, Get: p.peak[classGet], Put: p.peak[classPut]}
		}
		if p.peak[classPut] > put.Put {
			put = PrefixPeak{Prefix: k, Get: p.peak[classGet], Put: p.peak[classPut]}
		}
		p.peak = [2]float64{}
	}
	return get, put
}

// Objects returns how many objects the store holds.
func (s *Store) Objects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.objects)
}

// request is one call of the coordinator's: counted, rated and delayed by
// a first byte and the bytes at one stream's bandwidth.
func (s *Store) request(ctx context.Context, c class, key string, bytes int64, r objstore.RequestStats) error {
	s.Count(r)
	s.Charge(c, key, 1, s.clock.Now(), 0)
	d := s.cfg.FirstByte + time.Duration(float64(bytes)/s.cfg.Bandwidth*float64(time.Second))
	return s.clock.Sleep(ctx, d)
}

// Put implements objstore.Bucket.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if err := objstore.ValidateKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	s.objects[key] = object{size: int64(len(data)), data: append([]byte(nil), data...)}
	s.mu.Unlock()
	return s.request(ctx, classPut, key, int64(len(data)), objstore.RequestStats{Put: 1, BytesWritten: int64(len(data))})
}

// PutReader implements objstore.Bucket.
func (s *Store) PutReader(ctx context.Context, key string, r io.Reader, size int64) error {
	buf, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if size >= 0 && int64(len(buf)) < size {
		return fmt.Errorf("put %s: %d bytes read, %d expected", key, len(buf), size)
	}
	return s.Put(ctx, key, buf)
}

func (s *Store) get(key string) (object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[key]
	if !ok {
		return object{}, fmt.Errorf("%s: %w", key, objstore.ErrNotFound)
	}
	return o, nil
}

// Get implements objstore.Bucket. A modelled object (size only) has no
// bytes to give: it reads as zeros of its size.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	return s.GetRange(ctx, key, 0, -1)
}

// GetRange implements objstore.Bucket.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	o, err := s.get(key)
	if err != nil {
		return nil, err
	}
	if off < 0 || off > o.size {
		return nil, fmt.Errorf("%s: offset %d of %d bytes: %w", key, off, o.size, objstore.ErrInvalidRange)
	}
	end := o.size
	if n >= 0 {
		end = min(end, off+n)
	}
	if err := s.request(ctx, classGet, key, end-off, objstore.RequestStats{Get: 1, BytesRead: end - off}); err != nil {
		return nil, err
	}
	if o.data == nil {
		return make([]byte, end-off), nil
	}
	return append([]byte(nil), o.data[off:end]...), nil
}

// Stat implements objstore.Bucket.
func (s *Store) Stat(ctx context.Context, key string) (objstore.ObjectInfo, error) {
	o, err := s.get(key)
	if err != nil {
		return objstore.ObjectInfo{}, err
	}
	return objstore.ObjectInfo{Key: key, Size: o.size}, s.request(ctx, classGet, key, 0, objstore.RequestStats{Head: 1})
}

// List implements objstore.Bucket: one LIST request per 1,000 keys.
func (s *Store) List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error) {
	s.mu.Lock()
	var out []objstore.ObjectInfo
	for k, o := range s.objects {
		if strings.HasPrefix(k, prefix) {
			out = append(out, objstore.ObjectInfo{Key: k, Size: o.size})
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	pages := int64(len(out)/1000 + 1)
	return out, s.request(ctx, classPut, prefix+"x", 0, objstore.RequestStats{List: pages})
}

// Delete implements objstore.Bucket: one DeleteObjects request per 1,000
// keys.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	s.mu.Lock()
	for _, k := range keys {
		delete(s.objects, k)
	}
	s.mu.Unlock()
	return s.request(ctx, classPut, keys[0], 0, objstore.RequestStats{Delete: int64(len(keys)/1000 + 1)})
}

// DeletePrefix implements objstore.Bucket.
func (s *Store) DeletePrefix(ctx context.Context, prefix string) error {
	if prefix == "" {
		return fmt.Errorf("delete prefix: %w", objstore.ErrInvalidKey)
	}
	list, err := s.List(ctx, prefix)
	if err != nil {
		return err
	}
	keys := make([]string, len(list))
	for i, o := range list {
		keys[i] = o.Key
	}
	return s.Delete(ctx, keys...)
}

// Name implements objstore.Bucket.
func (s *Store) Name() string { return s.name }
