package redisdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestKeys pins the key names: they are a storage format shared by
// coordinators, functions and the catalog of different versions.
func TestKeys(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{JobsKey, "sluice:jobs"},
		{FinishedKey, "sluice:finished"},
		{CatalogKey, "sluice:catalog"},
		{JobKey("j1"), "sluice:{j1}:job"},
		{FenceKey("j1"), "sluice:{j1}:fence"},
		{LeaseKey("j1"), "sluice:{j1}:lease"},
		{StageKey("j1", 3), "sluice:{j1}:stage:3"},
		{TaskKey("j1", 3, 12), "sluice:{j1}:task:3:12"},
		{RoundsKey("j1"), "sluice:{j1}:rounds"},
		{CancelKey("j1"), "sluice:{j1}:cancel"},
		{LimitKey("j1", 4), "sluice:{j1}:limit:4"},
		{JobKeys("j1"), "sluice:{j1}:*"},
	} {
		if c.got != c.want {
			t.Errorf("key %q, want %q", c.got, c.want)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

var _ net.Error = timeoutErr{}

func TestTransient(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{redis.Nil, false},
		{redis.ErrClosed, false},
		{context.Canceled, false},
		{errors.New("ERR wrong number of arguments"), false},
		{errors.New("STALE_FENCE"), false},
		{timeoutErr{}, true},
		{io.EOF, true},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{errors.New("LOADING Redis is loading the dataset in memory"), true},
		{errors.New("READONLY You can't write against a read only replica."), true},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), true},
		// Spent budget: an outer Retry must not wait again.
		{fmt.Errorf("op: %w for 1s: %w", ErrUnavailable, io.EOF), false},
	} {
		if got := Transient(c.err); got != c.want {
			t.Errorf("Transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestRetry(t *testing.T) {
	ctx := context.Background()
	t.Run("succeeds after transient failures", func(t *testing.T) {
		n, seen := 0, 0
		r := Retry{Outage: time.Minute, Observe: func(string, error) { seen++ }}
		err := r.Do(ctx, "op", func() error {
			if n++; n < 3 {
				return io.EOF
			}
			return nil
		})
		if err != nil || n != 3 || seen != 2 {
			t.Errorf("err %v after %d calls, %d observed; want nil after 3, 2 observed", err, n, seen)
		}
	})
	t.Run("command error is not retried", func(t *testing.T) {
		n := 0
		cmdErr := errors.New("ERR syntax")
		err := Retry{Outage: time.Minute}.Do(ctx, "op", func() error { n++; return cmdErr })
		if !errors.Is(err, cmdErr) || n != 1 {
			t.Errorf("err %v after %d calls, want the command error after 1", err, n)
		}
	})
	t.Run("outage past the bound", func(t *testing.T) {
		n := 0
		err := Retry{Outage: 120 * time.Millisecond}.Do(ctx, "op", func() error { n++; return io.EOF })
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, io.EOF) || n < 2 {
			t.Errorf("err %v after %d calls, want ErrUnavailable wrapping io.EOF after >= 2", err, n)
		}
	})
	t.Run("nested retries do not wait twice", func(t *testing.T) {
		inner, outer := 0, 0
		err := Retry{Outage: time.Hour}.Do(ctx, "outer", func() error {
			outer++
			return Retry{Outage: 100 * time.Millisecond}.Do(ctx, "inner", func() error { inner++; return io.EOF })
		})
		if !errors.Is(err, ErrUnavailable) || outer != 1 {
			t.Errorf("err %v, outer ran %d times; want ErrUnavailable after 1", err, outer)
		}
	})
}
