package coordinator

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// AttemptTimes are when an attempt's function was invoked and when its
// outcome was known. They ride along the commit or failure of the attempt
// (the same round trip) and feed the task timeline of the web UI.
type AttemptTimes struct {
	Invoked time.Time
	Ended   time.Time
}

func (at AttemptTimes) arg() string {
	inv := at.Invoked
	if inv.IsZero() {
		inv = at.Ended
	}
	return strconv.FormatInt(inv.UnixMilli(), 10) + "," + strconv.FormatInt(at.Ended.UnixMilli(), 10)
}

// CommitAt is Commit that also records the attempt's times and outcome
// (committed, or lost_race when another attempt had won).
func (s *Store) CommitAt(ctx context.Context, job string, fence int64, stage, task, attempt int, result []byte, at AttemptTimes) (won bool, err error) {
	var n int64
	err = s.retry(ctx, "commit", func() (err error) {
		n, err = scriptCommit.Run(ctx, s.rdb, []string{kFence(job), kTask(job, stage, task), kStage(job, stage)},
			fence, attempt, result, at.arg()).Int64()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("commit task %d/%d attempt %d: %w", stage, task, attempt, fenceErr(err))
	}
	return n == 1, nil
}

// FailAt is Fail that also records the failed attempt's times with its
// state (retrying, failed, input_lost).
func (s *Store) FailAt(ctx context.Context, job string, fence int64, stage, task, attempt int, msg, state string, at AttemptTimes) error {
	err := s.retry(ctx, "fail", func() error {
		return scriptFail.Run(ctx, s.rdb, []string{kFence(job), kTask(job, stage, task), kStage(job, stage)},
			fence, msg, state, attempt, at.arg()).Err()
	})
	if err != nil {
		return fmt.Errorf("record failure of task %d/%d: %w", stage, task, fenceErr(err))
	}
	return nil
}
