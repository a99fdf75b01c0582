package tests

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/sluicedb/sluice/local"
)

// TestWindowNoPartitionOverBudget: windows without PARTITION BY (one
// window partition, all rows in one task) over more rows than a tiny
// --function-memory holds answer as DuckDB does, where they failed with
// SL104: row_number, a running sum and lag stream the sorted rows in
// chunks, ntile reads them twice from a spill file.
func TestWindowNoPartitionOverBudget(t *testing.T) {
	windowOverBudget(t, []struct{ name, sql string }{
		{"one-pass", `select l_orderkey, l_linenumber,
			row_number() over (order by l_orderkey, l_linenumber) as rn,
			sum(l_quantity) over (order by l_orderkey, l_linenumber) as running,
			lag(l_extendedprice) over (order by l_orderkey, l_linenumber) as prev
			from lineitem`},
		{"two-pass", `select l_orderkey, l_linenumber, l_quantity,
			ntile(4) over (order by l_orderkey, l_linenumber) as q,
			row_number() over (order by l_orderkey, l_linenumber) as rn
			from lineitem`},
	})
}

// windowFramesInput is lineitem with NULLs in the ORDER BY key k (one
// peer group of about 120 rows) and in the value q (line 3), ties in k (an order's
// lines) and a unique order u.
const windowFramesInput = `(select l_orderkey, l_linenumber, l_partkey,
	case when l_orderkey % 499 = 0 then null else l_orderkey end as k,
	case when l_linenumber = 3 then null else l_quantity end as q,
	l_orderkey * 8 + l_linenumber as u
	from lineitem) t`

// TestWindowFramesOverBudget (issue 28): the frames a window partition
// larger than the budget could not compute before (SL104) answer as
// DuckDB does: min/max to UNBOUNDED FOLLOWING, RANGE and GROUPS offsets
// (ascending and descending, NULL keys), EXCLUDE GROUP / TIES / CURRENT
// ROW, and count/sum/avg(DISTINCT x) over the whole partition.
func TestWindowFramesOverBudget(t *testing.T) {
	from := windowFramesInput
	windowOverBudget(t, []struct{ name, sql string }{
		{"minmax-to-end", `select u, q,
			max(q) over (order by u rows between current row and unbounded following) as a,
			min(q) over (order by u desc rows between 2 preceding and unbounded following) as b,
			max(q) over (order by k nulls first range between current row and unbounded following) as c,
			min(l_partkey) over (order by k desc groups between 1 following and unbounded following) as d
			from ` + from},
		{"range-groups-offsets", `select u, k, q,
			sum(q) over (order by k range between 10 preceding and current row) as a,
			count(q) over (order by k desc nulls first range between 5 preceding and 20 following) as b,
			max(q) over (order by k groups between 1 preceding and 1 following) as c,
			avg(q) over (order by k groups between 2 preceding and 1 preceding) as d,
			min(q) over (order by k range between unbounded preceding and 30 preceding) as e,
			sum(q) over (order by k desc range between 12 preceding and unbounded following) as f
			from ` + from},
		{"exclude", `select u, k, q,
			sum(q) over (order by k range between 10 preceding and 10 following exclude group) as a,
			sum(q) over (order by k range between current row and current row exclude ties) as b,
			max(q) over (order by k groups between 1 preceding and 1 following exclude current row) as c,
			count(q) over (order by u rows between 3 preceding and 2 following exclude ties) as d
			from ` + from},
		{"distinct", `select u,
			count(distinct l_partkey) over () as a,
			sum(distinct q) over () as b,
			avg(distinct q) over () as c,
			count(distinct k) over (order by u rows between unbounded preceding and unbounded following) as d
			from ` + from},
		{"empty", `select u, max(q) over (order by u rows between current row and unbounded following) as a,
			sum(q) over (order by k range between 3 preceding and current row) as b,
			count(distinct q) over () as c
			from ` + from + ` where u < 0`},
	})
}

// TestWindowCornersOverBudget (issue 28, the last SL104s): lag/lead of
// offsets that are not constants (a column, an expression with NULLs and
// negative values, targets thousands of rows away), EXCLUDE CURRENT ROW /
// GROUP / TIES over frames from UNBOUNDED PRECEDING or to UNBOUNDED
// FOLLOWING, and peer groups of ties larger than the budget (cume_dist,
// running aggregates to the peers' end), over one window partition larger
// than the budget, answer as DuckDB does.
func TestWindowCornersOverBudget(t *testing.T) {
	from := windowFramesInput
	windowOverBudget(t, []struct{ name, sql string }{
		{"lag-offset-column", `select u, l_linenumber,
			lag(q, l_linenumber) over (order by u) as a,
			lead(l_partkey, l_orderkey % 7 - 3, -1) over (order by u) as b,
			lag(u, case when l_linenumber = 2 then null else l_linenumber * 1500 end, 0) over (order by u) as c,
			lead(q, l_partkey % 4000) over (order by u desc) as d
			from ` + from},
		{"exclude-whole", `select u, k, q,
			sum(q) over (order by u rows between unbounded preceding and unbounded following exclude current row) as a,
			max(q) over (order by k rows between unbounded preceding and unbounded following exclude group) as b,
			count(q) over (order by k range between unbounded preceding and unbounded following exclude ties) as c,
			first_value(q) over (order by u rows between unbounded preceding and unbounded following exclude current row) as d
			from ` + from},
		{"exclude-from-start", `select u, k, q,
			avg(q) over (order by k range between unbounded preceding and current row exclude ties) as a,
			count(*) over (order by k rows between unbounded preceding and current row exclude group) as b,
			min(q) over (order by u rows between unbounded preceding and 2 following exclude current row) as c,
			last_value(q) over (order by u rows between unbounded preceding and current row exclude current row) as d
			from ` + from},
		{"exclude-to-end", `select u, k, q,
			min(l_partkey) over (order by k desc groups between current row and unbounded following exclude ties) as a,
			last_value(k * 10 + 1) over (order by k range between current row and unbounded following exclude group) as b,
			sum(q) over (order by k range between 20 preceding and unbounded following exclude current row) as c,
			first_value(l_partkey) over (order by u rows between current row and unbounded following exclude current row) as d
			from ` + from},
		{"big-peer-groups", `select u, c,
			sum(q) over (order by c) as a,
			cume_dist() over (order by c desc) as b,
			max(l_partkey) over (order by c groups between unbounded preceding and current row) as d,
			count(*) over (order by k is null range between unbounded preceding and current row) as e,
			avg(q) over (order by c nulls first) as f,
			cume_dist() over () as g
			from (select *, case when l_orderkey % 5 = 0 then null else l_orderkey % 2 end as c from ` + from + `) t2`},
	})
}

// windowOverBudget runs each query under a tiny function memory, one
// window partition larger than it, against DuckDB; something must spill.
func windowOverBudget(t *testing.T, cases []struct{ name, sql string }) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	fnMem := int64(512<<10) * max(1, int64(math.Round(*sfFlag/0.01)))
	spillDir := t.TempDir()
	st := startStack(t, "", func(o *local.Options) { o.FunctionMemory = fnMem })
	st.Runtime.SpillDir = spillDir
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, st, c.sql, true)
			got := sluiceRows(res)
			compareRows(t, got, duckRows(t, db, c.sql), false)
			var spilled, peak int64
			for _, s := range res.Status.Stages {
				spilled += s.SpillBytes
				peak = max(peak, s.PeakMemoryBytes)
			}
			if spilled == 0 && len(got) > 0 {
				t.Error("nothing spilled: the budget is not tiny enough")
			}
			// As TestTPCHSpill: the peak may pass the budget by about a batch.
			if peak > 2*fnMem {
				t.Errorf("peak task memory %d, function memory %d", peak, fnMem)
			}
			t.Logf("%d rows, function memory %d: peak task memory %d, spilled %d bytes", len(got), fnMem, peak, spilled)
		})
	}
	ents, err := os.ReadDir(spillDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) > 0 {
		t.Errorf("%d task spill directories left behind", len(ents))
	}
}
