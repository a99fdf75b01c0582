package exec

import (
	"context"
	"math/rand"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestRecycler checks the allocator a scan's fixed-width columns come
// from: what it hands back, when, and what reaches the base allocator.
func TestRecycler(t *testing.T) {
	same := func(a, b []byte) bool { return &a[0] == &b[0] }
	zero := func(b []byte) bool { return !slices.ContainsFunc(b, func(x byte) bool { return x != 0 }) }
	fill := func(b []byte) {
		for i := range b {
			b[i] = byte(i + 1)
		}
	}
	cases := []struct {
		name   string
		limit  int
		poison bool
		run    func(t *testing.T, r *recycler)
	}{
		{"a released buffer comes back zeroed", 1 << 20, false, func(t *testing.T, r *recycler) {
			a := r.Allocate(128)
			fill(a)
			r.Free(a)
			b := r.Allocate(128)
			if !same(a, b) || !zero(b) || r.reused != 1 {
				t.Errorf("same=%v zero=%v reused=%d", same(a, b), zero(b), r.reused)
			}
			r.Free(b)
		}},
		{"only to an allocation of its size", 1 << 20, false, func(t *testing.T, r *recycler) {
			a := r.Allocate(128)
			r.Free(a)
			b := r.Allocate(256)
			if same(a, b) || r.reused != 0 {
				t.Error("a 128-byte buffer served a 256-byte allocation")
			}
			r.Free(b)
		}},
		{"kept within the limit, the rest to the base", 256, false, func(t *testing.T, r *recycler) {
			bufs := [][]byte{r.Allocate(128), r.Allocate(128), r.Allocate(128)}
			for _, b := range bufs {
				r.Free(b)
			}
			if r.held != 256 || len(r.free[128]) != 2 {
				t.Errorf("held %d bytes in %d buffers, want 256 in 2", r.held, len(r.free[128]))
			}
		}},
		{"poisoned when released", 1 << 20, true, func(t *testing.T, r *recycler) {
			a := r.Allocate(64)
			fill(a)
			r.Free(a)
			if slices.ContainsFunc(a, func(x byte) bool { return x != poisonByte }) {
				t.Errorf("released buffer not poisoned: % x", a[:8])
			}
			if b := r.Allocate(64); !zero(b) {
				t.Error("a poisoned buffer handed out without zeroing")
			} else {
				r.Free(b)
			}
		}},
		{"poisoned beyond the limit too", 0, true, func(t *testing.T, r *recycler) {
			a := r.Allocate(64)
			fill(a)
			r.Free(a)
			if a[0] != poisonByte || r.held != 0 {
				t.Errorf("a[0]=%x held=%d", a[0], r.held)
			}
		}},
		{"reallocate keeps the contents and releases the old", 1 << 20, false, func(t *testing.T, r *recycler) {
			a := r.Allocate(64)
			fill(a)
			b := r.Reallocate(192, a)
			if len(b) != 192 || b[0] != 1 || b[63] != 64 || !zero(b[64:]) || len(r.free[64]) != 1 {
				t.Errorf("len=%d b[0]=%d b[63]=%d kept=%d", len(b), b[0], b[63], len(r.free[64]))
			}
			if c := r.Reallocate(100, b); !same(b, c) || len(c) != 100 {
				t.Error("a shrink moved the buffer")
			}
			r.Free(b)
		}},
		{"after close every buffer goes to the base", 1 << 20, false, func(t *testing.T, r *recycler) {
			a, b := r.Allocate(128), r.Allocate(128)
			r.Free(a)
			r.close()
			r.Free(b) // a batch released after its scan ended
			if c := r.Allocate(128); same(c, a) || same(c, b) {
				t.Error("a buffer recycled after close")
			} else {
				r.Free(c)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := checkedMem(t) // everything back to the base by the end
			r := newRecycler(mem, c.poison, c.limit)
			c.run(t, r)
			r.close()
		})
	}
}

// TestRecyclerConcurrent has batches released on other goroutines than
// the one allocating, as an exchange writer's do (run under -race).
func TestRecyclerConcurrent(t *testing.T) {
	mem := checkedMem(t)
	r := newRecycler(mem, true, 4<<10)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			for i := 0; i < 2000; i++ {
				b := r.Allocate(64 * (1 + rng.Intn(4)))
				for j := range b {
					if b[j] != 0 {
						t.Errorf("byte %d of a handed-out buffer is %x", j, b[j])
						return
					}
					b[j] = byte(seed)
				}
				r.Free(b)
			}
		}(int64(g))
	}
	wg.Wait()
	r.close()
}

// TestPoisonFreedShowsUseAfterRelease is why PoisonFreed is on in the
// tests: a consumer that keeps a batch's values past its release reads
// poison (or a later batch's values), not the values it kept.
func TestPoisonFreedShowsUseAfterRelease(t *testing.T) {
	path := writeLateFile(t, lateFile{rows: 3000, rowGroup: 1000, dict: true, pageBytes: 1 << 20, seed: 9})
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := lateNode(nil)
	i64 := slices.IndexFunc(n.Scan.Columns, func(c string) bool { return c == "i64r" })
	op, err := NewParquetScan(context.Background(), f, n, nil, Options{Mem: memory.DefaultAllocator, Late: LateAlways, BatchRows: 500, PoisonFreed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	rec, err := op.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	kept := rec.Column(i64).(*array.Int64).Int64Values() // held without Retain: the bug
	orig := slices.Clone(kept)
	rec.Release()
	if slices.Equal(kept, orig) {
		t.Fatal("values read after their batch was released are unchanged")
	}
	next, err := op.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer next.Release()
	if slices.Equal(kept, orig) {
		t.Fatal("values read after their buffer was recycled are unchanged")
	}
}
