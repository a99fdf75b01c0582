// Package objstore is sluice's view of an object store bucket: a small
// interface with stated guarantees, an S3 implementation (minio-go; AWS S3,
// MinIO and other S3-compatible stores), an in-memory implementation, a
// ranged-read io.ReaderAt over one object, and an acceptance test every
// implementation must pass.
//
// Keys are slash-separated paths without a leading slash (see ValidateKey).
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ErrNotFound is matched (errors.Is) by the error of Get, GetRange and Stat
// of a key that does not exist.
var ErrNotFound = errors.New("object not found")

// ErrInvalidKey is matched (errors.Is) by the *KeyError returned for a key
// or prefix that ValidateKey / ValidatePrefix reject.
var ErrInvalidKey = errors.New("invalid object key")

// ErrInvalidRange is matched by the error of GetRange when off is past the
// end of the object or off or n is negative.
var ErrInvalidRange = errors.New("invalid range")

// ErrChanged is matched by the error of a read of one version of an
// object (GetRangeMatch) when the object stored under the key is no longer
// that version: it was replaced since it was listed.
var ErrChanged = errors.New("object changed since it was listed")

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	Key  string
	Size int64
	// ETag names the version of the object (S3's entity tag, quotes
	// removed); "" when the store does not say. Two listings of a key
	// with equal ETags saw the same bytes.
	ETag string
}

// MatchGetter is a Bucket that reads a range of one version of an object:
// GetRangeMatch is GetRange, except that it fails with an error matching
// ErrChanged, and returns no bytes, when the object's ETag is not etag
// (S3's If-Match). Reads that must not mix the bytes of two versions (a
// Parquet file's footer and its pages, or a cache of ranges) use it.
type MatchGetter interface {
	GetRangeMatch(ctx context.Context, key, etag string, off, n int64) ([]byte, error)
}

// GetRangeMatch reads [off, off+n) of the version etag of key from b: with
// b's GetRangeMatch when it has one and etag is known, else with a plain
// GetRange (the version is then not checked).
func GetRangeMatch(ctx context.Context, b Bucket, key, etag string, off, n int64) ([]byte, error) {
	if m, ok := b.(MatchGetter); ok && etag != "" {
		return m.GetRangeMatch(ctx, key, etag, off, n)
	}
	return b.GetRange(ctx, key, off, n)
}

// Bucket is one bucket of an object store. Implementations are safe for
// concurrent use. Every method validates its keys (ValidateKey) and prefixes
// (ValidatePrefix) first and fails with a *KeyError without any request.
type Bucket interface {
	// Put stores data under key, replacing any previous object. It is
	// idempotent: putting the same bytes twice leaves the same object.
	// Once Put returns, Get, Stat and List see the object (read-after-write
	// consistency, as S3 provides).
	Put(ctx context.Context, key string, data []byte) error
	// PutReader stores size bytes read from r under key, like Put. A
	// negative size means unknown (the implementation may then buffer or
	// use a multipart upload). Fewer bytes than size is an error and no
	// object is created.
	PutReader(ctx context.Context, key string, r io.Reader, size int64) error
	// Get returns the whole object. A missing key gives an error matching
	// ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// GetRange returns the bytes [off, off+n) of the object, fewer when the
	// object ends first; n < 0 reads to the end. off equal to the size
	// returns no bytes; off past the end, or a negative off, gives an error
	// matching ErrInvalidRange. A missing key gives ErrNotFound.
	GetRange(ctx context.Context, key string, off, n int64) ([]byte, error)
	// Stat returns the object's size; a missing key gives ErrNotFound.
	Stat(ctx context.Context, key string) (ObjectInfo, error)
	// List returns every object whose key starts with prefix (a plain
	// string prefix, recursive: no delimiter), sorted by key (byte order).
	// An empty prefix lists the whole bucket. No match is an empty result,
	// not an error.
	List(ctx context.Context, prefix string) ([]ObjectInfo, error)
	// Delete removes the keys. Keys that do not exist are not an error.
	Delete(ctx context.Context, keys ...string) error
	// DeletePrefix removes every object whose key starts with prefix. The
	// prefix must not be empty (use a non-empty prefix to avoid wiping a
	// bucket by accident).
	DeletePrefix(ctx context.Context, prefix string) error
	// Name names the bucket (and backend) for messages, e.g. "s3://b".
	Name() string
}

// KeyError reports a key or prefix rejected by validation. It matches
// ErrInvalidKey.
type KeyError struct {
	Key    string
	Reason string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("invalid object key %q: %s", e.Key, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidKey) true.
func (e *KeyError) Is(target error) bool { return target == ErrInvalidKey }

// MaxKeyLen is the longest key accepted (S3's limit is 1024 bytes).
const MaxKeyLen = 1024

// ValidateKey checks an object key: not empty, at most MaxKeyLen bytes,
// valid UTF-8, no leading or trailing '/', no "..", no "//", no control
// characters.
func ValidateKey(key string) error {
	if key == "" {
		return &KeyError{Key: key, Reason: "empty"}
	}
	if strings.HasSuffix(key, "/") {
		return &KeyError{Key: key, Reason: "ends with '/'"}
	}
	return validate(key)
}

// ValidatePrefix checks a listing prefix: like ValidateKey, but it may be
// empty and may end with '/'.
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	return validate(prefix)
}

func validate(key string) error {
	switch {
	case len(key) > MaxKeyLen:
		return &KeyError{Key: key, Reason: fmt.Sprintf("longer than %d bytes", MaxKeyLen)}
	case strings.HasPrefix(key, "/"):
		return &KeyError{Key: key, Reason: "starts with '/'"}
	case strings.Contains(key, ".."):
		return &KeyError{Key: key, Reason: `contains ".."`}
	case strings.Contains(key, "//"):
		return &KeyError{Key: key, Reason: `contains "//"`}
	case !utf8.ValidString(key):
		return &KeyError{Key: key, Reason: "not valid UTF-8"}
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return &KeyError{Key: key, Reason: fmt.Sprintf("contains control character %U", r)}
		}
	}
	return nil
}
