package function

import (
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/sluicedb/sluice/function/exec"
)

// SpillLimitEnv names the environment variable that sets a function's
// spill limit in bytes (Runtime.SpillLimit) explicitly.
const SpillLimitEnv = exec.SpillLimitEnvName

// SpillLimitFor returns the spill limit of one task of a function process
// that runs tasks at once: SLUICE_SPILL_LIMIT when set, otherwise nine
// tenths of the space free in dir (the spill directory; "" is
// os.TempDir(), a Lambda's /tmp sized by its ephemeral storage) divided
// among the tasks. A limit it cannot determine is 0 (DefaultSpillLimit).
func SpillLimitFor(dir string, tasks int) (int64, error) {
	if v := os.Getenv(SpillLimitEnv); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%s=%q: want a positive number of bytes", SpillLimitEnv, v)
		}
		return n, nil
	}
	if dir == "" {
		dir = os.TempDir()
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, nil
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	return max(free/10*9/int64(max(tasks, 1)), 1), nil
}
