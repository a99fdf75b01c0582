package tests

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/planner/plan"
)

// TestCombineObjects: a scan stage of ~100 tasks writes ~100 map objects
// and its reader runs 16 tasks after coalescing, ~1,600 GETs; with a GET
// budget of 100, combine-objects adds a stage that merges the map objects
// into a few first. The answer equals DuckDB's (and the run without the rule), and the
// reading stage issues far fewer GETs.
func TestCombineObjects(t *testing.T) {
	dir := t.TempDir()
	db := openDuck(t, dataDir(t, *sfFlag))
	if err := os.MkdirAll(filepath.Join(dir, "fact"), 0o755); err != nil {
		t.Fatal(err)
	}
	// 200,000 rows in row groups of 2,000: 100 scan tasks, 100 map objects.
	if _, err := db.Exec(`COPY (SELECT i % 5000 AS k, i AS v FROM range(200000) t(i)) TO '` +
		filepath.Join(dir, "fact", "fact.parquet") + `' (FORMAT parquet, ROW_GROUP_SIZE 2000)`); err != nil {
		t.Fatal(err)
	}
	db = openDuckDir(t, dir, "fact")
	q := `select k, count(*) as n, sum(v) as s from fact group by k`
	want := duckRows(t, db, q)

	ctx := context.Background()
	runWith := func(budget int64, faults string) (*coordinator.JobStatus, map[int]int64) {
		var fi *coordinator.FaultInvoker
		st := startStack(t, "", func(o *local.Options) {
			o.Partitions = 16
			o.Coordinator.SplitBytes = 1        // one task per row group
			o.Coordinator.AQE.MaxSplitBytes = 0 // even in adaptive jobs (no size-scans)
			// The reader's 16 partitions stay ~8 to 16 tasks.
			o.Coordinator.AQE.TargetPartitionBytes = 160 << 10
			o.Coordinator.AQE.GetBudget = budget
			if faults != "" {
				fc, err := coordinator.ParseFaults(faults)
				if err != nil {
					t.Fatal(err)
				}
				o.Coordinator.MaxAttempts = 8
				o.Coordinator.PackBytes = 0 // faults per task, not per packed invocation
				o.WrapInvoker = func(inv coordinator.Invoker) coordinator.Invoker {
					fi = coordinator.NewFaultInvoker(inv, nil, fc) // its bucket is set once the stack runs
					return fi
				}
			}
		})
		if fi != nil {
			fi.Bucket = st.Bucket
			t.Cleanup(func() { t.Logf("faults injected: %s", fi) })
		}
		if _, err := st.LoadDir(ctx, dir); err != nil {
			t.Fatal(err)
		}
		res := run(t, st, q, true)
		compareRows(t, sluiceRows(res), want, false)
		d, err := coordinator.NewClient(st.APIURL, "").Detail(ctx, res.Status.ID)
		if err != nil {
			t.Fatal(err)
		}
		gets := map[int]int64{}
		for _, s := range d.Stages {
			n, err := strconv.ParseInt(s.Cost["s3_get"], 10, 64)
			if err != nil {
				t.Fatalf("stage %d has no s3_get figure: %v", s.ID, s.Cost)
			}
			gets[s.ID] = n
		}
		return res.Status, gets
	}

	off, offGets := runWith(0, "")
	if firedRule(off, "combine-objects") {
		t.Fatal("combine-objects fired with the rule off")
	}
	on, onGets := runWith(100, "")
	if !firedRule(on, "combine-objects") {
		t.Fatalf("combine-objects did not fire: %+v", on.Rounds)
	}
	if len(on.Stages) != len(off.Stages)+1 {
		t.Fatalf("%d stages with the rule, %d without: want one added", len(on.Stages), len(off.Stages))
	}
	// The reader of the scan stage (stage 0) in the plan without the rule
	// reads the combining stage in the other.
	reader, combiner := -1, -1
	for _, s := range off.Stages {
		if reads(s.Plan, 0) {
			reader = s.ID
		}
	}
	for _, s := range on.Stages {
		if s.Plan != nil && s.Plan.Kind == plan.KindExchange && s.Plan.SplitObjects {
			combiner = s.ID
		}
	}
	if reader < 0 || combiner < 0 {
		t.Fatalf("reader stage %d, combining stage %d", reader, combiner)
	}
	stage := func(js *coordinator.JobStatus, id int) coordinator.StageStatus {
		for _, s := range js.Stages {
			if s.ID == id {
				return s
			}
		}
		t.Fatalf("job %s has no stage %d", js.ID, id)
		return coordinator.StageStatus{}
	}
	maps, comb := stage(on, 0).Tasks, stage(on, combiner)
	t.Logf("stage 0: %d tasks; reader stage %d: %d tasks without the rule, %d with; combining stage %d: %d tasks",
		maps, reader, stage(off, reader).Tasks, stage(on, reader).Tasks, combiner, comb.Tasks)
	if off.Cost == nil || on.Cost == nil {
		t.Fatal("no cost report")
	}
	t.Logf("GETs of reader stage %d: %d without the rule, %d with (combining stage: %d); job GETs %d -> %d",
		reader, offGets[reader], onGets[reader], onGets[combiner], off.Cost.S3.Get, on.Cost.S3.Get)
	if maps < 50 || comb.Tasks < 1 || comb.Tasks*2 > maps {
		t.Fatalf("%d map tasks combined by %d tasks", maps, comb.Tasks)
	}
	if onGets[reader]*4 > offGets[reader] {
		t.Fatalf("reader stage %d issued %d GETs with the combining stage, %d without: want at most a quarter", reader, onGets[reader], offGets[reader])
	}
	if onGets[reader]+onGets[combiner] >= offGets[reader] {
		t.Fatalf("reader and combining stages issued %d + %d GETs, more than the reader's %d alone", onGets[reader], onGets[combiner], offGets[reader])
	}

	// The same under injected faults: objects the combining and reading
	// tasks read are lost or corrupt, so their producers run again (a
	// combining task run again must read the same objects), attempts crash
	// or run twice; the answer stays DuckDB's.
	t.Run("faults", func(t *testing.T) {
		js, _ := runWith(100, "crash=0.03,error=0.03,duplicate=0.05,lose=0.1,corrupt=0.1,seed="+strconv.FormatUint(testSeed(t), 10))
		if !firedRule(js, "combine-objects") {
			t.Fatalf("combine-objects did not fire: %+v", js.Rounds)
		}
	})
}

// reads reports whether fragment n has an exchange leaf reading stage id.
func reads(n *plan.Node, id int) bool {
	found := false
	plan.Walk(n, func(x *plan.Node) {
		found = found || (x.Kind == plan.KindExchange && x.Stage == id)
	})
	return found
}
