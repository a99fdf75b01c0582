// Command sluice-function is the lean, pure-Go function binary for FaaS
// platforms: it runs sluice tasks and holds no SQL front end.
//
// When AWS_LAMBDA_RUNTIME_API is set (AWS Lambda, or the Lambda Runtime
// Interface Emulator) it runs the Lambda runtime loop: each invocation's
// payload is a TaskSpec, or {"spec_key": KEY} naming one in the bucket,
// and its response the TaskResult. Built for Lambda as `bootstrap` for the
// provided.al2023 runtime (make function). Otherwise it serves the HTTP
// protocol (POST /invoke, GET /healthz) on --addr, or :$PORT, or
// 127.0.0.1:8080; with SLUICE_FUNCTION_SECRET set, only invocations signed
// with it are run (others get 401). Under Lambda, IAM decides who invokes.
//
// Configuration comes from the environment, never from a TaskSpec:
// SLUICE_S3_ENDPOINT (empty: AWS S3), SLUICE_S3_BUCKET, SLUICE_S3_SSL,
// AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
// (on Lambda these three come from the function's role), SLUICE_REDIS_URL
// (optional: job cancel flags and LIMIT counters), SLUICE_SPILL_LIMIT
// (bytes a task may spill to local disk; default nine tenths of the free
// space of the temporary directory, divided among the tasks run at once)
// and SLUICE_LOG_LEVEL.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/function/redact"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "", "HTTP listen address (default :$PORT, else 127.0.0.1:8080); ignored under the Lambda runtime")
	flag.Parse()
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(os.Getenv("SLUICE_LOG_LEVEL"))); err != nil {
		lvl = slog.LevelWarn
	}
	log := slog.New(redact.Handler(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})))
	lambdaAPI := os.Getenv("AWS_LAMBDA_RUNTIME_API")

	ctx := context.Background()
	if lambdaAPI == "" {
		// Under Lambda the default signal handling stays: SIGTERM ends
		// the process. Serving HTTP, it drains in-flight requests first.
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	cfg := objstore.ConfigFromEnv()
	if cfg.S3.Endpoint == "" && lambdaAPI == "" {
		// Off Lambda an empty endpoint is far more often a missing
		// setting than a wish for AWS S3: say so.
		return fmt.Errorf("SLUICE_S3_ENDPOINT is not set")
	}
	bucket, err := objstore.Open(ctx, cfg)
	if err != nil {
		return err
	}
	var sig function.Signals
	if u := os.Getenv("SLUICE_REDIS_URL"); u != "" {
		o, err := redis.ParseURL(u)
		if err != nil {
			return redact.Err(fmt.Errorf("SLUICE_REDIS_URL: %w", err), redact.URLPassword(u))
		}
		rdb := redis.NewClient(o)
		defer rdb.Close()
		sig = function.RedisSignals{RDB: rdb}
	}
	rt := function.NewRuntime(bucket, sig, log)
	cacheBytes, err := function.FileCacheFor(function.MemoryLimit(), os.Getenv)
	if err != nil {
		return err
	}
	rt.Files = objstore.NewRangeCache(cacheBytes)
	// A function process runs tasks in the memory the platform gives:
	// let the heap grow within it instead of collecting every few MiB,
	// the file cache left out of the growth target.
	function.TuneGC(function.MemoryLimit(), rt.Files.Bytes)
	log.Info("file cache", "bytes", cacheBytes)
	// Spill to the local disk the platform gives (Lambda: /tmp, sized by
	// the function's ephemeral storage), within its free space: one task
	// at a time under Lambda, the HTTP slots otherwise.
	tasks := 1
	if lambdaAPI == "" {
		tasks = runtime.GOMAXPROCS(0) // function.HTTPOptions' default slots
	}
	if rt.SpillLimit, err = function.SpillLimitFor(rt.SpillDir, tasks); err != nil {
		return err
	}
	log.Info("spill", "dir", os.TempDir(), "limit_bytes", rt.SpillLimit)

	if lambdaAPI != "" {
		// The Lambda runtime loop never returns; it exits the process on
		// a runtime API failure, and Lambda starts a new one.
		log.Info("sluice function on the Lambda runtime API", "api", lambdaAPI)
		lambda.StartWithOptions(function.NewLambdaHandler(rt), lambda.WithContext(ctx))
		return nil
	}

	if *addr == "" {
		*addr = "127.0.0.1:8080"
		if p := os.Getenv("PORT"); p != "" {
			*addr = ":" + p // a platform that sets PORT routes to it
		}
	}
	secret := []byte(os.Getenv(function.SecretEnv))
	if len(secret) == 0 {
		log.Warn("invocations are not authenticated: set " + function.SecretEnv + " here and on the coordinator")
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	srv := &http.Server{Handler: function.NewHTTPHandler(rt, function.HTTPOptions{Secret: secret}), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	// The URL line on stdout tells a supervisor (and the tests) where the
	// function listens when --addr picked a free port.
	fmt.Printf("function serving http://%s\n", ln.Addr())
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}
