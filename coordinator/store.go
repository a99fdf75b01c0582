package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/function/redisdb"
)

// ErrStaleFence is returned by every fenced transition when the job's
// fencing token moved on: another coordinator drives the job now.
var ErrStaleFence = errors.New("stale fencing token: job is driven by another coordinator")

// ErrJobNotFound is returned for an unknown job id.
var ErrJobNotFound = errors.New("job not found")

// ErrJobGone is returned by Acquire when a job's record vanished from
// Redis while it ran (a Redis restarted without persistence): nothing is
// left to drive, and the job cannot be marked failed either.
var ErrJobGone = errors.New("job state is gone from Redis (restarted without persistence?)")

// Store keeps all job state in Redis. Every key of a job shares the hash
// tag {job} so the scripts run unchanged on Redis Cluster. Every state
// change is one named transition (states.go, lua/): a Lua script that
// checks its precondition and, but for the lease and create transitions,
// the job's fencing token.
type Store struct {
	rdb redis.UniversalClient
	// Outage bounds how long an operation waits for an unreachable Redis
	// (retrying with backoff) before it fails with ErrRedisUnavailable.
	Outage time.Duration
	// Prices price the cost report in views (the coordinator sets its
	// configured table).
	Prices Prices
	// observe, when set, sees every Redis error an operation met (retried
	// or not), for metrics.
	observe func(op string, err error)
}

// NewStore wraps a Redis client.
func NewStore(rdb redis.UniversalClient) *Store { return &Store{rdb: rdb, Outage: 2 * time.Minute} }

// Client returns the underlying Redis client.
func (s *Store) Client() redis.UniversalClient { return s.rdb }

const jobsKey = redisdb.JobsKey // ZSET of job ids by submit time (global index)

// Keys of one job.
func kJob(job string) string            { return redisdb.JobKey(job) }
func kFence(job string) string          { return redisdb.FenceKey(job) }
func kLease(job string) string          { return redisdb.LeaseKey(job) }
func kStage(job string, s int) string   { return redisdb.StageKey(job, s) }
func kTask(job string, s, t int) string { return redisdb.TaskKey(job, s, t) }
func kRounds(job string) string         { return redisdb.RoundsKey(job) }

const runningKey = redisdb.RunningKey // ZSET of the ids of jobs not finished, by submit time: what recovery scans

// do runs a transition with retries. A call retried after a lost reply
// may find its own change done: a refusal that found the target state
// (target, when not "") after a transient error counts as success.
func (s *Store) do(ctx context.Context, tr transition, target string, keys []string, args ...any) (any, error) {
	var v any
	retried := false
	err := s.retry(ctx, tr.name, func() (err error) {
		v, err = tr.script.Run(ctx, s.rdb, keys, args...).Result()
		if redisdb.Transient(err) {
			retried = true
		}
		return err
	})
	err = transitionErr(tr.name, err)
	var te *TransitionError
	if retried && target != "" && errors.As(err, &te) && te.State == target {
		return int64(1), nil
	}
	return v, err
}

func fenced(job string, fence int64, kv []any) []any {
	return append([]any{fence}, kv...)
}

// CreateJob writes a new job's record (state running) and indexes it.
// The running index is written first and the job index last: a crash in
// between leaves an id in the running index without a record, which
// recovery drops, and never a running job recovery cannot find.
func (s *Store) CreateJob(ctx context.Context, job string, fields map[string]any) error {
	return s.createJob(ctx, job, StateRunning, fields)
}

// CreateQueuedJob writes a new job's record in state queued, for
// admission control: it joins the admission queue (after the running
// index, before its record: a crash in between leaves an id there without
// a record, which recovery drops) and runs once Admit lets it in.
func (s *Store) CreateQueuedJob(ctx context.Context, job string, fields map[string]any) error {
	return s.createJob(ctx, job, StateQueued, fields)
}

func (s *Store) createJob(ctx context.Context, job string, state JobState, fields map[string]any) error {
	now := float64(time.Now().UnixMilli())
	kv := []any{string(state)}
	for k, v := range fields {
		kv = append(kv, k, v)
	}
	err := s.retry(ctx, "index running job", func() error {
		return s.rdb.ZAdd(ctx, runningKey, redis.Z{Score: now, Member: job}).Err()
	})
	if err == nil && state == StateQueued {
		// Scored in microseconds: jobs submitted in one millisecond
		// keep their order (a tie would order them by their random ids).
		at := float64(time.Now().UnixMicro())
		err = s.retry(ctx, "queue job", func() error {
			return s.rdb.ZAdd(ctx, redisdb.QueuedKey, redis.Z{Score: at, Member: job}).Err()
		})
	}
	if err == nil {
		_, err = s.do(ctx, trJobCreate, "", []string{kJob(job)}, kv...)
	}
	if err == nil {
		err = s.retry(ctx, "index job", func() error {
			return s.rdb.ZAdd(ctx, jobsKey, redis.Z{Score: now, Member: job}).Err()
		})
	}
	if err != nil {
		return fmt.Errorf("create job %s: %w", job, err)
	}
	return nil
}

// Acquire takes or renews the job's lease for owner, returning the fence;
// ok is false when another coordinator holds it or the job is finished.
func (s *Store) Acquire(ctx context.Context, job, owner string, ttl time.Duration) (fence int64, ok bool, err error) {
	v, err := s.do(ctx, trLeaseAcquire, "", []string{kLease(job), kFence(job), kJob(job)}, owner, ttl.Milliseconds())
	if err != nil {
		return 0, false, fmt.Errorf("acquire lease of job %s: %w", job, err)
	}
	n, _ := v.(int64)
	if n == -1 {
		return 0, false, fmt.Errorf("acquire lease of job %s: %w", job, ErrJobGone)
	}
	if n < 0 {
		return 0, false, nil // finished: nothing to drive
	}
	return n, n > 0, nil
}

// Release drops the lease if owner holds it (best effort: an unreachable
// Redis lets the lease expire instead).
func (s *Store) Release(ctx context.Context, job, owner string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = trLeaseRelease.script.Run(ctx, s.rdb, []string{kLease(job)}, owner).Err()
}

// SetJob sets fields of a running job's record (job_update); not its
// state, which only FinishJob changes.
func (s *Store) SetJob(ctx context.Context, job string, fence int64, kv ...any) error {
	if err := checkFields(trJobUpdate.name, kv); err != nil {
		return err
	}
	if _, err := s.do(ctx, trJobUpdate, "", []string{kFence(job), kJob(job)}, fenced(job, fence, kv)...); err != nil {
		return fmt.Errorf("update job %s: %w", job, err)
	}
	return nil
}

// FinishJob moves a running job to a terminal state (job_finish), with
// fields such as its error; stages still running become cancelled. With retention > 0 every Redis key of the job
// expires that long after. The job then leaves the running index and
// enters the finished one (for GC); those are other hash slots, so a crash
// in between leaves a finished job in the running index, which recovery
// drops.
func (s *Store) FinishJob(ctx context.Context, job string, fence int64, state JobState, retention time.Duration, kv ...any) error {
	if err := checkFields(trJobFinish.name, kv); err != nil {
		return err
	}
	stages, others, err := s.jobKeys(ctx, job)
	if err != nil {
		return err
	}
	running := StageCancelled // the stage that failed the job is failed already (FailStage)
	keys := append(append([]string{kFence(job), kJob(job)}, stages...), others...)
	args := append([]any{fence, string(state), string(running), len(stages), retention.Milliseconds()}, kv...)
	if _, err := s.do(ctx, trJobFinish, string(state), keys, args...); err != nil {
		return fmt.Errorf("finish job %s: %w", job, err)
	}
	if err := s.markFinished(ctx, job, time.Now()); err != nil {
		return err
	}
	// Out of admission first and out of the running index last: a crash
	// in between leaves the finished job in the running index, where
	// recovery (Orphans) finds it and drops it from all three.
	if err := s.unadmit(ctx, job); err != nil {
		return err
	}
	return s.retry(ctx, "unindex running job", func() error { return s.rdb.ZRem(ctx, runningKey, job).Err() })
}

// Admit lets queued job in when fewer than max jobs (0: any number) are
// admitted and it is first in line for a free place, and moves its record
// to running; ok is false when it must wait. A job already admitted (a
// driver that took it over) is admitted again at once.
func (s *Store) Admit(ctx context.Context, job string, fence int64, max int) (ok bool, err error) {
	v, err := s.do(ctx, trAdmission, "", []string{redisdb.QueuedKey, redisdb.AdmittedKey}, job, max, time.Now().UnixMicro())
	if err != nil {
		return false, fmt.Errorf("admit job %s: %w", job, err)
	}
	if n, _ := v.(int64); n != 1 {
		return false, nil
	}
	if _, err := s.do(ctx, trJobAdmit, string(StateRunning), []string{kFence(job), kJob(job)},
		fenced(job, fence, []any{"admitted", time.Now().UTC().Format(time.RFC3339Nano)})...); err != nil {
		return false, fmt.Errorf("admit job %s: %w", job, err)
	}
	return true, nil
}

// QueuePosition returns queued job's place in the admission queue (1:
// next in), 0 when it is not queued.
func (s *Store) QueuePosition(ctx context.Context, job string) (int64, error) {
	var n int64
	err := s.retry(ctx, "read queue position", func() (err error) {
		n, err = s.rdb.ZRank(ctx, redisdb.QueuedKey, job).Result()
		if errors.Is(err, redis.Nil) {
			n, err = -1, nil
		}
		return err
	})
	return n + 1, err
}

// unadmit takes jobs out of the admission queue and the admitted set.
func (s *Store) unadmit(ctx context.Context, jobs ...string) error {
	members := make([]any, len(jobs))
	for i, j := range jobs {
		members[i] = j
	}
	return s.retry(ctx, "unadmit job", func() error {
		pipe := s.rdb.Pipeline()
		pipe.ZRem(ctx, redisdb.QueuedKey, members...)
		pipe.ZRem(ctx, redisdb.AdmittedKey, members...)
		_, err := pipe.Exec(ctx)
		return err
	})
}

// jobKeys returns the keys of a job's stages (every stage of its plan) and
// its other keys but fence, record and lease: task records, rounds, the
// cancel flag and LIMIT counters.
func (s *Store) jobKeys(ctx context.Context, job string) (stages, others []string, err error) {
	m, err := s.Job(ctx, job)
	if err != nil {
		return nil, nil, err
	}
	g, err := m.Plan()
	if err != nil {
		return nil, nil, fmt.Errorf("job %s: %w", job, err)
	}
	others = append(others, kRounds(job), redisdb.CancelKey(job))
	for _, st := range g.Stages {
		stages = append(stages, kStage(job, st.ID))
		others = append(others, redisdb.LimitKey(job, st.ID))
		sm, err := s.Stage(ctx, job, st.ID)
		if err != nil {
			return nil, nil, err
		}
		for t := 0; t < sm.Tasks; t++ {
			others = append(others, kTask(job, st.ID, t))
		}
	}
	return stages, others, nil
}

// stageTransition runs a fenced stage transition.
func (s *Store) stageTransition(ctx context.Context, tr transition, target StageState, job string, fence int64, stage int, kv []any) error {
	if err := checkFields(tr.name, kv); err != nil {
		return err
	}
	_, err := s.do(ctx, tr, string(target), []string{kFence(job), kJob(job), kStage(job, stage)}, fenced(job, fence, kv)...)
	if err != nil {
		return fmt.Errorf("stage %d of job %s: %w", stage, job, err)
	}
	return nil
}

// StartStage moves a pending stage to running (stage_start), or resumes a
// running one, setting fields.
func (s *Store) StartStage(ctx context.Context, job string, fence int64, stage int, kv ...any) error {
	return s.stageTransition(ctx, trStageStart, StageRunning, job, fence, stage, kv)
}

// FinishStage moves a running stage to done with its output (stage_finish).
func (s *Store) FinishStage(ctx context.Context, job string, fence int64, stage int, kv ...any) error {
	return s.stageTransition(ctx, trStageFinish, StageDone, job, fence, stage, kv)
}

// SkipStage marks a pending or running stage skipped (stage_skip).
func (s *Store) SkipStage(ctx context.Context, job string, fence int64, stage int, kv ...any) error {
	return s.stageTransition(ctx, trStageSkip, StageSkipped, job, fence, stage, kv)
}

// FailStage moves a running stage to failed (stage_fail).
func (s *Store) FailStage(ctx context.Context, job string, fence int64, stage int, kv ...any) error {
	return s.stageTransition(ctx, trStageFail, StageFailed, job, fence, stage, kv)
}

// SetStage sets fields of a stage record, not its state (stage_update).
func (s *Store) SetStage(ctx context.Context, job string, fence int64, stage int, kv ...any) error {
	return s.stageTransition(ctx, trStageUpdate, "", job, fence, stage, kv)
}

// Job returns the job record.
func (s *Store) Job(ctx context.Context, job string) (*JobRecord, error) {
	var m map[string]string
	err := s.retry(ctx, "read job", func() (err error) {
		m, err = s.rdb.HGetAll(ctx, kJob(job)).Result()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read job %s: %w", job, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrJobNotFound, job)
	}
	return decodeJob(m), nil
}

// Stage returns a stage record (the zero record when the stage has not
// started).
func (s *Store) Stage(ctx context.Context, job string, stage int) (*StageRecord, error) {
	var m map[string]string
	err := s.retry(ctx, "read stage", func() (err error) {
		m, err = s.rdb.HGetAll(ctx, kStage(job, stage)).Result()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read stage %d of job %s: %w", stage, job, err)
	}
	return decodeStage(m), nil
}

// Task returns a task record.
func (s *Store) Task(ctx context.Context, job string, stage, task int) (*TaskRecord, error) {
	var m map[string]string
	err := s.retry(ctx, "read task", func() (err error) {
		m, err = s.rdb.HGetAll(ctx, kTask(job, stage, task)).Result()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read task %d/%d of job %s: %w", stage, task, job, err)
	}
	return decodeTask(m), nil
}

// StageOutput decodes a finished stage's output with its objects: for a
// record holding only statistics (FromTasks), the partitions of its
// tasks' committed results, read in pipelined batches, in task order
// (the order runStage recorded them in), each packed as it is read (the
// repairs' replacements are applied when a partition's objects are
// asked for).
func (s *Store) StageOutput(ctx context.Context, job string, stage int, sm *StageRecord) (*stageOutput, error) {
	out, err := sm.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errCorruptRecord, err)
	}
	if !out.FromTasks {
		return out, nil
	}
	out.Objects, out.tasks = nil, make([]taskParts, 0, out.Tasks)
	const batch = 512
	for lo := 0; lo < out.Tasks; lo += batch {
		hi := min(lo+batch, out.Tasks)
		cmds := make([]*redis.StringCmd, hi-lo)
		err := s.retry(ctx, "read stage output", func() error {
			pipe := s.rdb.Pipeline()
			for t := lo; t < hi; t++ {
				cmds[t-lo] = pipe.HGet(ctx, kTask(job, stage, t), "result")
			}
			_, err := pipe.Exec(ctx)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("read results of stage %d of job %s: %w", stage, job, err)
		}
		for i, cmd := range cmds {
			var res function.TaskResult
			if err := json.Unmarshal([]byte(cmd.Val()), &res); err != nil {
				return nil, fmt.Errorf("%w: task %d/%d: decode committed result: %w", errCorruptRecord, stage, lo+i, err)
			}
			out.addResult(&res)
		}
	}
	return out, nil
}

// StartAttempt opens the next attempt of a task; committed is true when
// the task already has a committed attempt (nothing to run).
func (s *Store) StartAttempt(ctx context.Context, job string, fence int64, stage, task int) (attempt int, committed bool, err error) {
	a, err := s.Begin(ctx, job, fence, stage, task)
	return a.Attempt, a.Committed, err
}

// AttemptStart is what opening an attempt found.
type AttemptStart struct {
	Attempt   int  // the new attempt's number (0 when Committed)
	Failures  int  // failed attempts of the task so far (its spent retry budget)
	Committed bool // the task already has a committed attempt: nothing to run
}

// Begin opens the next attempt of a task, one round trip (task_begin).
func (s *Store) Begin(ctx context.Context, job string, fence int64, stage, task int) (AttemptStart, error) {
	v, err := s.do(ctx, trTaskBegin, "", s.taskKeys(job, stage, task), fence, time.Now().UnixMilli())
	if err != nil {
		return AttemptStart{}, fmt.Errorf("start attempt of task %d/%d: %w", stage, task, err)
	}
	r, _ := v.([]any)
	if len(r) != 2 {
		return AttemptStart{}, fmt.Errorf("start attempt of task %d/%d: unexpected reply %v", stage, task, v)
	}
	a, _ := r[0].(int64)
	f, _ := r[1].(int64)
	if a < 0 {
		return AttemptStart{Committed: true, Failures: int(f)}, nil
	}
	return AttemptStart{Attempt: int(a), Failures: int(f)}, nil
}

func (s *Store) taskKeys(job string, stage, task int) []string {
	return []string{kFence(job), kJob(job), kTask(job, stage, task), kStage(job, stage)}
}

// Commit makes attempt the task's output unless another attempt won
// (task_commit).
func (s *Store) Commit(ctx context.Context, job string, fence int64, stage, task, attempt int, result []byte) (won bool, err error) {
	v, err := s.do(ctx, trTaskCommit, "", s.taskKeys(job, stage, task), fence, attempt, result)
	if err != nil {
		return false, fmt.Errorf("commit task %d/%d attempt %d: %w", stage, task, attempt, err)
	}
	return v == int64(1), nil
}

// Reopen drops a task's committed attempt so that it runs again
// (task_reopen; nothing happens to a task that is not done).
func (s *Store) Reopen(ctx context.Context, job string, fence int64, stage, task int) error {
	if _, err := s.do(ctx, trTaskReopen, "", s.taskKeys(job, stage, task), fence); err != nil {
		return fmt.Errorf("reopen task %d/%d: %w", stage, task, err)
	}
	return nil
}

// Fail records a failed attempt (task_fail): state TaskRetrying,
// TaskFailed or TaskInputLost, which does not count against the retry
// budget. Nothing happens to a task that is done.
func (s *Store) Fail(ctx context.Context, job string, fence int64, stage, task int, msg string, state TaskState) error {
	if _, err := s.do(ctx, trTaskFail, "", s.taskKeys(job, stage, task), fence, msg, string(state)); err != nil {
		return fmt.Errorf("record failure of task %d/%d: %w", stage, task, err)
	}
	return nil
}

// AddRound appends a re-planning round (JSON) to the job's history
// (round_add).
func (s *Store) AddRound(ctx context.Context, job string, fence int64, round []byte) error {
	if _, err := s.do(ctx, trRoundAdd, "", []string{kFence(job), kJob(job), kRounds(job)}, fence, round); err != nil {
		return fmt.Errorf("record re-planning round: %w", err)
	}
	return nil
}

// Rounds returns the job's re-planning history.
func (s *Store) Rounds(ctx context.Context, job string) ([]string, error) {
	var out []string
	err := s.retry(ctx, "read rounds", func() (err error) {
		out, err = s.rdb.LRange(ctx, kRounds(job), 0, -1).Result()
		return err
	})
	return out, err
}

// Jobs lists job ids, newest first.
func (s *Store) Jobs(ctx context.Context, n int64) ([]string, error) {
	var out []string
	err := s.retry(ctx, "list jobs", func() (err error) {
		out, err = s.rdb.ZRevRange(ctx, jobsKey, 0, n-1).Result()
		return err
	})
	return out, err
}

// Cancel sets the job's cancel flag, which running functions and the
// job's driver poll. Cancelling a finished job changes nothing.
func (s *Store) Cancel(ctx context.Context, job string) error {
	m, err := s.Job(ctx, job)
	if err != nil {
		return err
	}
	if m.State.Terminal() {
		return nil
	}
	return s.retry(ctx, "cancel", func() error {
		return s.rdb.Set(ctx, redisdb.CancelKey(job), "1", 0).Err()
	})
}

// Cancelled reports whether the job's cancel flag is set.
func (s *Store) Cancelled(ctx context.Context, job string) (bool, error) {
	var n int64
	err := s.retry(ctx, "read cancel flag", func() (err error) {
		n, err = s.rdb.Exists(ctx, redisdb.CancelKey(job)).Result()
		return err
	})
	return n > 0, err
}

// orphanRecordGrace is how long an id may sit in the running index without
// a job record before recovery takes it for what a crash between
// CreateJob's writes left behind and drops it.
const orphanRecordGrace = time.Minute

// Orphans returns the running jobs no coordinator holds the lease of,
// oldest first, whatever their age: it reads the running index, not the
// job index. It drops from the index the jobs that finished or whose
// record vanished (what a crash between a job's state change and its
// index update leaves); an id without a record is dropped only once it is
// older than orphanRecordGrace, since a submission in flight looks the
// same for a moment.
func (s *Store) Orphans(ctx context.Context) ([]string, error) {
	var zs []redis.Z
	err := s.retry(ctx, "list running jobs", func() (err error) {
		zs, err = s.rdb.ZRangeWithScores(ctx, runningKey, 0, -1).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(zs))
	indexed := make(map[string]time.Time, len(zs))
	for i, z := range zs {
		ids[i], _ = z.Member.(string)
		indexed[ids[i]] = time.UnixMilli(int64(z.Score))
	}
	var out, gone []string
	for len(ids) > 0 {
		batch := ids[:min(len(ids), 256)]
		ids = ids[len(batch):]
		states := make([]*redis.StringCmd, len(batch))
		leases := make([]*redis.IntCmd, len(batch))
		err := s.retry(ctx, "read running jobs", func() error {
			pipe := s.rdb.Pipeline()
			for i, id := range batch {
				states[i] = pipe.HGet(ctx, kJob(id), "state")
				leases[i] = pipe.Exists(ctx, kLease(id))
			}
			_, err := pipe.Exec(ctx)
			if errors.Is(err, redis.Nil) {
				err = nil // a vanished record
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		for i, id := range batch {
			st, err := states[i].Result()
			switch {
			case errors.Is(err, redis.Nil) && time.Since(indexed[id]) < orphanRecordGrace:
				// Indexed but no record yet: a submission between its two
				// writes (CreateJob indexes first). Dropping it now would
				// leave a running job no recovery can find.
			case errors.Is(err, redis.Nil), err == nil && JobState(st) != StateRunning && JobState(st) != StateQueued:
				gone = append(gone, id)
			case err == nil && leases[i].Val() == 0:
				out = append(out, id)
			}
		}
	}
	if len(gone) > 0 {
		if err := s.unadmit(ctx, gone...); err != nil {
			return out, err
		}
		members := make([]any, len(gone))
		for i, id := range gone {
			members[i] = id
		}
		if err := s.retry(ctx, "unindex finished jobs", func() error { return s.rdb.ZRem(ctx, runningKey, members...).Err() }); err != nil {
			return out, err
		}
	}
	return out, nil
}

// TrimIndex drops from the job index (and, when collect is false, from
// the finished index, which GC empties otherwise) jobs submitted before t
// whose record expired; it returns how many it dropped.
func (s *Store) TrimIndex(ctx context.Context, t time.Time, collect bool) (int, error) {
	indexes := []string{jobsKey}
	if !collect {
		indexes = append(indexes, finishedKey)
	}
	n := 0
	for _, index := range indexes {
		for offset := int64(0); ; {
			var ids []string
			err := s.retry(ctx, "list old jobs", func() (err error) {
				ids, err = s.rdb.ZRangeByScore(ctx, index, &redis.ZRangeBy{
					Min: "-inf", Max: strconv.FormatInt(t.UnixMilli(), 10), Offset: offset, Count: 500}).Result()
				return err
			})
			if err != nil || len(ids) == 0 {
				return n, err
			}
			exists := make([]*redis.IntCmd, len(ids))
			err = s.retry(ctx, "read old jobs", func() error {
				pipe := s.rdb.Pipeline()
				for i, id := range ids {
					exists[i] = pipe.Exists(ctx, kJob(id))
				}
				_, err := pipe.Exec(ctx)
				return err
			})
			if err != nil {
				return n, err
			}
			var gone []any
			for i, id := range ids {
				if exists[i].Val() == 0 {
					gone = append(gone, id)
				}
			}
			if len(gone) > 0 {
				if err := s.retry(ctx, "trim job index", func() error { return s.rdb.ZRem(ctx, index, gone...).Err() }); err != nil {
					return n, err
				}
			}
			n += len(gone)
			offset += int64(len(ids) - len(gone))
			if len(ids) < 500 {
				break
			}
		}
	}
	return n, nil
}

// JobState returns a job's state; ok is false when it has no record.
func (s *Store) JobState(ctx context.Context, job string) (state JobState, ok bool, err error) {
	var st string
	err = s.retry(ctx, "read job state", func() (err error) {
		st, err = s.rdb.HGet(ctx, kJob(job), "state").Result()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	return JobState(st), err == nil, err
}

// MarkCollected records that a finished job's objects were deleted
// (job_collected).
func (s *Store) MarkCollected(ctx context.Context, job string, at time.Time) error {
	_, err := s.do(ctx, trJobCollected, "", []string{kJob(job)}, at.UTC().Format(time.RFC3339Nano))
	return err
}
