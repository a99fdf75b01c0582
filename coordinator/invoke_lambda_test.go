package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// fakeLambda is a Lambda Invoke API: POST
// /2015-03-31/functions/{name}/invocations answered by respond.
type fakeLambda struct {
	respond  func(n int64, body []byte, w http.ResponseWriter)
	calls    atomic.Int64
	inFlight atomic.Int64
	maxIn    atomic.Int64
	mu       sync.Mutex
	bodies   [][]byte
	paths    []string
}

func (f *fakeLambda) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.calls.Add(1)
	in := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxIn.Load()
		if in <= m || f.maxIn.CompareAndSwap(m, in) {
			break
		}
	}
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.paths = append(f.paths, r.URL.Path)
	f.mu.Unlock()
	f.respond(n, body, w)
}

// echoResult answers with a TaskResult for the spec it got.
func echoResult(w http.ResponseWriter, body []byte) {
	var s function.TaskSpec
	_ = json.Unmarshal(body, &s)
	out, _ := json.Marshal(function.TaskResult{Job: s.Job, Stage: s.Stage, Task: s.Task, Attempt: s.Attempt, Rows: 7})
	_, _ = w.Write(out)
}

func throttle(w http.ResponseWriter) {
	w.Header().Set("X-Amzn-ErrorType", "TooManyRequestsException")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = io.WriteString(w, `{"Type":"User","message":"Rate Exceeded.","Reason":"ReservedFunctionConcurrentInvocationLimitExceeded"}`)
}

func testSpec(t *testing.T, pad int) []byte {
	t.Helper()
	s := &function.TaskSpec{Version: 1, Job: "j1", Stage: 2, Task: 3, Attempt: 1, Prefix: "pre",
		PlanKey: "pre/jobs/j1/plans/2-r0.json", OutputPrefix: "pre/jobs/j1/stage-2/task-3/a1/"}
	if pad > 0 {
		s.Splits = []function.Split{{Key: strings.Repeat("k", pad)}}
	}
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newTestLambda(t *testing.T, f *fakeLambda, mod func(*LambdaConfig)) (*LambdaInvoker, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg := LambdaConfig{FunctionName: "function", Endpoints: []string{srv.URL}, Region: "us-east-1",
		Concurrency: 2, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")}
	if mod != nil {
		mod(&cfg)
	}
	inv, err := NewLambdaInvoker(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return inv, srv
}

func TestLambdaInvokerOK(t *testing.T) {
	f := &fakeLambda{respond: func(_ int64, body []byte, w http.ResponseWriter) { echoResult(w, body) }}
	inv, _ := newTestLambda(t, f, nil)
	out, err := inv.Invoke(context.Background(), testSpec(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	var res function.TaskResult
	if err := json.Unmarshal(out, &res); err != nil || res.Job != "j1" || res.Rows != 7 {
		t.Fatalf("result %s (%v)", out, err)
	}
	if got := f.paths[0]; got != "/2015-03-31/functions/function/invocations" {
		t.Fatalf("path %s", got)
	}
}

func TestLambdaInvokerRetriesThrottlingAnd5xx(t *testing.T) {
	f := &fakeLambda{respond: func(n int64, body []byte, w http.ResponseWriter) {
		switch n {
		case 1, 2:
			throttle(w)
		case 3:
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, `{"errorType":"Runtime.ExitError","errorMessage":"Runtime exited with error: signal: killed"}`)
		default:
			echoResult(w, body)
		}
	}}
	inv, _ := newTestLambda(t, f, nil)
	if _, err := inv.Invoke(context.Background(), testSpec(t, 0)); err != nil {
		t.Fatal(err)
	}
	st := inv.Stats()
	if st.Requests != 4 || st.Throttled != 2 || st.ServerErrors != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestLambdaInvokerGivesUpThrottled(t *testing.T) {
	f := &fakeLambda{respond: func(int64, []byte, http.ResponseWriter) {}}
	f.respond = func(_ int64, _ []byte, w http.ResponseWriter) { throttle(w) }
	inv, _ := newTestLambda(t, f, func(c *LambdaConfig) { c.Retries = 3 })
	_, err := inv.Invoke(context.Background(), testSpec(t, 0))
	if !errors.Is(err, ErrThrottled) {
		t.Fatalf("err %v", err)
	}
	if f.calls.Load() != 4 {
		t.Fatalf("%d calls, want 4", f.calls.Load())
	}
}

func TestLambdaInvokerErrorsNotRetried(t *testing.T) {
	cases := map[string]func(w http.ResponseWriter){
		"not-found": func(w http.ResponseWriter) {
			w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"Type":"User","message":"Function not found"}`)
		},
		"function-error": func(w http.ResponseWriter) {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			_, _ = io.WriteString(w, `{"errorType":"Runtime.ExitError","errorMessage":"boom"}`)
		},
		"emulator-function-error": func(w http.ResponseWriter) {
			_, _ = io.WriteString(w, `{"errorMessage":"read task spec x: missing","errorType":"wrapError"}`)
		},
	}
	for name, respond := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fakeLambda{respond: func(_ int64, _ []byte, w http.ResponseWriter) { respond(w) }}
			inv, _ := newTestLambda(t, f, nil)
			_, err := inv.Invoke(context.Background(), testSpec(t, 0))
			if err == nil {
				t.Fatal("no error")
			}
			if f.calls.Load() != 1 {
				t.Fatalf("%d calls, want 1 (%v)", f.calls.Load(), err)
			}
			if name != "not-found" && inv.Stats().FunctionErrors != 1 {
				t.Fatalf("stats %+v (%v)", inv.Stats(), err)
			}
		})
	}
}

func TestLambdaInvokerTimeout(t *testing.T) {
	f := &fakeLambda{}
	f.respond = func(n int64, body []byte, w http.ResponseWriter) {
		if n == 1 {
			time.Sleep(300 * time.Millisecond)
		}
		echoResult(w, body)
	}
	inv, _ := newTestLambda(t, f, func(c *LambdaConfig) { c.Timeout = 50 * time.Millisecond })
	_, err := inv.Invoke(context.Background(), testSpec(t, 0))
	if !errors.Is(err, ErrInvokeTimeout) {
		t.Fatalf("err %v", err)
	}
	if inv.Stats().Timeouts != 1 {
		t.Fatalf("stats %+v", inv.Stats())
	}
	// Not retried by the invoker (the coordinator runs a new attempt); on
	// a loaded machine the 50 ms deadline may pass before the request
	// reached the function at all.
	if f.calls.Load() > 1 {
		t.Fatalf("%d calls", f.calls.Load())
	}
	if _, err := inv.Invoke(context.Background(), testSpec(t, 0)); err != nil {
		t.Fatal(err)
	}
}

func TestLambdaInvokerSpecByReference(t *testing.T) {
	bucket := objstore.NewMem("b")
	var seen atomic.Value
	f := &fakeLambda{respond: func(_ int64, body []byte, w http.ResponseWriter) {
		key, ok := function.IsSpecRef(body)
		if !ok {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		seen.Store(key)
		spec, err := bucket.Get(context.Background(), key)
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		echoResult(w, spec)
	}}
	inv, _ := newTestLambda(t, f, func(c *LambdaConfig) { c.PayloadLimit = 1000; c.Bucket = bucket })
	out, err := inv.Invoke(context.Background(), testSpec(t, 2000))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"job":"j1"`) {
		t.Fatalf("result %s", out)
	}
	key, _ := seen.Load().(string)
	if !strings.HasPrefix(key, "pre/jobs/j1/specs/2-3-a1-") {
		t.Fatalf("spec key %q", key)
	}
	if _, err := bucket.Get(context.Background(), key); err == nil {
		t.Fatal("spec object not deleted after the invocation")
	}
	if inv.Stats().SpecsByRef != 1 {
		t.Fatalf("stats %+v", inv.Stats())
	}
	// Without a bucket a large spec fails clearly.
	inv2, _ := newTestLambda(t, f, func(c *LambdaConfig) { c.PayloadLimit = 1000 })
	if _, err := inv2.Invoke(context.Background(), testSpec(t, 2000)); err == nil || !strings.Contains(err.Error(), "payload limit") {
		t.Fatalf("err %v", err)
	}
}

// TestLambdaInvokerSlots: with one endpoint per slot, no endpoint ever has
// two invocations in flight (the emulator serves one at a time), and the
// concurrency limit holds overall.
func TestLambdaInvokerSlots(t *testing.T) {
	var fs []*fakeLambda
	var urls []string
	for range 3 {
		f := &fakeLambda{respond: func(_ int64, body []byte, w http.ResponseWriter) {
			time.Sleep(5 * time.Millisecond)
			echoResult(w, body)
		}}
		srv := httptest.NewServer(f)
		t.Cleanup(srv.Close)
		fs = append(fs, f)
		urls = append(urls, srv.URL)
	}
	inv, err := NewLambdaInvoker(context.Background(), LambdaConfig{FunctionName: "function", Endpoints: urls,
		Concurrency: 3, Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			if _, err := inv.Invoke(context.Background(), testSpec(t, 0)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var total int64
	for i, f := range fs {
		if f.maxIn.Load() > 1 {
			t.Fatalf("endpoint %d had %d invocations in flight", i, f.maxIn.Load())
		}
		total += f.calls.Load()
	}
	if total != 30 {
		t.Fatalf("%d calls", total)
	}
}

func TestLambdaInvokerDialRefusedRetried(t *testing.T) {
	f := &fakeLambda{respond: func(_ int64, body []byte, w http.ResponseWriter) { echoResult(w, body) }}
	srv := httptest.NewUnstartedServer(f)
	addr := srv.Listener.Addr().String()
	srv.Listener.Close()
	inv, err := NewLambdaInvoker(context.Background(), LambdaConfig{FunctionName: "function", Endpoints: []string{"http://" + addr},
		Retries: 2, Backoff: time.Millisecond, Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = inv.Invoke(context.Background(), testSpec(t, 0))
	if err == nil || inv.Stats().Requests != 3 {
		t.Fatalf("err %v stats %+v", err, inv.Stats())
	}
}

// TestLambdaInvokerSized: a task the coordinator sized goes to the function
// deployed for its size; an unsized task, or one of a size with no
// function of its own, to FunctionName.
func TestLambdaInvokerSized(t *testing.T) {
	f := &fakeLambda{respond: func(_ int64, body []byte, w http.ResponseWriter) { echoResult(w, body) }}
	inv, _ := newTestLambda(t, f, func(c *LambdaConfig) {
		c.FunctionName = "sluice"
		c.Sized = map[int64]string{1 << 30: "sluice", 512 << 20: "sluice-512", 3538 << 20: "sluice-3538"}
	})
	cases := []struct {
		mem  int64
		want string
	}{
		{0, "sluice"},
		{512 << 20, "sluice-512"},
		{1 << 30, "sluice"},
		{3538 << 20, "sluice-3538"},
		{10240 << 20, "sluice"},
	}
	for i, c := range cases {
		if _, err := inv.Invoke(withFunctionMemory(context.Background(), c.mem), testSpec(t, 0)); err != nil {
			t.Fatal(err)
		}
		if got, want := f.paths[i], "/2015-03-31/functions/"+c.want+"/invocations"; got != want {
			t.Errorf("size %d MiB: path %s, want %s", c.mem>>20, got, want)
		}
	}
}
