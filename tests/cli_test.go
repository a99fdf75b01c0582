package tests

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildSluice builds the sluice binary once per test binary.
func buildSluice(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sluice")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/sluice")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build sluice: %v\n%s", err, out)
	}
	return bin
}

// leftovers lists processes whose command line names dir: the CLI runs
// with TMPDIR=dir, so every MinIO it starts keeps its data under dir.
func leftovers(t *testing.T, dir string) string {
	out, _ := exec.Command("pgrep", "-af", dir).Output()
	return strings.TrimSpace(string(out))
}

func runCLI(t *testing.T, bin, tmpDir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(append(os.Environ(), "TMPDIR="+tmpDir), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// TestCLI runs `sluice local query` as a user would: a good query prints
// CSV with a header; bad input exits non-zero with a clear message on
// stderr, never a panic, and leaves no process running.
func TestCLI(t *testing.T) {
	bin := buildSluice(t)
	dir := dataDir(t, *sfFlag)
	tmp := t.TempDir()

	out, errOut, code := runCLI(t, bin, tmp, nil, "local", "query", "--data", dir, "--format", "csv",
		"select n_regionkey, count(*) as n from nation group by n_regionkey order by n_regionkey")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"n_regionkey", "n"}, {"0", "5"}, {"1", "5"}, {"2", "5"}, {"3", "5"}, {"4", "5"}}
	if len(recs) != len(want) || strings.Join(recs[0], ",") != "n_regionkey,n" || strings.Join(recs[5], ",") != "4,5" {
		t.Fatalf("csv output:\n%s", out)
	}

	cases := []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"malformed SQL", nil, []string{"local", "query", "--data", dir, "select l_orderkey form lineitem"}, []string{"SL001", "position", "LINE 1: select l_orderkey form lineitem\n" + strings.Repeat(" ", 31) + "^"}},
		{"unknown table", nil, []string{"local", "query", "--data", dir, "select * from nosuch"}, []string{"SL002", "nosuch"}},
		{"unknown column", nil, []string{"local", "query", "--data", dir, "select l_nosuch from lineitem"}, []string{"SL003", "l_nosuch", "LINE 1: select l_nosuch"}},
		{"type mismatch", nil, []string{"local", "query", "--data", dir, "select count(*) from lineitem where l_shipdate = 5"}, []string{"SL004", "date"}},
		{"bad cast (run time, not retried)", nil, []string{"local", "query", "--data", dir, "select cast(l_comment as integer) from lineitem"}, []string{"SL101", "cannot cast string", "stage"}},
		{"unreachable redis", nil, []string{"local", "query", "--data", dir, "--redis", "redis://127.0.0.1:1", "select 1 from nation"}, []string{"redis", "127.0.0.1:1"}},
		{"unreachable S3", []string{"SLUICE_S3_ENDPOINT=127.0.0.1:1"}, []string{"shuffle", "ls", "somejob"}, []string{"127.0.0.1:1"}},
		{"missing data dir", nil, []string{"local", "query", "--data", filepath.Join(dir, "nope"), "select 1"}, []string{"nope"}},
		{"no SQL", nil, []string{"local", "query", "--data", dir}, []string{"no SQL"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, bin, tmp, c.env, c.args...)
			if code == 0 {
				t.Fatalf("exit 0, want an error")
			}
			if strings.Contains(errOut, "panic") || strings.Contains(errOut, "goroutine ") {
				t.Fatalf("panicked:\n%s", errOut)
			}
			// An error with a position is followed by the statement's line
			// and a caret (psql's LINE n:); the error itself is one line.
			msg := strings.TrimSpace(errOut)
			if i := strings.Index(msg, "\nLINE "); i >= 0 {
				if ctx := strings.Split(msg[i+1:], "\n"); len(ctx) != 2 || strings.TrimSpace(ctx[1]) != "^" {
					t.Fatalf("error context is not a line and a caret:\n%s", errOut)
				}
				msg = msg[:i]
			}
			if lines := strings.Count(msg, "\n") + 1; lines > 2 {
				t.Fatalf("want one clear error line, got %d:\n%s", lines, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Fatalf("stderr does not name %q:\n%s", w, errOut)
				}
			}
		})
	}
	if left := leftovers(t, tmp); left != "" {
		t.Fatalf("processes left running:\n%s", left)
	}
}
