package redisdb

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

// ErrUnavailable is returned when Redis stayed unreachable for longer than
// a Retry's Outage bound. It carries the error code SL203
// (store_unavailable, registered in planner/plan/codes.go, which this
// package may not import), so an outage reaching a user is coded.
var ErrUnavailable error = unavailable{}

// unavailable is ErrUnavailable's type: comparable, so errors.Is matches
// the sentinel by value.
type unavailable struct{}

func (unavailable) Error() string     { return "redis unavailable" }
func (unavailable) ErrorCode() string { return "SL203" }

// Retry is how long, and how, an operation waits for an unreachable Redis.
type Retry struct {
	// Outage bounds the wait from the first failure; past it the operation
	// fails with ErrUnavailable.
	Outage time.Duration
	// Observe, when set, sees every Redis error an operation met (retried
	// or not, redis.Nil excepted), for metrics.
	Observe func(op string, err error)
}

// Do runs f until it succeeds, fails for a reason other than Redis being
// unreachable (see Transient), ctx is done, or r.Outage has passed since
// the first failure. f must be safe to run twice: a retry after a lost
// reply runs it again.
func (r Retry) Do(ctx context.Context, op string, f func() error) error {
	var first time.Time
	backoff := 50 * time.Millisecond
	for {
		err := f()
		if err == nil {
			return nil
		}
		if r.Observe != nil && !errors.Is(err, redis.Nil) {
			r.Observe(op, err)
		}
		if !Transient(err) || ctx.Err() != nil {
			return err
		}
		if first.IsZero() {
			first = time.Now()
		}
		if time.Since(first) > r.Outage {
			return fmt.Errorf("%s: %w for %v: %w", op, ErrUnavailable, r.Outage, err)
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

// NoClientRetries is the go-redis Options.MaxRetries for a client the
// coordinator's store uses: go-redis would otherwise send a command again
// by itself after a connection broke, and a state transition script that
// had run before the break (its reply lost as Redis was killed) would run
// twice and be refused the second time ("stage_finish refused: stage is
// done") without the store knowing it had retried. The store's Retry
// retries instead, and takes a refusal that names the target state after
// a transient error as the success it is.
const NoClientRetries = -1

// Transient reports whether err means Redis is (for now) unreachable or
// not ready, rather than that the command itself failed: connection
// refused or reset, timeouts, a server loading its data, a replica that is
// not writable yet, a cluster reconfiguring. An error that already wraps
// ErrUnavailable has spent its outage budget and is not transient, so a
// Retry around another Retry does not wait twice.
func Transient(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, redis.ErrClosed) || errors.Is(err, ErrUnavailable) {
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
