package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestProfileFlags: --cpuprofile and --memprofile each write a profile
// (gzip-compressed protobuf, as go tool pprof reads it) when the command
// ends, an ending in error included, and a heap profile that cannot be
// written does not lose the CPU profile.
func TestProfileFlags(t *testing.T) {
	for _, c := range []struct {
		name   string
		memDir string // under the test's directory; a missing one fails
		memOK  bool
	}{
		{name: "both written", memDir: ".", memOK: true},
		{name: "heap profile fails, CPU profile kept", memDir: "missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, c.memDir, "mem.prof")
			// explain without --coordinator fails: the profiles are written anyway
			_ = newApp().Run([]string{"sluice", "--cpuprofile", cpu, "--memprofile", mem, "explain", "select 1"})
			want := []string{cpu}
			if c.memOK {
				want = append(want, mem)
			} else if _, err := os.Stat(mem); err == nil {
				t.Fatalf("%s written in a missing directory", mem)
			}
			for _, p := range want {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
					t.Fatalf("%s: %d bytes, not a gzip-compressed profile", filepath.Base(p), len(b))
				}
			}
		})
	}
}
