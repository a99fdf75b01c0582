package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// newRunningJob creates a running job with the two-stage plan and takes
// its lease.
func newRunningJob(t *testing.T, s *Store) (string, int64) {
	t.Helper()
	ctx := context.Background()
	job := NewJobID()
	g, _ := json.Marshal(twoStageGraph())
	if err := s.CreateJob(ctx, job, map[string]any{"graph": string(g)}); err != nil {
		t.Fatal(err)
	}
	f, ok, err := s.Acquire(ctx, job, "a", time.Minute)
	if err != nil || !ok {
		t.Fatalf("acquire: %d %v %v", f, ok, err)
	}
	return job, f
}

// setState puts a record in a state for the matrix ("none": no record).
func setState(t *testing.T, rdb redis.UniversalClient, key, state string, fields ...any) {
	t.Helper()
	ctx := context.Background()
	rdb.Del(ctx, key)
	if state != "none" {
		rdb.HSet(ctx, key, append([]any{"state", state}, fields...)...)
	}
}

// outcome runs a transition and says what happened to the record: "ok"
// (it changed, and its state is now want), "refused" (a refusal or a
// no-op: the record is unchanged), or what went wrong.
func outcome(t *testing.T, rdb redis.UniversalClient, key, want string, do func() error) string {
	t.Helper()
	ctx := context.Background()
	before := fmt.Sprint(rdb.HGetAll(ctx, key).Val())
	err := do()
	afterRec := rdb.HGetAll(ctx, key).Val()
	after := fmt.Sprint(afterRec)
	switch {
	case err == nil && after != before && afterRec["state"] == want:
		return "ok"
	case (err == nil || errors.Is(err, ErrRefused)) && after == before:
		return "refused"
	}
	return fmt.Sprintf("err %v, record %s -> %s", err, before, after)
}

// The states the transition matrix puts records in ("none": no record).
// TestStatesCovered checks that they name every state constant.
var (
	matrixJobStates   = []string{"running", "queued", "succeeded", "failed", "cancelled"}
	matrixStageStates = []string{"none", "pending", "running", "done", "skipped", "failed", "cancelled"}
	matrixTaskStates  = []string{"none", "pending", "running", "retrying", "failed", "input_lost", "waiting", "done"}
)

// TestTransitionMatrix applies every transition to every state of its
// record, on miniredis and redis-server: each is allowed (the state moves)
// or refused (nothing changes), as the state machine says.
func TestTransitionMatrix(t *testing.T) {
	ctx := context.Background()
	for name, rdb := range redisBackends(t) {
		t.Run(name, func(t *testing.T) {
			s := NewStore(rdb)

			stageStates := matrixStageStates
			stageCases := []struct {
				name    string
				do      func(job string, f int64) error
				target  string
				allowed []string
			}{
				{"stage_start", func(j string, f int64) error { return s.StartStage(ctx, j, f, 0, "tasks", 1) }, "running", []string{"none", "pending", "running"}},
				{"stage_finish", func(j string, f int64) error { return s.FinishStage(ctx, j, f, 0, "output", "{}") }, "done", []string{"running"}},
				{"stage_skip", func(j string, f int64) error { return s.SkipStage(ctx, j, f, 0, "reason", "x") }, "skipped", []string{"none", "pending", "running", "skipped"}},
				{"stage_fail", func(j string, f int64) error { return s.FailStage(ctx, j, f, 0, "error", "x") }, "failed", []string{"running"}},
			}
			for _, c := range stageCases {
				for _, st := range stageStates {
					job, f := newRunningJob(t, s)
					setState(t, rdb, kStage(job, 0), st)
					want := "refused"
					for _, a := range c.allowed {
						if a == st {
							want = "ok"
						}
					}
					if got := outcome(t, rdb, kStage(job, 0), c.target, func() error { return c.do(job, f) }); got != want {
						t.Errorf("%s from %s: %s, want %s", c.name, st, got, want)
					}
				}
			}

			taskStates := matrixTaskStates
			taskSetup := func(st string) []any {
				if st == "done" {
					return []any{"attempts", 2, "committed", 1, "result", "{}"}
				}
				return []any{"attempts", 1}
			}
			notDone := []string{"none", "pending", "running", "retrying", "failed", "input_lost", "waiting"}
			taskCases := []struct {
				name    string
				do      func(job string, f int64) error
				target  string
				allowed []string
			}{
				{"task_begin", func(j string, f int64) error { _, err := s.Begin(ctx, j, f, 0, 0); return err }, "running", notDone},
				{"task_commit", func(j string, f int64) error {
					_, err := s.Commit(ctx, j, f, 0, 0, 2, []byte("{}")) // attempt 2: begun only in "done" (where 1 won)
					if err != nil && !errors.Is(err, ErrRefused) {
						return err
					}
					return nil
				}, "done", nil},
				{"task_commit_begun", func(j string, f int64) error { _, err := s.Commit(ctx, j, f, 0, 0, 1, []byte("{}")); return err }, "done", notDone},
				{"task_fail", func(j string, f int64) error { return s.Fail(ctx, j, f, 0, 0, "boom", TaskRetrying) }, "retrying", notDone},
				{"task_fail_waiting", func(j string, f int64) error { return s.Fail(ctx, j, f, 0, 0, "throttled", TaskWaiting) }, "waiting", notDone},
				{"task_reopen", func(j string, f int64) error { return s.Reopen(ctx, j, f, 0, 0) }, "pending", []string{"done"}},
			}
			for _, c := range taskCases {
				for _, st := range taskStates {
					job, f := newRunningJob(t, s)
					setState(t, rdb, kTask(job, 0, 0), st, taskSetup(st)...)
					if st == "none" {
						rdb.HSet(ctx, kTask(job, 0, 0), "attempts", 1) // an attempt begun, no state yet
						rdb.HDel(ctx, kTask(job, 0, 0), "state")
					}
					want := "refused"
					for _, a := range c.allowed {
						if a == st {
							want = "ok"
						}
					}
					if got := outcome(t, rdb, kTask(job, 0, 0), c.target, func() error { return c.do(job, f) }); got != want {
						t.Errorf("%s from %s: %s, want %s", c.name, st, got, want)
					}
				}
			}

			// Job transitions, and every fenced transition of a job that is
			// not running.
			jobCases := []struct {
				name    string
				do      func(job string, f int64) error
				target  string
				allowed []string
			}{
				{"job_update", func(j string, f int64) error { return s.SetJob(ctx, j, f, "owner", "b") }, "running", []string{"running"}},
				{"job_finish", func(j string, f int64) error { return s.FinishJob(ctx, j, f, StateFailed, 0, "error", "x") }, "failed", []string{"running"}},
				{"job_collected", func(j string, f int64) error { return s.MarkCollected(ctx, j, time.Now()) }, "", nil},
				{"job_admit", func(j string, f int64) error {
					_, err := s.do(ctx, trJobAdmit, "", []string{kFence(j), kJob(j)}, f, "admitted", "x")
					return err
				}, "running", []string{"queued", "running"}},
				{"stage_start", func(j string, f int64) error { return s.StartStage(ctx, j, f, 0) }, "running", []string{"running"}},
				{"task_begin", func(j string, f int64) error { _, err := s.Begin(ctx, j, f, 0, 0); return err }, "running", []string{"running"}},
				{"round_add", func(j string, f int64) error { return s.AddRound(ctx, j, f, []byte("{}")) }, "running", []string{"running"}},
			}
			for _, c := range jobCases {
				for _, st := range matrixJobStates {
					job, f := newRunningJob(t, s)
					rdb.HSet(ctx, kJob(job), "state", st)
					err := c.do(job, f)
					refused := errors.Is(err, ErrRefused)
					allowed := err == nil
					switch c.name {
					case "job_collected":
						if allowed != Terminal(st) || (!allowed && !refused) {
							t.Errorf("%s of a %s job: %v", c.name, st, err)
						}
						continue
					case "job_finish":
						live := st == "running" || st == "queued"
						after, _ := rdb.HGet(ctx, kJob(job), "state").Result()
						if live != (allowed && after == "failed") || (!live && (!refused || after != st)) {
							t.Errorf("%s of a %s job: %v, state now %s", c.name, st, err, after)
						}
						continue
					case "job_admit":
						live := st == "running" || st == "queued"
						after, _ := rdb.HGet(ctx, kJob(job), "state").Result()
						if live != (allowed && after == "running") || (!live && (!refused || after != st)) {
							t.Errorf("%s of a %s job: %v, state now %s", c.name, st, err, after)
						}
						continue
					}
					if allowed != (st == "running") || (!allowed && !refused) {
						t.Errorf("%s of a %s job: %v", c.name, st, err)
					}
					if !allowed {
						// A queued job's driver holds its lease while it
						// waits for admission; a finished job has none.
						if _, ok, err := s.Acquire(ctx, job, "a", time.Minute); ok != (st == "queued") || err != nil {
							t.Errorf("lease of a %s job: taken %v, %v", st, ok, err)
						}
					}
				}
			}

			// A stale fence is refused by every fenced transition.
			job, f := newRunningJob(t, s)
			stale := []error{
				s.SetJob(ctx, job, f+1, "k", "v"), s.StartStage(ctx, job, f+1, 0), s.FinishStage(ctx, job, f+1, 0),
				s.SkipStage(ctx, job, f+1, 0), s.FailStage(ctx, job, f+1, 0), s.SetStage(ctx, job, f+1, 0, "k", "v"),
				s.Fail(ctx, job, f+1, 0, 0, "x", TaskFailed), s.Reopen(ctx, job, f+1, 0, 0), s.AddRound(ctx, job, f+1, nil),
				s.FinishJob(ctx, job, f+1, StateSucceeded, 0),
			}
			for i, err := range stale {
				if !errors.Is(err, ErrStaleFence) {
					t.Errorf("fenced transition %d with a stale fence: %v", i, err)
				}
			}
			// States change only by transitions.
			if err := s.SetJob(ctx, job, f, "state", "succeeded"); !errors.Is(err, ErrRefused) {
				t.Errorf("SetJob of the state: %v", err)
			}
			if err := s.SetStage(ctx, job, f, 0, "state", "done"); !errors.Is(err, ErrRefused) {
				t.Errorf("SetStage of the state: %v", err)
			}
		})
	}
}

// TestFinishedJobExpires: a job that fails leaves no stage running, and
// every key of a finished job expires after the record retention; then
// the job leaves the indexes.
func TestFinishedJobExpires(t *testing.T) {
	ctx := context.Background()
	for name, rdb := range redisBackends(t) {
		t.Run(name, func(t *testing.T) {
			s := NewStore(rdb)
			job, f := newRunningJob(t, s)
			for st := 0; st < 2; st++ {
				if err := s.StartStage(ctx, job, f, st, "tasks", 2); err != nil {
					t.Fatal(err)
				}
				for task := 0; task < 2; task++ {
					if _, err := s.Begin(ctx, job, f, st, task); err != nil {
						t.Fatal(err)
					}
				}
			}
			_ = s.AddRound(ctx, job, f, []byte(`{"round":1}`))
			if err := s.FailStage(ctx, job, f, 0, "error", "boom"); err != nil {
				t.Fatal(err)
			}
			retention := time.Hour
			if name == "redis-server" {
				retention = 1500 * time.Millisecond // real time
			}
			if err := s.FinishJob(ctx, job, f, StateFailed, retention, "error", "boom"); err != nil {
				t.Fatal(err)
			}
			js, err := s.Status(ctx, job)
			if err != nil {
				t.Fatal(err)
			}
			if js.State != StateFailed || js.Stages[0].State != StageFailed || js.Stages[1].State != StageCancelled {
				t.Fatalf("after failing: job %s, stages %s %s; want failed, failed, cancelled", js.State, js.Stages[0].State, js.Stages[1].State)
			}
			s.Release(ctx, job, "a")
			keys, _ := rdb.Keys(ctx, "sluice:{"+job+"}:*").Result()
			if len(keys) < 8 { // job, fence, 2 stages, 4 tasks, rounds
				t.Fatalf("job keys: %v", keys)
			}
			for _, k := range keys {
				if d := rdb.PTTL(ctx, k).Val(); d <= 0 || d > retention {
					t.Errorf("key %s: ttl %v, want (0, %v]", k, d, retention)
				}
			}
			if ids, _ := s.Orphans(ctx); len(ids) != 0 {
				t.Fatalf("a finished job is an orphan: %v", ids)
			}
			if n, _ := rdb.ZCard(ctx, runningKey).Result(); n != 0 {
				t.Fatalf("running index holds %d jobs after the finish", n)
			}
			if mr, ok := miniredisOf(rdb); ok {
				mr.FastForward(retention + time.Second)
			} else {
				time.Sleep(retention + 500*time.Millisecond)
			}
			if keys, _ := rdb.Keys(ctx, "sluice:{"+job+"}:*").Result(); len(keys) != 0 {
				t.Fatalf("keys left after the retention: %v", keys)
			}
			n, err := s.TrimIndex(ctx, time.Now(), false)
			if err != nil || n != 2 { // the job index and the finished index
				t.Fatalf("trim: %d %v, want 2", n, err)
			}
			if ids, _ := s.Jobs(ctx, 10); len(ids) != 0 {
				t.Fatalf("job index after trimming: %v", ids)
			}
		})
	}
}

var miniredisByAddr = map[string]*miniredis.Miniredis{}

func miniredisOf(rdb redis.UniversalClient) (*miniredis.Miniredis, bool) {
	c, ok := rdb.(*redis.Client)
	if !ok {
		return nil, false
	}
	mr, ok := miniredisByAddr[c.Options().Addr]
	return mr, ok
}

// TestOrphanBehindThousandJobs: a running job whose coordinator died is
// taken over however many newer jobs were submitted since (recovery reads
// the running index, not the newest jobs).
func TestOrphanBehindThousandJobs(t *testing.T) {
	ctx := context.Background()
	for name, rdb := range redisBackends(t) {
		t.Run(name, func(t *testing.T) {
			bucket := objstore.NewMem("test")
			block := &fakeInvoker{parts: 2, behave: func(ctx context.Context, spec *function.TaskSpec) (*function.TaskResult, error, bool) {
				if spec.Stage == 1 {
					<-ctx.Done()
					return nil, ctx.Err(), true
				}
				return nil, nil, false
			}}
			a := New(testConfig("a"), NewStore(rdb), bucket, fakePlanner{twoStageGraph()}, fakeTables{3}, block, nil)
			job, err := a.Submit(ctx, "select", SubmitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for StageState(rdb.HGet(ctx, kStage(job, 1), "state").Val()) != StageRunning {
				if time.Now().After(deadline) {
					t.Fatal("stage 1 never started")
				}
				time.Sleep(5 * time.Millisecond)
			}
			a.Close() // the coordinator dies: the job stays running, unleased

			// 1,000 newer jobs, finished, and a stale running-index entry.
			pipe := rdb.Pipeline()
			base := float64(time.Now().Add(time.Second).UnixMilli())
			for i := 0; i < 1000; i++ {
				id := fmt.Sprintf("29990101-000000-%08x", i)
				pipe.HSet(ctx, kJob(id), "state", string(StateSucceeded))
				pipe.ZAdd(ctx, jobsKey, redis.Z{Score: base + float64(i), Member: id})
			}
			pipe.ZAdd(ctx, runningKey, redis.Z{Score: base, Member: "29990101-000000-00000000"})
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if ids, _ := NewStore(rdb).Jobs(ctx, 1000); strings.Contains(strings.Join(ids, ","), job) {
				t.Fatal("the orphan is among the newest 1,000 jobs: the test proves nothing")
			}

			b := New(testConfig("b"), NewStore(rdb), bucket, fakePlanner{twoStageGraph()}, fakeTables{3}, &fakeInvoker{parts: 2}, nil)
			t.Cleanup(b.Close)
			b.recoverOnce(ctx)
			m := waitJob(t, b, job)
			if m.State != StateSucceeded || m.Owner != "b" {
				t.Fatalf("orphan: %s (%s), owner %s", m.State, m.Error, m.Owner)
			}
			if got := metricValue(b.metrics.JobsTakenOver); got != 1 {
				t.Fatalf("taken over %v jobs, want 1", got)
			}
			b.Close() // the driver leaves the running index right after the final state
			if ids, _ := rdb.ZRange(ctx, runningKey, 0, -1).Result(); len(ids) != 0 {
				t.Fatalf("running index after recovery: %v", ids)
			}
		})
	}
}

// TestOrphansSubmissionInFlight: an id in the running index whose record
// is not written yet (a submission between CreateJob's writes, seen by
// another coordinator's recovery) stays indexed, so the job it becomes
// can still be recovered; one older than the grace period is what a
// crash left and is dropped. This race once lost a job: the recovery of
// the submitting coordinator dropped it, the coordinator died, and no
// one ever took the job over.
func TestOrphansSubmissionInFlight(t *testing.T) {
	ctx := context.Background()
	for name, rdb := range redisBackends(t) {
		t.Run(name, func(t *testing.T) {
			s := NewStore(rdb)
			fresh, stale := "20260101-000000-0000fe5h", "20260101-000000-000057a1"
			now := time.Now()
			rdb.ZAdd(ctx, runningKey, redis.Z{Score: float64(now.UnixMilli()), Member: fresh})
			rdb.ZAdd(ctx, runningKey, redis.Z{Score: float64(now.Add(-2 * orphanRecordGrace).UnixMilli()), Member: stale})
			t.Cleanup(func() { rdb.ZRem(ctx, runningKey, fresh, stale) })
			ids, err := s.Orphans(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) != 0 {
				t.Fatalf("orphans %v: a record-less id is nothing to drive yet", ids)
			}
			left, _ := rdb.ZRange(ctx, runningKey, 0, -1).Result()
			if !slices.Contains(left, fresh) || slices.Contains(left, stale) {
				t.Fatalf("running index %v: want %s kept (submission in flight), %s dropped (crash leftover)", left, fresh, stale)
			}
			// The submission completes: its job is running and unleased, so
			// recovery now offers it.
			if _, err := s.do(ctx, trJobCreate, "", []string{kJob(fresh)}, "running", "graph", "{}"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rdb.Del(ctx, kJob(fresh)) })
			if ids, _ := s.Orphans(ctx); !slices.Contains(ids, fresh) {
				t.Fatalf("orphans %v, want %s", ids, fresh)
			}
		})
	}
}
