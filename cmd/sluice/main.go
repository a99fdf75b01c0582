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
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/function/redact"
	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/local/tpch"
)

func main() {
	// SIGINT and SIGTERM cancel the root context. The shell detaches the
	// root context from them (without cancelling it) and handles Ctrl-C
	// per statement.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	detached := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-detached:
		}
	}()
	var once sync.Once
	app := newApp()
	app.Metadata = map[string]any{stopSignalsKey: func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(detached)
		})
	}}
	args, err := normalizeArgs(app, os.Args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	if err := app.RunContext(ctx, args); err != nil {
		fmt.Fprintln(os.Stderr, "error:", redact.String(err.Error(), redact.URLPassword(os.Getenv("SLUICE_REDIS_URL"))))
		var intr *errInterrupted
		if errors.As(err, &intr) || ctx.Err() != nil {
			os.Exit(130)
		}
		os.Exit(1)
	}
}

// newApp builds the command tree.
func newApp() *cli.App {
	return &cli.App{
		Name:    "sluice",
		Usage:   "an adaptive, serverless, distributed SQL engine",
		Version: version(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "log-level", Value: "warn", EnvVars: []string{"SLUICE_LOG_LEVEL"}, Usage: "debug, info, warn or error (JSON logs on stderr)"},
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a Go CPU profile of the whole process to this file (for `go tool pprof`)"},
			&cli.StringFlag{Name: "memprofile", Usage: "write a Go heap profile (allocations since the start, and memory in use) to this file at exit (for `go tool pprof`)"},
		},
		Before: startCPUProfile,
		After:  stopProfiles,
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
			sqlCommand(stackFlags()),
			simCommand(),
		},
		ExitErrHandler: func(c *cli.Context, err error) {},
	}
}

// startCPUProfile starts the --cpuprofile profile, if asked for.
func startCPUProfile(c *cli.Context) error {
	path := c.String("cpuprofile")
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	c.App.Metadata = map[string]any{"cpuprofile": f}
	return nil
}

// stopProfiles writes the --memprofile profile, and ends the --cpuprofile
// profile and closes its file, each if asked for; a failure of one does
// not lose the other.
func stopProfiles(c *cli.Context) error {
	var errs []error
	if path := c.String("memprofile"); path != "" {
		errs = append(errs, writeHeapProfile(path))
	}
	if f, ok := c.App.Metadata["cpuprofile"].(*os.File); ok {
		pprof.StopCPUProfile()
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// writeHeapProfile writes the heap profile (alloc_space covers the whole
// run) to path, after a collection so that it is up to date (the profile
// is as of the last one).
func writeHeapProfile(path string) error {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("--memprofile: %w", err)
	}
	return f.Close()
}

func logger(c *cli.Context) *slog.Logger {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		lvl = slog.LevelWarn
	}
	log := redactingLogger(slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})))
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
	adaptiveFlag(),
	&cli.BoolFlag{Name: "stats", Usage: "print what the job did (stages, tasks, rows and bytes shuffled, adaptive rules) on stderr"},
	&cli.BoolFlag{Name: "explain", Usage: "print the plan instead of running the query"},
	&cli.BoolFlag{Name: "analyze", Usage: "after the result, print the plan history (adaptive rounds) and per-stage metrics"},
}

// stackFlags are the settings of the embedded stack (local query|start|demo, sql --local).
func stackFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "redis", EnvVars: []string{"SLUICE_REDIS_URL"}, Usage: "Redis URL (default: miniredis in-process)"},
		&cli.StringFlag{Name: "minio", EnvVars: []string{"SLUICE_MINIO_BIN"}, Usage: "MinIO server binary (default: bin/minio)"},
		&cli.StringFlag{Name: "iceberg-catalog", EnvVars: []string{"SLUICE_ICEBERG_CATALOG"}, Usage: "an Iceberg catalog whose tables are queried as namespace.table: rest:URI, sql:sqlite:PATH?warehouse=... or glue:?region=... (docs/data-sources.md)"},
	}, engineFlags(false)...)
}

func localCommand() *cli.Command {
	stackFlags := stackFlags()
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
				}, append(append([]cli.Flag{}, stackFlags...), wireFlags("127.0.0.1:0")...)...),
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
							fmt.Printf("table %-10s %9s rows %4d files\n", t.Name, t.RowsText(), len(t.Files))
						}
					}
					fmt.Printf("coordinator: %s\n", st.APIURL)
					fmt.Printf("web ui:      %s\n", coordinator.UIURL(st.APIURL, ""))
					fmt.Printf("redis:       %s\n", st.RedisURL)
					s3URL := st.S3.Endpoint // MinIO's host:port
					if !strings.Contains(s3URL, "://") {
						s3URL = "http://" + s3URL
					}
					fmt.Printf("s3:          %s bucket %s\n", s3URL, st.S3.Bucket)
					fmt.Printf("\n# to inspect from another shell, or to run `sluice coordinator serve --addr 127.0.0.1:0` on this stack:\n")
					fmt.Printf("export SLUICE_COORDINATOR=%s\n", st.APIURL)
					fmt.Printf("export SLUICE_S3_ENDPOINT=%s SLUICE_S3_BUCKET=%s\n", s3URL, st.S3.Bucket)
					fmt.Printf("export AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s\n", st.S3.AccessKey, st.S3.SecretKey)
					fmt.Printf("export SLUICE_REDIS_URL=%s\n", st.RedisURL)
					if err := startLocalWire(c, st); err != nil {
						return err
					}
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
	set, err := engineSettings(c, onLocal, opts.Coordinator)
	if err != nil {
		return nil, err
	}
	opts.Coordinator = set.Config
	opts.Functions = set.Functions
	opts.FileCache = set.FileCache
	opts.Partitions, opts.FunctionMemory, opts.BroadcastBytes = set.Partitions, set.Config.FunctionMemory, set.PlanBroadcastBytes
	opts.APIAddr = c.String("addr")
	opts.IcebergCatalog = c.String("iceberg-catalog")
	opts.Log = logger(c)
	st, err := local.Start(c.Context, opts)
	if err != nil {
		return nil, err
	}
	// The process runs the functions: tune its collector to their
	// memory, their file cache left out of the growth target.
	function.TuneGC(local.GCLimit(opts), st.Runtime.Files.Bytes)
	return st, nil
}

func submitCommand() *cli.Command {
	return &cli.Command{
		Name:      "submit",
		Usage:     "run a query on a coordinator",
		ArgsUsage: "SQL",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "coordinator", EnvVars: []string{"SLUICE_COORDINATOR"}, Required: true, Usage: "coordinator API URL"},
			&cli.StringFlag{Name: "token", EnvVars: []string{"SLUICE_TOKEN"}, Usage: "bearer token of the coordinator API"},
			&cli.BoolFlag{Name: "detach", Usage: "print the job id and return at once, without waiting for the result"},
		}, queryFlags...),
		Action: func(c *cli.Context) error {
			sql := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
			if sql == "" {
				return errors.New("no SQL given")
			}
			return runAndPrint(c, coordinator.NewClient(httpEndpoint(c.String("coordinator")), c.String("token")), sql)
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
			cl := coordinator.NewClient(httpEndpoint(c.String("coordinator")), c.String("token"))
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

// errInterrupted is returned when the user pressed Ctrl-C while a job ran:
// the job was cancelled on the coordinator and the CLI exits 130.
type errInterrupted struct{ job string }

func (e *errInterrupted) Error() string {
	if e.job == "" {
		return "interrupted: the statement was cancelled on the coordinator"
	}
	return "interrupted: cancelled job " + e.job
}

// queryOpts are the output and run settings of one query.
type queryOpts struct {
	format   string
	adaptive bool
	stats    bool
	analyze  bool
	detach   bool
	quiet    bool      // no job id line (the shell)
	fit      *tableFit // table fitting; nil: defaultFit of the output
}

// writeTo prints a result as o says.
func (o queryOpts) writeTo(out io.Writer, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	if o.fit != nil {
		return writeResultFit(out, o.format, schema, recs, *o.fit)
	}
	return writeResult(out, o.format, schema, recs)
}

// resultAttempts is how many times a result read cut by the network is
// started again (from the first row not yet printed).
const resultAttempts = 3

// printResult prints a succeeded job's result. csv and json print each
// batch as it arrives, so a result of any size streams through constant
// memory; a read cut short resumes after the rows already printed (the
// result of a finished job reads the same on every read), up to
// resultAttempts reads. A table needs every row to size its columns, so
// it is read whole first.
func (o queryOpts) printResult(ctx context.Context, cl *coordinator.Client, job string, out, errw io.Writer) error {
	if o.format != "csv" && o.format != "json" {
		schema, recs, err := cl.Result(ctx, job)
		if err != nil {
			return err
		}
		defer func() {
			for _, r := range recs {
				r.Release()
			}
		}()
		return o.writeTo(out, schema, recs)
	}
	var rs rowStream
	var printed int64
	var werr error // the output failed: never retried
	for attempt := 1; ; attempt++ {
		err := cl.ResultStream(ctx, job, printed, func(schema *arrow.Schema) error {
			if rs != nil {
				return nil
			}
			var err error
			if rs, err = newRowStream(out, o.format, schema); err != nil {
				werr = err
			}
			return werr
		}, func(rec arrow.RecordBatch) error {
			if werr = rs.write(rec); werr != nil {
				return werr
			}
			printed += rec.NumRows()
			return nil
		})
		if err == nil {
			return rs.close()
		}
		if werr != nil || ctx.Err() != nil || attempt == resultAttempts || !resultReadRetryable(err) {
			if rs != nil {
				_ = rs.close()
			}
			if printed > 0 && werr == nil {
				return fmt.Errorf("the result of job %s was cut after %d rows were printed; they are its first rows, not all of it: %w", job, printed, err)
			}
			return err
		}
		fmt.Fprintf(errw, "reading the result of job %s again after %d rows: %v\n", job, printed, err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
		}
	}
}

// resultReadRetryable says whether a failed result read may be tried
// again: a cut stream or a coordinator that could not read the bucket
// (503), not a job that failed or does not exist.
func resultReadRetryable(err error) bool {
	var ae *coordinator.APIError
	if errors.As(err, &ae) {
		return ae.Status >= 500
	}
	return true
}

// runAndPrint runs one query for the submit and local query commands.
func runAndPrint(c *cli.Context, cl *coordinator.Client, sql string) error {
	err := execQuery(c.Context, cl, sql, queryOpts{format: c.String("format"), adaptive: c.Bool("adaptive"),
		stats: c.Bool("stats"), analyze: c.Bool("analyze"), detach: c.Bool("detach")}, os.Stdout, os.Stderr)
	if err != nil {
		return &sqlError{sql: sql, err: err}
	}
	return nil
}

// execQuery submits sql, prints the job id on stderr, waits with a
// progress line, and prints the result. When ctx ends (Ctrl-C) the job is
// cancelled on the coordinator, not just abandoned, and errInterrupted is
// returned.
func execQuery(ctx context.Context, cl *coordinator.Client, sql string, o queryOpts, out, errw io.Writer) error {
	// Every statement goes through /v1/statements: a query comes back as a
	// job to wait for, any other statement (DDL, SHOW, DESCRIBE, COPY,
	// CTAS, EXPLAIN) with its result set.
	job, schema, recs, err := cl.Statement(ctx, sql, &o.adaptive)
	if err != nil {
		if ctx.Err() != nil {
			return &errInterrupted{}
		}
		return err
	}
	if job == "" {
		defer func() {
			for _, r := range recs {
				r.Release()
			}
		}()
		return o.writeTo(out, schema, recs)
	}
	if o.detach {
		fmt.Fprintln(out, job)
		return nil
	}
	if !o.quiet {
		fmt.Fprintf(errw, "job %s\n", job)
	}
	prog := newProgress(errw)
	js, err := cl.Wait(ctx, job, prog.update)
	prog.done()
	if ctx.Err() != nil {
		return cancelJob(cl, job)
	}
	if err != nil {
		return err
	}
	if js.State != coordinator.StateSucceeded {
		if o.stats {
			printStats(errw, js)
		}
		return fmt.Errorf("job %s %s: %s", job, js.State, js.Error)
	}
	if err := o.printResult(ctx, cl, job, out, errw); err != nil {
		if ctx.Err() != nil {
			return &errInterrupted{job: job}
		}
		return err
	}
	if o.stats {
		printStats(errw, js)
	}
	if o.analyze {
		printAnalyze(errw, js)
	}
	return nil
}

// cancelJob cancels job on the coordinator after the user interrupted the
// client (its own context is done, so a fresh one bounds the call).
func cancelJob(cl *coordinator.Client, job string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.Cancel(ctx, job); err != nil {
		return fmt.Errorf("interrupted, and cancelling job %s failed: %w", job, err)
	}
	return &errInterrupted{job: job}
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
			&cli.BoolFlag{Name: "serve", Usage: "after the queries, keep the stack (and its web UI) running until Ctrl-C (when stdin is a terminal)"},
		}, stackFlags...),
		Action: func(c *cli.Context) error {
			st, err := startStack(c, stackFlags)
			if err != nil {
				return err
			}
			defer st.Close()
			fmt.Printf("embedded stack: MinIO at %s, Redis at %s, coordinator at %s, %d in-process functions\n",
				st.S3.Endpoint, st.RedisURL, st.APIURL, st.Pool.Size())
			fmt.Printf("web UI: %s\n", coordinator.UIURL(st.APIURL, ""))
			tables, err := st.LoadDir(c.Context, c.String("data"))
			if err != nil {
				return err
			}
			for _, t := range tables {
				fmt.Printf("  table %-10s %9s rows in %d files\n", t.Name, t.RowsText(), len(t.Files))
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
				fmt.Printf("job page: %s\n", coordinator.UIURL(st.APIURL, res.Job))
				res.Release()
			}
			// --serve waits only for a person at a terminal: a script or CI
			// running `make demo` must not hang.
			if c.Bool("serve") && isTerminal(os.Stdin) {
				fmt.Printf("\nweb UI: %s (every job above, its stage graph per adaptive round, its tasks; Ctrl-C stops)\n",
					coordinator.UIURL(st.APIURL, ""))
				<-c.Context.Done()
			}
			return nil
		},
	}
}
