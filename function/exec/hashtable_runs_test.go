package exec

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestGroupTableRunsOfKeys: keys that come in runs (a table clustered by
// them) take the row before's group without a probe; with hashes forced
// to collide, a run's next key with the same hash but another value must
// still get its own group (insert) or its own match (lookup).
func TestGroupTableRunsOfKeys(t *testing.T) {
	defer func(m uint64) { testHashMask = m }(testHashMask)
	// Runs of 1-4 rows of keys 0, 1, 2...; NULL runs too.
	var keys []int64
	var valid []bool
	for k := int64(0); len(keys) < 3000; k++ {
		for range int(k%4) + 1 {
			keys = append(keys, k)
			valid = append(valid, k%17 != 5)
		}
	}
	mk := func(lo, hi int) arrow.Array {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues(keys[lo:hi], valid[lo:hi])
		return b.NewArray()
	}
	for _, mask := range []uint64{0, 1, 0xff} { // 0: no collisions forced; 1: two hash values
		t.Run(fmt.Sprintf("mask=%#x", mask), func(t *testing.T) {
			testHashMask = mask
			tab := newGroupTable([]kind{kInt64})
			group := map[string]uint32{} // key (or "null") -> group
			name := func(i int) string {
				if !valid[i] {
					return "null"
				}
				return fmt.Sprint(keys[i])
			}
			// Inserted in batches that cut runs in the middle.
			for lo := 0; lo < len(keys); lo += 333 {
				hi := min(lo+333, len(keys))
				a := mk(lo, hi)
				gids, err := tab.insert([]arrow.Array{a}, hi-lo)
				if err != nil {
					t.Fatal(err)
				}
				for j, g := range gids {
					k := name(lo + j)
					if want, ok := group[k]; ok && want != g {
						t.Fatalf("row %d (key %s): group %d, earlier rows of the key %d", lo+j, k, g, want)
					}
					group[k] = g
				}
				a.Release()
			}
			seen := map[uint32]string{}
			for k, g := range group {
				if other, ok := seen[g]; ok {
					t.Fatalf("keys %s and %s share group %d", k, other, g)
				}
				seen[g] = k
			}
			// Lookup of every key, then of keys never inserted, in runs.
			a := mk(0, len(keys))
			gids, err := tab.lookup([]arrow.Array{a}, len(keys))
			if err != nil {
				t.Fatal(err)
			}
			for i, g := range gids {
				if want := group[name(i)]; g != want {
					t.Fatalf("lookup row %d (key %s): group %d, want %d", i, name(i), g, want)
				}
			}
			a.Release()
			b := array.NewInt64Builder(memory.DefaultAllocator)
			for _, k := range []int64{5000, 5000, 5000, 1, 1, 5001, 5001, 2} {
				b.Append(k)
			}
			miss := b.NewArray()
			b.Release()
			gids, err = tab.lookup([]arrow.Array{miss}, miss.Len())
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []uint32{noGroup, noGroup, noGroup, group["1"], group["1"], noGroup, noGroup, group["2"]} {
				if gids[i] != want {
					t.Fatalf("lookup of absent and present keys, row %d: group %d, want %d", i, gids[i], want)
				}
			}
			miss.Release()
		})
	}
}
