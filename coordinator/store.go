package coordinator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/function"
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
// change goes through one Lua script that checks the job's fencing token.
type Store struct {
	rdb redis.UniversalClient
	// Outage bounds how long an operation waits for an unreachable Redis
	// (retrying with backoff) before it fails with ErrRedisUnavailable.
	Outage time.Duration
	// observe, when set, sees every Redis error an operation met (retried
	// or not), for metrics.
	observe func(op string, err error)
}

// NewStore wraps a Redis client.
func NewStore(rdb redis.UniversalClient) *Store { return &Store{rdb: rdb, Outage: 2 * time.Minute} }

// Client returns the underlying Redis client.
func (s *Store) Client() redis.UniversalClient { return s.rdb }

const jobsKey = "sluice:jobs" // ZSET of job ids by submit time (global index)

func jobKey(job, suffix string) string { return "sluice:{" + job + "}:" + suffix }

// Keys of one job.
func kJob(job string) string            { return jobKey(job, "job") }
func kFence(job string) string          { return jobKey(job, "fence") }
func kLease(job string) string          { return jobKey(job, "lease") }
func kStage(job string, s int) string   { return jobKey(job, "stage:"+strconv.Itoa(s)) }
func kTask(job string, s, t int) string { return jobKey(job, fmt.Sprintf("task:%d:%d", s, t)) }
func kRounds(job string) string         { return jobKey(job, "rounds") }

// acquire takes or renews the lease of a job. A new holder bumps the fence.
// KEYS: lease, fence, job. ARGV: owner, ttl ms. Returns the fence, 0 when
// another owner holds the lease, -1 when the job record is gone, -2 when
// the job is finished (nothing to drive: the fence stays as it is).
var scriptAcquire = redis.NewScript(`
if redis.call('EXISTS', KEYS[3]) == 0 then return -1 end
local st = redis.call('HGET', KEYS[3], 'state')
if st == 'succeeded' or st == 'failed' or st == 'cancelled' then return -2 end
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if not cur then return redis.call('INCR', KEYS[2]) end
return tonumber(redis.call('GET', KEYS[2]) or '0')
`)

// hsetFenced sets hash fields if the fence still matches.
// KEYS: fence, hash. ARGV: fence, field, value, ...
var scriptHSetFenced = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('STALE_FENCE') end
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i+1]) end
return 1
`)

// startAttempt opens a new attempt of a task unless it is committed.
// KEYS: fence, task, stage. ARGV: fence, [now ms: recorded as the
// attempt's open time, for the timeline]. Returns {attempt, failures}, with
// attempt -1 when the task already has a committed attempt. The stage
// counts attempts too (for status without reading every task).
var scriptStartAttempt = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('STALE_FENCE') end
local f = tonumber(redis.call('HGET', KEYS[2], 'failures') or '0')
if redis.call('HEXISTS', KEYS[2], 'committed') == 1 then return {-1, f} end
local a = redis.call('HINCRBY', KEYS[2], 'attempts', 1)
redis.call('HSET', KEYS[2], 'state', 'running')
if ARGV[2] then redis.call('HSET', KEYS[2], 'open:' .. a, ARGV[2]) end
redis.call('HINCRBY', KEYS[3], 'attempts', 1)
return {a, f}
`)

// commitTask makes an attempt the task's output: first commit wins.
// KEYS: fence, task, stage. ARGV: fence, attempt, result json, [times
// "invoked_ms,end_ms": recorded with the outcome, for the timeline].
// Returns 1 when this attempt won, 0 when another attempt had committed.
// Committing the winning attempt again (a retried call, a result reported
// twice) returns 1 and changes nothing.
var scriptCommit = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('STALE_FENCE') end
local c = redis.call('HGET', KEYS[2], 'committed')
if c == ARGV[2] then return 1 end
if c then
  if ARGV[4] then redis.call('HSET', KEYS[2], 'end:' .. ARGV[2], ARGV[4] .. ',lost_race') end
  return 0
end
redis.call('HSET', KEYS[2], 'committed', ARGV[2], 'state', 'done', 'result', ARGV[3])
if ARGV[4] then redis.call('HSET', KEYS[2], 'end:' .. ARGV[2], ARGV[4] .. ',committed') end
redis.call('HINCRBY', KEYS[3], 'done', 1)
return 1
`)

// failAttempt records a failed attempt. Failures count against the task's
// retry budget, except a lost input (the producer's fault, not the task's).
// KEYS: fence, task, stage. ARGV: fence, error, state, [attempt, times
// "invoked_ms,end_ms": recorded with the state, for the timeline].
var scriptFail = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('STALE_FENCE') end
if ARGV[4] then redis.call('HSET', KEYS[2], 'end:' .. ARGV[4], ARGV[5] .. ',' .. ARGV[3]) end
if redis.call('HEXISTS', KEYS[2], 'committed') == 1 then return 0 end
redis.call('HSET', KEYS[2], 'state', ARGV[3], 'error', ARGV[2])
if ARGV[3] ~= 'input_lost' then
  redis.call('HINCRBY', KEYS[2], 'failures', 1)
  redis.call('HINCRBY', KEYS[3], 'failures', 1)
end
return 1
`)

// release drops the lease if owner holds it. KEYS: lease. ARGV: owner.
var scriptRelease = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// addRound appends a re-planning round if the fence matches.
// KEYS: fence, rounds. ARGV: fence, round json.
var scriptAddRound = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('STALE_FENCE') end
return redis.call('RPUSH', KEYS[2], ARGV[2])
`)

// reopenTask drops a task's committed attempt so it runs again (LIMIT
// early stop's safety net). KEYS: fence, task, stage. ARGV: fence.
var scriptReopen = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('STALE_FENCE') end
if redis.call('HEXISTS', KEYS[2], 'committed') == 0 then return 0 end
redis.call('HDEL', KEYS[2], 'committed', 'result')
redis.call('HSET', KEYS[2], 'state', 'pending')
redis.call('HINCRBY', KEYS[3], 'done', -1)
return 1
`)

func fenceErr(err error) error {
	if err != nil && strings.Contains(err.Error(), "STALE_FENCE") {
		return ErrStaleFence
	}
	return err
}

// CreateJob writes a new job's record and indexes it.
func (s *Store) CreateJob(ctx context.Context, job string, fields map[string]any) error {
	err := s.retry(ctx, "create job", func() error {
		pipe := s.rdb.TxPipeline()
		pipe.HSet(ctx, kJob(job), fields)
		pipe.ZAdd(ctx, jobsKey, redis.Z{Score: float64(time.Now().UnixMilli()), Member: job})
		_, err := pipe.Exec(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("create job %s: %w", job, err)
	}
	return nil
}

// Acquire takes or renews the job's lease for owner, returning the fence;
// ok is false when another coordinator holds it or the job is finished.
func (s *Store) Acquire(ctx context.Context, job, owner string, ttl time.Duration) (fence int64, ok bool, err error) {
	var n int64
	err = s.retry(ctx, "acquire", func() (err error) {
		n, err = scriptAcquire.Run(ctx, s.rdb, []string{kLease(job), kFence(job), kJob(job)}, owner, ttl.Milliseconds()).Int64()
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("acquire lease of job %s: %w", job, err)
	}
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
	_ = scriptRelease.Run(ctx, s.rdb, []string{kLease(job)}, owner).Err()
}

func (s *Store) hset(ctx context.Context, job string, fence int64, key string, kv ...any) error {
	args := append([]any{fence}, kv...)
	err := s.retry(ctx, "update", func() error {
		return scriptHSetFenced.Run(ctx, s.rdb, []string{kFence(job), key}, args...).Err()
	})
	if err != nil {
		return fmt.Errorf("update %s: %w", key, fenceErr(err))
	}
	return nil
}

// SetJob sets fields of the job record.
func (s *Store) SetJob(ctx context.Context, job string, fence int64, kv ...any) error {
	return s.hset(ctx, job, fence, kJob(job), kv...)
}

// SetStage sets fields of a stage record.
func (s *Store) SetStage(ctx context.Context, job string, fence int64, stage int, kv ...any) error {
	return s.hset(ctx, job, fence, kStage(job, stage), kv...)
}

// Job returns the job record.
func (s *Store) Job(ctx context.Context, job string) (map[string]string, error) {
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
	return m, nil
}

// Stage returns a stage record (empty when the stage has not started).
func (s *Store) Stage(ctx context.Context, job string, stage int) (map[string]string, error) {
	var m map[string]string
	err := s.retry(ctx, "read stage", func() (err error) {
		m, err = s.rdb.HGetAll(ctx, kStage(job, stage)).Result()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read stage %d of job %s: %w", stage, job, err)
	}
	return m, nil
}

// Task returns a task record.
func (s *Store) Task(ctx context.Context, job string, stage, task int) (map[string]string, error) {
	var m map[string]string
	err := s.retry(ctx, "read task", func() (err error) {
		m, err = s.rdb.HGetAll(ctx, kTask(job, stage, task)).Result()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read task %d/%d of job %s: %w", stage, task, job, err)
	}
	return m, nil
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

// Begin opens the next attempt of a task, one round trip.
func (s *Store) Begin(ctx context.Context, job string, fence int64, stage, task int) (AttemptStart, error) {
	var v []int64
	err := s.retry(ctx, "start attempt", func() (err error) {
		v, err = scriptStartAttempt.Run(ctx, s.rdb, []string{kFence(job), kTask(job, stage, task), kStage(job, stage)}, fence, time.Now().UnixMilli()).Int64Slice()
		return err
	})
	if err != nil {
		return AttemptStart{}, fmt.Errorf("start attempt of task %d/%d: %w", stage, task, fenceErr(err))
	}
	if len(v) != 2 {
		return AttemptStart{}, fmt.Errorf("start attempt of task %d/%d: unexpected reply %v", stage, task, v)
	}
	if v[0] < 0 {
		return AttemptStart{Committed: true, Failures: int(v[1])}, nil
	}
	return AttemptStart{Attempt: int(v[0]), Failures: int(v[1])}, nil
}

// Commit makes attempt the task's output unless another attempt won.
func (s *Store) Commit(ctx context.Context, job string, fence int64, stage, task, attempt int, result []byte) (won bool, err error) {
	var n int64
	err = s.retry(ctx, "commit", func() (err error) {
		n, err = scriptCommit.Run(ctx, s.rdb, []string{kFence(job), kTask(job, stage, task), kStage(job, stage)}, fence, attempt, result).Int64()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("commit task %d/%d attempt %d: %w", stage, task, attempt, fenceErr(err))
	}
	return n == 1, nil
}

// Reopen drops a task's committed attempt so that it runs again.
func (s *Store) Reopen(ctx context.Context, job string, fence int64, stage, task int) error {
	err := s.retry(ctx, "reopen", func() error {
		return scriptReopen.Run(ctx, s.rdb, []string{kFence(job), kTask(job, stage, task), kStage(job, stage)}, fence).Err()
	})
	if err != nil {
		return fmt.Errorf("reopen task %d/%d: %w", stage, task, fenceErr(err))
	}
	return nil
}

// Fail records a failed attempt (state "retrying", "failed" or
// "input_lost", which does not count against the retry budget).
func (s *Store) Fail(ctx context.Context, job string, fence int64, stage, task int, msg, state string) error {
	err := s.retry(ctx, "fail", func() error {
		return scriptFail.Run(ctx, s.rdb, []string{kFence(job), kTask(job, stage, task), kStage(job, stage)}, fence, msg, state).Err()
	})
	if err != nil {
		return fmt.Errorf("record failure of task %d/%d: %w", stage, task, fenceErr(err))
	}
	return nil
}

// AddRound appends a re-planning round (JSON) to the job's history, if
// fence still holds the job.
func (s *Store) AddRound(ctx context.Context, job string, fence int64, round []byte) error {
	err := s.retry(ctx, "add round", func() error {
		return scriptAddRound.Run(ctx, s.rdb, []string{kFence(job), kRounds(job)}, fence, round).Err()
	})
	if err != nil {
		return fmt.Errorf("record re-planning round: %w", fenceErr(err))
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

// Cancel sets the job's cancel flag, which running functions poll.
func (s *Store) Cancel(ctx context.Context, job string) error {
	if _, err := s.Job(ctx, job); err != nil {
		return err
	}
	return s.retry(ctx, "cancel", func() error {
		return s.rdb.Set(ctx, function.CancelKey(job), "1", 0).Err()
	})
}

// Cancelled reports whether the job's cancel flag is set.
func (s *Store) Cancelled(ctx context.Context, job string) (bool, error) {
	var n int64
	err := s.retry(ctx, "read cancel flag", func() (err error) {
		n, err = s.rdb.Exists(ctx, function.CancelKey(job)).Result()
		return err
	})
	return n > 0, err
}
