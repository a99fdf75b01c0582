package function

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// GCPercent is the garbage collector's growth target TuneGC sets where the
// process's memory is known. Task memory is short-lived batches over a
// small live heap; at Go's default of 100 the collector ran every few MiB
// allocated and took about a tenth of the CPU of a TPC-H run. The memory
// limit, not the growth target, then bounds the heap.
const GCPercent = 400

// TuneGC sets the process's garbage collector for running tasks in
// limitBytes of memory: a soft memory limit at nine tenths of it, and the
// growth target GCPercent, so the heap may grow to five times what is live
// while it stays under the limit. It does nothing when limitBytes is not
// positive (without a limit a larger growth target could pass the memory
// the platform gives), and leaves settings the user made through GOGC or
// GOMEMLIMIT alone. It returns a function restoring the previous settings.
//
// It is meant for a process's main (the function binary, the embedded
// stack's command), never for a library.
func TuneGC(limitBytes int64) (restore func()) {
	if limitBytes <= 0 {
		return func() {}
	}
	prevLimit, prevPercent := int64(-1), -1
	if os.Getenv("GOMEMLIMIT") == "" {
		prevLimit = debug.SetMemoryLimit(limitBytes / 10 * 9)
	}
	if os.Getenv("GOGC") == "" {
		prevPercent = debug.SetGCPercent(GCPercent)
	}
	return func() {
		if prevLimit >= 0 {
			debug.SetMemoryLimit(prevLimit)
		}
		if prevPercent >= 0 {
			debug.SetGCPercent(prevPercent)
		}
	}
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
