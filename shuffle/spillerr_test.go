package shuffle

import (
	"io/fs"
	"syscall"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestSpillErrorDiskFull: the writer's spill file running out of disk is
// the task's memory limit (SL104, not retried); other disk errors keep no
// code.
func TestSpillErrorDiskFull(t *testing.T) {
	for _, c := range []struct {
		errno syscall.Errno
		code  string
	}{
		{syscall.ENOSPC, plan.CodeMemoryLimit},
		{syscall.EDQUOT, plan.CodeMemoryLimit},
		{syscall.EIO, ""},
	} {
		err := spillError("spilling partition 3", &fs.PathError{Op: "write", Path: "/tmp/s.spill", Err: c.errno})
		if got := plan.CodeOf(err); got != c.code {
			t.Errorf("%v: code %q, want %q (%v)", c.errno, got, c.code, err)
		}
	}
}
