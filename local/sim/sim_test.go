package sim

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local/redisserver"
	"github.com/sluicedb/sluice/planner/adaptive"
	"github.com/sluicedb/sluice/planner/catalog"
)

// startRedis starts a redis-server for the test (skipped without one,
// outside CI).
func startRedis(t testing.TB) string {
	t.Helper()
	srv, err := redisserver.Start(context.Background())
	if errors.Is(err, redisserver.ErrNotInstalled) && os.Getenv("CI") == "" {
		t.Skip("redis-server not installed")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv.Addr
}

func testOptions(addr string, sf float64) Options {
	cfg := coordinator.DefaultConfig()
	cfg.Concurrency = 256
	cfg.FunctionMemory = 1769 << 20
	return Options{SF: sf, Factor: 20, RedisAddr: addr, Coordinator: cfg,
		Platform: DefaultPlatformConfig(), Store: DefaultStoreConfig()}
}

func TestSimSmoke(t *testing.T) {
	addr := startRedis(t)
	ctx := context.Background()
	s, err := New(ctx, testOptions(addr, 10))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range []Query{{"q06", "select sum(l_extendedprice * l_discount) as revenue from lineitem where l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01' and l_discount between 0.05 and 0.07 and l_quantity < 24"},
		{"q03", "select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, o_shippriority from customer, orders, lineitem where c_mktsegment = 'BUILDING' and c_custkey = o_custkey and l_orderkey = o_orderkey and o_orderdate < date '1995-03-15' and l_shipdate > date '1995-03-15' group by l_orderkey, o_orderdate, o_shippriority order by revenue desc, o_orderdate limit 10"}} {
		r := s.Run(ctx, q)
		t.Logf("%+v", r)
		if r.State != "succeeded" {
			t.Fatalf("%s: %s %s", q.Name, r.State, r.Error)
		}
	}
}

// TestScanStageNoTaskLost runs a static count(*) over lineitem at SF 10
// cut into about a thousand scan tasks, with the coordinator allowed
// twice the modelled account's concurrency (so Lambda answers 429), a
// scale-up ramp, 5% stragglers and 2% crashes. Every task must commit
// exactly once: the scan stage's committed input rows are the table's
// rows, its output one partial count per task.
func TestScanStageNoTaskLost(t *testing.T) {
	addr := startRedis(t)
	ctx := context.Background()
	opts := testOptions(addr, 10)
	opts.Coordinator.Adaptive = false
	opts.Coordinator.SplitBytes = 2 << 20
	opts.Coordinator.Concurrency = 256
	opts.Platform.Concurrency = 128
	opts.Platform.BurstInitial, opts.Platform.BurstStep = 64, 32
	opts.Platform.StragglerRate, opts.Platform.CrashRate = 0.05, 0.02
	s, err := New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var lineitem *catalog.Table
	for _, tb := range s.Tables {
		if tb.Name == "lineitem" {
			lineitem = tb
		}
	}
	const rows = 60_012_150 // lineitem at SF 10
	if lineitem.Rows != rows {
		t.Fatalf("virtual lineitem has %d rows, want %d", lineitem.Rows, rows)
	}
	tasks := len(adaptive.Splits(lineitem.Files, opts.Coordinator.SplitBytes))
	if tasks < 900 {
		t.Fatalf("%d scan tasks: the test wants about a thousand", tasks)
	}
	r := s.Run(ctx, Query{Name: "count", SQL: "select count(*) from lineitem"})
	if r.State != "succeeded" {
		t.Fatalf("job %s: %s", r.State, r.Error)
	}
	t.Logf("%d scan tasks; in flight at most %d; %d invocations, %d Lambda 429s, %d crashes, %d stragglers, %d retries, %d hedges",
		tasks, r.PeakConc, r.Functions, r.Throttled, r.Crashes, r.Stragglers, r.Retries, r.Hedges)
	for _, tc := range []struct {
		stage     int
		tasks     int
		inputRows int64
		outRows   int64
	}{
		{0, tasks, rows, int64(tasks)}, // one partial count per scan task
		{1, 1, int64(tasks), 1},        // the final count
	} {
		st, err := s.Jobs.Stage(ctx, r.Job, tc.stage)
		if err != nil {
			t.Fatal(err)
		}
		if st.Tasks != tc.tasks || st.Done != tc.tasks || st.InputRows != tc.inputRows || st.Rows != tc.outRows {
			t.Errorf("stage %d: %d tasks, %d committed, %d input rows, %d rows out; want %d, %d, %d, %d",
				tc.stage, st.Tasks, st.Done, st.InputRows, st.Rows, tc.tasks, tc.tasks, tc.inputRows, tc.outRows)
		}
	}
	// The faults were injected (not timings: counts of what the models did).
	if r.Throttled == 0 || r.Crashes == 0 || r.Stragglers == 0 {
		t.Errorf("faults not injected: %d 429s, %d crashes, %d stragglers", r.Throttled, r.Crashes, r.Stragglers)
	}
	if r.PeakConc > opts.Platform.Concurrency {
		t.Errorf("%d invocations ran at once, over the account's %d", r.PeakConc, opts.Platform.Concurrency)
	}
}
