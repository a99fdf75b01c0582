package tests

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicedb/sluice/local"
)

var benchFunctions = flag.Int("functions", 0, "BenchmarkTPCH: in-process function slots (0: the default, one per core)")

// BenchmarkTPCH runs the TPC-H queries (Q1 and Q6 from the demo when the
// query texts are absent) on the embedded stack and on DuckDB over the same
// Parquet files in the same run, at the scale factor of -sf, and prints per
// query and in total: both times and their ratio, bytes shuffled and
// functions invoked.
func BenchmarkTPCH(b *testing.B) {
	dir := dataDir(b, *sfFlag)
	db := openDuck(b, dir)
	st := benchStack(b, func(o *local.Options) {
		o.Coordinator.SplitBytes = 32 << 20
		o.Functions = *benchFunctions // 0: one per core
	})
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		b.Fatal(err)
	}
	qs := []query{{name: "q01", sql: local.DemoQueries[0].SQL}, {name: "q06", sql: local.DemoQueries[1].SQL}}
	if _, err := os.Stat(filepath.Join("..", "planner", "testdata", "tpch", "q01.sql")); err == nil {
		qs = tpchQueries(b)
	}
	var totS, totD time.Duration
	report := fmt.Sprintf("\nTPC-H SF %g, %d in-process functions\n%-6s %10s %10s %8s %10s %14s %8s %8s\n",
		*sfFlag, st.Pool.Size(), "query", "sluice(s)", "duckdb(s)", "ratio", "functions", "shuffled(B)", "GET", "PUT")
	var totGet, totPut int64
	for _, q := range qs {
		b.Run(q.name, func(b *testing.B) {
			var sl, dk time.Duration
			var tasks int
			var shuffled, gets, puts int64
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				res := run(b, st, q.sql, true)
				sl += time.Since(t0)
				for _, s := range res.Status.Stages {
					tasks += s.Tasks
					shuffled += s.Bytes
				}
				if c := res.Status.Cost; c != nil {
					gets += c.S3.Get
					puts += c.S3.Put
				}
				t0 = time.Now()
				duckRows(b, db, q.sql)
				dk += time.Since(t0)
			}
			n := float64(b.N)
			b.ReportMetric(sl.Seconds()/n, "sluice_s/op")
			b.ReportMetric(dk.Seconds()/n, "duckdb_s/op")
			b.ReportMetric(sl.Seconds()/dk.Seconds(), "x_duckdb")
			totS += sl / time.Duration(b.N)
			totD += dk / time.Duration(b.N)
			totGet += gets / int64(b.N)
			totPut += puts / int64(b.N)
			report += fmt.Sprintf("%-6s %10.3f %10.3f %8.1f %10d %14d %8d %8d\n", q.name, sl.Seconds()/n,
				dk.Seconds()/n, sl.Seconds()/dk.Seconds(), tasks/b.N, shuffled/int64(b.N), gets/int64(b.N), puts/int64(b.N))
		})
	}
	report += fmt.Sprintf("%-6s %10.3f %10.3f %8.1f %10s %14s %8d %8d\n", "total", totS.Seconds(), totD.Seconds(), totS.Seconds()/totD.Seconds(),
		"", "", totGet, totPut)
	fmt.Fprint(os.Stderr, report)
}
