package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/coordinator"
)

// TestProgressWaiting: what a job waits for is shown, on the terminal's
// progress line after the counts and, when not on a terminal, as one
// line per change (none while it does not change or only its count
// goes on, none for no wait).
func TestProgressWaiting(t *testing.T) {
	held := "stage 2 held: waiting for a runtime filter from build stage 1 (up to 10s)"
	stall := "waiting: object store not answering for 12s"
	running := func(w string) *coordinator.JobStatus {
		return &coordinator.JobStatus{ID: "J", State: coordinator.StateRunning, Waiting: w,
			Stages: []coordinator.StageStatus{{ID: 0}, {ID: 1}}}
	}
	var buf bytes.Buffer
	p := newProgress(&buf)
	for _, w := range []string{"", held, held, stall, strings.Replace(stall, "12s", "13s", 1), "", ""} {
		p.update(running(w))
	}
	want := "job J: " + held + "\njob J: " + stall + "\n"
	if buf.String() != want {
		t.Errorf("piped progress:\n%q\nwant\n%q", buf.String(), want)
	}
	for _, c := range []struct{ waiting, want string }{
		{"", "running  stages 0/2  tasks 0/0  rows 0  shuffled 0 B  1.5s"},
		{stall, "running  stages 0/2  tasks 0/0  rows 0  shuffled 0 B  1.5s  " + stall},
		{held, "running  stages 0/2  tasks 0/0  rows 0  shuffled 0 B  1.5s  " + held},
	} {
		if got := progressLine(running(c.waiting), 0, 2, 0, 0, 0, 0, 1500*time.Millisecond); got != c.want {
			t.Errorf("progress line %q, want %q", got, c.want)
		}
		if c.waiting != "" && !strings.Contains(progressLine(running(c.waiting), 0, 2, 0, 0, 0, 0, 0), c.waiting) {
			t.Errorf("the line hides %q", c.waiting)
		}
	}
}
