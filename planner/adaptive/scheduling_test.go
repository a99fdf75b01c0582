package adaptive

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/plan"
)

// joinState plans a partitioned join of a big table and a small one (no
// broadcast), with the small side asked for a key summary as the
// runtime-filter rule asks it, and returns the state and the probe and
// build scan stages.
func joinState(t *testing.T) (s *State, probe, build int) {
	t.Helper()
	cat := goldenCatalog{
		"fact": {Name: "fact", Format: "parquet", Rows: 1e7, Bytes: 4e8, Columns: []plan.Field{{Name: "f_key", Type: plan.Int64Type}, {Name: "f_v", Type: plan.Float64Type}}},
		"dim":  {Name: "dim", Format: "parquet", Rows: 1e5, Bytes: 2e6, Columns: []plan.Field{{Name: "d_key", Type: plan.Int64Type}, {Name: "d_name", Type: plan.StringType}}},
	}
	p, err := planner.Plan(context.Background(), "SELECT f_v, d_name FROM fact JOIN dim ON f_key = d_key", cat, planner.Options{Partitions: 4, BroadcastBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	s = &State{Graph: p.Graph, Done: map[int]*StageStats{}, Running: map[int]bool{}, Tasks: InitialTaskPlans(p.Graph), Config: DefaultConfig()}
	probe, build = -1, -1
	for _, st := range p.Graph.Stages {
		plan.Walk(st.Root, func(n *plan.Node) {
			if n.Kind == plan.KindScan && n.Scan.Table == "fact" {
				probe = st.ID
			}
			if n.Kind == plan.KindScan && n.Scan.Table == "dim" {
				build = st.ID
			}
		})
	}
	edges := FilterEdges(s.Graph)
	if probe < 0 || build < 0 || len(edges) == 0 {
		t.Fatalf("no partitioned join with a filter edge:\n%s", plan.FormatGraph(p.Graph, nil))
	}
	b := s.Graph.Stage(edges[0].Build)
	b.Summarize = append(b.Summarize, edges[0].BuildColumn)
	return s, probe, build
}

// TestDeferProbe: the probe side of a partitioned join waits for a build
// side at most 1/ratio of its input that runs or starts now, and only
// then.
func TestDeferProbe(t *testing.T) {
	s, probe, build := joinState(t)
	both := Launch{Starting: map[int]bool{probe: true, build: true}, Bytes: map[int]int64{probe: 800, build: 100}}
	if !s.DeferProbe(probe, both, 8) {
		t.Fatal("probe of 8x the build's bytes not deferred")
	}
	if s.DeferProbe(probe, both, 9) {
		t.Fatal("probe of less than ratio x the build's bytes deferred")
	}
	if s.DeferProbe(probe, both, 0) {
		t.Fatal("ratio 0 defers")
	}
	if s.DeferProbe(build, both, 8) {
		t.Fatal("the build side deferred")
	}
	alone := Launch{Starting: map[int]bool{probe: true}, Bytes: both.Bytes}
	if s.DeferProbe(probe, alone, 8) {
		t.Fatal("deferred for a build side that neither runs nor starts")
	}
	s.Done[build] = &StageStats{Rows: 1}
	if s.DeferProbe(probe, both, 8) {
		t.Fatal("deferred for a finished build side")
	}
}

// TestFilterHolds: a probe scan waits for the runtime filter of a build
// side asked for a summary when it reads at least FilterRatio times as
// much and the build side is small enough; a resumed stage never waits.
func TestFilterHolds(t *testing.T) {
	s, probe, build := joinState(t)
	policy := HoldPolicy{FilterRatio: 8, FilterBuildBytes: 1 << 30}
	l := Launch{Running: map[int]bool{build: true}, Starting: map[int]bool{probe: true}, Bytes: map[int]int64{probe: 800, build: 100}}
	h, ok := s.FilterHolds(l, policy)[probe]
	if !ok || h.Build != build {
		t.Fatalf("holds %+v: want stage %d held for stage %d", s.FilterHolds(l, policy), probe, build)
	}
	for name, change := range map[string]func(l *Launch, p *HoldPolicy){
		"resumed":           func(l *Launch, p *HoldPolicy) { l.Resumed = []int{probe} },
		"ratio not reached": func(l *Launch, p *HoldPolicy) { l.Bytes = map[int]int64{probe: 700, build: 100} },
		"build too big":     func(l *Launch, p *HoldPolicy) { p.FilterBuildBytes = 99 },
		"holds off":         func(l *Launch, p *HoldPolicy) { p.FilterRatio = 0 },
		"build not started": func(l *Launch, p *HoldPolicy) { l.Running = nil },
	} {
		l2 := Launch{Running: map[int]bool{build: true}, Starting: map[int]bool{probe: true}, Bytes: l.Bytes}
		p2 := policy
		change(&l2, &p2)
		if holds := s.FilterHolds(l2, p2); len(holds) != 0 {
			t.Errorf("%s: holds %+v, want none", name, holds)
		}
	}
}

// TestAdmit: which ready stages start now, and what is held, timed out
// and noted, from the launch, the knobs and the hold clock.
func TestAdmit(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	bytes := map[int]int64{}
	on := AdmitPolicy{Adaptive: true, Wait: time.Second, HoldPolicy: HoldPolicy{DeferProbeRatio: 8, FilterRatio: 8, FilterBuildBytes: 1 << 30}}
	cases := []struct {
		name     string
		running  []string // "probe", "build"
		starting []string
		resumed  bool // the probe stage was resumed
		done     bool // the build stage is done
		policy   func(p *AdmitPolicy)
		heldFor  time.Duration // the probe was held since now minus this (0: not held)
		start    []string
		held     bool // the probe's hold began now
		timedOut bool
		notes    []string // each note contains these, in order
	}{
		{name: "build running: the probe waits for its filter", running: []string{"build"}, starting: []string{"probe"},
			held: true, notes: []string{"stage P held for runtime filter from build stage B"}},
		{name: "still within the wait", running: []string{"build"}, starting: []string{"probe"}, heldFor: 500 * time.Millisecond},
		{name: "the wait times out: starts unfiltered", running: []string{"build"}, starting: []string{"probe"}, heldFor: 2 * time.Second,
			policy: func(p *AdmitPolicy) { p.DeferProbeRatio = 0 },
			start:  []string{"probe"}, timedOut: true, notes: []string{"stage P started unfiltered after waiting 2s for build stage B (runtime filter wait timeout 1s)"}},
		// As before the policies moved here: a probe whose filter wait timed
		// out is still deferred when its build side is small enough for
		// DeferProbe (and the note says it started).
		{name: "the wait times out, but the probe defers", running: []string{"build"}, starting: []string{"probe"}, heldFor: 2 * time.Second,
			timedOut: true, notes: []string{"stage P started unfiltered after waiting 2s"}},
		{name: "the build finished: starts after its wait", starting: []string{"probe"}, done: true, heldFor: 300 * time.Millisecond,
			start: []string{"probe"}, notes: []string{"stage P started after waiting 300ms for its build side (runtime filter from build stage B"}},
		{name: "static job: nothing waits", running: []string{"build"}, starting: []string{"probe"}, policy: func(p *AdmitPolicy) { p.Adaptive = false },
			start: []string{"probe"}},
		{name: "wait off: no hold, the probe defers to its running build side", running: []string{"build"}, starting: []string{"probe"}, policy: func(p *AdmitPolicy) { p.Wait = 0 }},
		{name: "wait and deferral off: starts", running: []string{"build"}, starting: []string{"probe"}, policy: func(p *AdmitPolicy) { p.Wait, p.DeferProbeRatio = 0, 0 },
			start: []string{"probe"}},
		{name: "resumed probe never waits", running: []string{"build"}, starting: []string{"probe"}, resumed: true,
			start: []string{"probe"}},
		{name: "both start, no filter wait: the probe defers to its build side", starting: []string{"build", "probe"}, policy: func(p *AdmitPolicy) { p.Wait = 0 },
			start: []string{"build"}},
		{name: "both start, deferral off", starting: []string{"build", "probe"}, policy: func(p *AdmitPolicy) { p.Wait, p.DeferProbeRatio = 0, 0 },
			start: []string{"build", "probe"}},
		{name: "both start with the filter wait on: the probe is held", starting: []string{"build", "probe"},
			start: []string{"build"}, held: true, notes: []string{"stage P held for"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, probe, build := joinState(t)
			bytes[probe], bytes[build] = 800, 100
			id := map[string]int{"probe": probe, "build": build}
			set := func(names []string) map[int]bool {
				m := map[int]bool{}
				for _, n := range names {
					m[id[n]] = true
				}
				return m
			}
			l := Launch{Running: set(c.running), Starting: set(c.starting), Bytes: bytes}
			if c.resumed {
				l.Resumed = []int{probe}
			}
			if c.done {
				s.Done[build] = &StageStats{Rows: 1}
			}
			p := on
			if c.policy != nil {
				c.policy(&p)
			}
			now := t0.Add(time.Hour)
			var h Holds
			if c.heldFor > 0 {
				h.since = map[int]time.Time{probe: now.Add(-c.heldFor)}
				h.why = map[int]string{probe: fmt.Sprintf("runtime filter from build stage %d: earlier", build)}
			}
			a := s.Admit(l, p, &h, now)
			var want []int
			for _, n := range c.start {
				want = append(want, id[n])
			}
			slices.Sort(want)
			if !slices.Equal(a.Start, want) {
				t.Errorf("start %v, want %v", a.Start, want)
			}
			if _, held := a.Held[probe]; held != c.held {
				t.Errorf("hold began: %v, want %v", held, c.held)
			}
			if _, to := a.TimedOut[probe]; to != c.timedOut {
				t.Errorf("timed out: %v, want %v", to, c.timedOut)
			}
			if len(a.Notes) != len(c.notes) {
				t.Fatalf("notes %q, want %d", a.Notes, len(c.notes))
			}
			for i, n := range c.notes {
				n = strings.NewReplacer("P", fmt.Sprint(probe), "B", fmt.Sprint(build)).Replace(n)
				if !strings.Contains(a.Notes[i], n) {
					t.Errorf("note %q, want it to contain %q", a.Notes[i], n)
				}
			}
			// A held stage is on the hold clock; one that started, timed
			// out or was never held is off it.
			_, onClock := h.since[probe]
			if wantClock := c.held || (c.heldFor > 0 && !c.timedOut && !slices.Contains(a.Start, probe)); onClock != wantClock {
				t.Errorf("probe on the hold clock: %v, want %v", onClock, wantClock)
			}
			if end, ok := h.Next(p.Wait); ok != onClock || (ok && end.After(now.Add(p.Wait))) {
				t.Errorf("next hold end %v %v", end, ok)
			}
		})
	}
}

// TestFilterHoldsCutBuild: a build side the planner cut for a runtime
// filter (plan.Stage.FilterBuild: an IN subquery's HAVING) holds the
// probe scans it filters while it still waits for its own input, when
// that input runs or starts now, whatever the bytes ratio; not when its
// input has not started, nor when the input reads more than
// FilterBuildBytes.
func TestFilterHoldsCutBuild(t *testing.T) {
	cat := goldenCatalog{
		"fact":  {Name: "fact", Format: "parquet", Rows: 1e7, Bytes: 4e8, Columns: []plan.Field{{Name: "f_key", Type: plan.Int64Type}, {Name: "f_v", Type: plan.Float64Type}}},
		"other": {Name: "other", Format: "parquet", Rows: 1e7, Bytes: 4e8, Columns: []plan.Field{{Name: "o_key", Type: plan.Int64Type}, {Name: "o_q", Type: plan.Int64Type}}},
	}
	q := "SELECT f_key, sum(f_v) FROM fact WHERE f_key IN (SELECT o_key FROM other GROUP BY o_key HAVING sum(o_q) > 300) GROUP BY f_key"
	p, err := planner.Plan(context.Background(), q, cat, planner.Options{Partitions: 4, BroadcastBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	s := &State{Graph: p.Graph, Done: map[int]*StageStats{}, Running: map[int]bool{}, Tasks: InitialTaskPlans(p.Graph), Config: DefaultConfig()}
	b := -1
	for _, st := range p.Graph.Stages {
		if st.FilterBuild {
			b = st.ID
		}
	}
	if b < 0 {
		t.Fatalf("no stage cut for a runtime filter:\n%s", plan.FormatGraph(p.Graph, nil))
	}
	in := s.Graph.Stage(b).Inputs[0]
	var probe = -1
	for _, e := range FilterEdges(s.Graph) {
		if e.Build == b {
			probe = e.Probe
			s.Graph.Stage(b).Summarize = []int{e.BuildColumn}
		}
	}
	if probe < 0 {
		t.Fatalf("no filter edge from the cut stage %d:\n%s", b, plan.FormatGraph(p.Graph, nil))
	}
	policy := HoldPolicy{FilterRatio: 8, FilterBuildBytes: 1 << 30}
	bytes := map[int]int64{probe: 800, in: 800, b: 700}
	cases := []struct {
		name    string
		launch  Launch
		policy  HoldPolicy
		holding bool
	}{
		{"input starts with the probe", Launch{Starting: map[int]bool{probe: true, in: true}, Bytes: bytes}, policy, true},
		{"input runs", Launch{Running: map[int]bool{in: true}, Starting: map[int]bool{probe: true}, Bytes: bytes}, policy, true},
		{"build runs, ratio not reached", Launch{Running: map[int]bool{b: true}, Starting: map[int]bool{probe: true}, Bytes: bytes}, policy, true},
		{"input not started", Launch{Starting: map[int]bool{probe: true}, Bytes: bytes}, policy, false},
		{"input too big", Launch{Starting: map[int]bool{probe: true, in: true}, Bytes: bytes}, HoldPolicy{FilterRatio: 8, FilterBuildBytes: 799}, false},
		{"holds off", Launch{Starting: map[int]bool{probe: true, in: true}, Bytes: bytes}, HoldPolicy{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, ok := s.FilterHolds(c.launch, c.policy)[probe]
			if ok != c.holding || (ok && h.Build != b) {
				t.Fatalf("hold %+v (%v), want held=%v for stage %d", h, ok, c.holding, b)
			}
		})
	}
}

// TestFilterHoldsShuffleRead: a stage whose join reads shuffles that a
// build side the planner cut for a runtime filter would filter (TPC-H
// Q18's join of orders, after the orders scan ran, and the HAVING's keys)
// waits for that build side however much it and its input read; not once
// the scan below has the filter (its rows come filtered), and not for a
// build side the planner did not call selective (a shuffle read takes
// only a set of keys from it, which nothing promises).
func TestFilterHoldsShuffleRead(t *testing.T) {
	cat := goldenCatalog{
		"ord":  {Name: "ord", Format: "parquet", Rows: 1.5e8, Bytes: 4e9, Columns: []plan.Field{{Name: "o_key", Type: plan.Int64Type}, {Name: "o_cust", Type: plan.Int64Type}}},
		"cust": {Name: "cust", Format: "parquet", Rows: 1.5e5, Bytes: 1e7, Columns: []plan.Field{{Name: "c_key", Type: plan.Int64Type}, {Name: "c_name", Type: plan.StringType}}},
		"fact": {Name: "fact", Format: "parquet", Rows: 1e7, Bytes: 4e8, Columns: []plan.Field{{Name: "f_key", Type: plan.Int64Type}, {Name: "f_v", Type: plan.Float64Type}}},
	}
	q := "SELECT c_name, o_key FROM ord JOIN cust ON o_cust = c_key WHERE o_key IN (SELECT f_key FROM fact GROUP BY f_key HAVING sum(f_v) > 300)"
	for _, c := range []struct {
		name     string
		build    func(s *State, b int) Launch // the launch, after any change to s
		notCut   bool
		filtered bool // the ord scan has the build side's filter
		holding  bool
	}{
		{"cut build's input runs, reading more than FilterBuildBytes", func(s *State, b int) Launch {
			in := s.Graph.Stage(b).Inputs[0]
			return Launch{Running: map[int]bool{in: true}, Bytes: map[int]int64{in: 2 << 30}}
		}, false, false, true},
		{"cut build runs, reading more than FilterBuildBytes", func(s *State, b int) Launch {
			return Launch{Running: map[int]bool{b: true}, Bytes: map[int]int64{b: 2 << 30}}
		}, false, false, true},
		{"scan below filtered", func(s *State, b int) Launch {
			return Launch{Running: map[int]bool{b: true}, Bytes: map[int]int64{b: 100}}
		}, false, true, false},
		{"build not cut", func(s *State, b int) Launch {
			return Launch{Running: map[int]bool{b: true}, Bytes: map[int]int64{b: 100}}
		}, true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := planner.Plan(context.Background(), q, cat, planner.Options{Partitions: 4, BroadcastBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			s := &State{Graph: p.Graph, Done: map[int]*StageStats{}, Running: map[int]bool{}, Tasks: InitialTaskPlans(p.Graph), Config: DefaultConfig()}
			var read *FilterEdge
			for _, e := range FilterEdges(s.Graph) {
				if e.onExchange() && s.Graph.Stage(e.Build).FilterBuild && len(e.below) == 1 && e.below[0].target.Scan.Table == "ord" {
					read = &e
				}
			}
			if read == nil {
				t.Fatalf("no shuffle read of the ord scan filtered by a cut build side:\n%s", plan.FormatGraph(p.Graph, nil))
			}
			b, a := read.Build, read.Probe
			s.Graph.Stage(b).Summarize = []int{read.BuildColumn}
			s.Graph.Stage(b).FilterBuild = !c.notCut
			for _, in := range s.Graph.Stage(a).Inputs {
				s.Done[in] = &StageStats{Rows: 1e6, Bytes: 1e8}
			}
			if c.filtered {
				sc := read.below[0].target.Scan
				sc.RuntimeFilters = append(sc.RuntimeFilters, plan.RuntimeFilter{Stage: b, BuildColumn: read.BuildColumn, Column: read.below[0].ScanColumn, Kind: "set"})
			}
			l := c.build(s, b)
			l.Starting = map[int]bool{a: true}
			l.Bytes[a] = 2e8
			h, ok := s.FilterHolds(l, HoldPolicy{FilterRatio: 8, FilterBuildBytes: 1 << 30})[a]
			if ok != c.holding || (ok && h.Build != b) {
				t.Fatalf("stage %d: hold %+v (%v), want held=%v for stage %d\n%s", a, h, ok, c.holding, b, plan.FormatGraph(p.Graph, nil))
			}
		})
	}
}

// TestFilterEdgesInnerJoinSides: the keys of a semi join's build side
// reach the scans of both sides of an inner join below it on the same key
// (TPC-H Q18's orders and lineitem), and not the scan of a join on
// another key's column.
func TestFilterEdgesInnerJoinSides(t *testing.T) {
	cols := func(a, b string) []plan.Field {
		return []plan.Field{{Name: a, Type: plan.Int64Type}, {Name: b, Type: plan.Int64Type}}
	}
	cat := goldenCatalog{
		"fact":  {Name: "fact", Format: "parquet", Rows: 1e7, Bytes: 4e8, Columns: cols("f_key", "f_v")},
		"ord":   {Name: "ord", Format: "parquet", Rows: 1e7, Bytes: 4e8, Columns: cols("o_key", "o_cust")},
		"cust":  {Name: "cust", Format: "parquet", Rows: 1e7, Bytes: 4e8, Columns: cols("c_key", "c_v")},
		"other": {Name: "other", Format: "parquet", Rows: 1e7, Bytes: 4e8, Columns: cols("x_key", "x_q")},
	}
	q := `SELECT f_key, c_v, sum(f_v) FROM fact JOIN ord ON f_key = o_key JOIN cust ON o_cust = c_key
		WHERE o_key IN (SELECT x_key FROM other GROUP BY x_key HAVING sum(x_q) > 300) GROUP BY f_key, c_v`
	p, err := planner.Plan(context.Background(), q, cat, planner.Options{Partitions: 4, BroadcastBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range FilterEdges(p.Graph) {
		if p.Graph.Stage(e.Build).FilterBuild && !e.onExchange() {
			got[e.target.Scan.Table] = true
		}
	}
	if !got["fact"] || !got["ord"] || got["cust"] || got["other"] {
		t.Fatalf("scans filtered by the cut build side: %v, want fact and ord\n%s", got, plan.FormatGraph(p.Graph, nil))
	}
}

// TestFilterHoldsSelectiveBuild: a partitioned join's build stage that
// the estimates call few rows next to a big probe scan (TPC-H Q21's
// lineitem joined to one nation's suppliers, semi and anti joined to two
// more scans of lineitem) is marked a filter build, and both probe scans
// wait for its keys while it still waits for its own input; the same
// query without the selective filter marks nothing and holds nothing.
func TestFilterHoldsSelectiveBuild(t *testing.T) {
	cat := goldenCatalog{
		"fact": {Name: "fact", Format: "parquet", Rows: 1e7, Bytes: 4e8, Columns: []plan.Field{{Name: "f_key", Type: plan.Int64Type}, {Name: "f_v", Type: plan.Float64Type}, {Name: "f_day", Type: plan.DateType}}},
		"dim":  {Name: "dim", Format: "parquet", Rows: 1e5, Bytes: 2e6, Columns: []plan.Field{{Name: "d_key", Type: plan.Int64Type}, {Name: "d_name", Type: plan.StringType}}},
	}
	const shape = `SELECT f1.f_v FROM fact f1 JOIN dim ON f1.f_key = d_key %s
		AND EXISTS (SELECT * FROM fact f2 WHERE f2.f_key = f1.f_key AND f2.f_v <> f1.f_v)
		AND NOT EXISTS (SELECT * FROM fact f3 WHERE f3.f_key = f1.f_key AND f3.f_day > f1.f_day)`
	for _, c := range []struct {
		name      string
		where     string
		selective bool
	}{
		{"one dimension row", "WHERE d_name = 'x'", true},
		{"every dimension row", "WHERE d_key IS NOT NULL", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := planner.Plan(context.Background(), fmt.Sprintf(shape, c.where), cat, planner.Options{Partitions: 4, BroadcastBytes: 8 << 20})
			if err != nil {
				t.Fatal(err)
			}
			s := &State{Graph: p.Graph, Done: map[int]*StageStats{}, Running: map[int]bool{}, Tasks: InitialTaskPlans(p.Graph), Config: DefaultConfig()}
			// The stage joining f1 to dim: a fact scan beside an exchange.
			b := -1
			for _, st := range p.Graph.Stages {
				var scan, ex bool
				plan.Walk(st.Root, func(n *plan.Node) {
					scan = scan || (n.Kind == plan.KindScan && n.Scan.Table == "fact")
					ex = ex || n.Kind == plan.KindExchange
				})
				if scan && ex {
					b = st.ID
				}
			}
			probes := map[int]bool{}
			for _, e := range FilterEdges(s.Graph) {
				if e.Build == b && !e.onExchange() && e.target.Scan.Table == "fact" {
					probes[e.Probe] = true
					if bs := s.Graph.Stage(b); !slices.Contains(bs.Summarize, e.BuildColumn) {
						bs.Summarize = append(bs.Summarize, e.BuildColumn)
					}
				}
			}
			if b < 0 || (c.selective && len(probes) != 2) {
				t.Fatalf("want the f1 stage filtering two fact scans, got stage %d probes %v:\n%s", b, probes, plan.FormatGraph(p.Graph, nil))
			}
			bs := s.Graph.Stage(b)
			if bs.FilterBuild != c.selective {
				t.Fatalf("stage %d filter build = %v, want %v:\n%s", b, bs.FilterBuild, c.selective, plan.FormatGraph(p.Graph, nil))
			}
			l := Launch{Starting: map[int]bool{}, Bytes: map[int]int64{}}
			for _, in := range bs.Inputs {
				l.Starting[in], l.Bytes[in] = true, 2e6
			}
			for _, st := range p.Graph.Stages {
				if len(st.Inputs) == 0 && st.ID != b && !l.Starting[st.ID] {
					l.Starting[st.ID], l.Bytes[st.ID] = true, 4e8
				}
			}
			holds := s.FilterHolds(l, HoldPolicy{FilterRatio: 8, FilterBuildBytes: 1 << 30})
			for pr := range probes {
				// Not selective, f1 is the outer side of the semi and
				// anti joins: its keys may filter the fact scans (the
				// reverse edges), but nothing says to wait for them.
				if !c.selective {
					break
				}
				if h, ok := holds[pr]; !ok || h.Build != b {
					t.Errorf("probe stage %d: hold %+v (%v), want held for stage %d", pr, h, ok, b)
				}
			}
			for id, h := range holds {
				if !c.selective && h.Build == b {
					t.Errorf("stage %d held for stage %d, which is not selective", id, b)
				}
			}
		})
	}
}

// TestFilterEdgesThroughAggregate: a join on an aggregation's plain group
// key carries the build side's keys into the scan below the aggregation,
// in the stage of its partial aggregation (TPC-H Q17's average quantity
// per part, joined to one brand's parts), and the broadcast build stage
// that filters it is marked a filter build so that the scan waits for it;
// a join on an aggregate's value reaches no scan below the aggregation.
func TestFilterEdgesThroughAggregate(t *testing.T) {
	cat := goldenCatalog{
		"fact": {Name: "fact", Format: "parquet", Rows: 1e7, Bytes: 4e8, Columns: []plan.Field{{Name: "f_key", Type: plan.Int64Type}, {Name: "f_v", Type: plan.Float64Type}, {Name: "f_day", Type: plan.Int64Type}}},
		"dim":  {Name: "dim", Format: "parquet", Rows: 1e5, Bytes: 2e6, Columns: []plan.Field{{Name: "d_key", Type: plan.Int64Type}, {Name: "d_name", Type: plan.StringType}}},
	}
	// aggScanStage is the stage holding an aggregation over the fact scan
	// (its partial aggregation), -1 when none.
	aggScanStage := func(g *plan.Graph) int {
		for _, st := range g.Stages {
			var agg, scan bool
			plan.Walk(st.Root, func(n *plan.Node) {
				agg = agg || n.Kind == plan.KindAggregate
				scan = scan || (n.Kind == plan.KindScan && n.Scan.Table == "fact")
			})
			if agg && scan {
				return st.ID
			}
		}
		return -1
	}
	const q17 = `SELECT sum(f.f_v) FROM fact f JOIN dim ON f.f_key = d_key WHERE d_name = 'x'
			AND f.f_v < (SELECT 0.2 * avg(f2.f_v) FROM fact f2 WHERE f2.f_key = f.f_key)`
	for _, c := range []struct {
		name, q   string
		broadcast int64
		kind      plan.PartitionKind
		edge      bool
	}{
		{"group key, hashed build", q17, 8 << 20, plan.PartitionHash, true},
		{"group key, broadcast build", q17, 1 << 30, plan.PartitionBroadcast, true},
		{"aggregate value", `SELECT d_name FROM dim JOIN (SELECT f_day, max(f_key) AS m FROM fact GROUP BY f_day) s ON s.m = d_key
			WHERE d_name = 'x'`, 8 << 20, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := planner.Plan(context.Background(), c.q, cat, planner.Options{Partitions: 4, BroadcastBytes: c.broadcast})
			if err != nil {
				t.Fatal(err)
			}
			a := aggScanStage(p.Graph)
			if a < 0 {
				t.Fatalf("no aggregation over the fact scan:\n%s", plan.FormatGraph(p.Graph, nil))
			}
			var edge *FilterEdge
			for _, e := range FilterEdges(p.Graph) {
				if e.Probe == a && !e.onExchange() && edge == nil {
					edge = &e // the nearest source (transitive ones follow)
				}
			}
			if (edge != nil) != c.edge {
				t.Fatalf("edge into the aggregation's scan: %+v, want one: %v\n%s", edge, c.edge, plan.FormatGraph(p.Graph, nil))
			}
			if edge == nil {
				return
			}
			b := p.Graph.Stage(edge.Build)
			if b.Output.Kind != c.kind {
				t.Fatalf("build stage %d output %s, want %s:\n%s", edge.Build, b.Output.Kind, c.kind, plan.FormatGraph(p.Graph, nil))
			}
			if !b.FilterBuild {
				t.Fatalf("build stage %d not a filter build:\n%s", edge.Build, plan.FormatGraph(p.Graph, nil))
			}
			s := &State{Graph: p.Graph, Done: map[int]*StageStats{}, Running: map[int]bool{}, Tasks: InitialTaskPlans(p.Graph), Config: DefaultConfig()}
			b.Summarize = append(b.Summarize, edge.BuildColumn)
			l := Launch{Starting: map[int]bool{a: true}, Bytes: map[int]int64{a: 4e8}}
			for _, in := range b.Inputs {
				l.Starting[in], l.Bytes[in] = true, 2e6
			}
			if h, ok := s.FilterHolds(l, HoldPolicy{FilterRatio: 8, FilterBuildBytes: 1 << 30})[a]; !ok || h.Build != edge.Build {
				t.Fatalf("stage %d: hold %+v (%v), want held for stage %d", a, h, ok, edge.Build)
			}
			// A farther source of the key (the dimension's stage, across
			// the build stage's join) is an edge too; once its filter is
			// on the scan, the scan no longer waits for the nearer one.
			var far *FilterEdge
			for _, e := range FilterEdges(p.Graph) {
				if e.Probe == a && !e.onExchange() && slices.Contains(b.Inputs, e.Build) {
					far = &e
				}
			}
			if far == nil {
				t.Fatalf("no edge into stage %d from an input of build stage %d:\n%s", a, edge.Build, plan.FormatGraph(p.Graph, nil))
			}
			far.target.Scan.RuntimeFilters = append(far.target.Scan.RuntimeFilters, plan.RuntimeFilter{Stage: far.Build, BuildColumn: far.BuildColumn, Column: far.ScanColumn, Kind: "set"})
			if h, ok := s.FilterHolds(l, HoldPolicy{FilterRatio: 8, FilterBuildBytes: 1 << 30})[a]; ok {
				t.Fatalf("stage %d filtered by stage %d still held: %+v", a, far.Build, h)
			}
		})
	}
}
