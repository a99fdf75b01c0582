package tests

import (
	"strings"
	"testing"
)

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

// scalarQueries cover scalar subqueries that are not aggregates: one row,
// no row (NULL), and more than one (a run-time error).
var scalarQueries = []query{
	{"scalar-distinct", `select n_name from nation where n_regionkey = (select distinct r_regionkey from region where r_name = 'ASIA')`, false},
	{"scalar-limit", `select c_custkey, (select o_orderkey from orders order by o_totalprice desc limit 1) as top
		from customer where c_custkey < 5`, false},
	{"scalar-empty", `select n_name, (select r_name from region where r_regionkey = 99) as none from nation`, false},
	{"exists-or", `select c_custkey from customer where c_nationkey = 3 and (exists (select * from orders where o_custkey = c_custkey and o_orderpriority = '1-URGENT')
		or exists (select * from orders where o_custkey = c_custkey and o_totalprice > 300000))`, false},
	{"not-exists-or", `select c_custkey from customer where c_custkey < 200 and (not exists (select * from orders where o_custkey = c_custkey) or c_acctbal < 0)`, false},
	{"exists-select-list", `select n_name, exists (select * from supplier where s_nationkey = n_nationkey and s_acctbal > 9000) as rich,
		exists (select * from region where r_name = 'MARS') as mars from nation`, false},
}

// TestScalarSubqueries checks scalar subqueries against DuckDB, and that
// one with several rows fails with a clear error.
func TestScalarSubqueries(t *testing.T) {
	sqlCases(t, scalarQueries)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(t.Context(), dataDir(t, *sfFlag)); err != nil {
		t.Fatal(err)
	}
	adaptive := true
	_, err := st.Query(t.Context(), `select n_name from nation where n_regionkey = (select r_regionkey from region)`, &adaptive, nil)
	if err == nil || !strings.Contains(err.Error(), "more than one row returned by a subquery") {
		t.Fatalf("got %v, want the more-than-one-row error", err)
	}
}
