package objstore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicedb/sluice/shuffle/objstore"
	"github.com/sluicedb/sluice/shuffle/objstore/objstoretest"
)

// TestOpen: Open is the one factory: it builds each backend from its
// config, refuses an unknown backend and passes the S3 backend's own
// checks on.
func TestOpen(t *testing.T) {
	ctx := context.Background()
	if _, err := objstore.Open(ctx, objstore.Config{Backend: "ftp"}); err == nil || !strings.Contains(err.Error(), "unknown backend") {
		t.Fatalf("unknown backend: %v", err)
	}
	m, err := objstore.Open(ctx, objstore.Config{Backend: objstore.BackendMem, MemName: "x"})
	if err != nil || m.Name() != "mem://x" {
		t.Fatalf("mem: %v %v", m, err)
	}
	s, err := objstore.Open(ctx, objstore.Config{S3: objstore.S3Config{Endpoint: "127.0.0.1:1", Bucket: "bkt"}})
	if err != nil || s.Name() != "s3://bkt" {
		t.Fatalf("s3 (the default backend): %v %v", s, err)
	}
	if _, err := objstore.Open(ctx, objstore.Config{Backend: objstore.BackendS3, S3: objstore.S3Config{Endpoint: "x:1", Bucket: "Bad_Name"}}); err == nil {
		t.Fatal("an invalid bucket name must fail")
	}
	// The capabilities look through wrappers; a backend without them is
	// a no-op.
	if err := objstore.EnsureBucket(ctx, objstore.Observe(m)); err != nil {
		t.Fatal(err)
	}
	if _, ok := objstore.StatsOf(objstore.Observe(m)); ok {
		t.Fatal("the memory bucket counts no requests")
	}
	if _, ok := objstore.StatsOf(objstore.Observe(s)); !ok {
		t.Fatal("StatsOf does not see the S3 client through Observe")
	}
}

// TestObservedAcceptance: the metrics wrapper is a Bucket with every
// guarantee of the one it wraps.
func TestObservedAcceptance(t *testing.T) {
	o := objstore.Observe(objstore.NewMem("observed"))
	o.OnError(func(string) {})
	objstoretest.AcceptanceTest(t, o)
}

// TestObservedReportsFailedRequests: every failed request attempt of the
// S3 backend under an Observed bucket reaches the hook, retries
// included; an operation its caller cancelled is not reported, and an
// unobserved client reports to no one.
func TestObservedReportsFailedRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	raw, err := objstore.Open(context.Background(), objstore.Config{S3: objstore.S3Config{Endpoint: srv.URL, Bucket: "bkt",
		AccessKey: "k", SecretKey: "s", Retry: objstore.RetryPolicy{Attempts: 3, Base: time.Millisecond, Max: time.Millisecond}}})
	if err != nil {
		t.Fatal(err)
	}
	o := objstore.Observe(raw)
	var mu sync.Mutex
	var ops []string
	o.OnError(func(op string) { mu.Lock(); ops = append(ops, op); mu.Unlock() })
	if _, err := o.Get(context.Background(), "k"); err == nil {
		t.Fatal("GET against a failing store succeeded")
	}
	if strings.Join(ops, ",") != "GET,GET,GET" {
		t.Fatalf("hook saw %v, want three failed GET attempts", ops)
	}
	ops = nil
	if _, err := raw.Get(context.Background(), "k"); err == nil || len(ops) != 0 {
		t.Fatalf("the unobserved client reported %v (err %v)", ops, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.Get(ctx, "k"); err == nil || len(ops) != 0 {
		t.Fatalf("a cancelled GET reported %v (err %v)", ops, err)
	}
}
