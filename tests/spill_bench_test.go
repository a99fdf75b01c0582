package tests

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/sluicedb/sluice/local"
)

var (
	spillMemFlag     = flag.String("spill-function-memory", "4MiB", "BenchmarkSpill: each function's memory (operators get half)")
	spillQueriesFlag = flag.String("spill-queries", "q01,q03,q09,q13,q18,q21", "BenchmarkSpill: the TPC-H queries to run (comma-separated, or all)")
)

// BenchmarkSpill runs TPC-H queries at the scale factor of -sf on
// functions of a small memory (-spill-function-memory), so their sorts,
// aggregations and joins spill to disk, and DuckDB on the same files in
// the same run; it prints per query both times, the peak task memory
// (against the task budget) and the bytes and files spilled.
func BenchmarkSpill(b *testing.B) {
	if _, err := os.Stat(filepath.Join("..", "planner", "testdata", "tpch", "q01.sql")); err != nil {
		b.Skip("TPC-H query texts not present")
	}
	fnMem, err := humanize.ParseBytes(*spillMemFlag)
	if err != nil {
		b.Fatalf("-spill-function-memory: %v", err)
	}
	dir := dataDir(b, *sfFlag)
	db := openDuck(b, dir)
	st := startStack(b, "", func(o *local.Options) {
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
	report := fmt.Sprintf("\nTPC-H SF %g, 4 functions of %s (task budget %s)\n%-6s %10s %10s %8s %12s %12s %8s\n",
		*sfFlag, humanize.IBytes(fnMem), humanize.IBytes(fnMem/2), "query", "sluice(s)", "duckdb(s)", "ratio", "peak mem", "spilled", "files")
	for _, q := range tpchQueries(b) {
		if !pick["all"] && !pick[q.name] {
			continue
		}
		b.Run(q.name, func(b *testing.B) {
			var sl, dk time.Duration
			var peak, spilled, files int64
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				res := run(b, st, q.sql, true)
				sl += time.Since(t0)
				for _, s := range res.Status.Stages {
					peak = max(peak, s.PeakMemoryBytes)
					spilled += s.SpillBytes
					files += s.SpillFiles
				}
				t0 = time.Now()
				duckRows(b, db, q.sql)
				dk += time.Since(t0)
			}
			n := float64(b.N)
			b.ReportMetric(sl.Seconds()/n, "sluice_s/op")
			b.ReportMetric(dk.Seconds()/n, "duckdb_s/op")
			b.ReportMetric(float64(peak), "peak_B")
			b.ReportMetric(float64(spilled)/n, "spill_B/op")
			report += fmt.Sprintf("%-6s %10.3f %10.3f %8.1f %12s %12s %8d\n", q.name, sl.Seconds()/n, dk.Seconds()/n,
				sl.Seconds()/dk.Seconds(), humanize.IBytes(uint64(peak)), humanize.IBytes(uint64(spilled)/uint64(b.N)), files/int64(b.N))
		})
	}
	fmt.Fprint(os.Stderr, report)
}
