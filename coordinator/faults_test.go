package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/function/redisdb"
	"github.com/sluicedb/sluice/shuffle"
)

// checkDone checks that a finished two-stage job committed every task once
// and recorded one object per (task, partition) of stage 0.
func checkDone(t *testing.T, c *Coordinator, job string, files int) {
	t.Helper()
	ctx := context.Background()
	m, err := c.store.Job(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if m.State != StateSucceeded {
		t.Fatalf("job %s: %s (%s)", job, m.State, m.Error)
	}
	sm, _ := c.store.Stage(ctx, job, 0)
	if sm.Done != files || sm.Tasks != files {
		t.Fatalf("stage 0: done %d of %d tasks, want %d", sm.Done, sm.Tasks, files)
	}
	out, err := c.store.StageOutput(ctx, job, 0, sm)
	if err != nil {
		t.Fatal(err)
	}
	for p := 0; p < 2; p++ {
		seen := map[int]bool{}
		for _, r := range out.partObjects(p) {
			info, err := parseKeyTask(r.Key)
			if err != nil {
				t.Fatal(err)
			}
			if seen[info] {
				t.Fatalf("partition %d holds two objects of task %d", p, info)
			}
			seen[info] = true
		}
		if len(seen) != files {
			t.Fatalf("partition %d holds objects of %d tasks, want %d", p, len(seen), files)
		}
	}
}

func parseKeyTask(key string) (int, error) {
	i := strings.Index(key, "/task-")
	j := strings.Index(key[i+6:], "/")
	return strconv.Atoi(key[i+6 : i+6+j])
}

func TestFlakyFunctionsRetried(t *testing.T) {
	e := newFakeEnv(t, 6)
	var mu sync.Mutex
	seen := map[string]int{}
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		mu.Lock()
		k := strconv.Itoa(s.Stage) + "/" + strconv.Itoa(s.Task)
		seen[k]++
		n := seen[k]
		mu.Unlock()
		switch {
		case n == 1 && s.Task%3 == 0:
			return nil, errors.New("connection reset"), true // the invocation failed
		case n == 1 && s.Task%3 == 1:
			res := okResult(s, 2)
			res.Partitions, res.Error, res.Kind = nil, "slow down", function.ErrTransient
			return res, nil, true
		}
		return nil, nil, false
	}
	c := e.coordinator(t, testConfig("a"))
	job, err := c.Submit(context.Background(), "q", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, job)
	checkDone(t, c, job, 6)
	if n := metricValue(c.metrics.Retries); n == 0 {
		t.Fatal("no retry counted")
	}
	js, err := c.store.Status(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if js.Stages[0].Retries == 0 || js.Stages[0].Attempts <= 6 {
		t.Fatalf("stage 0 status: %d attempts, %d retries", js.Stages[0].Attempts, js.Stages[0].Retries)
	}
}

func TestRetryBudgetFailsJob(t *testing.T) {
	e := newFakeEnv(t, 3)
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		if s.Stage == 0 && s.Task == 1 {
			return nil, errors.New("function crashed"), true
		}
		return nil, nil, false
	}
	cfg := testConfig("a")
	cfg.MaxAttempts = 3
	c := e.coordinator(t, cfg)
	job, _ := c.Submit(context.Background(), "q", SubmitOptions{})
	m := waitJob(t, c, job)
	if m.State != StateFailed || !strings.Contains(m.Error, "failed after 3 attempts") || !strings.Contains(m.Error, "function crashed") {
		t.Fatalf("job: %s: %s", m.State, m.Error)
	}
	if n := len(e.inv.specsOf(0, 1)); n != 3 {
		t.Fatalf("task invoked %d times, want 3", n)
	}
	if _, _, err := c.store.ResultObjects(context.Background(), job); err == nil {
		t.Fatal("a failed job's result is readable")
	}
}

func TestDeadlineRetriesHungAttempt(t *testing.T) {
	e := newFakeEnv(t, 3)
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		if s.Stage == 0 && s.Task == 2 && s.Attempt == 1 {
			<-ctx.Done() // hangs past its deadline
			return nil, ctx.Err(), true
		}
		return nil, nil, false
	}
	cfg := testConfig("a")
	cfg.TaskTimeout = 200 * time.Millisecond
	c := e.coordinator(t, cfg)
	job, _ := c.Submit(context.Background(), "q", SubmitOptions{})
	waitJob(t, c, job)
	checkDone(t, c, job, 3)
	if n := metricValue(c.metrics.Attempts.WithLabelValues(outcomeTimeout)); n != 1 {
		t.Fatalf("timeouts counted: %v, want 1", n)
	}
	tm, _ := c.store.Task(context.Background(), job, 0, 2)
	if tm.Committed != 2 {
		t.Fatalf("task 0/2 committed attempt %d, want 2", tm.Committed)
	}
}

func TestHedgedStraggler(t *testing.T) {
	e := newFakeEnv(t, 8)
	cancelled := make(chan struct{})
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		if s.Stage == 0 && s.Task == 5 && s.Attempt == 1 {
			<-ctx.Done() // a straggler: only the duplicate finishes
			close(cancelled)
			return nil, ctx.Err(), true
		}
		time.Sleep(5 * time.Millisecond)
		return nil, nil, false
	}
	e.inv.bucket = e.bucket
	cfg := testConfig("a")
	cfg.HedgeFactor = 3
	cfg.HedgeAfter = 20 * time.Millisecond
	cfg.TaskTimeout = time.Hour // only hedging can save the straggler
	c := e.coordinator(t, cfg)
	job, _ := c.Submit(context.Background(), "q", SubmitOptions{})
	waitJob(t, c, job)
	checkDone(t, c, job, 8)
	<-cancelled // the losing attempt was stopped
	// ... and its output deleted (in the background).
	loser := shuffle.SpreadAttemptPrefix(cfg.Prefix, cfg.KeySpread, job, 0, 5, 1)
	for deadline := time.Now().Add(30 * time.Second); ; {
		objs, _ := e.bucket.List(context.Background(), loser)
		if len(objs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the losing attempt's objects are still there: %v", objs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if objs, _ := e.bucket.List(context.Background(), shuffle.SpreadAttemptPrefix(cfg.Prefix, cfg.KeySpread, job, 0, 5, 2)); len(objs) != 2 {
		t.Fatalf("the winning attempt has %d objects, want 2", len(objs))
	}
	if n := metricValue(c.metrics.Hedges); n < 1 {
		t.Fatalf("hedges: %v", n)
	}
	tm, _ := c.store.Task(context.Background(), job, 0, 5)
	if tm.Committed != 2 {
		t.Fatalf("straggler task committed attempt %d, want the duplicate (2)", tm.Committed)
	}
}

func TestDuplicateReportCommitsOnce(t *testing.T) {
	e := newFakeEnv(t, 4)
	c := e.coordinator(t, testConfig("a"))
	ctx := context.Background()
	job, _ := c.Submit(ctx, "q", SubmitOptions{})
	waitJob(t, c, job)
	// A late second report of a committed attempt changes nothing.
	f, _ := e.rdb.Get(ctx, kFence(job)).Int64()
	tm, _ := c.store.Task(ctx, job, 0, 0)
	a := tm.Committed
	won, err := c.store.Commit(ctx, job, f, 0, 0, a, []byte(tm.result))
	if err != nil || !won {
		t.Fatalf("second report of the winner: won %v err %v", won, err)
	}
	if won, _ := c.store.Commit(ctx, job, f, 0, 0, a+1, []byte(`{}`)); won {
		t.Fatal("another attempt won over a committed one")
	}
	checkDone(t, c, job, 4)
}

// A coordinator that lost its job (another took the lease, the fence moved
// on) and then hears back from its functions: every commit is rejected.
func TestStaleCommitsRejected(t *testing.T) {
	e := newFakeEnv(t, 4)
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(4)
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		if s.Stage == 0 && s.Fence == 1 {
			started.Done()
			<-release
		}
		return nil, nil, false
	}
	cfg := testConfig("a")
	cfg.LeaseTTL = time.Hour // a paused coordinator does not renew in time; this one never tries
	a := e.coordinator(t, cfg)
	ctx := context.Background()
	job, _ := a.Submit(ctx, "q", SubmitOptions{})
	started.Wait() // all four tasks in flight under fence 1
	// The lease "expires" and b takes the job over.
	e.rdb.Del(ctx, kLease(job))
	b := e.coordinator(t, testConfig("b"))
	b.Go(job)
	waitJob(t, b, job)
	before := snapshot(t, e, job)
	close(release) // a's functions report back, late
	deadline := time.Now().Add(30 * time.Second)
	for a.Driving(job) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if a.Driving(job) {
		t.Fatal("the stale coordinator still drives the job")
	}
	if n := metricValue(a.metrics.StaleFence); n < 1 {
		t.Fatalf("stale commits rejected: %v, want >= 1", n)
	}
	if after := snapshot(t, e, job); after != before {
		t.Fatalf("the stale coordinator changed the job:\nbefore %s\nafter  %s", before, after)
	}
	checkDone(t, b, job, 4)
}

// snapshot renders every Redis key of a job.
func snapshot(t *testing.T, e *fakeEnv, job string) string {
	ctx := context.Background()
	keys, _ := e.rdb.Keys(ctx, redisdb.JobKeys(job)).Result()
	var b strings.Builder
	for _, k := range sortStrings(keys) {
		// The lease moves; the cost report counts every invocation, a stale
		// driver's too (they were paid for): neither is job state.
		if strings.HasSuffix(k, ":lease") || strings.HasSuffix(k, ":cost") {
			continue
		}
		switch e.rdb.Type(ctx, k).Val() {
		case "hash":
			m := e.rdb.HGetAll(ctx, k).Val()
			j, _ := json.Marshal(m)
			b.WriteString(k + "=" + string(j) + "\n")
		case "string":
			b.WriteString(k + "=" + e.rdb.Get(ctx, k).Val() + "\n")
		case "list":
			b.WriteString(k + "=" + strconv.Itoa(len(e.rdb.LRange(ctx, k, 0, -1).Val())) + "\n")
		}
	}
	return b.String()
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// A driver stopping mid-stage (a crash; here Close) leaves the stage
// running in Redis; the next driver resumes it: committed tasks are
// adopted, not run again.
func TestResumeAdoptsCommittedTasks(t *testing.T) {
	e := newFakeEnv(t, 6)
	block := make(chan struct{})
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		if s.Stage == 0 && s.Task >= 3 && s.Fence == 1 {
			select {
			case <-block:
			case <-ctx.Done():
				return nil, ctx.Err(), true
			}
		}
		return nil, nil, false
	}
	a := e.coordinator(t, testConfig("a"))
	ctx := context.Background()
	job, _ := a.Submit(ctx, "q", SubmitOptions{})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if sm, _ := a.store.Stage(ctx, job, 0); sm.Done == 3 {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	a.Close() // dies with tasks 3..5 in flight
	calls := map[int]int{}
	for t := 0; t < 6; t++ {
		calls[t] = len(e.inv.specsOf(0, t))
	}
	b := e.coordinator(t, testConfig("b"))
	b.Go(job)
	waitJob(t, b, job)
	checkDone(t, b, job, 6)
	for task := 0; task < 6; task++ {
		n := len(e.inv.specsOf(0, task)) - calls[task]
		if task < 3 && n != 0 {
			t.Fatalf("committed task %d ran again after the takeover", task)
		}
		// In-flight tasks run again under b. The dying driver's own task
		// goroutines may still be invoking as it closes (their commits carry
		// the old fence and are rejected), so count at least one, not one.
		if task >= 3 && n < 1 {
			t.Fatalf("in-flight task %d did not run again after the takeover", task)
		}
	}
	close(block)
}

// A missing or corrupt input object makes its producer run again and the
// reader retry with the new object; the job succeeds.
func TestLostInputRerunsProducer(t *testing.T) {
	e := newFakeEnv(t, 4)
	var mu sync.Mutex
	var lost string
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		if s.Stage != 1 {
			return nil, nil, false
		}
		mu.Lock()
		defer mu.Unlock()
		for _, in := range s.Inputs {
			for _, o := range in.Objects {
				if o.Key == lost {
					return nil, errors.New("reader handed a lost object again"), true
				}
			}
		}
		if lost == "" {
			lost = s.Inputs[0].Objects[1].Key
			res := okResult(s, 2)
			res.Partitions, res.Error, res.Kind, res.LostKey = nil, "shuffle: object "+lost+" corrupt: checksum mismatch", function.ErrInputLost, lost
			return res, nil, true
		}
		return nil, nil, false
	}
	cfg := testConfig("a")
	cfg.MaxAttempts = 1 // the reader's lost-input attempt does not count
	c := e.coordinator(t, cfg)
	ctx := context.Background()
	job, _ := c.Submit(ctx, "q", SubmitOptions{})
	waitJob(t, c, job)
	checkDone(t, c, job, 4)
	producer, _ := parseKeyTask(lost)
	if n := len(e.inv.specsOf(0, producer)); n != 2 {
		t.Fatalf("producer task %d ran %d times, want 2", producer, n)
	}
	sm, _ := c.store.Stage(ctx, job, 0)
	out, err := c.store.StageOutput(ctx, job, 0, sm)
	if err != nil {
		t.Fatal(err)
	}
	for p, refs := range out.objectsByPart() {
		for _, r := range refs {
			if r.Key == lost {
				t.Fatalf("the stage output still names the lost object in partition %d", p)
			}
		}
	}
	if n := metricValue(c.metrics.InputRepairs); n != 1 {
		t.Fatalf("repairs: %v", n)
	}
}

func TestParseFaults(t *testing.T) {
	fc, err := ParseFaults("crash=0.1, hang=0.05,error=0.2,duplicate=0.1,lose=0.05,corrupt=0.05,seed=9")
	if err != nil || fc.Crash != 0.1 || fc.Hang != 0.05 || fc.Seed != 9 || fc.Corrupt != 0.05 {
		t.Fatalf("%+v %v", fc, err)
	}
	for _, bad := range []string{"crash", "crash=2", "nope=0.1", "crash=0.6,error=0.6"} {
		if _, err := ParseFaults(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

// Function faults of every kind at a high rate on the fake stack: every
// job still commits every task exactly once.
func TestFaultInvokerFakeStack(t *testing.T) {
	e := newFakeEnv(t, 12)
	fc, _ := ParseFaults("crash=0.1,hang=0.05,error=0.1,duplicate=0.1,seed=3")
	fi := NewFaultInvoker(e.inv, e.bucket, fc)
	cfg := testConfig("a")
	cfg.TaskTimeout = 300 * time.Millisecond
	cfg.MaxAttempts = 10
	c := New(cfg, NewStore(e.rdb), e.bucket, fakePlanner{twoStageGraph()}, fakeTables{e.files}, fi, nil)
	defer c.Close()
	for i := 0; i < 3; i++ {
		job, err := c.Submit(context.Background(), "q", SubmitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		waitJob(t, c, job)
		checkDone(t, c, job, 12)
	}
	fi.Wait()
	t.Logf("faults injected: %s", fi)
}

// metricValue reads a counter or gauge.
func metricValue(c prometheus.Metric) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

// A stage resumed by a coordinator that splits it into other tasks (here
// another split size) runs again as a whole: no committed task of the old
// split is mixed with tasks of the new one.
func TestResumeWithOtherTasksRunsStageAgain(t *testing.T) {
	e := newFakeEnv(t, 6)
	block := make(chan struct{})
	defer close(block)
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		if s.Stage == 0 && s.Task >= 3 && s.Fence == 1 {
			select {
			case <-block:
			case <-ctx.Done():
				return nil, ctx.Err(), true
			}
		}
		return nil, nil, false
	}
	a := e.coordinator(t, testConfig("a"))
	ctx := context.Background()
	job, _ := a.Submit(ctx, "q", SubmitOptions{})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if sm, _ := a.store.Stage(ctx, job, 0); sm.Done == 3 {
			break
		}
	}
	a.Close()
	cfg := testConfig("b")
	cfg.SplitBytes = 200 // two files per task: 3 tasks
	b := e.coordinator(t, cfg)
	b.Go(job)
	if m := waitJob(t, b, job); m.State != StateSucceeded {
		t.Fatalf("job: %s %s", m.State, m.Error)
	}
	sm, _ := b.store.Stage(ctx, job, 0)
	if sm.Tasks != 3 || sm.Done != 3 {
		t.Fatalf("stage 0: %d of %d tasks done, want 3 of 3", sm.Done, sm.Tasks)
	}
	out, err := b.store.StageOutput(ctx, job, 0, sm)
	if err != nil {
		t.Fatal(err)
	}
	for p := 0; p < 2; p++ {
		if len(out.partObjects(p)) != 3 {
			t.Fatalf("partition %d: %d objects, want one per task (3)", p, len(out.partObjects(p)))
		}
		for _, r := range out.partObjects(p) {
			task, _ := parseKeyTask(r.Key)
			tm, _ := b.store.Task(ctx, job, 0, task)
			var res function.TaskResult
			_ = json.Unmarshal([]byte(tm.result), &res)
			if res.Fence != 2 {
				t.Fatalf("task %d's committed output is from the old split (fence %d)", task, res.Fence)
			}
		}
	}
}

// A lease that expired under its driver (a Redis outage longer than the
// lease) and that the same coordinator takes again: the drive starts over
// from Redis under the new fence, without any recovery loop running.
func TestLeaseExpiredRetaken(t *testing.T) {
	e := newFakeEnv(t, 4)
	release := make(chan struct{})
	var once sync.Once
	started := make(chan struct{})
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		if s.Stage == 0 && s.Fence == 1 {
			once.Do(func() { close(started) })
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err(), true
			}
		}
		return nil, nil, false
	}
	cfg := testConfig("a")
	cfg.LeaseTTL = 150 * time.Millisecond
	c := e.coordinator(t, cfg)
	ctx := context.Background()
	job, _ := c.Submit(ctx, "q", SubmitOptions{})
	<-started
	e.rdb.Del(ctx, kLease(job)) // the lease "expired"
	m := waitJob(t, c, job)
	close(release)
	if m.State != StateSucceeded {
		t.Fatalf("job: %s %s", m.State, m.Error)
	}
	if f, _ := e.rdb.Get(ctx, kFence(job)).Int(); f < 3 {
		t.Fatalf("fence %d: the job was not driven anew", f)
	}
	checkDone(t, c, job, 4)
}
