package sim

import (
	"context"
	"net"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// redisLoad is a go-redis hook that counts this process's Redis round
// trips in flight: issued and not yet answered, whether they still wait
// for one of the pool's connections or are on the wire (a pipeline is one
// round trip). Its peak is what the coordinator queued on the shared
// client at once: past the pool's size, every other caller's command
// (another job's driver) waits behind the queue. A new connection's
// handshake (HELLO) runs through the hooks inside the command that dialled
// it and counts as one more. Safe for concurrent use.
type redisLoad struct {
	n, peak atomic.Int64
}

func (h *redisLoad) enter() {
	n := h.n.Add(1)
	for {
		p := h.peak.Load()
		if n <= p || h.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (h *redisLoad) leave() { h.n.Add(-1) }

// inFlight is the round trips in flight now.
func (h *redisLoad) inFlight() int64 { return h.n.Load() }

// takePeak returns the most round trips in flight at once since the last
// call (or since the hook was added) and starts the next period at the
// number in flight now.
func (h *redisLoad) takePeak() int64 { return h.peak.Swap(h.n.Load()) }

func (h *redisLoad) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return next(ctx, network, addr)
	}
}

func (h *redisLoad) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.enter()
		defer h.leave()
		return next(ctx, cmd)
	}
}

func (h *redisLoad) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.enter()
		defer h.leave()
		return next(ctx, cmds)
	}
}
