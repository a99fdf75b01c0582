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

var groupByRows = flag.Int("groupby-rows", 10_000_000, "BenchmarkGroupBy: rows of the generated table")

// groupByRuns is how many timed runs of each engine a query's figure is
// the median of (after one warm-up run each).
const groupByRuns = 3

// groupByQueries are GROUP BY shapes over one wide event table: keys of
// low and high cardinality, strings and integers, one and several
// aggregates.
var groupByQueries = []query{
	{name: "str100_sum", sql: "select s100, sum(v) from events group by s100"},
	{name: "str100_multi", sql: "select s100, count(*), sum(v), min(d), max(d) from events group by s100"},
	{name: "int1k_sum", sql: "select k1000, sum(v) from events group by k1000"},
	{name: "str_int_sum", sql: "select s100, k10, sum(f) from events group by s100, k10"},
	{name: "int1m_count", sql: "select count(*) from (select k1m, count(*) c from events group by k1m) where c > 10"},
	{name: "str100_filter", sql: "select s100, avg(f) from events where k10 = 3 group by s100"},
	{name: "count", sql: "select count(*) from events"},
	{name: "minmax", sql: "select min(d), max(d), min(v), max(v) from events"},
}

// groupByData writes (once, cached under .tmp) the events table as
// Parquet with DuckDB's writer: dictionary-encoded strings, row groups of
// 122,880 rows, as users' files from DuckDB, Spark or pandas commonly are.
func groupByData(b testing.TB, rows int) string {
	root, err := filepath.Abs(filepath.Join("..", ".tmp", fmt.Sprintf("groupby-%d", rows)))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".complete")); err == nil {
		return root
	}
	os.RemoveAll(root)
	if err := os.MkdirAll(filepath.Join(root, "events"), 0o755); err != nil {
		b.Fatal(err)
	}
	db := openDuckOn(b, root, nil)
	const files = 4
	for f := 0; f < files; f++ {
		q := fmt.Sprintf(`COPY (SELECT 'segment_' || (hash(i) %% 100) AS s100, i %% 10 AS k10, (i * 7919) %% 1000 AS k1000,
			hash(i * 31) %% 1000000 AS k1m, (i %% 9973) AS v, (i %% 1000) / 7.0 AS f, DATE '2020-01-01' + CAST(i %% 1500 AS INTEGER) AS d
			FROM range(%d, %d) t(i)) TO '%s' (FORMAT parquet)`, f*rows/files, (f+1)*rows/files, filepath.Join(root, "events", fmt.Sprintf("part-%d.parquet", f)))
		if _, err := db.Exec(q); err != nil {
			b.Fatalf("duckdb: %v", err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return root
}

// BenchmarkGroupBy runs groupByQueries on the embedded stack and on DuckDB
// over the same files in the same run, checks each answer against DuckDB,
// and prints both times (each the median of groupByRuns warm runs) and
// their ratio per query and in total.
func BenchmarkGroupBy(b *testing.B) {
	dir := groupByData(b, *groupByRows)
	db := openDuckOn(b, dir, []string{"events"})
	st := benchStack(b, func(o *local.Options) {
		o.Coordinator.SplitBytes = 32 << 20
		o.Functions = *benchFunctions
	})
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		b.Fatal(err)
	}
	var totS, totD time.Duration
	report := fmt.Sprintf("\nGROUP BY over %d rows, %d in-process functions, median of %d warm runs\n%-14s %10s %10s %8s %12s\n",
		*groupByRows, st.Pool.Size(), groupByRuns, "query", "sluice(s)", "duckdb(s)", "ratio", "scanned(B)")
	for _, q := range groupByQueries {
		b.Run(q.name, func(b *testing.B) {
			// One warm-up run of each engine (DuckDB's file cache,
			// MinIO's, both heaps), then the median of groupByRuns
			// alternated runs of each. Before, DuckDB was warmed and
			// sluice was timed on its first run.
			want := duckRows(b, db, q.sql)
			compareRows(b, sluiceRows(run(b, st, q.sql, true)), want, false)
			var sls, dks []time.Duration
			var scanned int64
			for i := 0; i < groupByRuns; i++ {
				t0 := time.Now()
				res := run(b, st, q.sql, true)
				sls = append(sls, time.Since(t0))
				compareRows(b, sluiceRows(res), want, false)
				if len(res.Status.Stages) > 0 {
					scanned = res.Status.Stages[0].InputBytes
				}
				t0 = time.Now()
				duckRows(b, db, q.sql)
				dks = append(dks, time.Since(t0))
			}
			sl, dk := median(sls), median(dks)
			totS += sl
			totD += dk
			b.ReportMetric(sl.Seconds()/dk.Seconds(), "x_duckdb")
			report += fmt.Sprintf("%-14s %10.3f %10.3f %8.1f %12d\n", q.name, sl.Seconds(), dk.Seconds(), sl.Seconds()/dk.Seconds(), scanned)
		})
	}
	report += fmt.Sprintf("%-14s %10.3f %10.3f %8.1f\n", "total", totS.Seconds(), totD.Seconds(), totS.Seconds()/totD.Seconds())
	fmt.Fprint(os.Stderr, report)
}
