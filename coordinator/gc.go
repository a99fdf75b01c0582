package coordinator

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/function/redisdb"
	"github.com/sluicedb/sluice/shuffle"
)

// finishedKey indexes finished jobs by finish time (ms) until their
// objects are garbage-collected.
const finishedKey = redisdb.FinishedKey

// markFinished indexes a job that just reached a terminal state for GC.
// (Not atomic with the state change: the keys live in different hash
// slots. A coordinator dying in between leaves the job's objects to a
// manual `sluice shuffle` clean-up.)
func (s *Store) markFinished(ctx context.Context, job string, at time.Time) error {
	return s.retry(ctx, "index finished job", func() error {
		return s.rdb.ZAdd(ctx, finishedKey, redis.Z{Score: float64(at.UnixMilli()), Member: job}).Err()
	})
}

// unmarkFinished drops a job from the GC index.
func (s *Store) unmarkFinished(ctx context.Context, job string) error {
	return s.retry(ctx, "unindex finished job", func() error { return s.rdb.ZRem(ctx, finishedKey, job).Err() })
}

// finishedBefore returns up to n finished jobs that finished before t.
func (s *Store) finishedBefore(ctx context.Context, t time.Time, n int64) ([]string, error) {
	var out []string
	err := s.retry(ctx, "list finished jobs", func() (err error) {
		out, err = s.rdb.ZRangeByScore(ctx, finishedKey, &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatInt(t.UnixMilli(), 10), Count: n}).Result()
		return err
	})
	return out, err
}

// GC deletes, every GCInterval, the shuffle objects and plan fragments of
// jobs that finished (succeeded, failed or cancelled) more than Retention
// ago, and the objects of attempts that lost or were abandoned. The
// committed result objects of a succeeded job are kept while its record
// is (RecordRetention). It also trims the job indexes of the jobs whose
// records expired. It returns when ctx is done; with Retention and
// RecordRetention 0 it returns at once (everything is kept). Several
// coordinators may run it: deletions are idempotent.
func (c *Coordinator) GC(ctx context.Context) {
	if c.cfg.Retention <= 0 && c.cfg.RecordRetention <= 0 {
		return
	}
	every := c.cfg.GCInterval
	if every <= 0 {
		every = time.Minute
		if c.cfg.Retention > 0 {
			every = min(max(c.cfg.Retention/2, time.Second), time.Minute)
		}
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if c.cfg.Retention > 0 {
			if n, err := c.GCOnce(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("gc", "err", err, "jobs", n)
			}
		}
		if c.cfg.RecordRetention > 0 {
			if n, err := c.store.TrimIndex(ctx, time.Now().Add(-c.cfg.RecordRetention), c.cfg.Retention > 0); err != nil && ctx.Err() == nil {
				c.log.Warn("gc: trim job index", "err", err)
			} else if n > 0 {
				c.log.Info("gc: dropped expired jobs from the index", "jobs", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// GCOnce collects the jobs past retention now and returns how many.
func (c *Coordinator) GCOnce(ctx context.Context) (int, error) {
	ids, err := c.store.finishedBefore(ctx, time.Now().Add(-c.cfg.Retention), 100)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if err := c.collect(ctx, id); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// collect deletes one finished job's objects (but a succeeded job's
// result) and drops it from the index.
func (c *Coordinator) collect(ctx context.Context, job string) error {
	if shuffle.ValidateJobID(job) != nil {
		return c.store.unmarkFinished(ctx, job)
	}
	state, _, err := c.store.JobState(ctx, job)
	if err != nil {
		return err
	}
	if state != "" && !state.Terminal() {
		return c.store.unmarkFinished(ctx, job) // running again? not ours to collect
	}
	prefix := shuffle.JobPrefix(c.cfg.Prefix, job)
	objs, err := c.bucket.List(ctx, prefix)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	if state == StateSucceeded {
		refs, _, err := c.store.ResultObjects(ctx, job)
		if err != nil {
			return err
		}
		for _, r := range refs {
			keep[r.Key] = true
		}
	}
	var del []string
	for _, o := range objs {
		if !keep[o.Key] {
			del = append(del, o.Key)
		}
	}
	for len(del) > 0 {
		n := min(len(del), 1000)
		if err := c.bucket.Delete(ctx, del[:n]...); err != nil {
			return err
		}
		del = del[n:]
	}
	if state != "" {
		_ = c.store.MarkCollected(ctx, job, time.Now())
	}
	c.metrics.GCJobs.Inc()
	c.metrics.GCObjects.Inc()
	c.log.Info("gc: deleted the objects of a finished job", "job", job, "state", state)
	return c.store.unmarkFinished(ctx, job)
}
