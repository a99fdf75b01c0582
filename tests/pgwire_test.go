package tests

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/sluicedb/sluice/coordinator"

	"github.com/sluicedb/sluice/local"
)

// pgStack starts the embedded stack with the TPC-H tables and its Postgres
// wire protocol server.
func pgStack(t *testing.T) (*local.Stack, local.PGOptions) {
	t.Helper()
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dataDir(t, *sfFlag)); err != nil {
		t.Fatal(err)
	}
	pg, err := st.StartPG(context.Background(), local.PGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return st, pg
}

func pgURL(pg local.PGOptions) string {
	return fmt.Sprintf("postgres://%s:%s@%s/sluice?sslmode=disable", pg.User, pg.Password, pg.Addr)
}

// pgxRows runs q through pgx and normalizes the values as the DuckDB
// harness does.
func pgxRows(t *testing.T, conn *pgx.Conn, q string, mode pgx.QueryExecMode, args ...any) []row {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rs, err := conn.Query(ctx, q, append([]any{mode}, args...)...)
	if err != nil {
		t.Fatalf("pgx: %v\n%s", err, q)
	}
	defer rs.Close()
	var out []row
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			t.Fatal(err)
		}
		r := make(row, len(vals))
		for i, v := range vals {
			r[i] = normPG(v)
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("pgx: %v\n%s", err, q)
	}
	return out
}

// normPG maps pgx's values to the harness's: numbers to float64, dates
// and timestamps to their text.
func normPG(v any) any {
	switch x := v.(type) {
	case pgtype.Numeric:
		f, _ := x.Float64Value()
		return f.Float64
	case time.Time:
		return normTime(x)
	}
	return normDuck(v)
}

// TestPGWireQueries runs queries through pgx in the extended protocol
// (text and binary results, parameters) and the simple protocol, each
// checked against DuckDB.
func TestPGWireQueries(t *testing.T) {
	db := openDuck(t, dataDir(t, *sfFlag))
	_, pg := pgStack(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	cases := []struct {
		sluice, duck string
		args         []any
	}{
		{sluice: `select n_nationkey, n_name, n_regionkey from nation order by n_nationkey`},
		{sluice: `select l_returnflag, l_linestatus, sum(l_quantity) as q, sum(l_extendedprice * (1 - l_discount)) as rev, avg(l_discount) as d, count(*) as n
			from lineitem where l_shipdate <= date '1998-09-02' group by 1, 2 order by 1, 2`},
		{sluice: `select o_orderkey, o_orderdate, o_totalprice, o_orderpriority from orders where o_orderkey < 200 order by o_orderkey`},
		{sluice: `select n_name, n_nationkey > 10 as big, cast(null as varchar) as nothing from nation where n_regionkey = $1 order by n_name`,
			duck: `select n_name, n_nationkey > 10 as big, cast(null as varchar) as nothing from nation where n_regionkey = 2 order by n_name`, args: []any{2}},
		{sluice: `select c_name, c_acctbal from customer where c_mktsegment = $1 and c_acctbal > $2 order by c_custkey limit 20`,
			duck: `select c_name, c_acctbal from customer where c_mktsegment = 'BUILDING' and c_acctbal > 9000 order by c_custkey limit 20`,
			args: []any{"BUILDING", 9000}},
		{sluice: `select n_name from nation where n_name = $1`, duck: `select n_name from nation where n_name = 'x'' or ''1''=''1'`,
			args: []any{"x' or '1'='1"}},
		{sluice: `select cast('2024-02-29 13:14:15.5' as timestamp) as ts, date '1992-01-01' as d, 1.5e300 as f, true as b`},
		// Issue 23: queries with these words were once answered by the
		// catalog emulation with 0 rows, a count of 0 or a NULL row.
		{sluice: `select extract(year from o_orderdate) as y, count(*) as n from orders group by 1 order by 1`},
		{sluice: `select count(*) as n from orders where o_orderdate < current_date and o_orderdate < current_timestamp`},
		{sluice: `select substring(c_phone from 1 for 2) as p, count(*) as n from customer group by 1 order by 1`},
		{sluice: `select trim(n_name) as t, trim(both 'A' from n_name) as u, position('A' in n_name) as p from nation order by n_nationkey`},
		{sluice: `select current_user as u, count(*) as n from nation`, duck: fmt.Sprintf(`select '%s' as u, count(*) as n from nation`, pg.User)},
	}
	for _, c := range cases {
		duck := c.duck
		if duck == "" {
			duck = c.sluice
		}
		want := duckRows(t, db, duck)
		modes := []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec, pgx.QueryExecModeSimpleProtocol}
		for _, mode := range modes {
			got := pgxRows(t, conn, c.sluice, mode, c.args...)
			if len(want) == 0 && len(got) == 0 {
				continue
			}
			t.Run(fmt.Sprintf("%v/%.40s", mode, c.sluice), func(t *testing.T) { compareRows(t, got, want, true) })
		}
	}
	// Errors carry the SQLSTATE of the sluice code, the code and position.
	_, err = conn.Exec(ctx, `select nope from nation`)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42703" || !strings.HasPrefix(pe.Message, "SL003") || pe.Position == 0 {
		t.Fatalf("unknown column: got %#v", err)
	}
	// AT TIME ZONE needs a timestamptz, which the engine does not have:
	// the engine's coded refusal, not the catalog's empty answer (issue 23).
	_, err = conn.Exec(ctx, `select cast(o_orderdate as timestamp) at time zone 'UTC' from orders`)
	if !errors.As(err, &pe) || pe.Code != "0A000" || !strings.HasPrefix(pe.Message, "SL005") {
		t.Fatalf("at time zone: got %#v", err)
	}
	_, err = conn.Exec(ctx, `select * from nosuch`)
	if !errors.As(err, &pe) || pe.Code != "42P01" || !strings.Contains(pe.Message, "SL002") {
		t.Fatalf("unknown table: got %#v", err)
	}
	// The connection still works after errors; session statements answer.
	var v, ds string
	if err := conn.QueryRow(ctx, `select version()`).Scan(&v); err != nil || !strings.Contains(v, "sluice") {
		t.Fatalf("version(): %q %v", v, err)
	}
	if _, err := conn.Exec(ctx, `set datestyle = 'ISO, DMY'`); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `show datestyle`).Scan(&ds); err != nil || ds != "ISO, DMY" {
		t.Fatalf("show datestyle: %q %v", ds, err)
	}
	// A wrong password is refused.
	bad := pg
	bad.Password = "wrong"
	if c, err := pgx.Connect(ctx, pgURL(bad)); err == nil || !strings.Contains(err.Error(), "28P01") {
		if c != nil {
			c.Close(ctx)
		}
		t.Fatalf("wrong password: %v", err)
	}
}

// TestPGWireCancel cancels a running query with the protocol's cancel
// request: the client gets 57014 and the job is cancelled.
func TestPGWireCancel(t *testing.T) {
	st, pg := pgStack(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	qctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(1500 * time.Millisecond); cancel() }() // pgx sends a CancelRequest
	_, err = conn.Exec(qctx, `select count(*) from lineitem a, lineitem b where a.l_orderkey <> b.l_orderkey`)
	if err == nil {
		t.Fatal("query was not cancelled")
	}
	cl := coordinator.NewClient(st.APIURL, "")
	ids, err := cl.Jobs(ctx)
	if err != nil || len(ids) == 0 {
		t.Fatalf("jobs: %v %v", ids, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		js2, err := cl.Status(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		state := string(js2.State)
		if state == "cancelled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %s, want cancelled", ids[0], state)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestPSQL runs the real psql (Debian's postgresql-client): a query, \dt
// and \d TABLE, checked against DuckDB and the catalog.
func TestPSQL(t *testing.T) {
	psql := needPSQL(t)
	db := openDuck(t, dataDir(t, *sfFlag))
	_, pg := pgStack(t)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(psql, append([]string{pgURL(pg), "-X", "-A", "-F", "|", "-v", "ON_ERROR_STOP=1"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("psql %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	// A query: unaligned rows against DuckDB's.
	q := `select r_regionkey, r_name, count(*) as n from region, nation where n_regionkey = r_regionkey group by 1, 2 order by 1`
	out := run("-t", "-c", q)
	var lines []string
	for _, r := range duckRows(t, db, q) {
		lines = append(lines, fmt.Sprintf("%v|%v|%v", r[0], r[1], r[2]))
	}
	if got, want := strings.TrimSpace(out), strings.Join(lines, "\n"); got != want {
		t.Fatalf("psql query:\n%s\nwant:\n%s", got, want)
	}
	// \dt lists every table.
	out = run("-c", `\dt`)
	for _, table := range []string{"customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"} {
		if !strings.Contains(out, "public|"+table+"|table|"+pg.User) {
			t.Fatalf("\\dt lacks %s:\n%s", table, out)
		}
	}
	// \d nation: the columns and types DuckDB reports for the same file.
	out = run("-c", `\d nation`)
	for _, r := range duckRows(t, db, `select column_name, data_type from information_schema.columns where table_name = 'nation' order by ordinal_position`) {
		name := fmt.Sprint(r[0])
		if !strings.Contains(out, "\n"+name+"|") {
			t.Fatalf("\\d nation lacks column %s:\n%s", name, out)
		}
	}
	if !strings.Contains(out, `Table "public.nation"`) || !strings.Contains(out, "n_nationkey|bigint") {
		t.Fatalf("\\d nation:\n%s", out)
	}
	// \dn and \l: the one schema and database.
	if out := run("-c", `\dn`); !strings.Contains(out, "public|"+pg.User) {
		t.Fatalf("\\dn:\n%s", out)
	}
	if out := run("-c", `\l`); !strings.Contains(out, "sluice|"+pg.User+"|UTF8") {
		t.Fatalf("\\l:\n%s", out)
	}
	// Errors: the code and SQLSTATE reach psql.
	cmd := exec.Command(psql, pgURL(pg), "-X", "-v", "VERBOSITY=verbose", "-c", "select nope from nation")
	eout, _ := cmd.CombinedOutput()
	if !strings.Contains(string(eout), "42703") || !strings.Contains(string(eout), "SL003") {
		t.Fatalf("psql error:\n%s", eout)
	}
}

// TestLocalStartPSQL runs `sluice local start` and pastes the psql line it
// prints into a shell, as the README says.
func TestLocalStartPSQL(t *testing.T) {
	needPSQL(t)
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	_, out := launch(t, sluiceBin(t), launchOptions{stop: syscall.SIGINT}, "local", "start", "--data", dir)
	var psqlLine, exports string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "PGPASSWORD="):
			psqlLine = line
		case strings.HasPrefix(line, "export SLUICE_PG_USER="):
			exports = line
		}
		if line == "ready" {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if psqlLine == "" || !strings.Contains(exports, "SLUICE_PG_PASSWORD=") {
		t.Fatalf("local start printed no psql line / exports: %q %q", psqlLine, exports)
	}
	q := `select n_name from nation where n_regionkey = 3 order by n_name`
	got, err := exec.Command("sh", "-c", psqlLine+` -X -A -t -c "`+q+`"`).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", psqlLine, err, got)
	}
	var want []string
	for _, r := range duckRows(t, db, q) {
		want = append(want, fmt.Sprint(r[0]))
	}
	if strings.TrimSpace(string(got)) != strings.Join(want, "\n") {
		t.Fatalf("psql from local start:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// selfSigned makes a TLS certificate for 127.0.0.1.
func selfSigned(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sluice-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// TestPGWireTLS requires TLS: a TLS client runs a query, a plain one is
// refused.
func TestPGWireTLS(t *testing.T) {
	st := startStack(t, "", nil)
	pg, err := st.StartPG(context.Background(), local.PGOptions{TLS: selfSigned(t), RequireTLS: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	url := fmt.Sprintf("postgres://%s:%s@%s/sluice?sslmode=require", pg.User, pg.Password, pg.Addr)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if !conn.PgConn().Conn().(interface{ ConnectionState() tls.ConnectionState }).ConnectionState().HandshakeComplete {
		t.Fatal("connection is not TLS")
	}
	var n int64
	if err := conn.QueryRow(ctx, "select 40 + 2").Scan(&n); err != nil || n != 42 {
		t.Fatalf("select 40 + 2 over TLS: %d %v", n, err)
	}
	if c, err := pgx.Connect(ctx, pgURL(pg)); err == nil || !strings.Contains(err.Error(), "requires TLS") {
		if c != nil {
			c.Close(ctx)
		}
		t.Fatalf("plain connection to a TLS-only server: %v", err)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestServeWireFlags starts `sluice coordinator serve` with --pg-addr and
// --flight-addr and queries through both, against DuckDB.
func TestServeWireFlags(t *testing.T) {
	r := newRig(t, rigOptions{})
	pgAddr, flightAddr := freePort(t), freePort(t)
	r.startCoordinator(t, "--token", "tok", "--pg-addr", pgAddr, "--pg-user", "analyst", "--pg-password", "pw",
		"--flight-addr", flightAddr)
	q := `select n_regionkey, count(*) as n from nation group by 1 order by 1`
	want := duckRows(t, r.db, q)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var conn *pgx.Conn
	var err error
	for i := 0; i < 50; i++ { // the front ends start just before the API line
		if conn, err = pgx.Connect(ctx, "postgres://analyst:pw@"+pgAddr+"/sluice?sslmode=disable"); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	compareRows(t, pgxRows(t, conn, q, pgx.QueryExecModeCacheStatement), want, true)
	cl, err := flightsql.NewClient(flightAddr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	_, got := flightRows(t, metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer tok"), cl, q)
	compareRows(t, got, want, true)
}

// needPSQL returns the psql binary; without one the test is skipped, or
// fails under CI (.ci/run installs postgresql-client).
func needPSQL(t *testing.T) string {
	t.Helper()
	psql, err := exec.LookPath("psql")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("psql not installed: .ci/run installs postgresql-client")
		}
		t.Skip("psql not installed (apt-get install -y postgresql-client)")
	}
	return psql
}
