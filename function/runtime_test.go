package function

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// slowBucket delays every read, like a slow object store.
type slowBucket struct {
	objstore.Bucket
	delay time.Duration
}

func (b slowBucket) Get(ctx context.Context, key string) ([]byte, error) {
	select {
	case <-time.After(b.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return b.Bucket.Get(ctx, key)
}

type cancelAfter struct{ polls atomic.Int64 }

func (c *cancelAfter) Cancelled(ctx context.Context, job string) (bool, error) {
	return c.polls.Add(1) >= 2, nil
}
func (c *cancelAfter) AddRows(ctx context.Context, key string, n int64) (int64, error) { return 0, nil }

// A cancelled job stops a running task even while it is stuck reading its
// inputs (not only between output batches): the task reports cancelled.
func TestRunStopsWhenJobCancelled(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem("t")
	schema := plan.Schema{{Name: "x", Type: plan.Int64Type}}
	// An upstream stage's output: 50 objects of one batch each.
	var refs []shuffle.ObjectRef
	for i := 0; i < 50; i++ {
		w := shuffle.NewWriter(mem, shuffle.AttemptPrefix("", "j1", 0, i, 1), schema.Arrow(),
			plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}, shuffle.WriterOptions{})
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.AppendValues([]int64{int64(i)}, nil)
		col := b.NewArray()
		rec := array.NewRecordBatch(schema.Arrow(), []arrow.Array{col}, 1)
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
	sig := &cancelAfter{}
	rt := NewRuntime(slowBucket{mem, 50 * time.Millisecond}, sig, nil)
	rt.CancelPoll = 10 * time.Millisecond
	began := time.Now()
	res := rt.Run(ctx, &TaskSpec{Version: SpecVersion, Job: "j1", Stage: 1, Task: 0, Attempt: 1, PlanKey: "jobs/j1/plans/1.json",
		Inputs: []Input{{Stage: 0, Objects: refs}}, OutputPrefix: shuffle.AttemptPrefix("", "j1", 1, 0, 1)})
	if res.Kind != ErrCancelled {
		t.Fatalf("result: kind %q error %q, want cancelled", res.Kind, res.Error)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Logf("took %v (reading everything takes 2.5s)", took)
	}
	// Without a cancel, the same task reads everything.
	rt = NewRuntime(mem, nil, nil)
	res = rt.Run(ctx, &TaskSpec{Version: SpecVersion, Job: "j1", Stage: 1, Task: 0, Attempt: 2, PlanKey: "jobs/j1/plans/1.json",
		Inputs: []Input{{Stage: 0, Objects: refs}}, OutputPrefix: shuffle.AttemptPrefix("", "j1", 1, 0, 2)})
	if res.Error != "" || res.Rows != 50 {
		t.Fatalf("uncancelled run: %d rows, error %q", res.Rows, res.Error)
	}
}

func TestPrefetchAhead(t *testing.T) {
	for _, c := range []struct{ budget, want int64 }{
		{256 << 20, 48 << 20}, // a 512 MiB function: the default window
		{64 << 20, 16 << 20},  // a 128 MiB function: a quarter of its operators' share
		{1 << 20, 8 << 20},    // tiny budgets still read one request ahead
	} {
		if got := prefetchAhead(c.budget); got != c.want {
			t.Errorf("prefetchAhead(%d) = %d, want %d", c.budget, got, c.want)
		}
	}
}

// TestFileCacheFor: a function process's range cache is an eighth of its
// memory, DefaultFileCache when the memory is not known, and
// SLUICE_FILE_CACHE (bytes, 0 off) when set; anything else in it is an
// error naming the variable.
func TestFileCacheFor(t *testing.T) {
	cases := []struct {
		name    string
		memory  int64
		env     string
		want    int64
		wantErr bool
	}{
		{"an eighth of the memory", 1 << 30, "", 128 << 20, false},
		{"memory not known", 0, "", DefaultFileCache, false},
		{"set", 1 << 30, "1000", 1000, false},
		{"off", 1 << 30, "0", 0, false},
		{"not a number", 1 << 30, "64MiB", 0, true},
		{"negative", 1 << 30, "-1", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := FileCacheFor(c.memory, func(k string) string {
				if k == "SLUICE_FILE_CACHE" {
					return c.env
				}
				return ""
			})
			if c.wantErr {
				if err == nil || !strings.Contains(err.Error(), "SLUICE_FILE_CACHE") {
					t.Fatalf("FileCacheFor = %d, %v; want an error naming SLUICE_FILE_CACHE", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("FileCacheFor = %d, %v; want %d", got, err, c.want)
			}
		})
	}
}
