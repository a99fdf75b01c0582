package function

import (
	"testing"
)

// TestSpillLimitFor: the environment wins; otherwise the free space of the
// spill directory is divided among the tasks run at once.
func TestSpillLimitFor(t *testing.T) {
	dir := t.TempDir()
	one, err := SpillLimitFor(dir, 1)
	if err != nil || one <= 0 {
		t.Fatalf("free space limit %d, %v", one, err)
	}
	four, _ := SpillLimitFor(dir, 4)
	if four <= 0 || four > one/4+1 || four < one/4-(1<<20) {
		t.Fatalf("4 tasks get %d each of %d", four, one)
	}
	t.Setenv(SpillLimitEnv, "1048576")
	if n, err := SpillLimitFor(dir, 4); err != nil || n != 1<<20 {
		t.Fatalf("env limit: %d, %v", n, err)
	}
	t.Setenv(SpillLimitEnv, "lots")
	if _, err := SpillLimitFor(dir, 1); err == nil {
		t.Fatal("a bad SLUICE_SPILL_LIMIT was taken")
	}
}
