package tests

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPGWireTPCH runs the 22 TPC-H queries over the Postgres protocol, in
// the simple and the extended protocol, each answer checked against
// DuckDB. Q7, Q8, Q9 and Q22 (EXTRACT, SUBSTRING ... FROM) were once
// answered by the catalog emulation with a row of NULLs.
func TestPGWireTPCH(t *testing.T) {
	db := openDuck(t, dataDir(t, *sfFlag))
	_, pg := pgStack(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range tpchQueries(t) {
		want := duckRows(t, db, q.sql)
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeDescribeExec} {
			t.Run(q.name+"/"+mode.String(), func(t *testing.T) {
				compareRows(t, pgxRows(t, conn, q.sql, mode), want, q.ordered)
			})
		}
	}
}
