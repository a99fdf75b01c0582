package coordinator

import (
	"context"

	"github.com/sluicedb/sluice/function/redisdb"
)

// ErrRedisUnavailable is returned when Redis stayed unreachable for longer
// than the store's Outage bound (it is redisdb.ErrUnavailable). A driver
// meeting it stops driving the job without touching its state (it cannot):
// the job stays running in Redis and a coordinator takes it over once
// Redis is back.
var ErrRedisUnavailable = redisdb.ErrUnavailable

// retry runs f with the store's outage bound (see redisdb.Retry). Every Lua
// transition is safe to run twice (commit recognizes its own attempt; a
// repeated start only skips an attempt number), which a retry after a lost
// reply may do.
func (s *Store) retry(ctx context.Context, op string, f func() error) error {
	return redisdb.Retry{Outage: s.Outage, Observe: s.observe}.Do(ctx, op, f)
}
