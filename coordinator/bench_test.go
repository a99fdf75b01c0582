package coordinator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/local/redisserver"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// countHook counts the round trips a client makes (a pipeline is one).
type countHook struct{ n atomic.Int64 }

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

func benchRedis(b *testing.B) *redisserver.Server {
	srv, err := redisserver.Start(context.Background())
	if errors.Is(err, redisserver.ErrNotInstalled) && os.Getenv("CI") == "" {
		b.Skip("redis-server not installed")
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Stop)
	return srv
}

// BenchmarkCoordinator measures the coordinator alone (no query runs: the
// functions answer at once) against a real redis-server: one job whose
// only stage has 10,000 tasks, driven with 64 tasks in flight. It reports
// task state transitions per second (each task: start attempt, commit),
// Redis round trips per task, and, measured in the same run with the same
// concurrency, raw redis INCR round trips per second.
//
//	go test -run '^$' -bench BenchmarkCoordinator -benchtime 1x ./coordinator/
func BenchmarkCoordinator(b *testing.B) {
	const tasks, conc = 10000, 64
	srv := benchRedis(b)
	ctx := context.Background()
	hook := &countHook{}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: conc + 16})
	rdb.AddHook(hook)
	defer rdb.Close()
	poll := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer poll.Close()

	// Raw INCR throughput, same client, same concurrency.
	const incrs = 200000
	began := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < conc; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < incrs/conc; i++ {
				if err := rdb.Incr(ctx, "bench:incr").Err(); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	incrRate := float64(incrs/conc*conc) / time.Since(began).Seconds()

	// The store's transitions alone: start attempt + commit per task.
	s := NewStore(rdb)
	job := NewJobID()
	_ = s.CreateJob(ctx, job, map[string]any{"state": StateRunning})
	fence, _, _ := s.Acquire(ctx, job, "bench", time.Minute)
	result := []byte(`{"rows":1}`)
	began = time.Now()
	var next atomic.Int64
	for g := 0; g < conc; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				t := int(next.Add(1)) - 1
				if t >= tasks {
					return
				}
				a, err := s.Begin(ctx, job, fence, 0, t)
				if err == nil {
					_, err = s.Commit(ctx, job, fence, 0, t, a.Attempt, result)
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	storeRate := 2 * tasks / time.Since(began).Seconds()

	for i := 0; i < b.N; i++ {
		// The whole driver: plan upload, stage record, dispatch, invoke,
		// commit, stage output of 10,000 tasks.
		g := plan.Graph{Stages: []*plan.Stage{{ID: 0, Root: &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "t"}},
			Output: plan.Partitioning{Kind: plan.PartitionSingle, Count: 1}}}, Result: 0, Columns: []string{"x"}}
		inv := &fakeInvoker{parts: 1}
		cfg := testConfig("bench")
		cfg.Concurrency = conc
		c := New(cfg, NewStore(rdb), objstore.NewMem("bench"), fakePlanner{g}, fakeTables{tasks}, inv, nil)
		before := hook.n.Load()
		began := time.Now()
		job, err := c.Submit(ctx, "q", SubmitOptions{})
		if err != nil {
			b.Fatal(err)
		}
		// Wait through another client (its polls are not counted).
		for JobState(poll.HGet(ctx, kJob(job), "state").Val()) == StateRunning {
			time.Sleep(time.Millisecond)
		}
		for c.Driving(job) {
			time.Sleep(time.Millisecond)
		}
		took := time.Since(began)
		trips := hook.n.Load() - before
		m, _ := c.store.Job(ctx, job)
		if m.State != StateSucceeded {
			b.Fatalf("job %s: %s", m.State, m.Error)
		}
		c.Close()
		driverRate := 2 * tasks / took.Seconds()
		b.ReportMetric(driverRate, "transitions/s")
		b.ReportMetric(float64(trips)/tasks, "roundtrips/task")
		b.ReportMetric(storeRate, "store-transitions/s")
		b.ReportMetric(incrRate, "incr/s")
		fmt.Printf("coordinator vs redis-server, %d tasks, %d in flight:\n"+
			"  raw INCR:                 %8.0f round trips/s\n"+
			"  store transitions alone:  %8.0f transitions/s (%.2f of INCR; 1 round trip each)\n"+
			"  driver, whole stage:      %8.0f transitions/s = %.0f tasks/s (%.2f of INCR), %.2f round trips per task, stage in %v\n",
			tasks, conc, incrRate, storeRate, storeRate/incrRate, driverRate, driverRate/2, driverRate/incrRate,
			float64(trips)/tasks, took.Round(time.Millisecond))
	}
}
