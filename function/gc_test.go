package function

import (
	"runtime/debug"
	"testing"
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
			restore := TuneGC(c.limit)
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
		restore := TuneGC(1 << 30)
		defer restore()
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		if p != before || debug.SetMemoryLimit(-1) != beforeLimit {
			t.Fatalf("TuneGC overrode GOGC/GOMEMLIMIT set by the user")
		}
	})
}

func TestMemoryLimitLambda(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512")
	if got := MemoryLimit(); got != 512<<20 {
		t.Fatalf("MemoryLimit = %d, want 512 MiB", got)
	}
}
