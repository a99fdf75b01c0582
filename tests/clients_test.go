package tests

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/local"
)

// The client tests run the drivers users run — pgjdbc, psycopg2 with
// SQLAlchemy and pandas, node-postgres — as subprocesses against the
// embedded stack's Postgres server, each answer checked against DuckDB or,
// for the catalog journeys, against exact expected results. The programs
// are under tests/clients/; .ci/run installs their runtimes.

// pgClient is one driver's program.
type pgClient struct {
	name string
	// missing says why the runtime cannot run here ("" when it can).
	missing func() string
	// cmd is the command line for a connection URL and a command.
	cmd func(pg local.PGOptions, command string) *exec.Cmd
	// meta names the golden file of the client's catalog journey (its
	// meta command), "" when it has none.
	meta string
}

const pgjdbcJar = "/usr/share/java/postgresql.jar"

var pgClients = []pgClient{
	{
		name: "pgjdbc",
		missing: func() string {
			if _, err := exec.LookPath("java"); err != nil {
				return "java is not installed (apt-get install default-jdk-headless)"
			}
			if _, err := os.Stat(pgjdbcJar); err != nil {
				return pgjdbcJar + " is missing (apt-get install libpostgresql-jdbc-java)"
			}
			return ""
		},
		// The JVM runs east of UTC and node west of it: setDate,
		// setTimestamp and a JS Date send the local wall time with its
		// offset, and the answers must not depend on it.
		cmd: func(pg local.PGOptions, command string) *exec.Cmd {
			url := fmt.Sprintf("jdbc:postgresql://%s/sluice?user=%s&password=%s&sslmode=disable", pg.Addr, pg.User, pg.Password)
			return exec.Command("java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Duser.timezone=Asia/Kolkata", "-cp", pgjdbcJar,
				filepath.Join("clients", "java", "Client.java"), url, command)
		},
		meta: "pgjdbc_meta.json",
	},
	{
		name: "psycopg2",
		missing: func() string {
			// Only the system Python has Debian's packages.
			out, err := exec.Command("/usr/bin/python3", "-c", "import psycopg2, sqlalchemy, pandas").CombinedOutput()
			if err != nil {
				return fmt.Sprintf("/usr/bin/python3 lacks psycopg2, sqlalchemy or pandas (apt-get install python3-psycopg2 python3-sqlalchemy python3-pandas): %v %s", err, out)
			}
			return ""
		},
		cmd: func(pg local.PGOptions, command string) *exec.Cmd {
			return exec.Command("/usr/bin/python3", filepath.Join("clients", "python", "client.py"), pgURL(pg), command)
		},
		meta: "python_meta.json",
	},
	{
		name: "node-pg",
		missing: func() string {
			if _, err := exec.LookPath("node"); err != nil {
				return "node is not installed"
			}
			if _, err := os.Stat(filepath.Join("clients", "node", "node_modules", "pg")); err != nil {
				return "tests/clients/node has no node_modules (run npm ci there)"
			}
			return ""
		},
		cmd: func(pg local.PGOptions, command string) *exec.Cmd {
			c := exec.Command("node", filepath.Join("clients", "node", "client.js"), pgURL(pg), command)
			c.Env = append(os.Environ(), "TZ=America/New_York")
			return c
		},
	},
}

// clientAnswer is one line a client program prints.
type clientAnswer struct {
	Name     string   `json:"name"`
	Cols     []string `json:"cols"`
	Types    []string `json:"types"`
	Rows     [][]any  `json:"rows"`
	Error    string   `json:"error"`
	SQLState string   `json:"sqlstate"`
}

// needClient skips t when the client cannot run here, unless under CI,
// where a missing client is a failure.
func needClient(t *testing.T, c pgClient) {
	t.Helper()
	why := c.missing()
	switch {
	case why == "":
	case os.Getenv("CI") == "":
		t.Skipf("%s: %s (CI installs it: .ci/run)", c.name, why)
	default:
		t.Fatalf("%s: %s", c.name, why)
	}
}

// runClient runs a client's command with stdin and returns its answers
// by name, in order.
func runClient(t *testing.T, c pgClient, pg local.PGOptions, command, stdin string) ([]clientAnswer, map[string]clientAnswer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := c.cmd(pg, command)
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	if env := c.cmd(pg, command).Env; env != nil {
		cmd.Env = env
	}
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstderr:\n%s\nstdout:\n%s", c.name, command, err, stderr.String(), stdout.String())
	}
	t.Logf("%s %s: %v", c.name, command, time.Since(start).Round(time.Millisecond))
	var list []clientAnswer
	byName := map[string]clientAnswer{}
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	for dec.More() {
		var a clientAnswer
		if err := dec.Decode(&a); err != nil {
			t.Fatalf("%s %s: bad output: %v\n%s", c.name, command, err, stdout.String())
		}
		list = append(list, a)
		byName[a.Name] = a
	}
	return list, byName
}

// clientRows normalizes a client's rows as the DuckDB harness does:
// numbers to float64, dates and timestamps to normTime's text.
func clientRows(t *testing.T, a clientAnswer) []row {
	t.Helper()
	out := make([]row, len(a.Rows))
	for i, r := range a.Rows {
		out[i] = make(row, len(r))
		for j, v := range r {
			typ := ""
			if j < len(a.Types) {
				typ = a.Types[j]
			}
			nv, err := normClient(typ, v)
			if err != nil {
				t.Fatalf("%s row %d column %d: %v", a.Name, i, j, err)
			}
			out[i][j] = nv
		}
	}
	return out
}

// Type names (pgjdbc) and OIDs (psycopg2, node-postgres) by kind.
var (
	clientNumeric = map[string]bool{"int2": true, "int4": true, "int8": true, "numeric": true, "float4": true, "float8": true,
		"oid": true, "21": true, "23": true, "20": true, "1700": true, "700": true, "701": true, "26": true}
	clientTime = map[string]bool{"date": true, "timestamp": true, "timestamptz": true, "1082": true, "1114": true, "1184": true}
)

func normClient(typ string, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch {
	case clientNumeric[typ]:
		s := fmt.Sprint(v) // a json.Number, or the exact text of int8/numeric
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%s value %q: %w", typ, s, err)
		}
		return f, nil
	case clientTime[typ]:
		s, _ := v.(string)
		for _, layout := range []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02T15:04:05.999999999",
			"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
			if tm, err := time.Parse(layout, s); err == nil {
				return normTime(tm), nil
			}
		}
		return nil, fmt.Errorf("%s value %q is no date or timestamp", typ, s)
	}
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		return f, err
	}
	return v, nil
}

// TestClients runs each driver against one stack: the 22 TPC-H queries
// and parameters of every type, each answer checked against DuckDB, and
// the catalog journeys of schema browsers with exact expected results.
func TestClients(t *testing.T) {
	db := openDuck(t, dataDir(t, *sfFlag))
	_, pg := pgStack(t)
	var stdin strings.Builder
	queries := tpchQueries(t)
	want := map[string][]row{}
	ordered := map[string]bool{}
	for _, q := range queries {
		fmt.Fprintf(&stdin, "--@@ %s\n%s\n", q.name, q.sql)
		want[q.name] = duckRows(t, db, q.sql)
		ordered[q.name] = q.ordered
	}
	paramWant := map[string][]row{}
	for name, q := range clientParamCases {
		paramWant[name] = duckRows(t, db, q)
	}
	for _, c := range pgClients {
		t.Run(c.name, func(t *testing.T) {
			needClient(t, c)
			t.Run("tpch", func(t *testing.T) {
				list, _ := runClient(t, c, pg, "queries", stdin.String())
				seen := map[string]int{}
				for _, a := range list {
					q, _, _ := strings.Cut(a.Name, "/")
					seen[q]++
					t.Run(a.Name, func(t *testing.T) {
						if a.Error != "" {
							t.Fatalf("%s (SQLSTATE %s)", a.Error, a.SQLState)
						}
						compareRows(t, clientRows(t, a), want[q], ordered[q])
					})
				}
				for _, q := range queries {
					if seen[q.name] == 0 {
						t.Errorf("%s: no answer", q.name)
					}
				}
			})
			if c.meta != "" {
				t.Run("meta", func(t *testing.T) { checkMeta(t, c, pg) })
			}
			if c.name == "pgjdbc" {
				t.Run("dbeaver", func(t *testing.T) { checkDBeaver(t, c, pg, db) })
			}
			t.Run("params", func(t *testing.T) {
				_, got := runClient(t, c, pg, "params", "")
				for _, name := range sortedKeys(paramWant) {
					t.Run(name, func(t *testing.T) {
						a, ok := got[name]
						switch {
						case !ok:
							t.Fatal("no answer")
						case a.Error != "":
							t.Fatalf("%s (SQLSTATE %s)", a.Error, a.SQLState)
						}
						compareRows(t, clientRows(t, a), paramWant[name], true)
					})
				}
			})
		})
	}
}

// checkDBeaver runs DBeaver's connect and schema-browse sequence
// (testdata/pgwire_dbeaver_replay.sql, reconstructed from DBeaver's
// source) through pgjdbc, each statement as a Statement and as a
// PreparedStatement: every one must answer without an error, and the
// navigator's answers are checked exactly (the schemas, the tables of
// public, the columns of nation, no constraints or indexes).
func checkDBeaver(t *testing.T, c pgClient, pg local.PGOptions, db *sql.DB) {
	b, err := os.ReadFile(filepath.Join("testdata", "pgwire_dbeaver_replay.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var stdin strings.Builder
	stmts := replayStatements(string(b))
	for i, sql := range stmts {
		fmt.Fprintf(&stdin, "--@@ dbeaver-%02d\n%s\n", i+1, sql)
	}
	// The data editor of a table: JDBCTable.readData and countData
	// (plugins/org.jkiss.dbeaver.model.jdbc/.../struct/JDBCTable.java),
	// ordinary engine queries, checked against DuckDB.
	data := map[string]string{
		"data-rows":  `SELECT x.* FROM public.nation x`,
		"data-count": `SELECT COUNT(*) FROM public.nation`,
	}
	for _, name := range sortedKeys(data) {
		fmt.Fprintf(&stdin, "--@@ %s\n%s\n", name, data[name])
	}
	if len(stmts) < 50 {
		t.Fatalf("only %d statements", len(stmts))
	}
	list, got := runClient(t, c, pg, "queries", stdin.String())
	if len(list) != 2*(len(stmts)+len(data)) {
		t.Errorf("%d answers for %d statements (each twice)", len(list), len(stmts)+len(data))
	}
	for _, a := range list {
		if q, _, _ := strings.Cut(a.Name, "/"); data[q] != "" {
			t.Run(a.Name, func(t *testing.T) {
				if a.Error != "" {
					t.Fatalf("%s (SQLSTATE %s)", a.Error, a.SQLState)
				}
				compareRows(t, clientRows(t, a), duckRows(t, db, strings.ReplaceAll(data[q], "public.", "")), false)
			})
			continue
		}
		if a.Error != "" {
			q, _, _ := strings.Cut(a.Name, "/")
			t.Errorf("%s: %s (SQLSTATE %s)\n%s", a.Name, a.Error, a.SQLState, stmts[mustAtoi(t, strings.TrimPrefix(q, "dbeaver-"))-1])
		}
	}
	// column col of every row of answer name, as text
	column := func(name, col string) []string {
		a, ok := got[name+"/prepared"]
		if !ok {
			t.Fatalf("%s: no answer", name)
		}
		k := slices.Index(a.Cols, col)
		if k < 0 {
			t.Fatalf("%s: no column %s in %v", name, col, a.Cols)
		}
		var out []string
		for _, r := range a.Rows {
			out = append(out, fmt.Sprint(r[k]))
		}
		return out
	}
	tpch := []string{"customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"}
	for _, tc := range []struct {
		name, col string
		want      []string
	}{
		{"dbeaver-01", "datname", []string{"sluice"}},
		{"dbeaver-05", "session_user", []string{pg.User}},
		{"dbeaver-06", "nspname", []string{"information_schema", "pg_catalog", "public"}},
		{"dbeaver-17", "schema_id", []string{"2200"}},
		{"dbeaver-18", "relname", tpch},
		{"dbeaver-19", "oid", []string{"16386"}},
		{"dbeaver-23", "attname", []string{"n_nationkey", "n_name", "n_regionkey", "n_comment"}},
		{"dbeaver-24", "conname", nil},
		{"dbeaver-28", "relname", nil},
		{"dbeaver-43", "rolname", []string{pg.User}},
	} {
		got := column(tc.name, tc.col)
		if tc.name == "dbeaver-18" {
			sort.Strings(got)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %s: got %v, want %v", tc.name, tc.col, got, tc.want)
		}
	}
}

// replayStatements splits a replay file into its statements: they are
// separated by lines "-- ----", and lines starting "-- " (or just "--")
// are comments (as coordinator/pgwire's replay tests read them).
func replayStatements(text string) []string {
	var out []string
	for _, stmt := range strings.Split(text, "\n-- ----\n") {
		var lines []string
		for _, l := range strings.Split(stmt, "\n") {
			if !strings.HasPrefix(l, "-- ") && l != "--" {
				lines = append(lines, l)
			}
		}
		if sql := strings.TrimSpace(strings.Join(lines, "\n")); sql != "" {
			out = append(out, sql)
		}
	}
	return out
}

func mustAtoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// clientParamCases are DuckDB's statements for the clients' parameter
// cases (the params command of each program), by name.
var clientParamCases = map[string]string{
	"int":          `select n_name from nation where n_nationkey = 7`,
	"bigint":       `select count(*) from orders where o_orderkey < 5000000000`,
	"double":       `select count(*) from customer where c_acctbal > 5000.5`,
	"numeric":      `select count(*) from lineitem where l_extendedprice > 50000.25`,
	"text":         `select c_custkey, c_name from customer where c_mktsegment = 'BUILDING' order by c_custkey limit 5`,
	"bool":         `select n_name from nation where (n_nationkey < 3) = true order by n_name`,
	"date":         `select count(*) from orders where o_orderdate < date '1995-03-15'`,
	"date_object":  `select count(*) from orders where o_orderdate >= date '1995-03-15'`,
	"timestamp":    `select count(*) from orders where cast(o_orderdate as timestamp) < timestamp '1995-03-15 12:30:00'`,
	"timestamp_eq": `select count(*) from orders where cast(o_orderdate as timestamp) = timestamp '1995-03-15 00:00:00'`,
	"limit":        `select o_orderkey from orders order by o_orderkey limit 7`,
	"mixed": `select c_custkey, c_acctbal from customer where c_mktsegment = 'MACHINERY' and c_acctbal > 1000.5
		and c_nationkey = 3 order by c_custkey limit 4`,
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var updateClients = flag.Bool("update-clients", false, "rewrite the golden files of the client catalog journeys (tests/testdata/clients)")

// checkMeta runs a client's catalog journey (pgjdbc DatabaseMetaData;
// SQLAlchemy's inspector and pandas.read_sql) and checks every answer
// exactly against its golden file. A server-side cursor (psycopg2's named
// cursor: DECLARE ... CURSOR, FETCH) is checked apart: it must answer as
// read_sql does, or, while sluice has no cursors, fail with SQLSTATE 0A000.
func checkMeta(t *testing.T, c pgClient, pg local.PGOptions) {
	list, byName := runClient(t, c, pg, "meta", "")
	type answer struct {
		Name  string   `json:"name"`
		Cols  []string `json:"cols,omitempty"`
		Rows  [][]any  `json:"rows"`
		Error string   `json:"error,omitempty"`
	}
	var got []answer
	for _, a := range list {
		if a.Name == "read_sql_stream" {
			continue
		}
		got = append(got, answer{Name: a.Name, Cols: a.Cols, Rows: a.Rows, Error: a.Error})
	}
	if s, ok := byName["read_sql_stream"]; ok {
		switch {
		case s.Error == "":
			if d := rowsDiff(clientRows(t, s), clientRows(t, byName["read_sql"]), true); d != "" {
				t.Errorf("read_sql with a server-side cursor: %s", d)
			}
		case s.SQLState == "0A000" && strings.Contains(s.Error, "DECLARE"):
			t.Logf("read_sql with a server-side cursor (DECLARE/FETCH) is not supported yet: %s", strings.SplitN(s.Error, "\n", 2)[0])
		default:
			t.Errorf("read_sql with a server-side cursor: %s (SQLSTATE %s)", s.Error, s.SQLState)
		}
	}
	b, err := json.MarshalIndent(got, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", "clients", c.meta)
	if *updateClients {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestClients ./tests/ -args -update-clients writes it)", err)
	}
	var wantList []answer
	if err := json.Unmarshal(want, &wantList); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	wantBy := map[string]answer{}
	for _, a := range wantList {
		wantBy[a.Name] = a
	}
	for _, g := range got {
		w, ok := wantBy[g.Name]
		if !ok {
			t.Errorf("%s: not in %s", g.Name, path)
			continue
		}
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		if string(gj) != string(wj) {
			t.Errorf("%s:\n got %s\nwant %s", g.Name, gj, wj)
		}
		delete(wantBy, g.Name)
	}
	for name := range wantBy {
		t.Errorf("%s: no answer", name)
	}
}
