package tests

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluicedb/sluice/coordinator"
)

// typedLike converts text fields (nil: NULL) to the harness's values,
// each column typed as the oracle's rows type it: numbers to float64,
// booleans from t/f, the rest as text.
func typedLike(fields [][]*string, want []row) []row {
	kinds := map[int]string{}
	for _, r := range want {
		for j, v := range r {
			if _, done := kinds[j]; done || v == nil {
				continue
			}
			switch v.(type) {
			case float64:
				kinds[j] = "number"
			case bool:
				kinds[j] = "bool"
			default:
				kinds[j] = "text"
			}
		}
	}
	out := make([]row, len(fields))
	for i, rec := range fields {
		r := make(row, len(rec))
		for j, v := range rec {
			if v == nil {
				continue
			}
			r[j] = *v
			switch kinds[j] {
			case "number":
				if f, err := strconv.ParseFloat(*v, 64); err == nil {
					r[j] = f
				}
			case "bool":
				r[j] = *v == "t"
			}
		}
		out[i] = r
	}
	return out
}

// parseCSV reads COPY's csv output: an empty unquoted field is NULL.
func parseCSV(t *testing.T, data string, header bool) ([]string, [][]*string) {
	t.Helper()
	r := csv.NewReader(strings.NewReader(data))
	r.FieldsPerRecord = -1
	var head []string
	var out [][]*string
	for line := 0; ; line++ {
		rec, err := r.Read()
		if err != nil {
			break
		}
		if header && line == 0 {
			head = rec
			continue
		}
		fs := make([]*string, len(rec))
		for j, f := range rec {
			if f != "" {
				fs[j] = &f
			}
		}
		out = append(out, fs)
	}
	return head, out
}

// parseCopyText reads COPY's text format: tab-separated, \N for NULL,
// backslash escapes.
func parseCopyText(t *testing.T, data string) [][]*string {
	t.Helper()
	var out [][]*string
	for _, line := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
		var fs []*string
		for _, f := range strings.Split(line, "\t") {
			if f == `\N` {
				fs = append(fs, nil)
				continue
			}
			var b strings.Builder
			for i := 0; i < len(f); i++ {
				if f[i] != '\\' || i+1 == len(f) {
					b.WriteByte(f[i])
					continue
				}
				i++
				switch f[i] {
				case 't':
					b.WriteByte('\t')
				case 'n':
					b.WriteByte('\n')
				case 'r':
					b.WriteByte('\r')
				default:
					b.WriteByte(f[i])
				}
			}
			s := b.String()
			fs = append(fs, &s)
		}
		out = append(out, fs)
	}
	return out
}

// TestPGWireCopy runs COPY ... TO STDOUT through pgx's CopyTo and psql's
// \copy: csv and text rows checked against DuckDB, the escaping of text
// and csv fields against the exact bytes Postgres 15 writes for the same
// values, and COPY FROM refused with a stable code.
func TestPGWireCopy(t *testing.T) {
	psql := needPSQL(t)
	db := openDuck(t, dataDir(t, *sfFlag))
	_, pg := pgStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	copyTo := func(sql string) (string, string) {
		t.Helper()
		var buf bytes.Buffer
		tag, err := conn.PgConn().CopyTo(ctx, &buf, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return buf.String(), tag.String()
	}

	// csv with a header, through pgx: rows and column names.
	q := `select l_returnflag, l_linestatus, sum(l_quantity), count(*), avg(l_discount), min(l_shipdate) from lineitem group by 1, 2 order by 1, 2`
	want := duckRows(t, db, q)
	out, tag := copyTo(`COPY (` + q + `) TO STDOUT WITH (FORMAT csv, HEADER true)`)
	head, fields := parseCSV(t, out, true)
	if got := strings.Join(head, ","); got != "l_returnflag,l_linestatus,sum,count,avg,min" {
		t.Fatalf("header %q", got)
	}
	if tag != fmt.Sprintf("COPY %d", len(want)) {
		t.Fatalf("tag %q", tag)
	}
	compareRows(t, typedLike(fields, want), want, true)

	// A whole table in the text format, NULLs from an outer join, the
	// old option syntax with a delimiter: all against DuckDB.
	q = `select l_orderkey, l_linenumber, l_shipdate, l_extendedprice, l_comment from lineitem`
	want = duckRows(t, db, q)
	out, tag = copyTo(`COPY lineitem (l_orderkey, l_linenumber, l_shipdate, l_extendedprice, l_comment) TO STDOUT`)
	if tag != fmt.Sprintf("COPY %d", len(want)) {
		t.Fatalf("tag %q, want %d rows", tag, len(want))
	}
	compareRows(t, typedLike(parseCopyText(t, out), want), want, false)
	q = `select c_custkey, o_orderkey, o_orderstatus from customer left join orders on o_custkey = c_custkey and o_orderkey < 100 where c_custkey < 40 order by 1, 2`
	want = duckRows(t, db, q)
	out, _ = copyTo(`copy (` + q + `) to stdout`)
	compareRows(t, typedLike(parseCopyText(t, out), want), want, true)
	out, _ = copyTo(`copy (` + q + `) to stdout with delimiter '|' null 'NULL' csv header`)
	if !strings.HasPrefix(out, "c_custkey|o_orderkey|o_orderstatus\n") || !strings.Contains(out, "|NULL|NULL\n") {
		t.Fatalf("old syntax:\n%s", out)
	}

	// Escaping: the bytes Postgres 15 writes for these values.
	special := `select 1 as id, 'tab	here' as a, 'line
break' as b, 'back\slash' as c, 'quote"d' as d, 'comma,semi;' as e, cast(null as varchar) as f, '' as g`
	for _, c := range []struct{ opts, want string }{
		{``, "1\ttab\\there\tline\\nbreak\tback\\\\slash\tquote\"d\tcomma,semi;\t\\N\t\n"},
		{`with csv header`, "id,a,b,c,d,e,f,g\n1,tab\there,\"line\nbreak\",back\\slash,\"quote\"\"d\",\"comma,semi;\",,\"\"\n"},
		{`with (format csv, header true, delimiter ';')`, "id;a;b;c;d;e;f;g\n1;tab\there;\"line\nbreak\";back\\slash;\"quote\"\"d\";\"comma,semi;\";;\"\"\n"},
		{`with (format text, header, delimiter '|', null 'NULL')`, "id|a|b|c|d|e|f|g\n1|tab\\there|line\\nbreak|back\\\\slash|quote\"d|comma,semi;|NULL|\n"},
		{`with (format csv, force_quote *, null 'N')`, "\"1\",\"tab\there\",\"line\nbreak\",\"back\\slash\",\"quote\"\"d\",\"comma,semi;\",N,\"\"\n"},
	} {
		if got, _ := copyTo(`copy (` + special + `) to stdout ` + c.opts); got != c.want {
			t.Errorf("copy %s:\n got %q\nwant %q", c.opts, got, c.want)
		}
	}

	// Refused: COPY FROM, COPY to a server file, binary; the connection
	// goes on.
	for _, c := range []struct{ sql, state string }{
		{`copy nation from stdin`, "0A000"},
		{`copy nation to '/tmp/nation.txt'`, "0A000"},
		{`copy nation to stdout with (format binary)`, "0A000"},
		{`copy nation to stdout with (delimiter 'ab')`, "0A000"},
		{`copy nosuch to stdout`, "42P01"},
	} {
		_, err := conn.PgConn().CopyTo(ctx, &bytes.Buffer{}, c.sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != c.state {
			t.Errorf("%s: %v, want %s", c.sql, err, c.state)
		}
	}
	var n int64
	if err := conn.QueryRow(ctx, `select count(*) from nation`).Scan(&n); err != nil || n != 25 {
		t.Fatalf("after the errors: %d %v", n, err)
	}

	// psql's \copy (select ...) to 'file' with csv header: a client file.
	dir := t.TempDir()
	file := filepath.Join(dir, "out.csv")
	q = `select n_nationkey, n_name, r_name from nation, region where n_regionkey = r_regionkey order by n_nationkey`
	cmd := exec.Command(psql, pgURL(pg), "-X", "-v", "ON_ERROR_STOP=1", "-c", `\copy (`+q+`) to '`+file+`' with csv header`)
	if b, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(b)) != "COPY 25" {
		t.Fatalf("psql \\copy: %v\n%s", err, b)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want = duckRows(t, db, q)
	head, fields = parseCSV(t, string(data), true)
	if strings.Join(head, ",") != "n_nationkey,n_name,r_name" {
		t.Fatalf("psql header %q", head)
	}
	compareRows(t, typedLike(fields, want), want, true)
	// \copy table to a file in the text format.
	cmd = exec.Command(psql, pgURL(pg), "-X", "-v", "ON_ERROR_STOP=1", "-c", `\copy region to '`+file+`'`)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("psql \\copy region: %v\n%s", err, b)
	}
	if data, err = os.ReadFile(file); err != nil {
		t.Fatal(err)
	}
	want = duckRows(t, db, `select * from region`)
	compareRows(t, typedLike(parseCopyText(t, string(data)), want), want, false)
}

// TestPGWireCursor reads a query through a cursor the way psycopg2's
// named cursors do (BEGIN; DECLARE; FETCH FORWARD n until no rows; CLOSE;
// COMMIT) in pgx's simple protocol, text and BINARY, and through psql:
// the rows against DuckDB, the column names and types as the query's.
func TestPGWireCursor(t *testing.T) {
	psql := needPSQL(t)
	db := openDuck(t, dataDir(t, *sfFlag))
	_, pg := pgStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	simple := pgx.QueryExecModeSimpleProtocol
	do := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, simple); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	q := `select o_orderkey, o_orderdate, o_totalprice, o_orderpriority, o_orderkey % 7 = 0 from orders where o_orderkey < 3000 order by o_orderkey`
	want := duckRows(t, db, q)
	direct, err := conn.Query(ctx, q, simple)
	if err != nil {
		t.Fatal(err)
	}
	wantFields := direct.FieldDescriptions()
	direct.Close()
	for _, binary := range []string{"", "binary"} {
		do(`begin`)
		do(`declare "c1" ` + binary + ` no scroll cursor without hold for ` + q)
		var got []row
		batches := 0
		for {
			rows := pgxRows(t, conn, `fetch forward 97 from "c1"`, simple)
			if len(rows) == 0 {
				break
			}
			got = append(got, rows...)
			batches++
		}
		rs, err := conn.Query(ctx, `fetch 0 from "c1"`, simple)
		if err == nil {
			rs.Close()
			err = rs.Err()
		}
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "55000" {
			t.Fatalf("fetch 0: %v", err)
		}
		do(`rollback`)
		if batches != (len(want)+96)/97 {
			t.Errorf("%s: %d batches for %d rows", binary, batches, len(want))
		}
		compareRows(t, got, want, true)
	}
	// FETCH describes its rows as the query does; MOVE skips.
	do(`begin`)
	do(`declare c2 cursor for ` + q)
	do(`move 10 in c2`)
	rs, err := conn.Query(ctx, `fetch next from c2`, simple)
	if err != nil {
		t.Fatal(err)
	}
	gotFields := rs.FieldDescriptions()
	rs.Close()
	if fmt.Sprint(gotFields) != fmt.Sprint(wantFields) {
		t.Fatalf("fetch fields %v, want %v", gotFields, wantFields)
	}
	compareRows(t, pgxRows(t, conn, `fetch 2 from c2`, simple), want[11:13], true)
	do(`close c2`)
	do(`commit`)

	// psql: a script in one transaction.
	script := `begin;
declare c cursor for select n_nationkey, n_name from nation order by n_nationkey;
fetch 3 from c;
move forward 10 in c;
fetch all from c;
close c;
commit;
`
	cmd := exec.Command(psql, pgURL(pg), "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1")
	cmd.Stdin = strings.NewReader(script)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, b)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "|") {
			lines = append(lines, l)
		}
	}
	var wantLines []string
	for i, r := range duckRows(t, db, `select n_nationkey, n_name from nation order by n_nationkey`) {
		if i < 3 || i >= 13 {
			wantLines = append(wantLines, fmt.Sprintf("%v|%v", r[0], r[1]))
		}
	}
	if strings.Join(lines, "\n") != strings.Join(wantLines, "\n") {
		t.Fatalf("psql cursor:\n%s\nwant:\n%s", b, strings.Join(wantLines, "\n"))
	}
}

// TestPGWireStatementTimeout: a query running past statement_timeout
// (SET, or the options startup parameter) gets 57014, its job is
// cancelled on the coordinator, and the connection goes on; a query
// within the limit runs.
func TestPGWireStatementTimeout(t *testing.T) {
	st, pg := pgStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	slow := `select count(*) from lineitem a, lineitem b where a.l_orderkey <> b.l_orderkey`
	cl := coordinator.NewClient(st.APIURL, "")
	for _, c := range []struct {
		name, url, set string
		limit          time.Duration
	}{
		{"set", pgURL(pg), `set statement_timeout = '2s'`, 2 * time.Second},
		{"options", pgURL(pg) + "&options=-c%20statement_timeout%3D1500", ``, 1500 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := pgx.Connect(ctx, c.url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if c.set != "" {
				if _, err := conn.Exec(ctx, c.set); err != nil {
					t.Fatal(err)
				}
			}
			var shown string
			if err := conn.QueryRow(ctx, `show statement_timeout`).Scan(&shown); err != nil || shown != map[string]string{"set": "2s", "options": "1500ms"}[c.name] {
				t.Fatalf("show statement_timeout: %q %v", shown, err)
			}
			start := time.Now()
			_, err = conn.Exec(ctx, slow)
			took := time.Since(start)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "57014" || pe.Message != "canceling statement due to statement timeout" {
				t.Fatalf("slow query: %v", err)
			}
			if took < c.limit || took > c.limit+20*time.Second {
				t.Fatalf("timed out after %v, limit %v", took, c.limit)
			}
			ids, err := cl.Jobs(ctx)
			if err != nil || len(ids) == 0 {
				t.Fatalf("jobs: %v %v", ids, err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				js, err := cl.Status(ctx, ids[0])
				if err != nil {
					t.Fatal(err)
				}
				if js.State == coordinator.StateCancelled {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("job %s is %s after the timeout, want cancelled", ids[0], js.State)
				}
				time.Sleep(200 * time.Millisecond)
			}
			var n int64
			if err := conn.QueryRow(ctx, `select count(*) from nation`).Scan(&n); err != nil || n != 25 {
				t.Fatalf("after the timeout: %d %v", n, err)
			}
			if _, err := conn.Exec(ctx, `set statement_timeout = 0`); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestPGWireColumnNames: unaliased expressions are named as Postgres
// names them over the wire (count, sum, extract, ?column?, the column of
// a cast, case); the HTTP API keeps sluice's names.
func TestPGWireColumnNames(t *testing.T) {
	st, pg := pgStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	q := `select count(*), sum(n_nationkey), extract(year from date '1995-03-01'), n_regionkey + 1, cast(n_regionkey as int),
		case when n_regionkey > 1 then 'x' else 'y' end, max(n_name) as top, r.*, 1, current_user
		from nation, region r where n_regionkey = r_regionkey group by n_regionkey, r_regionkey, r_name, r_comment`
	want := "count sum extract ?column? n_regionkey case top r_regionkey r_name r_comment ?column? current_user"
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeDescribeExec} {
		rs, err := conn.Query(ctx, q, mode)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range rs.FieldDescriptions() {
			names = append(names, f.Name)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names, " "); got != want {
			t.Fatalf("%v: names %q, want %q", mode, got, want)
		}
	}
	res := run(t, st, `select count(*), n_regionkey + 1 from nation group by n_regionkey`, false)
	if got := res.Schema.Field(0).Name + " " + res.Schema.Field(1).Name; got != "count(*) (n_regionkey + 1)" {
		t.Fatalf("sluice's own names changed: %q", got)
	}
}

// needPsycopg2 returns the Python that has psycopg2 (Debian's
// python3-psycopg2); without one the test is skipped, or fails under CI
// (.ci/run installs it).
func needPsycopg2(t *testing.T) string {
	t.Helper()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import psycopg2").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("psycopg2 not installed: .ci/run installs python3-psycopg2")
		}
		t.Skip("psycopg2 not installed (apt-get install -y python3-psycopg2)")
	}
	return py
}

// TestPGWirePsycopg2 runs what psycopg2 users write: copy_expert of a
// COPY ... TO STDOUT WITH CSV HEADER, a named (server-side) cursor read
// in batches of itersize, and statement_timeout; rows against DuckDB.
func TestPGWirePsycopg2(t *testing.T) {
	py := needPsycopg2(t)
	db := openDuck(t, dataDir(t, *sfFlag))
	_, pg := pgStack(t)
	script := `
import io, json, sys, psycopg2
conn = psycopg2.connect(sys.argv[1])
cur = conn.cursor()
buf = io.StringIO()
cur.copy_expert("COPY (" + sys.argv[2] + ") TO STDOUT WITH CSV HEADER", buf)
named = conn.cursor(name="big")
named.itersize = 7
named.execute(sys.argv[2])
rows = [[str(v) for v in r] for r in named]
names = [d.name for d in named.description]
named.close()
conn.commit()
cur.execute("set statement_timeout = '1s'")
code = None
try:
    cur.execute("select count(*) from lineitem a, lineitem b where a.l_orderkey <> b.l_orderkey")
except psycopg2.Error as e:
    code = e.pgcode
conn.rollback()
cur.execute("show statement_timeout")
reverted = cur.fetchone()[0]
cur.execute("select count(*) from nation")
print(json.dumps({"csv": buf.getvalue(), "rows": rows, "names": names, "timeout": code, "reverted": reverted, "after": cur.fetchone()[0]}))
`
	q := `select o_orderkey, o_orderdate, o_totalprice, o_orderpriority from orders where o_orderkey < 300 order by o_orderkey`
	out, err := exec.Command(py, "-c", script, pgURL(pg), q).CombinedOutput()
	if err != nil {
		t.Fatalf("psycopg2: %v\n%s", err, out)
	}
	var got struct {
		CSV      string     `json:"csv"`
		Rows     [][]string `json:"rows"`
		Names    []string   `json:"names"`
		Timeout  *string    `json:"timeout"`
		Reverted string     `json:"reverted"`
		After    int        `json:"after"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := duckRows(t, db, q)
	head, fields := parseCSV(t, got.CSV, true)
	if strings.Join(head, ",") != "o_orderkey,o_orderdate,o_totalprice,o_orderpriority" {
		t.Fatalf("copy_expert header %q", head)
	}
	compareRows(t, typedLike(fields, want), want, true)
	cursorFields := make([][]*string, len(got.Rows))
	for i, r := range got.Rows {
		for j := range r {
			cursorFields[i] = append(cursorFields[i], &r[j])
		}
	}
	compareRows(t, typedLike(cursorFields, want), want, true)
	if strings.Join(got.Names, ",") != strings.Join(head, ",") {
		t.Fatalf("named cursor columns %q", got.Names)
	}
	// The SET ran in the transaction psycopg2 opened; its rollback undoes
	// it, as in Postgres.
	if got.Timeout == nil || *got.Timeout != "57014" || got.Reverted != "0" || got.After != 25 {
		t.Fatalf("statement_timeout: %v, after the rollback %q, then count %d", got.Timeout, got.Reverted, got.After)
	}
}
