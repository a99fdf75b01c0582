package coordinator

import (
	"context"
	"time"
)

// Recover watches Redis for running jobs that no coordinator drives (their
// lease expired: the coordinator died or was partitioned away) and carries
// them on from the state Redis holds. It returns when ctx is done.
func (c *Coordinator) Recover(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		c.recoverOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (c *Coordinator) recoverOnce(ctx context.Context) {
	ids, err := c.store.Orphans(ctx)
	if err != nil {
		c.log.Warn("recovery: list running jobs", "err", err)
		return
	}
	for _, id := range ids {
		if c.Driving(id) {
			continue
		}
		c.log.Info("recovery: taking over job", "job", id)
		c.metrics.JobsTakenOver.Inc()
		c.Go(id)
	}
}
