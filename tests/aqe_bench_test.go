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

var aqeStages = flag.Bool("aqe.stages", false, "BenchmarkAQE: print the functions each stage invoked, both modes")

// BenchmarkAQE runs the TPC-H queries plus a skewed join and a selective
// LIMIT query with adaptive re-planning on and off, in the same run, and
// prints per query: functions invoked, bytes shuffled, S3 requests and
// wall time for both, and the on/off ratios.
func BenchmarkAQE(b *testing.B) {
	dir := dataDir(b, *sfFlag)
	skewDir := skewData(b, dir, *sfFlag)
	st := benchStack(b, func(o *local.Options) {
		o.Coordinator.SplitBytes = 32 << 20
		o.Functions = 4
	})
	ctx := context.Background()
	if _, err := st.LoadDir(ctx, dir); err != nil {
		b.Fatal(err)
	}
	if _, err := st.LoadDir(ctx, skewDir); err != nil {
		b.Fatal(err)
	}
	qs := append(tpchQueries(b),
		query{name: "skew", sql: `select name, count(*) as n, sum(v) as s from fact, dim where fact.k = dim.k group by name`},
		query{name: "limit", sql: `select l_orderkey, l_comment from lineitem where l_shipmode = 'AIR' limit 10`},
	)
	type measure struct {
		invoked        int
		shuffled, reqs int64
		wall           time.Duration
	}
	measureOne := func(b *testing.B, sql string, adaptive bool) measure {
		before := st.RequestStats()
		t0 := time.Now()
		res := run(b, st, sql, adaptive)
		m := measure{wall: time.Since(t0)}
		m.reqs = st.RequestStats().Sub(before).Requests()
		dbg := ""
		for _, s := range res.Status.Stages {
			dbg += fmt.Sprintf(" s%d:%d", s.ID, s.Invoked)
			if s.State != "done" {
				dbg += fmt.Sprintf("(%s)", s.State)
			}
			m.invoked += s.Invoked
			m.shuffled += s.Bytes
		}
		if *aqeStages {
			fmt.Fprintf(os.Stderr, "adaptive=%v functions by stage:%s\n", adaptive, dbg)
		}
		return m
	}
	report := fmt.Sprintf("\nadaptive on vs off, TPC-H SF %g (plus a skewed join and a LIMIT)\n%-6s | %8s %8s %6s | %12s %12s %6s | %8s %8s %6s | %8s %8s %6s\n",
		*sfFlag, "query", "fn on", "fn off", "ratio", "shuf on", "shuf off", "ratio", "s3 on", "s3 off", "ratio", "s on", "s off", "ratio")
	var tot [2]measure
	for _, q := range qs {
		b.Run(q.name, func(b *testing.B) {
			on := measureOne(b, q.sql, true)
			off := measureOne(b, q.sql, false)
			for i, m := range []measure{on, off} {
				tot[i].invoked += m.invoked
				tot[i].shuffled += m.shuffled
				tot[i].reqs += m.reqs
				tot[i].wall += m.wall
			}
			report += row4(q.name, on.invoked, off.invoked, on.shuffled, off.shuffled, on.reqs, off.reqs, on.wall, off.wall)
		})
	}
	report += row4("total", tot[0].invoked, tot[1].invoked, tot[0].shuffled, tot[1].shuffled, tot[0].reqs, tot[1].reqs, tot[0].wall, tot[1].wall)
	fmt.Fprint(os.Stderr, report)
}

func row4(name string, fOn, fOff int, shOn, shOff, rOn, rOff int64, wOn, wOff time.Duration) string {
	ratio := func(a, b float64) float64 {
		if b == 0 {
			return 1
		}
		return a / b
	}
	return fmt.Sprintf("%-6s | %8d %8d %6.2f | %12d %12d %6.2f | %8d %8d %6.2f | %8.2f %8.2f %6.2f\n", name,
		fOn, fOff, ratio(float64(fOn), float64(fOff)), shOn, shOff, ratio(float64(shOn), float64(shOff)),
		rOn, rOff, ratio(float64(rOn), float64(rOff)), wOn.Seconds(), wOff.Seconds(), ratio(wOn.Seconds(), wOff.Seconds()))
}

// skewData writes a fact table whose key 7 holds half the rows and a small
// dimension table, scaled with sf, next to the TPC-H data.
func skewData(tb testing.TB, tpchDir string, sf float64) string {
	tb.Helper()
	dir := filepath.Join(filepath.Dir(tpchDir), fmt.Sprintf("skew-sf%g", sf))
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	db := openDuck(tb, tpchDir)
	rows := int64(sf * 6_000_000)
	for name, q := range map[string]string{
		"fact": fmt.Sprintf(`SELECT CASE WHEN i %% 2 = 0 THEN 7 ELSE i %% 10000 END AS k, i AS v FROM range(%d) t(i)`, rows),
		"dim":  `SELECT i AS k, 'name' || (i % 13) AS name FROM range(10000) t(i)`,
	} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			tb.Fatal(err)
		}
		if _, err := db.Exec("COPY (" + q + ") TO '" + filepath.Join(dir, name, name+".parquet") + "' (FORMAT parquet, ROW_GROUP_SIZE 100000)"); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir
}
