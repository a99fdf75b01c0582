package tests

import (
	"context"
	"math"
	"testing"
)

// TestApproxCountDistinct: the HyperLogLog estimate, computed in partial
// states per scan task and merged in the final stage, is within 5% of
// DuckDB's exact count(DISTINCT), globally and per group; small sets are
// exact (linear counting).
func TestApproxCountDistinct(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ approx, exact string }{
		{`select approx_count_distinct(l_orderkey), approx_count_distinct(l_comment), approx_count_distinct(l_shipmode) from lineitem`,
			`select count(distinct l_orderkey), count(distinct l_comment), count(distinct l_shipmode) from lineitem`},
		{`select l_returnflag, approx_count_distinct(l_partkey) from lineitem group by l_returnflag order by 1`,
			`select l_returnflag, count(distinct l_partkey) from lineitem group by l_returnflag order by 1`},
		{`select approx_count_distinct(o_custkey) from orders where o_orderkey < 0`,
			`select count(distinct o_custkey) from orders where o_orderkey < 0`},
	}
	for _, c := range cases {
		want := duckRows(t, db, c.exact)
		for _, adaptive := range []bool{true, false} {
			got := sluiceRows(run(t, st, c.approx, adaptive))
			if len(got) != len(want) {
				t.Fatalf("%s: %d rows, want %d", c.approx, len(got), len(want))
			}
			for i := range got {
				for k := range got[i] {
					g, gok := got[i][k].(float64)
					w, wok := want[i][k].(float64)
					if !gok || !wok {
						if got[i][k] != want[i][k] {
							t.Errorf("%s row %d col %d: %v, want %v", c.approx, i, k, got[i][k], want[i][k])
						}
						continue
					}
					tol := 0.05 * w
					if w < 100 {
						tol = 0
					}
					if math.Abs(g-w) > tol {
						t.Errorf("%s (adaptive %v) row %d col %d: estimate %v, exact %v", c.approx, adaptive, i, k, g, w)
					}
					t.Logf("estimate %v, exact %v", g, w)
				}
			}
		}
	}
}
