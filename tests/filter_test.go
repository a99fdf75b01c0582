package tests

import "testing"

// filterQueries cover FILTER (WHERE ...) on aggregates and several
// count(DISTINCT ...) in one query.
var filterQueries = []query{
	{"filter", `select l_returnflag, count(*) filter (where l_discount > 0.05) as big,
		sum(l_quantity) filter (where l_shipmode = 'AIR') as air_qty,
		avg(l_tax) filter (where l_linenumber = 1) as first_tax,
		count(distinct l_suppkey) filter (where l_quantity > 40) as heavy_suppliers,
		count(*) as n
		from lineitem group by l_returnflag`, false},
	{"filter-global", `select count(*) filter (where o_orderstatus = 'F') as f, max(o_totalprice) filter (where o_orderpriority = '1-URGENT') as mx
		from orders`, false},
	{"many-distinct", `select o_orderstatus, count(distinct o_custkey) as c, count(distinct o_clerk) as k,
		count(distinct o_orderpriority) as p from orders group by o_orderstatus`, false},
}

// TestAggregateFilter checks FILTER and several DISTINCT counts against DuckDB.
func TestAggregateFilter(t *testing.T) {
	sqlCases(t, filterQueries)
}
