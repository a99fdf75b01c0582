package coordinator

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicedb/sluice/function"
)

// gatedJob submits a job whose stage-0 tasks wait for release, and serves
// the coordinator's API.
func gatedJob(t testing.TB) (srv *httptest.Server, job string, release func()) {
	t.Helper()
	gate := make(chan struct{})
	srv, job = serveJob(t, func() chan struct{} { return gate })
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	return srv, job, release
}

// serveJob submits a job each of whose task invocations waits for the
// channel gate returns (called once per invocation) to close, and serves
// the coordinator's API.
func serveJob(t testing.TB, gate func() chan struct{}) (*httptest.Server, string) {
	t.Helper()
	e := newFakeEnv(t, 2)
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		select {
		case <-gate():
		case <-ctx.Done():
			return nil, ctx.Err(), true
		}
		return nil, nil, false
	}
	c := e.coordinator(t, testConfig("c1"))
	job, err := c.Submit(context.Background(), "select", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewAPI(c).Handler())
	t.Cleanup(srv.Close)
	return srv, job
}

func getStatus(t *testing.T, srv *httptest.Server, job, query string) (*JobStatus, *http.Response) {
	t.Helper()
	resp, err := http.Get(srv.URL + "/v1/jobs/" + job + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, resp
	}
	var js JobStatus
	if err := json.NewDecoder(resp.Body).Decode(&js); err != nil {
		t.Fatal(err)
	}
	return &js, resp
}

// TestStatusLongPoll: GET /v1/jobs/{id}?wait=&since= answers an unchanged
// status only when the wait ran out, and a changed one as soon as the job
// moves; every answer names its ETag and that the server long-polls; a
// bad wait is a 400.
func TestStatusLongPoll(t *testing.T) {
	srv, job, release := gatedJob(t)
	js, resp := getStatus(t, srv, job, "")
	tag := resp.Header.Get("ETag")
	if js == nil || tag == "" || resp.Header.Get(LongPollHeader) == "" {
		t.Fatalf("status %d, ETag %q, %s %q", resp.StatusCode, tag, LongPollHeader, resp.Header.Get(LongPollHeader))
	}
	if Terminal(js.State) {
		t.Fatalf("gated job is already %s", js.State)
	}
	// The first task invocations still change the status: let it settle.
	for i := 0; i < 100; i++ {
		js2, resp2 := getStatus(t, srv, job, "?wait=50ms&since="+url.QueryEscape(tag))
		if resp2.Header.Get("ETag") == tag {
			break
		}
		b1, _ := json.Marshal(js)
		b2, _ := json.Marshal(js2)
		t.Logf("status moved:\n%s\n%s", b1, b2)
		js, tag = js2, resp2.Header.Get("ETag")
	}
	// Unchanged: held for the wait, then the same status again.
	js2, resp2 := getStatus(t, srv, job, "?wait=50ms&since="+url.QueryEscape(tag))
	if js2 == nil || resp2.Header.Get("ETag") != tag || js2.State != js.State {
		t.Fatalf("unchanged long-poll answered %v with ETag %q, want %s and %q", js2, resp2.Header.Get("ETag"), js.State, tag)
	}
	// Changed: a request held with a long wait returns the job's next
	// status once the tasks run; never the one the client already has.
	type answer struct {
		js  *JobStatus
		tag string
	}
	got := make(chan answer, 1)
	go func() {
		js, resp := getStatus(t, srv, job, "?wait=30s&since="+url.QueryEscape(tag))
		got <- answer{js, resp.Header.Get("ETag")}
	}()
	release()
	a := <-got
	if a.js == nil || a.tag == tag {
		t.Fatalf("long-poll answered the status it was told the client has (ETag %q)", a.tag)
	}
	if _, resp := getStatus(t, srv, job, "?wait=soon"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("wait=soon answered %d, want 400", resp.StatusCode)
	}
}

// TestClientWaitLongPollAndOldServer: Client.Wait follows a job to its end
// against a long-polling server (each request after the first carries
// since=) and against a server that ignores the parameters and sends no
// long-poll header (it polls then).
func TestClientWaitLongPollAndOldServer(t *testing.T) {
	for _, old := range []bool{false, true} {
		name := map[bool]string{false: "long-poll", true: "old server"}[old]
		t.Run(name, func(t *testing.T) {
			srv, job, release := gatedJob(t)
			var mu sync.Mutex
			var queries []string
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				queries = append(queries, r.URL.RawQuery)
				mu.Unlock()
				if old {
					r.URL.RawQuery = ""
					w = headerDropper{w}
				}
				srv.Config.Handler.ServeHTTP(w, r)
			}))
			defer front.Close()
			go func() {
				time.Sleep(20 * time.Millisecond)
				release()
			}()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var seen int
			js, err := NewClient(front.URL, "").Wait(ctx, job, func(*JobStatus) { seen++ })
			if err != nil {
				t.Fatal(err)
			}
			if js.State != StateSucceeded || seen == 0 {
				t.Fatalf("Wait ended with %s after %d statuses", js.State, seen)
			}
			mu.Lock()
			defer mu.Unlock()
			for i, q := range queries {
				if hold := strings.Contains(q, "since="); hold != (i > 0 && !old) {
					t.Errorf("request %d asked %q (all: %q)", i, q, queries)
				}
			}
		})
	}
}

// headerDropper hides the long-poll header, as a server from before it.
type headerDropper struct{ http.ResponseWriter }

func (h headerDropper) WriteHeader(code int) {
	h.Header().Del(LongPollHeader)
	h.ResponseWriter.WriteHeader(code)
}

func (h headerDropper) Write(b []byte) (int, error) {
	h.Header().Del(LongPollHeader)
	return h.ResponseWriter.Write(b)
}

// BenchmarkWaitLatency measures the time from a job's tasks being
// released to Client.Wait returning its end, against a long-polling
// server and against one without long-poll (100 ms polling).
func BenchmarkWaitLatency(b *testing.B) {
	for _, old := range []bool{false, true} {
		name := map[bool]string{false: "long-poll", true: "poll-100ms"}[old]
		b.Run(name, func(b *testing.B) {
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				srv, job, release := gatedJob(b)
				front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if old {
						r.URL.RawQuery = ""
						w = headerDropper{w}
					}
					srv.Config.Handler.ServeHTTP(w, r)
				}))
				var start time.Time
				var once sync.Once
				b.StartTimer()
				js, err := NewClient(front.URL, "").Wait(context.Background(), job, func(*JobStatus) {
					once.Do(func() { start = time.Now(); release() })
				})
				total += time.Since(start)
				b.StopTimer()
				if err != nil || js.State != StateSucceeded {
					b.Fatalf("%v %v", js, err)
				}
				front.Close()
				srv.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-release-to-end")
		})
	}
}

// TestShuffleCodecInSpecs: Config.ShuffleCodec reaches every task's spec.
func TestShuffleCodecInSpecs(t *testing.T) {
	e := newFakeEnv(t, 2)
	cfg := testConfig("c1")
	cfg.ShuffleCodec = "zstd"
	c := e.coordinator(t, cfg)
	job, err := c.Submit(context.Background(), "select", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := waitJob(t, c, job); m.State != StateSucceeded {
		t.Fatalf("job %s: %s", m.State, m.Error)
	}
	e.inv.mu.Lock()
	defer e.inv.mu.Unlock()
	if len(e.inv.specs) == 0 {
		t.Fatal("no task ran")
	}
	for _, s := range e.inv.specs {
		if s.ShuffleCodec != "zstd" {
			t.Errorf("stage %d task %d spec has shuffle codec %q, want zstd", s.Stage, s.Task, s.ShuffleCodec)
		}
	}
}

// TestStatusLongPollUntilDone: with until=done the answer is held while
// the job runs, even as its stages move, and comes once it is terminal.
func TestStatusLongPollUntilDone(t *testing.T) {
	srv, job, release := gatedJob(t)
	_, resp := getStatus(t, srv, job, "")
	tag := resp.Header.Get("ETag")
	// Held for the whole wait while the gated job cannot end.
	js, _ := getStatus(t, srv, job, "?wait=100ms&until=done&since="+url.QueryEscape(tag))
	if js == nil || Terminal(js.State) {
		t.Fatalf("gated job answered %+v", js)
	}
	got := make(chan *JobStatus, 1)
	go func() {
		js, _ := getStatus(t, srv, job, "?wait=30s&until=done&since="+url.QueryEscape(tag))
		got <- js
	}()
	release()
	if js := <-got; js == nil || !Terminal(js.State) {
		t.Fatalf("until=done answered a status that is not terminal: %+v", js)
	}
}

// TestStatusLongPollPaced: a client following progress (since=, no
// until=done) is answered a changed status no sooner than progressEvery
// after it asked, and the job's end without waiting out the long-poll.
func TestStatusLongPollPaced(t *testing.T) {
	first, rest := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	srv, job := serveJob(t, func() chan struct{} {
		if calls.Add(1) == 1 {
			return first
		}
		return rest
	})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(rest) }) })

	// Settle: the first invocations move the status.
	_, resp := getStatus(t, srv, job, "")
	tag := resp.Header.Get("ETag")
	for i := 0; i < 100; i++ {
		_, resp := getStatus(t, srv, job, "?wait=300ms&since="+url.QueryEscape(tag))
		if resp.Header.Get("ETag") == tag {
			break
		}
		tag = resp.Header.Get("ETag")
	}
	// One task finishes while the client waits: answered, but not before
	// progressEvery.
	type answer struct {
		js   *JobStatus
		tag  string
		took time.Duration
	}
	got := make(chan answer, 1)
	go func() {
		t0 := time.Now()
		js, resp := getStatus(t, srv, job, "?wait=30s&since="+url.QueryEscape(tag))
		got <- answer{js, resp.Header.Get("ETag"), time.Since(t0)}
	}()
	close(first)
	a := <-got
	if a.js == nil || a.tag == tag || Terminal(a.js.State) {
		t.Fatalf("after one task: answered %+v with ETag %q (had %q)", a.js, a.tag, tag)
	}
	if a.took < progressEvery {
		t.Fatalf("a changed status was answered after %s, before progressEvery (%s)", a.took, progressEvery)
	}
	// The job ends: answered without waiting out the 30 s.
	once.Do(func() { close(rest) })
	tag = a.tag
	for i := 0; i < 100; i++ {
		t0 := time.Now()
		js, resp := getStatus(t, srv, job, "?wait=30s&since="+url.QueryEscape(tag))
		if js == nil {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if took := time.Since(t0); took > 10*time.Second {
			t.Fatalf("answered after %s", took)
		}
		if Terminal(js.State) {
			return
		}
		tag = resp.Header.Get("ETag")
	}
	t.Fatal("the job did not end")
}

// TestStatusBrief: view=progress leaves out the rounds and the operator
// metrics while the job runs, and answers the ended job whole.
func TestStatusBrief(t *testing.T) {
	srv, job, release := gatedJob(t)
	var full *JobStatus
	for i := 0; i < 500 && (full == nil || len(full.Rounds) == 0); i++ {
		if i > 0 {
			time.Sleep(10 * time.Millisecond) // the first round is recorded as the job starts
		}
		full, _ = getStatus(t, srv, job, "")
	}
	brief, _ := getStatus(t, srv, job, "?view=progress")
	if full == nil || brief == nil {
		t.Fatal("no status")
	}
	t.Logf("running: %d rounds, %d stages (brief: %d rounds, %d stages)", len(full.Rounds), len(full.Stages), len(brief.Rounds), len(brief.Stages))
	if len(full.Rounds) == 0 {
		t.Fatal("the running job has no rounds: the test cannot tell the views apart")
	}
	if len(brief.Rounds) != 0 || brief.State != full.State || len(brief.Stages) != len(full.Stages) {
		t.Fatalf("brief view of a running job: %d rounds, state %s, %d stages; want 0 rounds, %s, %d stages",
			len(brief.Rounds), brief.State, len(brief.Stages), full.State, len(full.Stages))
	}
	release()
	for i := 0; ; i++ {
		js, _ := getStatus(t, srv, job, "?view=progress&wait=30s&until=done&since=x")
		if js != nil && Terminal(js.State) {
			end, _ := getStatus(t, srv, job, "")
			a, _ := json.Marshal(js)
			b, _ := json.Marshal(end)
			if string(a) != string(b) {
				t.Fatalf("the ended job's brief view differs from its whole status:\n%s\n%s", a, b)
			}
			var metrics int
			for _, st := range js.Stages {
				if st.Metrics != nil {
					metrics++
				}
			}
			t.Logf("ended: %d rounds, %d stages with metrics", len(js.Rounds), metrics)
			return
		}
		if i > 100 {
			t.Fatal("the job did not end")
		}
	}
}
