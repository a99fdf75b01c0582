package tests

import (
	"context"
	"testing"
)

// limitClass are queries whose answer depends on the row count of a
// derived input whose values nobody reads: a LIMIT (early stop) inside
// derived tables, CTEs, subqueries, joins and unions, under count(*) and
// friends. Column pruning once left such inputs with zero columns, and a
// batch of zero columns lost its rows at the exchange, so
// `select count(*) from (select * from lineitem limit 100) t` counted 0.
var limitClass = []query{
	{"count-derived-limit", `select count(*) from (select * from lineitem limit 100) t`, true},
	{"count-derived-limit-offset", `select count(*) from (select * from lineitem limit 100 offset 30) t`, true},
	{"count-derived-limit-zero", `select count(*) from (select * from lineitem limit 0) t`, true},
	{"count-derived-no-limit", `select count(*) from (select l_orderkey, l_comment from lineitem) t`, true},
	{"count-derived-filter-limit", `select count(*) from (select * from orders where o_totalprice > 1000 limit 250) t`, true},
	{"count-cte-limit", `with t as (select * from orders limit 77) select count(*) from t`, true},
	{"count-nested-limits", `select count(*) from (select * from (select * from lineitem limit 500) a limit 123) b`, true},
	{"count-const-derived", `select count(*) from (select 1 as one from lineitem limit 40) t`, true},
	{"count-derived-agg", `select count(*) from (select l_orderkey, count(*) from lineitem group by l_orderkey) t`, true},
	{"count-global-agg", `select count(*) from (select count(*) as n, sum(l_quantity) from lineitem) t`, true},
	{"count-distinct-derived", `select count(*) from (select distinct l_shipmode from lineitem) t`, true},
	{"count-union-limits", `select count(*) from (select * from (select n_name from nation limit 3) a union all select * from (select r_name from region limit 2) b) u`, true},
	// Which 50 orders a bare LIMIT keeps is the engine's choice (SQL
	// leaves it open; sluice's stage of two scan tasks may take either
	// task's rows first), and their lineitem count differs: ordered, so
	// the answer is one.
	{"count-join-limit", `select count(*) from (select o_orderkey from orders order by o_orderkey limit 50) o join lineitem l on l.l_orderkey = o.o_orderkey`, true},
	{"count-join-both-unread", `select count(*) from (select * from nation limit 10) n join region r on n.n_regionkey = r.r_regionkey`, true},
	{"count-cross-limit", `select count(*) from (select * from nation limit 4) a cross join (select * from region limit 3) b`, true},
	{"scalar-subquery-count-limit", `select (select count(*) from (select * from lineitem limit 60) t) as n`, true},
	{"in-subquery-limit", `select count(*) from nation where n_regionkey in (select r_regionkey from (select * from region limit 2) r)`, true},
	{"exists-limit", `select count(*) from nation where exists (select * from (select * from region limit 1) r where r.r_regionkey = nation.n_regionkey)`, true},
	{"sum-over-limit", `select count(*), count(l_orderkey) from (select l_orderkey from lineitem limit 1000) t`, true},
	{"group-over-limit-unread", `select count(*) as c from (select * from lineitem limit 300) t group by 1 = 1`, true},
}

// TestLimitClass runs the count-over-LIMIT class end to end, adaptive
// and static, against DuckDB.
func TestLimitClass(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	checkModes(t, st, db, limitClass)
}
