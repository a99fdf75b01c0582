// Command sluice-function is the lean, pure-Go function binary for FaaS
// platforms: it runs sluice tasks and holds no SQL front end. It serves the
// HTTP protocol (POST /invoke) on $PORT or --addr.
//
// Configuration comes from the environment, never from a TaskSpec:
// SLUICE_S3_ENDPOINT, SLUICE_S3_BUCKET, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_REGION, SLUICE_S3_SSL, and SLUICE_REDIS_URL
// (optional: job cancel flags).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "", "listen address (default :$PORT or :8080)")
	flag.Parse()
	if *addr == "" {
		*addr = ":8080"
		if p := os.Getenv("PORT"); p != "" {
			*addr = ":" + p
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	cfg := objstore.S3ConfigFromEnv()
	if cfg.Endpoint == "" {
		return fmt.Errorf("SLUICE_S3_ENDPOINT is not set")
	}
	bucket, err := objstore.NewS3(ctx, cfg)
	if err != nil {
		return err
	}
	var sig function.Signals
	if u := os.Getenv("SLUICE_REDIS_URL"); u != "" {
		o, err := redis.ParseURL(u)
		if err != nil {
			return fmt.Errorf("SLUICE_REDIS_URL: %w", err)
		}
		sig = function.RedisSignals{RDB: redis.NewClient(o)}
	}
	rt := function.NewRuntime(bucket, sig, log)
	srv := &http.Server{Addr: *addr, Handler: function.HTTPHandler(rt), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("sluice function listening", "addr", *addr)
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		return err
	}
	return nil
}
