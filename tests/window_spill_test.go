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
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	fnMem := int64(512<<10) * max(1, int64(math.Round(*sfFlag/0.01)))
	spillDir := t.TempDir()
	st := startStack(t, "", func(o *local.Options) { o.FunctionMemory = fnMem })
	st.Runtime.SpillDir = spillDir
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, sql string }{
		{"one-pass", `select l_orderkey, l_linenumber,
			row_number() over (order by l_orderkey, l_linenumber) as rn,
			sum(l_quantity) over (order by l_orderkey, l_linenumber) as running,
			lag(l_extendedprice) over (order by l_orderkey, l_linenumber) as prev
			from lineitem`},
		{"two-pass", `select l_orderkey, l_linenumber, l_quantity,
			ntile(4) over (order by l_orderkey, l_linenumber) as q,
			row_number() over (order by l_orderkey, l_linenumber) as rn
			from lineitem`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, st, c.sql, true)
			got := sluiceRows(res)
			compareRows(t, got, duckRows(t, db, c.sql), false)
			var spilled, peak int64
			for _, s := range res.Status.Stages {
				spilled += s.SpillBytes
				peak = max(peak, s.PeakMemoryBytes)
			}
			if spilled == 0 {
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
