package tests

import (
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local/minioserver"
	"github.com/sluicedb/sluice/local/redisserver"
)

// coordinatorImage is what infra/Dockerfile.coordinator says: the build
// command of its build stage, its ENV, ENTRYPOINT and CMD.
type coordinatorImage struct {
	buildEnv, buildArgs []string // CGO_ENABLED=1; go build's flags before -o
	env                 []string
	argv                []string // ENTRYPOINT + CMD
}

func readCoordinatorDockerfile(t *testing.T) coordinatorImage {
	t.Helper()
	b, err := os.ReadFile("../infra/Dockerfile.coordinator")
	if err != nil {
		t.Fatal(err)
	}
	var img coordinatorImage
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "RUN ") && strings.Contains(line, " go build "):
			m := regexp.MustCompile(`^RUN ((?:[A-Z_]+=\S+ )*)go build (.*) -o /out/sluice \./cmd/sluice$`).FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("unexpected build line %q", line)
			}
			img.buildEnv = strings.Fields(m[1])
			// The flags as the shell splits them: single quotes group.
			for _, f := range regexp.MustCompile(`'[^']*'|\S+`).FindAllString(m[2], -1) {
				img.buildArgs = append(img.buildArgs, strings.Trim(f, "'"))
			}
		case strings.HasPrefix(line, "ENV "):
			img.env = append(img.env, strings.TrimPrefix(line, "ENV "))
		case strings.HasPrefix(line, "ENTRYPOINT "), strings.HasPrefix(line, "CMD "):
			_, arr, _ := strings.Cut(line, " ")
			var parts []string
			if err := json.Unmarshal([]byte(arr), &parts); err != nil {
				t.Fatalf("%s: want the exec form: %v", line, err)
			}
			img.argv = append(img.argv, parts...)
		}
	}
	if len(img.buildArgs) == 0 || len(img.argv) < 2 || img.argv[0] != "/sluice" {
		t.Fatalf("Dockerfile.coordinator: build %v, entrypoint %v", img.buildArgs, img.argv)
	}
	return img
}

// TestCoordinatorImageEntrypoint builds the sluice binary with the image's
// build command and runs the image's entrypoint and command with its
// environment, as the container would (only the listen port differs, to
// be free here), against a real Redis with AUTH and MinIO: without a
// token it refuses to listen on every interface; with one, /healthz and
// /readyz answer without the token, the API wants it, a query gets the
// right answer, and /readyz turns 503 when Redis goes away while /healthz
// stays 200.
func TestCoordinatorImageEntrypoint(t *testing.T) {
	img := readCoordinatorDockerfile(t)
	ctx := context.Background()
	rs, err := redisserver.StartWith(ctx, redisserver.Options{Password: "redis-pw"})
	if errors.Is(err, redisserver.ErrNotInstalled) && os.Getenv("CI") == "" {
		t.Skip("redis-server not installed; .ci/run installs it")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Stop()
	ms, err := minioserver.Start(ctx, minioserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ms.Stop() }()

	// SLUICE_COORDINATOR_IMAGE_BIN: a binary already built with the
	// image's command (the first static build recompiles everything).
	// The static build recompiles everything, the C SQL parser included
	// (minutes): `make test-deploy` does it (SLUICE_IMAGE_BUILD=1); `make
	// test` runs the same entrypoint on the test binary and leaves out the
	// static-link check.
	bin := os.Getenv("SLUICE_COORDINATOR_IMAGE_BIN")
	static := true
	if bin == "" && os.Getenv("SLUICE_IMAGE_BUILD") == "" {
		bin, static = sluiceBin(t), false
		t.Log("entrypoint run on the test build of sluice; SLUICE_IMAGE_BUILD=1 (make test-deploy) builds it with the image's command and checks it is static")
	}
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "sluice")
		build := exec.Command("go", append(append([]string{"build"}, img.buildArgs...), "-o", bin, "../cmd/sluice")...)
		build.Env = append(os.Environ(), img.buildEnv...)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("the image's build command: %v\n%s", err, out)
		}
	}
	// The runtime image is distroless/static: the binary must need no
	// dynamic loader.
	if static {
		ef, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ef.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("the coordinator binary is dynamically linked; the static runtime image cannot run it")
			}
		}
		ef.Close()
	}

	_, port, _ := net.SplitHostPort(freePort(t))
	var env []string
	for _, e := range img.env {
		if k, v, _ := strings.Cut(e, "="); k == "SLUICE_COORDINATOR_ADDR" {
			host, _, err := net.SplitHostPort(v)
			if err != nil || host != "0.0.0.0" {
				t.Fatalf("image listens on %q, want 0.0.0.0:PORT", v)
			}
			e = k + "=" + net.JoinHostPort(host, port)
		}
		env = append(env, e)
	}
	// What a deployment sets (infra/aws, infra/k8s): Redis, the bucket, credentials.
	env = append(env, "SLUICE_REDIS_URL="+rs.URL, "SLUICE_S3_ENDPOINT="+ms.Endpoint, "SLUICE_S3_BUCKET=sluice",
		"AWS_ACCESS_KEY_ID="+ms.AccessKey, "AWS_SECRET_ACCESS_KEY="+ms.SecretKey, "HOME="+t.TempDir())

	// Without a token the coordinator refuses a non-loopback address.
	noToken := exec.Command(bin, img.argv[1:]...)
	noToken.Env = env
	out, err := noToken.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "token") {
		t.Fatalf("started without a token on 0.0.0.0: %v\n%s", err, out)
	}

	const token = "entrypoint-token"
	url := startImage(t, bin, img.argv[1:], append(env, "SLUICE_TOKEN="+token))
	url = strings.Replace(url, "0.0.0.0", "127.0.0.1", 1)

	getCode := func(path, tok string) (int, string) {
		req, _ := http.NewRequest("GET", url+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		path, token string
		want        int
	}{{"/healthz", "", 200}, {"/readyz", "", 200}, {"/v1/jobs", "", 401}, {"/v1/jobs", "wrong", 401}, {"/v1/jobs", token, 200}} {
		if code, body := getCode(tc.path, tc.token); code != tc.want {
			t.Errorf("GET %s (token %q): %d %s, want %d", tc.path, tc.token, code, body, tc.want)
		}
	}
	_, body := getCode("/readyz", "")
	var rd coordinator.Readiness
	if err := json.Unmarshal([]byte(body), &rd); err != nil || !rd.Ready || rd.Redis != "ok" || rd.Bucket != "ok" {
		t.Errorf("/readyz body %s (%v)", body, err)
	}

	cl := coordinator.NewClient(url, token)
	rows := fetch(t, cl, submit(t, cl, "SELECT 40 + 2 AS answer, 'image' AS s"))
	if len(rows) != 1 || fmt.Sprint(rows[0]...) != fmt.Sprint(int64(42), "image") {
		t.Errorf("SELECT 40 + 2: %v, want [42 image]", rows)
	}

	rs.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := getCode("/readyz", "")
		if code == http.StatusServiceUnavailable {
			if err := json.Unmarshal([]byte(body), &rd); err != nil || rd.Ready || !strings.Contains(rd.Redis, "redis unreachable") || rd.Bucket != "ok" {
				t.Errorf("/readyz with Redis down: %s", body)
			}
			if strings.Contains(body, "redis-pw") {
				t.Error("/readyz shows the Redis password")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d with Redis stopped: %s", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, _ := getCode("/healthz", ""); code != 200 {
		t.Errorf("/healthz with Redis down: %d, want 200 (liveness must not depend on Redis)", code)
	}
}

// startImage runs bin with exactly env (no inherited environment, as in
// a container) and returns the URL it prints.
func startImage(t *testing.T, bin string, args, env []string) string {
	t.Helper()
	return startWithEnv(t, bin, env, 60*time.Second, args...)
}
