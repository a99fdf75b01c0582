package tests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicedb/sluice/coordinator"
)

// lockedBuffer is a bytes.Buffer safe to read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestFaultHungStoreShown: the object store hangs in the middle of a job
// (it accepts requests and never answers). `sluice submit`, piped, says
// so on stderr ("waiting: object store not answering for Ns") within
// seconds, the API's status says the same while it lasts, and once the
// store answers again the job finishes with DuckDB's answer and the
// notice is gone.
func TestFaultHungStoreShown(t *testing.T) {
	r := newRig(t, rigOptions{proxy: true})
	co := r.startCoordinator(t)
	cl := co.client()
	q, want := queryByName(t, r.db, "q05")

	var stderr lockedBuffer
	var stdout bytes.Buffer
	cmd := exec.Command(sluiceBin(t), "submit", "--coordinator", co.URL, "--format", "csv", "--", q.sql)
	cmd.Env = append(os.Environ(), r.env...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		r.proxy.resume()
		_ = cmd.Process.Kill()
	})
	jobRE := regexp.MustCompile(`job ([0-9]{8}-[0-9]{6}-[0-9a-f]{8})`)
	var job string
	for deadline := time.Now().Add(time.Minute); job == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := jobRE.FindStringSubmatch(stderr.String()); m != nil {
			job = m[1]
		}
	}
	if job == "" {
		t.Fatalf("submit printed no job: %s", stderr.String())
	}
	if !r.waitCommits(t, job, 2) {
		t.Skip("the job finished before the store could hang")
	}
	r.proxy.hangAll()
	hung := time.Now()
	const notice = "waiting: object store not answering for "
	var shown time.Duration
	var apiSaid string
	for deadline := hung.Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if apiSaid == "" {
			if js, err := cl.Status(context.Background(), job); err == nil && strings.Contains(js.Waiting, notice) {
				apiSaid = js.Waiting
			}
		}
		if shown == 0 && strings.Contains(stderr.String(), notice) {
			shown = time.Since(hung)
		}
		if shown > 0 && apiSaid != "" {
			break
		}
	}
	if shown == 0 || apiSaid == "" {
		t.Fatalf("with the store hung for 30s: submit's stderr %q, the API's waiting %q; want %q", stderr.String(), apiSaid, notice)
	}
	if shown > 10*time.Second {
		t.Errorf("submit said the store was not answering %v after it hung, want within 10s", shown)
	}
	time.Sleep(2 * time.Second) // the count goes on
	r.proxy.resume()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("submit: %v\n%s", err, stderr.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("submit did not finish after the store came back: %s", stderr.String())
	}
	js, err := cl.Status(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if js.State != coordinator.StateSucceeded || js.Waiting != "" {
		t.Fatalf("after the store came back: %s, waiting %q", js.State, js.Waiting)
	}
	compareRows(t, fetch(t, cl, job), want, q.ordered)
	t.Logf("shown by submit %v after the store hung; API: %q; stderr:\n%s", shown.Round(100*time.Millisecond), apiSaid, stderr.String())
}
