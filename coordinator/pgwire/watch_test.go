package pgwire

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// TestWatchConn: bytes come through in order, and the peer closing the
// connection calls gone (while nobody reads) and ends reads with an error.
func TestWatchConn(t *testing.T) {
	client, server := net.Pipe()
	gone := make(chan struct{})
	w := watchConn(context.Background(), server, func() { close(gone) })
	go func() {
		_, _ = client.Write([]byte("hello "))
		_, _ = client.Write([]byte("world"))
		client.Close()
	}()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("gone not called after the peer closed")
	}
	got, err := io.ReadAll(w)
	if string(got) != "hello world" || err != nil {
		t.Fatalf("read %q, %v", got, err)
	}
	if _, err := w.Read(make([]byte, 1)); err == nil {
		t.Fatal("read after the end succeeded")
	}
}
