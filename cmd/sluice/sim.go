package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local/redisserver"
	"github.com/sluicedb/sluice/local/sim"
	"github.com/sluicedb/sluice/planner/adaptive"
)

// defaultSimSettings are the simulation knobs' defaults: the models'
// own (local/sim), at SF 1 and a factor of 10.
func defaultSimSettings() simSettings {
	p, st := sim.DefaultPlatformConfig(), sim.DefaultStoreConfig()
	return simSettings{SF: 1, Factor: 10, LambdaConcurrency: p.Concurrency, StragglerRate: p.StragglerRate,
		CrashRate: p.CrashRate, Skew: p.Skew, ColdStart: p.ColdStart, PrefixGetRate: st.GetRate, PrefixPutRate: st.PutRate}
}

func simCommand() *cli.Command {
	return &cli.Command{
		Name:      "sim",
		Usage:     "run queries through the real coordinator and a redis-server over modelled Lambda and S3, on virtual TPC-H tables",
		ArgsUsage: "[SQL...]",
		Description: "Runs each query (the SQL arguments, or the .sql files of --query-dir picked by --pick) through the real planner, " +
			"re-planner, coordinator and a redis-server it starts, with the functions and the object store replaced by models " +
			"(local/sim), and prints per query the simulated latency, functions, peak concurrency, 429s, 503s, retries, " +
			"requests and peak rates per prefix, Redis commands, this process's CPU and RSS, and $. --functions is the " +
			"coordinator's invoker concurrency.",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "query-dir", Usage: "a folder of qNN.sql files (e.g. planner/testdata/tpch)"},
			&cli.StringFlag{Name: "pick", Value: "all", Usage: "comma-separated query names of --query-dir (q01,q06) or all"},
			&cli.StringFlag{Name: "redis", Usage: "address of a redis-server to use (default: start one)"},
			&cli.IntFlag{Name: "mix-small", Usage: "run the (one) query as a big job and, once it runs, this many small jobs (--mix-small-sql) at once, without and with --fair-share (and, with --max-jobs, with both), and print the small jobs' latencies"},
			&cli.StringFlag{Name: "mix-small-sql", Value: "select count(*) from supplier where s_acctbal > 0", Usage: "the small jobs' query for --mix-small"},
			&cli.DurationFlag{Name: "real-floor", Usage: "real-time floor of the scaled task deadlines and lease (0: 40 ms per slot per core, at least 30 s); raise it on a loaded machine, where an attempt's real latency (the coordinator's own work, not modelled) passes the floor"},
			&cli.DurationFlag{Name: "mix-after", Value: 30 * time.Second, Usage: "simulated time between the big job's submission and the small ones'"},
			&cli.StringFlag{Name: "pprof", Usage: "serve Go's profiles (net/http/pprof) on this address while the simulation runs, e.g. localhost:6061"},
			&cli.BoolFlag{Name: "compare-sizes", Usage: "run the queries on each single size of --function-sizes, then with size-functions choosing per stage for each --optimize objective, and print $ and latency of each"},
		}, knobFlags(onLocal, false)...), knobFlags(onSim, false)...),
		Action: runSim,
	}
}

func simQueries(c *cli.Context) ([]sim.Query, error) {
	var qs []sim.Query
	for i, a := range c.Args().Slice() {
		qs = append(qs, sim.Query{Name: fmt.Sprintf("sql%d", i+1), SQL: a})
	}
	dir := c.String("query-dir")
	if dir == "" {
		if len(qs) == 0 {
			return nil, errors.New("no query: give SQL or --query-dir")
		}
		return qs, nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	pick := map[string]bool{}
	for _, p := range strings.Split(c.String("pick"), ",") {
		pick[strings.TrimSpace(p)] = true
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		if !pick["all"] && !pick[name] {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		qs = append(qs, sim.Query{Name: name, SQL: string(b)})
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("no query of %s matches --pick %s", dir, c.String("pick"))
	}
	return qs, nil
}

func runSim(c *cli.Context) error {
	ctx := c.Context
	qs, err := simQueries(c)
	if err != nil {
		return err
	}
	set, err := engineSettings(c, onLocal|onSim, coordinator.DefaultConfig())
	if err != nil {
		return err
	}
	if a := c.String("pprof"); a != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		srv := &http.Server{Addr: a, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.ListenAndServe() }()
		defer srv.Close()
	}
	addr := c.String("redis")
	if addr == "" {
		srv, err := redisserver.Start(ctx)
		if err != nil {
			return fmt.Errorf("sluice sim needs a redis-server: %w", err)
		}
		defer srv.Stop()
		addr = srv.Addr
	}
	cfg := set.Config
	cfg.Concurrency = set.Functions
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = set.Sim.LambdaConcurrency
	}
	plat := sim.DefaultPlatformConfig()
	plat.Concurrency, plat.StragglerRate, plat.CrashRate = set.Sim.LambdaConcurrency, set.Sim.StragglerRate, set.Sim.CrashRate
	plat.Skew, plat.ColdStart = set.Sim.Skew, set.Sim.ColdStart
	store := sim.DefaultStoreConfig()
	store.GetRate, store.PutRate = set.Sim.PrefixGetRate, set.Sim.PrefixPutRate
	opts := sim.Options{SF: set.Sim.SF, Factor: set.Sim.Factor, RedisAddr: addr, Coordinator: cfg,
		Platform: plat, Store: store, Partitions: set.Partitions, Log: logger(c), RealFloor: c.Duration("real-floor")}
	if n := c.Int("mix-small"); n > 0 {
		return runMix(c, opts, qs[0], n)
	}
	if c.Bool("compare-sizes") {
		return runCompareSizes(c, opts, qs)
	}
	s, err := sim.New(ctx, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(c.App.Writer, "TPC-H SF %g (virtual), time x%g, %d coordinator slots, Lambda concurrency %d, %d MiB functions, stragglers %.1f%%, crashes %.1f%%\n",
		set.Sim.SF, set.Sim.Factor, cfg.Concurrency, plat.Concurrency, cfg.FunctionMemory>>20, 100*plat.StragglerRate, 100*plat.CrashRate)
	var rs []sim.QueryReport
	for _, q := range qs {
		r := s.Run(ctx, q)
		rs = append(rs, r)
		fmt.Fprintf(os.Stderr, "%s: %s in %v simulated (%v real), %d functions\n", q.Name, r.State, r.Latency.Round(1e8), r.Wall.Round(1e7), r.Functions)
	}
	sim.PrintReport(c.App.Writer, rs)
	for _, r := range rs {
		if r.State != "succeeded" {
			return cli.Exit("", 1)
		}
	}
	return nil
}

// runMix runs one big query beside n small ones, without and then with
// fair sharing, and, with --max-jobs, with fair sharing and admission
// control, each on a fresh coordinator, and prints the small jobs'
// latencies.
func runMix(c *cli.Context, opts sim.Options, big sim.Query, n int) error {
	small := make([]sim.Query, n)
	for i := range small {
		small[i] = sim.Query{Name: fmt.Sprintf("small%d", i+1), SQL: c.String("mix-small-sql")}
	}
	fmt.Fprintf(c.App.Writer, "TPC-H SF %g (virtual), time x%g, %d coordinator slots, Lambda concurrency %d: %s beside %d x %q submitted %v later\n",
		opts.SF, opts.Factor, opts.Coordinator.Concurrency, opts.Platform.Concurrency, big.Name, n, c.String("mix-small-sql"), c.Duration("mix-after"))
	type config struct {
		fair    bool
		maxJobs int
	}
	configs := []config{{false, 0}, {true, 0}}
	if n := opts.Coordinator.MaxJobs; n > 0 {
		configs = append(configs, config{true, n})
	}
	var rs []sim.MixReport
	for _, cf := range configs {
		o := opts
		o.Coordinator.FairShare, o.Coordinator.MaxJobs = cf.fair, cf.maxJobs
		s, err := sim.New(c.Context, o)
		if err != nil {
			return err
		}
		r, err := s.Mix(c.Context, big, small, c.Duration("mix-after"))
		s.Close()
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	sim.PrintMix(c.App.Writer, rs)
	return nil
}

// runCompareSizes runs qs on each size of --function-sizes alone (every
// stage on that size, and tasks planned for it), then with size-functions
// choosing a size per stage under each objective (tasks planned for
// --function-memory), each on a fresh coordinator, and prints the totals.
func runCompareSizes(c *cli.Context, opts sim.Options, qs []sim.Query) error {
	sizes := opts.Coordinator.AQE.Sizing.Sizes
	if len(sizes) < 2 {
		return errors.New("--compare-sizes needs --function-sizes with two sizes or more")
	}
	type run struct {
		name string
		o    sim.Options
	}
	var runs []run
	for _, m := range sizes {
		o := opts
		o.Coordinator.FunctionMemory = m
		o.Coordinator.AQE.Sizing.Sizes = nil
		runs = append(runs, run{fmt.Sprintf("all %d MiB", m>>20), o})
	}
	for _, obj := range []string{adaptive.OptimizeCost, adaptive.OptimizeBalanced, adaptive.OptimizeLatency} {
		o := opts
		o.Coordinator.AQE.Sizing.Optimize = obj
		runs = append(runs, run{fmt.Sprintf("size-functions %s (planned for %d MiB)", obj, opts.Coordinator.FunctionMemory>>20), o})
	}
	fmt.Fprintf(c.App.Writer, "TPC-H SF %g (virtual), time x%g, %d queries, %d coordinator slots, Lambda concurrency %d\n",
		opts.SF, opts.Factor, len(qs), opts.Coordinator.Concurrency, opts.Platform.Concurrency)
	fmt.Fprintf(c.App.Writer, "%-44s %12s %10s %10s %12s %10s\n", "sizes", "latency", "functions", "GB-s", "$", "failed")
	for _, r := range runs {
		s, err := sim.New(c.Context, r.o)
		if err != nil {
			return err
		}
		var lat time.Duration
		var fns, failed int64
		var gbs, usd float64
		for _, q := range qs {
			rep := s.Run(c.Context, q)
			lat += rep.Latency
			fns += rep.Functions
			gbs += rep.GBSeconds
			usd += rep.Dollars
			if rep.State != "succeeded" {
				failed++
			}
		}
		s.Close()
		fmt.Fprintf(c.App.Writer, "%-44s %12v %10d %10.0f %12.4f %10d\n", r.name, lat.Round(time.Second), fns, gbs, usd, failed)
	}
	return nil
}
