package coordinator

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

func TestHTTPInvokerSpecByReference(t *testing.T) {
	bucket := objstore.NewMem("b")
	var refs atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if key, ok := function.IsSpecRef(body); ok {
			refs.Add(1)
			var err error
			if body, err = bucket.Get(r.Context(), key); err != nil {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
		}
		echoResult(w, body)
	}))
	defer srv.Close()
	inv := NewHTTPInvoker([]string{srv.URL}, 2)
	inv.Bucket, inv.PayloadLimit = bucket, 1000
	for _, pad := range []int{0, 2000} {
		out, err := inv.Invoke(context.Background(), testSpec(t, pad))
		if err != nil || !strings.Contains(string(out), `"job":"j1"`) {
			t.Fatalf("%s %v", out, err)
		}
	}
	if refs.Load() != 1 {
		t.Fatalf("%d specs by reference, want 1", refs.Load())
	}
	if objs, _ := bucket.List(context.Background(), "pre/jobs/j1/specs/"); len(objs) != 0 {
		t.Fatalf("spec objects left: %v", objs)
	}
}

func TestHTTPInvokerTimeout(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer srv.Close()
	inv := NewHTTPInvoker([]string{srv.URL}, 1)
	inv.Timeout = 50 * time.Millisecond
	_, err := inv.Invoke(context.Background(), testSpec(t, 0))
	if !errors.Is(err, ErrInvokeTimeout) || calls.Load() != 1 {
		t.Fatalf("err %v after %d calls", err, calls.Load())
	}
}
