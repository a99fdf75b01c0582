package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v2"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/coordinator/sqlsession"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/function/redisdb"
	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/catalog"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// openS3 opens the S3 bucket the flags and the environment name
// (objstore.Open).
func openS3(c *cli.Context) (objstore.Bucket, error) {
	cfg := objstore.ConfigFromEnv()
	if e := c.String("s3-endpoint"); e != "" {
		cfg.S3.Endpoint = e
	}
	if b := c.String("bucket"); b != "" {
		cfg.S3.Bucket = b
	}
	if cfg.S3.Endpoint == "" {
		return nil, errors.New("no S3 endpoint: set --s3-endpoint or SLUICE_S3_ENDPOINT")
	}
	return objstore.Open(c.Context, cfg)
}

func openRedis(ctx context.Context, url string) (redis.UniversalClient, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, redisError(url, fmt.Errorf("redis URL: %w", err))
	}
	o.MaxRetries = redisdb.NoClientRetries
	rdb := redis.NewClient(o)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		rdb.Close()
		return nil, redisError(url, fmt.Errorf("redis at %s unreachable: %w", o.Addr, err))
	}
	return rdb, nil
}

func coordinatorCommand() *cli.Command {
	return &cli.Command{
		Name:  "coordinator",
		Usage: "run a coordinator service",
		Subcommands: []*cli.Command{{
			Name:  "serve",
			Usage: "serve the coordinator API and drive jobs (any number of replicas may run against one Redis)",
			Flags: append(append(append(s3Flags(),
				&cli.StringFlag{Name: "redis", EnvVars: []string{"SLUICE_REDIS_URL"}, Required: true, Usage: "Redis URL (rediss:// for TLS)"},
				&cli.StringFlag{Name: "addr", Value: "127.0.0.1:7070", EnvVars: []string{"SLUICE_COORDINATOR_ADDR"}, Usage: "API listen address"},
				&cli.StringFlag{Name: "token", EnvVars: []string{"SLUICE_TOKEN"}, Usage: "require this bearer token on the API (required on a non-loopback --addr)"},
				insecureFlag(),
				&cli.StringSliceFlag{Name: "function-url", EnvVars: []string{"SLUICE_FUNCTION_URLS"}, Usage: "HTTP function endpoints (default: in-process functions)"},
				&cli.StringFlag{Name: "lambda-function", EnvVars: []string{"SLUICE_LAMBDA_FUNCTION"}, Usage: "invoke this AWS Lambda function (name or ARN; \"function\" under the Lambda Runtime Interface Emulator)"},
				&cli.StringSliceFlag{Name: "lambda-endpoint", EnvVars: []string{"SLUICE_LAMBDA_ENDPOINTS"}, Usage: "Lambda API endpoint(s) instead of AWS (emulators; concurrency slots are spread over several)"},
				&cli.StringFlag{Name: "lambda-region", EnvVars: []string{"SLUICE_LAMBDA_REGION"}, Usage: "AWS region of the function (default AWS_REGION)"},
				&cli.StringFlag{Name: "iceberg-catalog", EnvVars: []string{"SLUICE_ICEBERG_CATALOG"}, Usage: "an Iceberg catalog whose tables are queried as namespace.table: rest:URI, sql:sqlite:PATH?warehouse=... or glue:?region=... (docs/data-sources.md)"},
			), engineFlags(true)...), wireFlags("")...),
			Action: func(c *cli.Context) error {
				log := logger(c)
				if err := requireAuth(c, log, c.String("addr"), "coordinator API", "set --token (or SLUICE_TOKEN)", c.String("token") != ""); err != nil {
					return err
				}
				rdb, err := openRedis(c.Context, c.String("redis"))
				if err != nil {
					return err
				}
				defer rdb.Close()
				raw, err := openS3(c)
				if err != nil {
					return err
				}
				// One observed client for the coordinator and its
				// in-process functions: the metrics count both.
				bucket := objstore.Observe(raw)
				if err := bucket.EnsureBucket(c.Context); err != nil {
					return err
				}
				cfg := coordinator.DefaultConfig()
				cfg.Bucket = c.String("bucket")
				cfg.Prefix = c.String("prefix")
				set, err := engineSettings(c, onServe, cfg)
				if err != nil {
					return err
				}
				cfg = set.Config
				var inv coordinator.Invoker
				if name := c.String("lambda-function"); name != "" {
					if len(c.StringSlice("function-url")) > 0 {
						return errors.New("--lambda-function and --function-url are exclusive: pick one invoker")
					}
					inv, err = coordinator.NewLambdaInvoker(c.Context, coordinator.LambdaConfig{
						FunctionName: name, Region: c.String("lambda-region"), Endpoints: httpEndpoints(c.StringSlice("lambda-endpoint")),
						Concurrency: set.Functions, Timeout: set.LambdaTimeout,
						PayloadLimit: set.LambdaPayloadLimit, Bucket: bucket,
						Sized: sizedFunctions(name, cfg.FunctionMemory, cfg.AQE.Sizing.Sizes),
					})
					if err != nil {
						return err
					}
				} else if urls := c.StringSlice("function-url"); len(urls) > 0 {
					if len(cfg.AQE.Sizing.Sizes) > 0 {
						return errors.New("--function-sizes needs --lambda-function (one function per size) or the embedded pool: HTTP functions have one size")
					}
					for i := range urls {
						urls[i] = strings.TrimRight(httpEndpoint(urls[i]), "/")
					}
					hi := coordinator.NewHTTPInvoker(urls, set.Functions)
					hi.Bucket = bucket
					hi.Timeout = set.FunctionTimeout
					hi.Secret = functionSecret()
					if len(hi.Secret) == 0 {
						log.Warn("HTTP functions are invoked unsigned: set " + function.SecretEnv + " on the coordinator and the functions")
					}
					defer hi.Close()
					inv = hi
				} else {
					rt := function.NewRuntime(bucket, function.RedisSignals{RDB: rdb}, log)
					// At most a quarter of the pool's memory, as on the
					// embedded stack (local.FileCacheBudget).
					rt.Files = objstore.NewRangeCache(min(set.FileCache, int64(max(set.Functions, 1))*set.Config.FunctionMemory/4))
					if err := applySpillLimit(rt, set.Functions, log); err != nil {
						return err
					}
					inv = function.NewPool(rt, set.Functions)
				}
				if err := applyFaults(c, set, &inv, bucket); err != nil {
					return err
				}
				cat := catalog.NewStore(rdb)
				cat.Bucket = bucket // external tables are re-listed when used
				cat.BucketName = cfg.Bucket
				if spec := c.String("iceberg-catalog"); spec != "" {
					if cat.Iceberg, err = catalog.OpenIcebergCatalog(c.Context, spec); err != nil {
						return err
					}
				}
				pl := &sqlsession.Session{Catalog: cat, Options: planner.Options{Partitions: set.Partitions,
					BroadcastBytes: set.PlanBroadcastBytes, TaskBytes: planner.TaskBytesFor(cfg.FunctionMemory)}}
				co := coordinator.New(cfg, coordinator.NewStore(rdb), bucket, pl, cat, inv, log)
				bucket.OnError(co.Metrics().S3Error)
				defer co.Close()
				go co.Recover(c.Context, cfg.LeaseTTL/2)
				api := coordinator.NewAPI(co)
				api.Token = c.String("token")
				ln, err := net.Listen("tcp", c.String("addr"))
				if err != nil {
					return fmt.Errorf("listen on %s: %w", c.String("addr"), err)
				}
				stopWire, err := startWire(c, co.Queries(), api.Token, log)
				if err != nil {
					ln.Close()
					return err
				}
				defer stopWire()
				srv := &http.Server{Handler: api.Handler(), ReadHeaderTimeout: 10 * time.Second}
				go func() {
					<-c.Context.Done()
					sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					_ = srv.Shutdown(sctx)
				}()
				fmt.Printf("coordinator %s serving http://%s\n", cfg.Owner, ln.Addr())
				if err := srv.Serve(ln); err != http.ErrServerClosed {
					return err
				}
				return nil
			},
		}},
	}
}

// applySpillLimit sets the spill limit of rt's tasks, tasks of which run at
// once: $SLUICE_SPILL_LIMIT, or a share of the spill disk's free space
// (function.SpillLimitFor), as cmd/sluice-function does.
func applySpillLimit(rt *function.Runtime, tasks int, log *slog.Logger) error {
	limit, err := function.SpillLimitFor(rt.SpillDir, tasks)
	if err != nil {
		return err
	}
	rt.SpillLimit = limit
	dir := rt.SpillDir
	if dir == "" {
		dir = os.TempDir()
	}
	log.Info("spill", "dir", dir, "limit_bytes", limit, "tasks", tasks)
	return nil
}

func functionCommand() *cli.Command {
	return &cli.Command{
		Name:  "function",
		Usage: "run the sluice function",
		Subcommands: []*cli.Command{{
			Name:  "serve",
			Usage: "serve the HTTP function protocol (POST /invoke) on --addr or $PORT",
			Flags: append(s3Flags(),
				&cli.StringFlag{Name: "addr", Aliases: []string{"listen"}, Usage: "listen address (default 127.0.0.1:8080, or :$PORT on platforms that set PORT)"},
				&cli.StringFlag{Name: "redis", EnvVars: []string{"SLUICE_REDIS_URL"}, Usage: "Redis URL for job cancel flags (optional)"},
				&cli.IntFlag{Name: "concurrency", Usage: "tasks run at once; more invocations wait (0: one per core, GOMAXPROCS)"},
				insecureFlag(),
			),
			Action: func(c *cli.Context) error {
				log := logger(c)
				bucket, err := openS3(c)
				if err != nil {
					return err
				}
				var sig function.Signals
				if u := c.String("redis"); u != "" {
					rdb, err := openRedis(c.Context, u)
					if err != nil {
						return err
					}
					defer rdb.Close()
					sig = function.RedisSignals{RDB: rdb}
				}
				addr := c.String("addr")
				if addr == "" {
					addr = "127.0.0.1:8080"
					if p := getenv("PORT"); p != "" {
						addr = ":" + p
					}
				}
				secret := functionSecret()
				if err := requireAuth(c, log, addr, "function", "set "+function.SecretEnv+" (the coordinator's too)", len(secret) > 0); err != nil {
					return err
				}
				ln, err := net.Listen("tcp", addr)
				if err != nil {
					return fmt.Errorf("listen on %s: %w", addr, err)
				}
				rt := function.NewRuntime(bucket, sig, log)
				cacheBytes, err := function.FileCacheFor(function.MemoryLimit(), os.Getenv)
				if err != nil {
					return err
				}
				rt.Files = objstore.NewRangeCache(cacheBytes)
				// As sluice-function does: the heap grows within the
				// function's memory, the file cache left out of the target.
				function.TuneGC(function.MemoryLimit(), rt.Files.Bytes)
				tasks := c.Int("concurrency")
				if tasks <= 0 {
					tasks = runtime.GOMAXPROCS(0) // function.HTTPOptions' default slots
				}
				if err := applySpillLimit(rt, tasks, log); err != nil {
					return err
				}
				h := function.NewHTTPHandler(rt, function.HTTPOptions{Secret: secret, Concurrency: c.Int("concurrency")})
				srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
				go func() {
					<-c.Context.Done()
					sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					_ = srv.Shutdown(sctx)
				}()
				fmt.Printf("function serving http://%s\n", ln.Addr())
				if err := srv.Serve(ln); err != http.ErrServerClosed {
					return err
				}
				return nil
			},
		}},
	}
}

// sizedFunctions names the Lambda function of each size of
// --function-sizes: <name>-<MiB>, and name itself for the size of
// --function-memory.
func sizedFunctions(name string, mem int64, sizes []int64) map[int64]string {
	if len(sizes) == 0 {
		return nil
	}
	out := make(map[int64]string, len(sizes))
	for _, s := range sizes {
		if s == mem {
			out[s] = name
			continue
		}
		out[s] = fmt.Sprintf("%s-%d", name, s>>20)
	}
	return out
}
