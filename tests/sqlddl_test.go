package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/planner/catalog/layout"
)

// stmt runs one statement of any kind through POST /v1/statements.
func stmt(t *testing.T, st *local.Stack, sql string) *local.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	on := true
	res, err := st.Statement(ctx, sql, &on)
	if err != nil {
		t.Fatalf("sluice: %v\n%s", err, sql)
	}
	t.Cleanup(res.Release)
	return res
}

// stmtErr runs a statement that must fail and returns its API error.
func stmtErr(t *testing.T, st *local.Stack, sql string) *coordinator.APIError {
	t.Helper()
	on := true
	_, err := st.Statement(context.Background(), sql, &on)
	var ae *coordinator.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("%s: err %v, want an API error", sql, err)
	}
	return ae
}

// upload puts a local file into the stack's bucket.
func upload(t *testing.T, st *local.Stack, path, key string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Bucket.Put(context.Background(), key, b); err != nil {
		t.Fatal(err)
	}
}

// oneFile returns the one .parquet file of a TPC-H table in dir.
func oneFile(t *testing.T, dir, table string) string {
	t.Helper()
	fs, _ := filepath.Glob(filepath.Join(dir, table, "*.parquet"))
	if len(fs) == 0 {
		t.Fatalf("no parquet files for %s in %s", table, dir)
	}
	return fs[0]
}

// TestExternalTables: CREATE EXTERNAL TABLE over one file, over a prefix
// that later gets a new file (seen without registering again), and the
// commit protocol hiding a writer's files until its marker exists; every
// answer checked against DuckDB over the same files.
func TestExternalTables(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	bucket := st.S3.Bucket
	nation := oneFile(t, dir, "nation")
	upload(t, st, nation, "ext/nation.parquet")
	res := stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE n1 STORED AS PARQUET LOCATION 's3://%s/ext/nation.parquet'", bucket))
	if got := sluiceRows(res); len(got) != 1 || !strings.Contains(fmt.Sprint(got[0][0]), "created external table n1: 4 columns, 1 files, 25 rows") {
		t.Fatalf("create: %v", got)
	}
	q := "select n_regionkey, count(*), min(n_name) from %s group by n_regionkey"
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(q, "n1"), true)), duckRows(t, db, fmt.Sprintf(q, "nation")), false)

	// A prefix; then a second copy of the file appears under it.
	orders := oneFile(t, dir, "orders")
	upload(t, st, orders, "ext/orders/part-0.parquet")
	stmt(t, st, fmt.Sprintf("create external table o1 stored as parquet location 's3://%s/ext/orders/'", bucket))
	q = "select o_orderstatus, count(*), sum(o_totalprice) from %s group by o_orderstatus"
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(q, "o1"), true)), duckRows(t, db, fmt.Sprintf(q, "orders")), false)

	upload(t, st, orders, "ext/orders/part-1.parquet")
	want := duckRows(t, db, fmt.Sprintf(q, "(select * from orders union all select * from orders)"))
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(q, "o1"), true)), want, false)

	// A writer's file without its commit marker stays invisible; with the
	// marker it is read.
	writer := "20260101-000000-deadbeef"
	upload(t, st, orders, "ext/orders/"+layout.DataFileName(writer, 0, "parquet"))
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(q, "o1"), true)), want, false)
	if err := st.Bucket.Put(context.Background(), "ext/orders/"+layout.CommitMarkerPrefix+writer, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	want3 := duckRows(t, db, fmt.Sprintf(q, "(select * from orders union all select * from orders union all select * from orders)"))
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(q, "o1"), true)), want3, false)
}

// TestCTASAndCopy: CREATE TABLE AS and COPY TO write committed files that
// read back (as a table, and as an external table over the COPY target)
// to DuckDB's answer of the query.
func TestCTASAndCopy(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	bucket := st.S3.Bucket
	query := "select o_orderkey, o_custkey, o_totalprice, o_orderdate from orders where o_totalprice > 100000"
	res := stmt(t, st, "create table big_orders as "+query)
	if msg := fmt.Sprint(sluiceRows(res)[0][0]); !strings.HasPrefix(msg, "created table big_orders: ") {
		t.Fatalf("ctas: %s", msg)
	}
	check := "select count(*), sum(o_totalprice), min(o_orderdate), max(o_custkey) from %s"
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(check, "big_orders"), true)),
		duckRows(t, db, fmt.Sprintf(check, "("+query+")")), false)
	// The files are Parquet under tables/big_orders/, with the marker.
	objs, err := st.Bucket.List(context.Background(), st.TablesPrefix("big_orders"))
	if err != nil {
		t.Fatal(err)
	}
	var data, markers int
	for _, o := range objs {
		switch {
		case strings.Contains(o.Key, layout.CommitMarkerPrefix):
			markers++
		case strings.HasSuffix(o.Key, ".parquet"):
			b, err := st.Bucket.Get(context.Background(), o.Key)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := file.NewParquetReader(bytes.NewReader(b)); err != nil {
				t.Fatalf("%s is not Parquet: %v", o.Key, err)
			}
			data++
		}
	}
	if data == 0 || markers != 1 {
		t.Fatalf("tables/big_orders/: %d data files, %d markers; want >0 and 1", data, markers)
	}
	if e := stmtErr(t, st, "create table big_orders as select 1 as x"); e.Code != "SL020" || e.Position != 14 {
		t.Fatalf("CTAS of an existing table: %s (code %s, position %d)", e.Msg, e.Code, e.Position)
	}
	stmt(t, st, "create table if not exists big_orders as select 1 as x")

	for _, format := range []string{"parquet", "csv"} {
		t.Run("copy_"+format, func(t *testing.T) {
			q := "select n_nationkey, n_name, r_name from nation join region on n_regionkey = r_regionkey"
			res := stmt(t, st, fmt.Sprintf("COPY (%s) TO 's3://%s/out/%s/' (FORMAT %s)", q, bucket, format, format))
			got := sluiceRows(res)
			if len(got) != 1 || got[0][0] != float64(25) {
				t.Fatalf("copy answered %v, want 25 rows", got)
			}
			stmt(t, st, fmt.Sprintf("create external table nat_%s stored as %s location 's3://%s/out/%s/'", format, format, bucket, format))
			c := "select r_name, count(*), min(n_name), sum(n_nationkey) from %s group by r_name"
			compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(c, "nat_"+format), true)), duckRows(t, db, fmt.Sprintf(c, "("+q+")")), false)
		})
	}

	// A target that holds files: refused, unless APPEND (both writes'
	// rows are read) or OVERWRITE (only the new ones, the old objects
	// gone).
	q := "select n_nationkey, n_name from nation where n_regionkey = %d"
	target := fmt.Sprintf("'s3://%s/out/again/'", bucket)
	stmt(t, st, fmt.Sprintf("COPY ("+q+") TO %s", 1, target))
	if e := stmtErr(t, st, fmt.Sprintf("COPY ("+q+") TO %s", 2, target)); e.Code != "SL021" || !strings.Contains(e.Msg, "OVERWRITE") {
		t.Errorf("COPY to a target with files: %s %s, want SL021 naming OVERWRITE and APPEND", e.Code, e.Msg)
	}
	stmt(t, st, fmt.Sprintf("COPY ("+q+") TO %s (APPEND)", 2, target))
	stmt(t, st, fmt.Sprintf("create external table again stored as parquet location %s", target))
	c := "select count(*), sum(n_nationkey) from %s"
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(c, "again"), true)),
		duckRows(t, db, fmt.Sprintf(c, "nation where n_regionkey in (1, 2)")), false)
	stmt(t, st, "drop table again")
	stmt(t, st, fmt.Sprintf("COPY ("+q+") TO %s (FORMAT parquet, OVERWRITE)", 3, target))
	stmt(t, st, fmt.Sprintf("create external table again stored as parquet location %s", target))
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(c, "again"), true)),
		duckRows(t, db, fmt.Sprintf(c, "nation where n_regionkey = 3")), false)
	objs, err = st.Bucket.List(context.Background(), "out/again/")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 { // one file, one marker
		t.Errorf("out/again/ after OVERWRITE holds %d objects, want a file and its marker: %v", len(objs), objs)
	}
	if e := stmtErr(t, st, fmt.Sprintf("COPY (select 1) TO %s (OVERWRITE, APPEND)", target)); e.Code != "SL022" {
		t.Errorf("OVERWRITE and APPEND: %s %s, want SL022", e.Code, e.Msg)
	}
}

// TestTableStatements: SHOW TABLES, DESCRIBE, DROP TABLE and EXPLAIN as
// SQL give known values; bad statements get their codes and positions.
func TestTableStatements(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range sluiceRows(stmt(t, st, "SHOW TABLES")) {
		names = append(names, fmt.Sprint(r[0]))
	}
	if got := strings.Join(names, ","); got != "customer,lineitem,nation,orders,part,partsupp,region,supplier" {
		t.Fatalf("SHOW TABLES: %s", got)
	}
	desc := sluiceRows(stmt(t, st, "describe nation"))
	if got := fmt.Sprint(desc); got != "[[n_nationkey bigint no] [n_name varchar no] [n_regionkey bigint no] [n_comment varchar no]]" {
		t.Fatalf("DESCRIBE nation: %s", got)
	}
	stmt(t, st, "drop table region")
	if e := stmtErr(t, st, "select * from region"); e.Code != "SL002" {
		t.Fatalf("query of a dropped table: %s (%s)", e.Msg, e.Code)
	}
	if e := stmtErr(t, st, "drop table region"); e.Code != "SL002" || e.Position != 12 {
		t.Fatalf("drop of a dropped table: %s (code %s, position %d)", e.Msg, e.Code, e.Position)
	}
	stmt(t, st, "drop table if exists region")

	ex := sluiceRows(stmt(t, st, "explain select n_name from nation where n_nationkey = 3"))
	var text strings.Builder
	for _, r := range ex {
		text.WriteString(fmt.Sprint(r[0]) + "\n")
	}
	if len(ex) < 3 || !strings.Contains(text.String(), "Stage") || !strings.Contains(text.String(), "nation") {
		t.Fatalf("EXPLAIN rows:\n%s", text.String())
	}
	ex = sluiceRows(stmt(t, st, "explain analyze select count(*) from nation"))
	text.Reset()
	for _, r := range ex {
		text.WriteString(fmt.Sprint(r[0]) + "\n")
	}
	if !strings.Contains(text.String(), "== stage metrics") || !strings.Contains(text.String(), "output_rows=1") {
		t.Fatalf("EXPLAIN ANALYZE rows:\n%s", text.String())
	}

	bad := []struct {
		sql  string
		code string
		pos  int
	}{
		{"create table t2 as select n_nope from nation", "SL003", 27},
		{"copy (select n_nope from nation) to 's3://sluice/x/'", "SL003", 14},
		{"create external table t3 stored as parquet location 's3://elsewhere/x/'", "SL021", 53},
		{"create external table t3 stored as parquet location 's3://" + st.S3.Bucket + "/nothing-here/'", "SL021", 53},
		{"create external table t3 stored as csv location 's3://" + st.S3.Bucket + "/x/' options (bogus '\"')", "SL022", 49},
		{"create external table t3 (a int) stored as parquet location 's3://" + st.S3.Bucket + "/x/'", "SL021", 61}, // no files (a Parquet column list declares partition keys: TestHivePartitionedTables)
		{"copy (select 1) to 's3://" + st.S3.Bucket + "/x/' (format orc)", "SL022", 45},
		{"describe nosuch", "SL002", 10},
		{"show columns", "SL005", 6},
		{"drop table", "SL001", 11},
	}
	for _, b := range bad {
		e := stmtErr(t, st, b.sql)
		if e.Code != b.code || e.Position != b.pos {
			t.Errorf("%s: %s (code %s, position %d), want %s at %d", b.sql, e.Msg, e.Code, e.Position, b.code, b.pos)
		}
	}
	// A statement sent where only a query goes gets SL023.
	on := true
	if _, err := st.Query(context.Background(), "show tables", &on, nil); !strings.Contains(fmt.Sprint(err), "SL023") {
		t.Fatalf("show tables through /v1/jobs: %v", err)
	}
}

// TestCTASWrittenByTasks: CREATE TABLE AS and COPY files are written by
// the result stage's tasks (plan.KindWrite), one file per task with rows,
// in parallel: the job's own result is the list of (file, rows) the tasks
// wrote, which the commit marker then lists. An empty result gets one
// empty file that keeps the schema. Answers are checked against DuckDB.
func TestCTASWrittenByTasks(t *testing.T) {
	ctx := context.Background()
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", func(o *local.Options) { o.Coordinator.SplitBytes = 64 << 10 })
	if _, err := st.LoadDir(ctx, dir); err != nil {
		t.Fatal(err)
	}
	query := "select l_orderkey, l_partkey, l_quantity, l_extendedprice, l_shipdate from lineitem where l_quantity > 10"
	stmt(t, st, "create table big_items as "+query)
	check := "select count(*), sum(l_extendedprice), min(l_shipdate), max(l_partkey) from %s"
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(check, "big_items"), true)),
		duckRows(t, db, fmt.Sprintf(check, "("+query+")")), false)

	objs, err := st.Bucket.List(ctx, st.TablesPrefix("big_items"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	job := ""
	for _, o := range objs {
		if base := o.Key[strings.LastIndex(o.Key, "/")+1:]; strings.HasSuffix(base, ".parquet") {
			files[o.Key] = true
			job = base[:len("20060102-150405-01234567")]
		}
	}
	if len(files) < 2 {
		t.Fatalf("%d files: want one per result-stage task (the scan has several at 64 KiB splits)", len(files))
	}
	// The job's result is what its tasks wrote: one (file, rows) row each.
	_, recs, err := coordinator.NewClient(st.APIURL, "").Result(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	var listed int
	var rows int64
	for _, rec := range recs {
		for i := range int(rec.NumRows()) {
			key := rec.Column(0).ValueStr(i)
			if !files[key] {
				t.Errorf("job result names %s, not a file under the table", key)
			}
			var n int64
			fmt.Sscan(rec.Column(1).ValueStr(i), &n)
			rows += n
			listed++
		}
		rec.Release()
	}
	want := duckRows(t, db, "select count(*) from ("+query+")")
	if listed != len(files) || fmt.Sprint(rows) != fmt.Sprint(want[0][0]) {
		t.Fatalf("job result lists %d files with %d rows; the table has %d files, DuckDB %v rows", listed, rows, len(files), want[0][0])
	}

	// An empty result: one empty file with the columns, zero rows.
	stmt(t, st, "create table no_items as select l_orderkey, l_comment from lineitem where l_quantity < 0")
	compareRows(t, sluiceRows(run(t, st, "select count(*), max(l_comment) from no_items", true)),
		duckRows(t, db, "select count(*), max(l_comment) from lineitem where l_quantity < 0"), false)
	d := sluiceRows(stmt(t, st, "describe no_items"))
	if len(d) != 2 || d[0][0] != "l_orderkey" || d[1][0] != "l_comment" {
		t.Fatalf("describe no_items: %v", d)
	}

	// ORDER BY: the result stage is one task, so one file, in order.
	stmt(t, st, "create table top_items as select l_orderkey, l_linenumber from lineitem order by l_orderkey desc, l_linenumber limit 50")
	objs, err = st.Bucket.List(ctx, st.TablesPrefix("top_items"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range objs {
		if strings.HasSuffix(o.Key, ".parquet") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("ordered CTAS wrote %d files, want 1", n)
	}
	compareRows(t, sluiceRows(run(t, st, "select * from top_items", true)),
		duckRows(t, db, "select l_orderkey, l_linenumber from lineitem order by l_orderkey desc, l_linenumber limit 50"), true)
}
