package tests

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/local"
)

var (
	spillMemFlag     = flag.String("spill-function-memory", "4MiB", "BenchmarkSpill: each function's memory (operators get half)")
	spillQueriesFlag = flag.String("spill-queries", "q01,q03,q09,q13,q18,q21", "BenchmarkSpill: the TPC-H queries to run (comma-separated, or all)")
)

// BenchmarkSpill runs TPC-H queries at the scale factor of -sf on
// functions of -spill-function-memory (make bench-scale: SF 10 on 512 MiB
// functions; 4 MiB at SF 0.1 to force spilling), and DuckDB on the same
// files in the same run. Per query it prints both times, whether the
// answer equals DuckDB's, the peak operator memory of a task (against the
// operator budget, half the function's memory; over the whole function's
// memory fails the benchmark),
// the bytes and files spilled, the S3 requests by verb, the functions
// invoked and the $ estimate (list prices), then totals and the PUTs the
// old one-object-per-partition layout would have issued (an upper bound:
// every task writing every partition of its output, plus its manifest).
// Last it prints a planning-only projection of the same queries at SF 100
// and SF 1,000 (projectQuery: synthetic statistics, no data). A wrong
// answer or a task over its function's memory fails the benchmark.
func BenchmarkSpill(b *testing.B) {
	if _, err := os.Stat(filepath.Join("..", "planner", "testdata", "tpch", "q01.sql")); err != nil {
		b.Skip("TPC-H query texts not present")
	}
	fnMem, err := humanize.ParseBytes(*spillMemFlag)
	if err != nil {
		b.Fatalf("-spill-function-memory: %v", err)
	}
	budget := int64(fnMem) / function.OperatorMemoryShare
	dir := dataDir(b, *sfFlag)
	db := openDuck(b, dir)
	st := benchStack(b, func(o *local.Options) {
		o.Coordinator.SplitBytes = 32 << 20
		o.Functions = 4
		o.FunctionMemory = int64(fnMem)
	})
	st.Runtime.SpillDir = b.TempDir()
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		b.Fatal(err)
	}
	pick := map[string]bool{}
	for _, q := range strings.Split(*spillQueriesFlag, ",") {
		pick[strings.TrimSpace(q)] = true
	}
	report := fmt.Sprintf("\nTPC-H SF %g, 4 functions of %s (task budget %s)\n%-6s %9s %9s %6s %6s %10s %10s %6s %7s %7s %5s %5s %6s %9s %9s\n",
		*sfFlag, humanize.IBytes(fnMem), humanize.IBytes(uint64(budget)), "query", "sluice(s)", "duckdb(s)", "ratio", "answer",
		"peak mem", "spilled", "files", "GET", "PUT", "LIST", "DEL", "fns", "$", "old PUTs")
	var tot struct {
		sl, dk                           time.Duration
		get, put, list, del, inv, oldPut int64
		dollars                          float64
		wrong, over                      int
	}
	for _, q := range tpchQueries(b) {
		if !pick["all"] && !pick[q.name] {
			continue
		}
		b.Run(q.name, func(b *testing.B) {
			var sl, dk time.Duration
			var peak, spilled, files int64
			answer := "ok"
			var cost coordinator.Cost
			var oldPut int64
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				res := run(b, st, q.sql, true)
				sl += time.Since(t0)
				for _, s := range res.Status.Stages {
					peak = max(peak, s.PeakMemoryBytes)
					spilled += s.SpillBytes
					files += s.SpillFiles
					oldPut += int64(s.Tasks) * (int64(partitionCount(s.Output)) + 1)
				}
				if c := res.Status.Cost; c != nil {
					cost.S3.Get += c.S3.Get
					cost.S3.Put += c.S3.Put
					cost.S3.List += c.S3.List
					cost.S3.Delete += c.S3.Delete
					cost.Invocations += c.Invocations
					cost.Dollars += c.Dollars
				}
				t0 = time.Now()
				want := duckRows(b, db, q.sql)
				dk += time.Since(t0)
				if d := rowsDiff(sluiceRows(res), want, false); d != "" {
					answer = "WRONG"
					b.Errorf("%s: answer differs from DuckDB: %s", q.name, d)
				}
			}
			// The operator budget is half the function's memory (the rest
			// holds decoded input and output buffers); an operator that
			// spills is over it by the one batch that did not fit while
			// it spills (MemoryPool.spill). A task whose operators held
			// more than the whole function's memory is a failure.
			if peak > int64(fnMem) {
				b.Errorf("%s: a task's operators held %s, over the function's %s", q.name, humanize.IBytes(uint64(peak)), humanize.IBytes(fnMem))
				tot.over++
			}
			if answer != "ok" {
				tot.wrong++
			}
			n := float64(b.N)
			b.ReportMetric(sl.Seconds()/n, "sluice_s/op")
			b.ReportMetric(dk.Seconds()/n, "duckdb_s/op")
			b.ReportMetric(float64(peak), "peak_B")
			b.ReportMetric(float64(spilled)/n, "spill_B/op")
			per := func(v int64) int64 { return v / int64(b.N) }
			report += fmt.Sprintf("%-6s %9.2f %9.2f %6.1f %6s %10s %10s %6d %7d %7d %5d %5d %6d %9.5f %9d\n", q.name, sl.Seconds()/n, dk.Seconds()/n,
				sl.Seconds()/dk.Seconds(), answer, humanize.IBytes(uint64(peak)), humanize.IBytes(uint64(spilled)/uint64(b.N)), per(files),
				per(cost.S3.Get), per(cost.S3.Put), per(cost.S3.List), per(cost.S3.Delete), per(cost.Invocations), cost.Dollars/n, per(oldPut))
			tot.sl += sl / time.Duration(b.N)
			tot.dk += dk / time.Duration(b.N)
			tot.get, tot.put, tot.list, tot.del = tot.get+per(cost.S3.Get), tot.put+per(cost.S3.Put), tot.list+per(cost.S3.List), tot.del+per(cost.S3.Delete)
			tot.inv, tot.oldPut, tot.dollars = tot.inv+per(cost.Invocations), tot.oldPut+per(oldPut), tot.dollars+cost.Dollars/n
		})
	}
	report += fmt.Sprintf("%-6s %9.2f %9.2f %6.1f %6s %10s %10s %6s %7d %7d %5d %5d %6d %9.5f %9d\n", "total", tot.sl.Seconds(), tot.dk.Seconds(),
		tot.sl.Seconds()/tot.dk.Seconds(), fmt.Sprintf("%d bad", tot.wrong), fmt.Sprintf("%d over", tot.over), "", "", tot.get, tot.put, tot.list, tot.del, tot.inv, tot.dollars, tot.oldPut)
	var picked []query
	for _, q := range tpchQueries(b) {
		if pick["all"] || pick[q.name] {
			picked = append(picked, q)
		}
	}
	// The planning-only projection: the run's own scale (to set the model
	// against the measured counts above), then SF 100 and SF 1,000.
	report += projectionReport(context.Background(), st.Catalog, picked, *sfFlag, []float64{*sfFlag, 100, 1000}, int64(fnMem), 32<<20)
	fmt.Fprint(os.Stderr, report)
}

// partitionCount is the partition count of a stage's output as the status
// shows it ("hash(k) x8": 8; "single": 1).
func partitionCount(output string) int {
	if i := strings.LastIndex(output, " x"); i >= 0 {
		if n, err := strconv.Atoi(output[i+2:]); err == nil {
			return n
		}
	}
	return 1
}
