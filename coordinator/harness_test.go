package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// A coordinator over fakes: a two-stage plan (a scan stage of N tasks
// writing two hash partitions, and a stage of two tasks reading them), a
// table of N one-row-group files, and an invoker that runs no query but
// answers like a function would (and lets a test script its behaviour).

type fakePlanner struct{ g plan.Graph }

func (p fakePlanner) Plan(ctx context.Context, sql string) (*plan.Graph, string, error) {
	b, _ := json.Marshal(p.g)
	var g plan.Graph
	_ = json.Unmarshal(b, &g)
	return &g, "fake plan", nil
}

func (p fakePlanner) Format(g *plan.Graph) string { return "fake plan\n" }

var xSchema = plan.Schema{{Name: "x", Type: plan.DataType{ID: plan.Int64}}}

// twoStageGraph: stage 0 scans "t" into 2 hash partitions; stage 1 (the
// result) reads them, one task per partition.
func twoStageGraph() plan.Graph {
	return plan.Graph{
		Stages: []*plan.Stage{
			{ID: 0, Root: &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "t", Columns: []string{"x"}}, Schema: xSchema},
				Output: plan.Partitioning{Kind: plan.PartitionHash, Keys: []int{0}, Count: 2}},
			{ID: 1, Root: &plan.Node{Kind: plan.KindExchange, Stage: 0, Schema: xSchema}, Inputs: []int{0},
				Output: plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}},
		},
		Result: 1, Columns: []string{"x"},
	}
}

type fakeTables struct{ files int }

func (f fakeTables) Layout(ctx context.Context, table string) (*layout.Table, error) {
	lay := &layout.Table{Format: "parquet"}
	for i := 0; i < f.files; i++ {
		lay.Files = append(lay.Files, layout.File{Key: fmt.Sprintf("tables/t/f%05d.parquet", i), Size: 100, RowGroups: []layout.RowGroup{{Rows: 1, Bytes: 100}}})
	}
	return lay, nil
}

// fakeInvoker answers every spec with a result whose output partitions
// are named after the attempt (no objects are written). behave, when set,
// may replace the answer: it returns (result, error, handled).
type fakeInvoker struct {
	parts  int
	bucket objstore.Bucket // when set, the output objects are written (a byte each)
	behave func(ctx context.Context, spec *function.TaskSpec) (*function.TaskResult, error, bool)

	mu    sync.Mutex
	specs []*function.TaskSpec
	calls atomic.Int64
}

func (f *fakeInvoker) Invoke(ctx context.Context, body []byte) ([]byte, error) {
	if function.IsBatch(body) {
		// A packed invocation, as function.Runtime answers it: one call,
		// every member run on its own, a member's failure in its result.
		f.calls.Add(1)
		var b function.Batch
		if err := json.Unmarshal(body, &b); err != nil {
			return nil, err
		}
		out := function.Batch{Version: b.Version, Results: make([]json.RawMessage, len(b.Specs))}
		for i, m := range b.Specs {
			r, err := f.invokeOne(ctx, m)
			if err != nil {
				spec, _ := function.DecodeSpec(m)
				res := &function.TaskResult{Error: err.Error(), Kind: function.ErrTransient}
				if spec != nil {
					res.Job, res.Stage, res.Task, res.Attempt, res.Fence = spec.Job, spec.Stage, spec.Task, spec.Attempt, spec.Fence
				}
				r, _ = json.Marshal(res)
			}
			out.Results[i] = r
		}
		return json.Marshal(&out)
	}
	f.calls.Add(1)
	return f.invokeOne(ctx, body)
}

func (f *fakeInvoker) invokeOne(ctx context.Context, body []byte) ([]byte, error) {
	spec, err := function.DecodeSpec(body)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.specs = append(f.specs, spec)
	f.mu.Unlock()
	if f.bucket != nil {
		for _, p := range okResult(spec, f.parts).Partitions {
			if err := f.bucket.Put(ctx, p.Key, []byte("x")); err != nil {
				return nil, err
			}
		}
	}
	if f.behave != nil {
		if res, err, ok := f.behave(ctx, spec); ok {
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		}
	}
	return json.Marshal(okResult(spec, f.parts))
}

func okResult(spec *function.TaskSpec, parts int) *function.TaskResult {
	res := &function.TaskResult{Job: spec.Job, Stage: spec.Stage, Task: spec.Task, Attempt: spec.Attempt, Fence: spec.Fence}
	n := parts
	if spec.Stage == 1 {
		n = 1
	}
	for p := 0; p < n; p++ {
		res.Partitions = append(res.Partitions, shuffle.PartitionStat{Partition: p, Rows: 1, Bytes: 10,
			Key: shuffle.PartKey(spec.OutputPrefix, p)})
		res.Rows++
		res.Bytes += 10
	}
	return res
}

func (f *fakeInvoker) specsOf(stage, task int) []*function.TaskSpec {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*function.TaskSpec
	for _, s := range f.specs {
		if s.Stage == stage && s.Task == task {
			out = append(out, s)
		}
	}
	return out
}

type fakeEnv struct {
	rdb    redis.UniversalClient
	mr     *miniredis.Miniredis
	bucket *objstore.Mem
	inv    *fakeInvoker
	files  int
}

func newFakeEnv(t testing.TB, files int) *fakeEnv {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	return &fakeEnv{rdb: rdb, mr: mr, bucket: objstore.NewMem("test"), inv: &fakeInvoker{parts: 2}, files: files}
}

func testConfig(owner string) Config {
	cfg := DefaultConfig()
	cfg.Owner = owner
	cfg.Adaptive = false
	cfg.SplitBytes = 1
	cfg.RetryBackoff = time.Millisecond
	cfg.HedgeFactor = 0
	cfg.Concurrency = 8
	return cfg
}

func (e *fakeEnv) coordinator(t testing.TB, cfg Config) *Coordinator {
	c := New(cfg, NewStore(e.rdb), e.bucket, fakePlanner{twoStageGraph()}, fakeTables{e.files}, e.inv, nil)
	t.Cleanup(c.Close)
	return c
}

func waitJob(t testing.TB, c *Coordinator, job string) *JobRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := c.Wait(ctx, job)
	if err != nil {
		t.Fatalf("wait for job %s: %v", job, err)
	}
	return m
}
