package tests

import (
	"context"
	"testing"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local"
)

// TestCancelUselessStage: the build side of a partitioned inner join comes
// back empty while the probe side is still running; the re-plan skips the
// join and cancels the probe side's in-flight and pending tasks instead of
// waiting for them, and the answer is still right.
func TestCancelUselessStage(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", func(o *local.Options) {
		o.BroadcastBytes = -1 // partitioned joins only
		o.Functions = 1
		o.Coordinator.SplitBytes = 32 << 10 // many small lineitem tasks
	})
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	q := `select l_returnflag, count(*) as n from lineitem, orders
		where l_orderkey = o_orderkey and o_totalprice < 0 group by l_returnflag`
	res := run(t, st, q, true)
	compareRows(t, sluiceRows(res), duckRows(t, db, q), false)
	js := res.Status
	if !firedRule(js, "propagate-empty") {
		t.Fatalf("propagate-empty did not fire: %+v", js.Rounds)
	}
	cancelled := 0
	for _, s := range js.Stages {
		if s.State == coordinator.StageSkipped && s.Tasks > 0 {
			cancelled++
			if s.TasksDone >= s.Tasks {
				t.Fatalf("stage %d was cancelled after all its %d tasks finished", s.ID, s.Tasks)
			}
		}
	}
	if cancelled == 0 {
		t.Fatalf("no running stage was cancelled: stages %+v", js.Stages)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
