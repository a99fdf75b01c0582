package function

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicedb/sluice/shuffle/objstore"
)

// gatedBucket holds every Get of the spec until gate closes, counting the
// Gets in flight.
type gatedBucket struct {
	*objstore.Mem
	gate          chan struct{}
	inflight, max atomic.Int64
}

func (g *gatedBucket) Get(ctx context.Context, key string) ([]byte, error) {
	if key == "jobs/j1/specs/x.json" {
		n := g.inflight.Add(1)
		for m := g.max.Load(); n > m && !g.max.CompareAndSwap(m, n); m = g.max.Load() {
		}
		<-g.gate
		defer g.inflight.Add(-1)
	}
	return g.Mem.Get(ctx, key)
}

// TestHTTPHandlerConcurrency: an HTTP function runs at most Concurrency
// tasks at once; the other invocations wait for a slot and then run.
func TestHTTPHandlerConcurrency(t *testing.T) {
	ctx := context.Background()
	b := &gatedBucket{Mem: objstore.NewMem("t"), gate: make(chan struct{})}
	spec, _ := testSpec().Encode()
	_ = b.Put(ctx, "jobs/j1/specs/x.json", spec)
	srv := httptest.NewServer(NewHTTPHandler(NewRuntime(b, nil, nil), HTTPOptions{Concurrency: 2}))
	defer srv.Close()
	const n = 5
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			resp, err := http.Post(srv.URL+"/invoke", "application/json", bytes.NewReader([]byte(`{"spec_key":"jobs/j1/specs/x.json"}`)))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}(i)
	}
	for b.inflight.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // let the other invocations arrive
	if m := b.max.Load(); m != 2 {
		t.Errorf("%d tasks ran at once, want 2", m)
	}
	close(b.gate)
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("invocation %d answered %d", i, c)
		}
	}
}
