package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	minio "github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/sluicedb/sluice/local/minioserver"
	"github.com/sluicedb/sluice/shuffle/objstore"
	"github.com/sluicedb/sluice/shuffle/objstore/objstoretest"
)

var server *minioserver.Server

func TestMain(m *testing.M) {
	ctx := context.Background()
	s, err := minioserver.Start(ctx, minioserver.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "objstore tests need a real MinIO server: %v\n", err)
		os.Exit(1)
	}
	server = s
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "MinIO log tail:\n%s\n", s.Logs())
	}
	s.Stop()
	os.Exit(code)
}

func newBucket(t testing.TB, cfg objstore.S3Config) *objstore.S3 {
	t.Helper()
	if cfg.Endpoint == "" {
		cfg.Endpoint = server.Endpoint
	}
	if cfg.AccessKey == "" {
		cfg.AccessKey, cfg.SecretKey = server.AccessKey, server.SecretKey
	}
	if cfg.Bucket == "" {
		cfg.Bucket = "test-" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
		if len(cfg.Bucket) > 63 {
			cfg.Bucket = cfg.Bucket[:63]
		}
		cfg.Bucket = strings.TrimRight(cfg.Bucket, "-")
	}
	b, err := objstore.NewS3(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.EnsureBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAcceptanceS3(t *testing.T) {
	// A 5 MiB part size makes the acceptance test's large object a
	// multipart upload.
	b := newBucket(t, objstore.S3Config{PartSize: 5 << 20, StreamPartSize: 5 << 20})
	objstoretest.AcceptanceTest(t, b)
	st := b.Stats()
	if st.Get == 0 || st.Put == 0 || st.List == 0 || st.Delete == 0 || st.Head == 0 || st.BytesRead == 0 || st.BytesWritten == 0 {
		t.Errorf("request stats not counted: %v", st)
	}
	t.Logf("requests: %v", st)
}

func TestAcceptanceMem(t *testing.T) {
	objstoretest.AcceptanceTest(t, objstore.NewMem("test"))
}

func TestEnsureBucketIdempotent(t *testing.T) {
	b := newBucket(t, objstore.S3Config{Bucket: "ensure-twice"})
	if err := b.EnsureBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b.Name() != "s3://ensure-twice" {
		t.Fatalf("Name = %q", b.Name())
	}
}

func TestValidateKey(t *testing.T) {
	cases := []struct {
		key    string
		ok     bool
		prefix bool // also valid as a prefix
	}{
		{"jobs/q1/stage-0/task-1/a0/part-3.arrow", true, true},
		{"a", true, true},
		{"a b/c=d+e", true, true},
		{"ünïcode/ok", true, true},
		{"", false, true},
		{"dir/", false, true},
		{"/abs", false, false},
		{"a/../b", false, false},
		{"a..b", false, false},
		{"a//b", false, false},
		{"tab\there", false, false},
		{"nul\x00", false, false},
		{"del\x7f", false, false},
		{"c1\u0085", false, false},
		{"bad utf8 \xff", false, false},
		{strings.Repeat("k", 1025), false, false},
	}
	for _, c := range cases {
		err := objstore.ValidateKey(c.key)
		if (err == nil) != c.ok {
			t.Errorf("ValidateKey(%q) = %v, want ok=%v", c.key, err, c.ok)
		}
		if err != nil {
			var ke *objstore.KeyError
			if !errors.Is(err, objstore.ErrInvalidKey) || !errors.As(err, &ke) || ke.Key != c.key {
				t.Errorf("ValidateKey(%q) error %v is not a *KeyError", c.key, err)
			}
		}
		if perr := objstore.ValidatePrefix(c.key); (perr == nil) != c.prefix {
			t.Errorf("ValidatePrefix(%q) = %v, want ok=%v", c.key, perr, c.prefix)
		}
	}
}

func TestUnreachableEndpoint(t *testing.T) {
	cases := []struct {
		name     string
		endpoint string
	}{
		{"refused", "127.0.0.1:1"},
		{"url form", "http://127.0.0.1:1"},
		{"silent server", silentServer(t)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := objstore.NewS3(context.Background(), objstore.S3Config{
				Endpoint: c.endpoint, AccessKey: "x", SecretKey: "y", Bucket: "bucket",
				DialTimeout: 500 * time.Millisecond, ResponseHeaderTimeout: 300 * time.Millisecond,
				Retry: objstore.RetryPolicy{Attempts: 3, Base: 10 * time.Millisecond},
			})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = b.Get(context.Background(), "some/key")
			took := time.Since(start)
			if err == nil {
				t.Fatal("Get from an unreachable endpoint succeeded")
			}
			host := strings.TrimPrefix(c.endpoint, "http://")
			if !strings.Contains(err.Error(), host) {
				t.Errorf("error does not name the endpoint %s: %v", host, err)
			}
			if errors.Is(err, objstore.ErrNotFound) {
				t.Errorf("unreachable endpoint reported as not found: %v", err)
			}
			if took > 5*time.Second {
				t.Errorf("took %v to fail", took)
			}
			t.Logf("failed in %v: %v", took, err)
		})
	}
}

// silentServer accepts connections and never answers.
func silentServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String()
}

// faultProxy forwards to the real MinIO server and answers the first
// `fail` requests matching match with the given S3 error instead.
type faultProxy struct {
	srv     *httptest.Server
	fail    atomic.Int64
	status  int
	code    string
	matched atomic.Int64
	match   func(*http.Request) bool
}

func newFaultProxy(t *testing.T, status int, code string, match func(*http.Request) bool) *faultProxy {
	target, _ := url.Parse(server.URL())
	rp := httputil.NewSingleHostReverseProxy(target)
	fp := &faultProxy{status: status, code: code, match: match}
	fp.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fp.match(r) {
			fp.matched.Add(1)
			if fp.fail.Add(-1) >= 0 {
				if fp.code == "" {
					// No body, as MinIO answers 499 when it shuts down
					// under a request.
					w.WriteHeader(fp.status)
					return
				}
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(fp.status)
				fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected</Message></Error>`, fp.code)
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(fp.srv.Close)
	return fp
}

func TestRetries(t *testing.T) {
	// Create the bucket directly on MinIO, then go through the proxy.
	direct := newBucket(t, objstore.S3Config{Bucket: "retries"})
	if err := direct.Put(context.Background(), "k", []byte("value")); err != nil {
		t.Fatal(err)
	}
	isGet := func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Path == "/retries/k" }
	policy := objstore.RetryPolicy{Attempts: 4, Base: 5 * time.Millisecond, Max: 20 * time.Millisecond}
	cases := []struct {
		name       string
		status     int
		code       string
		fail       int64
		wantErr    bool
		wantTries  int64
		errContain string
	}{
		{"slowdown recovers", 503, "SlowDown", 2, false, 3, ""},
		{"internal error recovers", 500, "InternalError", 3, false, 4, ""},
		// MinIO answers 499 (client closed request) to requests that
		// were in flight when it shut down (CI saw it on a plan upload
		// while MinIO restarted).
		{"499 of a restarting server recovers", 499, "", 1, false, 2, ""},
		{"slowdown bounded", 503, "SlowDown", 100, true, 4, "SlowDown"},
		{"access denied not retried", 403, "AccessDenied", 100, true, 1, "AccessDenied"},
		{"bad request not retried", 400, "InvalidRequest", 100, true, 1, "InvalidRequest"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fp := newFaultProxy(t, c.status, c.code, isGet)
			fp.fail.Store(c.fail)
			b := newBucket(t, objstore.S3Config{Bucket: "retries", Endpoint: fp.srv.URL, Retry: policy})
			got, err := b.Get(context.Background(), "k")
			if (err != nil) != c.wantErr {
				t.Fatalf("Get = %q, %v; wantErr %v", got, err, c.wantErr)
			}
			if err == nil && string(got) != "value" {
				t.Fatalf("Get = %q", got)
			}
			if err != nil && !strings.Contains(err.Error(), c.errContain) {
				t.Errorf("error %v does not mention %s", err, c.errContain)
			}
			if n := fp.matched.Load(); n != c.wantTries {
				t.Errorf("%d attempts, want %d", n, c.wantTries)
			}
		})
	}
	t.Run("put retried", func(t *testing.T) {
		fp := newFaultProxy(t, 503, "SlowDown", func(r *http.Request) bool { return r.Method == http.MethodPut })
		fp.fail.Store(1)
		b := newBucket(t, objstore.S3Config{Bucket: "retries", Endpoint: fp.srv.URL, Retry: policy})
		if err := b.Put(context.Background(), "put-retried", []byte("abc")); err != nil {
			t.Fatal(err)
		}
		if got, err := direct.Get(context.Background(), "put-retried"); err != nil || string(got) != "abc" {
			t.Fatalf("after retried Put: %q, %v", got, err)
		}
	})
	t.Run("server restart", func(t *testing.T) {
		// MinIO itself going away mid-run: requests fail clearly while it
		// is down and work again after it restarts.
		b := newBucket(t, objstore.S3Config{Bucket: "retries", Retry: policy, DialTimeout: time.Second})
		server.Kill()
		_, err := b.Get(context.Background(), "k")
		if err == nil || !strings.Contains(err.Error(), server.Endpoint) {
			t.Errorf("Get while down = %v, want an error naming %s", err, server.Endpoint)
		}
		if err := server.Restart(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got, err := b.Get(context.Background(), "k"); err != nil || string(got) != "value" {
			t.Fatalf("Get after restart = %q, %v", got, err)
		}
	})
}

func TestNotFoundIsNotRetried(t *testing.T) {
	fp := newFaultProxy(t, 0, "", func(r *http.Request) bool { return r.Method == http.MethodGet })
	b := newBucket(t, objstore.S3Config{Bucket: "notfound", Endpoint: fp.srv.URL})
	_, err := b.Get(context.Background(), "missing")
	if !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
	if n := fp.matched.Load(); n != 1 {
		t.Fatalf("%d GETs for a missing key, want 1", n)
	}
}

func TestS3ConfigFromEnv(t *testing.T) {
	t.Setenv("SLUICE_S3_ENDPOINT", "localhost:9000")
	t.Setenv("AWS_ACCESS_KEY_ID", "ak")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "sk")
	t.Setenv("SLUICE_S3_BUCKET", "bkt")
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("SLUICE_S3_SSL", "")
	cfg := objstore.S3ConfigFromEnv()
	if cfg.Endpoint != "localhost:9000" || cfg.AccessKey != "ak" || cfg.SecretKey != "sk" ||
		cfg.Bucket != "bkt" || cfg.Region != "eu-west-1" || cfg.UseSSL != nil {
		t.Fatalf("cfg = %+v", cfg)
	}
	t.Setenv("SLUICE_S3_SSL", "true")
	if ssl := objstore.S3ConfigFromEnv().UseSSL; ssl == nil || !*ssl {
		t.Fatal("SLUICE_S3_SSL=true not honoured")
	}
	if _, err := objstore.NewS3(context.Background(), objstore.S3Config{Endpoint: "x:1"}); err == nil {
		t.Fatal("NewS3 without a bucket succeeded")
	}
	if _, err := objstore.NewS3(context.Background(), objstore.S3Config{Endpoint: "x:1", Bucket: "Bad_Name"}); err == nil {
		t.Fatal("NewS3 with an invalid bucket name succeeded")
	}
	if _, err := objstore.NewS3(context.Background(), objstore.S3Config{Endpoint: "ftp://x:1", Bucket: "bkt"}); err == nil {
		t.Fatal("NewS3 with an ftp endpoint succeeded")
	}
}

// TestResolveEndpoint: an endpoint means the same with or without its
// scheme wherever it is given: a scheme decides, else SLUICE_S3_SSL when
// set, else plain HTTP on loopback hosts and TLS elsewhere.
func TestResolveEndpoint(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		in     string
		ssl    *bool
		host   string
		secure bool
		bad    bool
	}{
		{in: "127.0.0.1:9000", host: "127.0.0.1:9000"},
		{in: "http://127.0.0.1:9000", host: "127.0.0.1:9000"},
		{in: "http://127.0.0.1:9000/", host: "127.0.0.1:9000"},
		{in: "localhost:9000", host: "localhost:9000"},
		{in: "minio.localhost:9000", host: "minio.localhost:9000"},
		{in: "127.1.2.3", host: "127.1.2.3"},
		{in: "[::1]:9000", host: "[::1]:9000"},
		{in: "https://127.0.0.1:9000", host: "127.0.0.1:9000", secure: true},
		{in: "127.0.0.1:9000", ssl: &yes, host: "127.0.0.1:9000", secure: true},
		{in: "http://127.0.0.1:9000", ssl: &yes, host: "127.0.0.1:9000"}, // the scheme decides
		{in: "minio.example.com:9000", host: "minio.example.com:9000", secure: true},
		{in: "10.0.0.5:9000", host: "10.0.0.5:9000", secure: true},
		{in: "minio:9000", ssl: &no, host: "minio:9000"},
		{in: "http://minio:9000", host: "minio:9000"},
		{in: "s3.eu-west-1.amazonaws.com", host: "s3.eu-west-1.amazonaws.com", secure: true},
		{in: "", host: "s3.amazonaws.com", secure: true},
		{in: "ftp://x:1", bad: true},
		{in: "http://x:1/path", bad: true},
		{in: "x:1/path", bad: true},
		{in: "http://", bad: true},
	} {
		host, secure, err := objstore.ResolveEndpoint(c.in, c.ssl)
		if c.bad {
			if err == nil {
				t.Errorf("%q: no error", c.in)
			}
			continue
		}
		if err != nil || host != c.host || secure != c.secure {
			t.Errorf("%q (ssl %v): %q %v %v, want %q %v", c.in, c.ssl, host, secure, err, c.host, c.secure)
		}
	}
}

// TestStreamedUploadS3: an S3 upload sends its parts while bytes are still
// appended (before Commit), stores the object only at Commit, and an
// aborted upload leaves neither an object nor an incomplete multipart
// upload on the store.
func TestStreamedUploadS3(t *testing.T) {
	ctx := context.Background()
	b := newBucket(t, objstore.S3Config{Bucket: "test-streamed-upload", StreamPartSize: 5 << 20})
	cl, err := minio.New(strings.TrimPrefix(server.Endpoint, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(server.AccessKey, server.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 12<<20)
	for i := range data {
		data[i] = byte(i * 7 / 13)
	}
	for _, commit := range []bool{true, false} {
		key := fmt.Sprintf("streamed/commit-%v", commit)
		before := b.Stats()
		up, err := objstore.StartUpload(ctx, b, key)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < len(data); off += 1 << 20 {
			if err := up.Append(strings.NewReader(string(data[off:off+1<<20])), 1<<20); err != nil {
				t.Fatal(err)
			}
		}
		// Two full parts (10 MiB) leave before Commit.
		deadline := time.Now().Add(10 * time.Second)
		for b.Stats().Sub(before).BytesWritten < 10<<20 {
			if time.Now().After(deadline) {
				t.Fatalf("commit=%v: only %d bytes sent before Commit, want the two full parts", commit, b.Stats().Sub(before).BytesWritten)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := b.Stat(ctx, key); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("commit=%v: object visible before Commit: %v", commit, err)
		}
		if commit {
			if n, err := up.Commit(ctx); err != nil || n != int64(len(data)) {
				t.Fatalf("Commit = %d, %v", n, err)
			}
			got, err := b.Get(ctx, key)
			if err != nil || string(got) != string(data) {
				t.Fatalf("streamed object differs (%d bytes, %v)", len(got), err)
			}
			continue
		}
		up.Abort()
		if _, err := b.Stat(ctx, key); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("aborted upload left an object: %v", err)
		}
		for u := range cl.ListIncompleteUploads(ctx, "test-streamed-upload", key, true) {
			t.Errorf("aborted upload left an incomplete multipart upload: %+v", u)
		}
	}
}
