package function

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
)

// GCPercent is the garbage collector's growth target TuneGC sets where the
// process's memory is known. Task memory is short-lived batches over a
// small live heap; at Go's default of 100 the collector ran every few MiB
// allocated and took about a tenth of the CPU of a TPC-H run. The memory
// limit, not the growth target, then bounds the heap.
const GCPercent = 400

// TuneGC sets the process's garbage collector for running tasks in
// limitBytes of memory: a soft memory limit at nine tenths of it, and a
// growth target of GCPercent of what the tasks hold, so the heap may grow
// to five times that while its goal stays within 0.8 of the limit (after
// every collection: gcPercentFor). held, when not nil, reports memory the
// process keeps across tasks without pointers in it (the range cache of
// table bytes), which the target then does not multiply. It does
// nothing when limitBytes is not positive (without a limit a larger
// growth target could pass the memory the platform gives), and leaves
// settings the user made through GOGC or GOMEMLIMIT alone. It returns a
// function restoring the previous settings.
//
// It is meant for a process's main (the function binary, the embedded
// stack's command), never for a library.
func TuneGC(limitBytes int64, held func() int64) (restore func()) {
	if limitBytes <= 0 {
		return func() {}
	}
	prevLimit, prevPercent := int64(-1), -1
	soft := limitBytes / 10 * 9
	if os.Getenv("GOMEMLIMIT") == "" {
		prevLimit = debug.SetMemoryLimit(soft)
	} else {
		soft = 0 // the user's limit: the tuner leaves the goal to it
	}
	var tuner *gcTuner
	if os.Getenv("GOGC") == "" {
		prevPercent = debug.SetGCPercent(GCPercent)
		if held == nil {
			held = func() int64 { return 0 }
		}
		tuner = &gcTuner{held: held, limit: soft, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
		tuner.arm()
	}
	return func() {
		if tuner != nil {
			tuner.stop()
		}
		if prevLimit >= 0 {
			debug.SetMemoryLimit(prevLimit)
		}
		if prevPercent >= 0 {
			debug.SetGCPercent(prevPercent)
		}
	}
}

// gcTaskFloor is the least task heap gcPercentFor assumes: a process
// whose live heap is nearly all held memory still gets four times this of
// headroom, not a collection every few MiB.
const gcTaskFloor = 64 << 20

// gcPercentFor is the growth target that gives a live heap of live bytes,
// held of them kept across tasks, GCPercent of the rest (at least
// gcTaskFloor) as headroom: held memory is not multiplied.
//
// Why: the range cache (session 26) is live heap, hundreds of MiB of it
// in a warm process, and at a fixed 400% the collector let the heap grow
// to five times the cache before collecting. Every run that reached a
// new high paid the kernel a first-touch fault per page: TPC-H Q3 at
// SF 1 took 0.46-0.5 s in runs that stayed under the last high and
// 1.1-1.4 s in those that passed it (90 k faults, 0.8 s of system CPU).
// The cache's bytes cost the collector almost nothing to mark (no
// pointers), so collecting more often is cheap; what 400% was for
// (session 20: a small live heap collected every few MiB) stays.
//
// Below the memory limit: when limit (the soft memory limit TuneGC set;
// 0: none) is known, the target also keeps the heap's goal within
// gcGoalShare of it. A goal at the limit itself (where GCPercent alone
// puts a large live heap) leaves the runtime's scavenger, which holds the
// process's memory under 95% of the limit, returning freed pages to the
// kernel while the heap grows back into them: TPC-H Q18 at SF 10 on four
// 512 MiB functions released 4.6 GB (3 GB of it eagerly, on allocation)
// and took 1.77 M page faults and 45 s of system CPU in a 62 s run.
func gcPercentFor(live, held, limit int64) int {
	if live <= 0 {
		return GCPercent
	}
	pct := GCPercent
	if held > 0 {
		if task := max(live-held, gcTaskFloor); task < live {
			pct = max(int(int64(GCPercent)*task/live), 1)
		}
	}
	if limit > 0 {
		room := int64(float64(limit)*gcGoalShare) - live
		pct = min(pct, max(int(100*room/live), gcMinPercent))
	}
	return pct
}

// gcGoalShare is the share of the soft memory limit gcPercentFor keeps the
// heap's goal within, and gcMinPercent the least target it sets when the
// live heap leaves less room than that (the limit then bounds the heap).
const (
	gcGoalShare  = 0.8
	gcMinPercent = 10
)

// gcTuner sets the growth target after every collection (gcPercentFor):
// a finalizer on a sentinel object runs after each cycle and arms itself
// again, as the gctuner libraries do.
type gcTuner struct {
	held   func() int64
	limit  int64            // the soft memory limit, 0 when the user set it
	sample []metrics.Sample // only the finalizer goroutine reads it

	// mu makes stop wait for a collection's setting in flight, so the
	// settings TuneGC's restore puts back are the last.
	mu      sync.Mutex
	stopped bool
}

// gcSentinel is the object whose finalizer marks a collection: larger
// than the tiny allocator's 16 bytes, whose objects may never be
// finalized.
type gcSentinel struct {
	_ [4]*int
}

func (g *gcTuner) arm() { runtime.SetFinalizer(&gcSentinel{}, g.onGC) }

func (g *gcTuner) onGC(s *gcSentinel) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	metrics.Read(g.sample)
	if g.sample[0].Value.Kind() == metrics.KindUint64 {
		debug.SetGCPercent(gcPercentFor(int64(g.sample[0].Value.Uint64()), g.held(), g.limit))
	}
	runtime.SetFinalizer(s, g.onGC)
}

func (g *gcTuner) stop() {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
}

// MemoryLimit returns the memory this process may use, as the platform
// tells it: AWS Lambda's AWS_LAMBDA_FUNCTION_MEMORY_SIZE (MiB), else the
// cgroup v2 limit (memory.max) of a container; 0 when neither says.
func MemoryLimit() int64 {
	if v := os.Getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"); v != "" {
		if mb, err := strconv.ParseInt(v, 10, 64); err == nil && mb > 0 {
			return mb << 20
		}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 0
}
