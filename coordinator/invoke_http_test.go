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

// hangable is a function endpoint that can be made to hang (stop
// answering /invoke and /healthz, like a SIGSTOPped process).
type hangable struct {
	srv   *httptest.Server
	hung  atomic.Bool
	calls atomic.Int64
	tasks chan string
}

func newHangable(t *testing.T) *hangable {
	h := &hangable{tasks: make(chan string, 100)}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for h.hung.Load() {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
		if r.URL.Path == "/healthz" {
			_, _ = io.WriteString(w, "ok\n")
			return
		}
		h.calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		echoResult(w, body)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// TestHTTPInvokerEjectsHungEndpoint: a hung endpoint is ejected after
// failed health probes; its request in flight is abandoned at once (not at
// the task deadline), new requests avoid it, and it is used again once a
// probe succeeds.
func TestHTTPInvokerEjectsHungEndpoint(t *testing.T) {
	a, b := newHangable(t), newHangable(t)
	inv := NewHTTPInvoker([]string{a.srv.URL, b.srv.URL}, 4)
	inv.HealthInterval, inv.HealthTimeout, inv.EjectAfter = 50*time.Millisecond, 100*time.Millisecond, 2
	defer inv.Close()
	a.hung.Store(true)
	ctx := context.Background()
	began := time.Now()
	var ejected int
	for i := 0; i < 6; i++ {
		_, err := inv.Invoke(ctx, testSpec(t, 0))
		switch {
		case errors.Is(err, ErrEndpointEjected):
			ejected++
		case err != nil:
			t.Fatal(err)
		}
	}
	if ejected != 1 || time.Since(began) > 5*time.Second {
		t.Fatalf("%d requests abandoned in %v, want 1 (the one sent before the ejection)", ejected, time.Since(began))
	}
	if a.calls.Load() != 0 || b.calls.Load() != 5 {
		t.Fatalf("calls a=%d b=%d, want 0 and 5", a.calls.Load(), b.calls.Load())
	}
	a.hung.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for a.calls.Load() == 0 && time.Now().Before(deadline) {
		if _, err := inv.Invoke(ctx, testSpec(t, 0)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if a.calls.Load() == 0 {
		t.Fatal("the endpoint did not come back after it answered probes again")
	}
}

// TestHTTPInvokerDuplicateElsewhere: a second request of a task with one in
// flight (a hedged duplicate) goes to another endpoint.
func TestHTTPInvokerDuplicateElsewhere(t *testing.T) {
	release := make(chan struct{})
	got := make(chan string, 8)
	mk := func(name string) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/healthz" {
				return
			}
			got <- name
			body, _ := io.ReadAll(r.Body)
			<-release
			echoResult(w, body)
		}))
		t.Cleanup(s.Close)
		return s
	}
	a, b := mk("a"), mk("b")
	inv := NewHTTPInvoker([]string{a.URL, b.URL}, 4)
	defer inv.Close()
	for round := 0; round < 3; round++ {
		ctx := withTask(context.Background(), "j1/2/3")
		errc := make(chan error, 2)
		var first string
		for i := 0; i < 2; i++ {
			go func() { _, err := inv.Invoke(ctx, testSpec(t, 0)); errc <- err }()
			if i == 0 {
				first = <-got // the first is in flight before the duplicate starts
			}
		}
		var second string
		select {
		case second = <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("the duplicate was not sent")
		}
		release <- struct{}{}
		release <- struct{}{}
		for i := 0; i < 2; i++ {
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
		}
		if second == first {
			t.Fatalf("round %d: the duplicate went to endpoint %s too", round, first)
		}
	}
}

// TestHTTPInvokerSigns: with a Secret, requests carry a signature the
// function's verification accepts.
func TestHTTPInvokerSigns(t *testing.T) {
	secret := []byte("shared-secret")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := function.VerifyRequest(r.Header, secret, body, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		echoResult(w, body)
	}))
	defer srv.Close()
	inv := NewHTTPInvoker([]string{srv.URL}, 1)
	defer inv.Close()
	if _, err := inv.Invoke(context.Background(), testSpec(t, 0)); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("unsigned: %v, want HTTP 401", err)
	}
	inv.Secret = secret
	if out, err := inv.Invoke(context.Background(), testSpec(t, 0)); err != nil || !strings.Contains(string(out), `"job":"j1"`) {
		t.Fatalf("signed: %s %v", out, err)
	}
}
