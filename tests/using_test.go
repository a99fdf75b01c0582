package tests

import "testing"

// usingQueries cover JOIN ... USING and NATURAL JOIN, every join type.
var usingQueries = []query{
	{"using-inner", `select * from nation join (select n_nationkey, n_name as other from nation where n_regionkey = 1) t using (n_nationkey)`, false},
	{"using-qualified", `select n_nationkey, nation.n_name, t.n_nationkey as tk, t.x from nation
		left join (select n_nationkey, n_regionkey * 2 as x from nation where n_nationkey < 10) t using (n_nationkey)`, false},
	{"using-full", `select n_nationkey, a.v, b.w from (select n_nationkey, n_name as v from nation where n_nationkey < 15) a
		full join (select n_nationkey, n_regionkey as w from nation where n_nationkey > 8) b using (n_nationkey)`, false},
	{"using-right-count", `select n_regionkey, count(*) from (select n_regionkey from nation where n_nationkey < 5) a
		right join (select r_regionkey as n_regionkey, r_name from region) r using (n_regionkey) group by n_regionkey`, false},
	{"natural", `select * from (select n_nationkey, n_regionkey, n_name from nation) a
		natural join (select n_nationkey, n_regionkey, n_comment from nation where n_nationkey % 2 = 0) b`, false},
}

// TestJoinUsing checks USING and NATURAL joins against DuckDB.
func TestJoinUsing(t *testing.T) {
	sqlCases(t, usingQueries)
}
