package objstore

import (
	"container/list"
	"sort"
	"sync"
	"sync/atomic"
)

// RangeCache keeps byte ranges of object versions that readers fetched,
// so that a warm process reads a table's bytes from memory the second
// time: the next query over the same files, or another task of the same
// query reading the same footer. It is what the operating system's page
// cache is to an engine over local files, and what DuckDB's external file
// cache is to one over S3.
//
// Entries are keyed by bucket, key and ETag: a version of an object never
// changes, so a cached range is never stale; a replaced object has another
// ETag and is read afresh (and its old ranges age out). Ranges are kept as
// fetched (no block rounding, so a cold read fetches exactly what it did
// without the cache); a read partly covered fetches only its gaps. The
// least recently used ranges are dropped beyond the budget. Safe for
// concurrent use; the bytes returned are shared and must not be modified.
type RangeCache struct {
	budget int64

	mu   sync.Mutex
	objs map[cacheVersion]*cachedObject
	lru  list.List // of *extent, most recently used first
	used int64

	hitBytes atomic.Int64 // bytes served from memory
	evicted  atomic.Int64 // bytes dropped for the budget
}

// RangeCacheStats is what a RangeCache holds and has done.
type RangeCacheStats struct {
	Budget, Bytes int64 // bytes allowed, bytes held
	HitBytes      int64 // bytes served from memory
	EvictedBytes  int64 // bytes dropped for the budget
}

// maxCacheGaps bounds the fetches of one read: a read with more
// uncovered gaps fetches the span from its first gap to its last in one
// request instead.
const maxCacheGaps = 4

type cacheVersion struct{ bucket, key, etag string }

type cachedObject struct {
	exts []*extent // sorted by off, disjoint
}

type extent struct {
	v    cacheVersion
	off  int64
	data []byte
	el   *list.Element
}

func (e *extent) end() int64 { return e.off + int64(len(e.data)) }

// NewRangeCache returns a cache holding at most budget bytes (nil when
// budget <= 0: no cache; a nil *RangeCache is valid and caches nothing).
func NewRangeCache(budget int64) *RangeCache {
	if budget <= 0 {
		return nil
	}
	return &RangeCache{budget: budget, objs: map[cacheVersion]*cachedObject{}}
}

// Bytes is the memory the cache holds now (0 for a nil cache).
func (c *RangeCache) Bytes() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Stats reports the cache's figures (zero for a nil cache).
func (c *RangeCache) Stats() RangeCacheStats {
	if c == nil {
		return RangeCacheStats{}
	}
	c.mu.Lock()
	used := c.used
	c.mu.Unlock()
	return RangeCacheStats{Budget: c.budget, Bytes: used, HitBytes: c.hitBytes.Load(), EvictedBytes: c.evicted.Load()}
}

type piece struct {
	off  int64
	data []byte
}

// Read returns the n bytes at off of the version etag of key in the
// bucket named bucket: the cached parts from memory, the rest through
// fetch(off, n), which must return exactly n bytes of that version. It
// returns how many of the bytes came from memory. Without an etag nothing
// is cached and the whole range is fetched.
func (c *RangeCache) Read(bucket, key, etag string, off, n int64, fetch func(off, n int64) ([]byte, error)) ([]byte, int64, error) {
	if c == nil || etag == "" || n <= 0 {
		b, err := fetch(off, n)
		return b, 0, err
	}
	v := cacheVersion{bucket, key, etag}
	end := off + n
	var have []piece
	var gaps [][2]int64
	c.mu.Lock()
	if o := c.objs[v]; o != nil {
		i := sort.Search(len(o.exts), func(i int) bool { return o.exts[i].end() > off })
		pos := off
		for ; i < len(o.exts) && o.exts[i].off < end; i++ {
			e := o.exts[i]
			if e.off <= off && end <= e.end() { // one range holds it all
				c.lru.MoveToFront(e.el)
				c.mu.Unlock()
				c.hitBytes.Add(n)
				return e.data[off-e.off : end-e.off : end-e.off], n, nil
			}
			if e.off > pos {
				gaps = append(gaps, [2]int64{pos, e.off})
			}
			lo, hi := max(e.off, off), min(e.end(), end)
			have = append(have, piece{lo, e.data[lo-e.off : hi-e.off]})
			c.lru.MoveToFront(e.el)
			pos = hi
		}
		if pos < end {
			gaps = append(gaps, [2]int64{pos, end})
		}
	} else {
		gaps = [][2]int64{{off, end}}
	}
	c.mu.Unlock()

	if len(gaps) > maxCacheGaps {
		gaps = [][2]int64{{gaps[0][0], gaps[len(gaps)-1][1]}}
	}
	got := make([]piece, 0, len(gaps))
	for _, g := range gaps {
		b, err := fetch(g[0], g[1]-g[0])
		if err != nil {
			return nil, 0, err
		}
		got = append(got, piece{g[0], b})
	}
	c.insert(v, got)
	var out []byte
	if len(got) == 1 && got[0].off == off && int64(len(got[0].data)) == n {
		out = got[0].data
	} else {
		// Fetched pieces last: where the span of many gaps covers cached
		// bytes, the fetched copy is the same bytes.
		out = make([]byte, n)
		for _, p := range have {
			copy(out[p.off-off:], p.data)
		}
		for _, p := range got {
			copy(out[p.off-off:], p.data)
		}
	}
	fromMem := n
	for _, p := range got {
		fromMem -= int64(len(p.data))
	}
	fromMem = max(fromMem, 0)
	c.hitBytes.Add(fromMem)
	return out, fromMem, nil
}

// insert adds fetched ranges of v that overlap nothing cached (another
// reader may have fetched them meanwhile), then drops the least recently
// used ranges beyond the budget. A range larger than an eighth of the
// budget is not kept: it would flush most of the cache for one read.
func (c *RangeCache) insert(v cacheVersion, ps []piece) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.objs[v]
	for _, p := range ps {
		if len(p.data) == 0 || int64(len(p.data)) > c.budget/8 {
			continue
		}
		if o == nil {
			o = &cachedObject{}
			c.objs[v] = o
		}
		pend := p.off + int64(len(p.data))
		i := sort.Search(len(o.exts), func(i int) bool { return o.exts[i].end() > p.off })
		if i < len(o.exts) && o.exts[i].off < pend {
			continue // overlaps a cached range
		}
		e := &extent{v: v, off: p.off, data: p.data}
		e.el = c.lru.PushFront(e)
		o.exts = append(o.exts, nil)
		copy(o.exts[i+1:], o.exts[i:])
		o.exts[i] = e
		c.used += int64(len(p.data))
	}
	if o != nil && len(o.exts) == 0 {
		delete(c.objs, v)
	}
	for c.used > c.budget {
		back := c.lru.Back()
		if back == nil {
			break
		}
		c.drop(back.Value.(*extent))
	}
}

// drop removes e from the cache; the caller holds mu.
func (c *RangeCache) drop(e *extent) {
	c.lru.Remove(e.el)
	c.used -= int64(len(e.data))
	c.evicted.Add(int64(len(e.data)))
	o := c.objs[e.v]
	i := sort.Search(len(o.exts), func(i int) bool { return o.exts[i].off >= e.off })
	if i < len(o.exts) && o.exts[i] == e {
		o.exts = append(o.exts[:i], o.exts[i+1:]...)
	}
	if len(o.exts) == 0 {
		delete(c.objs, e.v)
	}
}
