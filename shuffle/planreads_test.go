package shuffle

import (
	"slices"
	"testing"
)

// TestPlanReadsRampsUp: adjacent partitions of one data object merge into
// requests of at most 4 MiB first, then each at most twice the one before
// up to MaxRequestBytes; gaps, other objects and whole objects cut a
// request; a partition bigger than the cap is a request of its own.
func TestPlanReadsRampsUp(t *testing.T) {
	const mib = 1 << 20
	run := func(key string, sizes ...int64) []ObjectRef {
		var refs []ObjectRef
		off := int64(100) // past the object's header
		for i, n := range sizes {
			refs = append(refs, ObjectRef{Key: key, Part: i, Offset: off, Bytes: n})
			off += n
		}
		return refs
	}
	sizes := func(units []readUnit) []int64 {
		var out []int64
		for _, u := range units {
			out = append(out, u.n)
		}
		return out
	}
	ones := func(n int) []int64 { return slices.Repeat([]int64{mib}, n) }
	for _, c := range []struct {
		name   string
		refs   []ObjectRef
		maxReq int64
		want   []int64
	}{
		{"ramp", run("a", ones(40)...), 16 * mib, []int64{4 * mib, 8 * mib, 16 * mib, 12 * mib}},
		{"small cap", run("a", ones(5)...), 2 * mib, []int64{2 * mib, 2 * mib, mib}},
		{"one small read", run("a", 1000, 2000, 3000), 16 * mib, []int64{6000}},
		{"big partition alone", run("a", mib, 20*mib, mib), 16 * mib, []int64{mib, 20 * mib, mib}},
		{"two objects", append(run("a", ones(6)...), run("b", ones(6)...)...), 16 * mib, []int64{4 * mib, 2 * mib, 6 * mib}},
		{"gap", append(run("a", ones(2)...), ObjectRef{Key: "a", Part: 9, Offset: 100 + 5*mib, Bytes: mib}), 16 * mib, []int64{2 * mib, mib}},
		{"whole object between", append(append(run("a", ones(5)...), ObjectRef{Key: "w", Bytes: 7}), run("b", ones(3)...)...), 16 * mib, []int64{4 * mib, mib, 7, 3 * mib}},
	} {
		t.Run(c.name, func(t *testing.T) {
			units := planReads(c.refs, c.maxReq)
			if got := sizes(units); !slices.Equal(got, c.want) {
				t.Fatalf("requests of %v bytes, want %v", got, c.want)
			}
			var n int
			for _, u := range units {
				n += len(u.refs)
			}
			if n != len(c.refs) {
				t.Fatalf("%d refs planned, want %d", n, len(c.refs))
			}
		})
	}
}
