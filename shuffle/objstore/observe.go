package objstore

import (
	"context"
	"io"
	"sync/atomic"
)

// Observed is a bucket whose failed requests are reported to a hook (the
// coordinator's sluice_s3_errors_total): metrics as a wrapper over any
// backend, instead of a hook on one backend's type. The hook travels in
// the context of each operation, as a Counter does, and the backend
// reports every failed request under it (reportError): the S3 backend
// every failed HTTP request attempt, retried or not. Operations cancelled
// by their caller are not reported.
type Observed struct {
	Bucket
	hook atomic.Pointer[func(op string)]
}

// Observe wraps b. Its hook is set later (OnError), so the bucket can be
// handed to the functions before the coordinator that owns the metrics
// exists.
func Observe(b Bucket) *Observed { return &Observed{Bucket: b} }

// OnError sets the function called with the operation ("GET", "PUT"...)
// of every failed request.
func (o *Observed) OnError(f func(op string)) { o.hook.Store(&f) }

// Unwrap implements Wrapper.
func (o *Observed) Unwrap() Bucket { return o.Bucket }

type errorHookKey struct{}

func (o *Observed) ctx(ctx context.Context) context.Context {
	if h := o.hook.Load(); h != nil {
		return context.WithValue(ctx, errorHookKey{}, *h)
	}
	return ctx
}

// reportError reports a failed request of op to the hook ctx carries.
func reportError(ctx context.Context, op string) {
	if ctx.Err() != nil {
		return
	}
	if h, ok := ctx.Value(errorHookKey{}).(func(op string)); ok {
		h(op)
	}
}

// Put implements Bucket.
func (o *Observed) Put(ctx context.Context, key string, data []byte) error {
	return o.Bucket.Put(o.ctx(ctx), key, data)
}

// PutReader implements Bucket.
func (o *Observed) PutReader(ctx context.Context, key string, r io.Reader, size int64) error {
	return o.Bucket.PutReader(o.ctx(ctx), key, r, size)
}

// NewUpload implements Streamer: the wrapped bucket's upload (see
// StartUpload), its failed requests reported.
func (o *Observed) NewUpload(ctx context.Context, key string) (Upload, error) {
	return StartUpload(o.ctx(ctx), o.Bucket, key)
}

// Get implements Bucket.
func (o *Observed) Get(ctx context.Context, key string) ([]byte, error) {
	return o.Bucket.Get(o.ctx(ctx), key)
}

// GetRange implements Bucket.
func (o *Observed) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	return o.Bucket.GetRange(o.ctx(ctx), key, off, n)
}

// GetRangeMatch implements MatchGetter when the wrapped bucket does (see
// GetRangeMatch for one that does not).
func (o *Observed) GetRangeMatch(ctx context.Context, key, etag string, off, n int64) ([]byte, error) {
	return GetRangeMatch(o.ctx(ctx), o.Bucket, key, etag, off, n)
}

// Stat implements Bucket.
func (o *Observed) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	return o.Bucket.Stat(o.ctx(ctx), key)
}

// List implements Bucket.
func (o *Observed) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	return o.Bucket.List(o.ctx(ctx), prefix)
}

// Delete implements Bucket.
func (o *Observed) Delete(ctx context.Context, keys ...string) error {
	return o.Bucket.Delete(o.ctx(ctx), keys...)
}

// DeletePrefix implements Bucket.
func (o *Observed) DeletePrefix(ctx context.Context, prefix string) error {
	return o.Bucket.DeletePrefix(o.ctx(ctx), prefix)
}

// EnsureBucket creates the bucket (EnsureBucket), its failures observed.
func (o *Observed) EnsureBucket(ctx context.Context) error {
	return EnsureBucket(o.ctx(ctx), o.Bucket)
}
