package function

import (
	"io"
	"net/http"
	"runtime"
	"time"
)

// MaxSpecBytes bounds the TaskSpec an HTTP function accepts.
const MaxSpecBytes = 6 << 20

// HTTPHandler is the HTTP adapter (Knative, OpenFaaS, any container
// platform): POST /invoke with an encoded TaskSpec (or a SpecRef naming one
// in the bucket) answers with the encoded TaskResult; GET /healthz answers
// ok.
//
// With a secret (HTTPOptions.Secret, from $SLUICE_FUNCTION_SECRET) every
// invocation must carry a valid signature of the coordinator sharing it
// (SignRequest); others are refused with 401 before anything runs.
func HTTPHandler(rt *Runtime) http.Handler { return NewHTTPHandler(rt, HTTPOptions{}) }

// HTTPOptions configure the HTTP adapter.
type HTTPOptions struct {
	// Secret, when set, is the shared secret invocations are signed with.
	Secret []byte
	// Concurrency is the number of tasks run at once (default: one per
	// core, GOMAXPROCS); further invocations wait for a free slot (or
	// their request's end).
	Concurrency int
}

// NewHTTPHandler is HTTPHandler with options.
func NewHTTPHandler(rt *Runtime, o HTTPOptions) http.Handler {
	if o.Concurrency <= 0 {
		o.Concurrency = runtime.GOMAXPROCS(0)
	}
	slots := make(chan struct{}, o.Concurrency)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /invoke", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxSpecBytes+1))
		if err != nil {
			http.Error(w, "read task spec: "+err.Error(), http.StatusBadRequest)
			return
		}
		if len(body) > MaxSpecBytes {
			http.Error(w, "task spec larger than 6 MiB", http.StatusRequestEntityTooLarge)
			return
		}
		if len(o.Secret) > 0 {
			if err := VerifyRequest(r.Header, o.Secret, body, time.Now()); err != nil {
				rt.Log.Warn("refused an invocation", "remote", r.RemoteAddr, "err", err)
				http.Error(w, err.Error(), http.StatusUnauthorized)
				return
			}
		}
		select {
		case slots <- struct{}{}:
		case <-r.Context().Done():
			http.Error(w, "waiting for a free function slot: "+r.Context().Err().Error(), http.StatusServiceUnavailable)
			return
		}
		out, err := rt.HandlePayload(r.Context(), body)
		<-slots
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	return mux
}
