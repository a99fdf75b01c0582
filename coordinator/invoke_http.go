package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// HTTPInvoker invokes functions over HTTP (`POST /invoke` with the TaskSpec;
// Knative, OpenFaaS or `sluice function serve`). Endpoints are used round
// robin; one URL may stand for a load balancer. Throttling (429, 503) is
// retried with backoff.
type HTTPInvoker struct {
	URLs    []string
	Client  *http.Client
	Retries int
	// PayloadLimit is the largest spec sent inline (default
	// function.MaxSpecBytes); larger ones are uploaded to Bucket and
	// passed as {"spec_key": KEY}. A nil Bucket sends every spec inline.
	PayloadLimit int
	Bucket       objstore.Bucket
	// Timeout, when > 0, bounds one request (the caller's context bounds
	// the whole invocation). A timed-out request is not resent: the task
	// may still be running, so the coordinator runs a new attempt.
	Timeout time.Duration
	sem     chan struct{}
	next    atomic.Uint64
}

// NewHTTPInvoker returns an invoker of the function endpoints urls with at
// most concurrency invocations in flight.
func NewHTTPInvoker(urls []string, concurrency int) *HTTPInvoker {
	if concurrency < 1 {
		concurrency = 1
	}
	return &HTTPInvoker{URLs: urls, Client: &http.Client{}, Retries: 5, sem: make(chan struct{}, concurrency)}
}

// ErrThrottled is returned when the platform kept refusing the invocation.
var ErrThrottled = errors.New("function invocation throttled")

// Invoke sends spec to one endpoint and returns the TaskResult body.
func (h *HTTPInvoker) Invoke(ctx context.Context, spec []byte) ([]byte, error) {
	if len(h.URLs) == 0 {
		return nil, errors.New("no function endpoints configured")
	}
	select {
	case h.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-h.sem }()
	limit := h.PayloadLimit
	if limit <= 0 {
		limit = function.MaxSpecBytes
	}
	if h.Bucket != nil && len(spec) > limit {
		key, err := uploadSpecRef(ctx, h.Bucket, spec)
		if err != nil {
			return nil, err
		}
		defer deleteSpecRef(ctx, h.Bucket, key)
		spec, _ = json.Marshal(function.SpecRef{SpecKey: key})
	}
	backoff := 100 * time.Millisecond
	for try := 0; ; try++ {
		url := h.URLs[int(h.next.Add(1)-1)%len(h.URLs)]
		body, status, retryAfter, err := h.post(ctx, url, spec)
		if errors.Is(err, ErrInvokeTimeout) {
			return nil, fmt.Errorf("function %s: %w (after %s)", url, err, h.Timeout)
		}
		if err == nil && status == http.StatusOK {
			return body, nil
		}
		throttled := status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
		if err == nil && !throttled {
			return nil, fmt.Errorf("function %s: HTTP %d: %s", url, status, bytes.TrimSpace(body))
		}
		if err != nil && ctx.Err() != nil {
			return nil, err
		}
		if try >= h.Retries {
			if err != nil {
				return nil, fmt.Errorf("function %s: %w", url, err)
			}
			return nil, fmt.Errorf("function %s: %w (HTTP %d)", url, ErrThrottled, status)
		}
		wait := backoff
		if retryAfter > 0 {
			wait = retryAfter
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (h *HTTPInvoker) post(ctx context.Context, url string, spec []byte) ([]byte, int, time.Duration, error) {
	if h.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, h.Timeout, ErrInvokeTimeout)
		defer cancel()
		body, status, ra, err := h.do(ctx, url, spec)
		if err != nil && errors.Is(context.Cause(ctx), ErrInvokeTimeout) {
			return nil, 0, 0, ErrInvokeTimeout
		}
		return body, status, ra, err
	}
	return h.do(ctx, url, spec)
}

func (h *HTTPInvoker) do(ctx context.Context, url string, spec []byte) ([]byte, int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/invoke", bytes.NewReader(spec))
	if err != nil {
		return nil, 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.Client.Do(req)
	if err != nil {
		return nil, 0, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, 0, 0, err
	}
	var ra time.Duration
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		ra = time.Duration(s) * time.Second
	}
	return body, resp.StatusCode, ra, nil
}
