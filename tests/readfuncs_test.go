package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// readCase is one query over read functions: sql with {root} for the
// files' folder (s3://BUCKET/raw on sluice, the local folder on DuckDB);
// duck, when set, is DuckDB's form of it.
type readCase struct {
	sql, duck string
	ordered   bool
}

// TestReadFunctions: read_parquet, read_csv, read_json (and their
// aliases) and bare paths in FROM, over files in MinIO, answer as DuckDB
// does over the same bytes, adaptive and static: prefixes, globs ('*',
// '**', '?'), hive folders, aliases with column names, joins between
// reads, CSV options as named arguments, and the errors of bad options and
// paths matching nothing.
func TestReadFunctions(t *testing.T) {
	db := openDuckPlain(t)
	st := startStack(t, "", nil)
	dir := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	duck := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("duckdb: %v\n%s", err, q)
		}
	}
	// Parquet: a folder of two files, and hive folders two levels deep.
	duck(fmt.Sprintf(`COPY (SELECT i, 'n' || (i %% 13) AS s, i * 0.5 AS x FROM range(0, 1000) t(i)) TO '%s'`, mk("pq/part-0.parquet")))
	duck(fmt.Sprintf(`COPY (SELECT i, 'n' || (i %% 13) AS s, i * 0.5 AS x FROM range(1000, 1500) t(i)) TO '%s'`, mk("pq/part-1.parquet")))
	for _, y := range []int{2023, 2024} {
		for _, m := range []int{1, 2} {
			duck(fmt.Sprintf(`COPY (SELECT i AS id, i * %d AS v FROM range(0, 50) t(i)) TO '%s'`, m, mk(fmt.Sprintf("hive/year=%d/month=%d/data.parquet", y, m))))
		}
	}
	// CSV and JSON.
	write := func(rel, s string) {
		if err := os.WriteFile(mk(rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("csv/people.csv", "id,name,city\n1,Ann,Oslo\n2,Bob,Rome\n3,\"Cy, Jr\",\n4,\"\",Oslo\n")
	write("pipe/data.csv", "a|b|c\n1|x|2024-01-02\n2|NA|2024-02-03\n3|z|NA\n4||\n")
	write("messy/export.csv", "exported by tool\nversion 2\nid;name;born;note\n1;'O\\'Neil';25/12/1990;'a;b'\n2;'Smith';01/02/2001;NA\n3;'';13/06/1985;''\n")
	write("pad/short.csv", "a,b,c\n1,2,3\n4,5\n6,7,8\n")
	write("bad/rows.csv", "a,b\n1,2\nx,3\n4,5\n6\n")
	write("json/events.ndjson", `{"id":1,"kind":"click","n":3}`+"\n"+`{"id":2,"kind":"view","n":null}`+"\n"+`{"id":3,"kind":"click","n":7}`+"\n")
	if err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		upload(t, st, p, "raw/"+filepath.ToSlash(rel))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s3root := "s3://" + st.S3.Bucket + "/raw"
	cases := []readCase{
		{sql: `select count(*), sum(i), min(s), max(x) from read_parquet('{root}/pq/*.parquet')`},
		{sql: `select count(*), sum(i) from read_parquet('{root}/pq/')`, duck: `select count(*), sum(i) from read_parquet('{root}/pq/*.parquet')`},
		{sql: `select count(*), sum(i) from parquet_scan('{root}/pq/part-?.parquet')`},
		{sql: `select t.i, t.s from read_parquet('{root}/pq/*.parquet') as t where t.i < 5 order by t.i`, ordered: true},
		{sql: `select a, b from read_parquet('{root}/pq/*.parquet') t(a, b, c) where a % 97 = 0 order by a`, ordered: true},
		{sql: `select s, count(*), sum(x) from read_parquet('{root}/pq/*.parquet') group by s order by s`, ordered: true},
		{sql: `select count(*), sum(i) from '{root}/pq/part-1.parquet'`},
		{sql: `select count(*), sum(i), min(s) from read_parquet(['{root}/pq/part-1.parquet', '{root}/pq/part-?.parquet'])`,
			duck: `select count(*), sum(i), min(s) from read_parquet(['{root}/pq/part-0.parquet', '{root}/pq/part-1.parquet'])`},
		{sql: `select kind, id from read_json(['{root}/json/events.ndjson']) order by id`, ordered: true},
		{sql: `select part.i from '{root}/pq/part-1.parquet' as part where part.i > 1495 order by 1`, ordered: true},
		{sql: `select year, month, count(*), sum(v) from read_parquet('{root}/hive/**/*.parquet', hive_partitioning=true) group by all order by 1, 2`, ordered: true},
		{sql: `select year, sum(v) from read_parquet('{root}/hive/**/*.parquet', hive_partitioning=true) where month = 2 group by year order by year`, ordered: true},
		{sql: `select count(*), sum(v) from read_parquet('{root}/hive/year=2024/*/*.parquet', hive_partitioning=false)`},
		{sql: `select * from read_csv('{root}/csv/people.csv') order by id`, ordered: true},
		{sql: `select * from read_csv_auto('{root}/csv/*.csv') order by id`, ordered: true},
		{sql: `select id, name, name is null, city is null from '{root}/csv/people.csv' order by id`, ordered: true},
		{sql: `select p.name, q.s from read_csv('{root}/csv/people.csv') p join read_parquet('{root}/pq/*.parquet') q on p.id = q.i order by 1`, ordered: true},
		{sql: `select * from read_csv('{root}/pipe/data.csv', delim='|', nullstr='NA') order by a`, ordered: true},
		{sql: `select a, b from read_csv('{root}/pipe/data.csv', sep='|', header=true, all_varchar=true) order by a`, ordered: true},
		{sql: `select * from read_csv('{root}/pipe/data.csv', delim='|', header=false, skip=1) order by 1`, ordered: true},
		{sql: `select * from read_csv('{root}/messy/export.csv', skip=2, delim=';', quote='''', escape='\', nullstr='NA', dateformat='%d/%m/%Y') order by id`, ordered: true},
		{sql: `select id, note is null, name is null from read_csv('{root}/messy/export.csv', skip=2, delim=';', quote='''', escape='\', nullstr='NA', dateformat='%d/%m/%Y', allow_quoted_nulls=false) order by id`, ordered: true},
		{sql: `select * from read_csv('{root}/pad/short.csv', null_padding=true) order by a`, ordered: true},
		{sql: `select * from read_csv('{root}/bad/rows.csv', ignore_errors=true) order by a`, ordered: true},
		{sql: `select * from read_csv('{root}/bad/rows.csv', ignore_errors=true, columns={'a': 'BIGINT', 'b': 'BIGINT'}) order by a`, ordered: true},
		{sql: `select id || '!', name from read_csv('{root}/csv/people.csv', types={'id': 'VARCHAR'}) order by id`, ordered: true},
		{sql: `select a, b, c from read_csv('{root}/pipe/data.csv', delim='|', nullstr='NA', column_types={'A': 'DOUBLE'}) order by a`, ordered: true},
		{sql: `select * from read_json('{root}/json/events.ndjson') order by id`, ordered: true},
		{sql: `select kind, count(*), sum(n) from read_ndjson('{root}/json/*.ndjson') group by kind order by kind`, ordered: true},
		{sql: `select count(*) from read_json_auto('{root}/json/') where n is null`, duck: `select count(*) from read_json_auto('{root}/json/*.ndjson') where n is null`},
		{sql: `select e.id, e.kind from '{root}/json/events.ndjson' e where e.id > 1 order by 1`, ordered: true},
	}
	for i, c := range cases {
		sq := strings.ReplaceAll(c.sql, "{root}", s3root)
		dq := c.duck
		if dq == "" {
			dq = c.sql
		}
		dq = strings.ReplaceAll(dq, "{root}", dir)
		want := duckRows(t, db, dq)
		for _, adaptive := range []bool{true, false} {
			t.Run(fmt.Sprintf("%02d/adaptive=%v", i, adaptive), func(t *testing.T) {
				got := sluiceRows(run(t, st, sq, adaptive))
				if d := rowsDiff(got, want, c.ordered); d != "" {
					t.Errorf("%s\nduckdb: %s\n%s", sq, dq, d)
				}
			})
		}
	}
	// Over the Postgres wire protocol, simple and extended: the same rows.
	pg, err := st.StartPG(context.Background(), local.PGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(context.Background(), pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, q := range []string{
		`select s, count(*), sum(i) from read_parquet('{root}/pq/*.parquet') group by s order by s`,
		`select id, name, city from '{root}/csv/people.csv' order by id`,
		`select * from read_csv('{root}/messy/export.csv', skip=2, delim=';', quote='''', escape='\', nullstr='NA', dateformat='%d/%m/%Y') order by id`,
	} {
		want := duckRows(t, db, strings.ReplaceAll(q, "{root}", dir))
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
			got := pgxRows(t, conn, strings.ReplaceAll(q, "{root}", s3root), mode)
			if d := rowsDiff(got, want, true); d != "" {
				t.Errorf("pgwire %v: %s: %s", mode, q, d)
			}
		}
	}
	// EXPLAIN shows the read as a scan named by the call.
	plan := fmt.Sprint(sluiceRows(stmt(t, st, "EXPLAIN SELECT count(*) FROM read_parquet('"+s3root+"/pq/*.parquet')")))
	t.Logf("EXPLAIN: %s", plan)
	if !strings.Contains(plan, "read_parquet('"+s3root+"/pq/*.parquet')") {
		t.Errorf("EXPLAIN does not name the read: %s", plan)
	}
	// Bad options, paths matching nothing, other buckets: coded errors.
	for _, e := range []struct{ sql, code, msg string }{
		{`select * from read_csv('{root}/csv/people.csv', bogus=1)`, "SL022", `unknown CSV option "bogus" (known: all_varchar`},
		{`select * from read_csv('{root}/csv/people.csv', delim='ab')`, "SL022", `delim "ab": want one ASCII character`},
		{`select * from read_parquet('{root}/pq/*.parquet', header=true)`, "SL022", `unknown option "header" (known: hive_partitioning)`},
		{`select * from read_parquet('{root}/nothing/')`, "SL021", `no .parquet files under raw/nothing/`},
		{`select * from read_csv('{root}/csv/people.csv', types={'nope': 'VARCHAR'})`, "SL022", `names column "nope", which the file has not (columns: id, name, city)`},
		{`select * from read_csv('{root}/csv/people.csv', types={'id': 'NOTATYPE'})`, "SL022", `CSV option types`},
		{`select * from read_parquet('{root}/pq/*.nope')`, "SL021", `raw/pq/*.nope`},
		{`select * from read_parquet(['{root}/pq/', '{root}/none/'])`, "SL021", `no .parquet files under raw/none/`},
		{`select * from '{root}/missing.csv'`, "SL021", `no .csv files under raw/missing.csv`},
		{`select * from read_parquet('s3://other-bucket/x/')`, "SL021", `must be in the bucket sluice runs on`},
		{`select * from '{root}/pq/part-0.txt'`, "SL021", `its extension names no format`},
		{`select * from read_csv('{root}/csv/people.csv', timestampformat='%d/%m/%Y %H')`, "SL022", `timestampformat`},
	} {
		sq := strings.ReplaceAll(e.sql, "{root}", s3root)
		ae := stmtErr(t, st, sq)
		if ae.Code != e.code || !strings.Contains(ae.Msg, e.msg) {
			t.Errorf("%s: got %s %q, want %s containing %q", sq, ae.Code, ae.Msg, e.code, e.msg)
		}
	}
}

// TestCSVOptions: CREATE EXTERNAL TABLE ... STORED AS CSV OPTIONS (...)
// with DuckDB's read_csv option names answers as read_csv with the same
// options does in DuckDB over the same bytes; bad options are SL022
// listing the known ones. A read lists its files once per query (at
// planning), where an external table is listed at planning and again
// when the job runs.
func TestCSVOptions(t *testing.T) {
	db := openDuckPlain(t)
	st := startStack(t, "", nil)
	dir := t.TempDir()
	files := map[string]string{
		"messy.csv":  "exported by tool\nversion 2\nid;name;born;note\n1;'O\\'Neil';25/12/1990;'a;b'\n2;'Smith';01/02/2001;NA\n3;'';13/06/1985;''\n",
		"quoted.csv": "k,v\n1,\"\"\n2,\n3,\"x\"\n4,\"NULL\"\n",
		"pad.csv":    "a,b,c\n1,2,3\n4,5\n6,7,8\n",
	}
	// A file longer than the type sample (256 KiB, and DuckDB's 20480
	// sniffed rows) with a bad value near its end: ignore_errors skips that
	// line at scan time.
	var big strings.Builder
	big.WriteString("a,b\n")
	for i := 0; i < 40000; i++ {
		fmt.Fprintf(&big, "%d,%d\n", i, i*2)
	}
	big.WriteString("oops,1\n7,8\n")
	files["big.csv"] = big.String()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		upload(t, st, p, "opts/"+strings.TrimSuffix(name, ".csv")+"/"+name)
	}
	bucket := st.S3.Bucket
	for _, tc := range []struct {
		table, file, options, duckOptions string
		queries                           []string
	}{
		{"messy", "messy.csv", `skip '2', delim ';', quote '''', escape '\', nullstr 'NA', dateformat '%d/%m/%Y'`,
			`skip=2, delim=';', quote='''', escape='\', nullstr='NA', dateformat='%d/%m/%Y'`,
			[]string{`select * from %s order by id`, `select id, year(born), note is null, name is null from %s order by id`}},
		{"quoted", "quoted.csv", `nullstr 'NULL'`, `nullstr='NULL'`,
			[]string{`select k, v, v is null from %s order by k`}},
		{"quoted_kept", "quoted.csv", `allow_quoted_nulls 'false'`, `allow_quoted_nulls=false`,
			[]string{`select k, v, v is null from %s order by k`}},
		{"padded", "pad.csv", `null_padding 'true'`, `null_padding=true`,
			[]string{`select * from %s order by a`, `select count(c), sum(a) from %s`}},
		{"varchar", "pad.csv", `all_varchar 'true', null_padding 'true', header 'true'`, `all_varchar=true, null_padding=true, header=true`,
			[]string{`select a || '!', b from %s order by a`}},
		{"typed", "pad.csv", `types '{''a'': ''DOUBLE'', ''C'': ''VARCHAR''}', null_padding 'true'`, `types={'a': 'DOUBLE', 'C': 'VARCHAR'}, null_padding=true`,
			[]string{`select a / 4, c || '!' from %s order by a`}},
		{"big", "big.csv", `ignore_errors 'true'`, `ignore_errors=true`,
			[]string{`select count(*), sum(a), sum(b), max(a) from %s`}},
	} {
		t.Run(tc.table, func(t *testing.T) {
			stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE %s STORED AS CSV LOCATION 's3://%s/opts/%s/' OPTIONS (%s)",
				tc.table, bucket, strings.TrimSuffix(tc.file, ".csv"), tc.options))
			duckFrom := fmt.Sprintf("read_csv('%s', %s)", filepath.Join(dir, tc.file), tc.duckOptions)
			for _, q := range tc.queries {
				want := duckRows(t, db, fmt.Sprintf(q, duckFrom))
				for _, adaptive := range []bool{true, false} {
					got := sluiceRows(run(t, st, fmt.Sprintf(q, tc.table), adaptive))
					if d := rowsDiff(got, want, strings.Contains(q, "order by")); d != "" {
						t.Errorf("%s (adaptive %v): %s", q, adaptive, d)
					}
				}
			}
		})
	}
	// Without ignore_errors the bad value fails the scan, as in DuckDB.
	stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE strict STORED AS CSV LOCATION 's3://%s/opts/big/'", bucket))
	if _, err := duckQuery(context.Background(), db, fmt.Sprintf("select sum(a) from read_csv('%s')", filepath.Join(dir, "big.csv"))); err == nil {
		t.Errorf("duckdb read the bad value without ignore_errors")
	}
	on := true
	if _, err := st.Query(context.Background(), "select sum(a) from strict", &on, nil); err == nil ||
		!strings.Contains(err.Error(), "SL105") || !strings.Contains(err.Error(), `line 40002, column "a": cannot parse "oops"`) {
		t.Errorf("strict: got %v, want SL105 naming the line and value", err)
	}
	for _, e := range []struct{ sql, msg string }{
		{`OPTIONS (bogus 'x')`, `unknown CSV option "bogus" (known: all_varchar, allow_quoted_nulls, column_types, columns, compression, dateformat, delim, delimiter, dtypes, escape, header, hive_partitioning, ignore_errors, null, null_padding, nullstr, quote, sep, skip, timestampformat, types)`},
		{`OPTIONS (header 'maybe')`, `header "maybe": want true or false`},
		{`OPTIONS (skip '-1')`, `skip "-1"`},
		{`OPTIONS (compression 'gzip')`, `compression gzip: file opts/pad/pad.csv is none by its name`},
		{`OPTIONS (dateformat '%Y/%j')`, `dateformat "%Y/%j"`},
		{`OPTIONS (quote ',')`, `the quote and the delimiter are both`},
	} {
		sq := fmt.Sprintf("CREATE EXTERNAL TABLE bad STORED AS CSV LOCATION 's3://%s/opts/pad/' %s", bucket, e.sql)
		if ae := stmtErr(t, st, sq); ae.Code != "SL022" || !strings.Contains(ae.Msg, e.msg) {
			t.Errorf("%s: got %s %q, want SL022 containing %q", sq, ae.Code, ae.Msg, e.msg)
		}
	}
	// COPY ... (FORMAT csv, NULL 'NA', QUOTE '"') writes what DuckDB writes.
	q := `select i, case when i % 2 = 0 then 'x' || i end as s from range(4) t(i) order by i`
	stmt(t, st, fmt.Sprintf(`COPY (%s) TO 's3://%s/out/nulls.csv' (FORMAT csv, NULL 'NA', QUOTE '"')`, q, bucket))
	got, err := st.Bucket.Get(context.Background(), "out/nulls.csv")
	if err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(dir, "nulls.csv")
	if _, err := db.Exec(fmt.Sprintf(`COPY (%s) TO '%s' (FORMAT csv, HEADER, NULL 'NA', QUOTE '"')`, q, local)); err != nil {
		t.Fatal(err)
	}
	if want, _ := os.ReadFile(local); string(got) != string(want) {
		t.Errorf("COPY with NULL 'NA': wrote %q, DuckDB writes %q", got, want)
	}
	if ae := stmtErr(t, st, fmt.Sprintf(`COPY (%s) TO 's3://%s/out/q.csv' (FORMAT csv, QUOTE 'ab')`, q, bucket)); ae.Code != "SL022" || !strings.Contains(ae.Msg, `QUOTE "ab"`) {
		t.Errorf("COPY QUOTE: got %s %q, want SL022", ae.Code, ae.Msg)
	}
	// Listing: a read lists its prefix once per query, an external table
	// at planning and again when the job runs.
	lists := func(sql string) int64 {
		before, _ := objstore.StatsOf(st.Bucket)
		run(t, st, sql, true)
		after, _ := objstore.StatsOf(st.Bucket)
		return after.Sub(before).List
	}
	ext := lists("select count(*) from padded")
	read := lists(fmt.Sprintf("select count(*) from read_csv('s3://%s/opts/pad/', null_padding=true)", bucket))
	t.Logf("LIST requests per query: read %d, external table %d", read, ext)
	if read != 1 || ext < read {
		t.Errorf("LIST requests: read %d (want 1), external table %d", read, ext)
	}
}
