package tests

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/planner/catalog/layout"
)

// downloadPrefix copies every object under prefix but the commit markers
// into dir, keeping the folders, and returns how many data files it wrote.
func downloadPrefix(t *testing.T, st *local.Stack, prefix, dir string) int {
	t.Helper()
	ctx := context.Background()
	objs, err := st.Bucket.List(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range objs {
		if strings.HasPrefix(path.Base(o.Key), "_") {
			continue
		}
		b, err := st.Bucket.Get(ctx, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(o.Key, prefix)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// TestCopyPartitionBy: COPY ... (PARTITION_BY (cols)) writes DuckDB's hive
// layout (col=value/ folders, NULL as __HIVE_DEFAULT_PARTITION__, values
// URL-escaped, the partition columns left out of the files) in Parquet,
// CSV and JSON, with one commit marker at the target. Each output is read
// back by sluice (an external table with hive partitioning, and
// read_parquet(..., hive_partitioning=true)) and by DuckDB over the very
// objects written, and every answer equals DuckDB's answer of the query.
// A COPY that fails half-way (some tasks wrote their files) leaves nothing
// visible: the folder still reads as before it, also when one partition
// folder is read alone (its marker is one folder up). Bad PARTITION_BY
// options are SL022.
func TestCopyPartitionBy(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", func(o *local.Options) { o.Coordinator.SplitBytes = 64 << 10 })
	ctx := context.Background()
	if _, err := st.LoadDir(ctx, dir); err != nil {
		t.Fatal(err)
	}
	bucket := st.S3.Bucket
	src := `select o_orderkey, o_totalprice, o_orderdate, o_orderstatus as status,
		case when o_orderpriority like '1%' then null when o_orderpriority like '2%' then 'a/b c%' else o_orderpriority end as prio from orders`
	check := "select status, prio, count(*), sum(o_totalprice), min(o_orderdate), max(o_orderkey) from %s group by 1, 2"
	want := duckRows(t, db, fmt.Sprintf(check, "("+src+")"))
	local := t.TempDir()

	for _, c := range []struct {
		name, format, duck string
		by                 string
	}{
		{"parquet", "parquet", "read_parquet('%s/**/*.parquet', hive_partitioning=1)", "status, prio"},
		{"csv", "csv", "read_csv('%s/**/*.csv', hive_partitioning=1, header=true)", "prio, status"},
		{"json", "json", "read_json('%s/**/*.json', hive_partitioning=1)", "status, prio"},
	} {
		t.Run(c.name, func(t *testing.T) {
			prefix := "part/" + c.name + "/"
			res := stmt(t, st, fmt.Sprintf("COPY (%s) TO 's3://%s/%s' (FORMAT %s, PARTITION_BY (%s))", src, bucket, prefix, c.format, c.by))
			got := sluiceRows(res)
			if len(got) != 1 || fmt.Sprint(got[0][0]) != "15000" {
				t.Fatalf("COPY answered %v, want 15000 rows", got)
			}
			objs, err := st.Bucket.List(ctx, prefix)
			if err != nil {
				t.Fatal(err)
			}
			var markers int
			var null, escaped bool
			for _, o := range objs {
				rel := strings.TrimPrefix(o.Key, prefix)
				if strings.HasPrefix(path.Base(rel), layout.CommitMarkerPrefix) {
					markers++
					if strings.Contains(rel, "/") {
						t.Errorf("marker %s is not at the target", o.Key)
					}
					continue
				}
				if strings.Count(rel, "=") != 2 {
					t.Errorf("file %s is not two key=value folders down", o.Key)
				}
				null = null || strings.Contains(rel, "prio=__HIVE_DEFAULT_PARTITION__/")
				escaped = escaped || strings.Contains(rel, "prio=a%2Fb%20c%25/")
			}
			if markers != 1 || !null || !escaped {
				t.Fatalf("%s: %d markers (want 1), NULL folder %v, escaped folder %v: %v", prefix, markers, null, escaped, objs)
			}

			// sluice: an external table over the folder.
			name := "p_" + c.name
			stmt(t, st, fmt.Sprintf("create external table %s stored as %s location 's3://%s/%s'", name, c.format, bucket, prefix))
			compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(check, name), true)), want, false)
			if c.format == "parquet" {
				rp := fmt.Sprintf("read_parquet('s3://%s/%s**/*.parquet', hive_partitioning=true)", bucket, prefix)
				compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(check, rp), true)), want, false)
			}
			// DuckDB over the objects written.
			sub := filepath.Join(local, c.name)
			if n := downloadPrefix(t, st, prefix, sub); n < 15 {
				t.Fatalf("%d data files, want one per folder at least", n)
			}
			compareRows(t, duckRows(t, db, fmt.Sprintf(check, fmt.Sprintf(c.duck, sub))), want, false)
		})
	}

	// A COPY (OVERWRITE) that fails in one task after the others wrote:
	// no marker, so the folder reads as before, whole and by partition.
	prefix := "part/parquet/"
	stmt(t, st, "drop table p_parquet") // a table's location is no COPY target
	rp := fmt.Sprintf("read_parquet('s3://%s/%s**/*.parquet', hive_partitioning=true)", bucket, prefix)
	before := sluiceRows(run(t, st, fmt.Sprintf(check, rp), true))
	compareRows(t, before, want, false)
	last := fmt.Sprint(duckRows(t, db, "select max(o_orderkey) from orders")[0][0])
	bad := strings.Replace(src, "o_orderkey,", "cast(case when o_orderkey = "+last+" then 'x' else cast(o_orderkey as varchar) end as bigint) as o_orderkey,", 1)
	old, _ := st.Bucket.List(ctx, prefix)
	e := stmtErr(t, st, fmt.Sprintf("COPY (%s) TO 's3://%s/%s' (PARTITION_BY (status, prio), OVERWRITE)", bad, bucket, prefix))
	if e.Code == "" {
		t.Fatalf("the failing COPY: %v, want a coded error", e)
	}
	objs, _ := st.Bucket.List(ctx, prefix)
	if len(objs) < len(old) {
		t.Fatalf("the failed COPY removed objects: %d before, %d after", len(old), len(objs))
	}
	t.Logf("the failed COPY (%s %s) left %d unmarked files", e.Code, e.Msg, len(objs)-len(old))
	if len(objs) == len(old) {
		t.Log("no task of the failed COPY wrote before the failure: the visibility check below checks less")
	}
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(check, rp), true)), before, false)
	stmt(t, st, fmt.Sprintf("create external table p_again stored as parquet location 's3://%s/%s'", bucket, prefix))
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(check, "p_again"), true)), before, false)
	one := "select count(*), sum(o_totalprice) from %s"
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(one, fmt.Sprintf("read_parquet('s3://%s/%sstatus=F/prio=__HIVE_DEFAULT_PARTITION__/*.parquet')", bucket, prefix)), true)),
		duckRows(t, db, fmt.Sprintf(one, "("+src+") where status = 'F' and prio is null")), false)

	// A COPY (OVERWRITE) that succeeds replaces all of it: the new layout
	// (one level of folders) is what is read, and no object of the old
	// one (nor the failed COPY's) is left.
	stmt(t, st, "drop table p_again")
	stmt(t, st, fmt.Sprintf("COPY (%s where o_orderstatus <> 'P') TO 's3://%s/%s' (PARTITION_BY (status), OVERWRITE)", src, bucket, prefix))
	objs, _ = st.Bucket.List(ctx, prefix)
	var markers int
	for _, o := range objs {
		rel := strings.TrimPrefix(o.Key, prefix)
		switch {
		case strings.HasPrefix(rel, layout.CommitMarkerPrefix):
			markers++
		case strings.Count(rel, "=") != 1 || strings.HasPrefix(rel, "status=P/"):
			t.Errorf("after OVERWRITE: %s is left", o.Key)
		}
	}
	if markers != 1 {
		t.Errorf("after OVERWRITE: %d markers, want 1", markers)
	}
	by1 := "select status, count(*), sum(o_totalprice), max(prio) from %s group by status"
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(by1, fmt.Sprintf("read_parquet('s3://%s/%s**/*.parquet', hive_partitioning=true)", bucket, prefix)), true)),
		duckRows(t, db, fmt.Sprintf(by1, "("+src+") where status <> 'P'")), false)

	// A writer's files in a partition folder without any marker stay
	// invisible; with its marker at the target they are read.
	writer := "20260101-000000-0badf00d"
	pq := oneFile(t, dir, "orders")
	upload(t, st, pq, "part/raw/k=1/"+layout.DataFileName(writer, 0, "parquet"))
	upload(t, st, pq, "part/raw/k=2/"+layout.DataFileName(writer, 1, "parquet"))
	upload(t, st, pq, "part/raw/k=3/plain.parquet")
	cnt := "select k, count(*) from read_parquet('s3://%s/part/raw/%s', hive_partitioning=true) group by k order by k"
	if got := sluiceRows(run(t, st, fmt.Sprintf(cnt, bucket, "**/*.parquet"), true)); fmt.Sprint(got) != "[[3 15000]]" {
		t.Errorf("without the marker: %v, want only k=3", got)
	}
	if err := st.Bucket.Put(ctx, "part/raw/"+layout.CommitMarkerPrefix+writer, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if got := sluiceRows(run(t, st, fmt.Sprintf(cnt, bucket, "**/*.parquet"), true)); fmt.Sprint(got) != "[[1 15000] [2 15000] [3 15000]]" {
		t.Errorf("with the marker at the target: %v, want k=1, 2 and 3", got)
	}
	if got := sluiceRows(run(t, st, fmt.Sprintf("select count(*) from read_parquet('s3://%s/part/raw/k=2/')", bucket), true)); fmt.Sprint(got) != "[[15000]]" {
		t.Errorf("one partition folder, its marker one up: %v, want 15000 rows", got)
	}

	for _, c := range []struct{ opts, msg string }{
		{"(PARTITION_BY (nosuch))", "not a column"},
		{"(PARTITION_BY (x, y))", "every column"},
		{"(PARTITION_BY (x, x))", "twice"},
	} {
		e := stmtErr(t, st, fmt.Sprintf("COPY (select 1 as x, 2 as y) TO 's3://%s/badpart/' %s", bucket, c.opts))
		if e.Code != "SL022" || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("COPY %s: %s %s, want SL022 naming %q", c.opts, e.Code, e.Msg, c.msg)
		}
	}
	if e := stmtErr(t, st, fmt.Sprintf("COPY (select 1 as x, 2 as y) TO 's3://%s/badpart/x.parquet' (PARTITION_BY (x))", bucket)); e.Code != "SL022" {
		t.Errorf("PARTITION_BY to a file: %s %s, want SL022", e.Code, e.Msg)
	}
	if objs, _ := st.Bucket.List(ctx, "badpart/"); len(objs) != 0 {
		t.Errorf("refused COPYs wrote %d objects", len(objs))
	}
}
