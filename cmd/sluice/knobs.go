package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/coordinator/pgwire"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/adaptive"
	"github.com/sluicedb/sluice/shuffle"
)

// Knobs: every setting of how jobs are planned and run is declared once,
// in the table below: the field it sets, its flag name, its environment
// variable, its help text and (through the field's value in
// defaultSettings) its default. The commands that take it (`sluice local
// query|start|demo`, `sql --local`, `coordinator serve`) generate their
// urfave/cli flags from the table (knobFlags) and read them back into one
// settings value (applyKnobs), so a knob cannot have two names, two
// defaults or two help texts, and a new knob is one row plus its field.
// TestKnobs checks the table.

// settings is what the knobs set: the coordinator's Config, and what the
// commands pass beside it (the planner's options, the invoker, the
// front ends).
type settings struct {
	Config coordinator.Config
	// Prices is the raw --prices text (parsed into Config.Prices).
	Prices string
	// FunctionSizes is the raw --function-sizes text (parsed into
	// Config.AQE.Sizing.Sizes).
	FunctionSizes string
	// Faults is the raw --faults text (a fault-injecting invoker).
	Faults string
	// The planner's options.
	Partitions         int
	PlanBroadcastBytes int64
	// Functions is the in-process pool's size or the invoker's
	// concurrency.
	Functions       int
	FunctionTimeout time.Duration
	// FileCache is the in-process functions' range cache of table bytes.
	FileCache          int64
	LambdaTimeout      time.Duration
	LambdaPayloadLimit int
	// The Postgres wire protocol server's limits.
	PGStartupTimeout time.Duration
	PGMaxConns       int
	// Sim holds the simulation's model settings (sluice sim).
	Sim simSettings
}

// simSettings are the knobs of the simulation's models (local/sim).
type simSettings struct {
	SF, Factor                     float64
	LambdaConcurrency              int
	StragglerRate, CrashRate, Skew float64
	ColdStart                      time.Duration
	PrefixGetRate, PrefixPutRate   float64
}

// defaultSettings holds every knob's default: the coordinator's
// DefaultConfig, and the defaults of the rest.
func defaultSettings() settings {
	cfg := coordinator.DefaultConfig()
	cfg.MaxSQLBytes = coordinator.DefaultMaxSQLBytes
	return settings{
		Config:             cfg,
		Functions:          0, // local: one per core (local.DefaultFunctions); serve: knob.serveDefault
		FileCache:          function.DefaultFileCache,
		FunctionTimeout:    15 * time.Minute,
		LambdaTimeout:      15 * time.Minute,
		LambdaPayloadLimit: coordinator.LambdaPayloadLimit,
		PGStartupTimeout:   pgwire.DefaultStartupTimeout,
		PGMaxConns:         pgwire.DefaultMaxConns,
		Sim:                defaultSimSettings(),
	}
}

// scope says which commands take a knob.
type scope uint8

const (
	// onLocal: every command that starts the embedded stack (local
	// query|start|demo, sql --local).
	onLocal scope = 1 << iota
	// onServe: coordinator serve.
	onServe
	// onFrontEnds: the commands that serve the Postgres wire protocol
	// and Flight SQL (local start, coordinator serve).
	onFrontEnds
	// onQuery: the commands that submit a job (local query, submit, sql),
	// where the knob is that job's setting.
	onQuery
	// onSim: sluice sim (the models of the simulation; it takes the
	// embedded stack's engine knobs too).
	onSim

	onEngine = onLocal | onServe
)

// knob is one setting.
type knob struct {
	name  string // flag name
	env   string // environment variable
	usage string
	scope scope
	// bytes: an int64 field given as a byte size with units (ByteSize).
	bytes bool
	// field points into s at the field the knob sets.
	field func(s *settings) any
	// serveDefault, when set, is the default on coordinator serve, where
	// it differs from the embedded stack's.
	serveDefault any
}

// knobs is the table.
var knobs = []knob{
	// The simulation's models (sluice sim); defaults in defaultSimSettings.
	{name: "sim-sf", env: "SLUICE_SIM_SF", scope: onSim,
		usage: "TPC-H scale factor of the virtual tables",
		field: func(s *settings) any { return &s.Sim.SF }},
	{name: "sim-factor", env: "SLUICE_SIM_FACTOR", scope: onSim,
		usage: "time compression: simulated seconds per real second (the coordinator's timers are scaled with it)",
		field: func(s *settings) any { return &s.Sim.Factor }},
	{name: "lambda-concurrency", env: "SLUICE_LAMBDA_CONCURRENCY", scope: onSim,
		usage: "the modelled account's concurrent executions: invocations past it get 429 TooManyRequests",
		field: func(s *settings) any { return &s.Sim.LambdaConcurrency }},
	{name: "straggler-rate", env: "SLUICE_STRAGGLER_RATE", scope: onSim,
		usage: "fraction of modelled invocations that run 5-10x slower",
		field: func(s *settings) any { return &s.Sim.StragglerRate }},
	{name: "crash-rate", env: "SLUICE_CRASH_RATE", scope: onSim,
		usage: "fraction of modelled invocations that crash part-way",
		field: func(s *settings) any { return &s.Sim.CrashRate }},
	{name: "sim-skew", env: "SLUICE_SIM_SKEW", scope: onSim,
		usage: "fraction of each modelled task's output rows sent to one hot partition",
		field: func(s *settings) any { return &s.Sim.Skew }},
	{name: "cold-start", env: "SLUICE_COLD_START", scope: onSim,
		usage: "median cold start of a modelled function (lognormal)",
		field: func(s *settings) any { return &s.Sim.ColdStart }},
	{name: "prefix-get-rate", env: "SLUICE_PREFIX_GET_RATE", scope: onSim,
		usage: "GET/HEAD requests per second per prefix of the modelled store before 503 SlowDown",
		field: func(s *settings) any { return &s.Sim.PrefixGetRate }},
	{name: "prefix-put-rate", env: "SLUICE_PREFIX_PUT_RATE", scope: onSim,
		usage: "PUT/LIST/DELETE requests per second per prefix of the modelled store before 503 SlowDown",
		field: func(s *settings) any { return &s.Sim.PrefixPutRate }},
	// How a job is planned and run: the embedded stack and serve alike.
	{name: "adaptive", env: "SLUICE_ADAPTIVE", scope: onServe | onQuery | onSim,
		usage: "re-plan after every stage (false: static plan); on coordinator serve, the default of jobs that do not say",
		field: func(s *settings) any { return &s.Config.Adaptive }},
	{name: "max-jobs", env: "SLUICE_MAX_JOBS", scope: onServe | onSim,
		usage: "admission control: at most this many jobs run at once over every coordinator on the Redis; later ones wait in state queued, first come first served (0: no limit)",
		field: func(s *settings) any { return &s.Config.MaxJobs }},
	{name: "fair-share", env: "SLUICE_FAIR_SHARE", scope: onServe | onSim,
		usage: "share the concurrency (--functions) between running jobs: a free slot goes to the job holding the fewest (false: least input first over all jobs)",
		field: func(s *settings) any { return &s.Config.FairShare }},
	{name: "adaptive-concurrency", env: "SLUICE_ADAPTIVE_CONCURRENCY", scope: onServe | onSim,
		usage: "follow the platform's real concurrency: a 429 from the functions cuts the invocations in flight, each invocation that runs adds one back up to --functions; the refused task waits for a slot again without failing (false: keep every slot, retry 429s in the invoker)",
		field: func(s *settings) any { return &s.Config.AdaptiveConcurrency }},
	{name: "functions", env: "SLUICE_FUNCTIONS", scope: onEngine, serveDefault: 4,
		usage: "concurrent functions: the in-process pool's size, or the HTTP or Lambda concurrency of coordinator serve (embedded stack: 0 is one per core, GOMAXPROCS)",
		field: func(s *settings) any { return &s.Functions }},
	{name: "file-cache", env: "SLUICE_FILE_CACHE", scope: onEngine, bytes: true,
		usage: "in-process functions: memory kept for table bytes already fetched, by file and version, so the next query over the same files reads them from memory (0: no cache)",
		field: func(s *settings) any { return &s.FileCache }},
	{name: "partitions", env: "SLUICE_PARTITIONS", scope: onEngine,
		usage: "hash partitions per shuffle exchange (0: from the estimated data and --function-memory)",
		field: func(s *settings) any { return &s.Partitions }},
	{name: "function-memory", env: "SLUICE_FUNCTION_MEMORY", scope: onEngine, bytes: true,
		usage: "each function's memory: tasks are sized to it and the cost report's GB-seconds use it",
		field: func(s *settings) any { return &s.Config.FunctionMemory }},
	{name: "function-sizes", env: "SLUICE_FUNCTION_SIZES", scope: onEngine,
		usage: "adaptive: the function sizes the platform offers (e.g. 512MiB,1769MiB,3538MiB); size-functions runs each stage on one of them (on Lambda, size S is the function <--lambda-function>-<S in MiB>; none: every task on --function-memory)",
		field: func(s *settings) any { return &s.FunctionSizes }},
	{name: "optimize", env: "SLUICE_OPTIMIZE", scope: onEngine,
		usage: "adaptive: what size-functions minimizes: cost, latency or balanced (the cheapest size within 25% of the fastest)",
		field: func(s *settings) any { return &s.Config.AQE.Sizing.Optimize }},
	{name: "prices", env: "SLUICE_PRICES", scope: onEngine,
		usage: "price table of the cost report: a JSON file, or s3_put_per_1000=..,s3_get_per_1000=..,s3_list_per_1000=..,s3_delete_per_1000=..,lambda_gb_second=..,lambda_per_million=.. (default: AWS list prices)",
		field: func(s *settings) any { return &s.Prices }},
	{name: "split-bytes", env: "SLUICE_SPLIT_BYTES", scope: onEngine, bytes: true,
		usage: "table bytes per scan task",
		field: func(s *settings) any { return &s.Config.SplitBytes }},
	{name: "max-split-bytes", env: "SLUICE_MAX_SPLIT_BYTES", scope: onEngine, bytes: true,
		usage: "adaptive: a scan stage runs on as many tasks as can run at once, each reading at most this much (0: one task per --split-bytes)",
		field: func(s *settings) any { return &s.Config.AQE.MaxSplitBytes }},
	{name: "inline-scan-bytes", env: "SLUICE_INLINE_SCAN_BYTES", scope: onEngine, bytes: true,
		usage: "adaptive: a small broadcast table is read by its readers' tasks directly, no stage of its own, when its bytes times their tasks are at most this (0: never)",
		field: func(s *settings) any { return &s.Config.AQE.InlineScanBytes }},
	{name: "limit-early-stop", env: "SLUICE_LIMIT_EARLY_STOP", scope: onEngine,
		usage: "let tasks of a bare LIMIT stop once enough rows exist",
		field: func(s *settings) any { return &s.Config.LimitEarlyStop }},
	{name: "plan-broadcast-bytes", env: "SLUICE_PLAN_BROADCAST_BYTES", scope: onEngine, bytes: true,
		usage: "planner: broadcast a join side estimated below this (0: the default, the same as --broadcast-bytes; -1: never)",
		field: func(s *settings) any { return &s.PlanBroadcastBytes }},
	{name: "broadcast-bytes", env: "SLUICE_BROADCAST_BYTES", scope: onEngine, bytes: true,
		usage: "adaptive: broadcast a finished join side up to this in-memory size",
		field: func(s *settings) any { return &s.Config.AQE.BroadcastBytes }},
	{name: "unbroadcast-bytes", env: "SLUICE_UNBROADCAST_BYTES", scope: onEngine, bytes: true,
		usage: "adaptive: repartition a broadcast join side bigger than this in memory (0: never)",
		field: func(s *settings) any { return &s.Config.AQE.UnbroadcastBytes }},
	{name: "target-partition-bytes", env: "SLUICE_TARGET_PARTITION_BYTES", scope: onEngine, bytes: true,
		usage: "adaptive: coalescing packs partitions into tasks of about this size",
		field: func(s *settings) any { return &s.Config.AQE.TargetPartitionBytes }},
	{name: "skew-factor", env: "SLUICE_SKEW_FACTOR", scope: onEngine,
		usage: "adaptive: split partitions larger than this many times the median",
		field: func(s *settings) any { return &s.Config.AQE.SkewFactor }},
	{name: "skew-min-bytes", env: "SLUICE_SKEW_MIN_BYTES", scope: onEngine, bytes: true,
		usage: "adaptive: and larger than this",
		field: func(s *settings) any { return &s.Config.AQE.SkewMinBytes }},
	{name: "get-budget", env: "SLUICE_GET_BUDGET", scope: onEngine,
		usage: "adaptive: add a stage combining a finished stage's map objects when its readers would issue more GETs than this (0: never)",
		field: func(s *settings) any { return &s.Config.AQE.GetBudget }},
	{name: "pack-bytes", env: "SLUICE_PACK_BYTES", scope: onEngine, bytes: true,
		usage: "adaptive: tasks reading at most this much, dispatched together, share one invocation (0: never)",
		field: func(s *settings) any { return &s.Config.PackBytes }},
	{name: "shuffle-codec", env: "SLUICE_SHUFFLE_CODEC", scope: onEngine,
		usage: "codec of shuffle objects: lz4, zstd or none (lz4 chosen by measurement; readers take all)",
		field: func(s *settings) any { return &s.Config.ShuffleCodec }},
	{name: "defer-probe-ratio", env: "SLUICE_DEFER_PROBE_RATIO", scope: onEngine,
		usage: "adaptive: a join's probe side waits for a build side at most 1/N of its input (0: never)",
		field: func(s *settings) any { return &s.Config.DeferProbeRatio }},
	{name: "runtime-filters", env: "SLUICE_RUNTIME_FILTERS", scope: onEngine,
		usage: "adaptive: filter a join's probe-side scan by the keys its finished build side produced",
		field: func(s *settings) any { return &s.Config.AQE.RuntimeFilters }},
	{name: "runtime-filter-wait", env: "SLUICE_RUNTIME_FILTER_WAIT", scope: onEngine,
		usage: "adaptive: longest a probe-side scan waits for a much smaller build side's runtime filter (0: never waits)",
		field: func(s *settings) any { return &s.Config.RuntimeFilterWait }},
	{name: "max-sql-bytes", env: "SLUICE_MAX_SQL_BYTES", scope: onEngine,
		usage: "largest SQL text accepted by the API, the Postgres wire protocol and Flight SQL (error " + coordinator.CodeSQLTooLarge + " above)",
		field: func(s *settings) any { return &s.Config.MaxSQLBytes }},

	// The service's own: its lease, its invokers, failure handling. The
	// embedded stack keeps their defaults (its functions are in process
	// and it is the only coordinator).
	{name: "lease", env: "SLUICE_LEASE", scope: onServe,
		usage: "job lease TTL (a dead coordinator's jobs move after this)",
		field: func(s *settings) any { return &s.Config.LeaseTTL }},
	{name: "function-timeout", env: "SLUICE_FUNCTION_TIMEOUT", scope: onServe,
		usage: "timeout of one HTTP function request",
		field: func(s *settings) any { return &s.FunctionTimeout }},
	{name: "lambda-timeout", env: "SLUICE_LAMBDA_TIMEOUT", scope: onServe,
		usage: "timeout of one Lambda invocation",
		field: func(s *settings) any { return &s.LambdaTimeout }},
	{name: "lambda-payload-limit", env: "SLUICE_LAMBDA_PAYLOAD_LIMIT", scope: onServe,
		usage: "TaskSpecs larger than this many bytes are passed by reference through the bucket",
		field: func(s *settings) any { return &s.LambdaPayloadLimit }},
	{name: "max-attempts", env: "SLUICE_MAX_ATTEMPTS", scope: onServe,
		usage: "failed attempts of a task before its job fails",
		field: func(s *settings) any { return &s.Config.MaxAttempts }},
	{name: "retry-backoff", env: "SLUICE_RETRY_BACKOFF", scope: onServe,
		usage: "first backoff after a failed attempt (doubles per attempt, at most 10s)",
		field: func(s *settings) any { return &s.Config.RetryBackoff }},
	{name: "task-timeout", env: "SLUICE_TASK_TIMEOUT", scope: onServe,
		usage: "longest deadline of one task attempt",
		field: func(s *settings) any { return &s.Config.TaskTimeout }},
	{name: "task-deadline-floor", env: "SLUICE_TASK_DEADLINE_FLOOR", scope: onServe,
		usage: "deadline of an attempt reading nothing; it grows with the attempt's input (--task-bytes-per-second), up to --task-timeout (0: --task-timeout flat)",
		field: func(s *settings) any { return &s.Config.TaskDeadlineFloor }},
	{name: "task-bytes-per-second", env: "SLUICE_TASK_BYTES_PER_SECOND", scope: onServe,
		usage: "input read rate an attempt's deadline allows for",
		field: func(s *settings) any { return &s.Config.TaskBytesPerSecond }},
	{name: "outage-budget", env: "SLUICE_OUTAGE_BUDGET", scope: onServe,
		usage: "how long a job waits out unreachable functions or object store before failures count (0: no waiting)",
		field: func(s *settings) any { return &s.Config.OutageBudget }},
	{name: "s3-outage", env: "SLUICE_S3_OUTAGE", scope: onServe,
		usage: "how long the coordinator's own object store operations wait for an unreachable store",
		field: func(s *settings) any { return &s.Config.S3Outage }},
	{name: "hedge-factor", env: "SLUICE_HEDGE_FACTOR", scope: onServe,
		usage: "duplicate an attempt running this many times its stage's median (0: no hedging)",
		field: func(s *settings) any { return &s.Config.HedgeFactor }},
	{name: "hedge-after", env: "SLUICE_HEDGE_AFTER", scope: onServe,
		usage: "never duplicate an attempt younger than this",
		field: func(s *settings) any { return &s.Config.HedgeAfter }},
	{name: "retention", env: "SLUICE_RETENTION", scope: onServe,
		usage: "delete a finished job's shuffle objects this long after it finished (0: keep them)",
		field: func(s *settings) any { return &s.Config.Retention }},
	{name: "record-retention", env: "SLUICE_RECORD_RETENTION", scope: onServe,
		usage: "expire a finished job's Redis keys (status, history, result index) this long after it finished (0: keep them)",
		field: func(s *settings) any { return &s.Config.RecordRetention }},
	{name: "redis-outage", env: "SLUICE_REDIS_OUTAGE", scope: onServe,
		usage: "how long to wait for an unreachable Redis before leaving a job to other coordinators",
		field: func(s *settings) any { return &s.Config.RedisOutage }},
	{name: "key-spread", env: "SLUICE_KEY_SPREAD", scope: onServe,
		usage: "hex digits of the hash component of shuffle keys after the stage, spreading a stage over S3 key prefixes (0: none, at most 4)",
		field: func(s *settings) any { return &s.Config.KeySpread }},
	{name: "faults", env: "SLUICE_FAULTS", scope: onServe,
		usage: "TESTS ONLY: inject function faults, e.g. crash=0.05,hang=0.01,error=0.05,duplicate=0.05,lose=0.02,corrupt=0.02,seed=1",
		field: func(s *settings) any { return &s.Faults }},

	// The Postgres wire protocol's limits (local start, serve).
	{name: "pg-startup-timeout", env: "SLUICE_PG_STARTUP_TIMEOUT", scope: onFrontEnds,
		usage: "drop a Postgres client that has not logged in within this time",
		field: func(s *settings) any { return &s.PGStartupTimeout }},
	{name: "pg-max-conns", env: "SLUICE_PG_MAX_CONNS", scope: onFrontEnds,
		usage: "Postgres connections served at once (logged in or not); more are refused with \"too many clients\"",
		field: func(s *settings) any { return &s.PGMaxConns }},
}

// knobNamed returns the knob of a flag name; it panics on a name the
// table lacks (a programming error TestKnobs catches).
func knobNamed(name string) knob {
	for _, k := range knobs {
		if k.name == name {
			return k
		}
	}
	panic("no knob " + name)
}

// knobFlags returns the flags of the knobs of scope sc, in table order.
// forServe picks the defaults of coordinator serve.
func knobFlags(sc scope, forServe bool) []cli.Flag {
	var out []cli.Flag
	for _, k := range knobs {
		if k.scope&sc != 0 {
			out = append(out, k.flag(forServe))
		}
	}
	return out
}

// flag is the urfave/cli flag of k, defaulting to the field's value in
// defaultSettings (or k.serveDefault on serve). Flags hold their parsed
// value, so each call makes a new one.
func (k knob) flag(forServe bool) cli.Flag {
	d := defaultSettings()
	env := []string{k.env}
	def := k.field(&d)
	if forServe && k.serveDefault != nil {
		def = k.serveDefault
	}
	switch p := def.(type) {
	case *int:
		return &cli.IntFlag{Name: k.name, Value: *p, EnvVars: env, Usage: k.usage}
	case int:
		return &cli.IntFlag{Name: k.name, Value: p, EnvVars: env, Usage: k.usage}
	case *int64:
		if k.bytes {
			return bytesFlag(k.name, *p, k.usage, env...)
		}
		return &cli.Int64Flag{Name: k.name, Value: *p, EnvVars: env, Usage: k.usage}
	case *float64:
		return &cli.Float64Flag{Name: k.name, Value: *p, EnvVars: env, Usage: k.usage}
	case *bool:
		return &cli.BoolFlag{Name: k.name, Value: *p, EnvVars: env, Usage: k.usage}
	case *string:
		return &cli.StringFlag{Name: k.name, Value: *p, EnvVars: env, Usage: k.usage}
	case *time.Duration:
		return &cli.DurationFlag{Name: k.name, Value: *p, EnvVars: env, Usage: k.usage}
	}
	panic(fmt.Sprintf("knob %s: field of type %T", k.name, def))
}

// applyKnobs reads the knobs of scope sc from c into s.
func applyKnobs(c *cli.Context, sc scope, s *settings) {
	for _, k := range knobs {
		if k.scope&sc != 0 {
			k.apply(c, s)
		}
	}
}

// apply reads k's flag from c into its field of s.
func (k knob) apply(c *cli.Context, s *settings) {
	switch p := k.field(s).(type) {
	case *int:
		*p = c.Int(k.name)
	case *int64:
		if k.bytes {
			*p = bytesValue(c, k.name)
		} else {
			*p = c.Int64(k.name)
		}
	case *float64:
		*p = c.Float64(k.name)
	case *bool:
		*p = c.Bool(k.name)
	case *string:
		*p = c.String(k.name)
	case *time.Duration:
		*p = c.Duration(k.name)
	}
}

// engineSettings reads the knobs of scope sc into a copy of cfg (plus
// the defaults of the rest) and checks the ones that parse: --prices and
// --shuffle-codec.
func engineSettings(c *cli.Context, sc scope, cfg coordinator.Config) (settings, error) {
	s := defaultSettings()
	s.Config = cfg
	applyKnobs(c, sc, &s)
	prices, err := coordinator.ParsePrices(s.Prices)
	if err != nil {
		return s, fmt.Errorf("--prices: %w", err)
	}
	s.Config.Prices = prices
	codec, err := shuffle.ParseCompression(s.Config.ShuffleCodec)
	if err != nil {
		return s, fmt.Errorf("--shuffle-codec: %w", err)
	}
	s.Config.ShuffleCodec = string(codec)
	if err := parseSizing(&s); err != nil {
		return s, err
	}
	return s, nil
}

// parseSizing parses --function-sizes and checks --optimize.
func parseSizing(s *settings) error {
	z := &s.Config.AQE.Sizing
	z.Sizes = nil
	for _, f := range strings.Split(s.FunctionSizes, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := parseByteSize(f)
		if err != nil || n < 128<<20 || n%(1<<20) != 0 {
			return fmt.Errorf("--function-sizes %q: want whole MiB of at least 128MiB each (e.g. 512MiB,1769MiB,3538MiB)", f)
		}
		z.Sizes = append(z.Sizes, n)
	}
	opt, err := adaptive.ParseOptimize(z.Optimize)
	if err != nil {
		return err
	}
	z.Optimize = opt
	return nil
}
