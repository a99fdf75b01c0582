package tests

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/shuffle"
)

// TestCostReport: a multi-stage job reports its S3 requests, invocations,
// function time and $ estimate; the functions' PUTs are at most one data
// object and one manifest per invocation, and the bucket holds at most one
// data object per task attempt.
func TestCostReport(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	ctx := context.Background()
	if _, err := st.LoadDir(ctx, dir); err != nil {
		t.Fatal(err)
	}
	q := `select o_orderpriority, count(*) as n, sum(l_quantity) as q from orders, lineitem
		where l_orderkey = o_orderkey and l_commitdate < l_receiptdate group by o_orderpriority order by o_orderpriority`
	res := run(t, st, q, true)
	compareRows(t, sluiceRows(res), duckRows(t, db, q), true)
	js, err := coordinator.NewClient(st.APIURL, "").Status(ctx, res.Status.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := js.Cost
	if c == nil {
		t.Fatal("job status has no cost report")
	}
	var invoked, attempts int
	for _, s := range js.Stages {
		invoked += s.Invoked
		attempts += s.Attempts
	}
	if invoked < 2 || c.Invocations < int64(invoked) || c.Invocations > int64(attempts) {
		t.Fatalf("%d invocations reported; stages invoked %d tasks in %d attempts", c.Invocations, invoked, attempts)
	}
	if c.S3.Get == 0 || c.S3.Put == 0 || c.S3.BytesRead == 0 || c.S3.BytesWritten == 0 {
		t.Fatalf("S3 requests missing from the report: %+v", c.S3)
	}
	if c.FunctionSeconds <= 0 || math.Abs(c.GBSeconds-c.FunctionSeconds) > 1e-9 { // 1 GiB functions
		t.Fatalf("function-seconds %g, GB-seconds %g", c.FunctionSeconds, c.GBSeconds)
	}
	want := *c
	want.Price(coordinator.DefaultPrices())
	s := c.S3
	s3 := float64(s.Put+s.Other+s.List)*0.005/1000 + float64(s.Get+s.Head)*0.0004/1000
	lambda := c.GBSeconds*0.0000166667 + float64(c.Invocations)*0.20/1e6
	if math.Abs(c.Dollars-want.Dollars) > 1e-12 || math.Abs(c.Dollars-(s3+lambda)) > 1e-12 {
		t.Fatalf("$%g reported, want $%g (S3 $%g + Lambda $%g)", c.Dollars, s3+lambda, s3, lambda)
	}
	// At most one data object per task attempt, plus its manifest.
	objs, err := st.Bucket.List(ctx, shuffle.JobPrefix("", js.ID))
	if err != nil {
		t.Fatal(err)
	}
	data, manifests := 0, 0
	for _, o := range objs {
		switch {
		case strings.HasSuffix(o.Key, "/"+shuffle.DataName):
			data++
		case strings.HasSuffix(o.Key, "/"+shuffle.ManifestName):
			manifests++
		}
	}
	if data == 0 || data > attempts || manifests > attempts || data > manifests {
		t.Fatalf("%d data objects and %d manifests for %d attempts", data, manifests, attempts)
	}
	t.Logf("cost: %+v; %d data objects, %d manifests, %d attempts", *c, data, manifests, attempts)
}

// BenchmarkShuffleRequests prints the S3 requests by verb of every TPC-H
// query (adaptive), from the stack's bucket counters: go test -run '^$'
// -bench ShuffleRequests -sf 0.1 ./tests/.
func BenchmarkShuffleRequests(b *testing.B) {
	dir := dataDir(b, *sfFlag)
	st := startStack(b, "", nil)
	ctx := context.Background()
	if _, err := st.LoadDir(ctx, dir); err != nil {
		b.Fatal(err)
	}
	report := fmt.Sprintf("\nS3 requests per TPC-H query, SF %g\n%-6s %8s %8s %8s %8s\n", *sfFlag, "query", "PUT", "GET", "LIST", "DELETE")
	var tp, tg, tl, td int64
	for _, q := range tpchQueries(b) {
		before := st.RequestStats()
		run(b, st, q.sql, true)
		d := st.RequestStats().Sub(before)
		tp, tg, tl, td = tp+d.Put, tg+d.Get, tl+d.List, td+d.Delete
		report += fmt.Sprintf("%-6s %8d %8d %8d %8d\n", q.name, d.Put, d.Get, d.List, d.Delete)
	}
	report += fmt.Sprintf("%-6s %8d %8d %8d %8d\n", "total", tp, tg, tl, td)
	fmt.Fprint(os.Stderr, report)
}
