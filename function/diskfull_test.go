package function

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// TestDiskErrorsAreNotOutages: an error of the function's own disk (a
// spill file) is never taken for an object-store outage (its errno passes
// the transport-error test), and a full disk is the user's memory limit,
// not retried (issue 30: a full spill disk was retried as an object-store
// outage for minutes).
func TestDiskErrorsAreNotOutages(t *testing.T) {
	full := &fs.PathError{Op: "write", Path: "/tmp/sluice-spill-x/spill-1.arrows", Err: syscall.ENOSPC}
	cases := []struct {
		name   string
		err    error
		outage string
		kind   ErrorKind
		code   string
	}{
		{"disk full, wrapped", fmt.Errorf("exec: sort: write spill file: %w", full), "", ErrTransient, ""},
		{"disk full as the spill reports it", &exec.MemoryLimitError{Operator: "sort", Limit: 1, Reason: "spill disk full: " + full.Error()}, "", ErrUser, plan.CodeMemoryLimit},
		{"quota", &fs.PathError{Op: "write", Path: "x", Err: syscall.EDQUOT}, "", ErrTransient, ""},
		{"io error", &fs.PathError{Op: "read", Path: "x", Err: syscall.EIO}, "", ErrTransient, ""},
		{"connection refused", fmt.Errorf("objstore: GET: %w", syscall.ECONNREFUSED), "object store", ErrTransient, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := outageOf(c.err); got != c.outage {
				t.Errorf("outageOf = %q, want %q", got, c.outage)
			}
			if got := Classify(c.err); got != c.kind {
				t.Errorf("Classify = %v, want %v", got, c.kind)
			}
			if got := plan.CodeOf(c.err); got != c.code {
				t.Errorf("code %q, want %q", got, c.code)
			}
		})
	}
	if !exec.DiskFull(fmt.Errorf("x: %w", full)) || exec.DiskFull(errors.New("no space left on device")) {
		t.Error("DiskFull goes by the errno, not the text")
	}
	if !strings.Contains((&exec.MemoryLimitError{Operator: "sort", Limit: 1, Reason: "spill disk full"}).Error(), "spill disk full") {
		t.Error("the reason is not in the message")
	}
}
