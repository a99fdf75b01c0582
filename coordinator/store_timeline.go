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
// (committed, or lost_race when another attempt had won), in the same
// task_commit transition.
func (s *Store) CommitAt(ctx context.Context, job string, fence int64, stage, task, attempt int, result []byte, at AttemptTimes) (won bool, err error) {
	v, err := s.do(ctx, trTaskCommit, "", s.taskKeys(job, stage, task), fence, attempt, result, at.arg())
	if err != nil {
		return false, fmt.Errorf("commit task %d/%d attempt %d: %w", stage, task, attempt, err)
	}
	return v == int64(1), nil
}

// FailAt is Fail that also records the failed attempt's times with its
// state, in the same task_fail transition.
func (s *Store) FailAt(ctx context.Context, job string, fence int64, stage, task, attempt int, msg string, state TaskState, at AttemptTimes) error {
	if _, err := s.do(ctx, trTaskFail, "", s.taskKeys(job, stage, task), fence, msg, string(state), attempt, at.arg()); err != nil {
		return fmt.Errorf("record failure of task %d/%d: %w", stage, task, err)
	}
	return nil
}
