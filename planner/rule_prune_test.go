package planner

import (
	"context"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestPruneKeepsRowCount: whatever column pruning drops, no stage output
// and no exchange has zero columns, since a batch of zero columns cannot
// carry its row count across an exchange (count(*) over a derived table
// with LIMIT once counted 0).
func TestPruneKeepsRowCount(t *testing.T) {
	for _, q := range []string{
		`select count(*) from (select * from lineitem limit 100) t`,
		`with t as (select * from orders limit 77) select count(*) from t`,
		`select count(*) from (select * from (select * from lineitem limit 500) a limit 123) b`,
		`select count(*) from (select count(*) as n, sum(l_quantity) from lineitem) t`,
		`select count(*) from (select o_orderkey from orders limit 50) o join lineitem l on l.l_orderkey = o.o_orderkey`,
		`select count(*) from (select * from nation limit 4) a cross join (select * from region limit 3) b`,
		`select count(*) from ((select n_name from nation limit 3) union all select r_name from region) u`,
	} {
		p, err := Plan(context.Background(), q, testCatalog, Options{})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for _, st := range p.Graph.Stages {
			plan.Walk(st.Root, func(n *plan.Node) {
				if len(n.Schema) == 0 {
					t.Errorf("%s: stage %d: %s node with zero columns\n%s", q, st.ID, n.Kind, Explain(p))
				}
			})
		}
	}
}
