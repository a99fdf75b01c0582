package tests

import (
	"testing"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/planner/plan"
)

// lateRows sums, over the done stages of js, the late materialization
// counts of the scans of table.
func lateRows(js *coordinator.JobStatus, table string) (decoded, skipped int64) {
	for _, s := range js.Stages {
		if s.Metrics == nil || s.Plan == nil {
			continue
		}
		id := 0
		var walk func(n *plan.Node)
		walk = func(n *plan.Node) {
			if scanOf(table)(n) {
				if o := s.Metrics.Operator(id); o != nil {
					decoded += o.LateRowsDecoded
					skipped += o.LateRowsSkipped
				}
			}
			id++
			for _, c := range n.Inputs {
				walk(c)
			}
		}
		walk(s.Plan)
	}
	return decoded, skipped
}

// TestLateMaterialization runs selective filters over lineitem, whose
// scans decode the columns the filter does not name only for the rows it
// keeps: every answer equals DuckDB's, adaptive and static, and the scan
// reports the rows it skipped (late_rows_skipped) where the filter drops
// rows inside the row groups it reads. A filter that keeps nearly every
// row gives the same answers (the scan turns back into one pass). A
// join's runtime filter (adaptive only) is one of the filters the probe
// scan applies before it decodes the other columns.
func TestLateMaterialization(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", func(o *local.Options) {
		o.Coordinator.AQE.InlineScanBytes = 0 // every scan in a stage of its own
		// Runtime filters for small probe scans too: the join's filter
		// lands in the lineitem scan as an IN list.
		o.Coordinator.AQE.RuntimeFilterProbeBytes = 1
	})
	if _, err := st.LoadDir(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, sql string
		ordered   bool
		skips     bool // the lineitem scan must report skipped rows
		adaptive  bool // ... in the adaptive run only
	}{
		{"q6", `select sum(l_extendedprice * l_discount) as revenue from lineitem
			where l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01'
			and l_discount between 0.05 and 0.07 and l_quantity < 24`, false, true, false},
		{"one day, wide rows", `select l_orderkey, l_linenumber, l_partkey, l_suppkey, l_quantity, l_extendedprice, l_tax,
			l_returnflag, l_linestatus, l_shipinstruct, l_shipmode, l_comment, l_commitdate
			from lineitem where l_shipdate = date '1995-06-17' order by l_orderkey, l_linenumber`, true, true, false},
		{"dictionary equality", `select l_shipmode, count(*), sum(l_quantity), min(l_comment), max(l_receiptdate)
			from lineitem where l_shipmode = 'AIR' and l_quantity < 5 group by l_shipmode`, false, true, false},
		{"dictionary IN", `select l_linenumber, l_orderkey, l_extendedprice from lineitem
			where l_shipinstruct in ('TAKE BACK RETURN', 'NONE') and l_discount = 0.04 and l_tax = 0.02
			order by l_orderkey, l_linenumber`, true, true, false},
		{"nulls and no match", `select count(*), sum(l_extendedprice) from lineitem where l_returnflag = 'X'`, false, false, false},
		{"keeps nearly all", `select sum(l_extendedprice), count(l_comment), max(l_partkey) from lineitem where l_quantity >= 2`, false, false, false},
		{"runtime filter join", `select o_orderpriority, count(*), sum(l_extendedprice) from lineitem, orders
			where l_orderkey = o_orderkey and o_orderdate = date '1995-03-15' group by o_orderpriority order by o_orderpriority`, true, false, true},
	}
	for _, tc := range cases {
		want := duckRows(t, db, tc.sql)
		for _, adaptive := range []bool{false, true} {
			name := tc.name + "/static"
			if adaptive {
				name = tc.name + "/adaptive"
			}
			t.Run(name, func(t *testing.T) {
				res := run(t, st, tc.sql, adaptive)
				compareRows(t, sluiceRows(res), want, tc.ordered)
				dec, skip := lateRows(res.Status, "lineitem")
				if (tc.skips || tc.adaptive && adaptive) && skip == 0 {
					t.Errorf("the lineitem scan skipped no rows (late_rows_decoded=%d)", dec)
				}
				t.Logf("late_rows_decoded=%d late_rows_skipped=%d", dec, skip)
			})
		}
	}
}
