package local

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluicedb/sluice/local/minioserver"
)

// syncBuffer is a bytes.Buffer safe for a logger and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStackNoticesMinIODeath: when the stack's MinIO is killed by someone
// else, the stack says so at once and starts it again on the same port and
// data folder, so what was written before is still there.
func TestStackNoticesMinIODeath(t *testing.T) {
	if _, err := minioserver.FindBinary(); err != nil {
		t.Skipf("no MinIO binary: %v", err)
	}
	ctx := context.Background()
	var logs syncBuffer
	opts := DefaultOptions()
	opts.Functions = 1
	opts.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Bucket.Put(ctx, "before/kill", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(st.MinIO.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(logs.String(), "embedded MinIO is back") {
		if time.Now().After(deadline) {
			t.Fatalf("MinIO not restarted; logs:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "embedded MinIO died") {
		t.Fatalf("death not reported; logs:\n%s", logs.String())
	}
	got, err := st.Bucket.Get(ctx, "before/kill")
	if err != nil || string(got) != "kept" {
		t.Fatalf("object written before the kill: %q, %v", got, err)
	}
}
