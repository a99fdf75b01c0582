package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/sluicedb/sluice/shuffle/objstore"
)

// fetchLog is a fetch function over data that records the ranges asked.
type fetchLog struct {
	mu   sync.Mutex
	data []byte
	got  [][2]int64
}

func (f *fetchLog) fetch(off, n int64) ([]byte, error) {
	f.mu.Lock()
	f.got = append(f.got, [2]int64{off, n})
	f.mu.Unlock()
	return bytes.Clone(f.data[off : off+n]), nil
}

func (f *fetchLog) take() [][2]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.got
	f.got = nil
	return g
}

// TestRangeCacheReads: a read is served from memory where cached ranges
// hold it, and fetches only its gaps (or one span when they are many);
// every read returns the object's bytes.
func TestRangeCacheReads(t *testing.T) {
	data := make([]byte, 10_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	type read struct {
		off, n    int64
		wantFetch [][2]int64 // nil: from memory
		wantMem   int64
	}
	cases := []struct {
		name  string
		reads []read
	}{
		{"repeat", []read{
			{100, 200, [][2]int64{{100, 200}}, 0},
			{100, 200, nil, 200},
			{150, 50, nil, 50},
		}},
		{"gaps fetched alone", []read{
			{100, 100, [][2]int64{{100, 100}}, 0},
			{300, 100, [][2]int64{{300, 100}}, 0},
			{0, 500, [][2]int64{{0, 100}, {200, 100}, {400, 100}}, 200},
			{0, 500, nil, 500}, // adjacent ranges assemble the read
		}},
		{"many gaps one span", []read{
			{100, 10, [][2]int64{{100, 10}}, 0},
			{200, 10, [][2]int64{{200, 10}}, 0},
			{300, 10, [][2]int64{{300, 10}}, 0},
			{400, 10, [][2]int64{{400, 10}}, 0},
			{500, 10, [][2]int64{{500, 10}}, 0},
			{0, 600, [][2]int64{{0, 600}}, 0},
		}},
		{"overlap at both ends", []read{
			{1000, 1000, [][2]int64{{1000, 1000}}, 0},
			{500, 2000, [][2]int64{{500, 500}, {2000, 500}}, 1000},
			{500, 2000, nil, 2000},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := objstore.NewRangeCache(1 << 20)
			f := &fetchLog{data: data}
			for i, r := range c.reads {
				got, mem, err := rc.Read("b", "k", "e1", r.off, r.n, f.fetch)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, data[r.off:r.off+r.n]) {
					t.Fatalf("read %d [%d,+%d): wrong bytes", i, r.off, r.n)
				}
				if fetched := f.take(); fmt.Sprint(fetched) != fmt.Sprint(r.wantFetch) {
					t.Fatalf("read %d fetched %v, want %v", i, fetched, r.wantFetch)
				}
				if mem != r.wantMem {
					t.Fatalf("read %d: %d bytes from memory, want %d", i, mem, r.wantMem)
				}
			}
		})
	}
}

// TestRangeCacheVersions: another ETag or bucket is another object; no
// ETag caches nothing.
func TestRangeCacheVersions(t *testing.T) {
	v1, v2 := bytes.Repeat([]byte{1}, 100), bytes.Repeat([]byte{2}, 100)
	rc := objstore.NewRangeCache(1 << 20)
	f1, f2 := &fetchLog{data: v1}, &fetchLog{data: v2}
	if _, _, err := rc.Read("b", "k", "e1", 0, 50, f1.fetch); err != nil {
		t.Fatal(err)
	}
	got, mem, err := rc.Read("b", "k", "e2", 0, 50, f2.fetch)
	if err != nil || mem != 0 || !bytes.Equal(got, v2[:50]) {
		t.Fatalf("another version: %v from memory %d, %v", got[:1], mem, err)
	}
	if _, mem, _ := rc.Read("other", "k", "e1", 0, 50, f1.fetch); mem != 0 {
		t.Fatal("another bucket's object read from memory")
	}
	for range 2 {
		if _, mem, _ := rc.Read("b", "k", "", 0, 50, f1.fetch); mem != 0 {
			t.Fatal("a read without a version was cached")
		}
	}
	if got, mem, _ := rc.Read("b", "k", "e1", 0, 50, f1.fetch); mem != 50 || !bytes.Equal(got, v1[:50]) {
		t.Fatal("the first version is no longer cached")
	}
}

// TestRangeCacheBudget: the cache holds at most its budget, dropping the
// least recently used ranges; a failed fetch caches nothing.
func TestRangeCacheBudget(t *testing.T) {
	data := make([]byte, 1<<20)
	rc := objstore.NewRangeCache(64 << 10)
	f := &fetchLog{data: data}
	for i := range int64(16) {
		if _, _, err := rc.Read("b", "k", "e", i*8<<10, 8<<10, f.fetch); err != nil {
			t.Fatal(err)
		}
		if st := rc.Stats(); st.Bytes > st.Budget {
			t.Fatalf("after read %d: %d bytes held, budget %d", i, st.Bytes, st.Budget)
		}
	}
	st := rc.Stats()
	if st.Bytes != 64<<10 || st.EvictedBytes != 64<<10 {
		t.Fatalf("stats %+v: want 64 KiB held and 64 KiB evicted", st)
	}
	f.take()
	if _, mem, _ := rc.Read("b", "k", "e", 15*8<<10, 8<<10, f.fetch); mem != 8<<10 {
		t.Fatal("the most recent range was evicted")
	}
	if _, mem, _ := rc.Read("b", "k", "e", 0, 8<<10, f.fetch); mem != 0 {
		t.Fatal("the oldest range is still cached")
	}
	// A range over an eighth of the budget is not kept.
	if _, _, err := rc.Read("b", "big", "e", 0, 16<<10, f.fetch); err != nil {
		t.Fatal(err)
	}
	if _, mem, _ := rc.Read("b", "big", "e", 0, 16<<10, f.fetch); mem != 0 {
		t.Fatal("a range of a quarter of the budget was kept")
	}
	boom := errors.New("boom")
	if _, _, err := rc.Read("b", "bad", "e", 0, 10, func(int64, int64) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed fetch: %v", err)
	}
	if _, mem, _ := rc.Read("b", "bad", "e", 0, 10, f.fetch); mem != 0 {
		t.Fatal("a failed fetch left bytes in the cache")
	}
	var nilCache *objstore.RangeCache
	if _, mem, err := nilCache.Read("b", "k", "e", 0, 10, f.fetch); err != nil || mem != 0 {
		t.Fatal("a nil cache must fetch")
	}
}

// TestRangeCacheConcurrent: random overlapping reads from many
// goroutines under a small budget always return the object's bytes (run
// with -race).
func TestRangeCacheConcurrent(t *testing.T) {
	data := make([]byte, 256<<10)
	for i := range data {
		data[i] = byte(i ^ i>>8)
	}
	rc := objstore.NewRangeCache(96 << 10)
	f := &fetchLog{data: data}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(g), 1))
			for range 500 {
				off := rnd.Int64N(int64(len(data)) - 1)
				n := 1 + rnd.Int64N(min(int64(len(data))-off, 16<<10))
				got, _, err := rc.Read("b", "k", "e", off, n, f.fetch)
				if err != nil || !bytes.Equal(got, data[off:off+n]) {
					errs <- fmt.Errorf("read [%d,+%d): %v", off, n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := rc.Stats(); st.Bytes > st.Budget || st.HitBytes == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestReaderAtVersion: a reader of one version reads through the cache,
// and fails with ErrChanged once the object is replaced, for bytes it
// has not cached.
func TestReaderAtVersion(t *testing.T) {
	ctx := context.Background()
	m := objstore.NewMem("v")
	data := bytes.Repeat([]byte("0123456789"), 20_000)
	if err := m.Put(ctx, "t/f", data); err != nil {
		t.Fatal(err)
	}
	info, err := m.Stat(ctx, "t/f")
	if err != nil {
		t.Fatal(err)
	}
	rc := objstore.NewRangeCache(1 << 20)
	read := func(off, n int64) (*objstore.ReaderAt, []byte, error) {
		r := objstore.NewReaderAt(ctx, m, "t/f", info.Size, objstore.WithVersion(info.ETag, rc), objstore.WithCacheBlocks(0))
		p := make([]byte, n)
		k, err := r.ReadAt(p, off)
		return r, p[:k], err
	}
	r, got, err := read(1000, 70_000)
	if err != nil || !bytes.Equal(got, data[1000:71_000]) || r.BytesCached() != 0 || r.BytesFetched() != 70_000 {
		t.Fatalf("first read: %d bytes, %v, cached %d, fetched %d", len(got), err, r.BytesCached(), r.BytesFetched())
	}
	r, got, err = read(2000, 10_000)
	if err != nil || !bytes.Equal(got, data[2000:12_000]) || r.BytesCached() != 10_000 || r.Requests() != 0 {
		t.Fatalf("second read: %d bytes, %v, cached %d, requests %d", len(got), err, r.BytesCached(), r.Requests())
	}
	if err := m.Put(ctx, "t/f", bytes.Repeat([]byte("x"), len(data))); err != nil {
		t.Fatal(err)
	}
	// Cached bytes of the listed version still read (the query reads the
	// version it was planned with); bytes not cached are refused.
	if _, got, err = read(2000, 10_000); err != nil || !bytes.Equal(got, data[2000:12_000]) {
		t.Fatalf("cached read after the replace: %v", err)
	}
	r, _, err = read(100_000, 10_000)
	if !errors.Is(err, objstore.ErrChanged) || !r.Changed() {
		t.Fatalf("uncached read after the replace: %v (changed %v), want ErrChanged", err, r.Changed())
	}
}
