package coordinator

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sluicedb/sluice/planner/adaptive"
)

// admit picks, among the stages ready to start (works), those the loop
// launches now, and counts their tasks. The decision is the re-planner's
// (adaptive.State.Admit: runtime-filter holds, probe deferral, the hold
// clock in holds); the loop gathers its inputs, logs the holds and notes
// what waited, and for how long, for the next round record.
func (c *Coordinator) admit(run *jobRun, works map[int][]taskWork, running map[int]context.CancelFunc,
	stageBytes map[int]int64, resumed []int, holds *adaptive.Holds) (launch map[int][]taskWork, announced int) {
	l := adaptive.Launch{Running: map[int]bool{}, Starting: map[int]bool{}, Bytes: stageBytes, Resumed: resumed}
	for id := range running {
		l.Running[id] = true
	}
	for id := range works {
		l.Starting[id] = true
	}
	a := run.state.Admit(l, c.admitPolicy(run), holds, time.Now())
	for id, h := range a.Held {
		c.log.Info("probe stage held for a runtime filter", "job", run.id, "stage", id, "build", h.Build, "reason", h.Reason)
	}
	for id, h := range a.TimedOut {
		c.log.Info("runtime filter wait timed out", "job", run.id, "stage", id, "build", h.Build)
	}
	run.scheduling = append(run.scheduling, a.Notes...)
	c.showHeld(run, holds)
	launch = map[int][]taskWork{}
	for _, id := range a.Start {
		launch[id] = works[id]
		announced += len(works[id])
	}
	return launch, announced
}

// heldFormat is one held stage in the job record's "held" field;
// heldStage finds the stages it names (the web UI marks their nodes).
const heldFormat = "stage %d held: waiting for a %s (up to %s)"

var heldStage = regexp.MustCompile(`\bstage (\d+) held: waiting\b`)

// showHeld records on the job which stages wait for a runtime filter
// ("held"), so that clients show the wait while it lasts; written only
// when it changes, best effort.
func (c *Coordinator) showHeld(run *jobRun, holds *adaptive.Holds) {
	held := holds.Holding()
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(held)) {
		parts = append(parts, fmt.Sprintf(heldFormat, id, held[id], c.cfg.RuntimeFilterWait))
	}
	msg := strings.Join(parts, "; ")
	if msg == run.held {
		return
	}
	run.held = msg
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), 5*time.Second)
	defer cancel()
	if msg == "" {
		_ = c.store.rdb.HDel(ctx, kJob(run.id), "held").Err()
		return
	}
	_ = c.store.rdb.HSet(ctx, kJob(run.id), "held", msg).Err()
}

// admitPolicy returns the scheduling knobs of run's job.
func (c *Coordinator) admitPolicy(run *jobRun) adaptive.AdmitPolicy {
	return adaptive.AdmitPolicy{Adaptive: run.graph.Adaptive(), Wait: c.cfg.RuntimeFilterWait,
		HoldPolicy: adaptive.HoldPolicy{DeferProbeRatio: c.cfg.DeferProbeRatio,
			FilterRatio: c.cfg.RuntimeFilterRatio, FilterBuildBytes: c.cfg.RuntimeFilterBuildBytes}}
}

// holdsEnd returns a channel that fires when the earliest hold ends (nil:
// nothing is held).
func (c *Coordinator) holdsEnd(holds *adaptive.Holds) <-chan time.Time {
	end, ok := holds.Next(c.cfg.RuntimeFilterWait)
	if !ok {
		return nil
	}
	return time.After(max(time.Until(end), 0))
}
