package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRenewStates: the lease renewer cancels the drive and warns when the
// lease really moved (another holder), but stops quietly when the job it
// renews has finished: Acquire refuses both alike.
func TestRenewStates(t *testing.T) {
	for _, tc := range []struct {
		name       string
		state      JobState
		otherOwner bool
		wantCancel bool
		wantWarn   bool
	}{
		{name: "finished job", state: StateSucceeded, wantCancel: false, wantWarn: false},
		{name: "failed job", state: StateFailed, wantCancel: false, wantWarn: false},
		{name: "held by another", state: StateRunning, otherOwner: true, wantCancel: true, wantWarn: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFakeEnv(t, 1)
			var logs bytes.Buffer
			cfg := testConfig("c1")
			cfg.LeaseTTL = 90 * time.Millisecond
			c := New(cfg, NewStore(e.rdb), e.bucket, fakePlanner{twoStageGraph()}, fakeTables{e.files}, e.inv,
				slog.New(slog.NewTextHandler(&logs, nil)))
			t.Cleanup(c.Close)
			ctx := context.Background()
			job := "j-renew"
			g, err := json.Marshal(twoStageGraph())
			if err != nil {
				t.Fatal(err)
			}
			if err := c.store.CreateJob(ctx, job, map[string]any{"graph": string(g)}); err != nil {
				t.Fatal(err)
			}
			fence, ok, err := c.store.Acquire(ctx, job, "c1", time.Minute)
			if err != nil || !ok {
				t.Fatalf("acquire: %v %v", ok, err)
			}
			if tc.state.Terminal() {
				if err := c.store.FinishJob(ctx, job, fence, tc.state, 0); err != nil {
					t.Fatal(err)
				}
			}
			if tc.otherOwner {
				c.store.Release(ctx, job, "c1")
				if _, ok, err := c.store.Acquire(ctx, job, "c2", time.Minute); err != nil || !ok {
					t.Fatalf("acquire by c2: %v %v", ok, err)
				}
			}
			rctx, stop := context.WithTimeout(ctx, 400*time.Millisecond)
			defer stop()
			var cancelled atomic.Bool
			done := make(chan struct{})
			go func() {
				c.renew(rctx, func() { cancelled.Store(true) }, job, fence, new(atomic.Bool))
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("renew did not return")
			}
			if cancelled.Load() != tc.wantCancel {
				t.Errorf("cancelled = %v, want %v", cancelled.Load(), tc.wantCancel)
			}
			if warned := strings.Contains(logs.String(), "lost lease"); warned != tc.wantWarn {
				t.Errorf("warned = %v, want %v; logs:\n%s", warned, tc.wantWarn, logs.String())
			}
		})
	}
}
