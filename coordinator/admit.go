package coordinator

import (
	"context"
	"time"
)

// Admission control (Config.MaxJobs): a job submitted while MaxJobs jobs
// run is created queued, and its driver holds its lease and waits here
// until the admission script (lua/admission.lua) lets it in: first come,
// first served, across every coordinator on the Redis. A queued job
// starts no stage and invokes no function; it can be cancelled while it
// waits. Fair sharing (dispatch.go) then divides the concurrency among
// the jobs admitted, so a big job neither holds every slot nor keeps a
// small one out of the running set for long.

// admitPoll is the first wait between admission attempts of a queued
// job; it doubles up to admitPollMax (Config.AdmitPollMax when set).
const (
	admitPoll    = 50 * time.Millisecond
	admitPollMax = time.Second
)

// admitJob returns once job runs: at once for a job created running (or
// admitted by a driver before this one), after its admission for a
// queued one. It returns errCancelled when the job was cancelled while
// queued.
func (c *Coordinator) admitJob(ctx context.Context, job string, fence int64) error {
	most := admitPollMax
	if c.cfg.AdmitPollMax > 0 {
		most = c.cfg.AdmitPollMax
	}
	wait := min(admitPoll, most)
	logged := false
	for {
		m, err := c.store.Job(ctx, job)
		if err != nil {
			return err
		}
		if m.State != StateQueued {
			return nil
		}
		ok, err := c.store.Admit(ctx, job, fence, c.cfg.MaxJobs)
		if err != nil || ok {
			return err
		}
		if cancelled, err := c.store.Cancelled(ctx, job); err != nil || cancelled {
			if err != nil {
				return err
			}
			return errCancelled
		}
		if !logged {
			pos, _ := c.store.QueuePosition(ctx, job)
			c.log.Info("job queued: admission control holds it", "job", job, "position", pos, "max_jobs", c.cfg.MaxJobs)
			logged = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, most)
	}
}
