package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicedb/sluice/local"
)

// pgxRowsErr runs q through pgx in mode and normalizes the values as the
// DuckDB harness does; a failure is returned, not fatal.
func pgxRowsErr(ctx context.Context, conn *pgx.Conn, q string, mode pgx.QueryExecMode) ([]row, error) {
	rs, err := conn.Query(ctx, q, mode)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []row
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			return nil, err
		}
		r := make(row, len(vals))
		for i, v := range vals {
			r[i] = normPG(v)
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// runPGTPCDSQuery runs one TPC-DS query over the Postgres protocol and
// compares it with want, classified as runTPCDSQuery classifies the HTTP
// path's answers.
func runPGTPCDSQuery(conn *pgx.Conn, q tpcdsQuery, want []row, mode pgx.QueryExecMode) (tpcdsOutcome, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	got, err := pgxRowsErr(ctx, conn, q.SQL, mode)
	if err != nil {
		if strings.Contains(err.Error(), "SL005") {
			return tpcdsRefused, firstLine(err.Error())
		}
		return tpcdsError, err.Error()
	}
	if d := rowsDiff(got, want, isOrdered(q.SQL)); d != "" {
		return tpcdsWrong, d
	}
	return tpcdsPass, ""
}

// TestPGWireTPCDS runs DuckDB's 99 TPC-DS queries over the Postgres
// protocol (pgx, in the simple protocol psql uses and in the extended
// protocol of drivers), at -tpcds-sf, each answer checked against DuckDB
// on the same Parquet files as TestTPCDS checks the HTTP path: a query
// sluice refuses with SL005 is a known gap; a wrong answer, any other
// error, or a query of testdata/tpcds_pass.txt that does not pass fails
// the test. Long: make test-tpcds runs it, make test does not.
func TestPGWireTPCDS(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir, qs := tpcdsData(t, *tpcdsSF)
	db := openDuckOn(t, dir, tpcdsTables)
	st := startStack(t, "", nil)
	ctx := context.Background()
	if _, err := st.LoadDir(ctx, dir); err != nil {
		t.Fatal(err)
	}
	pg, err := st.StartPG(ctx, local.PGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	expected := readPassList(t)
	tally := map[tpcdsOutcome]int{}
	var report strings.Builder
	for _, q := range selectTPCDS(qs) {
		want, err := duckQuery(ctx, db, q.SQL)
		if err != nil {
			t.Fatalf("%s: duckdb: %v", q.name(), err)
		}
		outcome := tpcdsPass
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeDescribeExec} {
			o, detail := runPGTPCDSQuery(conn, q, want, mode)
			if o != tpcdsPass {
				fmt.Fprintf(&report, "%s/%s: %s: %s\n", q.name(), mode, o, firstLine(detail))
				if o == tpcdsWrong || o == tpcdsError {
					t.Errorf("%s/%s: %s: %s", q.name(), mode, o, detail)
				}
			}
			if outcome == tpcdsPass || o == tpcdsWrong || o == tpcdsError {
				outcome = o
			}
		}
		tally[outcome]++
		if outcome != tpcdsPass && expected[q.name()] {
			t.Errorf("%s: listed in %s but %s over the Postgres protocol", q.name(), tpcdsPassFile, outcome)
		}
	}
	t.Logf("TPC-DS SF %g over the Postgres protocol: %d/%d pass, %d refused (SL005), %d wrong, %d error\n%s",
		*tpcdsSF, tally[tpcdsPass], len(selectTPCDS(qs)), tally[tpcdsRefused], tally[tpcdsWrong], tally[tpcdsError], report.String())
}
