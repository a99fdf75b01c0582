package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
)

// rangeLog is a bucket that records its ranged GETs and can fail those
// starting at given offsets.
type rangeLog struct {
	*Mem
	mu     sync.Mutex
	gets   [][2]int64
	failAt map[int64]bool
}

func (b *rangeLog) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	b.mu.Lock()
	b.gets = append(b.gets, [2]int64{off, n})
	fail := b.failAt[off]
	b.mu.Unlock()
	if fail {
		return nil, errors.New("injected GET failure")
	}
	return b.Mem.GetRange(ctx, key, off, n)
}

func (b *rangeLog) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.gets)
}

func TestCoalesce(t *testing.T) {
	const noBudget = -1.0 // gaps up to the hole always merge (the rule before the budget)
	cases := []struct {
		name          string
		ranges        [][2]int64
		hole, request int64
		minHole       int64
		fraction      float64
		want          [][2]int64 // units (off, n)
	}{
		{"adjacent merge", [][2]int64{{0, 10}, {10, 10}}, 0, 100, 0, noBudget, [][2]int64{{0, 20}}},
		{"small hole merges", [][2]int64{{0, 10}, {15, 10}}, 5, 100, 0, noBudget, [][2]int64{{0, 25}}},
		{"big hole splits", [][2]int64{{0, 10}, {16, 10}}, 5, 100, 0, noBudget, [][2]int64{{0, 10}, {16, 10}}},
		{"unsorted input", [][2]int64{{50, 10}, {0, 10}, {12, 3}}, 5, 100, 0, noBudget, [][2]int64{{0, 15}, {50, 10}}},
		{"request cap splits", [][2]int64{{0, 60}, {60, 60}}, 10, 100, 0, noBudget, [][2]int64{{0, 60}, {60, 60}}},
		{"one big range stays whole", [][2]int64{{0, 500}}, 10, 100, 0, noBudget, [][2]int64{{0, 500}}},
		{"overlap merges past the cap", [][2]int64{{0, 90}, {50, 90}}, 0, 100, 0, noBudget, [][2]int64{{0, 140}}},
		{"empty and negative dropped", [][2]int64{{0, 0}, {-1, 5}, {3, 4}}, 0, 100, 0, noBudget, [][2]int64{{3, 4}}},
		// The waste budget: hole bytes at most fraction x planned bytes
		// of the unit, and at least minHole.
		{"narrow chunks far apart stay apart", [][2]int64{{0, 10}, {100, 10}, {200, 10}}, 1000, 1000, 1, 1, [][2]int64{{0, 10}, {100, 10}, {200, 10}}},
		{"the same gaps without a budget merge", [][2]int64{{0, 10}, {100, 10}, {200, 10}}, 1000, 1000, 1, noBudget, [][2]int64{{0, 210}}},
		{"wide chunks with small holes merge", [][2]int64{{0, 100}, {150, 100}, {300, 100}}, 1000, 1000, 1, 1, [][2]int64{{0, 400}}},
		{"budget spent: the next gap opens a unit", [][2]int64{{0, 20}, {40, 20}, {100, 20}}, 1000, 1000, 1, 0.5, [][2]int64{{0, 60}, {100, 20}}},
		{"min hole merges small gaps of tiny chunks", [][2]int64{{0, 1}, {9, 1}, {17, 1}}, 1000, 1000, 16, 0.1, [][2]int64{{0, 18}}},
		{"min hole spent", [][2]int64{{0, 1}, {9, 1}, {17, 1}}, 1000, 1000, 10, 0.1, [][2]int64{{0, 10}, {17, 1}}},
		{"the hole bound still holds", [][2]int64{{0, 100}, {150, 100}}, 40, 1000, 1, 10, [][2]int64{{0, 100}, {150, 100}}},
		{"overlaps cost no budget", [][2]int64{{0, 10}, {5, 10}, {100, 10}}, 1000, 1000, 1, 1, [][2]int64{{0, 15}, {100, 10}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			us := coalesce(c.ranges, PrefetchOptions{Hole: c.hole, Request: c.request, MinHole: c.minHole, HoleFraction: c.fraction}.withDefaults())
			var got [][2]int64
			for _, u := range us {
				got = append(got, [2]int64{u.off, u.n})
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("units %v, want %v", got, c.want)
			}
		})
	}
}

func TestPrefetchReads(t *testing.T) {
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	// Twenty 8 KiB "column chunks" with 8 KiB gaps between them.
	var ranges [][2]int64
	for i := int64(0); i < 20; i++ {
		ranges = append(ranges, [2]int64{i * 16 << 10, 8 << 10})
	}
	cases := []struct {
		name     string
		opts     PrefetchOptions
		order    []int // indexes of ranges read, in order
		failAt   []int64
		maxGets  int // most GETs the reads may cost (with the read-ahead's own)
		wantGets int // exact, when > 0
	}{
		{name: "one coalesced request", opts: PrefetchOptions{Hole: 8 << 10}, order: seq(20), wantGets: 1},
		{name: "holes too big: one per range, ahead", opts: PrefetchOptions{Hole: 1}, order: seq(20), wantGets: 20},
		{name: "small window still reads all", opts: PrefetchOptions{Hole: 1, Ahead: 8 << 10, Parallel: 1}, order: seq(20), wantGets: 20},
		{name: "out of order", opts: PrefetchOptions{Hole: 1, Ahead: 16 << 10, Parallel: 2}, order: []int{19, 0, 5, 18, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, maxGets: 20},
		{name: "skipped ranges do not stall", opts: PrefetchOptions{Hole: 1, Ahead: 8 << 10, Parallel: 1}, order: []int{0, 2, 4, 6, 8, 10, 12, 14, 16, 18}, maxGets: 20},
		{name: "failed request falls back", opts: PrefetchOptions{Hole: 1}, order: seq(20), failAt: []int64{5 * 16 << 10}, maxGets: 22},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			b := &rangeLog{Mem: NewMem("t"), failAt: map[int64]bool{}}
			if err := b.Put(ctx, "f", data); err != nil {
				t.Fatal(err)
			}
			fails := 0
			for _, off := range c.failAt {
				b.failAt[off] = true
			}
			r := NewReaderAt(ctx, b, "f", int64(len(data)), WithPrefetch(c.opts))
			r.Prefetch(ranges)
			for _, i := range c.order {
				rg := ranges[i]
				if b.failAt[rg[0]] && fails == 0 {
					fails++
					// The read-ahead's GET failed; the reader's own GET
					// of the same range fails too (same offset) and is
					// reported; then the failure is lifted.
					p := make([]byte, rg[1])
					if _, err := r.ReadAt(p, rg[0]); err == nil {
						t.Fatalf("read of a failing range succeeded")
					}
					b.mu.Lock()
					delete(b.failAt, rg[0])
					b.mu.Unlock()
				}
				// Odd ranges are read with View, which shares the
				// read-ahead's bytes instead of copying them.
				var p []byte
				var err error
				if i%2 == 1 {
					p, err = r.View(rg[0], rg[1])
				} else {
					p = make([]byte, rg[1])
					var n int
					n, err = r.ReadAt(p, rg[0])
					p = p[:n]
				}
				if err != nil || int64(len(p)) != rg[1] {
					t.Fatalf("range %d: n=%d err=%v", i, len(p), err)
				}
				if !bytes.Equal(p, data[rg[0]:rg[0]+rg[1]]) {
					t.Fatalf("range %d: wrong bytes", i)
				}
			}
			r.Close()
			if c.wantGets > 0 && b.count() != c.wantGets {
				t.Fatalf("%d GETs, want %d: %v", b.count(), c.wantGets, b.gets)
			}
			if c.maxGets > 0 && b.count() > c.maxGets {
				t.Fatalf("%d GETs, want at most %d", b.count(), c.maxGets)
			}
			// Reads after Close issue their own GETs and stay right.
			p := make([]byte, 100)
			if _, err := r.ReadAt(p, 1000); err != nil || !bytes.Equal(p, data[1000:1100]) {
				t.Fatalf("read after Close: %v", err)
			}
		})
	}
}

// TestPrefetchFreesBytes checks that fully read units drop their bytes,
// so the window moves on and memory stays bounded.
func TestPrefetchFreesBytes(t *testing.T) {
	ctx := context.Background()
	b := &rangeLog{Mem: NewMem("t")}
	data := make([]byte, 64<<10)
	if err := b.Put(ctx, "f", data); err != nil {
		t.Fatal(err)
	}
	r := NewReaderAt(ctx, b, "f", int64(len(data)), WithPrefetch(PrefetchOptions{Hole: 1, Ahead: 8 << 10, Parallel: 1}))
	var ranges [][2]int64
	for i := int64(0); i < 8; i++ {
		ranges = append(ranges, [2]int64{i * 8 << 10, 4 << 10}, [2]int64{i*8<<10 + 4<<10 + 1, 100})
	}
	r.Prefetch(ranges)
	for _, rg := range ranges {
		p := make([]byte, rg[1])
		if _, err := r.ReadAt(p, rg[0]); err != nil {
			t.Fatal(err)
		}
	}
	r.mu.Lock()
	pf := r.pf
	r.mu.Unlock()
	pf.mu.Lock()
	defer pf.mu.Unlock()
	if pf.held != 0 {
		t.Fatalf("%d bytes still held after every planned range was read", pf.held)
	}
	for i, u := range pf.units {
		if u.data != nil || !u.freed {
			t.Fatalf("unit %d not freed", i)
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// TestView checks View against the object's bytes outside the read-ahead:
// large and small ranges, the object's end, and no extra GET for a range
// the block cache holds.
func TestView(t *testing.T) {
	data := make([]byte, 256<<10)
	for i := range data {
		data[i] = byte(i * 13)
	}
	cases := []struct {
		name    string
		off, n  int64
		want    int64 // bytes returned
		eof     bool
		maxGets int
	}{
		{name: "large range: the GET's buffer", off: 1000, n: 200 << 10, want: 200 << 10, maxGets: 1},
		{name: "small range: through the block cache", off: 5000, n: 100, want: 100, maxGets: 1},
		{name: "zero bytes", off: 10, n: 0, want: 0},
		{name: "past the end: short, io.EOF", off: int64(len(data)) - 50, n: 100, want: 50, eof: true, maxGets: 1},
		{name: "at the end", off: int64(len(data)), n: 10, want: 0, eof: true},
		{name: "whole object", off: 0, n: int64(len(data)), want: int64(len(data)), maxGets: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			b := &rangeLog{Mem: NewMem("t"), failAt: map[int64]bool{}}
			if err := b.Put(ctx, "f", data); err != nil {
				t.Fatal(err)
			}
			r := NewReaderAt(ctx, b, "f", int64(len(data)))
			got, err := r.View(c.off, c.n)
			if c.eof != errors.Is(err, io.EOF) || (err != nil && !c.eof) {
				t.Fatalf("err = %v, want io.EOF: %v", err, c.eof)
			}
			if int64(len(got)) != c.want || !bytes.Equal(got, data[c.off:c.off+c.want]) {
				t.Fatalf("%d bytes, want %d of the object's", len(got), c.want)
			}
			if b.count() > c.maxGets {
				t.Fatalf("%d GETs, want at most %d", b.count(), c.maxGets)
			}
			if _, err := r.View(-1, 1); err == nil {
				t.Fatal("a negative offset was accepted")
			}
		})
	}
}

// TestFetchTail: the tail fetched in the background serves the footer
// reads that follow (one GET in all, however many read it at once), a
// failed fetch leaves the read to fetch it again (and report the error
// while the store fails), and a reader without a known size fetches
// nothing ahead.
func TestFetchTail(t *testing.T) {
	data := make([]byte, 300<<10)
	for i := range data {
		data[i] = byte(i * 7)
	}
	ctx := context.Background()
	size := int64(len(data))
	tailAt := size - DefaultMinRead
	read := func(r *ReaderAt, i int) error {
		off := size - 8 - int64(i)*1000
		p := make([]byte, 8)
		if _, err := r.ReadAt(p, off); err != nil {
			return err
		}
		if !bytes.Equal(p, data[off:off+8]) {
			return fmt.Errorf("bytes at %d differ", off)
		}
		return nil
	}
	setup := func(t *testing.T, size int64, fail bool) (*rangeLog, *ReaderAt) {
		b := &rangeLog{Mem: NewMem("t"), failAt: map[int64]bool{tailAt: fail}}
		if err := b.Put(ctx, "f", data); err != nil {
			t.Fatal(err)
		}
		r := NewReaderAt(ctx, b, "f", size)
		r.FetchTail()
		r.FetchTail() // once
		return b, r
	}
	t.Run("footer reads served by the tail, at once", func(t *testing.T) {
		b, r := setup(t, size, false)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() { defer wg.Done(); errs <- read(r, i) }()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n := b.count(); n != 1 {
			t.Fatalf("%d GETs, want 1", n)
		}
	})
	t.Run("failed fetch: the read fetches again", func(t *testing.T) {
		b, r := setup(t, size, true)
		if err := read(r, 0); err == nil {
			t.Fatal("a read while the store fails succeeded")
		}
		b.mu.Lock()
		b.failAt[tailAt] = false
		b.mu.Unlock()
		for i := range 4 {
			if err := read(r, i); err != nil {
				t.Fatal(err)
			}
		}
		if n := b.count(); n != 3 { // the tail, the failed read, the read that succeeded
			t.Fatalf("%d GETs, want 3", n)
		}
	})
	t.Run("size unknown: no fetch ahead", func(t *testing.T) {
		_, r := setup(t, -1, false)
		if r.tail.Load() != nil {
			t.Fatal("a reader of unknown size fetched its tail ahead")
		}
	})
}
