package tests

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/planner/plan"
)

// TestCancelUselessStage: the build side of a partitioned inner join comes
// back empty while the probe side is still running; the re-plan skips the
// join and cancels the probe side's in-flight and pending tasks instead of
// waiting for them, and the answer is still right.
func TestCancelUselessStage(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", func(o *local.Options) {
		o.BroadcastBytes = -1 // partitioned joins only
		o.Functions = 2
		o.Coordinator.SplitBytes = 32 << 10 // many small lineitem tasks
		o.Coordinator.AQE.MaxSplitBytes = 0 // (size-scans would make them 2)
		o.Coordinator.DeferProbeRatio = 0   // start both join sides at once
	})
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	q := `select l_returnflag, count(*) as n from lineitem, orders
		where l_orderkey = o_orderkey and o_totalprice < 0 group by l_returnflag`
	res := run(t, st, q, true)
	compareRows(t, sluiceRows(res), duckRows(t, db, q), false)
	js := res.Status
	if !firedRule(js, "propagate-empty") {
		t.Fatalf("propagate-empty did not fire: %+v", js.Rounds)
	}
	cancelled := 0
	for _, s := range js.Stages {
		if s.State == coordinator.StageSkipped && s.Tasks > 0 {
			cancelled++
			if s.TasksDone >= s.Tasks {
				t.Fatalf("stage %d was cancelled after all its %d tasks finished", s.ID, s.Tasks)
			}
		}
	}
	if cancelled == 0 {
		t.Fatalf("no running stage was cancelled: stages %+v", js.Stages)
	}
}

// TestBroadcastSmallJoinSide: the planner chose a partitioned join (its
// estimate said the build side was big), the build side came back small,
// and select-join broadcast it into the probe side's stage: the join stage
// no longer reads the build stage, the probe stage shuffles fewer bytes,
// and the answer is unchanged.
func TestBroadcastSmallJoinSide(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", func(o *local.Options) {
		o.BroadcastBytes = -1 // the planner never broadcasts
		o.Coordinator.AQE.BroadcastBytes = 1 << 20
		o.Coordinator.DeferProbeRatio = 2 // lineitem waits for the much smaller orders
	})
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	q := `select o_orderpriority, count(*) as n, sum(l_quantity) as q from lineitem, orders
		where l_orderkey = o_orderkey and o_totalprice > 300000 group by o_orderpriority`
	want := duckRows(t, db, q)
	static := run(t, st, q, false)
	compareRows(t, sluiceRows(static), want, false)
	adaptive := run(t, st, q, true)
	compareRows(t, sluiceRows(adaptive), want, false)
	if !firedRule(adaptive.Status, "select-join") {
		t.Fatalf("select-join did not fire: %+v", adaptive.Status.Rounds)
	}
	shuffled := func(js *coordinator.JobStatus) (b int64) {
		for _, s := range js.Stages {
			b += s.Bytes
		}
		return b
	}
	t.Logf("bytes shuffled: static %d, adaptive %d", shuffled(static.Status), shuffled(adaptive.Status))
	if shuffled(adaptive.Status) >= shuffled(static.Status) {
		t.Fatalf("broadcasting the small side did not reduce the bytes shuffled")
	}
}

// TestSplitSkew: one join key holds half the rows of the fact table; its
// partition is split into several tasks over the fact side's map outputs
// (the dimension side replicated), with the same answer as the static plan.
func TestSplitSkew(t *testing.T) {
	dir := t.TempDir()
	db := openDuck(t, dataDir(t, *sfFlag))
	for name, q := range map[string]string{
		"fact": `SELECT CASE WHEN i % 2 = 0 THEN 7 ELSE i % 1000 END AS k, i AS v FROM range(200000) t(i)`,
		"dim":  `SELECT i AS k, 'name' || (i % 13) AS name FROM range(1000) t(i)`,
	} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("COPY (" + q + ") TO '" + filepath.Join(dir, name, name+".parquet") + "' (FORMAT parquet, ROW_GROUP_SIZE 10000)"); err != nil {
			t.Fatal(err)
		}
	}
	db = openDuckDir(t, dir, "fact", "dim")
	st := startStack(t, "", func(o *local.Options) {
		o.BroadcastBytes = -1                 // partitioned join
		o.Coordinator.AQE.BroadcastBytes = -1 // and it stays partitioned
		o.Coordinator.AQE.SkewMinBytes = 1 << 10
		o.Coordinator.SplitBytes = 64 << 10 // several map tasks over fact
		o.Coordinator.AQE.MaxSplitBytes = 0 // (size-scans would make them 2)
		// Tasks this small would share invocations (packing): the split
		// must show as tasks of their own.
		o.Coordinator.PackBytes = 0
	})
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	q := `select name, count(*) as n, sum(v) as s from fact, dim where fact.k = dim.k group by name`
	want := duckRows(t, db, q)
	static := run(t, st, q, false)
	compareRows(t, sluiceRows(static), want, false)
	adaptive := run(t, st, q, true)
	compareRows(t, sluiceRows(adaptive), want, false)
	if !firedRule(adaptive.Status, "split-skew") {
		for _, r := range adaptive.Status.Rounds {
			for id, st := range r.Stats {
				t.Logf("round %d stage %d: %+v", r.Round, id, st)
			}
		}
		t.Fatalf("split-skew did not fire")
	}
	// Coalescing alone packs this small stage into one task; the split
	// skewed partition adds tasks of its own.
	join := adaptive.Status.Stages[2]
	t.Logf("join stage: %d tasks adaptive, %d static", join.Tasks, static.Status.Stages[2].Tasks)
	if join.Tasks < 3 || join.Invoked != join.Tasks {
		t.Fatalf("join stage ran %d tasks (%d invoked), want the skewed partition split over several", join.Tasks, join.Invoked)
	}
}

// TestUnbroadcastBigSide: the planner broadcast a join side (its estimate
// said small), the side came back big, and the re-planner turned the join
// into a partitioned one, adding two stages to the running plan; the answer
// is unchanged.
func TestUnbroadcastBigSide(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", func(o *local.Options) {
		o.BroadcastBytes = 1 << 40 // the planner broadcasts every join side
		o.Coordinator.AQE.UnbroadcastBytes = 64 << 10
		// The broadcast side must run as a stage of its own for its size
		// to come back (orders would otherwise be read by each lineitem
		// task directly: inline-scans).
		o.Coordinator.AQE.InlineScanBytes = 0
	})
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	q := `select o_orderpriority, count(*) as n, sum(l_quantity) as q from lineitem, orders
		where l_orderkey = o_orderkey group by o_orderpriority`
	want := duckRows(t, db, q)
	static := run(t, st, q, false)
	compareRows(t, sluiceRows(static), want, false)
	adaptive := run(t, st, q, true)
	compareRows(t, sluiceRows(adaptive), want, false)
	if !firedRule(adaptive.Status, "unbroadcast") {
		t.Fatalf("unbroadcast did not fire: %+v", adaptive.Status.Rounds)
	}
	if a, s := len(adaptive.Status.Stages), len(static.Status.Stages); a != s+2 {
		t.Fatalf("adaptive plan has %d stages, static %d: want two added", a, s)
	}
}

// TestSizeScans: a table of many static splits is read by one scan task
// per slot in adaptive jobs (size-scans), by one task per split in static
// ones, and both answers equal DuckDB's. The scan stage's objects, and so
// its readers' GETs, shrink with its tasks.
func TestSizeScans(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", func(o *local.Options) {
		o.Functions = 3
		o.Coordinator.AQE.Parallelism = 2 // whatever the cores: two slots
		o.Coordinator.SplitBytes = 64 << 10
		o.Coordinator.PackBytes = 0 // every task its own invocation
	})
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	q := `select l_returnflag, l_linestatus, count(*) as n, sum(l_extendedprice) as s
		from lineitem where l_shipdate <= date '1998-09-01' group by l_returnflag, l_linestatus`
	want := duckRows(t, db, q)
	scanTasks := func(js *coordinator.JobStatus) int {
		for _, s := range js.Stages {
			scans := false
			if s.Plan != nil {
				plan.Walk(s.Plan, func(n *plan.Node) { scans = scans || n.Kind == plan.KindScan })
			}
			if scans {
				return s.Invoked
			}
		}
		t.Fatalf("no scan stage in %+v", js.Stages)
		return 0
	}
	static := run(t, st, q, false)
	compareRows(t, sluiceRows(static), want, false)
	adaptive := run(t, st, q, true)
	compareRows(t, sluiceRows(adaptive), want, false)
	if !firedRule(adaptive.Status, "size-scans") {
		t.Fatalf("size-scans did not fire: %+v", adaptive.Status.Rounds)
	}
	ns, na := scanTasks(static.Status), scanTasks(adaptive.Status)
	t.Logf("lineitem scan: %d tasks static, %d adaptive", ns, na)
	if na != 2 || ns <= 2 {
		t.Fatalf("lineitem scan ran %d tasks static and %d adaptive; want more than 2 and 2", ns, na)
	}
}
