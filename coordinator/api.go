package coordinator

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// API serves the coordinator's HTTP interface:
//
//	POST /v1/jobs              {"sql": "...", "adaptive": true}  -> {"job": id}
//	GET  /v1/jobs              -> [id, ...] newest first
//	GET  /v1/jobs/{id}         -> JobStatus
//	GET  /v1/jobs/{id}/result  -> Arrow IPC stream of the result
//	POST /v1/jobs/{id}/cancel
//	POST /v1/explain           {"sql": "..."} -> {"explain": text}
//	GET  /metrics              Prometheus metrics
//	GET  /healthz
//
// With a Token every route but /healthz requires it as a bearer token.
type API struct {
	c *Coordinator
	// Token, when set, is the bearer token every request must carry.
	Token string
}

// NewAPI returns the HTTP API of c.
func NewAPI(c *Coordinator) *API { return &API{c: c} }

// Handler returns the API's routes.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/jobs", a.submit)
	mux.HandleFunc("GET /v1/jobs", a.list)
	mux.HandleFunc("GET /v1/jobs/{id}", a.status)
	mux.HandleFunc("GET /v1/jobs/{id}/result", a.result)
	mux.HandleFunc("POST /v1/jobs/{id}/cancel", a.cancelJob)
	mux.HandleFunc("POST /v1/explain", a.explain)
	mux.Handle("GET /metrics", a.c.metrics.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	return a.auth(mux)
}

func (a *API) auth(h http.Handler) http.Handler {
	want := []byte("Bearer " + a.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.Token != "" && r.URL.Path != "/healthz" &&
			subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			writeErr(w, http.StatusUnauthorized, errors.New("missing or wrong bearer token"))
			return
		}
		if rest, ok := strings.CutPrefix(r.URL.Path, "/v1/jobs/"); ok {
			// Job ids become Redis keys and object keys: nothing else gets in.
			id, _, _ := strings.Cut(rest, "/")
			if err := shuffle.ValidateJobID(id); err != nil {
				writeErr(w, http.StatusBadRequest, err)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// SubmitRequest is the body of POST /v1/jobs.
type SubmitRequest struct {
	SQL      string `json:"sql"`
	Adaptive *bool  `json:"adaptive,omitempty"`
}

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, ErrorBody{Error: err.Error()})
}

func (a *API) submit(w http.ResponseWriter, r *http.Request) {
	var req SubmitRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		writeErr(w, http.StatusBadRequest, fmt.Errorf("decode request: %w", err))
		return
	}
	job, err := a.c.Submit(r.Context(), req.SQL, SubmitOptions{Adaptive: req.Adaptive})
	if err != nil {
		writeErr(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"job": job})
}

func (a *API) explain(w http.ResponseWriter, r *http.Request) {
	var req SubmitRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		writeErr(w, http.StatusBadRequest, fmt.Errorf("decode request: %w", err))
		return
	}
	_, text, err := a.c.planner.Plan(r.Context(), req.SQL)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"explain": text})
}

func (a *API) list(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.ParseInt(r.URL.Query().Get("n"), 10, 64)
	if n <= 0 {
		n = 100
	}
	ids, err := a.c.store.Jobs(r.Context(), n)
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, ids)
}

func (a *API) status(w http.ResponseWriter, r *http.Request) {
	js, err := a.c.store.Status(r.Context(), r.PathValue("id"))
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, ErrJobNotFound) {
			code = http.StatusNotFound
		}
		writeErr(w, code, err)
		return
	}
	if cost, err := a.c.store.Cost(r.Context(), js.ID); err == nil {
		cost.Price(a.c.cfg.Prices)
		js.Cost = cost
	}
	writeJSON(w, http.StatusOK, js)
}

func (a *API) cancelJob(w http.ResponseWriter, r *http.Request) {
	if err := a.c.store.Cancel(r.Context(), r.PathValue("id")); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, ErrJobNotFound) {
			code = http.StatusNotFound
		}
		writeErr(w, code, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"job": r.PathValue("id"), "state": "cancelling"})
}

func (a *API) result(w http.ResponseWriter, r *http.Request) {
	refs, schema, err := a.c.store.ResultObjects(r.Context(), r.PathValue("id"))
	if err != nil {
		code := http.StatusConflict
		if errors.Is(err, ErrJobNotFound) {
			code = http.StatusNotFound
		}
		writeErr(w, code, err)
		return
	}
	w.Header().Set("Content-Type", "application/vnd.apache.arrow.stream")
	if err := WriteResult(r.Context(), a.c.bucket, refs, schema, w); err != nil {
		a.c.log.Error("stream result", "job", r.PathValue("id"), "err", err)
	}
}

// WriteResult streams result objects as one Arrow IPC stream whose columns
// carry the user's names (schema gives names, and types when there are no
// rows at all).
func WriteResult(ctx context.Context, b objstore.Bucket, refs []shuffle.ObjectRef, schema *arrow.Schema, w io.Writer) error {
	var wr *ipc.Writer
	err := shuffle.ReadObjects(ctx, b, refs, func(rec arrow.RecordBatch) error {
		renamed := renameColumns(rec, schema)
		defer renamed.Release()
		if wr == nil {
			wr = ipc.NewWriter(w, ipc.WithSchema(renamed.Schema()))
		}
		return wr.Write(renamed)
	})
	if wr == nil {
		wr = ipc.NewWriter(w, ipc.WithSchema(schema))
	}
	if cerr := wr.Close(); err == nil {
		err = cerr
	}
	return err
}

// renameColumns gives rec's columns the names of schema, keeping rec's types.
func renameColumns(rec arrow.RecordBatch, schema *arrow.Schema) arrow.RecordBatch {
	fs := make([]arrow.Field, rec.NumCols())
	for i := range fs {
		fs[i] = rec.Schema().Field(i)
		if i < schema.NumFields() {
			fs[i].Name = schema.Field(i).Name
		}
	}
	return arrowNewRecord(arrow.NewSchema(fs, nil), rec.Columns(), rec.NumRows())
}

// WaitHTTP polls a coordinator's API until the job is terminal.
func waitPoll(ctx context.Context, get func() (*JobStatus, error), every time.Duration, progress func(*JobStatus)) (*JobStatus, error) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		js, err := get()
		if err != nil {
			return nil, err
		}
		if progress != nil {
			progress(js)
		}
		if Terminal(js.State) {
			return js, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
