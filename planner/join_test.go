package planner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestJoinRules checks which rules fired for join and subquery shapes and
// what they made of them.
func TestJoinRules(t *testing.T) {
	cases := []struct {
		sql   string
		rules []string
		want  []string // substrings of the logical plan, in order
	}{
		{
			// The fact table is the probe (left) side, whatever the FROM order.
			"select o_orderdate, l_quantity from orders, lineitem where o_orderkey = l_orderkey",
			[]string{"push_down_filters", "prune_columns", "reorder_joins"},
			[]string{"Join: type=inner on=[(o_orderkey = l_orderkey)]", "Scan: lineitem", "Scan: orders"},
		},
		{
			// A condition rejecting the NULLs of a left join's right side
			// makes it inner.
			"select o_orderkey from orders left join lineitem on o_orderkey = l_orderkey where l_quantity > 10",
			[]string{"push_down_filters", "prune_columns", "reorder_joins"},
			[]string{"Join: type=inner", "filters=[(l_quantity > 10.00)]"},
		},
		{
			// IS NULL does not reject them: the join stays outer, the
			// filter above it. The bigger right side becomes the probe.
			"select o_orderkey from orders left join lineitem on o_orderkey = l_orderkey where l_quantity is null",
			[]string{"prune_columns", "reorder_joins"},
			[]string{"Filter: (l_quantity IS NULL)", "Join: type=right on=[(o_orderkey = l_orderkey)]", "Scan: lineitem", "Scan: orders"},
		},
		{
			// ON conditions on the right side of a left join filter that
			// side first; those on the left stay in the join.
			"select o_orderkey, l_tax from lineitem left join orders on o_orderkey = l_orderkey and o_totalprice > 5 and l_tax > 0",
			[]string{"push_down_filters", "prune_columns"},
			[]string{"Join: type=left on=[(o_orderkey = l_orderkey) AND (l_tax > 0.00)]", "filters=[(o_totalprice > 5.00)]"},
		},
		{
			// A full join whose left NULLs are rejected is a left join.
			"select o_orderkey from orders full join lineitem on o_orderkey = l_orderkey where o_totalprice > 0",
			[]string{"push_down_filters", "prune_columns", "reorder_joins"},
			[]string{"Join: type=right", "Scan: lineitem", "Scan: orders projection=[o_orderkey, o_totalprice] filters=[(o_totalprice > 0.00)]"},
		},
		{
			"select o_orderkey from orders where exists (select * from lineitem where l_orderkey = o_orderkey and l_tax > 0)",
			[]string{"decorrelate_subqueries", "push_down_filters", "prune_columns"},
			[]string{"Join: type=semi on=[(l_orderkey = o_orderkey)]", "filters=[(l_tax > 0.00)]"},
		},
		{
			// Uncorrelated EXISTS: a one-row count joined to every row.
			"select o_orderkey from orders where not exists (select * from lineitem where l_tax > 1)",
			[]string{"push_down_filters", "prune_columns"},
			[]string{"CrossJoin:", "Filter: (count(*) = 0)", "Aggregate: group_by=[], aggs=[count(*)]", "Limit: offset=0, limit=1"},
		},
		{
			// Correlation through GROUP BY/HAVING: the correlated column
			// becomes a group key.
			"select o_orderkey from orders where exists (select l_suppkey from lineitem where l_orderkey = o_orderkey group by l_suppkey having count(*) > 1)",
			[]string{"decorrelate_subqueries", "prune_columns"},
			[]string{"Join: type=semi on=[(l_orderkey = o_orderkey)]", "Aggregate: group_by=[l_suppkey, l_orderkey], aggs=[count(*)]"},
		},
		{
			// A correlated NOT IN over values that cannot be NULL is a
			// plain anti join.
			"select o_orderkey from orders where o_orderkey not in (select l_orderkey from lineitem where l_suppkey = o_custkey)",
			[]string{"decorrelate_subqueries", "prune_columns"},
			[]string{"Join: type=anti on=[(o_orderkey = l_orderkey) AND (l_suppkey = o_custkey)]"},
		},
		{
			// Common conjuncts leave an OR; what it implies per side
			// filters each side.
			"select count(*) from orders, lineitem where (o_orderkey = l_orderkey and l_tax > 0 and o_totalprice > 1) or (o_orderkey = l_orderkey and l_discount > 0 and o_totalprice < 1)",
			[]string{"push_down_filters", "prune_columns", "reorder_joins"},
			[]string{"Join: type=inner on=[(o_orderkey = l_orderkey) AND",
				"filters=[((l_tax > 0.00) OR (l_discount > 0.00))]",
				"filters=[((o_totalprice > 1.00) OR (o_totalprice < 1.00))]"},
		},
		{
			"select k from (select o_orderkey as k from orders union all select l_orderkey from lineitem) u where k = 5",
			[]string{"push_down_filters", "prune_columns"},
			[]string{"Union: columns=[k]", "filters=[(o_orderkey = 5)]", "filters=[(l_orderkey = 5)]"},
		},
		{
			// A snowflake arm: nation's filter reaches lineitem through
			// supplier, so supplier joins nation first and that arm is
			// lineitem's first join, before orders' weaker filter.
			"select s_name, count(*) from lineitem, orders, supplier, nation where s_suppkey = l_suppkey and o_orderkey = l_orderkey and o_orderstatus = 'F' and s_nationkey = n_nationkey and n_name = 'SAUDI ARABIA' group by s_name",
			[]string{"push_down_filters", "prune_columns", "reorder_joins"},
			[]string{"Join: type=inner on=[(o_orderkey = l_orderkey)]", "Join: type=inner on=[(s_suppkey = l_suppkey)]", "Scan: lineitem",
				"Join: type=inner on=[(s_nationkey = n_nationkey)]", "Scan: supplier", "Scan: nation", "Scan: orders"},
		},
		{
			// Without the filter on nation the arm reduces nothing:
			// left-deep as before, orders first (the FROM order already is).
			"select n_name, count(*) from lineitem, orders, supplier, nation where s_suppkey = l_suppkey and o_orderkey = l_orderkey and o_orderstatus = 'F' and s_nationkey = n_nationkey group by n_name",
			[]string{"push_down_filters", "prune_columns"},
			[]string{"Join: type=inner on=[(s_nationkey = n_nationkey)]", "Join: type=inner on=[(s_suppkey = l_suppkey)]",
				"Join: type=inner on=[(o_orderkey = l_orderkey)]", "Scan: lineitem", "Scan: orders", "Scan: supplier", "Scan: nation"},
		},
		{
			// A CTE used twice is bound twice: two scans.
			"with t as (select o_custkey, o_totalprice from orders) select count(*) from t a, t b where a.o_custkey = b.o_custkey and a.o_totalprice < 0",
			[]string{"push_down_filters", "prune_columns", "reorder_joins"},
			[]string{"Join: type=inner on=[(o_custkey = o_custkey)]", "Scan: orders projection=[o_custkey]", "Scan: orders projection=[o_custkey, o_totalprice] filters=[(o_totalprice < 0.00)]"},
		},
	}
	for _, c := range cases {
		p, err := Plan(context.Background(), c.sql, testCatalog, Options{})
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if !slices.Equal(p.Rules, c.rules) {
			t.Errorf("%s: rules fired %v, want %v\n%s", c.sql, p.Rules, c.rules, p.Logical)
		}
		rest := p.Logical
		for _, w := range c.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: logical plan lacks %q (in order):\n%s", c.sql, w, p.Logical)
				break
			}
			rest = rest[i+len(w):]
		}
	}
}

// stageKinds counts the output partitionings of a graph's stages.
func stageKinds(g *plan.Graph) map[plan.PartitionKind]int {
	out := map[plan.PartitionKind]int{}
	for _, s := range g.Stages {
		out[s.Output.Kind]++
	}
	return out
}

// TestBroadcastChoice checks the broadcast/partitioned decision against
// the size estimates and Options.BroadcastBytes.
func TestBroadcastChoice(t *testing.T) {
	q3 := planFile(t, "testdata/tpch/q03.sql", Options{})
	// Filtered orders joined with filtered customer first (reorder_joins'
	// snowflake arm, ~45k rows, ~0.9 MB estimated) is broadcast into
	// lineitem's scan: lineitem is never shuffled, and aggregates
	// partially where it is read.
	if n := stageKinds(q3.Graph)[plan.PartitionBroadcast]; n != 2 {
		t.Errorf("Q3: %d broadcast stages, want 2\n%s", n, Explain(q3))
	}
	if ex := Explain(q3); !strings.Contains(ex, "Aggregate: mode=partial group_by=[l_orderkey@0") {
		t.Errorf("Q3: the aggregation must start where lineitem is read\n%s", ex)
	}
	// Below the arm's estimate only customer (~0.1 MB) is broadcast:
	// lineitem and orders meet hashed on the order key, and the
	// aggregation grouped by it needs no further shuffle.
	small := planFile(t, "testdata/tpch/q03.sql", Options{BroadcastBytes: 512 << 10})
	if n := stageKinds(small.Graph)[plan.PartitionBroadcast]; n != 1 {
		t.Errorf("Q3 at 512 KiB: %d broadcast stages, want 1\n%s", n, Explain(small))
	}
	if ex := Explain(small); !strings.Contains(ex, "Aggregate: mode=single group_by=[l_orderkey@0") {
		t.Errorf("Q3 at 512 KiB: the aggregation must run where the join is, in one step\n%s", ex)
	}
	part := planFile(t, "testdata/tpch/q03.sql", Options{BroadcastBytes: -1})
	if n := stageKinds(part.Graph)[plan.PartitionBroadcast]; n != 0 {
		t.Errorf("Q3 without broadcasts: %d broadcast stages\n%s", n, Explain(part))
	}
	// NOT IN (null-aware) and a join without keys broadcast regardless.
	q16 := planFile(t, "testdata/tpch/q16.sql", Options{BroadcastBytes: -1})
	if !strings.Contains(Explain(q16), "null_aware") || stageKinds(q16.Graph)[plan.PartitionBroadcast] != 1 {
		t.Errorf("Q16: the NOT IN side must be broadcast:\n%s", Explain(q16))
	}
	q22 := planFile(t, "testdata/tpch/q22.sql", Options{BroadcastBytes: -1})
	if stageKinds(q22.Graph)[plan.PartitionBroadcast] != 1 {
		t.Errorf("Q22: the one-row average must be broadcast:\n%s", Explain(q22))
	}
	// Right and full joins never broadcast their build side (it keeps its
	// unmatched rows, which only one task may emit).
	q13 := planFile(t, "testdata/tpch/q13.sql", Options{BroadcastBytes: 1 << 40})
	if !strings.Contains(Explain(q13), "HashJoin: type=right") || stageKinds(q13.Graph)[plan.PartitionBroadcast] != 0 {
		t.Errorf("Q13: the right join must be partitioned:\n%s", Explain(q13))
	}
}

// TestAllPartitioned plans every case with broadcasts off: the graphs must
// keep their invariants (partitioned joins everywhere) too.
func TestAllPartitioned(t *testing.T) {
	for _, f := range planCases(t) {
		g := planFile(t, f, Options{Partitions: 3, BroadcastBytes: -1}).Graph
		for _, s := range g.Stages {
			plan.Walk(s.Root, func(n *plan.Node) { checkNode(t, f, n) })
			checkStage(t, f, g, s)
		}
	}
}

// TestCountDistinctMixed: COUNT(DISTINCT) next to other aggregates runs
// in one AggSingle step after a shuffle on the group keys.
func TestCountDistinctMixed(t *testing.T) {
	p, err := Plan(context.Background(), "select l_returnflag, count(distinct l_partkey), sum(l_quantity) from lineitem group by l_returnflag", testCatalog, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ex := Explain(p)
	for _, w := range []string{"Aggregate: mode=single group_by=[l_returnflag@0] aggs=[count_distinct(l_partkey@1):int64, sum(l_quantity@2)", "[output: hash(l_returnflag) x8]"} {
		if !strings.Contains(ex, w) {
			t.Errorf("plan lacks %q:\n%s", w, ex)
		}
	}
	if strings.Contains(ex, "mode=partial") {
		t.Errorf("count_distinct must not be split into phases:\n%s", ex)
	}
}

// TestNullSafeJoinKeys: IS NOT DISTINCT FROM between the sides of a join
// is a hash join on two keys per equality that are never NULL (x IS NULL,
// x with NULL replaced by a constant), not a cross join filtered by the
// CASE the binder makes of it; a shape that only looks alike stays a
// filter.
func TestNullSafeJoinKeys(t *testing.T) {
	cases := []struct {
		sql   string
		keys  int // join keys of each side; 0: a cross join
		inner string
	}{
		{"select count(*) from orders join customer on o_custkey is not distinct from c_custkey", 2, "HashJoin"},
		{"select count(*) from orders left join customer on c_custkey is not distinct from o_custkey", 2, "HashJoin"},
		{"select count(*) from orders join customer on o_custkey is not distinct from c_custkey and o_comment is not distinct from c_comment", 4, "HashJoin"},
		{"select count(*) from orders join customer on o_custkey = c_custkey and o_totalprice is not distinct from c_acctbal", 3, "HashJoin"},
		{"select count(*) from orders where exists (select * from customer where c_custkey is not distinct from o_custkey)", 2, "HashJoin"},
		{"select count(*) from orders join customer on o_custkey is distinct from c_custkey", 0, "CrossJoin"},
		{"select count(*) from orders join customer on case when o_custkey is null then c_custkey is null when c_custkey is null then false else o_custkey = c_nationkey end", 0, "CrossJoin"},
	}
	for _, c := range cases {
		pl, err := Plan(context.Background(), c.sql, testCatalog, Options{BroadcastBytes: -1})
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		var joins []*plan.Node
		for _, st := range pl.Graph.Stages {
			plan.Walk(st.Root, func(n *plan.Node) {
				if n.Kind == plan.KindHashJoin || n.Kind == plan.KindCrossJoin {
					joins = append(joins, n)
				}
			})
		}
		if len(joins) != 1 {
			t.Fatalf("%s: %d joins\n%s", c.sql, len(joins), Explain(pl))
		}
		j := joins[0]
		if len(j.Join.LeftKeys) != c.keys || len(j.Join.RightKeys) != c.keys || !strings.Contains(Explain(pl), c.inner) {
			t.Errorf("%s: %s with %d keys, want %s with %d\n%s", c.sql, j.Kind, len(j.Join.LeftKeys), c.inner, c.keys, Explain(pl))
		}
	}
}

// TestJoinOrderDistinct: an equality of two low-cardinality strings is no
// key join once the catalog knows their distinct values (TPC-DS q85's
// cd1.cd_marital_status = cd2.cd_marital_status): the two demographics
// scans meet through the fact table's keys, not with each other first.
// Without the estimates the same query joins them first.
func TestJoinOrderDistinct(t *testing.T) {
	demo := func(distinct map[string]int64) *TableInfo {
		d := table("demo", 1_920_800, 8_000_000, "d_sk", i64, "d_status", str, "d_edu", str)
		d.Distinct = distinct
		return d
	}
	ret := table("ret", 72_000, 5_000_000, "r_sk1", i64, "r_sk2", i64, "r_fee", money)
	const sql = `select sum(r_fee) from ret, demo d1, demo d2
		where d1.d_sk = r_sk1 and d2.d_sk = r_sk2
		and d1.d_status = d2.d_status and d1.d_edu = d2.d_edu
		and (d1.d_status = 'M' and d1.d_edu = 'College' or d1.d_status = 'S' and d1.d_edu = 'Primary')`
	tests := []struct {
		name     string
		distinct map[string]int64
		first    bool // d1 and d2 joined with each other first
	}{
		{"unknown", nil, true},
		{"known", map[string]int64{"d_sk": 1_920_800, "d_status": 5, "d_edu": 7}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cat := fakeCatalog{"ret": ret, "demo": demo(tc.distinct)}
			p, err := Plan(context.Background(), sql, cat, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// The innermost join is the last "Join:" line of the plan.
			var inner string
			for _, line := range strings.Split(p.Logical, "\n") {
				if strings.Contains(line, "Join:") {
					inner = line
				}
			}
			first := strings.Contains(inner, "d1.d_status = d2.d_status")
			if first != tc.first {
				t.Errorf("d1 and d2 joined first: %v, want %v\n%s", first, tc.first, p.Logical)
			}
		})
	}
}

// TestJoinEstimateTotalDomain checks the join estimate of a fact with a
// filtered dimension when the footers give both key columns' distinct
// counts: the fact keeps the fraction of the dimension's keys that the
// filter keeps, whatever fraction of them the fact references, and an
// aggregate keyed by a dimension's columns has at most its rows.
func TestJoinEstimateTotalDomain(t *testing.T) {
	dates := table("dates", 73_049, 1_000_000, "d_sk", i64, "d_year", i64)
	dates.Distinct = map[string]int64{"d_sk": 73_049, "d_year": 200}
	cust := table("cust", 1_000, 100_000, "c_sk", i64, "c_name", str)
	cust.Distinct = map[string]int64{"c_sk": 1_000, "c_name": 990}
	sales := table("sales", 1_000_000, 50_000_000, "s_date", i64, "s_cust", i64, "s_amt", money)
	sales.Distinct = map[string]int64{"s_date": 1_823, "s_cust": 980, "s_amt": 900_000}
	cat := fakeCatalog{"dates": dates, "cust": cust, "sales": sales}
	tests := []struct {
		name     string
		sql      string
		line     string // the first line of the estimates with this prefix
		min, max float64
	}{
		// d_year = 2001 keeps 1/200 of the days (ndv 200 ≥ 10: the
		// constant 0.1 of an equality), so about 0.1 of the sales.
		{"filtered dimension", "select s_amt from sales, dates where s_date = d_sk and d_year = 2001", "Join:", 50_000, 200_000},
		// Without a filter every sale finds its day.
		{"whole dimension", "select s_amt from sales, dates where s_date = d_sk", "Join:", 500_000, 2_000_000},
		// A dimension smaller than the one it references: each customer
		// finds its day.
		{"small referencing side", "select c_name from cust, dates where c_sk = d_sk", "Join:", 500, 2_000},
		// Grouped by a customer's columns and a year pinned to one value:
		// at most the customers.
		{"groups bounded by the dimension", "select c_sk, c_name, d_year, sum(s_amt) from sales, cust, dates where s_cust = c_sk and s_date = d_sk and d_year = 2001 group by c_sk, c_name, d_year", "Aggregate:", 100, 1_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Plan(context.Background(), tc.sql, cat, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got float64 = -1
			for _, line := range strings.Split(p.Estimates, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), tc.line) {
					i := strings.Index(line, "rows≈")
					fmt.Sscanf(line[i+len("rows≈"):], "%g", &got)
					break
				}
			}
			if got < tc.min || got > tc.max {
				t.Errorf("%s estimated %g rows, want within [%g, %g]\n%s", tc.line, got, tc.min, tc.max, p.Estimates)
			}
		})
	}
}
