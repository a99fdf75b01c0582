package function

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// TestHandleBatch runs a Batch through Handle: each member runs as if it
// were invoked alone, results come back in member order, and a bad member
// (an incomplete spec, a nested batch) fails alone; the members share the
// function's memory budget.
func TestHandleBatch(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem("t")
	schema := plan.Schema{{Name: "x", Type: plan.Int64Type}}
	var refs []shuffle.ObjectRef
	for i := 0; i < 6; i++ {
		w := shuffle.NewWriter(mem, shuffle.AttemptPrefix("", "j1", 0, i, 1), schema.Arrow(),
			plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, shuffle.WriterOptions{})
		b := array.NewInt64Builder(memory.DefaultAllocator)
		for r := 0; r <= i; r++ { // object i holds i+1 rows
			b.Append(int64(r))
		}
		col := b.NewArray()
		rec := array.NewRecordBatch(schema.Arrow(), []arrow.Array{col}, int64(i+1))
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
	st := plan.Stage{ID: 1, Root: &plan.Node{Kind: plan.KindExchange, Stage: 0, Schema: schema},
		Output: plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, Inputs: []int{0}}
	body, _ := json.Marshal(st)
	if err := mem.Put(ctx, "jobs/j1/plans/1.json", body); err != nil {
		t.Fatal(err)
	}
	spec := func(task int, objs []shuffle.ObjectRef) json.RawMessage {
		b, err := (&TaskSpec{Version: SpecVersion, Job: "j1", Stage: 1, Task: task, Attempt: 1, PlanKey: "jobs/j1/plans/1.json",
			Inputs: []Input{{Stage: 0, Objects: objs}}, OutputPrefix: shuffle.AttemptPrefix("", "j1", 1, task, 1),
			FunctionMemory: 64 << 20}).Encode()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	nested, _ := json.Marshal(&Batch{Version: SpecVersion, Specs: []json.RawMessage{spec(9, refs)}})
	in, _ := json.Marshal(&Batch{Version: SpecVersion, Specs: []json.RawMessage{
		spec(0, refs[:2]), // 1+2 rows
		json.RawMessage(`{"version":1,"job":"j1"}`), // incomplete
		spec(2, refs[2:]), // 3+4+5+6 rows
		nested,
	}})
	if !IsBatch(in) || IsBatch(spec(0, refs)) {
		t.Fatal("IsBatch does not tell a batch from a spec")
	}
	var out Batch
	if err := json.Unmarshal(NewRuntime(mem, nil, nil).Handle(ctx, in), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 4 {
		t.Fatalf("%d results for 4 members", len(out.Results))
	}
	want := []struct {
		task int
		rows int64
		code string
	}{{0, 3, ""}, {0, 0, plan.CodeBadSpec}, {2, 18, ""}, {0, 0, plan.CodeBadSpec}}
	for i, w := range want {
		var res TaskResult
		if err := json.Unmarshal(out.Results[i], &res); err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
		// The members share the function: its 32 MiB operator budget
		// (half of 64 MiB) runs two of them at once (MinPackShare), each
		// with half of it.
		if w.code == "" && res.MemoryBudget != (64<<20)/OperatorMemoryShare/2 {
			t.Errorf("member %d: budget %d, want half of %d", i, res.MemoryBudget, (64<<20)/OperatorMemoryShare)
		}
		if res.Code != w.code || res.Rows != w.rows || (w.code == "" && (res.Task != w.task || res.Error != "")) {
			t.Errorf("member %d: task %d rows %d code %q error %q; want task %d rows %d code %q",
				i, res.Task, res.Rows, res.Code, res.Error, w.task, w.rows, w.code)
		}
	}
}

// TestBatchSlots: how many members of a pack run at once, and the operator
// budget each gets, follow the function's memory (MinPackShare).
func TestBatchSlots(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem("t")
	schema := plan.Schema{{Name: "x", Type: plan.Int64Type}}
	st := plan.Stage{ID: 1, Root: &plan.Node{Kind: plan.KindValues, Schema: schema, Limit: -1,
		Rows: [][]*plan.Expr{{plan.Literal(plan.Value{I: 1}, plan.Int64Type)}}},
		Output: plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}}
	body, _ := json.Marshal(st)
	if err := mem.Put(ctx, "jobs/j2/plans/1.json", body); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		fnMem   int64
		members int
		budget  int64 // each member's
	}{
		{"big function: all at once", 1 << 30, 4, (1 << 30) / OperatorMemoryShare / 4},
		{"some at once", 64 << 20, 4, (64 << 20) / OperatorMemoryShare / 2},
		{"tiny function: one at a time, whole budget", 512 << 10, 4, (512 << 10) / OperatorMemoryShare},
		{"one member", 64 << 20, 1, (64 << 20) / OperatorMemoryShare},
	}
	for n, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var specs []json.RawMessage
			for i := range c.members {
				b, err := (&TaskSpec{Version: SpecVersion, Job: "j2", Stage: 1, Task: i, Attempt: n + 1, PlanKey: "jobs/j2/plans/1.json",
					OutputPrefix: shuffle.AttemptPrefix("", "j2", 1, i, n+1), FunctionMemory: c.fnMem}).Encode()
				if err != nil {
					t.Fatal(err)
				}
				specs = append(specs, b)
			}
			in, _ := json.Marshal(&Batch{Version: SpecVersion, Specs: specs})
			var out Batch
			if err := json.Unmarshal(NewRuntime(mem, nil, nil).Handle(ctx, in), &out); err != nil {
				t.Fatal(err)
			}
			for i, raw := range out.Results {
				var res TaskResult
				if err := json.Unmarshal(raw, &res); err != nil {
					t.Fatal(err)
				}
				if res.Error != "" || res.Rows != 1 || res.MemoryBudget != c.budget {
					t.Errorf("member %d: rows %d budget %d error %q; want 1 row, budget %d", i, res.Rows, res.MemoryBudget, res.Error, c.budget)
				}
			}
		})
	}
}
