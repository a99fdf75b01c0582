package function

import (
	"io"
	"net/http"
)

// MaxSpecBytes bounds the TaskSpec an HTTP function accepts.
const MaxSpecBytes = 6 << 20

// HTTPHandler is the HTTP adapter (Knative, OpenFaaS, any container
// platform): POST /invoke with an encoded TaskSpec (or a SpecRef naming one
// in the bucket) answers with the encoded TaskResult; GET /healthz answers
// ok.
func HTTPHandler(rt *Runtime) http.Handler {
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
		out, err := rt.HandlePayload(r.Context(), body)
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
