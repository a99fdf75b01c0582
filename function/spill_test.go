package function

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// A task's operators get half its function's memory; a sort over more
// spills into the task's own directory, which is gone when the task ends,
// and the result reports budget, peak and spill. Without spill the same
// task fails with SL104, a user error.
func TestRunSpillsWithinFunctionMemory(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem("t")
	schema := plan.Schema{{Name: "x", Type: plan.Int64Type}}
	var refs []shuffle.ObjectRef
	for i := 0; i < 20; i++ {
		w := shuffle.NewWriter(mem, shuffle.AttemptPrefix("", "j1", 0, i, 1), schema.Arrow(),
			plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, shuffle.WriterOptions{})
		b := array.NewInt64Builder(memory.DefaultAllocator)
		for j := 0; j < 5000; j++ {
			b.Append(int64((j*7919 + i*104729) % 100003))
		}
		col := b.NewArray()
		rec := array.NewRecordBatch(schema.Arrow(), []arrow.Array{col}, 5000)
		if err := w.Write(ctx, rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		col.Release()
		m, err := w.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, m.Refs()...)
	}
	in := &plan.Node{Kind: plan.KindExchange, Stage: 0, Schema: schema}
	st := plan.Stage{ID: 1, Root: &plan.Node{Kind: plan.KindSort, Schema: schema, Limit: -1, Inputs: []*plan.Node{in},
		SortKeys: []plan.SortKey{{Expr: plan.Column(0, "x", plan.Int64Type)}}},
		Output: plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, Inputs: []int{0}}
	body, _ := json.Marshal(st)
	if err := mem.Put(ctx, "jobs/j1/plans/1.json", body); err != nil {
		t.Fatal(err)
	}
	spec := func(attempt int) *TaskSpec {
		return &TaskSpec{Version: SpecVersion, Job: "j1", Stage: 1, Task: 0, Attempt: attempt, PlanKey: "jobs/j1/plans/1.json",
			Inputs: []Input{{Stage: 0, Objects: refs}}, OutputPrefix: shuffle.AttemptPrefix("", "j1", 1, 0, attempt),
			FunctionMemory: 256 << 10}
	}
	dir := t.TempDir()
	rt := NewRuntime(mem, nil, nil)
	rt.SpillDir = dir
	res := rt.Run(ctx, spec(1))
	if res.Error != "" || res.Rows != 100000 {
		t.Fatalf("%d rows, error %q", res.Rows, res.Error)
	}
	if res.MemoryBudget != 128<<10 || res.PeakMemoryBytes == 0 || res.PeakMemoryBytes > 256<<10 {
		t.Fatalf("budget %d, peak %d: want a budget of half the function memory, a peak within it", res.MemoryBudget, res.PeakMemoryBytes)
	}
	if res.SpillBytes == 0 || res.SpillFiles < 2 {
		t.Fatalf("spilled %d bytes in %d files, want sorted runs", res.SpillBytes, res.SpillFiles)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("%d entries left in the spill directory", len(ents))
	}
	rt.SpillDir = "-"
	res = rt.Run(ctx, spec(2))
	if res.Code != plan.CodeMemoryLimit || res.Kind != ErrUser {
		t.Fatalf("without spill: code %q kind %q error %q, want SL104 user", res.Code, res.Kind, res.Error)
	}
}
