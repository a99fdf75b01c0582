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

	runWith := func(budget int64, faults string) (*coordinator.JobStatus, map[int]int64) {
		return combineRun(t, dir, q, want, budget, faults)
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
	stage := func(js *coordinator.JobStatus, id int) coordinator.StageStatus { return jobStage(t, js, id) }
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

// combineRun runs q over the tables in dir (one scan task per row group,
// no size-scans) with the GET budget of combine-objects (0: off) and the
// faults given (""), checks the answer against want, and returns the
// job's status and the GETs each stage issued.
func combineRun(t *testing.T, dir, q string, want []row, budget int64, faults string) (*coordinator.JobStatus, map[int]int64) {
	t.Helper()
	ctx := context.Background()
	faulty := injectFaults(t, faults)
	st := startStack(t, "", func(o *local.Options) {
		o.Partitions = 16
		o.Coordinator.SplitBytes = 1        // one task per row group
		o.Coordinator.AQE.MaxSplitBytes = 0 // even in adaptive jobs (no size-scans)
		// A reader of 16 partitions stays ~8 to 16 tasks.
		o.Coordinator.AQE.TargetPartitionBytes = 160 << 10
		o.Coordinator.AQE.GetBudget = budget
		faulty.options(o)
	})
	faulty.attach(st)
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
		if len(s.Cost) == 0 {
			continue // the stage did not run (skipped, or fused into its reader)
		}
		n, err := strconv.ParseInt(s.Cost["s3_get"], 10, 64)
		if err != nil {
			t.Fatalf("stage %d has no s3_get figure: %v", s.ID, s.Cost)
		}
		gets[s.ID] = n
	}
	return res.Status, gets
}

// faultRig injects function faults into a stack (injectFaults).
type faultRig struct {
	t      *testing.T
	faults string
	fi     *coordinator.FaultInvoker
}

// injectFaults returns a rig that wraps a stack's invoker in a
// FaultInvoker with faults (coordinator.ParseFaults; "": none): call
// options in startStack's option function and attach on the stack.
func injectFaults(t *testing.T, faults string) *faultRig { return &faultRig{t: t, faults: faults} }

func (r *faultRig) options(o *local.Options) {
	if r.faults == "" {
		return
	}
	fc, err := coordinator.ParseFaults(r.faults)
	if err != nil {
		r.t.Fatal(err)
	}
	o.Coordinator.MaxAttempts = 8
	o.Coordinator.PackBytes = 0 // faults per task, not per packed invocation
	o.WrapInvoker = func(inv coordinator.Invoker) coordinator.Invoker {
		r.fi = coordinator.NewFaultInvoker(inv, nil, fc) // its bucket is set once the stack runs
		return r.fi
	}
}

func (r *faultRig) attach(st *local.Stack) {
	if r.fi != nil {
		r.fi.Bucket = st.Bucket
		r.t.Cleanup(func() { r.t.Logf("faults injected: %s", r.fi) })
	}
}

// jobStage returns stage id of a job's status.
func jobStage(t *testing.T, js *coordinator.JobStatus, id int) coordinator.StageStatus {
	t.Helper()
	for _, s := range js.Stages {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("job %s has no stage %d", js.ID, id)
	return coordinator.StageStatus{}
}

// TestCombineObjectsScanReader: the probe side of a broadcast join is a
// scan stage whose ~49 tasks (one per row group: DuckDB writes 2,048-row
// multiples) each read the broadcast whole, from the ~49 map objects of the
// dimension's scan: ~2,400 GETs. With
// a GET budget of 100, combine-objects counts the scan stage's tasks from
// the driver's measure of its table and merges the broadcast's objects
// first. The answer equals DuckDB's, and the scan stage issues far fewer
// GETs.
func TestCombineObjectsScanReader(t *testing.T) {
	dir := t.TempDir()
	db := openDuck(t, dataDir(t, *sfFlag))
	for _, c := range []struct{ table, sql string }{
		{"dim", `SELECT i AS d_key, i % 7 AS d_group FROM range(100000) t(i)`},
		{"fact", `SELECT i % 120000 AS f_key, i AS f_v FROM range(100000) t(i)`},
	} {
		if err := os.MkdirAll(filepath.Join(dir, c.table), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`COPY (` + c.sql + `) TO '` + filepath.Join(dir, c.table, c.table+".parquet") +
			`' (FORMAT parquet, ROW_GROUP_SIZE 1000)`); err != nil {
			t.Fatal(err)
		}
	}
	db = openDuckDir(t, dir, "dim", "fact")
	q := `select d_group, count(*) as n, sum(f_v) as s from fact join dim on f_key = d_key group by d_group`
	want := duckRows(t, db, q)

	off, offGets := combineRun(t, dir, q, want, 0, "")
	on, onGets := combineRun(t, dir, q, want, 100, "")
	if !firedRule(on, "combine-objects") {
		t.Fatalf("combine-objects did not fire: %+v", on.Rounds)
	}
	// The stage that scans fact and reads the broadcast: in the run with
	// the rule it reads a combining stage, which reads the broadcast.
	var probe, combiner = -1, -1
	for _, s := range on.Stages {
		if s.Plan != nil && s.Plan.Kind == plan.KindExchange && s.Plan.SplitObjects {
			combiner = s.ID
		}
	}
	for _, s := range on.Stages {
		if combiner >= 0 && reads(s.Plan, combiner) && scansTable(s.Plan, "fact") {
			probe = s.ID
		}
	}
	if probe < 0 || combiner < 0 {
		t.Fatalf("no scan of fact reading a combining stage (combining stage %d): %+v", combiner, on.Rounds)
	}
	tasks := jobStage(t, on, probe).Tasks
	t.Logf("scan stage %d: %d tasks; GETs %d without the rule, %d with (combining stage %d: %d tasks, %d GETs)",
		probe, tasks, offGets[probe], onGets[probe], combiner, jobStage(t, on, combiner).Tasks, onGets[combiner])
	if tasks < 40 {
		t.Fatalf("scan stage %d ran %d tasks, want one per row group (~49)", probe, tasks)
	}
	if onGets[probe]*4 > offGets[probe] {
		t.Fatalf("scan stage %d issued %d GETs with the combining stage, %d without: want at most a quarter", probe, onGets[probe], offGets[probe])
	}
	if len(on.Stages) != len(off.Stages)+1 {
		t.Fatalf("%d stages with the rule, %d without: want one added", len(on.Stages), len(off.Stages))
	}
	// Under injected faults: lost or corrupt broadcast objects make the
	// combining stage's producers (and it) run again; the answer stays.
	t.Run("faults", func(t *testing.T) {
		js, _ := combineRun(t, dir, q, want, 100, "crash=0.03,error=0.03,duplicate=0.05,lose=0.1,corrupt=0.1,seed="+strconv.FormatUint(testSeed(t), 10))
		if !firedRule(js, "combine-objects") {
			t.Fatalf("combine-objects did not fire: %+v", js.Rounds)
		}
	})
}

// scansTable reports whether fragment n scans table.
func scansTable(n *plan.Node, table string) bool {
	found := false
	plan.Walk(n, func(x *plan.Node) {
		found = found || (x.Kind == plan.KindScan && x.Scan != nil && x.Scan.Table == table)
	})
	return found
}

// reads reports whether fragment n has an exchange leaf reading stage id.
func reads(n *plan.Node, id int) bool {
	found := false
	plan.Walk(n, func(x *plan.Node) {
		found = found || (x.Kind == plan.KindExchange && x.Stage == id)
	})
	return found
}
