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

// TestPGWireParamForms sends parameters in the forms drivers use with no
// type (pgjdbc's setDate text, node-postgres's Date text, an untyped
// LIMIT) and checks each answer against DuckDB. The date forms go through
// the extended protocol, where the server reads them as parameters; in the
// simple protocol pgx writes them into the SQL text as string literals,
// which the engine casts as DuckDB does (YYYY-MM-DD only).
func TestPGWireParamForms(t *testing.T) {
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
		extendedOnly bool
	}{
		{`select count(*) from orders where o_orderdate < $1`, `select count(*) from orders where o_orderdate < date '1995-01-01'`, []any{"1995-01-01 +00"}, true},
		{`select count(*) from orders where o_orderdate >= $1`, `select count(*) from orders where o_orderdate >= date '1995-01-01'`, []any{"1995-01-01T00:00:00.000+00:00"}, true},
		{`select o_orderkey from orders order by o_orderkey limit $1`, `select o_orderkey from orders order by o_orderkey limit 7`, []any{"7"}, false},
		{`select (n_nationkey > 2) is not true as small, n_name from nation order by n_nationkey limit $1 offset $2`,
			`select (n_nationkey > 2) is not true as small, n_name from nation order by n_nationkey limit 4 offset 1`, []any{"4", "1"}, false},
	}
	for _, c := range cases {
		want := duckRows(t, db, c.duck)
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeDescribeExec, pgx.QueryExecModeSimpleProtocol} {
			if c.extendedOnly && mode == pgx.QueryExecModeSimpleProtocol {
				continue
			}
			t.Run(mode.String()+"/"+c.sluice, func(t *testing.T) {
				compareRows(t, pgxRows(t, conn, c.sluice, mode, c.args...), want, true)
			})
		}
	}
}
