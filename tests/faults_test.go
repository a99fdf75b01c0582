package tests

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// Fault-injection tests. Each checks every answer against DuckDB as a
// multiset of rows (no duplicate, no missing row). `go test ./tests` runs
// short versions; `make test-faults` (-args -long) the long ones.

func httpGet(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}

// TestFaultCoordinatorCrash kills -9 `sluice coordinator serve` (and its
// in-process functions) at random points of multi-stage jobs and starts
// another against the same Redis and MinIO, which takes the job over once
// the lease expired. Every job completes with DuckDB's answer, and a stage
// finished before a crash is never run again (its tasks' attempts and its
// recorded output stay as they were).
func TestFaultCoordinatorCrash(t *testing.T) {
	r := newRig(t, rigOptions{})
	rng := rand.New(rand.NewPCG(testSeed(t), 1))
	names := []string{"q05", "q03"}
	killsPerJob, jobs := []int{2, 1}, 2
	if *longFlag {
		names = []string{"q05", "q03", "q10", "q07", "q09"}
		killsPerJob, jobs = []int{3}, 20 // and more until 60 kill points
	}
	type qa struct {
		q    query
		want []row
	}
	qs := map[string]qa{}
	co := r.startCoordinator(t)
	// An uninterrupted run of each query: its answer, and how many task
	// commits it takes (the kill points are drawn among them).
	total := map[string]int{}
	for _, n := range names {
		q, want := queryByName(t, r.db, n)
		qs[n] = qa{q, want}
		job := submit(t, co.client(), q.sql)
		compareRows(t, fetch(t, co.client(), job), want, q.ordered)
		total[n] = r.commits(job)
	}
	kills := 0
	for i := 0; i < jobs || (*longFlag && kills < 60); i++ {
		name := names[i%len(names)]
		q := qs[name]
		nk := killsPerJob[i%len(killsPerJob)]
		points := make([]int, nk)
		for k := range points {
			points[k] = rng.IntN(total[name]) // before the last commit: the job is still running
		}
		sort.Ints(points)
		job := submit(t, co.client(), q.q.sql)
		var snaps []map[int]string
		for _, k := range points {
			if !r.waitCommits(t, job, k) {
				break // finished before this point
			}
			time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
			co.kill()
			kills++
			snaps = append(snaps, r.doneStages(job))
			t.Logf("job %d (%s): killed coordinator %s after %d of %d commits (%d stages finished)",
				i, name, co.Owner, r.commits(job), total[name], len(snaps[len(snaps)-1]))
			co = r.startCoordinator(t)
		}
		compareRows(t, fetch(t, co.client(), job), q.want, q.q.ordered)
		checkStageMetrics(t, co.client(), job) // kept across the takeovers
		now := r.doneStages(job)
		for _, snap := range snaps {
			for id, before := range snap {
				if now[id] != before {
					t.Fatalf("job %s: stage %d finished before a crash changed after it:\nbefore %s\nafter  %s", job, id, before, now[id])
				}
			}
		}
	}
	t.Logf("%d kill points, all answers right", kills)
	// What happened is visible: drivers, attempts and retries.
	env := []string{"SLUICE_COORDINATOR=" + co.URL}
	out, errOut, code := runCLI(t, sluiceBin(t), t.TempDir(), env, "jobs", "ls")
	if code != 0 || !strings.Contains(out, "OWNER") || !strings.Contains(out, "ATTEMPTS") || !strings.Contains(out, "RETRIES") {
		t.Fatalf("sluice jobs ls: %s%s", out, errOut)
	}
	job := strings.Fields(strings.Split(out, "\n")[1])[0]
	out, errOut, code = runCLI(t, sluiceBin(t), t.TempDir(), env, "jobs", "show", job)
	if code != 0 || !strings.Contains(out, "coordinator: ") || !strings.Contains(out, "attempts") {
		t.Fatalf("sluice jobs show: %s%s", out, errOut)
	}
	t.Logf("sluice jobs show %s:\n%s", job, out)
	co.kill()
}

// TestFaultCoordinatorsRace runs two coordinators against the same Redis
// while a chaos loop keeps dropping the leases of running jobs (as if they
// expired): both coordinators keep taking jobs over from each other
// mid-stage, the fence moving on each time. Every answer is right.
func TestFaultCoordinatorsRace(t *testing.T) {
	r := newRig(t, rigOptions{})
	rng := rand.New(rand.NewPCG(testSeed(t), 2))
	a, b := r.startCoordinator(t), r.startCoordinator(t)
	names := []string{"q05", "q03", "q10"}
	n := 6
	if *longFlag {
		names = append(names, "q07", "q09", "q18", "q21")
		n = 14
	}
	type sub struct {
		job  string
		q    query
		want []row
	}
	// A dropped lease changes hands only when the driver's next renewal
	// (a third of the 1 s lease) comes before its job ends; jobs of a
	// fraction of a second can outrun every drop of a round (more so
	// since a result stage that only gathers is elided). Leases are
	// dropped every 10-50 ms, at most maxDrops times a job; a round
	// without a takeover checks nothing,
	// so the test runs another, up to five.
	for round := 1; ; round++ {
		var subs []sub
		for i := 0; i < n; i++ {
			q, want := queryByName(t, r.db, names[i%len(names)])
			co := a
			if i%2 == 1 {
				co = b
			}
			subs = append(subs, sub{submit(t, co.client(), q.sql), q, want})
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		steals := 0
		// Each takeover abandons the attempts in flight (they count
		// against the task's cap of attempts of any fate, 140), so a job
		// whose stages take longer than the gap between drops, as on a
		// loaded machine, would never finish: each job loses its lease at
		// most maxDrops times, then is left to finish.
		const maxDrops = 12
		dropped := map[string]int{}
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Duration(10+rng.IntN(40)) * time.Millisecond):
				}
				s := subs[rng.IntN(len(subs))]
				if dropped[s.job] >= maxDrops {
					continue
				}
				if r.rdb.Del(ctx, "sluice:{"+s.job+"}:lease").Val() > 0 {
					steals++
					dropped[s.job]++
				}
			}
		}()
		for i, s := range subs {
			cl := a.client()
			if i%2 == 1 {
				cl = b.client()
			}
			compareRows(t, fetch(t, cl, s.job), s.want, s.q.ordered)
		}
		close(stop)
		wg.Wait()
		fences := 0
		for _, s := range subs {
			f, _ := r.rdb.Get(context.Background(), "sluice:{"+s.job+"}:fence").Int()
			fences += f
		}
		t.Logf("round %d: %d jobs, %d leases dropped, %d drivers in all (fences), stale state changes rejected: a %v, b %v",
			round, len(subs), steals, fences, metric(t, a.URL, "sluice_stale_fence_rejections_total"), metric(t, b.URL, "sluice_stale_fence_rejections_total"))
		if fences > len(subs) {
			return
		}
		if round == 5 {
			t.Fatalf("no job changed hands in %d rounds (%d drivers for %d jobs in the last)", round, fences, len(subs))
		}
	}
}

// TestFaultPausedCoordinator SIGSTOPs a coordinator mid-job past its
// lease; another takes the job over and finishes it; then the paused one
// is resumed: its functions report back and its commits carry the old
// fence, so they are rejected: the job's state in Redis does not change
// and the answer stays right.
func TestFaultPausedCoordinator(t *testing.T) {
	r := newRig(t, rigOptions{})
	q, want := queryByName(t, r.db, "q05")
	rounds := 1
	if *longFlag {
		rounds = 4
	}
	// a invokes HTTP functions (other processes, not paused with it):
	// their answers wait in its sockets while it is stopped, so that once
	// resumed it tries to commit them with its old fence.
	bin := sluiceBin(t)
	f1 := startProc(t, bin, r.env, "function", "serve", "--addr", "127.0.0.1:0")
	f2 := startProc(t, bin, r.env, "function", "serve", "--addr", "127.0.0.1:0")
	stale := 0.0
	for i := 0; i < rounds; i++ {
		a := r.startCoordinator(t, "--function-url", f1, "--function-url", f2)
		job := submit(t, a.client(), q.sql)
		r.waitCommits(t, job, 3+i*4)
		a.signal(syscall.SIGSTOP)
		b := r.startCoordinator(t)
		compareRows(t, fetch(t, b.client(), job), want, q.ordered)
		before := r.jobKeys(job)
		a.signal(syscall.SIGCONT)
		// Wait for a to notice it lost the job (it stops driving it).
		for deadline := time.Now().Add(time.Minute); ; {
			if metric(t, a.URL, "sluice_jobs_driving") == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the resumed coordinator still drives the job a minute later")
			}
			time.Sleep(20 * time.Millisecond)
		}
		if after := r.jobKeys(job); after != before {
			t.Fatalf("the resumed coordinator changed the job:\n%s", lineDiff(before, after))
		}
		compareRows(t, fetch(t, a.client(), job), want, q.ordered)
		n := metric(t, a.URL, "sluice_stale_fence_rejections_total")
		stale += n
		t.Logf("round %d: resumed coordinator: %v state changes rejected as stale; attempts: %s", i, n, attemptsLine(t, a.URL))
		a.kill()
		b.kill()
	}
	t.Logf("%v late state changes rejected in all", stale)
}

// lineDiff shows the lines of a and b that differ (each cut to 300 bytes).
func lineDiff(a, b string) string {
	cut := func(s string) string {
		if len(s) > 300 {
			return s[:300] + "..."
		}
		return s
	}
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if !mb[l] {
			out = append(out, "- "+cut(l))
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !ma[l] {
			out = append(out, "+ "+cut(l))
		}
	}
	return strings.Join(out, "\n")
}

// TestFaultFunctions injects function faults at a configurable rate into
// an embedded stack (coordinator.FaultInvoker): crashes (before running or
// part way, leaving partial output), hangs past the task deadline (or
// overtaken by a hedged duplicate), transient errors, duplicate
// executions and reports of one attempt, and input shuffle objects deleted
// or corrupted just before a task reads them (the producer runs again).
// Answers match DuckDB: no duplicate or missing rows. The same faults are
// then injected into a `coordinator serve` process with --faults.
func TestFaultFunctions(t *testing.T) {
	r := newRig(t, rigOptions{})
	seed := testSeed(t)
	rates := "crash=0.04,hang=0.02,error=0.04,duplicate=0.04,lose=0.03,corrupt=0.03"
	names := []string{"q03", "q05", "q10", "q12", "q01"}
	if *longFlag {
		rates = "crash=0.06,hang=0.03,error=0.06,duplicate=0.06,lose=0.05,corrupt=0.05"
		names = nil
		for _, q := range tpchQueries(t) {
			names = append(names, q.name)
		}
	}
	fc, err := coordinator.ParseFaults(fmt.Sprintf("%s,seed=%d", rates, seed))
	if err != nil {
		t.Fatal(err)
	}
	direct, err := objstore.Open(context.Background(), objstore.Config{S3: r.s3Config(r.minio.Endpoint)})
	if err != nil {
		t.Fatal(err)
	}
	var fi *coordinator.FaultInvoker
	st := r.stack(t, func(o *local.Options) {
		o.Coordinator.TaskTimeout = 5 * time.Second
		o.Coordinator.HedgeFactor = 3
		o.Coordinator.HedgeAfter = 300 * time.Millisecond
		o.Coordinator.MaxAttempts = 8
		o.WrapInvoker = func(inv coordinator.Invoker) coordinator.Invoker {
			fi = coordinator.NewFaultInvoker(inv, direct, fc)
			return fi
		}
	})
	cl := coordinator.NewClient(st.APIURL, "")
	// The faults are drawn per invocation; a few packed small queries make
	// few invocations (about a dozen a round), and a lost or corrupted
	// input drawn for a leaf scan has nothing to damage, so a round can
	// inject nothing. Run the queries again, answers checked every time,
	// until a fault was injected: at most eight rounds (a round is about
	// a second; all eight empty is below one seed in 10^5).
	var injected int64
	for round := 0; round < 8 && injected == 0; round++ {
		for _, n := range names {
			q, want := queryByName(t, r.db, n)
			t.Run(n, func(t *testing.T) {
				compareRows(t, fetch(t, cl, submit(t, cl, q.sql)), want, q.ordered)
			})
		}
		fi.Wait()
		injected = 0
		for _, v := range fi.Injected() {
			injected += v
		}
	}
	m := st.Coordinator.Metrics()
	t.Logf("embedded stack: faults injected: %s; hedges %v, input repairs %v, retries %v", fi,
		counter(m.Hedges), counter(m.InputRepairs), counter(m.Retries))
	if injected == 0 {
		t.Fatal("no fault injected in eight rounds of the queries")
	}

	t.Run("process", func(t *testing.T) {
		co := r.startCoordinator(t, "--faults", fmt.Sprintf("%s,seed=%d", rates, seed+1), "--task-timeout", "5s",
			"--hedge-factor", "3", "--hedge-after", "300ms", "--max-attempts", "8")
		for _, n := range []string{"q05", "q03"} {
			q, want := queryByName(t, r.db, n)
			compareRows(t, fetch(t, co.client(), submit(t, co.client(), q.sql)), want, q.ordered)
		}
		t.Logf("coordinator process: attempts %s", attemptsLine(t, co.URL))
	})
}

// attemptsLine summarizes sluice_task_attempts_total by outcome.
func attemptsLine(t *testing.T, url string) string {
	body, err := httpGet(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "sluice_task_attempts_total{") && !strings.HasSuffix(l, " 0") {
			parts = append(parts, strings.TrimPrefix(l, "sluice_task_attempts_total"))
		}
	}
	return strings.Join(parts, " ")
}

func counter(c prometheus.Counter) float64 {
	var m dto.Metric
	_ = c.Write(&m)
	return m.GetCounter().GetValue()
}

// TestFaultS3 puts a fault proxy between sluice and MinIO: 503 SlowDown
// answers, connection resets and latency on a share of the requests; then
// restarts MinIO in the middle of jobs. Answers match DuckDB.
func TestFaultS3(t *testing.T) {
	seed := testSeed(t)
	r := newRig(t, rigOptions{proxy: true, seed: seed})
	names := []string{"q01", "q03", "q05"}
	restarts := 1
	r.proxy.set(0.05, 0.02, 0.2, 20*time.Millisecond)
	if *longFlag {
		names = []string{"q01", "q03", "q05", "q07", "q09", "q10", "q18", "q21"}
		restarts = 4
		r.proxy.set(0.1, 0.03, 0.3, 50*time.Millisecond)
	}
	st := r.stack(t, func(o *local.Options) { o.Coordinator.MaxAttempts = 8 })
	cl := coordinator.NewClient(st.APIURL, "")
	for _, n := range names {
		q, want := queryByName(t, r.db, n)
		t.Run(n, func(t *testing.T) {
			compareRows(t, fetch(t, cl, submit(t, cl, q.sql)), want, q.ordered)
		})
	}
	// The faults are drawn at random per request (a reset for 2% of them):
	// a run of few requests may draw none of a kind, so queries go on until
	// both kinds were injected (each answer still checked).
	for round := 0; (r.proxy.count("slowdown") == 0 || r.proxy.count("reset") == 0) && round < 20; round++ {
		q, want := queryByName(t, r.db, names[round%len(names)])
		t.Run(fmt.Sprintf("more/%s", q.name), func(t *testing.T) {
			compareRows(t, fetch(t, cl, submit(t, cl, q.sql)), want, q.ordered)
		})
	}
	t.Logf("S3 proxy: %s; coordinator: S3 errors seen %s", r.proxy, s3ErrorsLine(t, st.APIURL))
	if r.proxy.count("slowdown") == 0 || r.proxy.count("reset") == 0 {
		t.Fatal("the proxy injected no fault")
	}

	r.proxy.set(0, 0, 0, 0)
	rng := rand.New(rand.NewPCG(seed, 3))
	q, want := queryByName(t, r.db, "q05")
	for i := 0; i < restarts; i++ {
		job := submit(t, cl, q.sql)
		r.waitCommits(t, job, 1+rng.IntN(8))
		began := time.Now()
		if err := r.minio.Restart(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Logf("MinIO restarted mid-job in %v", time.Since(began).Round(time.Millisecond))
		compareRows(t, fetch(t, cl, job), want, q.ordered)
	}
}

func s3ErrorsLine(t *testing.T, url string) string {
	body, err := httpGet(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "sluice_s3_errors_total{") {
			parts = append(parts, strings.TrimPrefix(l, "sluice_s3_errors_total"))
		}
	}
	return strings.Join(parts, " ")
}

// TestFaultRedisRestart restarts a real redis-server in the middle of jobs.
// With persistence (AOF, fsync always) coordinators and functions wait
// through the outage and carry on: the answer is right. Without
// persistence the job's state is lost with Redis: the job fails clearly
// (its status says it is unknown) and its coordinator stops driving it
// instead of hanging.
func TestFaultRedisRestart(t *testing.T) {
	seed := testSeed(t)
	t.Run("persistent", func(t *testing.T) {
		r := newRig(t, rigOptions{persistentRedis: true})
		st := r.stack(t, nil)
		cl := coordinator.NewClient(st.APIURL, "")
		rng := rand.New(rand.NewPCG(seed, 4))
		q, want := queryByName(t, r.db, "q05")
		rounds := 2
		if *longFlag {
			rounds = 8
		}
		for i := 0; i < rounds; i++ {
			job := submit(t, cl, q.sql)
			r.waitCommits(t, job, 1+rng.IntN(10))
			r.redis.Kill()
			outage := time.Duration(200+rng.IntN(1500)) * time.Millisecond
			if *longFlag {
				outage = time.Duration(500+rng.IntN(4500)) * time.Millisecond
			}
			time.Sleep(outage)
			if err := r.redis.Restart(context.Background()); err != nil {
				t.Fatal(err)
			}
			compareRows(t, fetch(t, cl, job), want, q.ordered)
			t.Logf("round %d: Redis down %v mid-job; answer right", i, outage)
		}
		t.Logf("Redis errors met by the coordinator: %s", redisErrorsLine(t, st.APIURL))
	})
	t.Run("volatile", func(t *testing.T) {
		r := newRig(t, rigOptions{})
		st := r.stack(t, nil)
		cl := coordinator.NewClient(st.APIURL, "")
		q, _ := queryByName(t, r.db, "q05")
		job := submit(t, cl, q.sql)
		r.waitCommits(t, job, 2)
		if err := r.redis.Restart(context.Background()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := cl.Wait(ctx, job, nil)
		if err == nil || !strings.Contains(err.Error(), "not found") {
			t.Fatalf("waiting for a job whose state Redis lost: %v, want a clear 'not found'", err)
		}
		for deadline := time.Now().Add(time.Minute); st.Coordinator.Driving(job); {
			if time.Now().After(deadline) {
				t.Fatal("the coordinator still drives a job whose state is gone")
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("job state lost with Redis: client error %q; coordinator stopped driving it", err)
	})
}

func redisErrorsLine(t *testing.T, url string) string {
	body, err := httpGet(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "sluice_redis_errors_total{") {
			parts = append(parts, strings.TrimPrefix(l, "sluice_redis_errors_total"))
		}
	}
	return strings.Join(parts, " ")
}
