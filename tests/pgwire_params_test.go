package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPGWireParamTypes: parameters a client leaves untyped are described
// with the type their context gives them, as Postgres infers them (x = $1:
// x's type; LIMIT $1: bigint; $1 + col), and a driver that encodes its
// values for the described types (pgx, in binary where it can) gets the
// same answers as DuckDB.
func TestPGWireParamTypes(t *testing.T) {
	db := openDuck(t, dataDir(t, *sfFlag))
	_, pg := pgStack(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	day := time.Date(1995, 3, 15, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		sql  string
		oids []uint32
		args []any
		duck string
	}{
		{"select count(*) from nation where n_regionkey = $1", []uint32{20}, []any{int64(2)},
			"select count(*) from nation where n_regionkey = 2"},
		{"select n_name from nation order by n_nationkey limit $1", []uint32{20}, []any{3},
			"select n_name from nation order by n_nationkey limit 3"},
		{"select count(*) from orders where o_orderdate < $1 and o_totalprice > $2", []uint32{1082, 1700}, []any{day, 200000.5},
			"select count(*) from orders where o_orderdate < date '1995-03-15' and o_totalprice > 200000.5"},
		{"select count(*) from nation where n_name like $1", []uint32{25}, []any{"A%"},
			"select count(*) from nation where n_name like 'A%'"},
		{"select sum($1 + n_nationkey) from nation", []uint32{20}, []any{int64(10)},
			"select sum(10 + n_nationkey) from nation"},
		{"select count(*) from nation where n_nationkey in ($1, $2) or $3", []uint32{20, 20, 16}, []any{int64(1), int64(7), false},
			"select count(*) from nation where n_nationkey in (1, 7)"},
	}
	for i, c := range cases {
		sd, err := conn.Prepare(ctx, fmt.Sprintf("p%d", i), c.sql)
		if err != nil {
			t.Fatalf("%s: prepare: %v", c.sql, err)
		}
		if fmt.Sprint(sd.ParamOIDs) != fmt.Sprint(c.oids) {
			t.Errorf("%s: parameters described as %v, want %v", c.sql, sd.ParamOIDs, c.oids)
		}
		// The default mode: pgx describes the statement and encodes each
		// argument for the described type.
		got := pgxRows(t, conn, c.sql, pgx.QueryExecModeCacheStatement, c.args...)
		compareRows(t, got, duckRows(t, db, c.duck), true)
	}
}
