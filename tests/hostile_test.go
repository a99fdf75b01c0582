package tests

// End-to-end tests of issue 30, "security and robustness holes a hostile
// tester found": each reproduces an attack or fault against a running
// stack and checks the fixed behaviour.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/local/minioserver"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// bucketKeys lists every key of the stack's bucket.
func bucketKeys(t *testing.T, st *local.Stack) []string {
	t.Helper()
	objs, err := st.Bucket.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	sort.Strings(keys)
	return keys
}

// TestWriteTargetsConfined: COPY TO and CREATE TABLE AS check where they
// write at planning, before anything is written: COPY into another job's
// folder, into a CREATE TABLE AS table's or a registered table's location,
// or to a key the object store refuses, and CTAS of a name that is not a
// table name ("zz/x" appended rows to table zz), fail with SL021 or SL025
// at once, naming the target, and leave the bucket as it was. A COPY
// elsewhere still writes.
func TestWriteTargetsConfined(t *testing.T) {
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dataDir(t, *sfFlag)); err != nil {
		t.Fatal(err)
	}
	b := st.S3.Bucket
	job := run(t, st, "select count(*) from nation", false).Job
	stmt(t, st, "create table zz as select 1 as a")
	stmt(t, st, "create external table ext stored as parquet location 's3://"+b+"/tables/nation/'")
	stmt(t, st, "copy (select n_name from nation) to 's3://"+b+"/data/n/'")
	stmt(t, st, "create external table n2 stored as parquet location 's3://"+b+"/data/n/'")

	cases := []struct {
		name, sql, code, msg string
		pos                  int
	}{
		{"another job's folder", "copy (select 1 as a) to 's3://" + b + "/jobs/" + job + "/'", "SL021", "inside sluice's own data", 25},
		{"the jobs area", "copy (select 1 as a) to 's3://" + b + "/jobs'", "SL021", "inside sluice's own data", 25},
		{"dot-dot into jobs", "copy (select 1 as a) to 's3://" + b + "/x/../jobs/" + job + "/'", "SL021", `contains ".."`, 25},
		{"a CTAS table", "copy (select 1 as a) to 's3://" + b + "/tables/zz/'", "SL021", "inside sluice's own data", 25},
		{"a loaded table", "copy (select 1 as a) to 's3://" + b + "/tables/nation/more/'", "SL021", "tables/", 25},
		{"an external table", "copy (select 1 as a) to 's3://" + b + "/data/n/sub/'", "SL021", "inside the location of table n2", 25},
		{"double slash", "copy (select 1 as a) to 's3://" + b + "/a//b/'", "SL021", `contains "//"`, 25},
		{"dot component", "copy (select 1 as a) to 's3://" + b + "/a/./b/'", "SL021", `"." path component`, 25},
		{"control character", "copy (select 1 as a) to 's3://" + b + "/a\tb/'", "SL021", "want 's3://BUCKET/PREFIX/'", 25},
		{"C1 control character", "copy (select 1 as a) to 's3://" + b + "/a\u0085b/'", "SL021", "control character", 25},
		{"too long", "copy (select 1 as a) to 's3://" + b + "/" + strings.Repeat("k", 1000) + "/'", "SL021", "no room for the file names", 25},
		{"CTAS into another table's folder", `create table "zz/x" as select 2 as a`, "SL025", `CREATE TABLE "zz/x"`, 14},
		{"CTAS with a dot-dot name", `create table "../jobs" as select 2 as a`, "SL025", "invalid table name", 14},
		{"CTAS over an external table's location", `create table nation_copy as select 1 as a`, "", "", 0}, // allowed: its own folder
		{"external table with a bad name", `create external table "a/b" stored as parquet location 's3://` + b + `/data/n/'`, "SL025", "invalid table name", 23},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.code == "" {
				stmt(t, st, c.sql)
				return
			}
			before := bucketKeys(t, st)
			start := time.Now()
			e := stmtErr(t, st, c.sql)
			if e.Code != c.code || e.Position != c.pos || !strings.Contains(e.Msg, c.msg) {
				t.Fatalf("%s\ngot %s (code %s, position %d), want %s at %d containing %q", c.sql, e.Msg, e.Code, e.Position, c.code, c.pos, c.msg)
			}
			if el := time.Since(start); el > 10*time.Second {
				t.Fatalf("refused after %v: not at planning", el)
			}
			if after := bucketKeys(t, st); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Fatalf("the refused statement changed the bucket: %d keys before, %d after", len(before), len(after))
			}
		})
	}
	for q, want := range map[string]string{
		"select count(*), sum(a) from zz": "[[1 1]]",
		"select count(*) from ext":        "[[25]]",
		"select count(*) from n2":         "[[25]]",
	} {
		if got := fmt.Sprint(sluiceRows(run(t, st, q, false))); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
	res := stmt(t, st, "copy (select n_name from nation) to 's3://"+b+"/exports/n/'")
	if got := fmt.Sprint(sluiceRows(res)[0][0]); got != "25" {
		t.Fatalf("COPY to a free prefix: %v", sluiceRows(res))
	}
}

// hostileSQL is SQL that nests deeper than the parser may go, each way the
// grammar nests; the first is the one of issue 30 (a SIGSEGV in pg_query's
// C parser that took the coordinator down).
func hostileSQL() map[string]string {
	rep := strings.Repeat
	return map[string]string{
		"plus chain":       "select 1" + rep("+1", 30000),
		"concat chain":     "select 'a'" + rep("||'a'", 30000),
		"cast chain":       "select 1" + rep("::int", 30000),
		"not":              "select " + rep("not ", 30000) + "true",
		"parentheses":      "select " + rep("(", 30000) + "1" + rep(")", 30000),
		"subqueries":       "select " + rep("(select ", 3000) + "1" + rep(")", 3000),
		"case":             "select " + rep("case when true then ", 10000) + "1" + rep(" end", 10000),
		"union chain":      "select 1" + rep(" union select 1", 30000),
		"join chain":       "select * from nation" + rep(" join nation on true", 20000),
		"qualify":          "select n_name from nation qualify 1" + rep("+1", 30000) + " > 0",
		"chains in parens": "select " + rep("(", 100) + "1" + rep(")"+rep("+1", 300), 100),
	}
}

// TestDeepSQLRefused sends every hostile input through every entry that
// parses SQL (POST /v1/jobs, /v1/explain, /v1/statements as a query,
// EXPLAIN, COPY and CREATE TABLE AS; pgwire's simple and extended
// protocols, whose session-statement emulation parses first): each answer
// is SL090 with a position, and the coordinator, which runs in this
// process, still answers afterwards.
func TestDeepSQLRefused(t *testing.T) {
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dataDir(t, *sfFlag)); err != nil {
		t.Fatal(err)
	}
	pg, err := st.StartPG(context.Background(), local.PGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	cl := coordinator.NewClient(st.APIURL, "")
	apiErr := func(t *testing.T, what string, err error) {
		t.Helper()
		var ae *coordinator.APIError
		if !errors.As(err, &ae) || ae.Code != plan.CodeSQLTooLarge || ae.Position == 0 || !strings.Contains(ae.Msg, "nests more than 1000 levels") {
			t.Errorf("%s: %v", what, err)
		}
	}
	for name, sql := range hostileSQL() {
		t.Run(name, func(t *testing.T) {
			_, err := cl.Submit(ctx, sql, nil)
			apiErr(t, "POST /v1/jobs", err)
			_, err = cl.Explain(ctx, sql)
			apiErr(t, "POST /v1/explain", err)
			for _, s := range []string{sql, "explain " + sql, "copy (" + sql + ") to 's3://" + st.S3.Bucket + "/out/deep/'", "create table deep as " + sql} {
				_, err := st.Statement(ctx, s, nil)
				apiErr(t, "POST /v1/statements "+s[:20], err)
			}
			for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeDescribeExec} {
				_, err := conn.Exec(ctx, sql, mode)
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || pe.Code != "54000" || !strings.HasPrefix(pe.Message, plan.CodeSQLTooLarge) || pe.Position == 0 {
					t.Errorf("pgwire (mode %v): %v", mode, err)
				}
			}
		})
	}
	if got := fmt.Sprint(sluiceRows(run(t, st, "select count(*) from nation", false))); got != "[[25]]" {
		t.Fatalf("after the hostile inputs: %s", got)
	}
	if got := pgxRows(t, conn, "select count(*) from nation", pgx.QueryExecModeSimpleProtocol); fmt.Sprint(got) != "[[25]]" {
		t.Fatalf("pgwire after the hostile inputs: %v", got)
	}
}

// TestSQLSizeAllFrontEnds: --max-sql-bytes (Config.MaxSQLBytes) holds for
// the Postgres wire protocol and Flight SQL as for the HTTP API (issue 30:
// a 10 MiB query over psql ran and took 45 MB in Redis). Text over the
// limit is SL090 and records no job; a pgwire message over twice the limit
// ends the connection (54000) before it is read.
func TestSQLSizeAllFrontEnds(t *testing.T) {
	const limit = 64 << 10
	st := startStack(t, "", func(o *local.Options) { o.Coordinator.MaxSQLBytes = limit })
	pg, err := st.StartPG(context.Background(), local.PGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	faddr, err := st.StartFlight(local.FlightOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl := coordinator.NewClient(st.APIURL, "")
	jobs := func() int {
		ids, err := cl.Jobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(ids)
	}
	big := "select 1 -- " + strings.Repeat("x", limit+1)
	huge := "select 1 -- " + strings.Repeat("x", 10<<20)
	before := jobs()

	var ae *coordinator.APIError
	if _, err := cl.Submit(ctx, big, nil); !errors.As(err, &ae) || ae.Status != 413 || ae.Code != plan.CodeSQLTooLarge {
		t.Fatalf("HTTP: %v", err)
	}

	conn, err := pgx.Connect(ctx, pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeDescribeExec} {
		_, err := conn.Exec(ctx, big, mode)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "54000" || !strings.Contains(pe.Message, "larger than the limit of 65536 bytes") {
			t.Fatalf("pgwire (mode %v): %v", mode, err)
		}
	}
	if got := pgxRows(t, conn, "select 7", pgx.QueryExecModeSimpleProtocol); fmt.Sprint(got) != "[[7]]" {
		t.Fatalf("pgwire after SQL over the limit: %v", got)
	}
	_, err = conn.Exec(ctx, huge, pgx.QueryExecModeSimpleProtocol)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "54000" || pe.Severity != "FATAL" {
		t.Fatalf("pgwire 10 MiB message: %v", err)
	}
	if err := conn.Ping(ctx); err == nil {
		t.Fatal("the connection goes on after a message over the limit")
	}

	fc, err := flightsql.NewClient(faddr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	if _, err := fc.Execute(ctx, big); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), plan.CodeSQLTooLarge) {
		t.Fatalf("Flight SQL: %v", err)
	}
	if n := jobs(); n != before+1 { // select 7
		t.Fatalf("%d jobs recorded for SQL over the limit", n-before-1)
	}
}

// tmpfs mounts a tmpfs of size bytes on a new directory for the test (as
// root; skipped otherwise) and returns it.
func tmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (needs root): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestSpillDiskFull: a task whose spill disk fills up (ENOSPC) fails as
// SL104 at once, naming the disk, instead of being retried as an
// object-store outage for minutes (issue 30).
func TestSpillDiskFull(t *testing.T) {
	spill := tmpfs(t, 256<<10)
	st := startStack(t, "", func(o *local.Options) { o.FunctionMemory = 512 << 10 })
	st.Runtime.SpillDir = spill
	st.Runtime.SpillLimit = 1 << 40 // the disk, not the limit, runs out
	if _, err := st.LoadDir(context.Background(), dataDir(t, *sfFlag)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	_, err := st.Query(ctx, "select l_orderkey, l_comment from lineitem order by l_comment, l_orderkey", nil, nil)
	el := time.Since(start)
	t.Logf("after %v: %v", el, err)
	if err == nil || !strings.Contains(err.Error(), plan.CodeMemoryLimit) || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("after %v: %v, want %s naming the full disk", el, err, plan.CodeMemoryLimit)
	}
	if el > 30*time.Second {
		t.Fatalf("failed after %v: retried", el)
	}
}

// TestFunctionServeSpillLimit: `sluice function serve` takes its spill
// limit from SLUICE_SPILL_LIMIT, as cmd/sluice-function does (issue 30:
// it ignored it): with a limit of one byte a query that must spill fails
// with SL104 naming the limit; a limit that does not parse stops the
// process at start.
func TestFunctionServeSpillLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	m, err := minioserver.Start(ctx, minioserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	env := []string{"SLUICE_S3_ENDPOINT=" + m.Endpoint, "SLUICE_S3_BUCKET=sluice",
		"AWS_ACCESS_KEY_ID=" + m.AccessKey, "AWS_SECRET_ACCESS_KEY=" + m.SecretKey}
	fn := startService(t, sluiceBin(t), append(env, function.SpillLimitEnv+"=1"), "function", "serve", "--addr", "127.0.0.1:0")
	st := startStack(t, "", func(o *local.Options) {
		o.S3 = objstore.S3Config{Endpoint: m.Endpoint, AccessKey: m.AccessKey, SecretKey: m.SecretKey, Bucket: "sluice", Region: "us-east-1"}
		o.FunctionMemory = 512 << 10
		o.WrapInvoker = func(coordinator.Invoker) coordinator.Invoker { return coordinator.NewHTTPInvoker([]string{fn.URL}, 2) }
	})
	if _, err := st.LoadDir(ctx, dataDir(t, *sfFlag)); err != nil {
		t.Fatal(err)
	}
	_, err = st.Query(ctx, "select l_orderkey, l_comment from lineitem order by l_comment, l_orderkey", nil, nil)
	if err == nil || !strings.Contains(err.Error(), plan.CodeMemoryLimit) || !strings.Contains(err.Error(), "spill space of 1 bytes used up") {
		t.Fatalf("a spilling query on a function with %s=1: %v", function.SpillLimitEnv, err)
	}
	out, errOut, code := runCLI(t, sluiceBin(t), t.TempDir(), append(env, function.SpillLimitEnv+"=lots"), "function", "serve", "--addr", "127.0.0.1:0")
	if code == 0 || !strings.Contains(out+errOut, function.SpillLimitEnv) {
		t.Fatalf("function serve with a bad %s: exit %d\n%s%s", function.SpillLimitEnv, code, out, errOut)
	}
}

// TestNullSafeJoinsAndConstantGroups checks against DuckDB: IS NOT
// DISTINCT FROM as a join condition (a NULL-safe equi-join key, where it
// ran as a cross join), a constant key of ROLLUP/CUBE/GROUPING SETS (NULL
// in the rows that roll it up) and GROUP BY of a boolean constant (refused
// before), over tables with NULL keys, adaptive and static (issue 30).
func TestNullSafeJoinsAndConstantGroups(t *testing.T) {
	dir := edgeData(t)
	db := openDuckDir(t, dir, "t1", "t2", "t3", "empty")
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := st.LoadDir(context.Background(), dataDir(t, *sfFlag)); err != nil {
		t.Fatal(err)
	}
	cases := []query{
		{"nsj-inner", `select t1.k, t1.s, t2.v from t1 join t2 on t1.k is not distinct from t2.k`, false},
		{"nsj-left", `select t1.k, t1.s, t2.v from t1 left join t2 on t1.k is not distinct from t2.k`, false},
		{"nsj-right", `select t1.k, t2.k, t2.v from t1 right join t2 on t1.k is not distinct from t2.k`, false},
		{"nsj-full", `select t1.k, t1.s, t2.k, t2.v from t1 full join t2 on t1.k is not distinct from t2.k`, false},
		{"nsj-two-keys", `select t1.k, t1.s, t2.v from t1 join t2 on t1.k is not distinct from t2.k and t1.s is not distinct from t2.v`, false},
		{"nsj-mixed", `select t1.k, t1.s, t2.v from t1 join t2 on t1.k = t2.k and t2.v is not distinct from t1.s`, false},
		{"nsj-swapped", `select t1.k, t2.v from t1 join t2 on t2.k is not distinct from t1.k`, false},
		{"nsj-expr", `select t1.k, t2.v from t1 join t2 on t1.k + 1 is not distinct from t2.k + 1`, false},
		{"nsj-types", `select t1.k, t1.d, t2.v from t1 join t2 on t1.d is not distinct from t2.k`, false},
		{"nsj-residual", `select t1.k, t2.v from t1 join t2 on t1.k is not distinct from t2.k and t2.v > 'm'`, false},
		{"nsj-is-distinct", `select t1.k, t2.v from t1 join t2 on t1.k is distinct from t2.k and t1.s = 'a'`, false},
		{"nsj-semi", `select k, s from t1 where exists (select * from t2 where t2.k is not distinct from t1.k)`, false},
		{"nsj-anti", `select k, s from t1 where not exists (select * from t2 where t2.k is not distinct from t1.k)`, false},
		{"nsj-tpch", `select count(*) as n, sum(o_totalprice) as p from orders join customer on o_custkey is not distinct from c_custkey where c_mktsegment = 'BUILDING'`, false},
		{"rollup-const", `select 'x' as c, s, count(*) as n from t1 group by rollup (c, s)`, false},
		{"rollup-true", `select s, count(*) as n from t1 group by rollup (true, s)`, false},
		{"rollup-const-second", `select s, 7 as c, count(*) as n from t1 group by rollup (s, c)`, false},
		{"cube-const", `select 1 + 1 as c, k, count(*) as n from t1 group by cube (c, k)`, false},
		{"sets-const", `select 'x' as c, s, count(*) as n from t1 group by grouping sets ((c, s), (s), ())`, false},
		{"rollup-const-grouping", `select 'x' as c, grouping('x') as g, count(*) as n from t1 group by rollup (c)`, false},
		{"rollup-const-order", `select 'x' as c, s, count(*) as n from t1 group by rollup (c, s) order by c nulls first, s nulls first, n`, true},
		{"group-by-true", `select count(*) as n from t1 group by true`, false},
		{"group-by-false", `select count(*) as n, max(k) as m from t1 group by false`, false},
		{"group-by-true-empty", `select count(*) as n from empty group by true`, false},
		{"group-by-true-and-col", `select s, count(*) as n from t1 group by true, s`, false},
		{"group-by-1-still-positional", `select s, count(*) as n from t1 group by 1`, false},
	}
	checkModes(t, st, db, cases)
	// The NULL-safe join is a hash join on keys, not a cross join.
	cl := coordinator.NewClient(st.APIURL, "")
	ex, err := cl.Explain(context.Background(), `select count(*) from orders join customer on o_custkey is not distinct from c_custkey`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ex, "CrossJoin") || !strings.Contains(ex, "HashJoin") {
		t.Fatalf("IS NOT DISTINCT FROM join plan:\n%s", ex)
	}
}

// TestPGWireConnectionLimits runs issue 30's connection attacks on the
// stack's Postgres front end: eight clients that, before logging in, claim
// 2 GiB password messages (the server reserved what was claimed) are
// refused with 54000 without the memory being taken; clients that connect
// and say nothing fill MaxConns (53300 for one more) only until the
// startup timeout drops them; then a client logs in and queries.
func TestPGWireConnectionLimits(t *testing.T) {
	st := startStack(t, "", nil)
	// The startup timeout must outlast the fifth client's tries below (20
	// s) on a loaded machine: with 1 s, a CI run at load 9 saw the silent
	// four dropped before the fifth logged in, and with 5 s another CI run
	// did too (the fifth let in for all of its 20 s of tries, which only
	// happens once the four are dropped).
	pg, err := st.StartPG(context.Background(), local.PGOptions{MaxConns: 4, StartupTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 8 {
		nc, err := net.Dial("tcp", pg.Addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
		fe := pgproto3.NewFrontend(nc, nc)
		fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": pg.User}})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		if msg, err := fe.Receive(); err != nil {
			t.Fatal(err)
		} else if _, ok := msg.(*pgproto3.AuthenticationMD5Password); !ok {
			t.Fatalf("got %T, want the password request", msg)
		}
		if _, err := nc.Write([]byte{'p', 0x7f, 0xff, 0xff, 0xf0, 'm', 'd', '5'}); err != nil {
			t.Fatal(err)
		}
		msg, err := fe.Receive()
		if e, ok := msg.(*pgproto3.ErrorResponse); err != nil || !ok || e.Code != "54000" {
			t.Fatalf("a 2 GiB password message: %#v %v", msg, err)
		}
		nc.Close()
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
		t.Fatalf("%d MiB allocated for eight 2 GiB claims", grew>>20)
	}

	var silent []net.Conn
	for range 4 {
		nc, err := net.Dial("tcp", pg.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		silent = append(silent, nc)
	}
	// The server counts a connection when its accept loop takes it, which
	// on a busy machine can come after the client's dial returned: a fifth
	// connection let in before the four were counted is closed and tried
	// again, until it is refused (or 20 s pass).
	var pe *pgconn.PgError
	silentSince := time.Now()
	for deadline := time.Now().Add(20 * time.Second); ; {
		c5, err := pgx.Connect(ctx, pgURL(pg))
		if err == nil {
			_ = c5.Close(ctx)
			if time.Now().After(deadline) {
				t.Fatalf("a fifth connection was let in for 20 s (%s after the four silent ones connected), want 53300", time.Since(silentSince).Round(time.Millisecond))
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if !errors.As(err, &pe) || pe.Code != "53300" {
			t.Fatalf("a fifth connection: %v, want 53300", err)
		}
		break
	}
	for _, nc := range silent {
		_ = nc.SetReadDeadline(time.Now().Add(60 * time.Second))
		if _, err := io.ReadAll(nc); err != nil {
			t.Fatalf("a silent connection was not dropped: %v", err)
		}
	}
	conn, err := pgx.Connect(ctx, pgURL(pg))
	if err != nil {
		t.Fatalf("after the silent clients were dropped: %v", err)
	}
	defer conn.Close(context.Background())
	if got := pgxRows(t, conn, "select 1 + 1", pgx.QueryExecModeSimpleProtocol); fmt.Sprint(got) != "[[2]]" {
		t.Fatalf("query: %v", got)
	}
}
