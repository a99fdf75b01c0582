package tests

import (
	"context"
	"testing"

	"github.com/sluicedb/sluice/local"
)

// TestLimitEarlyStop: a bare LIMIT over many scan tasks stops once enough
// rows exist: later tasks are not invoked, fewer bytes are read, and the
// answer has exactly LIMIT rows, all satisfying the filter.
func TestLimitEarlyStop(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	q := `select l_orderkey, l_quantity from lineitem where l_quantity > 45 limit 7`
	allowed := map[string]bool{}
	for _, r := range duckRows(t, db, `select l_orderkey, l_quantity from lineitem where l_quantity > 45`) {
		allowed[rowKey(r)] = true
	}
	measure := func(stop bool) (invoked, tasks int, bytes int64) {
		st := startStack(t, "", func(o *local.Options) {
			o.Functions = 1 // one at a time, so later tasks see the counter
			o.Coordinator.SplitBytes = 64 << 10
			o.Coordinator.AQE.MaxSplitBytes = 0 // several scan tasks: no size-scans
			o.Coordinator.LimitEarlyStop = stop
		})
		if _, err := st.LoadDir(context.Background(), dir); err != nil {
			t.Fatal(err)
		}
		res := run(t, st, q, true)
		rows := sluiceRows(res)
		if len(rows) != 7 {
			t.Fatalf("early stop %v: %d rows, want 7", stop, len(rows))
		}
		for _, r := range rows {
			if !allowed[rowKey(r)] {
				t.Fatalf("row %v is not a row of the query", r)
			}
		}
		s0 := res.Status.Stages[0]
		return s0.Invoked, s0.Tasks, s0.InputBytes
	}
	onInv, tasks, onBytes := measure(true)
	offInv, _, offBytes := measure(false)
	t.Logf("scan tasks %d: invoked %d with early stop (%d bytes read), %d without (%d bytes read)", tasks, onInv, onBytes, offInv, offBytes)
	if tasks < 3 {
		t.Fatalf("only %d scan tasks; the test needs several", tasks)
	}
	if offInv != tasks {
		t.Fatalf("without early stop %d of %d tasks invoked", offInv, tasks)
	}
	if onInv >= tasks || onBytes >= offBytes {
		t.Fatalf("early stop did not save work: invoked %d/%d, bytes %d vs %d", onInv, tasks, onBytes, offBytes)
	}
}
