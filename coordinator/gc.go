package coordinator

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/redisdb"
	"github.com/sluicedb/sluice/shuffle"
)

// markFinished indexes a job that just reached a terminal state for GC.
// (Not atomic with the state change: the keys live in different hash
// slots. A coordinator dying in between leaves the job's objects to a
// manual `sluice shuffle` clean-up.)
func (s *Store) markFinished(ctx context.Context, job string, at time.Time) error {
	return s.retry(ctx, "index finished job", func() error {
		return s.rdb.ZAdd(ctx, redisdb.FinishedKey, redis.Z{Score: float64(at.UnixMilli()), Member: job}).Err()
	})
}

// finishedBefore returns up to n finished jobs that finished before t.
func (s *Store) finishedBefore(ctx context.Context, t time.Time, n int64) ([]string, error) {
	var out []string
	err := s.retry(ctx, "list finished jobs", func() (err error) {
		out, err = s.rdb.ZRangeByScore(ctx, redisdb.FinishedKey, &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatInt(t.UnixMilli(), 10), Count: n}).Result()
		return err
	})
	return out, err
}

// GC deletes, every GCInterval, the shuffle objects and plan fragments of
// jobs that finished (succeeded, failed or cancelled) more than Retention
// ago, and the objects of attempts that lost or were abandoned. The
// committed result objects of a succeeded job are kept. It returns when ctx
// is done; with Retention 0 it returns at once (objects are kept).
// Several coordinators may run it: deletions are idempotent.
func (c *Coordinator) GC(ctx context.Context) {
	if c.cfg.Retention <= 0 {
		return
	}
	every := c.cfg.GCInterval
	if every <= 0 {
		every = min(max(c.cfg.Retention/2, time.Second), time.Minute)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if n, err := c.GCOnce(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("gc", "err", err, "jobs", n)
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
		return c.store.rdb.ZRem(ctx, redisdb.FinishedKey, job).Err()
	}
	state, err := c.store.rdb.HGet(ctx, kJob(job), "state").Result()
	if err != nil && err != redis.Nil {
		return err
	}
	if state != "" && !Terminal(state) {
		return c.store.rdb.ZRem(ctx, redisdb.FinishedKey, job).Err() // running again? not ours to collect
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
		_ = c.store.rdb.HSet(ctx, kJob(job), "collected", time.Now().UTC().Format(time.RFC3339Nano)).Err()
	}
	c.metrics.GCJobs.Inc()
	c.metrics.GCObjects.Inc()
	c.log.Info("gc: deleted the objects of a finished job", "job", job, "state", state)
	return c.store.rdb.ZRem(ctx, redisdb.FinishedKey, job).Err()
}
