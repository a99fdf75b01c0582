package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestProfileFlags: --cpuprofile and --memprofile each write a profile
// (gzip-compressed protobuf, as go tool pprof reads it) when the command
// ends, an ending in error included.
func TestProfileFlags(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	// explain without --coordinator fails: the profiles are written anyway
	_ = newApp().Run([]string{"sluice", "--cpuprofile", cpu, "--memprofile", mem, "explain", "select 1"})
	for _, p := range []string{cpu, mem} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			t.Fatalf("%s: %d bytes, not a gzip-compressed profile", filepath.Base(p), len(b))
		}
	}
}
