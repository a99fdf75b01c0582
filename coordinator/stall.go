package coordinator

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// A hung object store (it accepts connections and never answers) fails no
// task until the task deadline: without a word the job's clients would
// show "running, stages 0/2" for minutes. So while a job makes no
// progress (no task committed for stallQuiet), its driver asks the
// coordinator how long the object store has gone unanswered; past
// stallShow it shows "waiting: object store not answering for 12s" in the
// job record's "stalled" field (Status joins it into Waiting), updated
// each second and removed once the store answers or a task commits.
const (
	stallQuiet      = time.Second      // no commit for this long: look at the store
	stallShow       = 3 * time.Second  // a probe unanswered this long is shown
	stallTick       = time.Second      // how often the driver looks
	storeProbeEvery = 2 * time.Second  // at most one probe this often per coordinator
	storeProbeLimit = 30 * time.Second // a probe is abandoned after this (another starts)
)

// stallFormat is the job record's "stalled" field.
const stallFormat = "waiting: object store not answering for %ds"

// storeWatch tracks whether the coordinator's bucket answers: one probe
// (a LIST of the readiness probe prefix, as /readyz) at a time, shared by
// every job the coordinator drives, and only while one of them asks.
type storeWatch struct {
	mu      sync.Mutex
	probing bool      // a probe is in flight
	silent  time.Time // since when no probe has answered (zero: the last one did)
	last    time.Time // when the last probe ended
}

// storeSilence returns how long the object store has not answered the
// coordinator's probes (0 while it answers), starting a probe when none
// is in flight and the last ended more than storeProbeEvery ago.
func (c *Coordinator) storeSilence() time.Duration {
	w := &c.stores
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if !w.probing && now.Sub(w.last) >= storeProbeEvery {
		w.probing = true
		if w.silent.IsZero() {
			w.silent = now
		}
		go c.probeStore()
	}
	if w.probing || !w.silent.IsZero() {
		return now.Sub(w.silent)
	}
	return 0
}

// probeStore lists the readiness probe prefix and records the outcome.
func (c *Coordinator) probeStore() {
	ctx, cancel := context.WithTimeout(c.ctx, storeProbeLimit)
	_, err := c.bucket.List(ctx, joinKey(c.cfg.Prefix, readyProbePrefix))
	cancel()
	w := &c.stores
	w.mu.Lock()
	defer w.mu.Unlock()
	w.probing, w.last = false, time.Now()
	if err == nil {
		w.silent = time.Time{}
	}
}

// watchStall shows on run's job that it waits for a hung object store,
// while it does (see stallFormat); it returns when ctx ends.
func (c *Coordinator) watchStall(ctx context.Context, run *jobRun) {
	t := time.NewTicker(stallTick)
	defer t.Stop()
	shown := ""
	show := func(msg string) {
		if msg == shown {
			return
		}
		shown = msg
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if msg == "" {
			_ = c.store.rdb.HDel(wctx, kJob(run.id), "stalled").Err()
			return
		}
		_ = c.store.rdb.HSet(wctx, kJob(run.id), "stalled", msg).Err()
	}
	defer show("")
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(time.Unix(0, run.progress.Load())) < stallQuiet {
			show("")
			continue
		}
		if d := c.storeSilence(); d >= stallShow {
			show(fmt.Sprintf(stallFormat, int(d.Seconds())))
		} else {
			show("")
		}
	}
}

// progressed records that one of run's tasks committed now.
func (run *jobRun) progressed() { run.progress.Store(time.Now().UnixNano()) }
