package tests

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyOptions writes one query's result with COPY in every format and
// option a user reaches for (a single file named by the target, CSV
// without a header or with another delimiter, gzip/zstd text, Parquet
// codecs, newline-delimited JSON) and checks each twice against DuckDB:
// sluice reads the files back through CREATE EXTERNAL TABLE, and DuckDB
// itself reads the very objects written (downloaded), so the files are
// what other engines expect. Bad options are SL022, before anything is
// written.
func TestCopyOptions(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bucket := st.S3.Bucket
	q := "select o_orderkey, o_custkey, o_totalprice, o_orderdate, o_orderpriority from orders where o_orderkey < 2000"
	check := "select count(*), sum(o_totalprice), min(o_orderdate), max(o_orderpriority), sum(o_custkey) from %s"
	want := duckRows(t, db, fmt.Sprintf(check, "("+q+")"))
	local := t.TempDir()
	cases := []struct {
		name, target, opts string
		files              int    // objects of data written (0: more than one allowed)
		stored, options    string // how sluice registers the target (options: the column list and OPTIONS)
		duck               string // DuckDB's reader of the downloaded files, %s the path glob
	}{
		{"one parquet file", "one/orders.parquet", "", 1, "parquet", "", "read_parquet('%s')"},
		{"one csv.gz file", "one/orders.csv.gz", "", 1, "csv", "", "read_csv('%s')"},
		{"one json file", "one/orders.json", "", 1, "json", "", "read_json('%s')"},
		{"one zstd json file", "one/orders.jsonl.zst", "(FORMAT json)", 1, "json", "", "read_json('%s', format = 'newline_delimited')"},
		{"csv no header, pipe", "folder/csv_pipe/", "(FORMAT csv, HEADER false, DELIMITER '|')", 0, "csv",
			"(o_orderkey bigint, o_custkey bigint, o_totalprice decimal(15,2), o_orderdate date, o_orderpriority varchar) OPTIONS (header 'false', delimiter '|')", "read_csv('%s', header = false, delim = '|', names = ['o_orderkey', 'o_custkey', 'o_totalprice', 'o_orderdate', 'o_orderpriority'])"},
		{"csv zstd folder", "folder/csv_zst/", "(FORMAT csv, COMPRESSION zstd)", 0, "csv", "", "read_csv('%s')"},
		{"json folder", "folder/json/", "(FORMAT json)", 0, "json", "", "read_json('%s')"},
		{"parquet snappy", "folder/snappy/", "(COMPRESSION 'snappy')", 0, "parquet", "", "read_parquet('%s')"},
		{"parquet uncompressed", "folder/plain/", "(FORMAT parquet, COMPRESSION none)", 0, "parquet", "", "read_parquet('%s')"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stmt(t, st, fmt.Sprintf("COPY (%s) TO 's3://%s/%s' %s", q, bucket, c.target, c.opts))
			name := fmt.Sprintf("copied_%d", i)
			cols, opts, _ := strings.Cut(c.options, " OPTIONS")
			if opts != "" {
				opts = "OPTIONS" + opts
			}
			stmt(t, st, fmt.Sprintf("create external table %s %s stored as %s location 's3://%s/%s' %s", name, cols, c.stored, bucket, c.target, opts))
			compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(check, name), true)), want, false)

			// DuckDB reads the same objects (the data files; markers are
			// named with a leading '_', which readers skip).
			objs, err := st.Bucket.List(ctx, c.target)
			if err != nil {
				t.Fatal(err)
			}
			sub := filepath.Join(local, fmt.Sprint(i))
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			var data []string
			for _, o := range objs {
				base := path.Base(o.Key)
				if strings.HasPrefix(base, "_") {
					continue
				}
				b, err := st.Bucket.Get(ctx, o.Key)
				if err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(sub, base)
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				data = append(data, p)
			}
			if len(data) == 0 || (c.files > 0 && len(data) != c.files) {
				t.Fatalf("%s holds %d data files (%v), want %d", c.target, len(data), objs, c.files)
			}
			glob := filepath.Join(sub, "*")
			compareRows(t, duckRows(t, db, fmt.Sprintf(check, fmt.Sprintf(c.duck, glob))), want, false)
		})
	}

	// QUOTE and NULL: values holding the delimiter, the quote, a '"' and
	// NULLs, read back by DuckDB with the same quote and null string.
	t.Run("csv quote and null", func(t *testing.T) {
		qq := "select o_orderkey, case when o_orderkey % 3 = 0 then null when o_orderkey % 3 = 1 then o_orderpriority || ', it''s \"x\"' else '' end as p from orders where o_orderkey < 2000"
		stmt(t, st, fmt.Sprintf("COPY (%s) TO 's3://%s/quoted/q.csv' (QUOTE '~', NULL 'NA')", qq, bucket))
		b, err := st.Bucket.Get(ctx, "quoted/q.csv")
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(local, "q.csv")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		chk := "select count(*), count(p), count(nullif(p, '')), min(p), max(p), sum(o_orderkey * length(p)) from %s"
		compareRows(t, duckRows(t, db, fmt.Sprintf(chk, fmt.Sprintf("read_csv('%s', quote = '~', escape = '~', nullstr = 'NA', columns = {'o_orderkey': 'BIGINT', 'p': 'VARCHAR'})", p))),
			duckRows(t, db, fmt.Sprintf(chk, "("+qq+")")), false)
	})

	// The file of a registered table is not a COPY target at all; a file
	// target is replaced only with OVERWRITE, and never appended to.
	target := fmt.Sprintf("'s3://%s/one/orders.parquet'", bucket)
	if e := stmtErr(t, st, fmt.Sprintf("COPY (select 7 as x) TO %s (OVERWRITE)", target)); e.Code != "SL021" || !strings.Contains(e.Msg, "copied_0") {
		t.Errorf("COPY onto a table's file: %s %s, want SL021 naming copied_0", e.Code, e.Msg)
	}
	stmt(t, st, "drop table copied_0")
	if e := stmtErr(t, st, fmt.Sprintf("COPY (select 1 as x) TO %s", target)); e.Code != "SL021" || !strings.Contains(e.Msg, "OVERWRITE") {
		t.Errorf("COPY onto an existing file: %s %s, want SL021", e.Code, e.Msg)
	}
	if e := stmtErr(t, st, fmt.Sprintf("COPY (select 1 as x) TO %s (APPEND)", target)); e.Code != "SL022" {
		t.Errorf("APPEND to a file: %s %s, want SL022", e.Code, e.Msg)
	}
	stmt(t, st, fmt.Sprintf("COPY (select 7 as x) TO %s (OVERWRITE)", target))
	stmt(t, st, fmt.Sprintf("create external table replaced stored as parquet location %s", target))
	if got := sluiceRows(run(t, st, "select count(*), sum(x) from replaced", true)); fmt.Sprint(got) != "[[1 7]]" {
		t.Errorf("file after OVERWRITE: %v, want one row of 7", got)
	}

	for _, c := range []struct{ opts, msg string }{
		{"(FORMAT csv, DELIMITER 'ab')", "DELIMITER"},
		{"(FORMAT parquet, HEADER false)", "CSV options"},
		{"(COMPRESSION brotli)", "compression"},
		{"(FORMAT csv, COMPRESSION lz4)", "compression"},
		{"(NOSUCH 1)", "unknown option"},
		{"(FORMAT csv, QUOTE 'ab')", "QUOTE"},
		{"(FORMAT parquet, NULL 'x')", "CSV options"},
		{"(FORMAT parquet, PARTITION_BY (y))", "not a column"},
	} {
		e := stmtErr(t, st, fmt.Sprintf("COPY (select 1 as x) TO 's3://%s/bad/' %s", bucket, c.opts))
		if e.Code != "SL022" || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("COPY %s: %s %s, want SL022 naming %q", c.opts, e.Code, e.Msg, c.msg)
		}
	}
	if objs, _ := st.Bucket.List(ctx, "bad/"); len(objs) != 0 {
		t.Errorf("refused COPYs wrote %d objects", len(objs))
	}
}
