package tests

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/sluicedb/sluice/local"
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

// TestNamesKeepCase: a --data folder named My-Table loads as the table
// "My-Table"; Parquet columns keep their case (Id stays Id) and are
// matched regardless of case as DuckDB does; columns differing only in
// case are ambiguous when referenced (DuckDB instead renames the second
// to ID_1 when it reads the file); what LoadDir skips it logs with the
// reason. Answers checked against DuckDB over the same files.
func TestNamesKeepCase(t *testing.T) {
	db := openDuckPlain(t)
	dir := t.TempDir()
	mk := func(p string) string {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	people := mk("People/part-0.parquet")
	if _, err := db.Exec(fmt.Sprintf(`COPY (SELECT i AS "Id", 'n' || i AS "Name", i * 1.5 AS "Amount ($)" FROM range(5) t(i)) TO '%s'`, people)); err != nil {
		t.Fatal(err)
	}
	// DuckDB would write the second column as ID_1: columns id and ID.
	dupSchema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "ID", Type: arrow.PrimitiveTypes.Int64}}, nil)
	writeParquet(t, dir, "Dup", dupSchema, 1, 1, func(b *array.RecordBuilder, _ int) {
		b.Field(0).(*array.Int64Builder).Append(1)
		b.Field(1).(*array.Int64Builder).Append(2)
	})
	dup := filepath.Join(dir, "Dup", "part-0.parquet")
	csvData, err := os.ReadFile(formatsFile(t, "spreadsheet.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for p, b := range map[string][]byte{
		"My-Table/sales.csv":         csvData,
		"My-Table/notes.txt":         []byte("not data"),
		"My-Table/old/sales.csv":     csvData, // not a key=value folder
		"README.md":                  []byte("top-level file"),
		"bad name!/x.csv":            csvData,
		"empty/.keep":                nil,
		"People/year=2024/extra.csv": csvData, // another format under a Parquet table
	} {
		if err := os.WriteFile(mk(p), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "People"), filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	st := startStack(t, "", func(o *local.Options) {
		o.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	tables, err := st.LoadDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range tables {
		names = append(names, tb.Name)
	}
	if got := strings.Join(names, ","); got != "Dup,My-Table,People" {
		t.Errorf("tables %s, want Dup,My-Table,People", got)
	}
	for _, want := range []string{
		`msg="data dir: skipping a top-level file`, "README.md",
		`msg="data dir: skipping a symlink`, "linked",
		`msg="data dir: skipping a folder whose name cannot name a table"`, `bad name!`,
		`msg="data dir: skipping a folder without data files"`, "empty",
		`a subfolder that is not a hive key=value folder`, "old",
		`reason="not a data file`, "notes.txt",
		`reason="a csv file in a parquet table"`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	duckPeople := fmt.Sprintf("read_parquet('%s')", people)
	duckSheet := fmt.Sprintf("read_csv('%s', allow_quoted_nulls=false)", formatsFile(t, "spreadsheet.csv"))
	for _, tc := range []struct{ sluice, duck string }{
		{`select id, "Id", ID, "name", "Amount ($)" from people`, `select id, "Id", ID, "name", "Amount ($)" from ` + duckPeople},
		{`select p.ID, P."NAME" from People p where P.id > 2`, `select p.ID, P."NAME" from ` + duckPeople + ` p where P.id > 2`},
		{`select "customer name", "Order Date" from "My-Table"`, `select "customer name", "Order Date" from ` + duckSheet},
		{`select * from "my-table"`, `select * from ` + duckSheet},
		{`select * from dup`, fmt.Sprintf(`select * from read_parquet('%s')`, dup)}, // DuckDB: id, ID_1
	} {
		got := sluiceRows(run(t, st, tc.sluice, true))
		if d := rowsDiff(got, duckRows(t, db, tc.duck), false); d != "" {
			t.Errorf("%s: %s", tc.sluice, d)
		}
	}
	res := stmt(t, st, `select "Id", "Amount ($)" from people limit 1`)
	if got := res.Schema.Field(0).Name + "," + res.Schema.Field(1).Name; got != "Id,Amount ($)" {
		t.Errorf("result columns %s, want Id,Amount ($)", got)
	}
	var shown []string
	for _, r := range sluiceRows(stmt(t, st, "SHOW TABLES")) {
		shown = append(shown, fmt.Sprint(r[0]))
	}
	if got := strings.Join(shown, ","); got != "Dup,My-Table,People" {
		t.Errorf("SHOW TABLES: %s", got)
	}
	on := true
	for _, q := range []string{`select id from dup`, `select "ID" from Dup`} {
		_, err = st.Query(context.Background(), q, &on, nil)
		if !strings.Contains(fmt.Sprint(err), "SL006") || !strings.Contains(fmt.Sprint(err), "is ambiguous") {
			t.Errorf("%s: %v, want an ambiguity error (SL006)", q, err)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
