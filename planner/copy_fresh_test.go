package planner

import (
	"context"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestDistinctOuterDefinesOnce: decorrelating a non-equality correlation
// below an aggregation reads the outer input a second time (copyFresh);
// no column id is read by two scans or VALUES lists, or grouped on by two
// aggregations, in the optimized logical plan. (Projections are not
// checked: the count-bug projection defines the subquery's value column
// again over the join, by design.)
func TestDistinctOuterDefinesOnce(t *testing.T) {
	for _, q := range []string{
		`select n_nationkey, (select count(*) from region where r_regionkey < n_regionkey) from nation`,
		`select o_orderkey from orders where o_totalprice > (select avg(l_extendedprice) from lineitem where l_orderkey = o_orderkey and l_shipdate > o_orderdate)`,
		`select n_nationkey from nation where n_regionkey > any (select r_regionkey from region where r_name < n_name)`,
		`select n_name, r_name, (select count(*) from supplier where s_nationkey = n_nationkey and s_acctbal > r_regionkey * 1000) from nation join region on n_regionkey = r_regionkey`,
		`select x, (select count(*) from (values (1), (2)) s(y) where y < t.x or t.x is null) from (values (1), (null)) t(x)`,
		`select n_nationkey, (select count(*) from region where r_regionkey < n_regionkey), (select sum(r_regionkey) from region where r_name > n_name) from nation`,
	} {
		tree, quals, err := parse(q)
		if err != nil {
			t.Fatal(err)
		}
		b := &binder{ctx: context.Background(), sql: q, cat: testCatalog, md: &metadata{}, pos: map[*plan.Expr]int32{}, qualify: quals}
		root, err := b.bindStatement(tree.Stmts[0])
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		root, _, _, err = optimize(root, &ruleCtx{md: b.md, sql: q}, b.outerRefs)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defined := map[colID]int{}
		var walk func(n node)
		walk = func(n node) {
			var ids []colID
			switch n := n.(type) {
			case *scanNode:
				ids = n.cols
			case *aggregateNode:
				ids = n.groupCols
			case *valuesNode:
				ids = n.cols
			}
			for _, id := range ids {
				defined[id]++
			}
			for _, c := range n.children() {
				walk(c)
			}
		}
		walk(root)
		for id, k := range defined {
			if k > 1 {
				t.Errorf("%s: column %d (%s) defined %d times", q, id, b.md.col(id).name, k)
			}
		}
	}
}
