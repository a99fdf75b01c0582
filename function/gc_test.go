package function

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestTuneGC(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	beforeLimit := debug.SetMemoryLimit(-1)

	cases := []struct {
		name        string
		limit       int64
		wantPercent int
		wantLimit   int64
	}{
		{"known memory", 1 << 30, GCPercent, (1 << 30) / 10 * 9},
		{"unknown memory: unchanged", 0, before, beforeLimit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			restore := TuneGC(c.limit, nil)
			p := debug.SetGCPercent(-1)
			debug.SetGCPercent(p)
			l := debug.SetMemoryLimit(-1)
			restore()
			if p != c.wantPercent || l != c.wantLimit {
				t.Fatalf("GC percent %d, limit %d; want %d, %d", p, l, c.wantPercent, c.wantLimit)
			}
			p2 := debug.SetGCPercent(-1)
			debug.SetGCPercent(p2)
			if p2 != before || debug.SetMemoryLimit(-1) != beforeLimit {
				t.Fatalf("restore left percent %d", p2)
			}
		})
	}
	t.Run("user settings win", func(t *testing.T) {
		t.Setenv("GOGC", "150")
		t.Setenv("GOMEMLIMIT", "1GiB")
		restore := TuneGC(1<<30, func() int64 { return 1 << 40 })
		defer restore()
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		if p != before || debug.SetMemoryLimit(-1) != beforeLimit {
			t.Fatalf("TuneGC overrode GOGC/GOMEMLIMIT set by the user")
		}
	})
}

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name              string
		live, held, limit int64
		want              int
	}{
		{"nothing held", 100 * mib, 0, 0, GCPercent},
		{"unknown live heap", 0, 10 * mib, 0, GCPercent},
		{"held is a small part", 1000 * mib, 100 * mib, 0, GCPercent * 900 / 1000},
		{"held is most: headroom four times the rest", 400 * mib, 250 * mib, 0, GCPercent * 150 / 400},
		{"all held: the task floor", 512 * mib, 512 * mib, 0, GCPercent * 64 / 512},
		{"small live heap under the floor", 48 * mib, 40 * mib, 0, GCPercent},
		{"limit far above the goal", 100 * mib, 0, 4000 * mib, GCPercent},
		{"goal kept within 0.8 of the limit", 500 * mib, 0, 1000 * mib, 60},
		{"live heap past 0.8 of the limit: the least target", 900 * mib, 0, 1000 * mib, gcMinPercent},
		{"held and limit: the lower target", 400 * mib, 250 * mib, 1000 * mib, 100},
		{"held and limit: held decides", 400 * mib, 350 * mib, 1000 * mib, GCPercent * 64 / 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := gcPercentFor(c.live, c.held, c.limit); got != c.want {
				t.Fatalf("gcPercentFor(%d MiB, %d MiB, %d MiB) = %d, want %d", c.live/mib, c.held/mib, c.limit/mib, got, c.want)
			}
		})
	}
}

// TestTuneGCHeld checks that the growth target follows the held memory
// after collections, and that restore stops it.
func TestTuneGCHeld(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	percent := func() int {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p
	}
	// 128 MiB live and held, as a full file cache: the task floor rules,
	// so the target drops below GCPercent after the next collection.
	cache := make([]byte, 128<<20)
	defer runtime.KeepAlive(cache)
	restore := TuneGC(1<<30, func() int64 { return int64(len(cache)) })
	deadline := time.Now().Add(5 * time.Second)
	for percent() >= GCPercent && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if p := percent(); p >= GCPercent {
		restore()
		t.Fatalf("GC percent %d after collections with held memory, want below %d", p, GCPercent)
	}
	restore()
	if p := percent(); p != before {
		t.Fatalf("restore left percent %d, want %d", p, before)
	}
	for i := 0; i < 3; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if p := percent(); p != before {
		t.Fatalf("a stopped tuner set percent %d, want %d", p, before)
	}
}

func TestMemoryLimitLambda(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512")
	if got := MemoryLimit(); got != 512<<20 {
		t.Fatalf("MemoryLimit = %d, want 512 MiB", got)
	}
}
