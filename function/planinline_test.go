package function

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// valuesStage is a one-task stage whose fragment emits the rows 1..n of x.
func valuesStage(n int) []byte {
	schema := plan.Schema{{Name: "x", Type: plan.Int64Type}}
	var rows [][]*plan.Expr
	for i := 1; i <= n; i++ {
		rows = append(rows, []*plan.Expr{plan.Literal(plan.Value{I: int64(i)}, plan.Int64Type)})
	}
	st := plan.Stage{ID: 1, Root: &plan.Node{Kind: plan.KindValues, Schema: schema, Limit: -1, Rows: rows},
		Output: plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}}
	body, _ := json.Marshal(st)
	return body
}

// countingGets counts the GETs of one key.
type countingGets struct {
	objstore.Bucket
	key  string
	gets int
}

func (c *countingGets) Get(ctx context.Context, key string) ([]byte, error) {
	if key == c.key {
		c.gets++
	}
	return c.Bucket.Get(ctx, key)
}

// TestInlinePlan: a spec carrying its fragment runs it without reading
// the plan object (absent here), the runtime's cache serves the next
// attempt of the same key, a spec without the fragment reads the object,
// and a replayed attempt with its fragment inline is still refused before
// it writes anything.
func TestInlinePlan(t *testing.T) {
	ctx := context.Background()
	const key = "p/jobs/j1/plans/1-r1-f1.json"
	spec := func(attempt int, inline []byte) []byte {
		b, err := (&TaskSpec{Version: SpecVersion, Job: "j1", Stage: 1, Task: 0, Attempt: attempt, Prefix: "p",
			PlanKey: key, Plan: inline, OutputPrefix: shuffle.AttemptPrefix("p", "j1", 1, 0, attempt)}).Encode()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	run := func(rt *Runtime, body []byte) TaskResult {
		t.Helper()
		var res TaskResult
		if err := json.Unmarshal(rt.Handle(ctx, body), &res); err != nil {
			t.Fatal(err)
		}
		return res
	}

	t.Run("inline, no plan object", func(t *testing.T) {
		b := &countingGets{Bucket: objstore.NewMem("b"), key: key}
		rt := NewRuntime(b, nil, nil)
		if res := run(rt, spec(1, valuesStage(3))); res.Error != "" || res.Rows != 3 {
			t.Fatalf("rows %d error %q, want 3 rows", res.Rows, res.Error)
		}
		if res := run(rt, spec(2, nil)); res.Error != "" || res.Rows != 3 { // the cache, by key
			t.Fatalf("second attempt: rows %d error %q, want 3 rows", res.Rows, res.Error)
		}
		if b.gets != 0 {
			t.Fatalf("%d GETs of the plan object, want none", b.gets)
		}
	})
	t.Run("by key", func(t *testing.T) {
		b := &countingGets{Bucket: objstore.NewMem("b"), key: key}
		if err := b.Put(ctx, key, valuesStage(2)); err != nil {
			t.Fatal(err)
		}
		rt := NewRuntime(b, nil, nil)
		if res := run(rt, spec(1, nil)); res.Error != "" || res.Rows != 2 {
			t.Fatalf("rows %d error %q, want 2 rows", res.Rows, res.Error)
		}
		if b.gets != 1 {
			t.Fatalf("%d GETs of the plan object, want 1", b.gets)
		}
	})
	t.Run("replayed attempt refused", func(t *testing.T) {
		b := objstore.NewMem("b")
		prefix := shuffle.AttemptPrefix("p", "j1", 1, 0, 1)
		manifest := []byte(`{"manifest":1}`)
		if err := b.Put(ctx, shuffle.ManifestKey(prefix), manifest); err != nil {
			t.Fatal(err)
		}
		res := run(NewRuntime(b, nil, nil), spec(1, valuesStage(3)))
		if res.Kind != ErrTransient || !strings.Contains(res.Error, ErrAttemptWritten.Error()) {
			t.Fatalf("result %+v, want the attempt refused", res)
		}
		if _, err := b.Stat(ctx, shuffle.DataKey(prefix)); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("the refused attempt wrote its data object (%v)", err)
		}
		if got, _ := b.Get(ctx, shuffle.ManifestKey(prefix)); string(got) != string(manifest) {
			t.Fatalf("manifest changed: %s", got)
		}
	})
}

// TestPlanCacheBounded: a runtime keeps at most maxCachedPlans fragments.
func TestPlanCacheBounded(t *testing.T) {
	rt := NewRuntime(objstore.NewMem("b"), nil, nil)
	for i := range maxCachedPlans + 50 {
		s := &TaskSpec{PlanKey: fmt.Sprintf("p/jobs/j%d/plans/1.json", i), Plan: valuesStage(1)}
		if _, err := rt.stage(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(rt.plans); n > maxCachedPlans {
		t.Fatalf("%d fragments cached, want at most %d", n, maxCachedPlans)
	}
}
