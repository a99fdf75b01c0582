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
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

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
// same files with its default options: "" and an empty field are both
// NULL (allow_quoted_nulls, TestCSVOptions checks the option off).
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
			duckFrom := fmt.Sprintf("read_csv('%s')", formatsFile(t, tc.file))
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
	duckSheet := fmt.Sprintf("read_csv('%s')", formatsFile(t, "spreadsheet.csv"))
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

// TestJSONTables: newline-delimited JSON registered with CREATE EXTERNAL
// TABLE ... STORED AS JSON, and as a --data folder of .jsonl files (one
// split per file), checked against DuckDB's read_json on the same files.
// Conflicting types and lists are VARCHAR columns of the values' JSON
// text (DuckDB: JSON and VARCHAR[]; compared through ::varchar and
// to_json). A bad line fails with SL105 naming the file and line.
func TestJSONTables(t *testing.T) {
	db := openDuckPlain(t)
	st := startStack(t, "", nil)
	bucket := st.S3.Bucket
	events := formatsFile(t, "events.ndjson")
	upload(t, st, events, "raw/json/events.ndjson")
	stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE Events STORED AS JSON LOCATION 's3://%s/raw/json/'", bucket))
	duckEvents := fmt.Sprintf("read_json('%s')", events)
	for _, tc := range []struct{ sluice, duck string }{
		{`select id, name, score, ok, day, "at", num, gone, extra from events`, `select id, name, score, ok, day, "at", num, gone::varchar, extra from ` + duckEvents},
		{`select id, mixed, tags from events`, `select id, mixed::varchar, to_json(tags)::varchar from ` + duckEvents},
		{`select count(*), sum(score), max(day), count(name) from events where ok`, `select count(*), sum(score), max(day), count(name) from ` + duckEvents + ` where ok`},
		{`select "NAME" from EVENTS where id = 2`, `select "NAME" from ` + duckEvents + ` where id = 2`},
	} {
		got := sluiceRows(run(t, st, tc.sluice, true))
		if d := rowsDiff(got, duckRows(t, db, tc.duck), false); d != "" {
			t.Errorf("%s: %s", tc.sluice, d)
		}
	}
	if got := fmt.Sprint(sluiceRows(stmt(t, st, "describe events"))); !strings.Contains(got, "[day date yes]") || !strings.Contains(got, "[Name varchar yes]") {
		t.Errorf("describe events: %s", got)
	}

	// A --data folder of .jsonl files, several splits.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "clicks"), 0o755); err != nil {
		t.Fatal(err)
	}
	for f := 0; f < 3; f++ {
		var b strings.Builder
		for i := 0; i < 2000; i++ {
			k := f*2000 + i
			fmt.Fprintf(&b, `{"k": %d, "user": "u%d", "v": %d.25, "at": "2024-03-%02d 12:00:00"}`+"\n", k, k%17, k%100, 1+k%28)
		}
		if err := os.WriteFile(filepath.Join(dir, "clicks", fmt.Sprintf("part-%d.jsonl", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	duckClicks := fmt.Sprintf("read_json('%s')", filepath.Join(dir, "clicks", "*.jsonl"))
	for _, q := range []string{
		`select count(*), sum(k), sum(v), min("at"), max("at") from %s`,
		`select "user", count(*), avg(v) from %s group by "user"`,
	} {
		got := sluiceRows(run(t, st, fmt.Sprintf(q, "clicks"), true))
		if d := rowsDiff(got, duckRows(t, db, fmt.Sprintf(q, duckClicks)), false); d != "" {
			t.Errorf("%s: %s", q, d)
		}
	}

	// Bad input found by the scan: a value the column's type cannot hold,
	// a line that is not an object (in a file added after registration,
	// so the sample did not see it).
	put := func(key, body string) {
		if err := st.Bucket.Put(context.Background(), key, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	put("raw/bad/a.ndjson", "{\"a\": 1}\n")
	stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE badvalue STORED AS JSON LOCATION 's3://%s/raw/bad/'", bucket))
	put("raw/bad/badvalue.ndjson", "{\"a\": 1}\n{\"a\": 2}\n\n{\"a\": \"x\"}\n")
	put("raw/notobj/a.ndjson", "{\"a\": 1}\n")
	stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE notobj STORED AS JSON LOCATION 's3://%s/raw/notobj/'", bucket))
	put("raw/notobj/b.ndjson", "{\"a\": 1}\n[2]\n")
	on := true
	for q, want := range map[string]string{
		"select sum(a) from badvalue": `badvalue.ndjson: line 4, column "a": cannot read "x" as int64`,
		"select count(*) from notobj": `raw/notobj/b.ndjson: line 2: not a JSON object`,
	} {
		_, err := st.Query(context.Background(), q, &on, nil)
		if !strings.Contains(fmt.Sprint(err), "SL105") || !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("%s: %v, want SL105 %q", q, err, want)
		}
	}
	// ... and by the sample at registration.
	if ae := stmtErr(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE x STORED AS JSON LOCATION 's3://%s/raw/notobj/b.ndjson'", bucket)); ae.Code != "SL105" ||
		!strings.Contains(ae.Error(), "raw/notobj/b.ndjson: line 2: not a JSON object") {
		t.Errorf("create over a bad file: %v, want SL105 naming the file and line", ae)
	}
}

// TestCompressedTextTables reads CSV and JSON files compressed whole
// (.csv.gz, .json.zst, ...), as users keep exports and logs in buckets,
// through a --data folder and CREATE EXTERNAL TABLE, against DuckDB on the
// same rows uncompressed. Data that is not what its name says fails with
// SL106 naming the file, at registration or in the scan.
func TestCompressedTextTables(t *testing.T) {
	db := openDuckPlain(t)
	st := startStack(t, "", nil)
	dir := t.TempDir()

	// Rows for both formats; files of 3,000 rows compress well past the
	// 64 KiB first read of the sample.
	var csvB, jsonB strings.Builder
	csvB.WriteString("k,user,v,day\n")
	for k := 0; k < 3000; k++ {
		fmt.Fprintf(&csvB, "%d,u%d,%d.25,2024-03-%02d\n", k, k%17, k%100, 1+k%28)
		fmt.Fprintf(&jsonB, `{"k": %d, "user": "u%d", "v": %d.25, "day": "2024-03-%02d"}`+"\n", k, k%17, k%100, 1+k%28)
	}
	plain := filepath.Join(dir, "plain")
	for name, body := range map[string]string{"rows.csv": csvB.String(), "rows.ndjson": jsonB.String()} {
		if err := os.MkdirAll(plain, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(plain, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	write := func(rel string, body []byte) {
		p := filepath.Join(data, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("csvgz/part-0.csv.gz", gzipBytes(t, csvB.String()))
	write("csvgz/part-1.CSV.GZ", gzipBytes(t, csvB.String()))
	write("jsonzst/part-0.ndjson.zst", zstdBytes(t, jsonB.String()))
	write("jsonzst/part-1.jsonl", []byte(jsonB.String())) // mixed with an uncompressed file
	if _, err := st.LoadDir(context.Background(), data); err != nil {
		t.Fatal(err)
	}
	bucket := st.S3.Bucket
	if err := st.Bucket.Put(context.Background(), "raw/gz/rows.json.gz", gzipBytes(t, jsonB.String())); err != nil {
		t.Fatal(err)
	}
	stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE jgz STORED AS JSON LOCATION 's3://%s/raw/gz/'", bucket))
	if err := st.Bucket.Put(context.Background(), "raw/zst/rows.csv.zst", zstdBytes(t, csvB.String())); err != nil {
		t.Fatal(err)
	}
	stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE czst STORED AS CSV LOCATION 's3://%s/raw/zst/rows.csv.zst'", bucket))

	duckCSV := fmt.Sprintf("read_csv('%s')", filepath.Join(plain, "rows.csv"))
	duckJSON := fmt.Sprintf("read_json('%s')", filepath.Join(plain, "rows.ndjson"))
	const q = `select count(*), sum(k), sum(v), min(day), max(day), count(distinct "user") from %s`
	for _, tc := range []struct{ table, duck string }{
		{"csvgz", "(select * from " + duckCSV + " union all select * from " + duckCSV + ")"},
		{"jsonzst", "(select * from " + duckJSON + " union all select * from " + duckJSON + ")"},
		{"jgz", duckJSON},
		{"czst", duckCSV},
	} {
		for _, adaptive := range []bool{true, false} {
			got := sluiceRows(run(t, st, fmt.Sprintf(q, tc.table), adaptive))
			if d := rowsDiff(got, duckRows(t, db, fmt.Sprintf(q, tc.duck)), false); d != "" {
				t.Errorf("%s (adaptive %v): %s", tc.table, adaptive, d)
			}
		}
	}
	if got := fmt.Sprint(sluiceRows(stmt(t, st, "describe csvgz"))); !strings.Contains(got, "[day date yes]") || !strings.Contains(got, "[v decimal(") {
		t.Errorf("describe csvgz: %s", got)
	}
	// The row estimate of a compressed table is of its rows, not its
	// stored bytes: within a factor of two of the 6,000 rows.
	tb, err := st.Catalog.Get(context.Background(), "csvgz")
	if err != nil {
		t.Fatal(err)
	}
	if !tb.RowsEstimated || tb.Rows < 3000 || tb.Rows > 12000 {
		t.Errorf("csvgz rows %d (estimated %v), want about 6000, estimated", tb.Rows, tb.RowsEstimated)
	}

	// Not what the name says: at registration (the sample), in the scan
	// (a file added after registration, truncated).
	if err := st.Bucket.Put(context.Background(), "raw/notgz/a.csv.gz", []byte("a,b\n1,2\n")); err != nil {
		t.Fatal(err)
	}
	if ae := stmtErr(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE notgz STORED AS CSV LOCATION 's3://%s/raw/notgz/'", bucket)); !strings.Contains(ae.Error(), "raw/notgz/a.csv.gz") || !strings.Contains(ae.Error(), "gzip") {
		t.Errorf("create over a file that is not gzip: %v, want an error naming the file", ae)
	}
	gz := gzipBytes(t, jsonB.String())
	if err := st.Bucket.Put(context.Background(), "raw/gz/cut.json.gz", gz[:len(gz)/2]); err != nil {
		t.Fatal(err)
	}
	on := true
	_, err = st.Query(context.Background(), "select count(*) from jgz", &on, nil)
	if !strings.Contains(fmt.Sprint(err), "SL106") || !strings.Contains(fmt.Sprint(err), "raw/gz/cut.json.gz") {
		t.Errorf("scan of a truncated gzip file: %v, want SL106 naming the file", err)
	}
}

func gzipBytes(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zstdBytes(t *testing.T, s string) []byte {
	t.Helper()
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return w.EncodeAll([]byte(s), nil)
}
