package local

// NamedQuery is a query the demo and the tests run.
type NamedQuery struct {
	Name string
	SQL  string
}

// DemoQueries are the single-table queries `sluice local demo` runs: TPC-H
// Q1 and Q6 as the specification writes them, and two more that show an
// ORDER BY ... LIMIT (top-k) and a filter that matches nothing (which the
// adaptive planner turns into skipped stages).
var DemoQueries = []NamedQuery{
	{"TPC-H Q1 (pricing summary report)", `select
	l_returnflag, l_linestatus,
	sum(l_quantity) as sum_qty,
	sum(l_extendedprice) as sum_base_price,
	sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
	sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
	avg(l_quantity) as avg_qty,
	avg(l_extendedprice) as avg_price,
	avg(l_discount) as avg_disc,
	count(*) as count_order
from lineitem
where l_shipdate <= date '1998-12-01' - interval '90' day
group by l_returnflag, l_linestatus
order by l_returnflag, l_linestatus`},
	{"TPC-H Q6 (forecasting revenue change)", `select sum(l_extendedprice * l_discount) as revenue
from lineitem
where l_shipdate >= date '1994-01-01'
	and l_shipdate < date '1994-01-01' + interval '1' year
	and l_discount between 0.06 - 0.01 and 0.06 + 0.01
	and l_quantity < 24`},
	{"Orders by priority in a quarter", `select o_orderpriority, count(*) as order_count, sum(o_totalprice) as total
from orders
where o_orderdate >= date '1993-07-01' and o_orderdate < date '1993-07-01' + interval '3' month
group by o_orderpriority
order by o_orderpriority`},
	{"Top 5 line items by discounted price", `select l_orderkey, l_linenumber, l_extendedprice * (1 - l_discount) as disc_price
from lineitem
where l_shipmode in ('AIR', 'REG AIR') and l_shipdate > date '1998-01-01'
order by disc_price desc, l_orderkey, l_linenumber
limit 5`},
	{"A filter that matches nothing (stages after the scan are skipped)", `select l_shipmode, count(*) as n
from lineitem
where l_quantity < 0
group by l_shipmode
order by l_shipmode`},
}
