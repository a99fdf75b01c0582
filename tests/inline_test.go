package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local"
)

// TestInlineScans: with inline-scans on (the default), a small broadcast
// table is read by the tasks of the stages that read it, and its own
// stage is skipped ("inlined into stage ..."): a star join, a query of
// one small table (the result stage scans it), and a small hive-partitioned
// table (each file's partition values travel with it). Answers equal
// DuckDB's with the rule on, off and under injected faults, and the rule
// saves invocations.
func TestInlineScans(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	ctx := context.Background()
	out := t.TempDir()
	hiveDir := filepath.Join(out, "hreg")

	type query struct{ name, sluice, duck string }
	hive := fmt.Sprintf("read_parquet('%s/**/*.parquet', hive_partitioning=true)", hiveDir)
	queries := []query{
		{"star", `select n_name, count(*) as n, sum(s_acctbal) as bal from supplier join nation on s_nationkey = n_nationkey
			join region on n_regionkey = r_regionkey where r_name <> 'ASIA' group by n_name`, ""},
		{"one_table", `select n_name, n_regionkey from nation where n_nationkey % 3 = 1 order by n_name`, ""},
		{"hive", `select par, r_name, count(*) as n from nation join hreg on n_regionkey = r_regionkey where par >= 0 group by par, r_name`,
			`select par, r_name, count(*) as n from nation join ` + hive + ` on n_regionkey = r_regionkey where par >= 0 group by par, r_name`},
	}
	runAll := func(t *testing.T, inlineBytes int64, faults string) map[string]*coordinator.JobStatus {
		faulty := injectFaults(t, faults)
		st := startStack(t, "", func(o *local.Options) {
			o.Coordinator.AQE.InlineScanBytes = inlineBytes
			// One invocation per task, so that invocations count stages
			// (packing would share one among small tasks dispatched
			// together, however they are timed).
			o.Coordinator.PackBytes = 0
			faulty.options(o)
		})
		faulty.attach(st)
		if _, err := st.LoadDir(ctx, dir); err != nil {
			t.Fatal(err)
		}
		writeHive(t, st, db, `select r_regionkey, r_name, r_regionkey % 2 as par from region`, filepath.Join(t.TempDir(), "hreg"), "parquet", "par", "hive/hreg/")
		stmt(t, st, fmt.Sprintf("create external table hreg stored as parquet location 's3://%s/hive/hreg/'", st.S3.Bucket))
		jobs := map[string]*coordinator.JobStatus{}
		for _, q := range queries {
			res := run(t, st, q.sluice, true)
			d := q.duck
			if d == "" {
				d = q.sluice
			}
			compareRows(t, sluiceRows(res), duckRows(t, db, d), strings.Contains(q.sluice, "order by"))
			jobs[q.name] = res.Status
		}
		return jobs
	}
	// DuckDB's own copy of the hive files, for its side of the answers.
	if _, err := db.Exec(fmt.Sprintf("COPY (select r_regionkey, r_name, r_regionkey %% 2 as par from region) TO '%s' (FORMAT parquet, PARTITION_BY (par))", hiveDir)); err != nil {
		t.Fatal(err)
	}

	invoked := func(js *coordinator.JobStatus) (n int) {
		for _, s := range js.Stages {
			n += s.Invoked
		}
		return n
	}
	inlined := func(js *coordinator.JobStatus) (n int) {
		for _, s := range js.Stages {
			if strings.HasPrefix(s.Reason, "inlined into stage") {
				n++
			}
		}
		return n
	}
	on := runAll(t, 16<<20, "")
	off := runAll(t, 0, "")
	for _, q := range queries {
		a, b := on[q.name], off[q.name]
		t.Logf("%s: %d invocations with inline-scans (%d stages inlined), %d without", q.name, invoked(a), inlined(a), invoked(b))
		if !firedRule(a, "inline-scans") || inlined(a) == 0 {
			t.Errorf("%s: inline-scans did not fire: %+v", q.name, a.Rounds)
		}
		if firedRule(b, "inline-scans") || inlined(b) > 0 {
			t.Errorf("%s: inline-scans fired with the rule off", q.name)
		}
		if invoked(a) >= invoked(b) {
			t.Errorf("%s: %d invocations with the rule, %d without", q.name, invoked(a), invoked(b))
		}
	}
	t.Run("faults", func(t *testing.T) {
		runAll(t, 16<<20, "crash=0.05,error=0.05,duplicate=0.05,lose=0.1,corrupt=0.1,seed="+strconv.FormatUint(testSeed(t), 10))
	})
}
