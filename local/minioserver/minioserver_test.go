package minioserver

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func live(endpoint string) bool {
	c := &http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + endpoint + "/minio/health/live")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func requireBinary(t *testing.T) {
	t.Helper()
	if _, err := FindBinary(); err != nil {
		t.Fatalf("%v", err)
	}
}

func TestStartRestartStop(t *testing.T) {
	requireBinary(t)
	ctx := context.Background()
	s, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if !strings.HasPrefix(s.Endpoint, "127.0.0.1:") {
		t.Fatalf("endpoint %q not on loopback", s.Endpoint)
	}
	if s.AccessKey == "" || len(s.SecretKey) < 8 {
		t.Fatalf("keys not generated: %q %q", s.AccessKey, s.SecretKey)
	}
	if !live(s.Endpoint) {
		t.Fatal("server not live after Start")
	}
	pid := s.cmd.Process.Pid
	// Own process group.
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Fatalf("pgid=%d err=%v, want own group %d", pgid, err, pid)
	}
	// Data written before a restart survives it (same dir, same port).
	marker := filepath.Join(s.Dir, "marker-bucket")
	if err := os.Mkdir(marker, 0o755); err != nil {
		t.Fatal(err)
	}
	endpoint := s.Endpoint
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Endpoint != endpoint || !live(s.Endpoint) {
		t.Fatalf("after restart endpoint %s live=%v", s.Endpoint, live(s.Endpoint))
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("old process %d still running after Restart", pid)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("data dir lost on restart: %v", err)
	}

	s.Kill()
	if live(endpoint) {
		t.Fatal("live after Kill")
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	pid = s.cmd.Process.Pid
	dir := s.Dir
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil { // idempotent
		t.Fatal(err)
	}
	if live(endpoint) {
		t.Fatal("still live after Stop")
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("process %d still running after Stop", pid)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("temp dir %s not removed: %v", dir, err)
	}
	if err := s.Restart(ctx); err == nil {
		t.Fatal("Restart after Stop succeeded")
	}
}

func TestCallerDirKept(t *testing.T) {
	requireBinary(t)
	dir := t.TempDir()
	s, err := Start(context.Background(), Options{Dir: dir, AccessKey: "sluiceuser", SecretKey: "sluicesecret"})
	if err != nil {
		t.Fatal(err)
	}
	if s.AccessKey != "sluiceuser" || s.SecretKey != "sluicesecret" {
		t.Fatal("keys not taken from options")
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("caller's dir removed: %v", err)
	}
}

func TestStartFailureLeavesNothing(t *testing.T) {
	// A "binary" that runs but never serves: Start must time out, kill it
	// and report the binary and its log.
	dir := t.TempDir()
	bin := filepath.Join(dir, "fake-minio")
	script := "#!/bin/sh\necho fake server starting $@\necho $$ > " + filepath.Join(dir, "pid") + "\nexec sleep 60\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), Options{Bin: bin, StartTimeout: 700 * time.Millisecond})
	if err == nil {
		t.Fatal("Start of a non-serving binary succeeded")
	}
	if !strings.Contains(err.Error(), bin) || !strings.Contains(err.Error(), "fake server starting") {
		t.Fatalf("error does not name binary and log: %v", err)
	}
	b, rerr := os.ReadFile(filepath.Join(dir, "pid"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	var pid int
	for _, c := range strings.TrimSpace(string(b)) {
		pid = pid*10 + int(c-'0')
	}
	time.Sleep(50 * time.Millisecond)
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("process %d left running after failed Start", pid)
	}

	// A binary that exits at once fails fast with its output.
	bad := filepath.Join(dir, "exits")
	os.WriteFile(bad, []byte("#!/bin/sh\necho boom >&2\nexit 3\n"), 0o755)
	start := time.Now()
	_, err = Start(context.Background(), Options{Bin: bad})
	if err == nil || !strings.Contains(err.Error(), "boom") || time.Since(start) > 5*time.Second {
		t.Fatalf("exiting binary: err=%v after %v", err, time.Since(start))
	}
}

func TestFindBinary(t *testing.T) {
	t.Setenv(EnvBinary, "/nonexistent/minio")
	if _, err := FindBinary(); err == nil || !strings.Contains(err.Error(), "minio binary not found") {
		t.Fatalf("err = %v", err)
	}
	t.Setenv(EnvBinary, "")
	requireBinary(t)
}

// TestDied: a process ended by someone else is reported on Died (with how
// it ended); ends by Kill, Restart and Stop are not.
func TestDied(t *testing.T) {
	requireBinary(t)
	ctx := context.Background()
	s, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.Died():
		t.Fatalf("Died after Restart and Kill: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	pid := s.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.Died():
		if !strings.Contains(err.Error(), "ended unexpectedly") || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("Died says %q", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a SIGKILLed server was not reported on Died")
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.Died():
		t.Fatalf("Died after Stop: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
}
