package tests

import "testing"

// groupingQueries cover GROUPING SETS, ROLLUP, CUBE and GROUPING().
var groupingQueries = []query{
	{"rollup", `select l_returnflag, l_linestatus, sum(l_quantity) as q, count(*) as n
		from lineitem group by rollup (l_returnflag, l_linestatus)`, false},
	{"cube-grouping", `select l_returnflag, l_linestatus, grouping(l_returnflag) as gf,
		grouping(l_returnflag, l_linestatus) as g2, avg(l_discount) as d
		from lineitem group by cube (l_returnflag, l_linestatus)`, false},
	{"sets", `select o_orderpriority, o_orderstatus, extract(year from o_orderdate) as y, count(*) as n
		from orders group by grouping sets ((o_orderpriority), (o_orderstatus, extract(year from o_orderdate)), ())`, false},
	{"mixed", `select n_regionkey, n_nationkey % 3 as m, count(*) as n, max(n_name) as mx
		from nation group by n_regionkey, rollup (n_nationkey % 3)`, false},
	{"having-order", `select c_mktsegment, c_nationkey, sum(c_acctbal) as s from customer
		group by rollup (c_mktsegment, c_nationkey) having count(*) > 20
		order by grouping(c_mktsegment), c_mktsegment nulls first, c_nationkey nulls first`, true},
	{"rollup-window", `select c_mktsegment, c_nationkey, sum(c_acctbal) as s,
		rank() over (partition by grouping(c_mktsegment) + grouping(c_nationkey),
			case when grouping(c_nationkey) = 0 then c_mktsegment end order by sum(c_acctbal) desc) as rk
		from customer group by rollup (c_mktsegment, c_nationkey)`, false},
	{"distinct-in-sets", `select l_shipmode, count(distinct l_suppkey) as s from lineitem
		group by rollup (l_shipmode)`, false},
}

// TestGroupingSets checks grouping sets against DuckDB.
func TestGroupingSets(t *testing.T) {
	sqlCases(t, groupingQueries)
}
