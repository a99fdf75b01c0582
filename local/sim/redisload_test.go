package sim

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// gate is a go-redis hook that holds every INCR (and pipeline of them)
// until it is opened; added after redisLoad, it runs inside it (as the
// wait for a connection and the round trip do).
type gate struct {
	held chan struct{} // one send per command held
	open chan struct{}
}

func (g *gate) DialHook(next redis.DialHook) redis.DialHook { return next }

func (g *gate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "incr" {
			return next(ctx, cmd)
		}
		g.held <- struct{}{}
		<-g.open
		return next(ctx, cmd)
	}
}

func (g *gate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) == 0 || cmds[0].Name() != "incr" {
			return next(ctx, cmds)
		}
		g.held <- struct{}{}
		<-g.open
		return next(ctx, cmds)
	}
}

// TestRedisLoad checks the in-flight count of the Redis hook: commands
// and pipelines held at once count one each, the peak stays after they
// end, and takePeak starts the next period at what is in flight.
func TestRedisLoad(t *testing.T) {
	for _, tc := range []struct {
		name            string
		cmds, pipelines int
	}{
		{"one command", 1, 0},
		{"commands", 12, 0},
		{"commands and pipelines", 5, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 2, PipelinePoolSize: 1})
			defer rdb.Close()
			ctx := context.Background()
			// Every connection dialled first (the pipeline pool's one, the
			// main pool's two): a dial's own handshake (HELLO) runs through
			// the hooks too.
			if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error { return p.Ping(ctx).Err() }); err != nil {
				t.Fatal(err)
			}
			conns := []*redis.Conn{rdb.Conn(), rdb.Conn()}
			for _, c := range conns {
				if err := c.Ping(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range conns {
				c.Close()
			}
			load := &redisLoad{}
			rdb.AddHook(load)
			g := &gate{held: make(chan struct{}), open: make(chan struct{})}
			rdb.AddHook(g)
			var wg sync.WaitGroup
			errs := make(chan error, tc.cmds+tc.pipelines)
			for range tc.cmds {
				wg.Go(func() { errs <- rdb.Incr(ctx, "n").Err() })
			}
			for range tc.pipelines {
				wg.Go(func() {
					_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
						p.Incr(ctx, "n")
						p.Incr(ctx, "n")
						return nil
					})
					errs <- err
				})
			}
			want := int64(tc.cmds + tc.pipelines)
			for range want {
				select {
				case <-g.held:
				case <-time.After(10 * time.Second):
					t.Fatal("commands not held")
				}
			}
			if n := load.inFlight(); n != want {
				t.Fatalf("%d in flight while %d are held", n, want)
			}
			close(g.open)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if n := srv.Exists("n"); !n {
				t.Fatal("commands not run")
			}
			if n := load.inFlight(); n != 0 {
				t.Fatalf("%d in flight after every command ended", n)
			}
			if p := load.takePeak(); p != want {
				t.Fatalf("peak %d, want %d", p, want)
			}
			if p := load.takePeak(); p != 0 {
				t.Fatalf("peak %d after takePeak with nothing in flight, want 0", p)
			}
		})
	}
}

// TestPrintMix checks that the mix's report carries each small job's
// latency and the Redis load.
func TestPrintMix(t *testing.T) {
	var b bytes.Buffer
	PrintMix(&b, []MixReport{{FairShare: true, Big: 14*time.Minute + 31*time.Second, BigState: "succeeded",
		Small:             []time.Duration{90 * time.Second, 2 * time.Minute, 61 * time.Second},
		RedisPeakInFlight: 9583, RedisPool: 1064, RedisPeakQueue: 8500, RedisWaits: 12000, RedisWait: 3 * time.Second, Hedges: 434, Retries: 7}})
	out := b.String()
	for _, want := range []string{"big job succeeded in 14m31s", "p50 1m30s", "max 2m0s",
		"small jobs in submission order: 1m30s 2m0s 1m1s",
		"peak 9583 round trips in flight (pool of 1064), peak 8500 in the pool's get", "12000 waited for a connection (3s in all)", "434 hedged duplicates, 7 retries"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
