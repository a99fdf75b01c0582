package adaptive

import (
	"context"
	"testing"

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
