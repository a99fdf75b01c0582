package coordinator

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// ipcFile encodes values as a one-column ("x" int64) Arrow IPC file.
func ipcFile(t testing.TB, values ...int64) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues(values, nil)
	col := b.NewArray()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(len(values)))
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// failingBucket fails Get of the keys in fail (after Stat says they are
// fine): an object store going away in the middle of a result stream.
type failingBucket struct {
	*objstore.Mem
	mu   sync.Mutex
	fail map[string]bool
	// requests counts the reads (Get, GetRange, Stat) of objects.
	requests atomic.Int64
}

func (b *failingBucket) Stat(ctx context.Context, key string) (objstore.ObjectInfo, error) {
	b.requests.Add(1)
	return b.Mem.Stat(ctx, key)
}

// read counts a read of key and fails it when key is to fail.
func (b *failingBucket) read(key string) error {
	b.requests.Add(1)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail[key] {
		return errors.New("injected: connection reset by peer")
	}
	return nil
}

func (b *failingBucket) Get(ctx context.Context, key string) ([]byte, error) {
	if err := b.read(key); err != nil {
		return nil, err
	}
	return b.Mem.Get(ctx, key)
}

func (b *failingBucket) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if err := b.read(key); err != nil {
		return nil, err
	}
	return b.Mem.GetRange(ctx, key, off, n)
}

// resultJob runs a job whose result stage (two tasks) writes real Arrow
// objects of the values 10*task+1 and 10*task+2, and returns the API
// server, the coordinator and the job.
func resultJob(t *testing.T, fb *failingBucket, small int64) (*httptest.Server, *Coordinator, string) {
	t.Helper()
	e := newFakeEnv(t, 2)
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		if s.Stage != 1 {
			return nil, nil, false
		}
		data := ipcFile(t, int64(10*s.Task+1), int64(10*s.Task+2))
		key := shuffle.PartKey(s.OutputPrefix, 0)
		if err := fb.Put(ctx, key, data); err != nil {
			return nil, err, true
		}
		res := &function.TaskResult{Job: s.Job, Stage: s.Stage, Task: s.Task, Attempt: s.Attempt, Fence: s.Fence, Rows: 2,
			Bytes: int64(len(data)), Partitions: []shuffle.PartitionStat{{Partition: 0, Rows: 2, Bytes: int64(len(data)), Key: key}}}
		return res, nil, true
	}
	cfg := testConfig("c1")
	cfg.S3Outage = 0
	cfg.SmallResultBytes = small
	c := New(cfg, NewStore(e.rdb), fb, fakePlanner{twoStageGraph()}, fakeTables{e.files}, e.inv, nil)
	t.Cleanup(c.Close)
	job, err := c.Submit(context.Background(), "select", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := waitJob(t, c, job); m.State != StateSucceeded {
		t.Fatalf("job %s: %v", m.State, m.Error)
	}
	srv := httptest.NewServer(NewAPI(c).Handler())
	t.Cleanup(srv.Close)
	return srv, c, job
}

// TestResultNeverShort: a result that cannot be read completely is an
// error, whether the fault is seen before the answer starts (a missing
// object: 503) or in the middle of the stream (the connection is cut, and
// the client fails); never a 200 with fewer rows.
func TestResultNeverShort(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		small int64 // Config.SmallResultBytes: -1 streams from the bucket, 1 MiB fetches these results first
		fault func(fb *failingBucket, refs []shuffle.ObjectRef)
		want  string // "" : the whole answer
	}{
		{"whole", -1, func(*failingBucket, []shuffle.ObjectRef) {}, ""},
		{"whole, fetched first", 1 << 20, func(*failingBucket, []shuffle.ObjectRef) {}, ""},
		{"missing object", -1, func(fb *failingBucket, refs []shuffle.ObjectRef) { _ = fb.Delete(ctx, refs[1].Key) }, "cannot be read"},
		{"missing object, fetched first", 1 << 20, func(fb *failingBucket, refs []shuffle.ObjectRef) { _ = fb.Delete(ctx, refs[1].Key) }, "cannot be read"},
		{"changed object", -1, func(fb *failingBucket, refs []shuffle.ObjectRef) { _ = fb.Put(ctx, refs[0].Key, []byte("short")) }, "cannot be read"},
		{"changed object, fetched first", 1 << 20, func(fb *failingBucket, refs []shuffle.ObjectRef) { _ = fb.Put(ctx, refs[0].Key, []byte("short")) }, "cannot be read"},
		{"longer object, fetched first", 1 << 20, func(fb *failingBucket, refs []shuffle.ObjectRef) {
			body, _ := fb.Get(ctx, refs[0].Key)
			_ = fb.Put(ctx, refs[0].Key, append(body, 0))
		}, "cannot be read"},
		{"read fails mid-stream", -1, func(fb *failingBucket, refs []shuffle.ObjectRef) { fb.fail[refs[1].Key] = true }, "EOF|result stream"},
		{"read fails, fetched first", 1 << 20, func(fb *failingBucket, refs []shuffle.ObjectRef) { fb.fail[refs[1].Key] = true }, "cannot be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fb := &failingBucket{Mem: objstore.NewMem("test"), fail: map[string]bool{}}
			srv, c, job := resultJob(t, fb, tc.small)
			refs, _, err := c.store.ResultObjects(ctx, job)
			if err != nil || len(refs) != 2 {
				t.Fatalf("result objects %v: %v", refs, err)
			}
			tc.fault(fb, refs)
			fb.requests.Store(0)
			_, recs, err := NewClient(srv.URL, "").Result(ctx, job)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				// Fetched first: one read per object; else a check and
				// a read per object (whole objects here).
				want := int64(2 * len(refs))
				if tc.small > 0 {
					want = int64(len(refs))
				}
				if n := fb.requests.Load(); n != want {
					t.Fatalf("%d object reads, want %d", n, want)
				}
				var got []int64
				for _, r := range recs {
					got = append(got, r.Column(0).(*array.Int64).Int64Values()...)
				}
				if want := []int64{1, 2, 11, 12}; !equalInts(got, want) {
					t.Fatalf("rows %v, want %v", got, want)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %d batches and no error, want an error", len(recs))
			}
			if !containsAny(err.Error(), strings.Split(tc.want, "|")) {
				t.Fatalf("error %q, want it to mention %q", err, tc.want)
			}
		})
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestClientTruncatedStream: a stream that ends cleanly at a message
// boundary but without the end-of-stream marker is not an answer.
func TestClientTruncatedStream(t *testing.T) {
	full := func(w http.ResponseWriter, eos bool) {
		schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.AppendValues([]int64{1, 2, 3}, nil)
		rec := array.NewRecordBatch(schema, []arrow.Array{b.NewArray()}, 3)
		wr := ipc.NewWriter(w, ipc.WithSchema(schema))
		_ = wr.Write(rec)
		if eos {
			_ = wr.Close()
		}
	}
	for _, eos := range []bool{true, false} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { full(w, eos) }))
		_, recs, err := NewClient(srv.URL, "").Result(context.Background(), "j1")
		srv.Close()
		switch {
		case eos && (err != nil || len(recs) != 1):
			t.Fatalf("complete stream: %d batches, %v", len(recs), err)
		case !eos && !errors.Is(err, ErrTruncatedResult):
			t.Fatalf("stream without EOS: %d batches, err %v, want ErrTruncatedResult", len(recs), err)
		}
	}
}
