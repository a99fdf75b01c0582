package tests

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/coordinator/sqlsession"
	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/shuffle"
)

// rieBin returns the AWS Lambda Runtime Interface Emulator (bin/aws-lambda-rie,
// installed by `make bin/aws-lambda-rie`, or $SLUICE_RIE_BIN). Without it
// the test skips, except in CI, where `make test` installs it.
func rieBin(tb testing.TB) string {
	tb.Helper()
	p := os.Getenv("SLUICE_RIE_BIN")
	if p == "" {
		p, _ = filepath.Abs(filepath.Join("..", "bin", "aws-lambda-rie"))
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "" {
			tb.Skipf("Lambda Runtime Interface Emulator not installed (%s): run `make bin/aws-lambda-rie`", p)
		}
		tb.Fatalf("Lambda Runtime Interface Emulator missing in CI (%s): `make test` installs it", p)
	}
	return p
}

// buildFunction builds the lean function binary as make function does
// (pure Go, no SQL front end) for this machine.
func buildFunction(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bin, "../cmd/sluice-function")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build sluice-function: %v\n%s", err, out)
	}
	return bin
}

func loopbackPort(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// rieFleet is one emulator process per concurrency slot: an emulator
// serves one invocation at a time.
type rieFleet struct {
	Endpoints []string
	procs     []*exec.Cmd
}

// startRIE starts n emulators running bootstrap with env, each on its own
// loopback addresses, and waits until they accept connections.
func startRIE(tb testing.TB, rie, bootstrap string, n int, env []string) *rieFleet {
	tb.Helper()
	f := &rieFleet{}
	logDir := tb.TempDir()
	for i := range n {
		var cmd *exec.Cmd
		var addr string
		for try := 0; ; try++ {
			addr = loopbackPort(tb)
			api := loopbackPort(tb)
			cmd = exec.Command(rie, "--runtime-interface-emulator-address", addr, "--runtime-api-address", api,
				"--log-level", "error", bootstrap)
			cmd.Env = append(os.Environ(), env...)
			logf, err := os.Create(filepath.Join(logDir, fmt.Sprintf("rie-%d.log", i)))
			if err != nil {
				tb.Fatal(err)
			}
			cmd.Stdout, cmd.Stderr = io.Discard, logf
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				_ = cmd.Wait()
				logf.Close()
			})
			if waitTCP(addr, 10*time.Second) {
				break
			}
			// A port taken between freePort and the emulator's listen:
			// try other ports.
			if try == 2 {
				log, _ := os.ReadFile(logf.Name())
				tb.Fatalf("emulator on %s did not start:\n%s", addr, log)
			}
		}
		f.procs = append(f.procs, cmd)
		f.Endpoints = append(f.Endpoints, "http://"+addr)
	}
	return f
}

func waitTCP(addr string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// functionPids lists the function processes the emulators run.
func (f *rieFleet) functionPids() []int {
	parents := map[int]bool{}
	for _, p := range f.procs {
		parents[p.Process.Pid] = true
	}
	return childPids(parents)
}

// childPids lists the processes whose parent is in parents.
func childPids(parents map[int]bool) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces; cut after ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fs := strings.Fields(s[i+1:])
		if len(fs) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(fs[1]); parents[ppid] {
			out = append(out, pid)
		}
	}
	return out
}

// pidOfConn returns which of pids holds the client end of a loopback TCP
// connection whose client address is remote (host:port), or 0.
func pidOfConn(remote string, pids []int) int {
	_, port, err := net.SplitHostPort(remote)
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(port)
	want := fmt.Sprintf(":%04X", p)
	var inode string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n") {
			fs := strings.Fields(line)
			if len(fs) > 9 && strings.HasSuffix(fs[1], want) {
				inode = fs[9]
			}
		}
	}
	if inode == "" {
		return 0
	}
	for _, pid := range pids {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); l == "socket:["+inode+"]" {
				return pid
			}
		}
	}
	return 0
}

// s3Proxy stands between the functions and MinIO. Armed, it holds the
// first GET of a shuffle object (a task of a downstream stage, mid-task)
// and calls onHold with it before letting it through.
type s3Proxy struct {
	URL    string
	armed  atomic.Bool
	onHold func(r *http.Request)
	held   atomic.Int64
}

func startS3Proxy(tb testing.TB, endpoint string) *s3Proxy {
	tb.Helper()
	target, err := url.Parse("http://" + strings.TrimPrefix(endpoint, "http://"))
	if err != nil {
		tb.Fatal(err)
	}
	p := &s3Proxy{}
	rp := httputil.NewSingleHostReverseProxy(target) // keeps the signed Host header
	rp.ErrorLog = log.New(io.Discard, "", 0)         // requests of killed functions
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/"+shuffle.DataName) && p.armed.CompareAndSwap(true, false) {
			p.held.Add(1)
			p.onHold(r)
		}
		rp.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// faultClient is the Lambda invoker's HTTP client with injected faults:
// every throttleEvery-th request is refused with 429
// TooManyRequestsException, and the requests numbered in hang never get
// an answer (the invoker's timeout ends them). Neither reaches a function.
type faultClient struct {
	base          http.RoundTripper
	throttleEvery int64
	hang          map[int64]bool
	n             atomic.Int64
	throttled     atomic.Int64
	hung          atomic.Int64
}

func (f *faultClient) Do(r *http.Request) (*http.Response, error) {
	n := f.n.Add(1)
	if f.hang[n] {
		f.hung.Add(1)
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	if f.throttleEvery > 0 && n%f.throttleEvery == 0 {
		f.throttled.Add(1)
		body := `{"Type":"User","message":"Rate Exceeded.","Reason":"ReservedFunctionConcurrentInvocationLimitExceeded"}`
		return &http.Response{StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"X-Amzn-Errortype": {"TooManyRequestsException"}, "Content-Type": {"application/json"},
				"X-Amzn-Requestid": {fmt.Sprint(n)}},
			Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
	}
	return f.base.RoundTrip(r)
}

// faasEnv is a running embedded stack (MinIO, miniredis, catalog with the
// TPC-H tables) plus the environment a function process needs to reach it
// through an S3 proxy.
type faasEnv struct {
	st    *local.Stack
	proxy *s3Proxy
	env   []string
}

func startFaaSEnv(tb testing.TB, dir string) *faasEnv {
	tb.Helper()
	st := startStack(tb, "", nil)
	if dir != "" {
		if _, err := st.LoadDir(context.Background(), dir); err != nil {
			tb.Fatal(err)
		}
	}
	proxy := startS3Proxy(tb, st.S3.Endpoint)
	env := []string{"SLUICE_S3_ENDPOINT=" + proxy.URL, "SLUICE_S3_BUCKET=" + st.S3.Bucket,
		"AWS_ACCESS_KEY_ID=" + st.S3.AccessKey, "AWS_SECRET_ACCESS_KEY=" + st.S3.SecretKey, "AWS_REGION=us-east-1",
		"SLUICE_REDIS_URL=" + st.RedisURL, "SLUICE_LOG_LEVEL=error"}
	return &faasEnv{st: st, proxy: proxy, env: env}
}

// coordinatorWith starts a coordinator on the stack's Redis and bucket
// invoking functions through inv, with its API on a loopback port, and
// returns a client of it.
func (e *faasEnv) coordinatorWith(tb testing.TB, inv coordinator.Invoker, slots int) *coordinator.Client {
	tb.Helper()
	cfg := coordinator.DefaultConfig()
	cfg.Bucket = e.st.S3.Bucket
	cfg.SplitBytes = 256 << 10 // several scan tasks at small scale
	cfg.AQE.MaxSplitBytes = 0  // even in adaptive jobs (no size-scans)
	cfg.Concurrency = slots
	cfg.RetryBackoff = 50 * time.Millisecond
	// No hedges: a hedge after the default 5 s raced the invoker's 5 s
	// timeout of the throttling test's hung invocations, and on a busy
	// machine won, canceling a hung invocation before it timed out.
	cfg.HedgeFactor = 0
	pl := &sqlsession.Session{Catalog: e.st.Catalog, Options: planner.Options{Partitions: 4}}
	co := coordinator.New(cfg, coordinator.NewStore(e.st.RDB), e.st.Bucket, pl, e.st.Catalog, inv, nil)
	srv := httptest.NewServer(coordinator.NewAPI(co).Handler())
	tb.Cleanup(func() {
		srv.Close()
		co.Close()
	})
	return coordinator.NewClient(srv.URL, "")
}

func newLambdaInvoker(tb testing.TB, endpoints []string, mod func(*coordinator.LambdaConfig)) *coordinator.LambdaInvoker {
	tb.Helper()
	cfg := coordinator.LambdaConfig{FunctionName: "function", Region: "us-east-1", Endpoints: endpoints,
		Concurrency: len(endpoints), Backoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		Credentials: credentials.NewStaticCredentialsProvider("sluice", "sluice", "")}
	if mod != nil {
		mod(&cfg)
	}
	inv, err := coordinator.NewLambdaInvoker(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return inv
}

// faasQueries are the TPC-H queries run through the FaaS adapters: one
// and two stage aggregates, and a three-table join.
func faasQueries(tb testing.TB) []query {
	tb.Helper()
	if _, err := os.Stat(filepath.Join("..", "planner", "testdata", "tpch", "q01.sql")); err != nil {
		tb.Skip("TPC-H query texts not present")
	}
	all := tpchQueries(tb)
	return []query{all[0], all[5], all[2]} // q01, q06, q03
}

func checkFaaSQuery(t *testing.T, cl *coordinator.Client, q query, want []row) *local.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	adaptive := true
	res, err := local.RunQuery(ctx, cl, q.sql, &adaptive, nil)
	if err != nil {
		t.Fatalf("%s: %v", q.name, err)
	}
	t.Cleanup(res.Release)
	compareRows(t, sluiceRows(res), want, q.ordered)
	return res
}

// TestLambdaFunctions runs TPC-H queries with the coordinator invoking the
// real function binary through the Lambda protocol: the function runs
// under the AWS Lambda Runtime Interface Emulator (one emulator process per
// concurrency slot), invoked with aws-sdk-go-v2. Answers must equal
// DuckDB's, with specs passed inline and by reference, with throttling and
// timeouts injected at the invoker, and with function processes killed in
// the middle of tasks.
func TestLambdaFunctions(t *testing.T) {
	rie := rieBin(t)
	bootstrap := buildFunction(t)
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	e := startFaaSEnv(t, dir)
	const slots = 3
	fleet := startRIE(t, rie, bootstrap, slots, e.env)
	queries := faasQueries(t)
	want := map[string][]row{}
	for _, q := range queries {
		want[q.name] = duckRows(t, db, q.sql)
	}

	t.Run("queries", func(t *testing.T) {
		// A small payload limit sends the larger specs by reference.
		inv := newLambdaInvoker(t, fleet.Endpoints, func(c *coordinator.LambdaConfig) {
			c.PayloadLimit = 1024
			c.Bucket = e.st.Bucket
		})
		cl := e.coordinatorWith(t, inv, slots)
		for _, q := range queries {
			t.Run(q.name, func(t *testing.T) { checkFaaSQuery(t, cl, q, want[q.name]) })
		}
		st := inv.Stats()
		t.Logf("lambda invoker: %+v", st)
		if st.SpecsByRef == 0 || st.SpecsByRef == st.Invocations {
			t.Errorf("want some specs inline and some by reference: %+v", st)
		}
	})

	t.Run("throttling-and-timeouts", func(t *testing.T) {
		fc := &faultClient{base: http.DefaultTransport, throttleEvery: 3, hang: map[int64]bool{2: true, 9: true}}
		inv := newLambdaInvoker(t, fleet.Endpoints, func(c *coordinator.LambdaConfig) {
			c.HTTPClient = fc
			c.Timeout = 5 * time.Second
			c.Retries = 8
		})
		cl := e.coordinatorWith(t, inv, slots)
		q := queries[2]
		checkFaaSQuery(t, cl, q, want[q.name])
		st := inv.Stats()
		t.Logf("lambda invoker: %+v (injected: %d throttled, %d hung)", st, fc.throttled.Load(), fc.hung.Load())
		if st.Throttled == 0 || st.Throttled != fc.throttled.Load() {
			t.Errorf("throttling not injected or not seen: %+v", st)
		}
		if st.Timeouts < 2 {
			t.Errorf("want the 2 hung invocations timed out, got %+v", st)
		}
	})

	t.Run("coordinator-serve", func(t *testing.T) {
		// The CLI wiring: sluice coordinator serve --lambda-function
		// function --lambda-endpoint ... (one per emulator).
		bin := buildSluice(t)
		args := []string{"coordinator", "serve", "--addr", "127.0.0.1:0", "--lambda-function", "function",
			"--lambda-region", "us-east-1", "--functions", strconv.Itoa(slots)}
		for _, ep := range fleet.Endpoints {
			args = append(args, "--lambda-endpoint", ep)
		}
		co := startProc(t, bin, e.env, args...)
		q := queries[1]
		out, errOut, code := runCLI(t, bin, t.TempDir(), append(e.env, "SLUICE_COORDINATOR="+co), "submit", "--format", "csv", "--", q.sql)
		if code != 0 {
			t.Fatalf("submit: %s", errOut)
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(recs) != 2 {
			t.Fatalf("result %q: %v", out, err)
		}
		got := []row{{parseCell(recs[1][0])}}
		compareRows(t, got, want[q.name], true)
	})

	t.Run("function-killed", func(t *testing.T) {
		inv := newLambdaInvoker(t, fleet.Endpoints, nil)
		cl := e.coordinatorWith(t, inv, slots)
		// Kill the function process whose S3 request is held: it is in the
		// middle of a task. Its emulator starts a new one on its next
		// invocation.
		var killed atomic.Int64
		e.proxy.onHold = func(r *http.Request) {
			if pid := pidOfConn(r.RemoteAddr, fleet.functionPids()); pid > 0 && syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed.Add(1)
			} else {
				e.proxy.armed.Store(true) // not a function's read: hold the next one
			}
		}
		e.proxy.armed.Store(true)
		defer e.proxy.armed.Store(false)
		q := queries[2]
		checkFaaSQuery(t, cl, q, want[q.name])
		st := inv.Stats()
		t.Logf("lambda invoker: %+v, %d function processes killed", st, killed.Load())
		if killed.Load() == 0 {
			t.Fatal("no function process was killed mid-task")
		}
		// The emulator answers an invocation whose runtime died with a 502
		// (Runtime.ExitError), which the invoker retries.
		if st.ServerErrors == 0 && st.FunctionErrors == 0 {
			t.Errorf("the killed invocation left no trace: %+v", st)
		}
	})
}

// startHTTPFunction starts the lean function binary serving HTTP on a free
// loopback port and returns its URL and process.
func startHTTPFunction(tb testing.TB, bin string, env []string) (string, *exec.Cmd) {
	tb.Helper()
	var stderr syncBuffer
	p, out := launch(tb, bin, launchOptions{env: environ(env...), stderr: &stderr}, "--addr", "127.0.0.1:0")
	u, ok := p.waitURL(out, 30*time.Second)
	if !ok {
		tb.Fatalf("sluice-function did not start: %s", stderr.String())
	}
	return u, p.cmd
}

// TestHTTPFunctions runs the same queries through the HTTP adapter: several
// lean function processes (what the Dockerfile ships to Knative or
// OpenFaaS) behind the HTTP invoker, specs inline and by reference, and
// one process killed in the middle of a task.
func TestHTTPFunctions(t *testing.T) {
	bin := buildFunction(t)
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	e := startFaaSEnv(t, dir)
	var urls []string
	var procs []*exec.Cmd
	for range 3 {
		u, p := startHTTPFunction(t, bin, e.env)
		urls = append(urls, u)
		procs = append(procs, p)
	}
	inv := coordinator.NewHTTPInvoker(urls, 3)
	inv.Bucket, inv.PayloadLimit = e.st.Bucket, 1024
	cl := e.coordinatorWith(t, inv, 3)
	queries := faasQueries(t)
	for _, q := range queries {
		t.Run(q.name, func(t *testing.T) { checkFaaSQuery(t, cl, q, duckRows(t, db, q.sql)) })
	}
	t.Run("function-killed", func(t *testing.T) {
		var killed atomic.Int64
		e.proxy.onHold = func(r *http.Request) {
			var pids []int
			for _, p := range procs {
				pids = append(pids, p.Process.Pid)
			}
			if pid := pidOfConn(r.RemoteAddr, pids); pid > 0 && syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed.Add(1)
			} else {
				// Not a function's request (or its socket not found yet):
				// hold the next shuffle read instead.
				e.proxy.armed.Store(true)
			}
		}
		e.proxy.armed.Store(true)
		defer e.proxy.armed.Store(false)
		q := queries[2]
		checkFaaSQuery(t, cl, q, duckRows(t, db, q.sql))
		if killed.Load() == 0 {
			t.Fatal("no function process was killed")
		}
	})
}
