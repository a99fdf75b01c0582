package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/shuffle"
)

// adaptiveFlag is the one adaptive switch of the CLI: per job on query
// commands (local query, submit, shell), the default for jobs that do not
// say on `coordinator serve`. It sets coordinator.Config.Adaptive (the
// API's per-job "adaptive" overrides it), which picks the job's
// adaptive.ExecutionGraph.
func adaptiveFlag(usage string) cli.Flag {
	return &cli.BoolFlag{Name: "adaptive", Value: true, EnvVars: []string{"SLUICE_ADAPTIVE"}, Usage: usage}
}

// engineFlags are the settings of how jobs are planned and run, derived
// from coordinator.DefaultConfig and shared by the embedded stack (local
// query|start|demo, sql --local) and `coordinator serve`, so both take the
// same adaptive knobs. applyEngine reads them back.
func engineFlags() []cli.Flag {
	d := coordinator.DefaultConfig()
	return []cli.Flag{
		&cli.IntFlag{Name: "partitions", Value: 0, Usage: "hash partitions per shuffle exchange (0: from the estimated data and --function-memory)"},
		functionMemoryFlag(),
		pricesFlag(),
		bytesFlag("split-bytes", d.SplitBytes, "table bytes per scan task"),
		bytesFlag("max-split-bytes", d.AQE.MaxSplitBytes, "adaptive: a scan stage runs on as many tasks as can run at once, each reading at most this much (0: one task per --split-bytes)"),
		bytesFlag("inline-scan-bytes", d.AQE.InlineScanBytes, "adaptive: a small broadcast table is read by its readers' tasks directly, no stage of its own, when its bytes times their tasks are at most this (0: never)"),
		&cli.BoolFlag{Name: "limit-early-stop", Value: d.LimitEarlyStop, Usage: "let tasks of a bare LIMIT stop once enough rows exist"},
		bytesFlag("plan-broadcast-bytes", 0, "planner: broadcast a join side estimated below this (0: the default, the same as --broadcast-bytes; -1: never)"),
		bytesFlag("broadcast-bytes", d.AQE.BroadcastBytes, "adaptive: broadcast a finished join side up to this in-memory size"),
		bytesFlag("unbroadcast-bytes", d.AQE.UnbroadcastBytes, "adaptive: repartition a broadcast join side bigger than this in memory (0: never)"),
		bytesFlag("target-partition-bytes", d.AQE.TargetPartitionBytes, "adaptive: coalescing packs partitions into tasks of about this size"),
		&cli.Float64Flag{Name: "skew-factor", Value: d.AQE.SkewFactor, Usage: "adaptive: split partitions larger than this many times the median"},
		bytesFlag("skew-min-bytes", d.AQE.SkewMinBytes, "adaptive: and larger than this"),
		&cli.Int64Flag{Name: "get-budget", Value: d.AQE.GetBudget, Usage: "adaptive: add a stage combining a finished stage's map objects when its readers would issue more GETs than this (0: never)"},
		bytesFlag("pack-bytes", d.PackBytes, "adaptive: tasks reading at most this much, dispatched together, share one invocation (0: never)"),
		&cli.StringFlag{Name: "shuffle-codec", Value: d.ShuffleCodec, Usage: "codec of shuffle objects: lz4, zstd or none (lz4 chosen by measurement; readers take all)"},
		&cli.Int64Flag{Name: "defer-probe-ratio", Value: d.DeferProbeRatio, Usage: "adaptive: a join's probe side waits for a build side at most 1/N of its input (0: never)"},
		&cli.BoolFlag{Name: "runtime-filters", Value: d.AQE.RuntimeFilters, Usage: "adaptive: filter a join's probe-side scan by the keys its finished build side produced"},
		&cli.DurationFlag{Name: "runtime-filter-wait", Value: d.RuntimeFilterWait, Usage: "adaptive: longest a probe-side scan waits for a much smaller build side's runtime filter (0: never waits)"},
	}
}

// engine is what engineFlags set beyond the coordinator's Config: the
// planner's settings.
type engine struct {
	partitions     int
	planBroadcast  int64
	functionMemory int64
}

// applyEngine sets the engine flags on cfg and returns the planner's part.
func applyEngine(c *cli.Context, cfg *coordinator.Config) (engine, error) {
	prices, err := coordinator.ParsePrices(c.String("prices"))
	if err != nil {
		return engine{}, fmt.Errorf("--prices: %w", err)
	}
	cfg.Prices = prices
	cfg.FunctionMemory = bytesValue(c, "function-memory")
	cfg.SplitBytes = bytesValue(c, "split-bytes")
	cfg.AQE.MaxSplitBytes = bytesValue(c, "max-split-bytes")
	cfg.AQE.InlineScanBytes = bytesValue(c, "inline-scan-bytes")
	cfg.LimitEarlyStop = c.Bool("limit-early-stop")
	cfg.AQE.BroadcastBytes = bytesValue(c, "broadcast-bytes")
	cfg.AQE.UnbroadcastBytes = bytesValue(c, "unbroadcast-bytes")
	cfg.AQE.TargetPartitionBytes = bytesValue(c, "target-partition-bytes")
	cfg.AQE.SkewFactor = c.Float64("skew-factor")
	cfg.AQE.SkewMinBytes = bytesValue(c, "skew-min-bytes")
	cfg.AQE.GetBudget = c.Int64("get-budget")
	cfg.PackBytes = bytesValue(c, "pack-bytes")
	cfg.DeferProbeRatio = c.Int64("defer-probe-ratio")
	cfg.AQE.RuntimeFilters = c.Bool("runtime-filters")
	cfg.RuntimeFilterWait = c.Duration("runtime-filter-wait")
	codec, err := shuffle.ParseCompression(c.String("shuffle-codec"))
	if err != nil {
		return engine{}, fmt.Errorf("--shuffle-codec: %w", err)
	}
	cfg.ShuffleCodec = string(codec)
	return engine{partitions: c.Int("partitions"), planBroadcast: bytesValue(c, "plan-broadcast-bytes"),
		functionMemory: cfg.FunctionMemory}, nil
}
