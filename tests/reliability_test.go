package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/shuffle"
)

// service is a `sluice function serve` (or other) process that can be
// paused (SIGSTOP: it keeps its port, accepts connections and never
// answers, like a hung host) and resumed.
type service struct {
	*process
	URL string
}

// startService starts bin with args and waits for its "http://" line.
func startService(t *testing.T, bin string, env []string, args ...string) *service {
	t.Helper()
	p, out := launch(t, bin, launchOptions{env: environ(env...), pdeathsig: true}, args...)
	s := &service{process: p}
	var ok bool
	if s.URL, ok = p.waitURL(out, 30*time.Second); !ok {
		t.Fatalf("%v did not start", args)
	}
	return s
}

// functions starts n HTTP function processes on the rig and returns them
// with the coordinator flags naming them.
func (r *rig) functions(t *testing.T, n int, env ...string) ([]*service, []string) {
	var fs []*service
	var flags []string
	for i := 0; i < n; i++ {
		f := startService(t, sluiceBin(t), append(append([]string(nil), r.env...), env...), "function", "serve", "--addr", "127.0.0.1:0")
		fs = append(fs, f)
		flags = append(flags, "--function-url", f.URL)
	}
	return fs, flags
}

// outageSeconds is how long the outage tests keep a service down: short
// in `make test`, a minute with -long (make test-faults).
func outageSeconds() time.Duration {
	if *longFlag {
		return 60 * time.Second
	}
	return 8 * time.Second
}

// TestFaultResultDuringS3Outage: the result of a finished job read while
// MinIO is down is an error (never a 200 with fewer rows); once MinIO is
// back it is the whole answer, checked against DuckDB.
func TestFaultResultDuringS3Outage(t *testing.T) {
	r := newRig(t, rigOptions{})
	co := r.startCoordinator(t, "--s3-outage", "2s")
	cl := co.client()
	q, want := queryByName(t, r.db, "q05")
	job := submit(t, cl, q.sql)
	compareRows(t, fetch(t, cl, job), want, q.ordered)

	r.minio.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, recs, err := cl.Result(ctx, job)
	if err == nil {
		t.Fatalf("result read with MinIO down: %d batches and no error, want an error", len(recs))
	}
	var ae *coordinator.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable {
		t.Fatalf("result with MinIO down: %v, want HTTP 503", err)
	}
	t.Logf("with MinIO down: %v", err)
	// `sluice submit` reads results through the same client call; the CLI
	// turns its error into exit code 1 (main.go).
	if err := r.minio.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	compareRows(t, fetch(t, cl, job), want, q.ordered)
}

// TestFaultHungFunction: one of three HTTP functions SIGSTOPped in the
// middle of a job does not stall it: the endpoint is ejected after failed
// health probes, its requests in flight are abandoned and run elsewhere.
// The task deadline is set to 10 minutes, so only ejection can save the
// job within the wait below.
func TestFaultHungFunction(t *testing.T) {
	r := newRig(t, rigOptions{})
	fs, flags := r.functions(t, 3)
	co := r.startCoordinator(t, append(flags, "--functions", "6", "--task-timeout", "10m", "--task-deadline-floor", "10m")...)
	cl := co.client()
	q, want := queryByName(t, r.db, "q05")
	rounds := 1
	if *longFlag {
		rounds = 3
	}
	for i := 0; i < rounds; i++ {
		job := submit(t, cl, q.sql)
		began := time.Now()
		r.waitCommits(t, job, 2)
		hung := fs[i%len(fs)]
		hung.signal(syscall.SIGSTOP)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		js, err := cl.Wait(ctx, job, nil)
		cancel()
		if err != nil {
			t.Fatalf("round %d: job %s stalled with a hung function: %v", i, job, err)
		}
		if js.State != coordinator.StateSucceeded {
			t.Fatalf("round %d: job %s: %s", i, js.State, js.Error)
		}
		took := time.Since(began)
		compareRows(t, fetch(t, cl, job), want, q.ordered)
		hung.signal(syscall.SIGCONT)
		t.Logf("round %d: job done in %v with function %s stopped; attempts: %s", i, took.Round(time.Millisecond), hung.URL, attemptsLine(t, co.URL))
	}
}

// TestFaultFunctionsOutage: every function stopped for a while (longer
// than MaxAttempts retries take) is ridden out: the job shows "waiting for
// functions" meanwhile and gives the right answer after.
func TestFaultFunctionsOutage(t *testing.T) {
	r := newRig(t, rigOptions{})
	fs, flags := r.functions(t, 3)
	co := r.startCoordinator(t, append(flags, "--functions", "4")...)
	cl := co.client()
	q, want := queryByName(t, r.db, "q05")
	job := submit(t, cl, q.sql)
	r.waitCommits(t, job, 2)
	for _, f := range fs {
		f.signal(syscall.SIGSTOP)
	}
	waiting := watchWaiting(t, cl, job, outageSeconds())
	for _, f := range fs {
		f.signal(syscall.SIGCONT)
	}
	compareRows(t, fetch(t, cl, job), want, q.ordered)
	if !strings.Contains(waiting, "waiting for functions") {
		t.Fatalf("the job never said it was waiting for the functions (status %q)", waiting)
	}
	t.Logf("functions down for %v: ridden out; status meanwhile: %s", outageSeconds(), waiting)
}

// TestFaultS3Outage: MinIO killed in the middle of a job and restarted a
// while later is ridden out, with the right answer.
func TestFaultS3Outage(t *testing.T) {
	r := newRig(t, rigOptions{})
	co := r.startCoordinator(t)
	cl := co.client()
	q, want := queryByName(t, r.db, "q05")
	job := submit(t, cl, q.sql)
	r.waitCommits(t, job, 2)
	r.minio.Kill()
	waiting := watchWaiting(t, cl, job, outageSeconds())
	if err := r.minio.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	compareRows(t, fetch(t, cl, job), want, q.ordered)
	t.Logf("MinIO down for %v: ridden out; status meanwhile: %q", outageSeconds(), waiting)
}

// watchWaiting polls a job for d and returns the last "waiting" status
// seen; the job must not fail meanwhile.
func watchWaiting(t *testing.T, cl *coordinator.Client, job string, d time.Duration) string {
	t.Helper()
	var seen string
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		js, err := cl.Status(context.Background(), job)
		if err != nil {
			continue
		}
		if js.State == coordinator.StateFailed {
			t.Fatalf("job %s failed during the outage: %s", job, js.Error)
		}
		if js.Waiting != "" {
			seen = js.Waiting
		}
	}
	return seen
}

// TestFaultForgedInvoke: with SLUICE_FUNCTION_SECRET a function refuses
// unsigned and wrongly signed invocations (401); a function without it
// (loopback only) still refuses a spec that would overwrite a committed
// attempt; the served result stays the right one.
func TestFaultForgedInvoke(t *testing.T) {
	r := newRig(t, rigOptions{})
	const secret = "fn-secret-4f1d9c2b"
	signed, flags := r.functions(t, 1, function.SecretEnv+"="+secret)
	open, _ := r.functions(t, 1)
	co := r.startCoordinatorEnv(t, []string{function.SecretEnv + "=" + secret}, flags...)
	cl := co.client()
	q, want := queryByName(t, r.db, "q05")
	job := submit(t, cl, q.sql)
	compareRows(t, fetch(t, cl, job), want, q.ordered)

	// The forged spec: the result stage's committed attempt, no inputs
	// (its output would be empty), as the probe sent.
	g := r.graph(job)
	// The stage's record holds statistics only: its objects are its
	// tasks' committed results'.
	out, _ := r.rdb.HGet(context.Background(), fmt.Sprintf("sluice:{%s}:task:%d:0", job, g.Result), "result").Result()
	var committed function.TaskResult
	if err := json.Unmarshal([]byte(out), &committed); err != nil || len(committed.Partitions) == 0 {
		t.Fatalf("result stage's task 0 result %q: %v", out, err)
	}
	info, err := shuffle.ParseKey(committed.Partitions[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := (&function.TaskSpec{Version: function.SpecVersion, Job: job, Stage: info.Stage, Task: info.Task,
		Attempt: info.Attempt, Bucket: "sluice", Prefix: info.Prefix, PlanKey: coordinator.PlanKey(info.Prefix, job, info.Stage, 0, 1),
		OutputPrefix: info.AttemptPrefix()}).Encode()
	post := func(url string, sign func(http.Header)) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url+"/invoke", bytes.NewReader(spec))
		sign(req.Header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(signed[0].URL, func(http.Header) {}); code != http.StatusUnauthorized || !strings.Contains(body, "unsigned") {
		t.Fatalf("unsigned invocation: HTTP %d %s", code, body)
	}
	if code, body := post(signed[0].URL, func(h http.Header) {
		function.SignRequest(h, []byte("guessed"), spec, time.Now().Add(time.Minute))
	}); code != http.StatusUnauthorized || !strings.Contains(body, "bad signature") {
		t.Fatalf("wrongly signed invocation: HTTP %d %s", code, body)
	}
	code, body := post(open[0].URL, func(http.Header) {})
	var res function.TaskResult
	if code != http.StatusOK || json.Unmarshal([]byte(body), &res) != nil || !strings.Contains(res.Error, "already written") {
		t.Fatalf("forged spec over a committed attempt: HTTP %d %s", code, body)
	}
	compareRows(t, fetch(t, cl, job), want, q.ordered)
}

// TestSecurityDefaults: no open API or function on a non-loopback address
// without --insecure-no-auth; SQL text over the limit is refused with its
// code; a malformed or unreachable Redis URL's password is in no error.
func TestSecurityDefaults(t *testing.T) {
	bin := sluiceBin(t)
	env := []string{"SLUICE_S3_ENDPOINT=127.0.0.1:1", "SLUICE_S3_BUCKET=sluice"}
	_, errOut, code := runCLI(t, bin, t.TempDir(), append(env, "SLUICE_REDIS_URL=redis://127.0.0.1:1"), "coordinator", "serve", "--addr", "0.0.0.0:0")
	if code == 0 || !strings.Contains(errOut, "refusing") || !strings.Contains(errOut, "--token") {
		t.Fatalf("coordinator on 0.0.0.0 without a token: exit %d: %s", code, errOut)
	}
	_, errOut, code = runCLI(t, bin, t.TempDir(), env, "function", "serve", "--addr", "0.0.0.0:0")
	if code == 0 || !strings.Contains(errOut, function.SecretEnv) {
		t.Fatalf("function on 0.0.0.0 without a secret: exit %d: %s", code, errOut)
	}
	const pw = "hunter2-pw-8a7e"
	for _, u := range []string{
		"redis://:" + pw + "%zz@127.0.0.1:6379/0",  // does not parse (bad escape)
		"redis://:" + pw + "@127.0.0.1:notaport",   // does not parse (bad port)
		"redis://default:" + pw + "@127.0.0.1:1/0", // parses, unreachable
		"redis://" + pw + "@127.0.0.1:1/0",         // the password as the whole userinfo
	} {
		out, errOut, code := runCLI(t, bin, t.TempDir(), append(env, "SLUICE_REDIS_URL="+u), "coordinator", "serve", "--addr", "127.0.0.1:0")
		if code == 0 || strings.Contains(out+errOut, pw) {
			t.Fatalf("redis URL %q: exit %d, output shows the password:\n%s%s", u, code, out, errOut)
		}
		if !strings.Contains(errOut, "redis") {
			t.Fatalf("redis URL %q: the error does not say what is wrong: %s", u, errOut)
		}
	}

	r := newRig(t, rigOptions{})
	co := r.startCoordinator(t, "--max-sql-bytes", "4096")
	_, err := co.client().Submit(context.Background(), "select 1 -- "+strings.Repeat("x", 5000), nil)
	var ae *coordinator.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusRequestEntityTooLarge || !strings.Contains(ae.Msg, coordinator.CodeSQLTooLarge) {
		t.Fatalf("SQL over the limit: %v", err)
	}
	if n, _ := r.rdb.ZCard(context.Background(), "sluice:jobs").Result(); n != 0 {
		t.Fatalf("%d jobs recorded for refused SQL", n)
	}
}
