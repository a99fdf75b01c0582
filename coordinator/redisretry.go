package coordinator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrRedisUnavailable is returned when Redis stayed unreachable for longer
// than the store's Outage bound. A driver meeting it stops driving the job
// without touching its state (it cannot): the job stays running in Redis
// and a coordinator takes it over once Redis is back.
var ErrRedisUnavailable = errors.New("redis unavailable")

// retry runs f until it succeeds, fails for a reason other than Redis
// being unreachable, ctx is done, or s.Outage has passed since the first
// failure. Every Lua transition is safe to run twice (commit recognizes its
// own attempt; a repeated start only skips an attempt number), which a
// retry after a lost reply may do.
func (s *Store) retry(ctx context.Context, op string, f func() error) error {
	var first time.Time
	backoff := 50 * time.Millisecond
	for {
		err := f()
		if err == nil {
			return nil
		}
		if s.observe != nil && !errors.Is(err, redis.Nil) {
			s.observe(op, err)
		}
		if !RedisTransient(err) || ctx.Err() != nil {
			return err
		}
		if first.IsZero() {
			first = time.Now()
		}
		if time.Since(first) > s.Outage {
			return fmt.Errorf("%s: %w for %v: %w", op, ErrRedisUnavailable, s.Outage, err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// RedisTransient reports whether err means Redis is (for now) unreachable
// or not ready, rather than that the command itself failed: connection
// refused or reset, timeouts, a server loading its data, a replica that is
// not writable yet, a cluster reconfiguring.
func RedisTransient(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, redis.ErrClosed) {
		return false
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, redis.ErrPoolTimeout) {
		return true
	}
	msg := err.Error()
	for _, p := range []string{"LOADING", "READONLY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "BUSY"} {
		if strings.HasPrefix(msg, p+" ") || msg == p {
			return true
		}
	}
	for _, p := range []string{"connection refused", "connection reset", "broken pipe", "i/o timeout", "use of closed network connection"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
