package tests

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duckdb/duckdb-go/v2"
)

// openDuckPlain opens an empty DuckDB (the oracle for files read with
// read_csv / read_json).
func openDuckPlain(t *testing.T) *sql.DB {
	t.Helper()
	conn, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

// formatsFile is a file under testdata/formats.
func formatsFile(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "formats", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCSVLikeSpreadsheets: CSV files as spreadsheets and exports write
// them (a byte order mark, CRLF, a header with spaces and symbols, day-first
// and month-first dates, quoted fields with delimiters, quotes and line
// breaks, "" next to an empty field, timestamps, booleans), registered
// with CREATE EXTERNAL TABLE and checked against DuckDB's read_csv on the
// same files. sluice reads "" as an empty string and an empty field as
// NULL, which is DuckDB's read_csv with allow_quoted_nulls=false (DuckDB's
// default reads both as NULL).
func TestCSVLikeSpreadsheets(t *testing.T) {
	db := openDuckPlain(t)
	st := startStack(t, "", nil)
	bucket := st.S3.Bucket
	for _, tc := range []struct {
		file, table string
		queries     []string
	}{
		{"spreadsheet.csv", "sheet", []string{
			`select * from %s`,
			`select "Customer Name", "Amount ($)", "Note" from %s where "Note" is not null`,
			`select count(*) from %s where "Note" = ''`,
			`select "Order Date", "Paid", "Score" + 1, "Created At" from %s where "Paid"`,
			`select sum("Amount ($)"), min("Order Date"), max("Created At") from %s`,
			`select length("Note"), "Note" is null from %s`,
		}},
		{"types.csv", "types", []string{
			`select * from %s`,
			`select code, id from %s where code like '0%%'`,
			`select sum(ratio), count(flag), max("when") from %s`,
		}},
		{"monthfirst.csv", "monthfirst", []string{`select * from %s`, `select year(us_date), month(us_date), day(us_date) from %s`}},
		{"ambiguous.csv", "ambiguous", []string{`select a, c, d, e, f, g from %s`, `select b from %s`}},
	} {
		t.Run(tc.table, func(t *testing.T) {
			upload(t, st, formatsFile(t, tc.file), "raw/"+tc.file)
			stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE %s STORED AS CSV LOCATION 's3://%s/raw/%s'", tc.table, bucket, tc.file))
			duckFrom := fmt.Sprintf("read_csv('%s', allow_quoted_nulls=false)", formatsFile(t, tc.file))
			for _, q := range tc.queries {
				got := sluiceRows(run(t, st, fmt.Sprintf(q, tc.table), true))
				want := duckRows(t, db, fmt.Sprintf(q, duckFrom))
				if d := rowsDiff(got, want, false); d != "" {
					t.Errorf("%s: %s", q, d)
				}
			}
		})
	}
	// The row count of a CSV table is labelled as an estimate.
	for _, r := range sluiceRows(stmt(t, st, "SHOW TABLES")) {
		if r[5] != "estimate" {
			t.Errorf("SHOW TABLES row %v: rows_kind %v, want estimate", r, r[5])
		}
	}
	if got := fmt.Sprint(sluiceRows(stmt(t, st, "describe sheet"))); !strings.Contains(got, "[Customer Name varchar yes]") ||
		!strings.Contains(got, "[Created At timestamp yes]") {
		t.Errorf("describe sheet: %s", got)
	}
}
