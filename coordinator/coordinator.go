// Package coordinator drives sluice jobs: it plans a query into stages,
// keeps every piece of job state in Redis, invokes one function per task,
// commits task attempts first-commit-wins, re-plans after every stage, and
// serves an HTTP API. A coordinator holds nothing that Redis and the bucket
// do not: any replica can pick a job up.
package coordinator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/sluicedb/sluice/planner/adaptive"
	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// Planner turns SQL into a stage graph. Errors it returns are the user's.
type Planner interface {
	Plan(ctx context.Context, sql string) (g *plan.Graph, explain string, err error)
	// Format renders a (re-planned) stage graph as EXPLAIN does.
	Format(g *plan.Graph) string
}

// Tables gives the storage layout of a registered table. The coordinator
// resolves it when a scan stage starts, so a plan never holds file lists.
type Tables interface {
	Layout(ctx context.Context, table string) (*layout.Table, error)
}

// Invoker runs one task: it sends an encoded TaskSpec to a function and
// returns the encoded TaskResult. An error means the invocation itself
// failed (the function could not be reached, crashed or timed out).
type Invoker interface {
	Invoke(ctx context.Context, spec []byte) ([]byte, error)
}

// Config holds a coordinator's settings.
type Config struct {
	Bucket string
	Prefix string
	// FunctionMemory is each function's memory in bytes: the cost
	// report's GB-seconds are invocation seconds times it.
	FunctionMemory int64
	// Prices is the price table of the cost report's $ estimate.
	Prices Prices
	// ShuffleCodec is the codec of every task's shuffle output (lz4,
	// zstd, none; "" is shuffle.DefaultCompression).
	ShuffleCodec string
	// KeySpread is the number of hex digits of the hash component put
	// between a stage and its tasks in shuffle keys, so that S3 can split
	// a busy stage over several key prefixes (see shuffle.SpreadDigits;
	// 0: none).
	KeySpread int
	// Owner identifies this coordinator in leases.
	Owner    string
	LeaseTTL time.Duration
	// MaxAttempts bounds the failed attempts of one task (retries + 1).
	// Attempts that did not fail do not count: duplicates of stragglers,
	// attempts abandoned by a coordinator that died, attempts whose input
	// was lost.
	MaxAttempts  int
	RetryBackoff time.Duration
	// TaskTimeout bounds one attempt (the task's deadline): past it the
	// attempt is abandoned and retried. The deadline of an attempt is
	// TaskDeadlineFloor plus its input bytes at TaskBytesPerSecond, at
	// most TaskTimeout (either zero: TaskTimeout flat).
	TaskTimeout        time.Duration
	TaskDeadlineFloor  time.Duration
	TaskBytesPerSecond int64
	// OutageBudget is how long a job rides out an infrastructure outage
	// (every function unreachable, the object store down): attempts that
	// fail for it do not count against MaxAttempts until the outage has
	// lasted this long, and the job shows "waiting for ...". 0 turns it
	// off. Errors of the query itself never wait.
	OutageBudget time.Duration
	// HedgeFactor: an attempt running longer than HedgeFactor times the
	// median duration of its stage's finished tasks (once half of them
	// finished), and longer than HedgeAfter, gets one duplicate attempt;
	// the first to commit wins. 0 turns hedging off.
	HedgeFactor float64
	HedgeAfter  time.Duration
	// MaxInputRepairs bounds how many lost or corrupt shuffle objects of
	// one job are repaired (by running their producer again).
	MaxInputRepairs int
	// Retention is how long after a job finished its shuffle objects and
	// plan fragments are kept (the result of a succeeded job is kept);
	// 0 keeps them for inspection. GCInterval is how often a coordinator
	// looks for jobs past it (default Retention/2, at most a minute); New
	// starts the collector when Retention is set.
	Retention  time.Duration
	GCInterval time.Duration
	// RecordRetention is how long after a job finished its Redis keys
	// (status, plan history, task records) are kept: they expire then, and
	// the job leaves the job index. Its result can be fetched until then.
	// 0 keeps them forever.
	RecordRetention time.Duration
	// RedisOutage and S3Outage bound how long the coordinator waits (and
	// retries) for an unreachable Redis or object store before it gives
	// up: on Redis it stops driving the job and leaves it to whichever
	// coordinator reaches Redis later; on S3 the operation fails.
	RedisOutage time.Duration
	S3Outage    time.Duration
	// SplitBytes is the target bytes of table data per scan task.
	SplitBytes int64
	// Adaptive turns re-planning after every stage on (the default).
	Adaptive bool
	// DeferProbeRatio lets the probe side of a partitioned join wait for a
	// build side whose input is at most 1/DeferProbeRatio of the probe's,
	// so the re-planner can broadcast it (default 8; 0 turns it off).
	DeferProbeRatio int64
	// RuntimeFilterWait bounds how long a probe-side scan stage is held
	// for the build side whose runtime filter would prune it (Trino's
	// dynamic-filtering wait-timeout), counted from when it could have
	// started; it starts unfiltered after that (default 10s; 0: never
	// held). It is held only when its input is at least
	// RuntimeFilterRatio times the build side's and the build side reads
	// at most RuntimeFilterBuildBytes.
	RuntimeFilterWait       time.Duration
	RuntimeFilterRatio      int64
	RuntimeFilterBuildBytes int64
	// Concurrency bounds the tasks this coordinator has in flight at once
	// (over all jobs); the invoker may bound them further.
	Concurrency int
	// FairShare shares Concurrency between the jobs running at once: a
	// free slot goes to the waiting job holding the fewest (max-min
	// fairness), so a job of thousands of tasks does not queue a small
	// query behind them (the default). Off: the task with the least
	// input first over all jobs, first come first served among equals.
	FairShare bool
	// AdaptiveConcurrency makes the dispatcher follow the platform's real
	// concurrency when it throttles (the default): an invocation refused
	// with 429 cuts the tasks allowed in flight (by 0.7, once per round
	// of dispatches, not below 1), each invocation that runs adds one back,
	// up to Concurrency; the refused attempt waits for a slot again
	// without failing. Off: every slot stays open and the invoker retries
	// 429s while holding it (a task may run out of attempts).
	AdaptiveConcurrency bool
	// MaxJobs is admission control: at most this many jobs run at once
	// across every coordinator on the Redis; a job submitted past it is
	// queued (state queued, first come first served) until one finishes.
	// 0: no limit.
	MaxJobs int
	// AdmitPollMax bounds the wait between a queued job's admission
	// attempts (from 50 ms, doubling; 0: 1 s). The simulation scales it
	// with its clock.
	AdmitPollMax time.Duration
	// LimitEarlyStop lets the tasks of a stage that ends in a bare LIMIT
	// stop once the stage produced enough rows (the default).
	LimitEarlyStop bool
	// PackBytes: in adaptive jobs, task attempts reading at most this many
	// input bytes that are dispatched within a few milliseconds of each
	// other share one invocation, a function.Batch of at most PackBytes
	// input in total (default 16 MiB; 0 turns packing off).
	PackBytes int64
	AQE       adaptive.Config
	// SmallResultBytes: a result whose objects hold at most this many
	// bytes up to their last partition's end is fetched whole, one GET
	// per object, before it is streamed (default 4 MiB; < 0: never). A
	// larger one is checked object by object first and streamed from the
	// bucket.
	SmallResultBytes int64
	// MaxSQLBytes bounds the SQL text of a job, whichever front end it
	// comes from (the HTTP API, the Postgres wire protocol, Flight SQL):
	// longer text is refused with CodeSQLTooLarge before it is planned or
	// stored. 0 is DefaultMaxSQLBytes.
	MaxSQLBytes int
}

// DefaultConfig returns the defaults documented in the README.
func DefaultConfig() Config {
	host, _ := os.Hostname()
	return Config{
		Bucket:                  "sluice",
		KeySpread:               shuffle.SpreadDigits,
		FunctionMemory:          1 << 30,
		Prices:                  DefaultPrices(),
		Owner:                   fmt.Sprintf("%s-%d-%s", host, os.Getpid(), randHex(3)),
		LeaseTTL:                10 * time.Second,
		MaxAttempts:             4,
		RetryBackoff:            250 * time.Millisecond,
		TaskTimeout:             10 * time.Minute,
		TaskDeadlineFloor:       time.Minute,
		TaskBytesPerSecond:      4 << 20,
		OutageBudget:            3 * time.Minute,
		HedgeFactor:             4,
		HedgeAfter:              5 * time.Second,
		MaxInputRepairs:         100,
		RecordRetention:         7 * 24 * time.Hour,
		RedisOutage:             2 * time.Minute,
		S3Outage:                3 * time.Minute,
		SplitBytes:              32 << 20,
		Adaptive:                true,
		LimitEarlyStop:          true,
		DeferProbeRatio:         8,
		RuntimeFilterWait:       10 * time.Second,
		RuntimeFilterRatio:      8,
		RuntimeFilterBuildBytes: 1 << 30,
		PackBytes:               16 << 20,
		SmallResultBytes:        4 << 20,
		Concurrency:             64,
		FairShare:               true,
		AdaptiveConcurrency:     true,
		AQE:                     adaptive.DefaultConfig(),
	}
}

// Coordinator drives jobs.
type Coordinator struct {
	cfg     Config
	store   *Store
	bucket  objstore.Bucket
	planner Planner
	tables  Tables
	invoker Invoker
	packer  *packer // nil: packing off
	log     *slog.Logger
	metrics *Metrics

	dispatch *dispatcher // bounds tasks in flight, smallest stages first
	specRefs specBudget  // bounds the refs of task specs being built at once
	stores   storeWatch  // whether the bucket answers (stall.go)
	drivingM sync.Mutex
	driving  map[string]bool // jobs this coordinator drives now
	endings  endings         // wakes the API's long-polls of a job it finished
	wg       sync.WaitGroup
	ctx      context.Context
	cancel   context.CancelFunc
}

// specRefBudget is how many object refs the task specs being built and
// encoded at once may hold (an attempt waits for its share before it builds
// its spec): about 150 MB of refs and 60 MB of their encodings. A spec
// with more refs than that is built alone.
const specRefBudget = 2 << 20

// specBudget is a weighted semaphore of refs (specRefBudget).
type specBudget struct {
	sem *semaphore.Weighted
	max int64
}

// New returns a coordinator. Close stops the jobs it drives.
func New(cfg Config, store *Store, bucket objstore.Bucket, p Planner, t Tables, inv Invoker, log *slog.Logger) *Coordinator {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 64
	}
	if cfg.AQE.Parallelism == 0 {
		// Coalescing keeps a stage on as many tasks as can run at once.
		cfg.AQE.Parallelism = cfg.Concurrency
	}
	if cfg.AQE.SplitBytes == 0 {
		// size-scans sizes scan stages up from the static split.
		cfg.AQE.SplitBytes = cfg.SplitBytes
	}
	if cfg.FunctionMemory > 0 && cfg.AQE.MaxSplitBytes > cfg.FunctionMemory/4 {
		// A scan task reads no more than the planner gives a task of
		// such a function (planner.TaskBytesFor). Scans stream, but a
		// bigger task writes fuller shuffle batches (up to
		// shuffle.WriterOptions.BatchRows rows), and a spilling operator
		// that reads them holds one batch over its budget: on 512 KiB
		// functions, TPC-H Q21's semi-join build batch was 1.4 MB once
		// its producers read 1 MiB splits (0.44 MB peak at 256 KiB).
		cfg.AQE.MaxSplitBytes = cfg.FunctionMemory / 4
	}
	if cfg.FunctionMemory > 0 && cfg.AQE.TargetPartitionBytes > cfg.FunctionMemory/4 {
		// Coalescing packs no more shuffle input into a task than a
		// quarter of its function's memory, as scan splits: a task of a
		// join and an aggregation over 64 MiB of partitions on a 64 MiB
		// function held more than its budget (issue 28).
		cfg.AQE.TargetPartitionBytes = cfg.FunctionMemory / 4
	}
	if cfg.AQE.FunctionMemory == 0 {
		// Coalescing bounds what a task holds in memory by it.
		cfg.AQE.FunctionMemory = cfg.FunctionMemory
	}
	if cfg.FunctionMemory > 0 && cfg.PackBytes > cfg.FunctionMemory/8 {
		// The tasks of a pack run at once and share the function's
		// operator budget (function.Batch): their input together stays
		// within an eighth of its memory, so each member has at least
		// as much budget per input byte as a coalesced task.
		cfg.PackBytes = cfg.FunctionMemory / 8
	}
	if z := &cfg.AQE.Sizing; len(z.Sizes) > 0 {
		// size-functions weighs each size against the configured one,
		// at the cost report's prices.
		z.Default = cfg.FunctionMemory
		if z.Model.Rate <= 0 {
			z.Model = adaptive.DefaultSizeModel()
		}
		if cfg.Prices.LambdaGBSecond > 0 {
			z.Model.GBSecond, z.Model.Request = cfg.Prices.LambdaGBSecond, cfg.Prices.LambdaPerMillion/1e6
		}
	}
	if cfg.MaxAttempts < 1 {
		cfg.MaxAttempts = 1
	}
	if cfg.TaskTimeout <= 0 {
		cfg.TaskTimeout = 10 * time.Minute
	}
	if cfg.MaxInputRepairs <= 0 {
		cfg.MaxInputRepairs = 100
	}
	m := NewMetrics()
	if cfg.RedisOutage > 0 {
		store.Outage = cfg.RedisOutage
	}
	store.observe = m.redisError
	store.Prices = cfg.Prices
	c := &Coordinator{cfg: cfg, dispatch: newDispatcher(cfg.Concurrency, cfg.FairShare), specRefs: specBudget{semaphore.NewWeighted(specRefBudget), specRefBudget}, store: store,
		bucket: patientBucket{Bucket: bucket, outage: cfg.S3Outage}, planner: p,
		tables: retryTables{t, store}, invoker: inv, log: log, metrics: m, driving: map[string]bool{},
		ctx: ctx, cancel: cancel}
	m.ConcurrencyLimit.Set(float64(cfg.Concurrency))
	c.dispatch.observe = func(limit int) { m.ConcurrencyLimit.Set(float64(limit)) }
	c.dispatch.log = log
	if cfg.PackBytes > 0 {
		pctx := ctx
		if cfg.AdaptiveConcurrency {
			pctx = withThrottleReturn(ctx) // a pack of several is invoked under it
		}
		c.packer = newPacker(pctx, inv, cfg.PackBytes)
		c.packer.queued = c.dispatch.queued
		c.dispatch.onQueue = c.packer.flush
	}
	if cfg.Retention > 0 || cfg.RecordRetention > 0 {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.GC(ctx)
		}()
	}
	return c
}

// Metrics returns the coordinator's Prometheus metrics.
func (c *Coordinator) Metrics() *Metrics { return c.metrics }

// claim marks job as driven by this coordinator; false if it already is.
func (c *Coordinator) claim(job string) bool {
	c.drivingM.Lock()
	defer c.drivingM.Unlock()
	if c.driving[job] {
		return false
	}
	c.driving[job] = true
	return true
}

func (c *Coordinator) unclaim(job string) {
	c.drivingM.Lock()
	defer c.drivingM.Unlock()
	delete(c.driving, job)
}

// Driving reports whether this coordinator drives job now.
func (c *Coordinator) Driving(job string) bool {
	c.drivingM.Lock()
	defer c.drivingM.Unlock()
	return c.driving[job]
}

// Store returns the coordinator's job store.
func (c *Coordinator) Store() *Store { return c.store }

// Close stops driving jobs and waits for the drivers to return. The jobs
// stay in Redis; another coordinator can carry them on.
func (c *Coordinator) Close() {
	c.cancel()
	c.wg.Wait()
}

// SubmitOptions override per-job settings.
type SubmitOptions struct {
	Adaptive *bool
}

// Share returns the dispatch slots a job's tasks hold on this coordinator
// and how many of its tasks wait for one. A job with tasks waiting and no
// slot is queued: admitted once a slot frees (with FairShare, before the
// jobs holding more).
func (c *Coordinator) Share(job string) (held, queued int) { return c.dispatch.share(job) }

// ConcurrencyLimit returns the tasks this coordinator lets run at once now
// (Config.Concurrency, less while the platform throttles:
// AdaptiveConcurrency) and the throttled invocations (429s) it saw.
func (c *Coordinator) ConcurrencyLimit() (limit int, throttled int64) { return c.dispatch.limit() }

// ConcurrencyLimitLow returns the lowest effective concurrency limit since
// its last call: a cut the limit grew back from in between still shows.
func (c *Coordinator) ConcurrencyLimitLow() int { return c.dispatch.limitLow() }

// Waiting returns the tasks waiting for a dispatch slot, over all jobs.
func (c *Coordinator) Waiting() int {
	c.dispatch.mu.Lock()
	defer c.dispatch.mu.Unlock()
	return c.dispatch.waiting
}

// Submit plans sql, records the job in Redis and starts driving it. A
// planning error is the user's and is returned as is (never retried).
func (c *Coordinator) Submit(ctx context.Context, sql string, opts SubmitOptions) (string, error) {
	if err := c.CheckSQL(sql); err != nil {
		return "", err
	}
	g, explain, err := c.planner.Plan(ctx, sql)
	if err != nil {
		return "", err
	}
	return c.submit(ctx, sql, g, explain, opts)
}

// SubmitPlanned records a job for a graph planned by the caller (a
// statement that rewrote its query's plan, e.g. with a table writer) and
// starts driving it. sql is the text the job shows.
func (c *Coordinator) SubmitPlanned(ctx context.Context, sql string, g *plan.Graph, explain string, opts SubmitOptions) (string, error) {
	if err := c.CheckSQL(sql); err != nil {
		return "", err
	}
	if err := g.Validate(); err != nil {
		return "", err
	}
	return c.submit(ctx, sql, g, explain, opts)
}

// MaxSQLBytes is the longest SQL text the coordinator takes
// (Config.MaxSQLBytes, DefaultMaxSQLBytes when unset).
func (c *Coordinator) MaxSQLBytes() int {
	if c.cfg.MaxSQLBytes > 0 {
		return c.cfg.MaxSQLBytes
	}
	return DefaultMaxSQLBytes
}

// CheckSQL refuses SQL text longer than MaxSQLBytes (CodeSQLTooLarge).
func (c *Coordinator) CheckSQL(sql string) error {
	if limit := c.MaxSQLBytes(); len(sql) > limit {
		return SQLTooLarge(fmt.Sprintf("%d bytes", len(sql)), limit)
	}
	return nil
}

// SQLTooLarge is the error of SQL text of size n over limit bytes.
func SQLTooLarge(n string, limit int) error {
	return plan.Errorf(CodeSQLTooLarge, "%s: SQL text of %s is larger than the limit of %d bytes (coordinator --max-sql-bytes)", CodeSQLTooLarge, n, limit)
}

func (c *Coordinator) submit(ctx context.Context, sql string, g *plan.Graph, explain string, opts SubmitOptions) (string, error) {
	job := NewJobID()
	adaptiveOn := c.cfg.Adaptive
	if opts.Adaptive != nil {
		adaptiveOn = *opts.Adaptive
	}
	gj, err := json.Marshal(g)
	if err != nil {
		return "", fmt.Errorf("encode plan: %w", err)
	}
	tasks, _ := json.Marshal(adaptive.InitialTaskPlans(g))
	settings, _ := json.Marshal(JobSettings(c.cfg, adaptiveOn))
	create := c.store.CreateJob
	if c.cfg.MaxJobs > 0 {
		create = c.store.CreateQueuedJob // Drive admits it (admitJob)
	}
	err = create(ctx, job, map[string]any{
		"sql":      sql,
		"created":  time.Now().UTC().Format(time.RFC3339Nano),
		"graph":    string(gj),
		"graph0":   string(gj), // the plan as submitted, for the web UI's round 0
		"explain":  explain,
		"adaptive": boolStr(adaptiveOn),
		fieldTasks: string(tasks),
		"round":    "0",
		"settings": string(settings), // the knobs it runs with, for the web UI
	})
	if err != nil {
		return "", err
	}
	c.metrics.JobsSubmitted.Inc()
	c.log.Info("job submitted", "job", job, "stages", len(g.Stages), "adaptive", adaptiveOn)
	c.Go(job)
	return job, nil
}

// Go starts driving job in the background (if no other coordinator holds
// its lease).
func (c *Coordinator) Go(job string) {
	if c.ctx.Err() != nil {
		return // closing
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		err := c.Drive(c.ctx, job)
		for errors.Is(err, errRetake) && c.ctx.Err() == nil {
			c.log.Info("lease taken again after it expired: driving the job anew", "job", job)
			err = c.Drive(c.ctx, job)
		}
		switch {
		case err == nil, errors.Is(err, context.Canceled):
		case errors.Is(err, ErrStaleFence):
			c.log.Info("job taken over by another coordinator", "job", job)
		case errors.Is(err, ErrRedisUnavailable):
			c.log.Warn("redis unavailable: leaving the job to whoever reaches it later", "job", job, "err", err)
		default:
			c.log.Error("driving job", "job", job, "err", err)
		}
	}()
}

// Wait blocks until job reaches a terminal state and returns its record.
func (c *Coordinator) Wait(ctx context.Context, job string) (*JobRecord, error) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		m, err := c.store.Job(ctx, job)
		if err != nil {
			return nil, err
		}
		if m.State.Terminal() {
			return m, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// NewJobID returns a new job id: sortable by time, unique, and safe in
// object keys and Redis keys.
func NewJobID() string {
	return time.Now().UTC().Format("20060102-150405") + "-" + randHex(4)
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
