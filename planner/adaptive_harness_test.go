package planner

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sluicedb/sluice/planner/adaptive"
	"github.com/sluicedb/sluice/planner/plan"
)

// TestAdaptiveRulesOnTPCH runs the adaptive re-planner over every TPC-H
// plan as if the stages ran one by one and produced synthetic statistics
// (empty outputs, tiny outputs that invite broadcasts, skewed partitions).
// After every stage all rules run twice: the second run must fire nothing
// and change nothing (idempotence), and every rewritten plan must still
// keep the contract (exchange schemas, stage inputs, node invariants).
func TestAdaptiveRulesOnTPCH(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "tpch", "q*.sql"))
	if err != nil || len(files) != 22 {
		t.Fatalf("want the 22 TPC-H queries, found %d (%v)", len(files), err)
	}
	scenarios := []struct {
		name    string
		stats   func(stage, part int) (rows, bytes int64)
		objects int // map objects of every stage, each holding every partition
	}{
		{"uniform", func(s, p int) (int64, int64) { return 1000, 64 << 10 }, 3},
		{"tiny", func(s, p int) (int64, int64) { return 3, 100 }, 3},
		{"skewed", func(s, p int) (int64, int64) {
			if p == 1 {
				return 100000, 64 << 20
			}
			return 1000, 32 << 20
		}, 3},
		{"empty-odd-stages", func(s, p int) (int64, int64) {
			if s%2 == 1 {
				return 0, 0
			}
			return 500, 4 << 20
		}, 3},
		// Many map objects: readers' GETs pass the budget (combine-objects).
		{"many-map-objects", func(s, p int) (int64, int64) { return 1000, 64 << 20 }, 400},
	}
	cfg := adaptive.DefaultConfig()
	cfg.UnbroadcastBytes = 1 << 20 // the big scenarios turn broadcasts into partitioned joins
	cfg.GetBudget = 1000           // 4 tasks reading 400 map objects pass it
	cfg.Parallelism = 2            // size-scans runs the big scans below on two tasks
	cfg.SplitBytes = 32 << 20
	cfg.Sizing.Sizes = []int64{512 << 20, 1769 << 20, 3538 << 20} // size-functions sizes every stage it can
	fired := map[string]int{}
	for _, f := range files {
		for _, bc := range []int64{0, -1} {
			for _, sc := range scenarios {
				name := fmt.Sprintf("%s/broadcast=%d/%s", filepath.Base(f), bc, sc.name)
				t.Run(name, func(t *testing.T) {
					g := planFile(t, f, Options{Partitions: 4, BroadcastBytes: bc}).Graph
					s := &adaptive.State{Graph: g, Done: map[int]*adaptive.StageStats{}, Running: map[int]bool{},
						Tasks: adaptive.InitialTaskPlans(g), Config: cfg, Scans: map[int]adaptive.ScanSize{}}
					for _, st := range g.Stages {
						if adaptive.ScanStage(st) {
							// Every other scan is big (ten static splits);
							// nation and region are small tables of one
							// file, as they are (inline-scans).
							s.Scans[st.ID] = adaptive.ScanSize{Bytes: int64(1+9*(st.ID%2)) * 32 << 20, Splits: 1 + 9*(st.ID%2)}
							if table := scanTable(st.Root); table == "nation" || table == "region" {
								s.Scans[st.ID] = adaptive.ScanSize{Bytes: 64 << 10, Splits: 1,
									Files: []plan.ScanFile{{Key: fmt.Sprintf("tables/s%d.parquet", st.ID), Size: 64 << 10}}}
							}
						}
					}
					for step := 0; step <= 2*len(g.Stages); step++ {
						for _, f := range replanTwice(t, s) {
							fired[f.Rule]++
						}
						checkRewritten(t, g)
						// Run the ready stage with the highest id first: build
						// sides tend to come after their probe sides, and
						// finishing them first lets select-join act.
						next := -1
						for _, st := range g.Stages {
							if s.Pending(st.ID) && inputsFinished(s, st) && st.ID > next {
								next = st.ID
							}
						}
						if next < 0 {
							break
						}
						st := g.Stage(next)
						objects := sc.objects
						out := &adaptive.StageStats{Objects: objects}
						n := 1
						if st.Output.Kind == plan.PartitionHash {
							n = st.Output.Count
						}
						for p := 0; p < n; p++ {
							rows, bytes := sc.stats(next, p)
							if rows == 0 {
								continue
							}
							out.Partitions = append(out.Partitions, adaptive.PartitionStats{Partition: p, Rows: rows, Bytes: bytes, Objects: objects})
							out.Rows += rows
							out.Bytes += bytes
						}
						s.Done[next] = out
					}
					_, done := s.Done[g.Result]
					if !done && !s.Skipped(g.Result) {
						t.Fatalf("result stage %d never became runnable", g.Result)
					}
				})
			}
		}
	}
	for _, r := range adaptive.Rules() {
		if fired[r.Name()] == 0 {
			t.Errorf("rule %s never fired over the TPC-H plans", r.Name())
		}
	}
	t.Logf("rules fired: %v", fired)
}

func inputsFinished(s *adaptive.State, st *plan.Stage) bool {
	for _, in := range st.Inputs {
		_, done := s.Done[in]
		if !done && !s.Skipped(in) {
			return false
		}
	}
	return true
}

func replanTwice(t *testing.T, s *adaptive.State) []adaptive.Fired {
	t.Helper()
	first, err := adaptive.Replan(s, adaptive.Rules())
	if err != nil {
		t.Fatal(err)
	}
	before, _ := json.Marshal([]any{s.Graph, s.Tasks})
	again, err := adaptive.Replan(s, adaptive.Rules())
	if err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal([]any{s.Graph, s.Tasks})
	if len(again) != 0 || string(before) != string(after) {
		t.Fatalf("rules are not idempotent: second run fired %+v", again)
	}
	for _, f := range first {
		if f.Discarded != "" {
			t.Fatalf("rule %s was discarded: %s", f.Rule, f.Discarded)
		}
	}
	return first
}

// checkRewritten checks the invariants the coordinator and functions rely
// on, on a plan the adaptive rules rewrote.
func checkRewritten(t *testing.T, g *plan.Graph) {
	t.Helper()
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, s := range g.Stages {
		reads := map[int]bool{}
		scans := 0
		plan.Walk(s.Root, func(n *plan.Node) {
			switch n.Kind {
			case plan.KindExchange:
				reads[n.Stage] = true
				if up := g.Stage(n.Stage); up == nil {
					t.Fatalf("stage %d reads missing stage %d", s.ID, n.Stage)
				} else if !reflect.DeepEqual(n.Schema, up.Root.Schema) {
					t.Fatalf("stage %d: exchange schema differs from stage %d output", s.ID, n.Stage)
				}
			case plan.KindScan:
				if n.SplitScan() {
					scans++
				} else if n.Scan.Files == nil {
					t.Fatalf("stage %d: inline scan of %s lists no files", s.ID, n.Scan.Table)
				}
			}
			checkNode(t, "rewritten", n)
		})
		if scans > 1 {
			t.Fatalf("stage %d has %d scans whose splits would be its tasks", s.ID, scans)
		}
		for _, in := range s.Inputs {
			if !reads[in] {
				t.Fatalf("stage %d lists input %d it does not read", s.ID, in)
			}
			delete(reads, in)
		}
		if len(reads) > 0 {
			t.Fatalf("stage %d reads stages %v not in its inputs %v", s.ID, reads, s.Inputs)
		}
	}
}

// scanTable is the table the first scan under n reads.
func scanTable(n *plan.Node) string {
	table := ""
	plan.Walk(n, func(x *plan.Node) {
		if x.Kind == plan.KindScan && table == "" && x.Scan != nil {
			table = x.Scan.Table
		}
	})
	return table
}
