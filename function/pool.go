package function

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/function/redisdb"
)

// Pool is the in-process invoker: it runs tasks on this process's Runtime
// through the same encoded TaskSpec and TaskResult a remote function gets
// (no shared-memory shortcut), with at most Size tasks at a time.
type Pool struct {
	rt          *Runtime
	sem         chan struct{}
	invocations atomic.Int64
}

// Invocations returns how many tasks the pool has run.
func (p *Pool) Invocations() int64 { return p.invocations.Load() }

// Size returns the number of tasks the pool runs at once.
func (p *Pool) Size() int { return cap(p.sem) }

// NewPool returns a pool of size concurrent functions.
func NewPool(rt *Runtime, size int) *Pool {
	if size < 1 {
		size = 1
	}
	return &Pool{rt: rt, sem: make(chan struct{}, size)}
}

// Invoke runs one encoded TaskSpec and returns the encoded TaskResult.
func (p *Pool) Invoke(ctx context.Context, spec []byte) ([]byte, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a free function: %w", ctx.Err())
	}
	defer func() { <-p.sem }()
	p.invocations.Add(1)
	// Copy the spec so the function cannot share memory with the caller.
	in := append([]byte(nil), spec...)
	return p.rt.Handle(ctx, in), nil
}

// RedisSignals reads job flags from Redis.
type RedisSignals struct{ RDB redis.UniversalClient }

// Cancelled reports whether job's cancel flag is set.
func (s RedisSignals) Cancelled(ctx context.Context, job string) (bool, error) {
	n, err := s.RDB.Exists(ctx, redisdb.CancelKey(job)).Result()
	return n > 0, err
}

// AddRows adds n to the counter key and returns its new value.
func (s RedisSignals) AddRows(ctx context.Context, key string, n int64) (int64, error) {
	return s.RDB.IncrBy(ctx, key, n).Result()
}
