package objstore

import (
	"context"
	"fmt"
)

// The backends Open knows.
const (
	// BackendS3 is AWS S3, MinIO or any S3-compatible store (S3).
	BackendS3 = "s3"
	// BackendMem is a bucket in this process's memory (Mem): tests and
	// tools; nothing outlives the process.
	BackendMem = "mem"
)

// Config names one bucket: its backend and that backend's settings.
type Config struct {
	// Backend is BackendS3 ("" too) or BackendMem.
	Backend string
	// S3 configures BackendS3.
	S3 S3Config
	// MemName names a BackendMem bucket (its Name is "mem://MemName").
	MemName string
}

// ConfigFromEnv is an S3 bucket configured from the environment
// (S3ConfigFromEnv).
func ConfigFromEnv() Config { return Config{Backend: BackendS3, S3: S3ConfigFromEnv()} }

// Open returns a client of the bucket cfg names: the one factory of
// object-store clients, so a new backend is its implementation, its case
// here and its acceptance test (objstoretest). It does not touch the
// network; EnsureBucket creates a bucket that may not exist yet. Metrics
// are a wrapper over any backend (Observe).
func Open(ctx context.Context, cfg Config) (Bucket, error) {
	switch cfg.Backend {
	case "", BackendS3:
		return NewS3(ctx, cfg.S3)
	case BackendMem:
		return NewMem(cfg.MemName), nil
	}
	return nil, fmt.Errorf("objstore: unknown backend %q (want %s or %s)", cfg.Backend, BackendS3, BackendMem)
}

// Wrapper is a Bucket that wraps another (Observed, the coordinator's
// patient view): the capability helpers below look through it.
type Wrapper interface {
	Unwrap() Bucket
}

// capability returns the first bucket, b or one it wraps, that is a T.
func capability[T any](b Bucket) (T, bool) {
	for b != nil {
		if t, ok := b.(T); ok {
			return t, true
		}
		w, ok := b.(Wrapper)
		if !ok {
			break
		}
		b = w.Unwrap()
	}
	var zero T
	return zero, false
}

// EnsureBucket creates b's bucket if its backend has buckets to create
// and it does not exist yet (S3); on other backends it does nothing.
func EnsureBucket(ctx context.Context, b Bucket) error {
	if m, ok := capability[interface {
		EnsureBucket(context.Context) error
	}](b); ok {
		return m.EnsureBucket(ctx)
	}
	return nil
}

// StatsOf returns the requests b's client has made so far (S3: every
// HTTP request, retries included), and false for a backend that does not
// count them.
func StatsOf(b Bucket) (RequestStats, bool) {
	if s, ok := capability[interface{ Stats() RequestStats }](b); ok {
		return s.Stats(), true
	}
	return RequestStats{}, false
}

// Close releases b's idle connections, when its backend holds any.
func Close(b Bucket) error {
	if c, ok := capability[interface{ Close() error }](b); ok {
		return c.Close()
	}
	return nil
}
