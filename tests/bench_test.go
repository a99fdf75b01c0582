package tests

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/sluicedb/sluice/local"
)

// BenchmarkQueries runs TPC-H Q1 and Q6 on the embedded stack and on DuckDB
// over the same Parquet files in the same run (scale factor from -sf), and
// reports both times and their ratio.
func BenchmarkQueries(b *testing.B) {
	dir := dataDir(b, *sfFlag)
	db := openDuck(b, dir)
	st := startStack(b, "", func(o *local.Options) {
		o.Coordinator.SplitBytes = 32 << 20
		o.Functions = 4
	})
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "\n%-6s %12s %12s %8s %8s %12s\n", "query", "sluice(s)", "duckdb(s)", "ratio", "tasks", "shuffled(B)")
	for _, q := range []query{{name: "q1", sql: local.DemoQueries[0].SQL}, {name: "q6", sql: local.DemoQueries[1].SQL}} {
		b.Run(q.name, func(b *testing.B) {
			var sl, dk time.Duration
			var tasks int
			var shuffled int64
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				res := run(b, st, q.sql, true)
				sl += time.Since(t0)
				for _, s := range res.Status.Stages {
					tasks += s.Tasks
					shuffled += s.Bytes
				}
				t0 = time.Now()
				duckRows(b, db, q.sql)
				dk += time.Since(t0)
			}
			ratio := sl.Seconds() / dk.Seconds()
			b.ReportMetric(sl.Seconds()/float64(b.N), "sluice_s/op")
			b.ReportMetric(dk.Seconds()/float64(b.N), "duckdb_s/op")
			b.ReportMetric(ratio, "x_duckdb")
			fmt.Fprintf(os.Stderr, "%-6s %12.3f %12.3f %8.1f %8d %12d\n", q.name, sl.Seconds()/float64(b.N),
				dk.Seconds()/float64(b.N), ratio, tasks/b.N, shuffled/int64(b.N))
		})
	}
}
