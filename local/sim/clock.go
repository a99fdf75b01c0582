// Package sim runs queries through the real planner, adaptive re-planner,
// coordinator, Redis store (a real redis-server) and scheduling loop, with
// two parts replaced by models behind the existing interfaces: a modelled
// FaaS platform (Platform, behind the Lambda invoker's HTTP client, so the
// real LambdaInvoker's throttling retries run) and a modelled object store
// (Store, an objstore.Bucket whose objects hold only their sizes). Tables
// are virtual (VirtualTPCH): their files, row groups and column statistics
// are synthesized for any scale factor. Simulated time runs Factor times
// faster than the wall clock (Clock); the coordinator's own timers are
// scaled with it (ScaleConfig), while its CPU and its Redis round trips are
// real and measured.
//
// The package is one concept, the simulation: its models only make sense
// together (a function's duration depends on the store's throttling, the
// store's request rates on the functions' timing, both on the clock).
package sim

import (
	"context"
	"time"

	"github.com/sluicedb/sluice/coordinator"
)

// Clock maps simulated time onto the wall clock: Factor simulated seconds
// pass per real second. It holds no mutable state after NewClock.
type Clock struct {
	Factor float64
	start  time.Time
}

// NewClock returns a clock whose simulated time starts now.
func NewClock(factor float64) *Clock {
	if factor <= 0 {
		factor = 1
	}
	return &Clock{Factor: factor, start: time.Now()}
}

// Now is the simulated time since the clock started.
func (c *Clock) Now() time.Duration {
	return time.Duration(float64(time.Since(c.start)) * c.Factor)
}

// Real is the wall-clock duration of simulated duration d.
func (c *Clock) Real(d time.Duration) time.Duration {
	return time.Duration(float64(d) / c.Factor)
}

// Sim is the simulated duration of wall-clock duration d.
func (c *Clock) Sim(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.Factor)
}

// Sleep waits simulated duration d (d/Factor of real time).
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(c.Real(d))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ScaleConfig returns cfg with the coordinator's timers (leases, retry
// backoff, task deadlines, hedging delays, the runtime-filter hold) scaled
// to the clock: a timer of d simulated time fires after d/Factor real
// time, so the coordinator behaves as it would at full scale while the
// functions' durations are compressed. The coordinator's CPU work and its
// Redis round trips are not scaled: they take their real time, which
// overstates their share of a simulated run by Factor.
//
// realFloor bounds the timers that give up on an attempt (the task
// deadline's floor, TaskTimeout) and the lease from below in real time:
// an attempt's real latency includes the coordinator's own uncompressed
// work (its CPU per task times the attempts in flight, over the cores),
// which at a high factor and thousands of attempts in flight exceeds the
// scaled deadline although nothing is lost. Only a lost invocation waits
// for the deadline in the models (a crash answers with a function
// error), so the floor changes no modelled outcome; it makes a lost
// attempt be noticed later (realFloor of real time).
func (c *Clock) ScaleConfig(cfg coordinator.Config, realFloor time.Duration) coordinator.Config {
	s := func(d *time.Duration) {
		if *d > 0 {
			*d = max(c.Real(*d), time.Millisecond)
		}
	}
	floor := func(d *time.Duration) {
		if *d > 0 {
			*d = max(*d, realFloor)
		}
	}
	// Leases are renewed by real work (Redis round trips): scaling them
	// below a few seconds would let a busy coordinator lose its own job.
	if c.Real(cfg.LeaseTTL) < 3*time.Second {
		cfg.LeaseTTL = 3 * time.Second
	} else {
		s(&cfg.LeaseTTL)
	}
	floor(&cfg.LeaseTTL)
	s(&cfg.RetryBackoff)
	s(&cfg.TaskTimeout)
	s(&cfg.TaskDeadlineFloor)
	floor(&cfg.TaskTimeout)
	floor(&cfg.TaskDeadlineFloor)
	s(&cfg.HedgeAfter)
	s(&cfg.RuntimeFilterWait)
	// The outage budget is measured in real time between commits, which
	// the coordinator's own (uncompressed) work stretches as it does an
	// attempt's latency: 3 min at x100 is 1.8 s, shorter than the gaps
	// between commits of a process given a sixth of a core, and throttled
	// attempts (429s past the invoker's retries) then counted against
	// tasks' retry budgets (SL200 at SF 1,000, 3,000 slots, account 1,000).
	s(&cfg.OutageBudget)
	floor(&cfg.OutageBudget)
	if cfg.MaxJobs > 0 {
		// A queued job's admission polls (1 s apart at most, real) would
		// add up to 100 s of simulated queueing at x100.
		if cfg.AdmitPollMax <= 0 {
			cfg.AdmitPollMax = time.Second
		}
		s(&cfg.AdmitPollMax)
	}
	if cfg.TaskBytesPerSecond > 0 {
		cfg.TaskBytesPerSecond = int64(float64(cfg.TaskBytesPerSecond) * c.Factor)
	}
	return cfg
}

// RealFloor is the default real-time floor of the deadlines for conc
// attempts in flight: 40 ms of real time per attempt in flight per core,
// at least 30 s (1 min at 3,000 on 2 cores). At SF 1,000 the coordinator
// spends 2.3-3.3 ms of CPU per task; with 3,000 attempts in flight on a
// shared 2-core machine an attempt's real latency reached 15 s (q18 and
// q21 failed with SL201 under a 10 ms rule), so the floor keeps a
// margin of about 4.
func RealFloor(conc, cores int) time.Duration {
	return max(30*time.Second, time.Duration(conc)*40*time.Millisecond/time.Duration(max(cores, 1)))
}
