package main

import (
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/coordinator/sqlsession"
)

// progress shows stages and tasks done and bytes shuffled on a terminal;
// on anything else it stays silent so piped output stays clean.
// What a job waits for (JobStatus.Waiting: an outage, stages held for a
// runtime filter, an object store that does not answer) is shown either
// way: on the progress line, or one line per change when not on a
// terminal.
type progress struct {
	bar     *progressbar.ProgressBar
	w       io.Writer
	waiting string // JobStatus.Waiting last printed, its numbers zeroed
	start   time.Time
}

var digits = regexp.MustCompile(`[0-9]+`)

func newProgress(w io.Writer) *progress {
	if !isTerminal(w) {
		return &progress{w: w}
	}
	bar := progressbar.NewOptions(-1, progressbar.OptionSetWriter(w), progressbar.OptionSpinnerType(14),
		progressbar.OptionSetDescription("planning"), progressbar.OptionClearOnFinish())
	return &progress{bar: bar, w: w, start: time.Now()}
}

func (p *progress) update(js *coordinator.JobStatus) {
	if w := digits.ReplaceAllString(js.Waiting, "0"); w != p.waiting {
		// Piped: a line when the wait begins or changes kind, not one
		// per second of a count ("not answering for 12s").
		p.waiting = w
		if p.bar == nil && js.Waiting != "" && p.w != nil {
			fmt.Fprintf(p.w, "job %s: %s\n", js.ID, js.Waiting)
		}
	}
	if p.bar == nil {
		return
	}
	var stages, done, tasks, tasksDone int
	var bytes, rows int64
	for _, s := range js.Stages {
		rows += s.Rows
		stages++
		if s.State == coordinator.StageDone || s.State == coordinator.StageSkipped {
			done++
		}
		tasks += s.Tasks
		tasksDone += s.TasksDone
		bytes += s.Bytes
	}
	p.bar.Describe(progressLine(js, done, stages, tasksDone, tasks, rows, bytes, time.Since(p.start)))
	_ = p.bar.Add(1)
}

// progressLine is the terminal's progress line: the counts, then what the
// job waits for, if anything (an outage, stages held for a runtime
// filter, an object store that does not answer), so a wait is never a
// silent "running  stages 0/2".
func progressLine(js *coordinator.JobStatus, done, stages, tasksDone, tasks int, rows, bytes int64, took time.Duration) string {
	line := fmt.Sprintf("%s  stages %d/%d  tasks %d/%d  rows %s  shuffled %s  %.1fs", js.State, done, stages, tasksDone, tasks,
		humanize.Comma(rows), humanize.IBytes(uint64(bytes)), took.Seconds())
	if js.Waiting != "" {
		line += "  " + js.Waiting
	}
	return line
}

func (p *progress) done() {
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
	}
}

// printStats prints what a job did.
func printStats(w io.Writer, js *coordinator.JobStatus) {
	fmt.Fprintf(w, "job %s: %s (adaptive=%v)\n", js.ID, js.State, js.Adaptive)
	if js.Waiting != "" {
		fmt.Fprintf(w, "  %s\n", js.Waiting)
	}
	fmt.Fprintf(w, "  %-6s %-8s %-22s %6s %8s %12s %12s %10s %8s\n", "stage", "state", "output", "tasks", "invoked", "rows in", "rows out", "shuffled", "seconds")
	var invoked int
	var bytes, rows int64
	for _, s := range js.Stages {
		rows += s.Rows
		fmt.Fprintf(w, "  %-6d %-8s %-22s %6d %8d %12d %12d %10s %8.3f\n", s.ID, s.State, s.Output, s.Tasks, s.Invoked,
			s.InputRows, s.Rows, humanize.IBytes(uint64(s.Bytes)), s.Seconds)
		if s.Reason != "" {
			fmt.Fprintf(w, "         (%s)\n", s.Reason)
		}
		invoked += s.Invoked
		bytes += s.Bytes
	}
	fmt.Fprintf(w, "  functions invoked: %d, bytes shuffled: %s\n", invoked, humanize.IBytes(uint64(bytes)))
	printPhases(w, js)
	printMemory(w, js)
	if c := js.Cost; c != nil {
		s := c.S3
		fmt.Fprintf(w, "  S3 requests: GET %d, PUT %d, LIST %d, DELETE %d, HEAD %d, other %d; read %s, written %s\n",
			s.Get, s.Put, s.List, s.Delete, s.Head, s.Other, humanize.IBytes(uint64(s.BytesRead)), humanize.IBytes(uint64(s.BytesWritten)))
		fmt.Fprintf(w, "  functions: %d invocations, %.2f function-seconds, %.3f GB-seconds\n", c.Invocations, c.FunctionSeconds, c.GBSeconds)
		fmt.Fprintf(w, "  estimated cost: $%.6f (S3 $%.6f, Lambda $%.6f)\n", c.Dollars, c.S3Dollars, c.LambdaDollars)
	}
	sqlsession.WriteRoundNotes(w, js, "  ")
}

// printMemory prints the task memory line of --stats: the most operator
// memory one task held (and its stage) and what the tasks spilled to disk.
func printMemory(w io.Writer, js *coordinator.JobStatus) {
	var peak, spilled, files int64
	peakStage := -1
	for _, s := range js.Stages {
		if s.PeakMemoryBytes > peak {
			peak, peakStage = s.PeakMemoryBytes, s.ID
		}
		spilled += s.SpillBytes
		files += s.SpillFiles
	}
	if peakStage < 0 {
		return
	}
	fmt.Fprintf(w, "  task memory: peak %s (stage %d), spilled %s in %d files\n",
		humanize.IBytes(uint64(peak)), peakStage, humanize.IBytes(uint64(spilled)), files)
}
