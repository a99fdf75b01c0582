package function

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// SpecRef is the payload an invoker sends instead of a TaskSpec that is
// larger than the platform's payload limit (6 MB for a synchronous AWS
// Lambda invocation): the key of an object in the function's bucket that
// holds the encoded TaskSpec (written under
// <prefix>/jobs/<job>/specs/...). Any other payload is a TaskSpec.
type SpecRef struct {
	SpecKey string `json:"spec_key"`
}

// IsSpecRef reports whether payload is a SpecRef (a JSON object whose only
// key is spec_key) and returns the key it names.
func IsSpecRef(payload []byte) (string, bool) {
	p := bytes.TrimSpace(payload)
	// A TaskSpec has "version" and more; a reference is tiny. Decode
	// only small payloads that mention the key.
	if len(p) > 4096 || !bytes.Contains(p, []byte(`"spec_key"`)) {
		return "", false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(p, &m) != nil || len(m) != 1 {
		return "", false
	}
	var ref SpecRef
	if json.Unmarshal(p, &ref) != nil || ref.SpecKey == "" {
		return "", false
	}
	return ref.SpecKey, true
}

// HandlePayload is Handle for a payload that may be a SpecRef: it fetches
// the referenced TaskSpec from the runtime's bucket first. An error means
// the referenced spec could not be read (the adapter reports it as a
// failed invocation, which the coordinator retries); everything else is
// reported in the TaskResult, as Handle does.
func (r *Runtime) HandlePayload(ctx context.Context, payload []byte) ([]byte, error) {
	if key, ok := IsSpecRef(payload); ok {
		if strings.Contains(key, "..") {
			return nil, fmt.Errorf("spec reference %q: invalid key", key)
		}
		body, err := r.Bucket.Get(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("read task spec %s: %w", key, err)
		}
		payload = body
	}
	return r.Handle(ctx, payload), nil
}

// LambdaHandler is the AWS Lambda adapter. It implements the Handler
// interface of github.com/aws/aws-lambda-go/lambda
// (Invoke(ctx, payload) ([]byte, error)), so the raw invocation payload (a
// TaskSpec or a SpecRef) reaches the runtime unchanged and the encoded
// TaskResult is the function's response. cmd/sluice-function passes it to
// lambda.Start; this package does not import the Lambda library, so
// nothing else links it.
type LambdaHandler struct {
	RT *Runtime
}

// NewLambdaHandler returns the Lambda adapter of rt.
func NewLambdaHandler(rt *Runtime) *LambdaHandler { return &LambdaHandler{RT: rt} }

// Invoke runs one invocation. A returned error becomes a Lambda function
// error (the invocation failed: the coordinator retries the task); a task
// that ran and failed is a TaskResult with Error set, never an error here.
func (h *LambdaHandler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	if h == nil || h.RT == nil {
		return nil, errors.New("sluice lambda handler has no runtime")
	}
	return h.RT.HandlePayload(ctx, payload)
}
