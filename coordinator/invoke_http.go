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
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// HTTPInvoker invokes functions over HTTP (`POST /invoke` with the TaskSpec;
// Knative, OpenFaaS or `sluice function serve`). One URL may stand for a
// load balancer. Throttling (429, 503) is retried with backoff, without
// holding an invocation slot during the wait; under withThrottleReturn
// (the coordinator's dispatcher follows the platform's concurrency) it is
// returned at once as a *ThrottledError instead, so the dispatcher's
// slot goes back and its limit is cut.
//
// Endpoints are used round robin among the healthy ones. An endpoint is
// ejected after EjectAfter consecutive connection failures or failed
// health probes (GET /healthz every HealthInterval, answered within
// HealthTimeout): a hung function (a SIGSTOPped process accepts
// connections but never answers) is noticed in seconds, not at the task
// deadline. Requests in flight to an endpoint ejected as hung are
// abandoned (ErrEndpointEjected: the coordinator runs a new attempt
// elsewhere). An ejected endpoint comes back once a probe succeeds (the
// half-open state: one probe, then traffic). A request of a task that
// already has one in flight (a hedged duplicate, a retry) goes to a
// different endpoint when there is one.
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
	// Secret, when set, signs every request (function.SignRequest): a
	// function with the same secret refuses unsigned or forged specs.
	// SignTTL is how long a signature is valid (default 15 minutes, and at
	// least the spec's deadline).
	Secret  []byte
	SignTTL time.Duration
	// Health checking (zero values get the defaults): HealthInterval
	// (1s) between probes, HealthTimeout (2s) for one probe, EjectAfter
	// (2) consecutive failures before an endpoint is ejected.
	HealthInterval time.Duration
	HealthTimeout  time.Duration
	EjectAfter     int

	sem       chan struct{}
	next      atomic.Uint64
	initOnce  sync.Once
	mu        sync.Mutex
	eps       []*endpoint
	tasks     map[string]map[int]int // task -> endpoint -> requests in flight
	stop      chan struct{}
	closeOnce sync.Once
}

// endpoint is one function URL and its health.
type endpoint struct {
	url      string
	fails    int           // consecutive failures (probes or connections)
	ejected  bool          // no new requests until a probe succeeds
	hung     chan struct{} // closed when ejected as hung: in-flight requests are abandoned
	inflight int
}

// ErrEndpointEjected is returned for a request abandoned because its
// endpoint stopped answering health probes.
var ErrEndpointEjected = errors.New("function endpoint stopped answering (ejected)")

// ErrNoEndpoint is returned when every endpoint is ejected: the functions
// are down (an outage the coordinator waits out within its budget).
var ErrNoEndpoint = errors.New("no healthy function endpoint")

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

// ThrottledError is the platform's refusal of one invocation (429
// TooManyRequests), returned at once, without retrying, by an invoker
// whose caller follows the platform's concurrency itself (the
// coordinator's dispatcher: withThrottleReturn). It is ErrThrottled.
type ThrottledError struct {
	// RetryAfter is the wait the platform asked for (Retry-After, Lambda's
	// RetryAfterSeconds); 0: none.
	RetryAfter time.Duration
	Err        error
}

func (e *ThrottledError) Error() string {
	if e.Err == nil {
		return ErrThrottled.Error()
	}
	return ErrThrottled.Error() + ": " + e.Err.Error()
}
func (e *ThrottledError) Unwrap() error        { return e.Err }
func (e *ThrottledError) Is(target error) bool { return target == ErrThrottled }

type throttleReturnKey struct{}

// withThrottleReturn asks the invoker to return a 429 at once as a
// *ThrottledError instead of retrying it while holding the caller's slot:
// the caller gives the slot back and invokes again when it has one.
func withThrottleReturn(ctx context.Context) context.Context {
	return context.WithValue(ctx, throttleReturnKey{}, true)
}

func throttleReturn(ctx context.Context) bool {
	b, _ := ctx.Value(throttleReturnKey{}).(bool)
	return b
}

func (h *HTTPInvoker) init() {
	h.initOnce.Do(func() {
		for _, u := range h.URLs {
			h.eps = append(h.eps, &endpoint{url: u, hung: make(chan struct{})})
		}
		h.tasks = map[string]map[int]int{}
		h.stop = make(chan struct{})
		if h.HealthInterval <= 0 {
			h.HealthInterval = time.Second
		}
		if h.HealthTimeout <= 0 {
			h.HealthTimeout = 2 * time.Second
		}
		if h.EjectAfter <= 0 {
			h.EjectAfter = 2
		}
		go h.probeLoop()
	})
}

// Close stops the health prober.
func (h *HTTPInvoker) Close() error {
	h.init()
	h.closeOnce.Do(func() { close(h.stop) })
	return nil
}

func (h *HTTPInvoker) probeLoop() {
	t := time.NewTicker(h.HealthInterval)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		var wg sync.WaitGroup
		for i := range h.eps {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				h.mark(i, h.probe(h.eps[i].url), true)
			}(i)
		}
		wg.Wait()
	}
}

// probe is one health check: GET /healthz answered 200 in time.
func (h *HTTPInvoker) probe(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), h.HealthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := h.Client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthz: HTTP %d", resp.StatusCode)
	}
	return nil
}

// mark records a success (err nil) or failure of endpoint i. A probe
// failure that ejects the endpoint also abandons its requests in flight:
// it is hung or gone.
func (h *HTTPInvoker) mark(i int, err error, probe bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ep := h.eps[i]
	if err == nil {
		ep.fails, ep.ejected = 0, false
		return
	}
	ep.fails++
	if ep.fails >= h.EjectAfter && !ep.ejected {
		ep.ejected = true
		if probe {
			close(ep.hung)
			ep.hung = make(chan struct{})
		}
	}
}

// pick chooses the endpoint of a request of task: round robin over the
// healthy endpoints, avoiding those already running the task.
func (h *HTTPInvoker) pick(task string) (int, <-chan struct{}, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.eps)
	start := int(h.next.Add(1)-1) % n
	best := -1
	for k := 0; k < n; k++ {
		i := (start + k) % n
		if h.eps[i].ejected {
			continue
		}
		if task == "" || h.tasks[task][i] == 0 {
			best = i
			break
		}
		if best < 0 {
			best = i // the task runs here already: only if nothing else is healthy
		}
	}
	if best < 0 {
		return -1, nil, ErrNoEndpoint
	}
	ep := h.eps[best]
	ep.inflight++
	if task != "" {
		if h.tasks[task] == nil {
			h.tasks[task] = map[int]int{}
		}
		h.tasks[task][best]++
	}
	return best, ep.hung, nil
}

func (h *HTTPInvoker) release(i int, task string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.eps[i].inflight--
	if m := h.tasks[task]; m != nil {
		if m[i]--; m[i] <= 0 {
			delete(m, i)
		}
		if len(m) == 0 {
			delete(h.tasks, task)
		}
	}
}

type taskCtxKey struct{}

// withTask tags an invocation's context with its task ("job/stage/task"),
// so that an invoker can send attempts of one task to different places.
func withTask(ctx context.Context, task string) context.Context {
	return context.WithValue(ctx, taskCtxKey{}, task)
}

func taskOf(ctx context.Context) string {
	s, _ := ctx.Value(taskCtxKey{}).(string)
	return s
}

// Invoke sends spec to one endpoint and returns the TaskResult body.
func (h *HTTPInvoker) Invoke(ctx context.Context, spec []byte) ([]byte, error) {
	if len(h.URLs) == 0 {
		return nil, errors.New("no function endpoints configured")
	}
	h.init()
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
	task := taskOf(ctx)
	backoff := 100 * time.Millisecond
	for try := 0; ; try++ {
		// A slot is held for one request: a throttled request's backoff
		// leaves it to others (the platform's room comes back as its
		// requests end, not as ours wait).
		select {
		case h.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		i, hung, err := h.pick(task)
		url := ""
		var body []byte
		var status int
		var retryAfter time.Duration
		picked := err == nil
		if picked {
			url = h.eps[i].url
			body, status, retryAfter, err = h.post(ctx, url, spec, hung)
			h.release(i, task)
		}
		<-h.sem
		if picked {
			switch {
			case errors.Is(err, ErrEndpointEjected):
				return nil, fmt.Errorf("function %s: %w", url, err)
			case err != nil && ctx.Err() == nil && !errors.Is(err, ErrInvokeTimeout):
				h.mark(i, err, false) // could not reach it
			case err == nil:
				h.mark(i, nil, false)
			}
		}
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
		if err == nil && throttled && throttleReturn(ctx) {
			// 429 and 503 alike: Knative's activator and OpenFaaS's
			// gateway answer 503 when no replica has room.
			return nil, fmt.Errorf("function %s: %w", url, &ThrottledError{RetryAfter: retryAfter,
				Err: fmt.Errorf("HTTP %d: %s", status, bytes.TrimSpace(body))})
		}
		if err != nil && ctx.Err() != nil {
			return nil, err
		}
		if try >= h.Retries {
			switch {
			case errors.Is(err, ErrNoEndpoint):
				return nil, fmt.Errorf("%w (all %d ejected: not answering)", err, len(h.eps))
			case err != nil:
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

func (h *HTTPInvoker) post(ctx context.Context, url string, spec []byte, hung <-chan struct{}) ([]byte, int, time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-hung:
			cancel(ErrEndpointEjected)
		case <-stop:
		}
	}()
	var body []byte
	var status int
	var ra time.Duration
	var err error
	if h.Timeout > 0 {
		tctx, tcancel := context.WithTimeoutCause(ctx, h.Timeout, ErrInvokeTimeout)
		body, status, ra, err = h.do(tctx, url, spec)
		if err != nil && errors.Is(context.Cause(tctx), ErrInvokeTimeout) {
			err = ErrInvokeTimeout
		}
		tcancel()
	} else {
		body, status, ra, err = h.do(ctx, url, spec)
	}
	if err != nil && errors.Is(context.Cause(ctx), ErrEndpointEjected) {
		return nil, 0, 0, ErrEndpointEjected
	}
	return body, status, ra, err
}

func (h *HTTPInvoker) do(ctx context.Context, url string, spec []byte) ([]byte, int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/invoke", bytes.NewReader(spec))
	if err != nil {
		return nil, 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if len(h.Secret) > 0 {
		ttl := h.SignTTL
		if ttl <= 0 {
			ttl = 15 * time.Minute
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) > ttl {
			ttl = time.Until(dl)
		}
		function.SignRequest(req.Header, h.Secret, spec, time.Now().Add(ttl))
	}
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
