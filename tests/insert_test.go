package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestInsertInto appends rows to a CREATE TABLE AS table (Parquet) and to
// an external CSV table with INSERT INTO ... SELECT / VALUES: the query's
// columns are cast to the table's types, the new files are committed with
// a marker, and every answer after each insert equals DuckDB over the same
// rows. Tables whose new files would be read differently are refused with
// SL005, and a query of the wrong shape with SL004, before anything is
// written.
func TestInsertInto(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	bucket := st.S3.Bucket
	base := "select o_orderkey, o_custkey, o_totalprice, o_orderdate from orders where o_totalprice > 300000"
	stmt(t, st, "create table rich as "+base)
	more := "select o_orderkey, o_custkey, o_totalprice, o_orderdate from orders where o_totalprice between 250000 and 260000"
	res := stmt(t, st, "insert into rich "+more)
	want := duckRows(t, db, "select count(*) from ("+more+")")
	if got := sluiceRows(res); len(got) != 1 || got[0][0] != want[0][0] {
		t.Fatalf("insert result %v, want %v rows", got, want)
	}
	// VALUES with other types (integers into decimal, a string into a
	// date), cast to the table's.
	stmt(t, st, "insert into rich values (1, 2, 3, '1999-12-31'), (4, 5, 6.25, '2000-01-01')")
	check := "select count(*), sum(o_totalprice), min(o_orderdate), max(o_orderdate), sum(o_custkey) from %s"
	all := "(" + base + " union all " + more + " union all select 1, 2, 3::decimal(15,2), date '1999-12-31' union all select 4, 5, 6.25, date '2000-01-01')"
	for _, adaptive := range []bool{true, false} {
		compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(check, "rich"), adaptive)), duckRows(t, db, fmt.Sprintf(check, all)), false)
	}
	if got := fmt.Sprint(sluiceRows(stmt(t, st, "describe rich"))); !strings.Contains(got, "[o_orderdate date") {
		t.Errorf("describe rich after inserts: %s", got)
	}

	// An external CSV table (a header row, commas, ISO dates).
	if err := st.Bucket.Put(context.Background(), "ext/csv/a.csv", []byte("k,name,day\n1,one,2024-01-01\n2,two,2024-01-02\n")); err != nil {
		t.Fatal(err)
	}
	stmt(t, st, fmt.Sprintf("create external table ecsv stored as csv location 's3://%s/ext/csv/'", bucket))
	stmt(t, st, "insert into ecsv select n_nationkey + 10, n_name, date '2024-02-01' + n_nationkey from nation where n_regionkey = 1")
	got := sluiceRows(run(t, st, "select count(*), sum(k), max(day), min(name) from ecsv", true))
	wantCSV := duckRows(t, db, "select count(*), sum(k), max(d), min(nm) from (select 1 k, 'one' nm, date '2024-01-01' d union all select 2, 'two', date '2024-01-02' union all select n_nationkey + 10, n_name, date '2024-02-01' + n_nationkey::int from nation where n_regionkey = 1)")
	if d := rowsDiff(got, wantCSV, false); d != "" {
		t.Errorf("ecsv after insert: %s", d)
	}

	// Refusals, before anything is written.
	if err := st.Bucket.Put(context.Background(), "ext/semi/a.csv", []byte("k;v\n1;2\n")); err != nil {
		t.Fatal(err)
	}
	stmt(t, st, fmt.Sprintf("create external table semi stored as csv location 's3://%s/ext/semi/' options (delimiter ';')", bucket))
	for _, c := range []struct{ sql, code, msg string }{
		{"insert into rich select 1, 2", "SL004", "the query gives 2 columns, the table has 4"},
		{"insert into rich select 1, 2, 3, true", "SL004", "do not cast"},
		{"insert into rich (o_orderkey) select 1", "SL005", "column list"},
		{"insert into nosuch select 1", "SL002", "nosuch"},
		{"insert into semi select 1, 2", "SL005", "delimiter"},
	} {
		e := stmtErr(t, st, c.sql)
		if e.Code != c.code || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%s: %s %s, want %s naming %q", c.sql, e.Code, e.Msg, c.code, c.msg)
		}
	}
	if got := sluiceRows(run(t, st, "select count(*) from semi", true)); got[0][0] != float64(1) {
		t.Errorf("semi after refused insert: %v rows, want 1", got)
	}
}
