package kernel

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestBloom: every inserted key is found (no false negatives), the false
// positive rate at 10 bits per key is near the split-block filter's 1%,
// filters merge by OR, and the bytes round-trip.
func TestBloom(t *testing.T) {
	mem := memory.DefaultAllocator
	ints := func(lo, n int) arrow.Array {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := lo; i < lo+n; i++ {
			b.Append(int64(i) * 7919)
		}
		return b.NewArray()
	}
	strs := func(lo, n int) arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for i := lo; i < lo+n; i++ {
			b.Append(fmt.Sprintf("key-%d", i))
		}
		return b.NewArray()
	}
	for _, tc := range []struct {
		name string
		make func(lo, n int) arrow.Array
	}{{"int64", ints}, {"string", strs}} {
		t.Run(tc.name, func(t *testing.T) {
			const keys = 40_000
			a, b := make(Bloom, 0), make(Bloom, 0)
			var err error
			if a, err = NewBloom(64 << 10); err != nil { // 512 Ki bits: 13 bits per key
				t.Fatal(err)
			}
			if b, err = NewBloom(64 << 10); err != nil {
				t.Fatal(err)
			}
			in1, in2, out := tc.make(0, keys/2), tc.make(keys/2, keys/2), tc.make(keys, 100_000)
			defer in1.Release()
			defer in2.Release()
			defer out.Release()
			insert := func(f Bloom, col arrow.Array) {
				h := make([]uint64, col.Len())
				if err := HashKeys(col, h); err != nil {
					t.Fatal(err)
				}
				for _, v := range h {
					f.Insert(v)
				}
			}
			insert(a, in1)
			insert(b, in2)
			if err := a.Or(b); err != nil {
				t.Fatal(err)
			}
			c, err := BloomFromBytes(a.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			found := func(col arrow.Array) int {
				h := make([]uint64, col.Len())
				if err := HashKeys(col, h); err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, v := range h {
					if c.MayContain(v) {
						n++
					}
				}
				return n
			}
			if n := found(in1) + found(in2); n != keys {
				t.Errorf("%d of %d inserted keys found", n, keys)
			}
			if fp := float64(found(out)) / 100_000; fp > 0.02 {
				t.Errorf("false positive rate %.4f at 13 bits per key", fp)
			}
		})
	}
	if _, err := NewBloom(1000); err == nil {
		t.Error("a filter of 1000 bytes was made")
	}
	small, _ := NewBloom(32)
	big, _ := NewBloom(64)
	if err := small.Or(big); err == nil {
		t.Error("filters of different sizes merged")
	}
}

// TestBloomShrink: folding keeps every key, and Shrink stops at the size
// whose fill passes the bound.
func TestBloomShrink(t *testing.T) {
	f, _ := NewBloom(512 << 10)
	var hs []uint64
	for i := uint64(0); i < 10_000; i++ {
		h := Mix(i*0x9E3779B97F4A7C15 + 1)
		hs = append(hs, h)
		f.Insert(h)
	}
	g := f.Shrink(0.5)
	if len(g) >= len(f) || g.Fill() > 0.5 || g.Fold().Fill() <= 0.5 && len(g) > 8 {
		t.Fatalf("shrunk to %d bytes, fill %.2f (folded once more: %.2f)", 4*len(g), g.Fill(), g.Fold().Fill())
	}
	for _, h := range hs {
		if !g.MayContain(h) {
			t.Fatal("a key was lost in folding")
		}
	}
	t.Logf("10,000 keys: %d KiB, fill %.2f", 4*len(g)>>10, g.Fill())
}

// mayContainBranchy is MayContain as first written, a branch per word:
// the reference of TestBloomMayContainBranchFree and the "before" of
// BenchmarkBloomMayContain.
func (f Bloom) mayContainBranchy(h uint64) bool {
	b, key := f.block(h), uint32(h)
	for i, s := range bloomSalt {
		if f[b+i]&(1<<((key*s)>>27)) == 0 {
			return false
		}
	}
	return true
}

// bloomHalfFull is a filter of size bytes with random keys inserted until
// about half its bits are set (a shrunk filter's fill).
func bloomHalfFull(tb testing.TB, rng *rand.Rand, size int) Bloom {
	f, err := NewBloom(size)
	if err != nil {
		tb.Fatal(err)
	}
	for f.Fill() < 0.5 {
		for i := 0; i < size/8; i++ {
			f.Insert(rng.Uint64())
		}
	}
	return f
}

// The branch-free MayContain answers as the branchy one for random hashes
// over filters of several sizes and fills.
func TestBloomMayContainBranchFree(t *testing.T) {
	rng := rand.New(rand.NewSource(24))
	for _, size := range []int{32, 256, 4096, 64 << 10} {
		f := bloomHalfFull(t, rng, size)
		var keys []uint64
		for i := 0; i < 1000; i++ {
			k := rng.Uint64()
			keys = append(keys, k)
			if i%2 == 0 {
				f.Insert(k)
			}
		}
		for i := 0; i < 20000; i++ {
			h := rng.Uint64()
			if i%4 == 0 {
				h = keys[rng.Intn(len(keys))]
			}
			if got, want := f.MayContain(h), f.mayContainBranchy(h); got != want {
				t.Fatalf("size %d: MayContain(%#x) = %v, branchy %v", size, h, got, want)
			}
		}
		for i, k := range keys {
			if i%2 == 0 && !f.MayContain(k) {
				t.Fatalf("size %d: inserted key %#x not found", size, k)
			}
		}
	}
}

// BenchmarkBloomMayContain probes a half-full 64 KiB filter with random
// hashes (most absent), branchy and branch-free in the same run.
func BenchmarkBloomMayContain(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	f := bloomHalfFull(b, rng, 64<<10)
	hs := make([]uint64, 1<<16)
	for i := range hs {
		hs[i] = rng.Uint64()
	}
	for _, tc := range []struct {
		name string
		fn   func(uint64) bool
	}{{"branchy", f.mayContainBranchy}, {"branchfree", f.MayContain}} {
		b.Run(tc.name, func(b *testing.B) {
			n := 0
			for i := 0; i < b.N; i++ {
				for _, h := range hs {
					if tc.fn(h) {
						n++
					}
				}
			}
			b.ReportMetric(float64(len(hs))*float64(b.N)/b.Elapsed().Seconds(), "probes/s")
			_ = n
		})
	}
}
