package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// S3Config configures an S3 bucket. Endpoint is read the same way
// wherever it comes from (a flag, SLUICE_S3_ENDPOINT, code; see
// ResolveEndpoint): https://host[:port] is TLS, http://host[:port] plain
// HTTP, and host[:port] without a scheme is plain HTTP on a loopback host
// (localhost, 127.0.0.0/8, ::1: what `sluice local start` prints) and TLS
// on any other, unless UseSSL says otherwise. An empty Endpoint means AWS
// S3 (s3.amazonaws.com, TLS). Empty keys mean credentials from the
// environment (AWS_* variables, then the EC2/ECS/Lambda role).
type S3Config struct {
	Endpoint     string
	AccessKey    string
	SecretKey    string
	SessionToken string // optional (temporary credentials, e.g. on Lambda)
	Bucket       string
	Region       string // default "us-east-1" for non-AWS endpoints
	// UseSSL, when set, decides TLS for an Endpoint without a scheme
	// ($SLUICE_S3_SSL); a scheme always decides.
	UseSSL *bool

	// DialTimeout bounds connecting to the endpoint (default 5s), so an
	// unreachable endpoint fails in seconds, not minutes.
	DialTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for a response's headers once
	// the request is sent (default 30s), so a hung server fails too.
	ResponseHeaderTimeout time.Duration
	// Retry bounds the retries of transient failures; zero value: defaults.
	Retry RetryPolicy
	// PartSize is the multipart upload part size for large objects
	// (default: minio-go's choice, 16 MiB minimum).
	PartSize uint64
	// StreamPartSize is the part size of a streamed upload (NewUpload),
	// at least 5 MiB; default DefaultStreamPartSize.
	StreamPartSize int64
	// SignPayload, when set, signs every upload's body with SHA-256 (over
	// http minio-go then streams it as aws-chunked, hashing each chunk).
	// By default bodies are sent as UNSIGNED-PAYLOAD with a CRC32C
	// trailer the store checks (x-amz-checksum-crc32c): the request
	// headers stay signed, TLS protects the body over https, and the
	// shuffle checks its own xxh3 checksum of every partition on read.
	// Set it for a store that refuses unsigned payloads or trailers
	// ($SLUICE_S3_SIGN_PAYLOAD=true).
	SignPayload bool
}

// S3ConfigFromEnv reads SLUICE_S3_ENDPOINT, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, SLUICE_S3_BUCKET, AWS_REGION
// and SLUICE_S3_SSL (a bool for an endpoint without a scheme; when unset,
// ResolveEndpoint's rule). A command line flag that replaces Endpoint
// afterwards is read by the same rule.
func S3ConfigFromEnv() S3Config {
	cfg := S3Config{
		Endpoint:     os.Getenv("SLUICE_S3_ENDPOINT"),
		AccessKey:    os.Getenv("AWS_ACCESS_KEY_ID"),
		SecretKey:    os.Getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken: os.Getenv("AWS_SESSION_TOKEN"),
		Bucket:       os.Getenv("SLUICE_S3_BUCKET"),
		Region:       os.Getenv("AWS_REGION"),
	}
	cfg.SignPayload, _ = strconv.ParseBool(os.Getenv("SLUICE_S3_SIGN_PAYLOAD"))
	if v, ok := os.LookupEnv("SLUICE_S3_SSL"); ok && v != "" {
		ssl, _ := strconv.ParseBool(v)
		cfg.UseSSL = &ssl
	}
	return cfg
}

// ResolveEndpoint reads an S3 endpoint: its host[:port] and whether to use
// TLS. A scheme decides (http:// plain, https:// TLS; no other scheme, no
// path); without one, ssl decides when set, else the host does: plain
// HTTP on a loopback host (localhost, *.localhost, 127.0.0.0/8, ::1), TLS
// on any other, so that a remote store is never spoken to in clear text
// by accident (write http:// for a plain-HTTP store elsewhere). An empty
// endpoint is AWS S3 over TLS.
func ResolveEndpoint(endpoint string, ssl *bool) (host string, secure bool, err error) {
	if endpoint == "" {
		return "s3.amazonaws.com", true, nil
	}
	if strings.Contains(endpoint, "://") {
		u, err := url.Parse(endpoint)
		if err != nil {
			return "", false, fmt.Errorf("objstore: S3 endpoint %q: %w", endpoint, err)
		}
		switch u.Scheme {
		case "http":
			secure = false
		case "https":
			secure = true
		default:
			return "", false, fmt.Errorf("objstore: S3 endpoint %q: scheme must be http or https", endpoint)
		}
		if u.Path != "" && u.Path != "/" {
			return "", false, fmt.Errorf("objstore: S3 endpoint %q: must not have a path", endpoint)
		}
		if u.Host == "" {
			return "", false, fmt.Errorf("objstore: S3 endpoint %q: no host", endpoint)
		}
		return u.Host, secure, nil
	}
	host = strings.TrimSuffix(endpoint, "/")
	if strings.Contains(host, "/") {
		return "", false, fmt.Errorf("objstore: S3 endpoint %q: must not have a path", endpoint)
	}
	if ssl != nil {
		return host, *ssl, nil
	}
	return host, !Loopback(host), nil
}

// Loopback reports whether host[:port] names this machine: localhost (or
// a name under .localhost), an address in 127.0.0.0/8, or ::1.
func Loopback(hostport string) bool {
	h := hostport
	if sh, _, err := net.SplitHostPort(hostport); err == nil {
		h = sh
	}
	h = strings.ToLower(strings.Trim(h, "[]"))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// RetryPolicy bounds the retries of transient errors (5xx, 429, SlowDown,
// timeouts, connection resets). 4xx errors other than 408 and 429 are
// never retried.
type RetryPolicy struct {
	Attempts int           // total attempts, default 6 (backoffs add up to ~3s: a restarting store)
	Base     time.Duration // first backoff, default 100ms; doubles per attempt
	Max      time.Duration // backoff cap, default 2s
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Attempts <= 0 {
		p.Attempts = 6
	}
	if p.Base <= 0 {
		p.Base = 100 * time.Millisecond
	}
	if p.Max <= 0 {
		p.Max = 2 * time.Second
	}
	return p
}

// S3 is a Bucket on an S3-compatible store.
type S3 struct {
	client   *minio.Client
	core     minio.Core
	bucket   string
	endpoint string // scheme://host:port, for messages
	region   string
	retry    RetryPolicy
	partSize uint64
	// streamPartSize is S3Config.StreamPartSize.
	streamPartSize int64
	signBody       bool
	stats          *countingTransport
	tr             *http.Transport
	// reached is set once a request got an answer from the endpoint: from
	// then on an unreachable endpoint is an outage (retried in full), not
	// a wrong address (failed fast).
	reached atomic.Bool
}

var _ Bucket = (*S3)(nil)

// NewS3 returns an S3 bucket client. It does not touch the network.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("objstore: S3 bucket name is empty (set SLUICE_S3_BUCKET)")
	}
	if err := s3utils.CheckValidBucketNameStrict(cfg.Bucket); err != nil {
		return nil, fmt.Errorf("objstore: S3 bucket %q: %w", cfg.Bucket, err)
	}
	endpoint, secure, err := ResolveEndpoint(cfg.Endpoint, cfg.UseSSL)
	if err != nil {
		return nil, err
	}
	isAWS := strings.HasSuffix(endpoint, "amazonaws.com")
	region := cfg.Region
	if region == "" && !isAWS {
		region = "us-east-1" // no bucket-location round trip for MinIO & co.
	}
	var creds *credentials.Credentials
	if cfg.AccessKey != "" || cfg.SecretKey != "" {
		creds = credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken)
	} else {
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{}, &credentials.EnvMinio{}, &credentials.IAM{},
		})
	}
	dial := cfg.DialTimeout
	if dial <= 0 {
		dial = 5 * time.Second
	}
	tr, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, fmt.Errorf("objstore: %w", err)
	}
	tr.DialContext = (&net.Dialer{Timeout: dial, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = 30 * time.Second
	if cfg.ResponseHeaderTimeout > 0 {
		tr.ResponseHeaderTimeout = cfg.ResponseHeaderTimeout
	}
	tr.MaxIdleConnsPerHost = 64
	ct := &countingTransport{next: tr}
	client, err := minio.New(endpoint, &minio.Options{
		Creds:      creds,
		Secure:     secure,
		Region:     region,
		Transport:  ct,
		MaxRetries: 1, // we retry ourselves, bounded (see RetryPolicy)
		// A CRC32C trailer on unsigned uploads (see SignPayload): the
		// store verifies the body it received at the cost of a CRC.
		TrailingHeaders: !cfg.SignPayload,
	})
	if err != nil {
		return nil, fmt.Errorf("objstore: S3 endpoint %q: %w", cfg.Endpoint, err)
	}
	scheme := "http"
	if secure {
		scheme = "https"
	}
	return &S3{
		client:         client,
		core:           minio.Core{Client: client},
		bucket:         cfg.Bucket,
		endpoint:       scheme + "://" + endpoint,
		region:         region,
		retry:          cfg.Retry.withDefaults(),
		partSize:       cfg.PartSize,
		streamPartSize: cfg.StreamPartSize,
		signBody:       cfg.SignPayload,
		stats:          ct,
		tr:             tr,
	}, nil
}

// Name returns "s3://<bucket>".
func (s *S3) Name() string { return "s3://" + s.bucket }

// Endpoint returns the endpoint URL.
func (s *S3) Endpoint() string { return s.endpoint }

// Client returns the underlying minio-go client.
func (s *S3) Client() *minio.Client { return s.client }

// Stats returns the request counters so far (all attempts, retries
// included).
func (s *S3) Stats() RequestStats { return s.stats.snapshot() }

// Close releases idle connections.
func (s *S3) Close() error {
	s.tr.CloseIdleConnections()
	return nil
}

// EnsureBucket creates the bucket if it does not exist.
func (s *S3) EnsureBucket(ctx context.Context) error {
	return s.do(ctx, "create bucket", "", func(ctx context.Context) error {
		ok, err := s.client.BucketExists(ctx, s.bucket)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		err = s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: s.region})
		if code := minio.ToErrorResponse(err).Code; code == "BucketAlreadyOwnedByYou" || code == "BucketAlreadyExists" {
			return nil
		}
		return err
	})
}

// Put implements Bucket.
func (s *S3) Put(ctx context.Context, key string, data []byte) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	return s.do(ctx, "PUT", key, func(ctx context.Context) error {
		_, err := s.client.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), s.putOptions())
		return err
	})
}

// PutReader implements Bucket. The upload is retried only when r is an
// io.Seeker (it is rewound to its position at the call).
func (s *S3) PutReader(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	seeker, _ := r.(io.Seeker)
	var start int64
	if seeker != nil {
		var err error
		if start, err = seeker.Seek(0, io.SeekCurrent); err != nil {
			seeker = nil
		}
	}
	attempts := s.retry.Attempts
	if seeker == nil {
		attempts = 1 // the body cannot be sent again
	}
	attempt := 0
	return s.doN(ctx, "PUT", key, attempts, func(ctx context.Context) error {
		attempt++
		if attempt > 1 {
			if _, err := seeker.Seek(start, io.SeekStart); err != nil {
				return errNoRetry{err}
			}
		}
		info, err := s.client.PutObject(ctx, s.bucket, key, r, size, s.putOptions())
		if err == nil && size >= 0 && info.Size != size {
			return errNoRetry{fmt.Errorf("short upload: %d of %d bytes", info.Size, size)}
		}
		return err
	})
}

func (s *S3) putOptions() minio.PutObjectOptions {
	var sum minio.ChecksumType
	if !s.signBody {
		// Asked for explicitly: minio-go's automatic CRC is dropped on
		// single PUTs (v7.4.1 sees its own algorithm header and skips it).
		sum = minio.ChecksumCRC32C
	}
	return minio.PutObjectOptions{
		Checksum:    sum,
		ContentType: "application/octet-stream",
		PartSize:    s.partSize,
		NumThreads:  4,
		// No SHA-256 of the body (it cost a full pass over every upload,
		// per chunk over http): UNSIGNED-PAYLOAD plus minio-go's CRC32C
		// trailer. See S3Config.SignPayload.
		DisableContentSha256: !s.signBody,
	}
}

// Get implements Bucket.
func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	return s.get(ctx, key, minio.GetObjectOptions{})
}

// trimETag removes the quotes S3 puts around an ETag.
func trimETag(e string) string { return strings.Trim(e, `"`) }

// GetRange implements Bucket.
func (s *S3) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	return s.getRange(ctx, key, "", off, n)
}

// GetRangeMatch implements MatchGetter: the GET carries If-Match, which
// S3 answers with 412 Precondition Failed when the object's ETag differs.
func (s *S3) GetRangeMatch(ctx context.Context, key, etag string, off, n int64) ([]byte, error) {
	return s.getRange(ctx, key, etag, off, n)
}

func (s *S3) getRange(ctx context.Context, key, etag string, off, n int64) ([]byte, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	if off < 0 {
		return nil, fmt.Errorf("objstore: GET %s/%s: offset %d: %w", s.Name(), key, off, ErrInvalidRange)
	}
	if n == 0 {
		info, err := s.Stat(ctx, key)
		if err != nil {
			return nil, err
		}
		if off > info.Size {
			return nil, s.rangeErr(key, off, info.Size)
		}
		return []byte{}, nil
	}
	var opts minio.GetObjectOptions
	if etag != "" {
		if err := opts.SetMatchETag(etag); err != nil {
			return nil, fmt.Errorf("objstore: GET %s/%s: %w", s.Name(), key, err)
		}
	}
	switch {
	case n > 0:
		opts.SetRange(off, off+n-1)
	case off > 0:
		opts.SetRange(off, 0)
	}
	data, err := s.get(ctx, key, opts)
	if err != nil && errors.Is(err, ErrInvalidRange) {
		// S3 answers 416 for off >= size; off == size is an empty read.
		info, serr := s.Stat(ctx, key)
		if serr != nil {
			return nil, serr
		}
		if off == info.Size {
			return []byte{}, nil
		}
		return nil, s.rangeErr(key, off, info.Size)
	}
	return data, err
}

func (s *S3) rangeErr(key string, off, size int64) error {
	return fmt.Errorf("objstore: GET %s/%s: offset %d past end %d: %w", s.Name(), key, off, size, ErrInvalidRange)
}

func (s *S3) get(ctx context.Context, key string, opts minio.GetObjectOptions) ([]byte, error) {
	var out []byte
	err := s.do(ctx, "GET", key, func(ctx context.Context) error {
		body, info, _, err := s.core.GetObject(ctx, s.bucket, key, opts)
		if err != nil {
			return err
		}
		defer body.Close()
		if info.Size >= 0 {
			buf := make([]byte, info.Size)
			if _, err := io.ReadFull(body, buf); err != nil {
				return fmt.Errorf("reading body: %w", err)
			}
			out = buf
			return nil
		}
		buf, err := io.ReadAll(body)
		if err != nil {
			return fmt.Errorf("reading body: %w", err)
		}
		out = buf
		return nil
	})
	return out, err
}

// Stat implements Bucket.
func (s *S3) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	if err := ValidateKey(key); err != nil {
		return ObjectInfo{}, err
	}
	var out ObjectInfo
	err := s.do(ctx, "HEAD", key, func(ctx context.Context) error {
		info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
		if err != nil {
			return err
		}
		out = ObjectInfo{Key: key, Size: info.Size, ETag: trimETag(info.ETag)}
		return nil
	})
	return out, err
}

// List implements Bucket.
func (s *S3) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	var out []ObjectInfo
	err := s.do(ctx, "LIST", prefix, func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // stops minio-go's listing goroutine on early return
		out = out[:0]
		for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
			if obj.Err != nil {
				return obj.Err
			}
			if strings.HasSuffix(obj.Key, "/") && obj.Size == 0 {
				continue // a "directory marker", not an object of ours
			}
			out = append(out, ObjectInfo{Key: obj.Key, Size: obj.Size, ETag: trimETag(obj.ETag)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Delete implements Bucket.
func (s *S3) Delete(ctx context.Context, keys ...string) error {
	for _, k := range keys {
		if err := ValidateKey(k); err != nil {
			return err
		}
	}
	switch len(keys) {
	case 0:
		return nil
	case 1:
		return s.do(ctx, "DELETE", keys[0], func(ctx context.Context) error {
			err := s.client.RemoveObject(ctx, s.bucket, keys[0], minio.RemoveObjectOptions{})
			if minio.ToErrorResponse(err).Code == "NoSuchKey" {
				return nil
			}
			return err
		})
	}
	// Multi-object delete (1000 keys per request); retry the keys that
	// failed.
	pending := keys
	return s.do(ctx, "DELETE", fmt.Sprintf("%d keys", len(keys)), func(ctx context.Context) error {
		ch := make(chan minio.ObjectInfo, len(pending))
		for _, k := range pending {
			ch <- minio.ObjectInfo{Key: k}
		}
		close(ch)
		var failed []string
		var first error
		for r := range s.client.RemoveObjects(ctx, s.bucket, ch, minio.RemoveObjectsOptions{}) {
			if r.Err == nil || minio.ToErrorResponse(r.Err).Code == "NoSuchKey" {
				continue
			}
			if r.ObjectName != "" {
				failed = append(failed, r.ObjectName)
			}
			if first == nil {
				first = r.Err
			}
		}
		if first != nil && len(failed) > 0 {
			pending = failed
		}
		return first
	})
}

// DeletePrefix implements Bucket.
func (s *S3) DeletePrefix(ctx context.Context, prefix string) error {
	if prefix == "" {
		return &KeyError{Key: prefix, Reason: "DeletePrefix needs a non-empty prefix"}
	}
	objs, err := s.List(ctx, prefix)
	if err != nil {
		return err
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	return s.Delete(ctx, keys...)
}

// errNoRetry marks an error that must not be retried.
type errNoRetry struct{ err error }

func (e errNoRetry) Error() string { return e.err.Error() }
func (e errNoRetry) Unwrap() error { return e.err }

// do runs f with bounded retries of transient errors and wraps the final
// error with the operation, bucket, key and endpoint; NoSuchKey maps to
// ErrNotFound and InvalidRange to ErrInvalidRange.
func (s *S3) do(ctx context.Context, op, key string, f func(context.Context) error) error {
	return s.doN(ctx, op, key, s.retry.Attempts, f)
}

func (s *S3) doN(ctx context.Context, op, key string, attempts int, f func(context.Context) error) error {
	p := s.retry
	var err error
	backoff := p.Base
	for attempt := 1; ; attempt++ {
		err = f(ctx)
		if err == nil {
			s.reached.Store(true)
			return nil
		}
		if !isDialError(err) {
			s.reached.Store(true)
		}
		reportError(ctx, op) // every failed attempt, retried or not (Observed)
		if ctx.Err() != nil || attempt >= attempts || !retryable(err) {
			break
		}
		// A dial failure (unreachable endpoint) gets one retry only until
		// the endpoint has answered once, so that a wrong endpoint fails
		// fast; after that it is an outage (a restarting server).
		if isDialError(err) && attempt >= 2 && !s.reached.Load() {
			break
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return s.wrap(op, key, attempt, ctx.Err())
		case <-t.C:
		}
		backoff *= 2
		if backoff > p.Max {
			backoff = p.Max
		}
	}
	return s.wrap(op, key, 0, err)
}

func (s *S3) wrap(op, key string, _ int, err error) error {
	where := s.Name()
	if key != "" {
		where += "/" + key
	}
	var ne errNoRetry
	if errors.As(err, &ne) {
		err = ne.err
	}
	var resp minio.ErrorResponse
	errors.As(err, &resp)
	switch {
	case resp.Code == "NoSuchKey":
		return fmt.Errorf("objstore: %s %s (endpoint %s): %w", op, where, s.endpoint, ErrNotFound)
	case resp.Code == "InvalidRange" || resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		return fmt.Errorf("objstore: %s %s (endpoint %s): %w", op, where, s.endpoint, ErrInvalidRange)
	case resp.Code == "PreconditionFailed" || resp.StatusCode == http.StatusPreconditionFailed:
		return fmt.Errorf("objstore: %s %s (endpoint %s): %w", op, where, s.endpoint, ErrChanged)
	}
	if resp.Code != "" {
		return fmt.Errorf("objstore: %s %s (endpoint %s): %s (HTTP %d): %w", op, where, s.endpoint, resp.Code, resp.StatusCode, err)
	}
	if strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return fmt.Errorf("objstore: %s %s (endpoint %s; the store speaks plain HTTP: give the endpoint as http://%s): %w",
			op, where, s.endpoint, strings.TrimPrefix(s.endpoint, "https://"), err)
	}
	return fmt.Errorf("objstore: %s %s (endpoint %s): %w", op, where, s.endpoint, err)
}

var retryableCodes = map[string]bool{
	"SlowDown": true, "SlowDownRead": true, "SlowDownWrite": true,
	"InternalError": true, "ServiceUnavailable": true, "RequestTimeout": true,
	"RequestTimeTooSkewed": false, "Throttling": true, "ThrottlingException": true,
	"RequestLimitExceeded": true, "RequestThrottled": true,
	"XMinioServerNotInitialized": true, "XMinioReadQuorum": true, "XMinioWriteQuorum": true,
	"OperationAborted": true,
}

// statusClientClosedRequest is the non-standard 499 (nginx's "client
// closed request") that MinIO answers when a request is cut short.
const statusClientClosedRequest = 499

// Transient reports whether an error of a Bucket operation is worth
// retrying later (the store was unreachable, slow or overloaded), as
// opposed to final (not found, access denied, invalid key, bad request).
func Transient(err error) bool {
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalidRange) || errors.Is(err, ErrInvalidKey) || errors.Is(err, ErrChanged) {
		return false
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	return retryable(err)
}

// retryable reports whether err is transient: an S3 error with a
// retryable code or a 5xx/408/429 status, or a transport failure (timeout,
// reset, refused, unexpected EOF). Other S3 errors (4xx: access denied, no
// such bucket, bad request...) are not.
func retryable(err error) bool {
	var ne errNoRetry
	if errors.As(err, &ne) {
		return false
	}
	// (The caller's context being done is checked by doN; a transport
	// timeout also matches context.DeadlineExceeded and is transient.)
	var er minio.ErrorResponse
	if errors.As(err, &er) {
		if v, ok := retryableCodes[er.Code]; ok {
			return v
		}
		switch {
		case er.StatusCode >= 500, er.StatusCode == 408, er.StatusCode == 429:
			return true
		case er.StatusCode == statusClientClosedRequest:
			// MinIO answers 499 to the requests in flight when it shuts
			// down (its request context is cancelled); our own context
			// being done is checked by the caller, so here it is the
			// server going away and the request is worth repeating.
			return true
		}
		// 4xx, and errors minio-go synthesizes for invalid arguments, are
		// not transient.
		return false
	}
	var kerr *KeyError
	if errors.As(err, &kerr) {
		return false
	}
	var nerr net.Error
	if errors.As(err, &nerr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var uerr *url.Error
	return errors.As(err, &uerr)
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// RequestStats counts HTTP requests made to S3 (retries included) and
// object bytes moved. Lists are GETs with list parameters; Deletes include
// multi-object delete POSTs; Other counts multipart initiate/complete,
// bucket operations and the like.
type RequestStats struct {
	Get, Put, List, Delete, Head, Other int64
	// BytesRead counts object bytes received by GETs; BytesWritten
	// object bytes sent by PUTs (multipart parts included).
	BytesRead, BytesWritten int64
}

// Requests returns the total number of requests.
func (r RequestStats) Requests() int64 {
	return r.Get + r.Put + r.List + r.Delete + r.Head + r.Other
}

// Sub returns r - o, for the requests made between two snapshots.
func (r RequestStats) Sub(o RequestStats) RequestStats {
	return RequestStats{
		Get: r.Get - o.Get, Put: r.Put - o.Put, List: r.List - o.List, Delete: r.Delete - o.Delete,
		Head: r.Head - o.Head, Other: r.Other - o.Other,
		BytesRead: r.BytesRead - o.BytesRead, BytesWritten: r.BytesWritten - o.BytesWritten,
	}
}

func (r RequestStats) String() string {
	return fmt.Sprintf("GET=%d PUT=%d LIST=%d DELETE=%d HEAD=%d other=%d read=%dB written=%dB",
		r.Get, r.Put, r.List, r.Delete, r.Head, r.Other, r.BytesRead, r.BytesWritten)
}

type countingTransport struct {
	next http.RoundTripper
	c    struct {
		get, put, list, del, head, other, read, written atomic.Int64
	}
}

func (t *countingTransport) snapshot() RequestStats {
	return RequestStats{
		Get: t.c.get.Load(), Put: t.c.put.Load(), List: t.c.list.Load(), Delete: t.c.del.Load(),
		Head: t.c.head.Load(), Other: t.c.other.Load(), BytesRead: t.c.read.Load(), BytesWritten: t.c.written.Load(),
	}
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	q := req.URL.Query()
	isObjectGet := false
	var r RequestStats // this request, for the context's Counter
	switch req.Method {
	case http.MethodHead:
		r.Head = 1
	case http.MethodGet:
		// Object keys of ours never sit at the bucket root URL; list
		// requests do (path style) or carry list parameters.
		if q.Has("list-type") || q.Has("prefix") || q.Has("delimiter") || q.Has("continuation-token") {
			r.List = 1
		} else if q.Has("location") || q.Has("uploads") || q.Has("versioning") {
			r.Other = 1
		} else {
			r.Get = 1
			isObjectGet = true
		}
	case http.MethodPut:
		if req.ContentLength > 0 {
			r.BytesWritten = req.ContentLength
		}
		r.Put = 1
	case http.MethodDelete:
		if q.Has("uploadId") {
			r.Other = 1
		} else {
			r.Delete = 1
		}
	case http.MethodPost:
		if q.Has("delete") {
			r.Delete = 1
		} else {
			r.Other = 1
		}
	default:
		r.Other = 1
	}
	t.c.get.Add(r.Get)
	t.c.put.Add(r.Put)
	t.c.list.Add(r.List)
	t.c.del.Add(r.Delete)
	t.c.head.Add(r.Head)
	t.c.other.Add(r.Other)
	t.c.written.Add(r.BytesWritten)
	ctr := counterFrom(req.Context())
	if ctr != nil {
		ctr.Add(r)
	}
	resp, err := t.next.RoundTrip(req)
	if err == nil && isObjectGet && resp.Body != nil && resp.StatusCode/100 == 2 {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &t.c.read, job: ctr}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n   *atomic.Int64
	job *Counter // the request context's, if any
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	if b.job != nil {
		b.job.read.Add(int64(n))
	}
	return n, err
}
