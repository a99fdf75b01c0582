package tests

import (
	"context"
	"testing"
)

// sqlCases runs each query through the whole distributed path, adaptive
// and static, and checks it against DuckDB on the same TPC-H files.
func sqlCases(t *testing.T, cases []query) {
	t.Helper()
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	checkModes(t, st, db, cases)
}

// windowQueries cover every window function, frame kind and placement;
// the ORDER BY of each window is total (ties broken by a key) wherever a
// function's value depends on the order among peers.
var windowQueries = []query{
	{"ranks", `select n_regionkey, n_name,
		row_number() over (partition by n_regionkey order by n_name) as rn,
		rank() over (partition by n_regionkey order by n_name) as rk,
		dense_rank() over (order by n_regionkey) as dr,
		percent_rank() over (partition by n_regionkey order by n_name) as pr,
		cume_dist() over (order by n_regionkey) as cd,
		ntile(3) over (partition by n_regionkey order by n_name) as nt
		from nation`, false},
	{"rank-ties", `select o_orderpriority, o_orderstatus,
		rank() over (partition by o_orderpriority order by o_orderstatus) as rk,
		dense_rank() over (partition by o_orderpriority order by o_orderstatus desc) as dr,
		count(*) over (partition by o_orderpriority order by o_orderstatus) as running
		from orders`, false},
	{"offsets", `select c_custkey, c_nationkey,
		lag(c_acctbal) over (partition by c_nationkey order by c_custkey) as prev,
		lead(c_acctbal, 2) over (partition by c_nationkey order by c_custkey) as next2,
		lag(c_name, 1, 'none') over (partition by c_nationkey order by c_custkey) as prev_name,
		first_value(c_custkey) over (partition by c_nationkey order by c_acctbal desc, c_custkey) as richest,
		last_value(c_custkey) over (partition by c_nationkey order by c_custkey
			rows between unbounded preceding and unbounded following) as last_cust,
		nth_value(c_custkey, 3) over (partition by c_nationkey order by c_custkey) as third
		from customer`, false},
	{"frames-rows", `select o_custkey, o_orderkey,
		sum(o_totalprice) over (partition by o_custkey order by o_orderkey rows between 2 preceding and current row) as s3,
		avg(o_totalprice) over (partition by o_custkey order by o_orderkey rows between 1 preceding and 1 following) as a3,
		min(o_orderdate) over (partition by o_custkey order by o_orderkey rows between current row and unbounded following) as mn,
		max(o_totalprice) over (partition by o_custkey order by o_orderkey rows 3 preceding) as mx,
		count(o_comment) over (partition by o_custkey order by o_orderkey rows between 2 following and 4 following) as c
		from orders where o_custkey < 200`, false},
	{"frames-range", `select l_orderkey, l_linenumber, l_quantity,
		sum(l_quantity) over (partition by l_orderkey order by l_quantity range between 5 preceding and 5 following) as near,
		count(*) over (partition by l_orderkey order by l_quantity desc range between unbounded preceding and current row) as ge,
		max(l_extendedprice) over (partition by l_orderkey order by l_quantity range between current row and 10 following) as mx,
		sum(l_quantity) over (partition by l_orderkey) as total,
		avg(l_discount) over (partition by l_orderkey order by l_quantity) as running_avg
		from lineitem where l_orderkey < 2000`, false},
	{"range-dates", `select o_orderkey, o_custkey,
		count(*) over (partition by o_custkey order by o_orderdate range between 365 preceding and current row) as last_year
		from orders where o_custkey < 300`, false},
	{"no-partition", `select s_suppkey, s_acctbal,
		sum(s_acctbal) over (order by s_suppkey) as running,
		row_number() over (order by s_acctbal desc, s_suppkey) as rn,
		avg(s_acctbal) over () as overall
		from supplier`, false},
	{"over-aggregate", `select o_orderpriority, extract(year from o_orderdate) as y, sum(o_totalprice) as total,
		sum(sum(o_totalprice)) over (partition by o_orderpriority) as prio_total,
		rank() over (partition by extract(year from o_orderdate) order by sum(o_totalprice) desc) as rk,
		avg(count(*)) over (partition by o_orderpriority order by extract(year from o_orderdate)
			rows between 1 preceding and 1 following) as smooth
		from orders group by o_orderpriority, extract(year from o_orderdate)`, false},
	{"computed-partition", `select p_partkey, p_size,
		row_number() over (partition by p_size % 5, substring(p_brand, 7, 1) order by p_partkey) as rn,
		count(*) over (partition by p_size % 5) as n
		from part where p_partkey < 500`, false},
	{"named-window", `select ps_partkey, ps_suppkey,
		sum(ps_supplycost) over w as s, row_number() over (w order by ps_suppkey) as rn
		from partsupp where ps_partkey < 100 window w as (partition by ps_partkey)`, false},
	{"window-order-limit", `select c_custkey, c_acctbal, rank() over (order by c_acctbal desc) as rk
		from customer order by rk, c_custkey limit 15`, true},
	{"window-in-subquery", `select * from (select l_orderkey, l_partkey,
		row_number() over (partition by l_orderkey order by l_extendedprice desc, l_linenumber) as rn
		from lineitem) t where rn = 1 and l_orderkey < 500`, false},
	{"window-expr", `select n_name, 100.0 * count(*) over (partition by n_regionkey) / count(*) over () as pct,
		row_number() over (order by n_name) * 2 as rn2
		from nation`, false},
	{"empty-input", `select n_name, row_number() over (order by n_name) from nation where n_nationkey < 0`, false},
	{"nulls", `select x, v, sum(v) over (order by x) as s, rank() over (order by v nulls first) as rk,
		lag(v) over (order by x) as lv
		from (select n_nationkey as x, case when n_nationkey % 3 = 0 then null else n_regionkey end as v from nation) t`, false},
}

// TestWindowFunctions checks window functions against DuckDB.
func TestWindowFunctions(t *testing.T) {
	sqlCases(t, windowQueries)
}
