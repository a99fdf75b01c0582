package tests

import (
	"context"
	"encoding/csv"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestLocalQueryUnderLoad runs `sluice local query` 20 times while other
// processes keep every core busy, as on a shared CI machine or a laptop
// building something else: each run starts the embedded MinIO, Redis and
// functions afresh, so a deadline that assumed a quiet machine (the bucket
// created before MinIO was ready) shows here. Every run must succeed with
// the right answer (the known TPC-H nation counts). Part of make test-long.
func TestLocalQueryUnderLoad(t *testing.T) {
	bin := sluiceBin(t)
	dir := dataDir(t, *sfFlag)
	tmp := t.TempDir()

	// Busy loops in other processes: two per core.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for i := 0; i < 2*runtime.NumCPU(); i++ {
		cmd := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go cmd.Wait() //nolint:errcheck // killed by the context at the end
	}

	want := [][]string{{"n_regionkey", "n"}, {"0", "5"}, {"1", "5"}, {"2", "5"}, {"3", "5"}, {"4", "5"}}
	var times []string
	for i := 0; i < 20; i++ {
		start := time.Now()
		out, errOut, code := runCLI(t, bin, tmp, nil, "local", "query", "--data", dir, "--format", "csv",
			"select n_regionkey, count(*) as n from nation join region on n_regionkey = r_regionkey group by n_regionkey order by n_regionkey")
		times = append(times, fmt.Sprintf("%.1fs", time.Since(start).Seconds()))
		if code != 0 {
			t.Fatalf("run %d of 20: exit %d under load:\n%s", i+1, code, errOut)
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, out)
		}
		if fmt.Sprint(recs) != fmt.Sprint(want) {
			t.Fatalf("run %d: got %v, want %v", i+1, recs, want)
		}
	}
	t.Logf("20/20 runs succeeded under %d busy processes; times %s", 2*runtime.NumCPU(), strings.Join(times, " "))
	if left := leftovers(t, tmp); left != "" {
		t.Fatalf("processes left running:\n%s", left)
	}
}
