package coordinator

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/adaptive"
)

// TestFunctionSizesInSpecs: with --function-sizes, size-functions sizes
// each stage, and its choice reaches the tasks' specs, the invocation's
// context (which a sized invoker routes by), and the cost report's
// GB-seconds.
func TestFunctionSizesInSpecs(t *testing.T) {
	e := newFakeEnv(t, 2)
	cfg := testConfig("c1")
	cfg.Adaptive = true
	cfg.FunctionMemory = 1 << 30
	cfg.AQE.Sizing = adaptive.Sizing{Sizes: []int64{1769 << 20, 128 << 20}, Optimize: adaptive.OptimizeCost}
	var ctxMem sync.Map
	e.inv.behave = func(ctx context.Context, spec *function.TaskSpec) (*function.TaskResult, error, bool) {
		res := okResult(spec, e.inv.parts)
		ctxMem.Store(fmt.Sprintf("%d/%d", spec.Stage, spec.Task), FunctionMemoryOf(ctx))
		time.Sleep(20 * time.Millisecond)
		return res, nil, true
	}
	c := e.coordinator(t, cfg)
	job, err := c.Submit(context.Background(), "select", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := waitJob(t, c, job); m.State != StateSucceeded {
		t.Fatalf("job %s: %s", m.State, m.Error)
	}
	e.inv.mu.Lock()
	defer e.inv.mu.Unlock()
	if len(e.inv.specs) == 0 {
		t.Fatal("no task ran")
	}
	for _, s := range e.inv.specs {
		// Every task of this plan reads a few bytes: the smallest size
		// costs the least.
		if s.FunctionMemory != 128<<20 {
			t.Errorf("stage %d task %d runs on %d bytes, want 128 MiB", s.Stage, s.Task, s.FunctionMemory)
		}
		if m, _ := ctxMem.Load(fmt.Sprintf("%d/%d", s.Stage, s.Task)); m != int64(128<<20) {
			t.Errorf("stage %d task %d: invocation context carries %v, want 128 MiB", s.Stage, s.Task, m)
		}
	}
	cost, err := c.store.Cost(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if want := cost.FunctionSeconds * 0.125; cost.FunctionSeconds == 0 || math.Abs(cost.GBSeconds-want) > 1e-9 {
		t.Errorf("GB-seconds %v for %v invocation seconds, want %v (128 MiB functions)", cost.GBSeconds, cost.FunctionSeconds, want)
	}
}
