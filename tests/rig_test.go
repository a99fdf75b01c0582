package tests

import (
	"context"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/function/redisdb"
	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/local/minioserver"
	"github.com/sluicedb/sluice/local/redisserver"
	"github.com/sluicedb/sluice/local/tpch"
	"github.com/sluicedb/sluice/planner/catalog"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

var (
	longFlag = flag.Bool("long", false, "run the long versions of the fault-injection and load tests (make test-faults)")
	seedFlag = flag.Uint64("seed", 0, "seed of the fault tests' random choices (0: from the clock; logged)")
)

// testSeed returns the seed of a test's random choices, logged so that a
// failure can be replayed with -seed.
func testSeed(t *testing.T) uint64 {
	s := *seedFlag
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -args -seed %d)", s, s)
	return s
}

var sluiceBinary struct {
	once sync.Once
	path string
	err  error
}

// sluiceBin builds the sluice binary once per test process.
func sluiceBin(t *testing.T) string {
	t.Helper()
	sluiceBinary.once.Do(func() {
		dir, err := filepath.Abs(filepath.Join("..", ".tmp", "test-bin"))
		if err == nil {
			err = os.MkdirAll(dir, 0o755)
		}
		if err != nil {
			sluiceBinary.err = err
			return
		}
		sluiceBinary.path = filepath.Join(dir, "sluice")
		out, err := exec.Command("go", "build", "-o", sluiceBinary.path, "../cmd/sluice").CombinedOutput()
		if err != nil {
			sluiceBinary.err = fmt.Errorf("build sluice: %v\n%s", err, out)
		}
	})
	if sluiceBinary.err != nil {
		t.Fatal(sluiceBinary.err)
	}
	return sluiceBinary.path
}

// rig is the infrastructure of a fault test: a real redis-server, MinIO
// (optionally behind an S3 fault proxy), the TPC-H tables uploaded and
// registered, and DuckDB over the same files.
type rig struct {
	redis    *redisserver.Server
	minio    *minioserver.Server
	proxy    *s3FaultProxy
	endpoint string // what sluice talks to: MinIO or the proxy
	env      []string
	rdb      *redis.Client
	db       *sql.DB
	dir      string
}

type rigOptions struct {
	persistentRedis bool
	redisPassword   string
	redisTLS        *redisserver.TLSFiles // CA in TLS.CA: processes trust it through SSL_CERT_FILE
	proxy           bool
	seed            uint64
}

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	ctx := context.Background()
	r := &rig{dir: dataDir(t, *sfFlag)}
	var err error
	r.redis, err = redisserver.StartWith(ctx, redisserver.Options{Persistent: o.persistentRedis, Password: o.redisPassword, TLS: o.redisTLS})
	if errors.Is(err, redisserver.ErrNotInstalled) && os.Getenv("CI") == "" {
		t.Skip("redis-server not installed; .ci/run installs it")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.redis.Stop)
	r.minio, err = minioserver.Start(ctx, minioserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.minio.Stop() })
	r.endpoint = r.minio.Endpoint
	if o.proxy {
		r.proxy = newS3FaultProxy(t, r.minio.Endpoint, o.seed)
		r.endpoint = r.proxy.Endpoint
	}
	ropts, err := redis.ParseURL(r.redis.URL)
	if err != nil {
		t.Fatal(err)
	}
	if o.redisTLS != nil {
		pem, err := os.ReadFile(o.redisTLS.CA)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		ropts.TLSConfig.RootCAs = pool
	}
	r.rdb = redis.NewClient(ropts)
	t.Cleanup(func() { r.rdb.Close() })
	// Load the tables straight into MinIO (no faults while loading).
	b, err := objstore.Open(ctx, objstore.Config{S3: r.s3Config(r.minio.Endpoint)})
	if err != nil {
		t.Fatal(err)
	}
	if err := objstore.EnsureBucket(ctx, b); err != nil {
		t.Fatal(err)
	}
	cat := catalog.NewStore(r.rdb)
	for _, table := range tpch.Tables() {
		files, _ := filepath.Glob(filepath.Join(r.dir, table, "*.parquet"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Put(ctx, "tables/"+table+"/"+filepath.Base(f), data); err != nil {
				t.Fatal(err)
			}
		}
		tbl, err := catalog.Inspect(ctx, b, table, "tables/"+table+"/")
		if err != nil {
			t.Fatal(err)
		}
		if err := cat.Put(ctx, tbl); err != nil {
			t.Fatal(err)
		}
	}
	r.env = []string{"SLUICE_S3_ENDPOINT=" + r.endpoint, "SLUICE_S3_BUCKET=sluice",
		"AWS_ACCESS_KEY_ID=" + r.minio.AccessKey, "AWS_SECRET_ACCESS_KEY=" + r.minio.SecretKey,
		"SLUICE_REDIS_URL=" + r.redis.URL}
	if o.redisTLS != nil {
		r.env = append(r.env, "SSL_CERT_FILE="+o.redisTLS.CA)
	}
	r.db = openDuck(t, r.dir)
	return r
}

func (r *rig) s3Config(endpoint string) objstore.S3Config {
	return objstore.S3Config{Endpoint: endpoint, AccessKey: r.minio.AccessKey, SecretKey: r.minio.SecretKey,
		Bucket: "sluice", Region: "us-east-1"}
}

// stack starts an embedded stack (in-process coordinator and functions)
// on the rig's Redis and S3 endpoint.
func (r *rig) stack(t *testing.T, mod func(*local.Options)) *local.Stack {
	t.Helper()
	opts := local.DefaultOptions()
	opts.RedisURL = r.redis.URL
	opts.S3 = r.s3Config(r.endpoint)
	opts.Partitions = 4
	opts.Coordinator.SplitBytes = 256 << 10
	opts.Coordinator.RetryBackoff = 50 * time.Millisecond
	if mod != nil {
		mod(&opts)
	}
	st, err := local.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// proc is a `sluice coordinator serve` process.
type proc struct {
	*process
	URL   string
	Owner string
	log   string
}

// startCoordinator starts `sluice coordinator serve` on the rig with a 1s
// lease and in-process functions (killing the process kills them too).
func (r *rig) startCoordinator(t *testing.T, args ...string) *proc {
	t.Helper()
	return r.startCoordinatorEnv(t, nil, args...)
}

// startCoordinatorEnv is startCoordinator with more environment.
func (r *rig) startCoordinatorEnv(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	level := "info"
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--log-level" { // a global flag: it goes first
			level = args[i+1]
			args = append(args[:i:i], args[i+2:]...)
			break
		}
	}
	full := append([]string{"--log-level", level, "coordinator", "serve", "--addr", "127.0.0.1:0", "--lease", "1s",
		"--functions", "2", "--partitions", "4", "--split-bytes", "262144", "--retry-backoff", "50ms"}, args...)
	logf, err := os.CreateTemp(t.TempDir(), "coordinator-*.log")
	if err != nil {
		t.Fatal(err)
	}
	proc0, out := launch(t, sluiceBin(t), launchOptions{env: environ(append(append([]string(nil), r.env...), env...)...),
		stderr: logf, pdeathsig: true, onExit: func() { logf.Close() }}, full...)
	p := &proc{process: proc0, log: logf.Name()}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() { // what the coordinator did is the first thing a failure needs
			b, _ := os.ReadFile(p.log)
			lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
			t.Logf("coordinator %s log (last %d of %d lines):\n%s", p.Owner, min(len(lines), 80), len(lines),
				strings.Join(lines[max(0, len(lines)-80):], "\n"))
		}
	})
	l, ok := p.waitLine(out, "http://", 60*time.Second)
	select {
	case <-p.exited:
		if !ok {
			b, _ := os.ReadFile(p.log)
			t.Fatalf("coordinator exited at start:\n%s", b)
		}
	default:
	}
	if !ok {
		t.Fatal("coordinator did not start")
	}
	// "coordinator OWNER serving http://ADDR"
	f := strings.Fields(l)
	p.Owner, p.URL = f[1], f[len(f)-1]
	return p
}

func (p *proc) client() *coordinator.Client { return coordinator.NewClient(p.URL, "") }

// metric reads one sample of the process's /metrics ("" labels: the
// first sample of the family).
func metric(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := httpGet(url + "/metrics")
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	for _, l := range strings.Split(resp, "\n") {
		if strings.HasPrefix(l, name+" ") || strings.HasPrefix(l, name+"{") {
			f := strings.Fields(l)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			return v
		}
	}
	t.Fatalf("metric %s not found", name)
	return 0
}

// graph reads a job's current plan from Redis.
func (r *rig) graph(job string) *plan.Graph {
	var g plan.Graph
	s, _ := r.rdb.HGet(context.Background(), redisdb.JobKey(job), "graph").Result()
	_ = json.Unmarshal([]byte(s), &g)
	return &g
}

// commits returns how many tasks of job are committed now.
func (r *rig) commits(job string) int {
	ctx := context.Background()
	n := 0
	for _, st := range r.graph(job).Stages {
		d, _ := r.rdb.HGet(ctx, redisdb.StageKey(job, st.ID), "done").Int()
		n += d
	}
	return n
}

func (r *rig) jobState(job string) string {
	s, _ := r.rdb.HGet(context.Background(), redisdb.JobKey(job), "state").Result()
	return s
}

// waitCommits waits until at least k tasks of job are committed; false
// when the job ended first.
func (r *rig) waitCommits(t *testing.T, job string, k int) bool {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		if coordinator.Terminal(r.jobState(job)) {
			return false
		}
		if r.commits(job) >= k {
			return true
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("job %s: %d tasks never committed", job, k)
	return false
}

// doneStages describes every finished stage of job: its recorded output
// statistics and each of its tasks' attempts and committed result. A finished stage that is not run
// again describes itself the same later.
func (r *rig) doneStages(job string) map[int]string {
	ctx := context.Background()
	out := map[int]string{}
	for _, st := range r.graph(job).Stages {
		sm, _ := r.rdb.HGetAll(ctx, redisdb.StageKey(job, st.ID)).Result()
		if sm["state"] != string(coordinator.StageDone) {
			continue
		}
		n, _ := strconv.Atoi(sm["tasks"])
		var b strings.Builder
		b.WriteString(sm["output"])
		for task := 0; task < n; task++ {
			tm, _ := r.rdb.HGetAll(ctx, redisdb.TaskKey(job, st.ID, task)).Result()
			// The committed result names the task's objects (the stage's
			// record holds only statistics).
			fmt.Fprintf(&b, " t%d:a%s/c%s %s", task, tm["attempts"], tm["committed"], tm["result"])
		}
		out[st.ID] = b.String()
	}
	return out
}

// jobKeys renders every Redis key of a job but its lease.
func (r *rig) jobKeys(job string) string {
	ctx := context.Background()
	keys, _ := r.rdb.Keys(ctx, redisdb.JobKeys(job)).Result()
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		// The lease moves; the cost report counts a stale driver's
		// invocations too (they were paid for): neither is job state.
		if strings.HasSuffix(k, ":lease") || strings.HasSuffix(k, ":cost") {
			continue
		}
		switch r.rdb.Type(ctx, k).Val() {
		case "hash":
			j, _ := json.Marshal(r.rdb.HGetAll(ctx, k).Val())
			b.WriteString(k + "=" + string(j) + "\n")
		case "string":
			b.WriteString(k + "=" + r.rdb.Get(ctx, k).Val() + "\n")
		case "list":
			b.WriteString(k + "=" + strings.Join(r.rdb.LRange(ctx, k, 0, -1).Val(), ",") + "\n")
		}
	}
	return b.String()
}

// fetch waits for a job through a coordinator and returns its rows.
func fetch(t *testing.T, cl *coordinator.Client, job string) []row {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	js, err := cl.Wait(ctx, job, nil)
	if err != nil {
		t.Fatalf("wait for job %s: %v", job, err)
	}
	if js.State != coordinator.StateSucceeded {
		t.Fatalf("job %s %s: %s", job, js.State, js.Error)
	}
	schema, recs, err := cl.Result(ctx, job)
	if err != nil {
		t.Fatalf("result of job %s: %v", job, err)
	}
	res := &local.Result{Job: job, Schema: schema, Records: recs}
	defer res.Release()
	return sluiceRows(res)
}

func submit(t *testing.T, cl *coordinator.Client, sql string) string {
	t.Helper()
	on := true
	job, err := cl.Submit(context.Background(), sql, &on)
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	return job
}

// queryByName returns TPC-H query name ("q05") with DuckDB's answer.
func queryByName(t *testing.T, db *sql.DB, name string) (query, []row) {
	t.Helper()
	for _, q := range tpchQueries(t) {
		if q.name == name {
			return q, duckRows(t, db, q.sql)
		}
	}
	t.Fatalf("no query %s", name)
	return query{}, nil
}
