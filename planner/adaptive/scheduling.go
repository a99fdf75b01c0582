package adaptive

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/sluicedb/sluice/planner/plan"
)

// The scheduling policies below decide whether a stage that is ready to
// run should wait a little, so that the re-planner sees what it needs
// first. They rewrite nothing: the driver asks Admit each time it starts
// stages, passing the time, and starts what Admit returns.

// Launch is the driver's view when it starts stages: the stages with
// tasks in flight, those ready to start now, the input bytes of both, and
// the stages resumed from another coordinator (which never wait).
type Launch struct {
	Running  map[int]bool
	Starting map[int]bool
	Bytes    map[int]int64
	Resumed  []int
}

func (l Launch) active(id int) (running, starting bool) { return l.Running[id], l.Starting[id] }

// HoldPolicy holds the scheduling knobs (the coordinator's Config).
type HoldPolicy struct {
	// DeferProbeRatio: DeferProbe's ratio (0: never defer).
	DeferProbeRatio int64
	// FilterRatio and FilterBuildBytes: a probe scan waits for a runtime
	// filter when it reads at least FilterRatio times its build side's
	// input, and the build side reads at most FilterBuildBytes (FilterRatio
	// 0: never waits).
	FilterRatio      int64
	FilterBuildBytes int64
}

// DeferProbe reports whether stage a should wait: it is the probe side of
// a partitioned join whose build side b is running (or starting now) and
// is at most 1/ratio of a's input. Waiting for b lets the re-planner see
// b's real size and broadcast it into a (select-join) before a shuffles
// anything; b being much smaller, the wait is short. (The driver never
// defers a resumed stage; a build side's being resumed is not weighed.)
func (s *State) DeferProbe(a int, l Launch, ratio int64) bool {
	if ratio <= 0 {
		return false
	}
	deferIt := false
	for _, st := range s.Graph.Stages {
		if !s.Pending(st.ID) {
			continue
		}
		plan.Walk(st.Root, func(n *plan.Node) {
			if deferIt || n.Kind != plan.KindHashJoin || n.Join == nil || len(n.Inputs) != 2 {
				return
			}
			p, b := n.Inputs[0], n.Inputs[1]
			if p.Kind != plan.KindExchange || b.Kind != plan.KindExchange || p.Stage != a || p.Whole || b.Whole {
				return
			}
			if !n.Join.Type.PerProbeRow() {
				return
			}
			// Only a hash-partitioned build side can be broadcast into the
			// probe stage, and only into a stage that this join alone reads
			// (select-join's conditions): otherwise waiting gains nothing.
			// (TPC-H Q3's orders scan waited for the customer scan, whose
			// output the planner had already made a broadcast.)
			if bs := s.Graph.Stage(b.Stage); bs == nil || bs.Output.Kind != plan.PartitionHash || len(s.Graph.Consumers(a)) != 1 {
				return
			}
			bRunning, bStarting := l.active(b.Stage)
			if _, done := s.Done[b.Stage]; done || !(bRunning || bStarting) {
				return
			}
			if l.Bytes[b.Stage]*ratio <= l.Bytes[a] {
				deferIt = true
			}
		})
	}
	return deferIt
}

// FilterHold is why a probe stage waits: the build stage whose runtime
// filter would prune its scan.
type FilterHold struct {
	Build  int
	Reason string
}

// FilterHolds returns the stages among those starting that should wait
// for a runtime filter: the scan of stage a feeds the probe side of a
// join whose build stage b the runtime-filter rule asked for a key
// summary (plan.Stage.Summarize), b is running or starts now, and the
// estimates say the wait is worth it: a reads at least p.FilterRatio
// times b's input, and b's input is at most p.FilterBuildBytes. A build
// stage the planner cut for the filter (plan.Stage.FilterBuild) holds a
// also while it waits for its inputs, when they all run or start now and
// read at most p.FilterBuildBytes: the planner's estimates already said
// it is selective, and its input is no measure of its output.
// Otherwise both run at once and the filter applies only if a has not
// started when b is done. A resumed stage never waits.
func (s *State) FilterHolds(l Launch, p HoldPolicy) map[int]FilterHold {
	if p.FilterRatio <= 0 {
		return nil
	}
	holds := map[int]FilterHold{}
	for _, e := range FilterEdges(s.Graph) {
		a, b := e.Probe, e.Build
		if !l.Starting[a] || slices.Contains(l.Resumed, a) {
			continue
		}
		if _, h := holds[a]; h {
			continue
		}
		if _, done := s.Done[b]; done {
			continue
		}
		if e.onExchange() && !s.exchangeTakes(e) {
			continue // the rows it reads come filtered, or the stages it reads take the filter
		}
		if filteredFrom(s.Graph, e.records(), e.ScanColumn, b) {
			// A farther source of the key (buildSources) filtered the
			// scan already: b's keys may be fewer still, but waiting for
			// them costs the wall time of b (TPC-H Q17's subquery scan,
			// filtered by the part scan, would wait for the outer
			// lineitem scan's join with it, for the same 206 parts).
			continue
		}
		if bs := s.Graph.Stage(b); bs == nil || !slices.Contains(bs.Summarize, e.BuildColumn) {
			continue // the rule did not ask b for a summary: no filter will come
		}
		// A stage reading shuffles that the planner's selective build
		// side filters (Q18's join of lineitem and orders, and the
		// HAVING stage's keys) waits however much b reads: its inputs are
		// written already, so the wait (at most the hold's timeout) costs
		// no scan, and the filtered join saves shuffling them on.
		// Any other exchange waits for nothing: it takes only a set of
		// keys (RuntimeFilter), which nothing but the planner's
		// estimates promise.
		shuffled := e.onExchange()
		if shuffled && !s.Graph.Stage(b).FilterBuild {
			continue
		}
		bRunning, bStarting := l.active(b)
		if !bRunning && !bStarting {
			// b waits for its own inputs: holding a would wait on them
			// too, unless the planner cut b for this filter and its inputs
			// run now (none waits on a).
			if bb, ok := s.filterBuildComing(b, a, l); ok && (bb <= p.FilterBuildBytes || shuffled) {
				holds[a] = FilterHold{Build: b, Reason: fmt.Sprintf("runtime filter from build stage %d (a selective build side cut for it; its inputs read %d bytes)", b, bb)}
			}
			continue
		}
		if bStarting && !bRunning && s.DeferProbe(b, l, p.DeferProbeRatio) {
			continue // b itself waits: it would not run while a is held
		}
		pb, bb := l.Bytes[a], l.Bytes[b]
		if bb > p.FilterBuildBytes && !shuffled {
			continue
		}
		if bs := s.Graph.Stage(b); bs.FilterBuild {
			// The planner's estimates called it selective; its input
			// is no measure of its output.
			holds[a] = FilterHold{Build: b, Reason: fmt.Sprintf("runtime filter from build stage %d (a selective build side cut for it; it reads %d bytes)", b, bb)}
			continue
		}
		if bb*p.FilterRatio > pb {
			continue
		}
		holds[a] = FilterHold{Build: b, Reason: fmt.Sprintf("runtime filter from build stage %d: probe reads %d bytes, build %d (>= %dx)", b, pb, bb, p.FilterRatio)}
	}
	// A build side held itself (a chain of filters) does not run: its
	// probe side does not wait for it.
	for changed := true; changed; {
		changed = false
		for a, h := range holds {
			if _, bh := holds[h.Build]; bh && !l.Running[h.Build] {
				delete(holds, a)
				changed = true
			}
		}
	}
	return holds
}

// filterBuildComing reports whether build stage b, pending and not
// starting, is a build side the planner cut for a runtime filter
// (plan.Stage.FilterBuild) whose inputs are each done, running or
// starting now, none of them a (so b will run without a), and returns
// the bytes its running and starting inputs read.
func (s *State) filterBuildComing(b, a int, l Launch) (int64, bool) {
	bs := s.Graph.Stage(b)
	if bs == nil || !bs.FilterBuild || !s.Pending(b) || len(bs.Inputs) == 0 {
		return 0, false
	}
	var bytes int64
	for _, in := range bs.Inputs {
		if in == a {
			return 0, false
		}
		if _, done := s.Done[in]; done {
			continue
		}
		r, st := l.active(in)
		if !r && !st {
			return 0, false
		}
		bytes += l.Bytes[in]
	}
	return bytes, true
}

// Ready returns the stages not done or skipped whose inputs all are.
func (s *State) Ready() []int {
	var out []int
	for _, st := range s.Graph.Stages {
		if !s.Pending(st.ID) {
			continue
		}
		ok := true
		for _, in := range st.Inputs {
			if _, done := s.Done[in]; !done && !s.Skipped(in) {
				ok = false
			}
		}
		if ok {
			out = append(out, st.ID)
		}
	}
	return out
}

// AdmitPolicy holds the knobs of Admit (the coordinator's Config).
type AdmitPolicy struct {
	HoldPolicy
	// Adaptive: the job re-plans (a static job never holds or defers).
	Adaptive bool
	// Wait is the longest a probe stage waits for a runtime filter (0:
	// never waits).
	Wait time.Duration
}

// Holds is the hold clock of one job run: since when each stage held for
// a runtime filter could have started, and why it waits. The driver keeps
// one per run; Admit reads and advances it.
type Holds struct {
	since map[int]time.Time
	why   map[int]string
}

// Next returns when the earliest hold ends (ok false: nothing is held).
func (h *Holds) Next(wait time.Duration) (end time.Time, ok bool) {
	for _, since := range h.since {
		if e := since.Add(wait); !ok || e.Before(end) {
			end, ok = e, true
		}
	}
	return end, ok
}

// Holding returns the stages held now (waiting for a runtime filter, not
// started yet) and why each waits.
func (h *Holds) Holding() map[int]string {
	out := map[int]string{}
	for id := range h.since {
		out[id] = h.why[id]
	}
	return out
}

// Admission is what Admit decided: the stages to start now, the holds
// that began and the waits that timed out (for the driver's log), and the
// notes for the next round record.
type Admission struct {
	Start    []int
	Held     map[int]FilterHold
	TimedOut map[int]FilterHold
	Notes    []string
}

// Admit picks, among the stages ready to start (l.Starting), those to
// start at now. A stage a runtime filter holds (FilterHolds) waits until
// its build side is done or p.Wait has passed since it could first have
// started; then it starts unfiltered. A stage DeferProbe defers waits for
// its build side (a resumed stage never does). Each new hold, each start
// after a hold and each timeout is noted once.
func (s *State) Admit(l Launch, p AdmitPolicy, h *Holds, now time.Time) Admission {
	if h.since == nil {
		h.since, h.why = map[int]time.Time{}, map[int]string{}
	}
	a := Admission{Held: map[int]FilterHold{}, TimedOut: map[int]FilterHold{}}
	var holds map[int]FilterHold
	if p.Adaptive && p.Wait > 0 {
		holds = s.FilterHolds(l, p.HoldPolicy)
	}
	for _, id := range sortedIDs(holds) {
		if _, noted := h.why[id]; !noted {
			a.Notes = append(a.Notes, fmt.Sprintf("stage %d held for %s (at most %s)", id, holds[id].Reason, p.Wait))
		}
		h.why[id] = holds[id].Reason
	}
	for _, id := range sortedIDs(l.Starting) {
		if hold, ok := holds[id]; ok {
			since, seen := h.since[id]
			if !seen {
				since, h.since[id] = now, now
				a.Held[id] = hold
			}
			if now.Sub(since) < p.Wait {
				continue
			}
			a.Notes = append(a.Notes, fmt.Sprintf("stage %d started unfiltered after waiting %s for build stage %d (runtime filter wait timeout %s)",
				id, now.Sub(since).Round(time.Millisecond), hold.Build, p.Wait))
			a.TimedOut[id] = hold
		} else if since, seen := h.since[id]; seen {
			a.Notes = append(a.Notes, fmt.Sprintf("stage %d started after waiting %s for its build side (%s)",
				id, now.Sub(since).Round(time.Millisecond), h.why[id]))
		}
		delete(h.since, id)
		if p.Adaptive && !slices.Contains(l.Resumed, id) && s.DeferProbe(id, l, p.DeferProbeRatio) {
			continue
		}
		a.Start = append(a.Start, id)
	}
	return a
}

func sortedIDs[V any](m map[int]V) []int {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// filteredFrom reports whether a leaf with runtime filters fs has one on
// its output column col from a stage that stage b reads: a farther source
// of the keys b would summarize.
func filteredFrom(g *plan.Graph, fs []plan.RuntimeFilter, col, b int) bool {
	for _, f := range fs {
		if f.Column == col && dependsOn(g, b, f.Stage) {
			return true
		}
	}
	return false
}
