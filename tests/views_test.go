package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestViews creates views (with and without a column list, over a join
// and an aggregate, a view over a view, OR REPLACE) and checks every
// answer through them against DuckDB over the same view definitions, in
// the adaptive and the static planner. A view sees the tables as they are
// when it is used (rows inserted after CREATE VIEW show), no CTE of the
// query that uses it, and the refusals name the view.
func TestViews(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	defs := []string{
		"create view big_orders as select o_orderkey, o_custkey, o_totalprice, o_orderdate from orders where o_totalprice > 200000",
		"create view nation_region (nation, region, rk) as select n_name, r_name, r_regionkey from nation join region on n_regionkey = r_regionkey",
		"create view cust_spend as select c_custkey, c_nationkey, count(*) as n, sum(o_totalprice) as spend from customer join big_orders on c_custkey = o_custkey group by c_custkey, c_nationkey",
		"create view Region_Spend as select region, sum(spend) as spend, count(*) as customers from cust_spend join nation on c_nationkey = n_nationkey join nation_region nr on nr.nation = n_name group by region",
	}
	for _, d := range defs {
		stmt(t, st, d)
		if _, err := db.Exec(d); err != nil {
			t.Fatalf("duckdb: %s: %v", d, err)
		}
	}
	queries := []string{
		"select count(*), sum(o_totalprice), min(o_orderdate) from big_orders",
		"select region, count(*) from nation_region group by region order by region",
		"select nation from nation_region where rk = 2 order by nation",
		"select * from region_spend order by region",
		"select r.region, r.customers, b.cnt from region_spend r join (select region, count(*) cnt from nation_region group by region) b on r.region = b.region order by 1",
		"select v.o_orderkey from big_orders v where v.o_totalprice > 450000 order by 1",
		"select b.c from (select count(*) c from big_orders) b",
		// A CTE of the outer query named like a table the view reads does
		// not change the view.
		"with orders as (select 1 as o_orderkey) select count(*) from big_orders",
		"select count(*) from big_orders where o_custkey in (select c_custkey from cust_spend where n > 1)",
	}
	check := func(when string) {
		for _, q := range queries {
			want := duckRows(t, db, q)
			for _, adaptive := range []bool{true, false} {
				got := sluiceRows(run(t, st, q, adaptive))
				if d := rowsDiff(got, want, strings.Contains(q, "order by")); d != "" {
					t.Errorf("%s: %s (adaptive %v): %s", when, q, adaptive, d)
				}
			}
		}
	}
	check("after create")

	// Replace a view; a view over it follows.
	repl := "create or replace view big_orders as select o_orderkey, o_custkey, o_totalprice, o_orderdate from orders where o_totalprice > 300000"
	stmt(t, st, repl)
	if _, err := db.Exec(repl); err != nil {
		t.Fatal(err)
	}
	check("after replace")

	// DESCRIBE and SHOW TABLES.
	if got := fmt.Sprint(sluiceRows(stmt(t, st, "describe nation_region"))); !strings.Contains(got, "[nation varchar") || !strings.Contains(got, "[rk bigint") {
		t.Errorf("describe nation_region: %s", got)
	}
	if got := fmt.Sprint(sluiceRows(stmt(t, st, "show tables"))); !strings.Contains(got, "[region_spend view") && !strings.Contains(got, "[Region_Spend view") {
		t.Errorf("show tables lists no view region_spend: %s", got)
	}

	for _, c := range []struct{ sql, code, msg string }{
		{"create view big_orders as select 1", "SL020", "already exists"},
		{"create view nation as select 1", "SL026", "is a table"},
		{"create view bad as select nosuch from orders", "SL003", "nosuch"},
		{"create view dup as select 1 a, 2 a", "SL006", "more than once"},
		{"drop table big_orders", "SL026", "DROP VIEW"},
		{"drop view orders", "SL026", "DROP TABLE"},
		{"insert into big_orders select 1, 2, 3, date '2000-01-01'", "SL026", "is a view"},
		{"drop view nosuch", "SL002", "nosuch"},
	} {
		e := stmtErr(t, st, c.sql)
		if e.Code != c.code || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%s: %s %s, want %s naming %q", c.sql, e.Code, e.Msg, c.code, c.msg)
		}
	}
	stmt(t, st, "create view if not exists big_orders as select 1")
	stmt(t, st, "drop view if exists nosuch")

	// A view reads the tables as they are when it is used; a view whose
	// table is gone fails naming the view.
	stmt(t, st, "create table few as select n_nationkey k from nation where n_nationkey < 3")
	stmt(t, st, "create view few_v as select count(*) c from few")
	stmt(t, st, "insert into few values (100)")
	if got := sluiceRows(run(t, st, "select c from few_v", true)); got[0][0] != float64(4) {
		t.Errorf("few_v after insert: %v, want 4", got)
	}
	stmt(t, st, "drop table few")
	if e := stmtErr(t, st, "select * from few_v"); e.Code != "SL002" || !strings.Contains(e.Msg, `view "few_v"`) {
		t.Errorf("view over a dropped table: %s %s", e.Code, e.Msg)
	}
	stmt(t, st, "drop view few_v")
	if e := stmtErr(t, st, "select * from few_v"); e.Code != "SL002" {
		t.Errorf("dropped view: %s %s", e.Code, e.Msg)
	}
}
