// Command sluice is the CLI of sluice: the embedded stack, job submission,
// shuffle inspection, and TPC-H data generation.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/local/tpch"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := &cli.App{
		Name:  "sluice",
		Usage: "an adaptive, serverless, distributed SQL engine",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "log-level", Value: "warn", EnvVars: []string{"SLUICE_LOG_LEVEL"}, Usage: "debug, info, warn or error (JSON logs on stderr)"},
		},
		Commands: []*cli.Command{
			tpchCommand(),
			localCommand(),
			submitCommand(),
			explainCommand(),
			tablesCommand(),
			coordinatorCommand(),
			functionCommand(),
			jobsCommand(),
			shuffleCommand(),
			deployCommand(),
		},
		ExitErrHandler: func(c *cli.Context, err error) {},
	}
	if err := app.RunContext(ctx, os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func logger(c *cli.Context) *slog.Logger {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		lvl = slog.LevelWarn
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	// go-redis logs dial failures through its own package logger; route
	// them into ours at debug level so a user error prints one clear line.
	redis.SetLogger(redisLogger{log})
	return log
}

type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.Debug(fmt.Sprintf(format, v...), "component", "redis")
}

func tpchCommand() *cli.Command {
	return &cli.Command{
		Name:  "tpch",
		Usage: "TPC-H data",
		Subcommands: []*cli.Command{{
			Name:  "gen",
			Usage: "write the eight TPC-H tables as Parquet, one folder per table",
			Flags: []cli.Flag{
				&cli.Float64Flag{Name: "sf", Value: 0.01, Usage: "scale factor (fractions allowed)"},
				&cli.StringFlag{Name: "out", Required: true, Usage: "output folder"},
				&cli.Int64Flag{Name: "rows-per-file", Usage: "rows per Parquet file (default 1,000,000)"},
				&cli.Int64Flag{Name: "rows-per-group", Usage: "rows per row group (default 16,384)"},
				&cli.StringFlag{Name: "table", Usage: "generate only this table"},
			},
			Action: func(c *cli.Context) error {
				sf := c.Float64("sf")
				if sf <= 0 {
					return fmt.Errorf("--sf must be > 0, got %g", sf)
				}
				opts := tpch.WriteOptions{RowsPerFile: c.Int64("rows-per-file"), RowsPerRowGroup: c.Int64("rows-per-group")}
				var files []string
				var err error
				if t := c.String("table"); t != "" {
					files, err = tpch.WriteTableParquet(c.Context, c.String("out"), t, sf, opts)
				} else {
					files, err = tpch.WriteParquet(c.Context, c.String("out"), sf, opts)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "wrote %d files under %s (SF %g)\n", len(files), c.String("out"), sf)
				return nil
			},
		}},
	}
}

var queryFlags = []cli.Flag{
	&cli.StringFlag{Name: "format", Value: "table", Usage: "table, csv or json"},
	&cli.BoolFlag{Name: "adaptive", Value: true, EnvVars: []string{"SLUICE_ADAPTIVE"}, Usage: "re-plan after every stage (false: static plan)"},
	&cli.BoolFlag{Name: "stats", Usage: "print what the job did (stages, tasks, rows and bytes shuffled, adaptive rules) on stderr"},
	&cli.BoolFlag{Name: "explain", Usage: "print the plan instead of running the query"},
	&cli.BoolFlag{Name: "analyze", Usage: "after the result, print the plan history (adaptive rounds) and per-stage metrics"},
}

func localCommand() *cli.Command {
	stackFlags := []cli.Flag{
		&cli.StringFlag{Name: "redis", EnvVars: []string{"SLUICE_REDIS_URL"}, Usage: "Redis URL (default: miniredis in-process)"},
		&cli.StringFlag{Name: "minio", EnvVars: []string{"SLUICE_MINIO_BIN"}, Usage: "MinIO server binary (default: bin/minio)"},
		&cli.IntFlag{Name: "functions", Value: 4, Usage: "size of the in-process function pool"},
		&cli.IntFlag{Name: "partitions", Value: 0, Usage: "hash partitions per shuffle exchange (0: from the estimated data and --function-memory)"},
		functionMemoryFlag(),
		pricesFlag(),
		&cli.Int64Flag{Name: "target-partition-bytes", Value: 64 << 20, Usage: "adaptive coalescing target size"},
		&cli.Int64Flag{Name: "split-bytes", Value: 32 << 20, Usage: "table bytes per scan task"},
		&cli.Int64Flag{Name: "plan-broadcast-bytes", Value: 0, Usage: "planner: broadcast a join side estimated below this (0: default 8 MiB; -1: never)"},
		&cli.Int64Flag{Name: "broadcast-bytes", Value: 8 << 20, Usage: "adaptive: broadcast a finished join side up to this estimated in-memory size"},
		&cli.Int64Flag{Name: "unbroadcast-bytes", Value: 64 << 20, Usage: "adaptive: repartition a broadcast join side bigger than this in memory (0: never)"},
		&cli.Float64Flag{Name: "skew-factor", Value: 4, Usage: "adaptive: split partitions larger than this many times the median"},
		&cli.Int64Flag{Name: "skew-min-bytes", Value: 16 << 20, Usage: "adaptive: and larger than this"},
		&cli.BoolFlag{Name: "limit-early-stop", Value: true, Usage: "let tasks of a bare LIMIT stop once enough rows exist"},
	}
	return &cli.Command{
		Name:  "local",
		Usage: "the embedded stack: MinIO, miniredis, in-process functions and a coordinator",
		Subcommands: []*cli.Command{
			demoCommand(stackFlags),
			{
				Name:      "query",
				Usage:     "start the embedded stack, load --data, run one query, print it, stop",
				ArgsUsage: "SQL",
				Flags: append(append([]cli.Flag{
					&cli.StringFlag{Name: "data", Required: true, Usage: "folder of table folders (DIR/<table>/*.parquet)"},
				}, stackFlags...), queryFlags...),
				Action: func(c *cli.Context) error {
					sql := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
					if sql == "" {
						return errors.New("no SQL given: sluice local query --data DIR \"SELECT ...\"")
					}
					st, err := startStack(c, stackFlags)
					if err != nil {
						return err
					}
					defer st.Close()
					if _, err := st.LoadDir(c.Context, c.String("data")); err != nil {
						return err
					}
					cl := coordinator.NewClient(st.APIURL, "")
					if c.Bool("explain") {
						text, err := cl.Explain(c.Context, sql)
						if err != nil {
							return err
						}
						fmt.Print(text)
						return nil
					}
					return runAndPrint(c, cl, sql)
				},
			},
			{
				Name:  "start",
				Usage: "start the embedded stack and keep it running (Ctrl-C stops it)",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "data", Usage: "folder of table folders to load"},
					&cli.StringFlag{Name: "addr", Value: "127.0.0.1:0", Usage: "coordinator API address"},
				}, stackFlags...),
				Action: func(c *cli.Context) error {
					st, err := startStack(c, stackFlags)
					if err != nil {
						return err
					}
					defer st.Close()
					if d := c.String("data"); d != "" {
						tables, err := st.LoadDir(c.Context, d)
						if err != nil {
							return err
						}
						for _, t := range tables {
							fmt.Printf("table %-10s %9d rows %4d files\n", t.Name, t.Rows, len(t.Files))
						}
					}
					fmt.Printf("coordinator: %s\n", st.APIURL)
					fmt.Printf("redis:       %s\n", st.RedisURL)
					fmt.Printf("s3:          http://%s bucket %s\n", st.S3.Endpoint, st.S3.Bucket)
					fmt.Printf("\n# to inspect from another shell:\n")
					fmt.Printf("export SLUICE_COORDINATOR=%s\n", st.APIURL)
					fmt.Printf("export SLUICE_S3_ENDPOINT=%s SLUICE_S3_BUCKET=%s\n", st.S3.Endpoint, st.S3.Bucket)
					fmt.Printf("export AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s\n", st.S3.AccessKey, st.S3.SecretKey)
					fmt.Printf("export SLUICE_REDIS_URL=%s\n", st.RedisURL)
					fmt.Println("ready")
					<-c.Context.Done()
					return nil
				},
			},
		},
	}
}

func startStack(c *cli.Context, _ []cli.Flag) (*local.Stack, error) {
	opts := local.DefaultOptions()
	opts.RedisURL = c.String("redis")
	opts.MinIOBin = c.String("minio")
	opts.Functions = c.Int("functions")
	opts.Partitions = c.Int("partitions")
	opts.FunctionMemory = c.Generic("function-memory").(*byteSize).Get().(int64)
	prices, err := coordinator.ParsePrices(c.String("prices"))
	if err != nil {
		return nil, fmt.Errorf("--prices: %w", err)
	}
	opts.Coordinator.Prices = prices
	opts.APIAddr = c.String("addr")
	opts.Coordinator.AQE.TargetPartitionBytes = c.Int64("target-partition-bytes")
	opts.Coordinator.SplitBytes = c.Int64("split-bytes")
	opts.BroadcastBytes = c.Int64("plan-broadcast-bytes")
	opts.Coordinator.AQE.BroadcastBytes = c.Int64("broadcast-bytes")
	opts.Coordinator.AQE.UnbroadcastBytes = c.Int64("unbroadcast-bytes")
	opts.Coordinator.AQE.SkewFactor = c.Float64("skew-factor")
	opts.Coordinator.AQE.SkewMinBytes = c.Int64("skew-min-bytes")
	opts.Coordinator.LimitEarlyStop = c.Bool("limit-early-stop")
	opts.Log = logger(c)
	return local.Start(c.Context, opts)
}

func submitCommand() *cli.Command {
	return &cli.Command{
		Name:      "submit",
		Usage:     "run a query on a coordinator",
		ArgsUsage: "SQL",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "coordinator", EnvVars: []string{"SLUICE_COORDINATOR"}, Required: true, Usage: "coordinator API URL"},
			&cli.StringFlag{Name: "token", EnvVars: []string{"SLUICE_TOKEN"}, Usage: "bearer token of the coordinator API"},
		}, queryFlags...),
		Action: func(c *cli.Context) error {
			sql := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
			if sql == "" {
				return errors.New("no SQL given")
			}
			return runAndPrint(c, coordinator.NewClient(c.String("coordinator"), c.String("token")), sql)
		},
	}
}

func explainCommand() *cli.Command {
	return &cli.Command{
		Name:      "explain",
		Usage:     "print the logical plan, physical plan and stage graph of a query; with --analyze, a job's plan history and stage metrics",
		ArgsUsage: "SQL | --analyze JOB",
		Flags:     append(coordinatorFlags(), &cli.BoolFlag{Name: "analyze", Usage: "the argument is a job id: print its re-planning rounds and per-stage metrics"}),
		Action: func(c *cli.Context) error {
			sql := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
			if sql == "" {
				return errors.New("no SQL or job given")
			}
			cl := coordinator.NewClient(c.String("coordinator"), c.String("token"))
			if c.Bool("analyze") {
				js, err := cl.Status(c.Context, sql)
				if err != nil {
					return err
				}
				printAnalyze(os.Stdout, js)
				return nil
			}
			text, err := cl.Explain(c.Context, sql)
			if err != nil {
				return err
			}
			fmt.Print(text)
			return nil
		},
	}
}

func runAndPrint(c *cli.Context, cl *coordinator.Client, sql string) error {
	adaptive := c.Bool("adaptive")
	prog := newProgress(os.Stderr)
	res, err := local.RunQuery(c.Context, cl, sql, &adaptive, prog.update)
	prog.done()
	if err != nil {
		if res != nil && res.Status != nil && c.Bool("stats") {
			printStats(os.Stderr, res.Status)
		}
		return err
	}
	defer res.Release()
	if err := writeResult(os.Stdout, c.String("format"), res.Schema, res.Records); err != nil {
		return err
	}
	if c.Bool("stats") {
		printStats(os.Stderr, res.Status)
	}
	if c.Bool("analyze") {
		fmt.Println()
		printAnalyze(os.Stdout, res.Status)
	}
	return nil
}

func getenv(k string) string { return os.Getenv(k) }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func demoCommand(stackFlags []cli.Flag) *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "start the embedded stack, load --data, run the demo queries and show what the adaptive planner did",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "data", Required: true, Usage: "folder of table folders (sluice tpch gen --out)"},
		}, stackFlags...),
		Action: func(c *cli.Context) error {
			st, err := startStack(c, stackFlags)
			if err != nil {
				return err
			}
			defer st.Close()
			fmt.Printf("embedded stack: MinIO at %s, Redis at %s, coordinator at %s, %d in-process functions\n",
				st.S3.Endpoint, st.RedisURL, st.APIURL, c.Int("functions"))
			tables, err := st.LoadDir(c.Context, c.String("data"))
			if err != nil {
				return err
			}
			for _, t := range tables {
				fmt.Printf("  table %-10s %9d rows in %d files\n", t.Name, t.Rows, len(t.Files))
			}
			cl := coordinator.NewClient(st.APIURL, "")
			for _, q := range local.DemoQueries {
				fmt.Printf("\n== %s\n%s\n\n", q.Name, q.SQL)
				on := true
				res, err := local.RunQuery(c.Context, cl, q.SQL, &on, nil)
				if err != nil {
					return fmt.Errorf("%s: %w", q.Name, err)
				}
				if err := writeResult(os.Stdout, "table", res.Schema, res.Records); err != nil {
					return err
				}
				printStats(os.Stdout, res.Status)
				res.Release()
			}
			return nil
		},
	}
}
