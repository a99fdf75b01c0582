package tests

import "testing"

// setOpQueries cover UNION, INTERSECT and EXCEPT, distinct and ALL, with
// NULLs, type coercion between branches and ORDER BY/LIMIT of the whole.
var setOpQueries = []query{
	{"union", `select n_regionkey from nation union select r_regionkey from region`, false},
	{"intersect", `select c_nationkey from customer where c_acctbal > 5000 intersect select s_nationkey from supplier`, false},
	{"except", `select c_nationkey, c_mktsegment from customer except select c_nationkey, c_mktsegment from customer where c_acctbal > 0`, false},
	{"intersect-all", `select l_linenumber from lineitem where l_orderkey < 100
		intersect all select l_linenumber from lineitem where l_orderkey between 50 and 200`, false},
	{"except-all", `select l_returnflag, l_linestatus from lineitem where l_orderkey < 300
		except all select l_returnflag, l_linestatus from lineitem where l_orderkey < 100`, false},
	{"nulls", `select case when n_nationkey % 2 = 0 then null else n_regionkey end as v from nation
		intersect select case when r_regionkey = 1 then null else r_regionkey end from region`, false},
	{"coercion", `select n_nationkey, n_name from nation where n_nationkey < 10
		except select r_regionkey * 1.0, r_name from region`, false},
	{"null-branch", `select n_name, n_regionkey from nation union all select null, r_regionkey from region union all select r_name, null from region`, false},
	{"chain-order-limit", `select o_custkey from orders where o_orderkey < 2000
		except select c_custkey from customer where c_mktsegment = 'BUILDING'
		intersect select c_custkey from customer where c_nationkey < 10
		order by 1 desc limit 20`, true},
}

// TestSetOperations checks set operations against DuckDB.
func TestSetOperations(t *testing.T) {
	sqlCases(t, setOpQueries)
}
