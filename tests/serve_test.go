package tests

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicedb/sluice/local/minioserver"
	"github.com/sluicedb/sluice/local/redisserver"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// startProc starts the sluice binary with args and waits for a line
// containing "http://" on stdout, returning the URL it names.
func startProc(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	return startWithEnv(t, bin, append(os.Environ(), env...), 30*time.Second, args...)
}

// startWithEnv runs bin with args and exactly env, in a process group
// stopped at the test's end, and returns the first URL it prints on stdout
// within wait.
func startWithEnv(t *testing.T, bin string, env []string, wait time.Duration, args ...string) string {
	t.Helper()
	p, out := launch(t, bin, launchOptions{env: env, stderr: os.Stderr, stop: syscall.SIGTERM}, args...)
	u, ok := p.waitURL(out, wait)
	if !ok {
		t.Fatalf("%v did not start", args)
	}
	return u
}

// TestServices runs sluice as separate services: a real redis-server, MinIO,
// two `sluice function serve` processes and a `sluice coordinator serve`
// invoking them over HTTP; tables are registered with `sluice tables add`
// and queries submitted with `sluice submit`, checked against DuckDB.
func TestServices(t *testing.T) {
	bin := buildSluice(t)
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	ctx := context.Background()
	rs, err := redisserver.Start(ctx)
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	t.Cleanup(rs.Stop)
	ms, err := minioserver.Start(ctx, minioserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ms.Stop() })
	env := []string{"SLUICE_S3_ENDPOINT=" + ms.Endpoint, "SLUICE_S3_BUCKET=sluice",
		"AWS_ACCESS_KEY_ID=" + ms.AccessKey, "AWS_SECRET_ACCESS_KEY=" + ms.SecretKey,
		"SLUICE_REDIS_URL=" + rs.URL}
	b, err := objstore.Open(ctx, objstore.Config{S3: objstore.S3Config{Endpoint: ms.Endpoint, AccessKey: ms.AccessKey,
		SecretKey: ms.SecretKey, Bucket: "sluice", Region: "us-east-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := objstore.EnsureBucket(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"lineitem", "orders", "nation"} {
		files, _ := filepath.Glob(filepath.Join(dir, table, "*.parquet"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Put(ctx, "warehouse/"+table+"/"+filepath.Base(f), data); err != nil {
				t.Fatal(err)
			}
		}
		if _, errOut, code := runCLI(t, bin, t.TempDir(), env, "tables", "add", table, "s3://sluice/warehouse/"+table+"/"); code != 0 {
			t.Fatalf("tables add %s: %s", table, errOut)
		}
	}
	f1 := startProc(t, bin, env, "function", "serve", "--addr", "127.0.0.1:0")
	f2 := startProc(t, bin, env, "function", "serve", "--addr", "127.0.0.1:0")
	co := startProc(t, bin, env, "coordinator", "serve", "--addr", "127.0.0.1:0",
		"--function-url", f1, "--function-url", f2, "--functions", "4")
	env = append(env, "SLUICE_COORDINATOR="+co)

	out, errOut, code := runCLI(t, bin, t.TempDir(), env, "tables", "show", "lineitem")
	if code != 0 || !strings.Contains(out, "l_shipdate") {
		t.Fatalf("tables show: %s %s", out, errOut)
	}
	for _, q := range []query{singleTable[0], singleTable[1], singleTable[2]} {
		t.Run(q.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, bin, t.TempDir(), env, "submit", "--format", "csv", q.sql)
			if code != 0 {
				t.Fatalf("submit: %s", errOut)
			}
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			want := duckRows(t, db, q.sql)
			var got []row
			for _, r := range recs[1:] {
				gr := make(row, len(r))
				for i, v := range r {
					gr[i] = parseCell(v)
				}
				got = append(got, gr)
			}
			compareRows(t, got, want, q.ordered)
		})
	}
}

// parseCell turns CSV text back into a comparable value: numbers become
// float64, the empty field NULL, anything else stays text.
func parseCell(v string) any {
	if v == "" {
		return nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && isNumber(v) {
		return f
	}
	return v
}

func isNumber(v string) bool {
	for i, c := range v {
		if !(c >= '0' && c <= '9' || c == '.' || (c == '-' && i == 0)) {
			return false
		}
	}
	return true
}
