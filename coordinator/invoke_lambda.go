package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// LambdaPayloadLimit is the default largest TaskSpec sent inline: a
// synchronous Lambda invocation's request payload is limited to 6 MB.
// Larger specs are uploaded to the bucket and passed by reference.
const LambdaPayloadLimit = 6_000_000

// LambdaConfig configures the AWS Lambda invoker.
type LambdaConfig struct {
	// FunctionName is the function's name, ARN or partial ARN. Under the
	// Lambda Runtime Interface Emulator it must be "function".
	FunctionName string
	// Qualifier is an optional version or alias.
	Qualifier string
	// Sized names the function deployed for each other memory size, in
	// bytes (size-functions): a task the coordinator sized (its
	// FunctionMemoryOf) goes to that function, any other to FunctionName.
	Sized map[int64]string
	// Region is the AWS region (default: the SDK's: AWS_REGION or the
	// shared config; "us-east-1" when Endpoints are set and none is).
	Region string
	// Endpoints, when set, replace the Lambda service endpoint (the SDK's
	// BaseEndpoint), e.g. an emulator or LocalStack. Concurrency slots are
	// spread over them round robin (slot i uses Endpoints[i%len]): with as
	// many endpoints as slots each endpoint has at most one invocation in
	// flight, which is what the Runtime Interface Emulator needs (one
	// emulator process serves one invocation at a time).
	Endpoints []string
	// Concurrency bounds the invocations in flight (default 64).
	Concurrency int
	// Timeout bounds one invocation (default 15 minutes, Lambda's
	// maximum). A timed-out invocation is not retried here (it may still
	// be running): it fails, and the coordinator runs a new attempt.
	Timeout time.Duration
	// Retries bounds the retries of one invocation that Lambda refused
	// (429 TooManyRequestsException, 5xx, connection refused); default 5,
	// -1 for none.
	Retries int
	// Backoff is the first retry's wait (default 100ms), doubling per
	// retry up to MaxBackoff (default 5s), with jitter.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// PayloadLimit is the largest spec sent inline (default
	// LambdaPayloadLimit); larger ones go to Bucket under
	// <prefix>/jobs/<job>/specs/ and the function gets {"spec_key": KEY}.
	PayloadLimit int
	// Bucket holds specs beyond PayloadLimit (nil: such specs fail).
	Bucket objstore.Bucket
	// HTTPClient, when set, carries the SDK's requests (tests inject
	// faults through it).
	HTTPClient aws.HTTPClient
	// Credentials, when set, sign the requests; default: the SDK's chain
	// (environment, shared config, the instance or task role).
	Credentials aws.CredentialsProvider
}

// LambdaStats counts what a LambdaInvoker did.
type LambdaStats struct {
	Invocations    int64 // Invoke calls
	Requests       int64 // Lambda Invoke API requests sent (with retries)
	Throttled      int64 // requests refused with 429 / TooManyRequestsException
	ServerErrors   int64 // requests answered with a 5xx or refused connections
	Timeouts       int64 // invocations that hit Timeout
	FunctionErrors int64 // invocations answered with a function error
	SpecsByRef     int64 // specs passed by reference through the bucket
}

// LambdaInvoker invokes the sluice function on AWS Lambda (or anything
// speaking the Lambda Invoke API) synchronously (RequestResponse) through
// aws-sdk-go-v2.
type LambdaInvoker struct {
	cfg     LambdaConfig
	clients []*lambda.Client // one per endpoint
	slots   chan int         // free concurrency slots; the value picks the client

	invocations, requests, throttled, serverErrors, timeouts, functionErrors, byRef atomic.Int64
}

// NewLambdaInvoker returns a Lambda invoker. It makes no request.
func NewLambdaInvoker(ctx context.Context, cfg LambdaConfig) (*LambdaInvoker, error) {
	if cfg.FunctionName == "" {
		return nil, errors.New("lambda invoker: no function name")
	}
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 64
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Minute
	}
	if cfg.Retries == 0 {
		cfg.Retries = 5
	} else if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 100 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 5 * time.Second
	}
	if cfg.PayloadLimit <= 0 {
		cfg.PayloadLimit = LambdaPayloadLimit
	}
	var opts []func(*config.LoadOptions) error
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	if cfg.Credentials != nil {
		opts = append(opts, config.WithCredentialsProvider(cfg.Credentials))
	}
	// This invoker retries by itself (it knows which failures are safe
	// to repeat); the SDK's retryer stays out of the way.
	opts = append(opts, config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }))
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("lambda invoker: AWS config: %w", err)
	}
	if awsCfg.Region == "" {
		if len(cfg.Endpoints) == 0 {
			return nil, errors.New("lambda invoker: no AWS region (set --lambda-region or AWS_REGION)")
		}
		awsCfg.Region = "us-east-1"
	}
	l := &LambdaInvoker{cfg: cfg, slots: make(chan int, cfg.Concurrency)}
	client := func(endpoint string) *lambda.Client {
		return lambda.NewFromConfig(awsCfg, func(o *lambda.Options) {
			if endpoint != "" {
				o.BaseEndpoint = aws.String(endpoint)
			}
			if cfg.HTTPClient != nil {
				o.HTTPClient = cfg.HTTPClient
			}
		})
	}
	if len(cfg.Endpoints) == 0 {
		l.clients = []*lambda.Client{client("")}
	}
	for _, ep := range cfg.Endpoints {
		ep = strings.TrimRight(ep, "/")
		if !strings.Contains(ep, "://") {
			ep = "http://" + ep
		}
		l.clients = append(l.clients, client(ep))
	}
	for i := range cfg.Concurrency {
		l.slots <- i % len(l.clients)
	}
	return l, nil
}

// Stats returns what the invoker did so far.
func (l *LambdaInvoker) Stats() LambdaStats {
	return LambdaStats{Invocations: l.invocations.Load(), Requests: l.requests.Load(), Throttled: l.throttled.Load(),
		ServerErrors: l.serverErrors.Load(), Timeouts: l.timeouts.Load(), FunctionErrors: l.functionErrors.Load(),
		SpecsByRef: l.byRef.Load()}
}

// ErrInvokeTimeout is returned when an invocation took longer than the
// invoker's per-invocation timeout.
var ErrInvokeTimeout = errors.New("function invocation timed out")

// Invoke runs one task on Lambda and returns the encoded TaskResult.
func (l *LambdaInvoker) Invoke(ctx context.Context, spec []byte) ([]byte, error) {
	l.invocations.Add(1)
	payload := spec
	if len(spec) > l.cfg.PayloadLimit {
		key, err := uploadSpecRef(ctx, l.cfg.Bucket, spec)
		if err != nil {
			return nil, err
		}
		l.byRef.Add(1)
		defer deleteSpecRef(ctx, l.cfg.Bucket, key)
		payload, _ = json.Marshal(function.SpecRef{SpecKey: key})
	}
	var slot int
	select {
	case slot = <-l.slots:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a free function slot: %w", ctx.Err())
	}
	defer func() { l.slots <- slot }()
	client := l.clients[slot]
	name := l.cfg.FunctionName
	if n, ok := l.cfg.Sized[FunctionMemoryOf(ctx)]; ok {
		name = n
	}
	backoff := l.cfg.Backoff
	for try := 0; ; try++ {
		out, err := l.invokeOnce(ctx, client, name, payload)
		if err == nil {
			return out, nil
		}
		var re *lambdaRetryable
		if !errors.As(err, &re) {
			return nil, err
		}
		if re.throttled && throttleReturn(ctx) {
			// The caller follows the platform's concurrency: it gives
			// the slot back and invokes again when it has one.
			return nil, fmt.Errorf("lambda %s: %w", name, &ThrottledError{RetryAfter: re.retryAfter, Err: re.err})
		}
		if try >= l.cfg.Retries {
			if re.throttled {
				return nil, fmt.Errorf("lambda %s: %w after %d tries: %v", name, ErrThrottled, try+1, re.err)
			}
			return nil, fmt.Errorf("lambda %s: gave up after %d tries: %w", name, try+1, re.err)
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		if re.retryAfter > 0 {
			wait = min(re.retryAfter, l.cfg.MaxBackoff)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		backoff = min(backoff*2, l.cfg.MaxBackoff)
	}
}

// lambdaRetryable wraps a failure that is safe to repeat with the same payload:
// Lambda refused the request, so the function did not run it.
type lambdaRetryable struct {
	err        error
	throttled  bool
	retryAfter time.Duration
}

func (r *lambdaRetryable) Error() string { return r.err.Error() }
func (r *lambdaRetryable) Unwrap() error { return r.err }

func (l *LambdaInvoker) invokeOnce(ctx context.Context, client *lambda.Client, name string, payload []byte) ([]byte, error) {
	l.requests.Add(1)
	ictx, cancel := context.WithTimeoutCause(ctx, l.cfg.Timeout, ErrInvokeTimeout)
	defer cancel()
	in := &lambda.InvokeInput{
		FunctionName:   aws.String(name),
		InvocationType: types.InvocationTypeRequestResponse,
		Payload:        payload,
	}
	if l.cfg.Qualifier != "" {
		in.Qualifier = aws.String(l.cfg.Qualifier)
	}
	out, err := client.Invoke(ictx, in)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(context.Cause(ictx), ErrInvokeTimeout) {
			l.timeouts.Add(1)
			return nil, fmt.Errorf("lambda %s: %w (after %s)", name, ErrInvokeTimeout, l.cfg.Timeout)
		}
		return nil, l.classify(err)
	}
	if out.FunctionError != nil {
		l.functionErrors.Add(1)
		return nil, fmt.Errorf("lambda %s: function error (%s): %s", name, *out.FunctionError, lambdaErrorPayload(out.Payload))
	}
	if out.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("lambda %s: status %d: %s", name, out.StatusCode, lambdaErrorPayload(out.Payload))
	}
	// The Runtime Interface Emulator answers a function error with a plain
	// 200 and the error document, without the X-Amz-Function-Error header.
	if msg, ok := lambdaErrorDoc(out.Payload); ok {
		l.functionErrors.Add(1)
		return nil, fmt.Errorf("lambda %s: function error: %s", name, msg)
	}
	return out.Payload, nil
}

// classify turns an Invoke API error into a lambdaRetryable one when Lambda
// refused the request before running the function.
func (l *LambdaInvoker) classify(err error) error {
	var tmr *types.TooManyRequestsException
	if errors.As(err, &tmr) {
		l.throttled.Add(1)
		r := &lambdaRetryable{err: err, throttled: true}
		if tmr.RetryAfterSeconds != nil {
			if s, perr := strconv.Atoi(*tmr.RetryAfterSeconds); perr == nil && s > 0 {
				r.retryAfter = time.Duration(s) * time.Second
			}
		}
		return r
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		// Nothing was sent: the endpoint is not (yet) there.
		l.serverErrors.Add(1)
		return &lambdaRetryable{err: err}
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() != 0 {
		switch code := re.HTTPStatusCode(); {
		case code == http.StatusTooManyRequests:
			l.throttled.Add(1)
			return &lambdaRetryable{err: err, throttled: true}
		case code >= 500:
			l.serverErrors.Add(1)
			return &lambdaRetryable{err: err}
		}
		return err
	}
	return err
}

// lambdaErrorDoc recognizes Lambda's function error document
// ({"errorMessage": ..., "errorType": ...}), which a TaskResult never is.
func lambdaErrorDoc(p []byte) (string, bool) {
	if len(p) > 64<<10 || !strings.Contains(string(p), `"errorType"`) {
		return "", false
	}
	var doc struct {
		Job          *string `json:"job"`
		ErrorType    string  `json:"errorType"`
		ErrorMessage string  `json:"errorMessage"`
	}
	if json.Unmarshal(p, &doc) != nil || doc.Job != nil || doc.ErrorType == "" {
		return "", false
	}
	return doc.ErrorType + ": " + doc.ErrorMessage, true
}

func lambdaErrorPayload(p []byte) string {
	if msg, ok := lambdaErrorDoc(p); ok {
		return msg
	}
	if len(p) > 512 {
		p = p[:512]
	}
	return strings.TrimSpace(string(p))
}

// specRefHeader is what an invoker reads of a TaskSpec to name its object.
type specRefHeader struct {
	Job     string `json:"job"`
	Stage   int    `json:"stage"`
	Task    int    `json:"task"`
	Attempt int    `json:"attempt"`
	Prefix  string `json:"prefix"`
}

// SpecKey is the object key of a TaskSpec passed by reference.
func SpecKey(prefix, job string, stage, task, attempt int) string {
	return joinKey(prefix, fmt.Sprintf("jobs/%s/specs/%d-%d-a%d-%s.json", job, stage, task, attempt, randHex(4)))
}

// uploadSpecRef uploads an encoded TaskSpec to the bucket and returns its key.
func uploadSpecRef(ctx context.Context, b objstore.Bucket, spec []byte) (string, error) {
	if b == nil {
		return "", fmt.Errorf("task spec of %d bytes exceeds the payload limit and no bucket is configured to pass it by reference", len(spec))
	}
	var h specRefHeader
	if err := json.Unmarshal(spec, &h); err != nil || h.Job == "" {
		return "", fmt.Errorf("task spec to pass by reference has no job: %v", err)
	}
	key := SpecKey(h.Prefix, h.Job, h.Stage, h.Task, h.Attempt)
	if err := b.Put(ctx, key, spec); err != nil {
		return "", fmt.Errorf("upload task spec %s: %w", key, err)
	}
	return key, nil
}

// deleteSpecRef removes a spec object once its invocation returned (the job's
// garbage collection removes any left behind).
func deleteSpecRef(ctx context.Context, b objstore.Bucket, key string) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = b.Delete(dctx, key)
}

// functionMemoryKey carries, in an invocation's context, the size of the
// function the coordinator chose for the task (size-functions).
type functionMemoryKey struct{}

func withFunctionMemory(ctx context.Context, mem int64) context.Context {
	if mem <= 0 {
		return ctx
	}
	return context.WithValue(ctx, functionMemoryKey{}, mem)
}

// FunctionMemoryOf returns the function size, in bytes, the coordinator
// chose for the invocation ctx carries (0: none was chosen). An invoker
// that offers several sizes routes by it.
func FunctionMemoryOf(ctx context.Context) int64 {
	m, _ := ctx.Value(functionMemoryKey{}).(int64)
	return m
}
