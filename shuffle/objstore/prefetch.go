package objstore

import (
	"errors"
	"math"
	"sort"
	"sync"
)

// Read-ahead of planned byte ranges.
//
// A Parquet reader asks for one column chunk at a time, each a ranged GET
// that waits for the one before: on S3 or MinIO the scan spends most of its
// time waiting for first bytes. The reader knows, once it has the footer,
// every column chunk it will read. Prefetch takes that list, coalesces
// ranges whose gap is small (the bytes of the hole cost less than another
// request's first-byte latency, the rule of Arrow C++'s ReadRangeCache) and
// fetches the coalesced requests in order, several at a time, at most
// PrefetchOptions.Ahead bytes ahead of what has been read. A ReadAt that
// falls inside a planned request waits for it instead of issuing its own
// GET; a request the read-ahead has not started yet is fetched by the
// reader that needs it, so a reader that reads out of order, or skips
// ranges, is never stalled by the window.

// Default read-ahead settings.
const (
	// DefaultPrefetchHole is the largest gap between two ranges that are
	// fetched by one request. 1 MiB: at S3's 20-30 ms first-byte latency
	// and 50-90 MB/s per connection, reading the hole is cheaper than
	// another request; on local MinIO it costs a fraction of a millisecond.
	// Measured with make bench at SF 1 (16,384-row row groups): 64 KiB
	// holes made 18,451 GETs, MinIO used 21 s of CPU and the run took
	// 29.7 s; 1 MiB holes 3,652 GETs, 9.9 s and 21.4 s. Requests, not
	// bytes, are what an object store charges for in time and money.
	DefaultPrefetchHole = 1 << 20
	// DefaultPrefetchMinHole and DefaultPrefetchHoleFraction size the
	// merging from the bytes a read will use, not the gap alone: a
	// coalesced request fetches at most HoleFraction times its planned
	// bytes in holes (and always MinHole). Without it a narrow projection
	// of a table with small row groups, whose chunks all lie within 1 MiB
	// of each other, fetched the whole file (a 10-million-row GROUP BY
	// read 142 MiB to use 11 MiB). The bound is loose on purpose: a GET's
	// first-byte latency costs about as much time as 1 MiB of transfer, so
	// a budget of 1× (tried first) split TPC-H Q1's lineitem reads from 4
	// GETs a file into 61 and was slower on MinIO in 5 of 6 paired runs;
	// at 4× and at least 1 MiB only reads that are mostly holes (the
	// narrow projection above) are split.
	DefaultPrefetchMinHole      = 1 << 20
	DefaultPrefetchHoleFraction = 4.0
	// DefaultPrefetchRequest caps a coalesced request, so that decoding
	// starts after the first few MiB, not after the whole split (a single
	// range larger than it stays one request). Measured on MinIO with make
	// bench at SF 1: 4 MiB 3,654 GETs, 16 MiB 2,746, the same wall time;
	// 8 MiB is S3's advice for ranged GETs.
	DefaultPrefetchRequest = 8 << 20
	// DefaultPrefetchParallel is how many requests are in flight at once.
	DefaultPrefetchParallel = 4
	// DefaultPrefetchAhead bounds the bytes fetched and not yet read.
	DefaultPrefetchAhead = 48 << 20
)

// PrefetchOptions configures Prefetch; zero fields take the defaults.
type PrefetchOptions struct {
	Hole int64
	// MinHole and HoleFraction bound the hole bytes of one coalesced
	// request (see DefaultPrefetchHoleFraction); a negative HoleFraction
	// turns the bound off (gaps up to Hole always merge).
	MinHole      int64
	HoleFraction float64
	Request      int64
	Parallel     int
	Ahead        int64
}

func (o PrefetchOptions) withDefaults() PrefetchOptions {
	if o.Hole <= 0 {
		o.Hole = DefaultPrefetchHole
	}
	if o.MinHole <= 0 {
		o.MinHole = DefaultPrefetchMinHole
	}
	switch {
	case o.HoleFraction == 0:
		o.HoleFraction = DefaultPrefetchHoleFraction
	}
	if o.Request <= 0 {
		o.Request = DefaultPrefetchRequest
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultPrefetchParallel
	}
	if o.Ahead <= 0 {
		o.Ahead = DefaultPrefetchAhead
	}
	return o
}

// WithPrefetch sets the read-ahead options of the reader's Prefetch.
func WithPrefetch(o PrefetchOptions) ReaderAtOption {
	return func(r *ReaderAt) { r.prefetchOpts = o }
}

// fetchUnit is one coalesced request of the read-ahead.
type fetchUnit struct {
	off, n int64
	left   int64 // bytes of planned ranges not yet read; 0 frees data
	// parts are the planned ranges inside the unit, by offset, with
	// whether each was read (a range read twice is counted once).
	parts []plannedPart

	started bool
	done    chan struct{} // closed when data or err is set
	data    []byte
	err     error
	freed   bool
}

type plannedPart struct {
	off, n int64
	read   bool
}

// prefetcher holds the read-ahead state of one ReaderAt.
type prefetcher struct {
	mu     sync.Mutex
	units  []*fetchUnit // by offset
	held   int64        // bytes fetched or being fetched, not yet freed
	wake   chan struct{}
	closed bool
	stop   chan struct{}
}

// coalesce sorts ranges by offset and merges overlapping ones and those
// separated by a gap of at most o.Hole bytes, up to o.Request bytes per
// unit, as long as the hole bytes a unit fetches stay within its waste
// budget: at most o.HoleFraction of the planned bytes it holds, or
// o.MinHole, whichever is larger (wasteBudget).
func coalesce(ranges [][2]int64, o PrefetchOptions) []*fetchUnit {
	rs := make([][2]int64, 0, len(ranges))
	for _, r := range ranges {
		if r[1] > 0 && r[0] >= 0 {
			rs = append(rs, r)
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i][0] < rs[j][0] })
	var units []*fetchUnit
	var used, waste int64 // of the last unit: planned bytes (overlaps once) and hole bytes
	for _, r := range rs {
		end := r[0] + r[1]
		if k := len(units); k > 0 {
			u := units[k-1]
			uend := u.off + u.n
			gap := max(r[0]-uend, 0)
			adds := max(end-max(r[0], uend), 0) // planned bytes past the unit's end
			fits := r[0] < uend || (gap <= o.Hole && end-u.off <= o.Request && waste+gap <= wasteBudget(used+adds, o))
			if fits {
				if end > uend {
					u.n = end - u.off
				}
				used, waste = used+adds, waste+gap
				u.parts = append(u.parts, plannedPart{off: r[0], n: r[1]})
				continue
			}
		}
		used, waste = r[1], 0
		units = append(units, &fetchUnit{off: r[0], n: r[1], parts: []plannedPart{{off: r[0], n: r[1]}}})
	}
	for _, u := range units {
		for _, p := range u.parts {
			u.left += p.n
		}
		u.done = make(chan struct{})
	}
	return units
}

// wasteBudget is the most hole bytes a coalesced request holding used
// planned bytes may fetch: o.HoleFraction of them, and at least o.MinHole.
func wasteBudget(used int64, o PrefetchOptions) int64 {
	if o.HoleFraction < 0 {
		return math.MaxInt64 // no budget: every gap up to Hole merges
	}
	return max(o.MinHole, int64(o.HoleFraction*float64(used)))
}

// Prefetch plans the ranges (offset, length) the caller is about to read
// and starts fetching them in the background, in offset order. Reads that
// fall inside a planned range are served from the fetched bytes; a planned
// request's bytes are freed once every range planned in it was read, or at
// Close. Calling Prefetch again replaces the plan.
func (r *ReaderAt) Prefetch(ranges [][2]int64) {
	o := r.prefetchOpts.withDefaults()
	size, err := r.objectSize()
	if err != nil {
		return // reads report the error
	}
	var valid [][2]int64
	for _, rg := range ranges {
		if rg[0] >= 0 && rg[1] > 0 && rg[0]+rg[1] <= size {
			valid = append(valid, rg)
		}
	}
	r.Close()
	p := &prefetcher{units: coalesce(valid, o), wake: make(chan struct{}, 1), stop: make(chan struct{})}
	if len(p.units) == 0 {
		return
	}
	r.mu.Lock()
	r.pf = p
	r.mu.Unlock()
	go r.readAhead(p, o)
}

// readAhead starts the plan's requests in order, at most o.Parallel at a
// time and at most o.Ahead bytes held (always at least one).
func (r *ReaderAt) readAhead(p *prefetcher, o PrefetchOptions) {
	slots := make(chan struct{}, o.Parallel)
	for _, u := range p.units {
		for {
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				return
			}
			if u.started {
				p.mu.Unlock()
				break
			}
			if p.held == 0 || p.held+u.n <= o.Ahead {
				u.started = true
				p.held += u.n
				p.mu.Unlock()
				select {
				case slots <- struct{}{}:
				case <-p.stop:
					r.finish(p, u, nil, errPrefetchClosed)
					return
				case <-r.ctx.Done():
					r.finish(p, u, nil, r.ctx.Err())
					return
				}
				go func(u *fetchUnit) {
					data, err := r.fetch(u.off, u.n)
					<-slots
					r.finish(p, u, data, err)
				}(u)
				break
			}
			p.mu.Unlock()
			select { // wait for bytes to be freed
			case <-p.wake:
			case <-p.stop:
				return
			case <-r.ctx.Done():
				return
			}
		}
	}
}

var errPrefetchClosed = errors.New("objstore: read-ahead closed")

// finish records a unit's answer.
func (r *ReaderAt) finish(p *prefetcher, u *fetchUnit, data []byte, err error) {
	p.mu.Lock()
	if p.closed || u.freed {
		data = nil
	}
	u.data, u.err = data, err
	if err != nil || p.closed {
		// A failed unit holds nothing; readers fall back to their own GET.
		if !u.freed {
			u.freed = true
			p.held -= u.n
		}
	}
	p.mu.Unlock()
	close(u.done)
	p.signal()
}

func (p *prefetcher) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// unitFor returns the planned unit holding [off, off+n), or nil.
func (p *prefetcher) unitFor(off, n int64) *fetchUnit {
	i := sort.Search(len(p.units), func(i int) bool { return p.units[i].off+p.units[i].n > off })
	if i < len(p.units) && p.units[i].off <= off && off+n <= p.units[i].off+p.units[i].n {
		return p.units[i]
	}
	return nil
}

// readPlanned serves a read from the read-ahead when it falls inside a
// planned unit: it waits for the unit (or fetches it, when the read-ahead
// has not started it) and copies. ok is false when the read is not
// planned, or the unit failed or was freed: the caller reads it itself.
func (r *ReaderAt) readPlanned(p []byte, off int64) (int, bool) {
	b, ok := r.planned(off, int64(len(p)))
	if !ok {
		return 0, false
	}
	return copy(p, b), true
}

// planned returns the n bytes at off from the read-ahead, a slice of the
// planned request that holds them (waiting for it, or fetching it when
// the read-ahead has not started it), and counts the read against the
// planned range it is. ok is false when the range is not inside a
// planned request, or the request failed or was freed.
func (r *ReaderAt) planned(off, n int64) ([]byte, bool) {
	r.mu.Lock()
	pf := r.pf
	r.mu.Unlock()
	if pf == nil {
		return nil, false
	}
	pf.mu.Lock()
	u := pf.unitFor(off, n)
	if u == nil || u.freed {
		pf.mu.Unlock()
		return nil, false
	}
	if !u.started { // the reader is ahead of the read-ahead: fetch it now
		u.started = true
		pf.held += u.n
		pf.mu.Unlock()
		data, err := r.fetch(u.off, u.n)
		r.finish(pf, u, data, err)
	} else {
		pf.mu.Unlock()
	}
	select {
	case <-u.done:
	case <-r.ctx.Done():
		return nil, false
	}
	pf.mu.Lock()
	defer pf.mu.Unlock()
	if u.err != nil || u.freed || u.data == nil {
		return nil, false
	}
	from := off - u.off
	b := u.data[min(from, int64(len(u.data))):min(from+n, int64(len(u.data)))]
	// Count the read against the planned range it is (if it is one).
	j := sort.Search(len(u.parts), func(j int) bool { return u.parts[j].off >= off })
	for ; j < len(u.parts) && u.parts[j].off == off; j++ {
		if pp := &u.parts[j]; pp.n == n && !pp.read {
			pp.read = true
			u.left -= n
			break
		}
	}
	if u.left <= 0 {
		u.data, u.freed = nil, true
		pf.held -= u.n
		pf.signal()
	}
	return b, true
}

// Close stops the read-ahead and frees its bytes. The reader stays usable
// (reads issue their own GETs).
func (r *ReaderAt) Close() error {
	r.mu.Lock()
	pf := r.pf
	r.pf = nil
	r.mu.Unlock()
	if pf == nil {
		return nil
	}
	pf.mu.Lock()
	if !pf.closed {
		pf.closed = true
		close(pf.stop)
		for _, u := range pf.units {
			u.data = nil
			u.freed = true
		}
		pf.held = 0
	}
	pf.mu.Unlock()
	return nil
}
