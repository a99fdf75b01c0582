package coordinator

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/sluicedb/sluice/planner/adaptive"
)

// admit picks, among the stages ready to start (works), those the loop
// launches now, and counts their tasks. The policies are the re-planner's
// (adaptive.State.FilterHolds, adaptive.State.DeferProbe); the clock is
// the loop's: held records since when each stage held for a runtime
// filter could have started, and a hold ends after RuntimeFilterWait.
// What waited, and for how long, is noted for the next round record.
func (c *Coordinator) admit(run *jobRun, works map[int][]taskWork, running map[int]context.CancelFunc,
	stageBytes map[int]int64, resumed []int, held map[int]time.Time) (launch map[int][]taskWork, announced int) {
	l := adaptive.Launch{Running: map[int]bool{}, Starting: map[int]bool{}, Bytes: stageBytes, Resumed: resumed}
	for id := range running {
		l.Running[id] = true
	}
	for id := range works {
		l.Starting[id] = true
	}
	launch = map[int][]taskWork{}
	holds := c.filterHolds(run, l)
	for id, work := range works {
		if h, ok := holds[id]; ok {
			since, seen := held[id]
			if !seen {
				since, held[id] = time.Now(), time.Now()
				c.log.Info("probe stage held for a runtime filter", "job", run.id, "stage", id, "build", h.Build, "reason", h.Reason)
			}
			if waited := time.Since(since); waited < c.cfg.RuntimeFilterWait {
				continue
			}
			run.scheduling = append(run.scheduling, fmt.Sprintf("stage %d started unfiltered after waiting %s for build stage %d (runtime filter wait timeout %s)",
				id, time.Since(since).Round(time.Millisecond), h.Build, c.cfg.RuntimeFilterWait))
			c.log.Info("runtime filter wait timed out", "job", run.id, "stage", id, "build", h.Build)
		} else if since, seen := held[id]; seen {
			run.scheduling = append(run.scheduling, fmt.Sprintf("stage %d started after waiting %s for its build side (%s)",
				id, time.Since(since).Round(time.Millisecond), run.holdWhy[id]))
		}
		delete(held, id)
		if run.graph.Adaptive() && !slices.Contains(resumed, id) && run.state.DeferProbe(id, l, c.cfg.DeferProbeRatio) {
			continue
		}
		launch[id] = work
		announced += len(work)
	}
	return launch, announced
}

// filterHolds returns the stages among those starting that wait for a
// runtime filter (adaptive.State.FilterHolds), in an adaptive job with
// the wait on, and notes each new hold for the next round record.
func (c *Coordinator) filterHolds(run *jobRun, l adaptive.Launch) map[int]adaptive.FilterHold {
	if !run.graph.Adaptive() || c.cfg.RuntimeFilterWait <= 0 || c.cfg.RuntimeFilterRatio <= 0 {
		return nil
	}
	holds := run.state.FilterHolds(l, adaptive.HoldPolicy{DeferProbeRatio: c.cfg.DeferProbeRatio,
		FilterRatio: c.cfg.RuntimeFilterRatio, FilterBuildBytes: c.cfg.RuntimeFilterBuildBytes})
	if run.holdWhy == nil {
		run.holdWhy = map[int]string{}
	}
	for a, h := range holds {
		if _, noted := run.holdWhy[a]; !noted {
			run.scheduling = append(run.scheduling, fmt.Sprintf("stage %d held for %s (at most %s)", a, h.Reason, c.cfg.RuntimeFilterWait))
		}
		run.holdWhy[a] = h.Reason
	}
	return holds
}

// holdsEnd returns a channel that fires when the earliest hold ends (nil:
// nothing is held).
func (c *Coordinator) holdsEnd(held map[int]time.Time) <-chan time.Time {
	if len(held) == 0 {
		return nil
	}
	first := time.Duration(math.MaxInt64)
	for _, since := range held {
		first = min(first, time.Until(since.Add(c.cfg.RuntimeFilterWait)))
	}
	return time.After(max(first, 0))
}
