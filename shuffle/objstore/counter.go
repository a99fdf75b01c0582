package objstore

import (
	"context"
	"sync/atomic"
)

// Counter counts the requests and bytes of the operations whose context
// carries it (WithCounter): the cost of one task or one job's driver,
// whatever bucket serves them. The S3 bucket counts HTTP requests (retries
// and multipart parts included) as its RequestStats do; the in-memory
// bucket counts one request per call.
type Counter struct {
	get, put, list, del, head, other, read, written atomic.Int64
}

type counterKey struct{}

// WithCounter returns ctx carrying c: operations under it add to c (the
// nearest counter only; one set further up no longer counts them).
func WithCounter(ctx context.Context, c *Counter) context.Context {
	return context.WithValue(ctx, counterKey{}, c)
}

func counterFrom(ctx context.Context) *Counter {
	if ctx == nil {
		return nil
	}
	c, _ := ctx.Value(counterKey{}).(*Counter)
	return c
}

// Snapshot returns what c counted so far.
func (c *Counter) Snapshot() RequestStats {
	return RequestStats{
		Get: c.get.Load(), Put: c.put.Load(), List: c.list.Load(), Delete: c.del.Load(),
		Head: c.head.Load(), Other: c.other.Load(), BytesRead: c.read.Load(), BytesWritten: c.written.Load(),
	}
}

// Add adds r to c.
func (c *Counter) Add(r RequestStats) {
	c.get.Add(r.Get)
	c.put.Add(r.Put)
	c.list.Add(r.List)
	c.del.Add(r.Delete)
	c.head.Add(r.Head)
	c.other.Add(r.Other)
	c.read.Add(r.BytesRead)
	c.written.Add(r.BytesWritten)
}

// count adds one request of verb (and its bytes) to ctx's counter.
func count(ctx context.Context, r RequestStats) {
	if c := counterFrom(ctx); c != nil {
		c.Add(r)
	}
}
