package tests

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/coordinator/sqlsession"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
)

var invokeN = flag.Int("invoke-n", 50, "BenchmarkInvoke: no-op and real tasks invoked per invoker")

// benchTasks makes TaskSpecs for BenchmarkInvoke: no-op tasks (a stage
// whose fragment is one Empty leaf: read the cached fragment, write an
// empty output's manifest) and real tasks (the scan stage of TPC-H Q6 over
// one lineitem file each: ranged Parquet reads, filter, partial aggregate,
// shuffle write).
type benchTasks struct {
	job            string
	noopKey        string
	realKey        string
	files          []function.Split
	seq            int
	bucket, prefix string
}

func newBenchTasks(b *testing.B, st *local.Stack) *benchTasks {
	b.Helper()
	ctx := context.Background()
	bt := &benchTasks{job: coordinator.NewJobID(), bucket: st.S3.Bucket}
	// No-op: one Empty leaf, one output partition.
	noop := &plan.Stage{ID: 0, Root: &plan.Node{Kind: plan.KindEmpty, Limit: -1,
		Schema: plan.Schema{{Name: "x", Type: plan.Int64Type}}}, Output: plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}}
	bt.noopKey = "jobs/" + bt.job + "/plans/0-noop.json"
	benchPut(b, st, bt.noopKey, noop)
	// Real: the scan stage of Q6.
	q := tpchQueries(b)[5]
	pl := &sqlsession.Session{Catalog: st.Catalog, Options: planner.Options{Partitions: 4}}
	g, _, err := pl.Plan(ctx, q.sql)
	if err != nil {
		b.Fatal(err)
	}
	var scan *plan.Stage
	for _, s := range g.Stages {
		if len(s.Inputs) == 0 {
			scan = s
		}
	}
	if scan == nil {
		b.Fatal("Q6 has no scan stage")
	}
	scan.ID = 1
	bt.realKey = "jobs/" + bt.job + "/plans/1-q6-scan.json"
	benchPut(b, st, bt.realKey, scan)
	lay, err := st.Catalog.Layout(ctx, "lineitem")
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range lay.Files {
		bt.files = append(bt.files, function.Split{Key: f.Key, Size: f.Size})
	}
	return bt
}

func benchPut(b *testing.B, st *local.Stack, key string, v any) {
	b.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	if err := st.Bucket.Put(context.Background(), key, body); err != nil {
		b.Fatal(err)
	}
}

// spec returns the next task's encoded spec; real picks the Q6 scan.
func (bt *benchTasks) spec(real bool) []byte {
	bt.seq++
	s := &function.TaskSpec{Version: function.SpecVersion, Job: bt.job, Task: bt.seq, Attempt: 1,
		Bucket: bt.bucket, Prefix: bt.prefix, PlanKey: bt.noopKey}
	if real {
		s.Stage, s.PlanKey = 1, bt.realKey
		s.Splits = []function.Split{bt.files[bt.seq%len(bt.files)]}
	}
	s.OutputPrefix = shuffle.AttemptPrefix(bt.prefix, bt.job, s.Stage, s.Task, 1)
	out, _ := s.Encode()
	return out
}

// latencies invokes n tasks one after the other (so each latency is one
// invocation's, without queueing) and returns them.
func latencies(b *testing.B, inv coordinator.Invoker, bt *benchTasks, n int, real bool) []time.Duration {
	b.Helper()
	ctx := context.Background()
	out := make([]time.Duration, 0, n)
	for range n {
		spec := bt.spec(real)
		start := time.Now()
		res, err := inv.Invoke(ctx, spec)
		d := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		var r function.TaskResult
		if err := json.Unmarshal(res, &r); err != nil || r.Error != "" {
			b.Fatalf("task failed: %s %v", res, err)
		}
		if real && r.InputRows == 0 {
			b.Fatalf("real task read nothing: %s", res)
		}
		out = append(out, d)
	}
	return out
}

func benchPct(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func benchMs(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

// BenchmarkInvoke measures per-invocation overhead and cold start of each
// invoker: the in-process pool, the HTTP function (one lean function
// process) and Lambda (the lean function under the Lambda Runtime
// Interface Emulator, invoked with aws-sdk-go-v2). For each, -invoke-n
// no-op and real tasks, invoked one at a time; it prints p50 and p99. Cold
// is the first invocation of a fresh function (HTTP: from starting the
// process; Lambda: the emulator starts the function on it).
//
//	make bench-invoke INVOKE_N=200
func BenchmarkInvoke(b *testing.B) {
	rie := rieBin(b)
	bin := buildFunction(b)
	dir := dataDir(b, *sfFlag)
	e := startFaaSEnv(b, dir)
	// Functions reach MinIO directly here (no test proxy in the path).
	env := slices.Clone(e.env)
	for i, kv := range env {
		if strings.HasPrefix(kv, "SLUICE_S3_ENDPOINT=") {
			env[i] = "SLUICE_S3_ENDPOINT=http://" + strings.TrimPrefix(e.st.S3.Endpoint, "http://")
		}
	}
	bt := newBenchTasks(b, e.st)
	n := *invokeN

	type row struct {
		name string
		cold time.Duration
		inv  coordinator.Invoker
	}
	var rows []row
	rows = append(rows, row{name: "in-process pool", inv: function.NewPool(e.st.Runtime, 1)})

	start := time.Now()
	u, _ := startHTTPFunction(b, bin, env)
	hi := coordinator.NewHTTPInvoker([]string{u}, 1)
	if _, err := hi.Invoke(context.Background(), bt.spec(false)); err != nil {
		b.Fatal(err)
	}
	rows = append(rows, row{name: "HTTP (sluice-function)", inv: hi, cold: time.Since(start)})

	fleet := startRIE(b, rie, bin, 1, env)
	li := newLambdaInvoker(b, fleet.Endpoints, nil)
	start = time.Now()
	if _, err := li.Invoke(context.Background(), bt.spec(false)); err != nil {
		b.Fatal(err)
	}
	rows = append(rows, row{name: "Lambda (RIE, aws-sdk-go-v2)", inv: li, cold: time.Since(start)})

	b.ResetTimer()
	var report strings.Builder
	fmt.Fprintf(&report, "\ninvocation latency, %d tasks of each kind per invoker, one at a time (TPC-H SF %g)\n", n, *sfFlag)
	fmt.Fprintf(&report, "%-28s %-6s %10s %10s %10s %10s\n", "invoker", "task", "cold", "p50", "p99", "max")
	for _, r := range rows {
		// Warm the real path (plan fragment cache, connections) once.
		latencies(b, r.inv, bt, 1, true)
		for _, real := range []bool{false, true} {
			ds := latencies(b, r.inv, bt, n, real)
			kind, cold := "no-op", "-"
			if real {
				kind = "real"
			} else if r.cold > 0 {
				cold = benchMs(r.cold)
			}
			fmt.Fprintf(&report, "%-28s %-6s %10s %10s %10s %10s\n", r.name, kind, cold, benchMs(benchPct(ds, 0.50)), benchMs(benchPct(ds, 0.99)), benchMs(slices.Max(ds)))
			key := strings.Fields(r.name)[0] + "-" + kind
			b.ReportMetric(float64(benchPct(ds, 0.50).Microseconds())/1000, key+"-p50-ms")
			b.ReportMetric(float64(benchPct(ds, 0.99).Microseconds())/1000, key+"-p99-ms")
		}
	}
	fmt.Fprint(os.Stdout, report.String())
}
