package tests

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/sluicedb/sluice/local"
)

var latencySF = flag.Float64("latency-sf", 0.01, "BenchmarkLatency: TPC-H scale factor")

// latencyQueries are the trivial queries whose wall time on a warm stack is
// the per-query floor: one scan stage, a two-stage GROUP BY, a metadata
// answer.
var latencyQueries = []query{
	{name: "count", sql: "select count(*) from lineitem"},
	{name: "minmax", sql: "select min(l_shipdate), max(l_shipdate) from lineitem"},
	{name: "groupby", sql: "select l_returnflag, l_linestatus, sum(l_quantity), count(*) from lineitem group by l_returnflag, l_linestatus order by 1, 2"},
	{name: "point", sql: "select n_name from nation where n_nationkey = 7"},
}

// BenchmarkLatency measures the fixed cost of a query on a warm embedded
// stack at SF 0.01 (LATENCY_N runs each, after two warm-up runs) and prints
// the median and the slowest run, against DuckDB's median on the same files
// in the same run.
func BenchmarkLatency(b *testing.B) {
	dir := dataDir(b, *latencySF)
	db := openDuck(b, dir)
	st := benchStack(b, func(o *local.Options) { o.Functions = *benchFunctions })
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		b.Fatal(err)
	}
	const n = 10
	report := fmt.Sprintf("\nLatency on a warm stack, TPC-H SF %g, median of %d\n%-8s %10s %10s %10s %8s %7s\n",
		*latencySF, n, "query", "sluice(ms)", "max(ms)", "duckdb(ms)", "ratio", "stages")
	for _, q := range latencyQueries {
		b.Run(q.name, func(b *testing.B) {
			for i := 0; i < 2; i++ {
				run(b, st, q.sql, true)
				duckRows(b, db, q.sql)
			}
			var sl, dk []time.Duration
			stages := 0
			for i := 0; i < n; i++ {
				t0 := time.Now()
				res := run(b, st, q.sql, true)
				sl = append(sl, time.Since(t0))
				stages = len(res.Status.Stages)
				t0 = time.Now()
				duckRows(b, db, q.sql)
				dk = append(dk, time.Since(t0))
			}
			ms, md := median(sl), median(dk)
			b.ReportMetric(ms.Seconds(), "sluice_s/op")
			b.ReportMetric(md.Seconds(), "duckdb_s/op")
			report += fmt.Sprintf("%-8s %10.1f %10.1f %10.1f %8.1f %7d\n", q.name, ms.Seconds()*1e3, maxDur(sl).Seconds()*1e3,
				md.Seconds()*1e3, ms.Seconds()/md.Seconds(), stages)
		})
	}
	fmt.Fprint(os.Stderr, report)
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func maxDur(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
