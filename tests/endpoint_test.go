package tests

import (
	"bufio"
	"encoding/csv"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLocalStartExports runs `sluice local start`, pastes the export
// lines it prints into the environment of `sluice coordinator serve` and
// queries that coordinator (through `sluice submit`, with the coordinator
// URL given without its scheme), checked against DuckDB. The S3 endpoint
// is also given as --s3-endpoint with and without its scheme (without one
// it once meant TLS on the command line and plain HTTP in
// SLUICE_S3_ENDPOINT: "server gave HTTP response to HTTPS client").
func TestLocalStartExports(t *testing.T) {
	bin := sluiceBin(t)
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	_, out := launch(t, bin, launchOptions{env: cleanEnv(), stop: syscall.SIGINT}, "local", "start", "--data", dir, "--functions", "2")
	exports := map[string]string{}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
			if sc.Text() == "ready" {
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	timeout := time.After(2 * time.Minute)
wait:
	for {
		select {
		case line, ok := <-lines:
			if !ok || line == "ready" {
				break wait
			}
			if rest, ok := strings.CutPrefix(line, "export "); ok {
				for _, kv := range strings.Fields(rest) {
					k, v, _ := strings.Cut(kv, "=")
					exports[k] = v
				}
			}
		case <-timeout:
			t.Fatal("local start is not ready")
		}
	}
	for _, k := range []string{"SLUICE_COORDINATOR", "SLUICE_S3_ENDPOINT", "SLUICE_S3_BUCKET", "AWS_ACCESS_KEY_ID",
		"AWS_SECRET_ACCESS_KEY", "SLUICE_REDIS_URL", "SLUICE_PG_USER", "SLUICE_PG_PASSWORD"} {
		if exports[k] == "" {
			t.Fatalf("local start exports no %s: %v", k, exports)
		}
	}
	s3 := exports["SLUICE_S3_ENDPOINT"]
	bare := strings.TrimPrefix(s3, "http://")
	q := `select n_regionkey, count(*) as n from nation group by 1 order by 1`
	want := duckRows(t, db, q)
	for _, c := range []struct {
		name string
		drop string // an export left out
		args []string
	}{
		{name: "exports"},
		{name: "flag without scheme", drop: "SLUICE_S3_ENDPOINT", args: []string{"--s3-endpoint", bare}},
		{name: "flag with scheme", drop: "SLUICE_S3_ENDPOINT", args: []string{"--s3-endpoint", s3}},
		{name: "env without scheme"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := cleanEnv()
			for k, v := range exports {
				if k != c.drop {
					if c.name == "env without scheme" && k == "SLUICE_S3_ENDPOINT" {
						v = bare
					}
					env = append(env, k+"="+v)
				}
			}
			co := startWithEnv(t, bin, env, 30*time.Second, append([]string{"coordinator", "serve", "--addr", "127.0.0.1:0"}, c.args...)...)
			subEnv := []string{"SLUICE_COORDINATOR=" + strings.TrimPrefix(co, "http://")}
			stdout, stderr, code := runCLI(t, bin, t.TempDir(), subEnv, "submit", "--format", "csv", q)
			if code != 0 {
				t.Fatalf("submit: %s", stderr)
			}
			recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
			if err != nil || len(recs) == 0 {
				t.Fatalf("submit output %q: %v", stdout, err)
			}
			fields := make([][]*string, 0, len(recs)-1)
			for _, r := range recs[1:] {
				fs := make([]*string, len(r))
				for j := range r {
					fs[j] = &r[j]
				}
				fields = append(fields, fs)
			}
			compareRows(t, typedLike(fields, want), want, true)
		})
	}
}

// cleanEnv is the test's environment without the sluice and AWS
// settings it may carry.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLUICE_") || strings.HasPrefix(kv, "SLUICE_MINIO_BIN=") {
			if !strings.HasPrefix(kv, "AWS_") {
				env = append(env, kv)
			}
		}
	}
	return env
}
