package tests

import (
	"context"
	"database/sql"
	"testing"

	"github.com/sluicedb/sluice/local"
)

// TestFooterAggregates: a global count, min or max over Parquet files is
// answered from the row groups' footer statistics where they tell it (the
// stage reports row_groups_from_stats), and read where they do not
// (strings, floats, a filter): every answer equals DuckDB's, on files of
// sluice's writer and of DuckDB's, adaptive and static.
func TestFooterAggregates(t *testing.T) {
	tpch := dataDir(t, *sfFlag)
	events := groupByData(t, 200_000)
	cases := []struct {
		name, dir, sql string
		fromStats      bool
	}{
		{"count", tpch, "select count(*) from lineitem", true},
		{"bounds", tpch, "select min(l_shipdate), max(l_shipdate), min(l_orderkey), max(l_quantity), count(l_comment) from lineitem", true},
		{"decimal", tpch, "select max(o_totalprice), min(o_totalprice), count(*) from orders", true},
		{"string-min-read", tpch, "select min(l_comment) from lineitem", false},
		{"float-max-read", events, "select max(f) from events", false},
		{"filtered-read", tpch, "select count(*) from lineitem where l_quantity > 10", false},
		{"duckdb-writer", events, "select count(*), min(d), max(d), min(k10), max(v), count(s100) from events", true},
		{"unsigned-read", events, "select max(k1m) from events", false},
		{"empty-table-shape", tpch, "select count(*), min(n_nationkey), max(n_regionkey) from nation", true},
	}
	stacks := map[string]*local.Stack{}
	dbs := map[string]*sql.DB{}
	for _, tc := range cases {
		st := stacks[tc.dir]
		if st == nil {
			st = startStack(t, "", nil)
			if _, err := st.LoadDir(context.Background(), tc.dir); err != nil {
				t.Fatal(err)
			}
			stacks[tc.dir] = st
		}
		db := dbs[tc.dir]
		if db == nil {
			if tc.dir == events {
				db = openDuckOn(t, tc.dir, []string{"events"})
			} else {
				db = openDuck(t, tc.dir)
			}
			dbs[tc.dir] = db
		}
		want := duckRows(t, db, tc.sql)
		for _, adaptive := range []bool{true, false} {
			t.Run(tc.name, func(t *testing.T) {
				res := run(t, st, tc.sql, adaptive)
				compareRows(t, sluiceRows(res), want, false)
				n := 0
				for _, s := range res.Status.Stages {
					n += s.RowGroupsFromStats
				}
				if tc.fromStats && n == 0 {
					t.Errorf("no row group answered from statistics")
				}
				if !tc.fromStats && n != 0 {
					t.Errorf("%d row groups answered from statistics, want none", n)
				}
			})
		}
	}
}
