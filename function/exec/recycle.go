package exec

import (
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// recycleLimit bounds the bytes of released buffers one scan keeps for its
// next batches: a few batches' fixed-width columns (8,192 rows of eight
// bytes are 64 KiB a column).
const recycleLimit = 8 << 20

// poisonByte fills a released buffer when Options.PoisonFreed is set.
const poisonByte = 0xA5

// recycler is the allocator of one scan's fixed-width column buffers
// (values, dictionary indices, bitmaps). A buffer its consumer released
// (the batch's last reference dropped, memory.Buffer.Release calling
// Free) is handed, zeroed, to a later batch of the same size instead of
// a fresh allocation.
//
// Why: a scan allocates its batches' columns afresh, and an aggregation
// over it drops each batch a moment later. Ten million rows of one int64
// and one dictionary column were 140 MB of allocation a run, all fresh
// memory: the collector's growth target let the heap reach five times
// what was live before reusing any, and every new page cost the kernel a
// first-touch fault (a third of such a query's CPU in a process's first
// runs). With the buffers recycled the scan's footprint is a few batches.
//
// The hazard is a consumer reading a batch's values after releasing it: a
// recycled buffer then holds another batch's values, silently. Two rules
// keep that out. Only fixed-width values are recycled, never string
// bytes, which arrow-go's String.Value hands out without copying and Go
// code keeps as map keys and the like; a fixed-width value is read by
// copy. And with PoisonFreed (set in every test run by the Makefile
// through SLUICE_POISON_FREED) a released buffer is overwritten with
// poisonByte before it is kept, so a read after release gives answers the
// tests' comparison with DuckDB rejects.
type recycler struct {
	base   memory.Allocator
	poison bool
	limit  int

	mu     sync.Mutex
	free   map[int][][]byte // released buffers by capacity
	held   int              // their bytes
	reused int              // Allocate calls served by a released buffer
	closed bool             // the scan ended: Free hands buffers to base
}

func newRecycler(base memory.Allocator, poison bool, limit int) *recycler {
	return &recycler{base: base, poison: poison, limit: limit, free: map[int][][]byte{}}
}

// Allocate returns a zeroed buffer of size bytes: a released one of that
// capacity when one is kept.
func (r *recycler) Allocate(size int) []byte {
	if size > 0 {
		r.mu.Lock()
		if l := r.free[size]; len(l) > 0 { // nil after close
			b := l[len(l)-1]
			l[len(l)-1] = nil
			r.free[size] = l[:len(l)-1]
			r.held -= size
			r.reused++
			r.mu.Unlock()
			clear(b)
			return b
		}
		r.mu.Unlock()
	}
	return r.base.Allocate(size)
}

// Reallocate grows b to size bytes (its contents kept), releasing b when
// it moves.
func (r *recycler) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := r.Allocate(size)
	copy(nb, b)
	r.Free(b)
	return nb
}

// Free keeps b for a later Allocate of its capacity while the kept bytes
// stay within the limit and the scan runs (poisoned first under
// PoisonFreed); otherwise it hands b to the base allocator.
func (r *recycler) Free(b []byte) {
	b = b[:cap(b)]
	if r.poison {
		for i := range b {
			b[i] = poisonByte
		}
	}
	r.mu.Lock()
	if keep := len(b) > 0 && !r.closed && r.held+len(b) <= r.limit; keep {
		r.free[len(b)] = append(r.free[len(b)], b)
		r.held += len(b)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.base.Free(b)
}

// close ends the recycling when the scan ends: the kept buffers, and any
// its batches' consumers release later, go back to the base allocator.
func (r *recycler) close() {
	r.mu.Lock()
	free := r.free
	r.free, r.held, r.closed = nil, 0, true
	r.mu.Unlock()
	for _, l := range free {
		for _, b := range l {
			r.base.Free(b)
		}
	}
}

var _ memory.Allocator = (*recycler)(nil)
