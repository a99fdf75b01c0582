package sim

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/coordinator/sqlsession"
	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/catalog"
)

// Options configure a simulation.
type Options struct {
	// SF is the TPC-H scale factor of the virtual tables.
	SF float64
	// Factor compresses simulated time (Clock).
	Factor float64
	// RedisURL is the Redis to use (a real redis-server); empty: the
	// caller must start one (Run does not).
	RedisAddr string
	// Coordinator is the coordinator's configuration before its timers
	// are scaled; Concurrency is the invoker's slots (the in-flight
	// invocations the coordinator allows itself).
	Coordinator coordinator.Config
	Platform    PlatformConfig
	Store       StoreConfig
	// Partitions overrides the planner's hash partitions per exchange
	// (0: from the estimates).
	Partitions int
	// RealFloor bounds the deadlines and the lease from below in real
	// time (Clock.ScaleConfig); 0: RealFloor(Concurrency, cores).
	RealFloor time.Duration
	Log       *slog.Logger
}

// Query is one query to run.
type Query struct {
	Name, SQL string
}

// QueryReport is what one query did, in simulated time.
type QueryReport struct {
	Name  string
	Job   string
	State string
	Error string
	// Latency is simulated (the wall time times the factor); Wall is real.
	Latency, Wall time.Duration
	Tasks         int64 // tasks the functions ran (attempts)
	Functions     int64 // invocations that ran
	PeakConc      int   // invocations in flight at once
	Throttled     int64 // Lambda 429s
	// LimitMin is the coordinator's lowest effective concurrency limit
	// while the query ran (sampled every 100 ms, and at its end; the
	// configured slots unless the platform throttled), Limit the one at
	// its end.
	LimitMin, Limit int
	SlowDowns       int64 // S3 503s
	Retries         int64 // task attempts the coordinator retried
	Hedges          int64
	Crashes         int64
	Stragglers      int64
	Gets, Puts      int64
	PeakGet         PrefixPeak
	PeakPut         PrefixPeak
	RedisCmds       int64
	// RedisPeakOps is the most commands Redis ran in one real second:
	// what the real coordinator put on it (its work is not compressed).
	RedisPeakOps float64
	// Sustained is the most invocations in flight throughout one real
	// second (the peak of one-second minimums).
	Sustained int
	// CPU is the coordinator's (this process less ModelCPU, the models'
	// measured per thread; the Go runtime's GC of the models' garbage is
	// counted as the coordinator's).
	CPU       time.Duration
	ModelCPU  time.Duration
	RedisCPU  time.Duration // redis-server
	RSS       int64         // peak resident set of this process while the query ran
	RedisMem  int64         // peak of redis-server's used_memory while the query ran
	GBSeconds float64
	Dollars   float64
	Splits    int // S3 prefix splits
}

// Sim is a running simulation: redis, the models, a coordinator.
type Sim struct {
	opts     Options
	Clock    *Clock
	Store    *Store
	Platform *Platform
	Invoker  *coordinator.LambdaInvoker
	Co       *coordinator.Coordinator
	// Jobs is the coordinator's job store (task and stage records).
	Jobs   *coordinator.Store
	Tables []*catalog.Table
	rdb    *redis.Client
	load   *redisLoad // the round trips in flight on rdb
	prices coordinator.Prices
}

// New registers the virtual tables and starts a coordinator over the
// models. Close stops it.
func New(ctx context.Context, opts Options) (*Sim, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	clock := NewClock(opts.Factor)
	store := NewStore(opts.Store, clock)
	conc := max(opts.Coordinator.Concurrency, 1)
	rdb := redis.NewClient(&redis.Options{Addr: opts.RedisAddr, PoolSize: conc + 64})
	load := &redisLoad{}
	rdb.AddHook(load) // first: outermost, so it counts the wait for a connection too
	if err := rdb.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("redis %s: %w", opts.RedisAddr, err)
	}
	floor := opts.RealFloor
	if floor <= 0 {
		floor = RealFloor(conc, runtime.NumCPU())
	}
	tables, err := TPCHTables(opts.SF)
	if err != nil {
		return nil, err
	}
	cat := catalog.NewStore(rdb)
	var tf []*TableFiles
	for _, t := range tables {
		if err := cat.Put(ctx, t); err != nil {
			return nil, err
		}
		for _, f := range t.Files {
			store.PutSized(f.Key, f.Size)
		}
		tf = append(tf, &TableFiles{Name: t.Name, Columns: len(t.Columns), Files: t.Files})
	}
	platform := NewPlatform(opts.Platform, clock, store, tf, TPCHStats{SF: opts.SF})
	inv, err := coordinator.NewLambdaInvoker(ctx, coordinator.LambdaConfig{
		FunctionName: "sluice", Endpoints: []string{"http://lambda.sim"}, Region: "us-east-1",
		Concurrency: conc, HTTPClient: platform.HTTPClient(), Bucket: store,
		Credentials: credentials.NewStaticCredentialsProvider("sim", "sim", ""),
		Timeout:     max(clock.Real(15*time.Minute), floor),
		Backoff:     max(clock.Real(100*time.Millisecond), time.Millisecond),
		MaxBackoff:  max(clock.Real(5*time.Second), time.Millisecond),
	})
	if err != nil {
		rdb.Close()
		return nil, err
	}
	cfg := clock.ScaleConfig(opts.Coordinator, floor)
	cfg.Concurrency = conc
	cfg.Retention, cfg.GCInterval = 0, 0
	session := &sqlsession.Session{Catalog: cat, Options: planner.Options{Partitions: opts.Partitions, TaskBytes: planner.TaskBytesFor(cfg.FunctionMemory)}}
	jobs := coordinator.NewStore(rdb)
	co := coordinator.New(cfg, jobs, store, session, cat, inv, opts.Log)
	return &Sim{opts: opts, Clock: clock, Store: store, Platform: platform, Invoker: inv, Co: co, Jobs: jobs, Tables: tables,
		rdb: rdb, load: load, prices: cfg.Prices}, nil
}

// Close stops the coordinator.
func (s *Sim) Close() {
	s.Co.Close()
	_ = s.rdb.Close()
}

// counterValue reads a Prometheus counter.
func counterValue(c prometheus.Counter) int64 {
	var m dto.Metric
	if c.Write(&m) != nil || m.Counter == nil {
		return 0
	}
	return int64(m.Counter.GetValue())
}

// redisInfo returns fields of INFO's stats and cpu sections.
func (s *Sim) redisInfo(ctx context.Context) map[string]string {
	out := map[string]string{}
	txt, err := s.rdb.Info(ctx, "stats", "cpu", "memory").Result()
	if err != nil {
		return out
	}
	for _, line := range strings.Split(txt, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out
}

func infoInt(m map[string]string, k string) int64 {
	n, _ := strconv.ParseInt(m[k], 10, 64)
	return n
}

func infoSeconds(m map[string]string, keys ...string) time.Duration {
	var t float64
	for _, k := range keys {
		f, _ := strconv.ParseFloat(m[k], 64)
		t += f
	}
	return time.Duration(t * float64(time.Second))
}

// threadCPU is the CPU time of the calling OS thread (Linux's
// RUSAGE_THREAD; 0 elsewhere). The caller locks its goroutine to the
// thread.
func threadCPU() time.Duration {
	const rusageThread = 1
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rss is this process's resident set, from /proc (0 elsewhere).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// sample records, every 100 ms until done, the peak of Redis's commands
// per real second and of the invocations in flight throughout a second,
// and this process's RSS.
func (s *Sim) sample(ctx context.Context, r *QueryReport, cmds0 int64, done <-chan struct{}) {
	type point struct {
		at      time.Time
		cmds    int64
		running int
	}
	pts := []point{{time.Now(), cmds0, s.Platform.Running()}}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		r.RSS = max(r.RSS, rss())
		r.LimitMin = min(r.LimitMin, s.Co.ConcurrencyLimitLow())
		info := s.redisInfo(ctx)
		r.RedisMem = max(r.RedisMem, infoInt(info, "used_memory"))
		n := infoInt(info, "total_commands_processed")
		if n < pts[len(pts)-1].cmds {
			continue // INFO failed
		}
		now := point{time.Now(), n, s.Platform.Running()}
		pts = append(pts, now)
		// Drop points older than needed: keep the newest one at least a
		// second old.
		for len(pts) > 2 && now.at.Sub(pts[1].at) >= time.Second {
			pts = pts[1:]
		}
		if el := now.at.Sub(pts[0].at); el >= time.Second {
			r.RedisPeakOps = max(r.RedisPeakOps, float64(now.cmds-pts[0].cmds)/el.Seconds())
			low := now.running
			for _, p := range pts {
				low = min(low, p.running)
			}
			r.Sustained = max(r.Sustained, low)
		}
	}
}

// Run runs one query to its end and reports it.
func (s *Sim) Run(ctx context.Context, q Query) QueryReport {
	r := QueryReport{Name: q.Name}
	m := s.Co.Metrics()
	st0, pl0, lam0 := s.Store.Stats(), s.Platform.Stats(), s.Invoker.Stats()
	retries0, hedges0 := counterValue(m.Retries), counterValue(m.Hedges)
	info0 := s.redisInfo(ctx)
	s.Store.TakePeaks()
	s.Platform.ResetPeak()
	r.LimitMin, _ = s.Co.ConcurrencyLimit()
	s.Co.ConcurrencyLimitLow() // the next period starts here
	runtime.GC()
	cpu0 := processCPU()
	began := time.Now()

	// Sample Redis's command count, the invocations in flight and this
	// process's RSS while the query runs.
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.sample(ctx, &r, infoInt(info0, "total_commands_processed"), done)
	}()
	job, err := s.Co.Submit(ctx, q.SQL, coordinator.SubmitOptions{})
	r.Job = job
	if err == nil {
		var rec *coordinator.JobRecord
		rec, err = s.Co.Wait(ctx, job)
		if err == nil {
			r.State, r.Error = string(rec.State), rec.Error
		}
	}
	if err != nil {
		r.State, r.Error = "failed", err.Error()
	}
	close(done)
	wg.Wait()
	r.Wall = time.Since(began)
	r.Latency = s.Clock.Sim(r.Wall)
	st, pl, lam := s.Store.Stats(), s.Platform.Stats(), s.Invoker.Stats()
	r.ModelCPU = pl.ModelCPU - pl0.ModelCPU
	r.CPU = processCPU() - cpu0 - r.ModelCPU
	r.RSS = max(r.RSS, rss())
	r.Limit, _ = s.Co.ConcurrencyLimit()
	r.LimitMin = min(r.LimitMin, r.Limit, s.Co.ConcurrencyLimitLow())
	info := s.redisInfo(ctx)
	r.RedisMem = max(r.RedisMem, infoInt(info, "used_memory"))
	r.RedisCmds = infoInt(info, "total_commands_processed") - infoInt(info0, "total_commands_processed") - 1
	r.RedisCPU = infoSeconds(info, "used_cpu_sys", "used_cpu_user") - infoSeconds(info0, "used_cpu_sys", "used_cpu_user")
	if r.Wall < time.Second && r.Wall > 0 {
		// Too short for a one-second window: the query's mean rate.
		r.RedisPeakOps = float64(r.RedisCmds) / r.Wall.Seconds()
	}
	r.Tasks = pl.Tasks - pl0.Tasks
	r.Functions = pl.Invocations - pl0.Invocations
	r.PeakConc = pl.PeakConcurrency
	r.Throttled = lam.Throttled - lam0.Throttled
	r.SlowDowns = st.SlowDowns - st0.SlowDowns
	r.Retries = counterValue(m.Retries) - retries0
	r.Hedges = counterValue(m.Hedges) - hedges0
	r.Crashes = pl.Crashes - pl0.Crashes
	r.Stragglers = pl.Stragglers - pl0.Stragglers
	r.Gets = st.Get + st.Head - st0.Get - st0.Head
	r.Puts = st.Put + st.List - st0.Put - st0.List
	r.PeakGet, r.PeakPut = s.Store.TakePeaks()
	r.GBSeconds = pl.GBSeconds - pl0.GBSeconds
	r.Splits = st.Splits - st0.Splits
	p := s.prices
	r.Dollars = float64(r.Puts)*p.S3PutPer1000/1000 + float64(r.Gets)*p.S3GetPer1000/1000 +
		r.GBSeconds*p.LambdaGBSecond + float64(r.Functions)*p.LambdaPerMillion/1e6
	return r
}

// MixReport is what Mix measured: the big job's and each small job's
// simulated latency, from its submission to its end, and the load the
// run put on the coordinator's Redis client.
type MixReport struct {
	FairShare bool
	MaxJobs   int // admission control's limit (0: none)
	Big       time.Duration
	BigState  string
	Small     []time.Duration // in submission order
	Failed    int             // small jobs that did not succeed
	// Queued is, with admission control, each small job's wait for
	// admission (simulated; from its record's created and admitted).
	Queued []time.Duration
	// BigJob and SmallJobs are the jobs' ids (SmallJobs in submission
	// order).
	BigJob    string
	SmallJobs []string
	// RedisPeakInFlight is the most Redis round trips this process had
	// in flight at once (waiting for a pool connection or answered by
	// Redis; exact, counted by a hook), RedisPool the pool's size.
	RedisPeakInFlight int64
	RedisPool         int
	// RedisPeakQueue is the most callers inside the pool's get, waiting
	// for a connection or dialling one (go-redis's PendingRequests,
	// sampled every 100 ms of real time); RedisWaits the times a caller
	// waited for a connection (the pool full), RedisWait their total
	// (real time, summed over the callers), RedisTimeouts the waits that
	// gave up.
	RedisPeakQueue int64
	RedisWaits     int64
	RedisWait      time.Duration
	RedisTimeouts  int64
	// Hedges are the duplicate attempts started for stragglers, Retries
	// the attempts retried, over the whole mix.
	Hedges, Retries int64
}

// sampleQueue returns the most callers inside the Redis pool's get
// (waiting for a connection or dialling one), sampled every 100 ms until
// done.
func (s *Sim) sampleQueue(done <-chan struct{}) int64 {
	var peak int64
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		peak = max(peak, int64(s.rdb.PoolStats().PendingRequests))
		select {
		case <-done:
			return peak
		case <-t.C:
		}
	}
}

// Mix submits big, waits after (simulated time), then submits every
// small query at once, and waits for all of them: how the small jobs
// fare beside a big one under the coordinator's concurrency cap.
func (s *Sim) Mix(ctx context.Context, big Query, small []Query, after time.Duration) (r MixReport, err error) {
	r = MixReport{FairShare: s.opts.Coordinator.FairShare, MaxJobs: s.opts.Coordinator.MaxJobs, Small: make([]time.Duration, len(small)),
		SmallJobs: make([]string, len(small)), RedisPool: s.rdb.Options().PoolSize}
	m := s.Co.Metrics()
	retries0, hedges0 := counterValue(m.Retries), counterValue(m.Hedges)
	pool0 := *s.rdb.PoolStats()
	s.load.takePeak()
	// The deferred function fills the load figures into r, the named
	// result, on every return.
	done := make(chan struct{})
	sampled := make(chan int64)
	go func() { sampled <- s.sampleQueue(done) }()
	defer func() {
		close(done)
		r.RedisPeakQueue = <-sampled
		r.RedisPeakInFlight = s.load.takePeak()
		pool := s.rdb.PoolStats()
		r.RedisWaits = int64(pool.WaitCount) - int64(pool0.WaitCount)
		r.RedisWait = time.Duration(pool.WaitDurationNs - pool0.WaitDurationNs)
		r.RedisTimeouts = int64(pool.Timeouts) - int64(pool0.Timeouts)
		r.Retries = counterValue(m.Retries) - retries0
		r.Hedges = counterValue(m.Hedges) - hedges0
	}()
	began := time.Now()
	bigJob, err := s.Co.Submit(ctx, big.SQL, coordinator.SubmitOptions{})
	if err != nil {
		return r, fmt.Errorf("%s: %w", big.Name, err)
	}
	r.BigJob = bigJob
	if err := s.Clock.Sleep(ctx, after); err != nil {
		return r, err
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, q := range small {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at := time.Now()
			ok := false
			job, err := s.Co.Submit(ctx, q.SQL, coordinator.SubmitOptions{})
			if err == nil {
				rec, err := s.Co.Wait(ctx, job)
				ok = err == nil && rec.State == coordinator.StateSucceeded
			}
			mu.Lock()
			defer mu.Unlock()
			r.SmallJobs[i] = job
			r.Small[i] = s.Clock.Sim(time.Since(at))
			if !ok {
				r.Failed++
			}
		}()
	}
	wg.Wait()
	rec, err := s.Co.Wait(ctx, bigJob)
	r.Big = s.Clock.Sim(time.Since(began))
	if err != nil {
		return r, fmt.Errorf("%s: %w", big.Name, err)
	}
	r.BigState = string(rec.State)
	if r.MaxJobs > 0 {
		for _, job := range r.SmallJobs {
			if m, err := s.Jobs.Job(ctx, job); err == nil {
				c, err1 := time.Parse(time.RFC3339Nano, m.Created)
				a, err2 := time.Parse(time.RFC3339Nano, m.Admitted)
				if err1 == nil && err2 == nil {
					r.Queued = append(r.Queued, s.Clock.Sim(a.Sub(c)))
				}
			}
		}
	}
	return r, nil
}
