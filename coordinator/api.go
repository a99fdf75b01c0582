package coordinator

import (
	"context"
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
	"github.com/zeebo/xxh3"

	"github.com/sluicedb/sluice/coordinator/webui"
	"github.com/sluicedb/sluice/function/redact"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// API serves the coordinator's HTTP interface:
//
//	POST /v1/jobs              {"sql": "...", "adaptive": true}  -> {"job": id}
//	GET  /v1/jobs              -> [id, ...] newest first
//	GET  /v1/jobs/{id}         -> JobStatus (?wait=10s&since=ETAG: long-poll until it changes; &until=done: until the job ends; ?view=progress: while it runs, without rounds and operator metrics)
//	GET  /v1/jobs/{id}/result  -> Arrow IPC stream of the result
//	GET  /v1/jobs/{id}/detail  -> webui.JobDetail (what the job page shows)
//	GET  /v1/jobs/{id}/objects?key=K -> one shuffle object of the job
//	GET  /v1/jobs?detail=1     -> [webui.JobSummary, ...] newest first
//	GET  /ui/                  the web UI (jobs list; /ui/jobs/{id} a job)
//	POST /v1/jobs/{id}/cancel
//	POST /v1/explain           {"sql": "..."} -> {"explain": text}
//	POST /v1/statements        {"sql": "..."} -> {"job": id} (a query) or an Arrow IPC result (DDL, SHOW, DESCRIBE, CTAS, COPY, EXPLAIN)
//	GET  /metrics              Prometheus metrics
//	GET  /healthz              200 while the process serves HTTP (liveness)
//	GET  /readyz               200 when Redis and the bucket are reachable, else 503 (Readiness)
//
// With a Token every route but /healthz and /readyz requires it as a
// bearer token; the web UI also takes a session cookie from /ui/login
// (api_auth.go).
// Error answers never carry credentials (redact.String).
type API struct {
	c *Coordinator
	// Token, when set, is the bearer token every request must carry.
	Token string
	// MaxSQLBytes bounds the SQL text of a submission or explain (default
	// the coordinator's Config.MaxSQLBytes, which bounds every front end);
	// larger ones get HTTP 413, CodeSQLTooLarge.
	MaxSQLBytes int
}

// DefaultMaxSQLBytes is the default limit on SQL text.
const DefaultMaxSQLBytes = 1 << 20

// CodeSQLTooLarge is the error code of SQL text over the limit.
const CodeSQLTooLarge = plan.CodeSQLTooLarge

// NewAPI returns the HTTP API of c.
func NewAPI(c *Coordinator) *API { return &API{c: c, MaxSQLBytes: c.MaxSQLBytes()} }

// Handler returns the API's routes.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/jobs", a.submit)
	mux.HandleFunc("GET /v1/jobs", a.list)
	mux.HandleFunc("GET /v1/jobs/{id}", a.status)
	mux.HandleFunc("GET /v1/jobs/{id}/result", a.result)
	mux.HandleFunc("GET /v1/jobs/{id}/detail", a.detail)
	mux.HandleFunc("GET /v1/jobs/{id}/objects", a.object)
	ui := webui.New(a.c.store, a.c.log).Handler()
	mux.Handle("GET /ui/", ui)
	mux.Handle("GET /ui", ui)
	mux.HandleFunc("GET "+loginPath, a.login)
	mux.HandleFunc("POST "+loginPath, a.login)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/", http.StatusFound) })
	mux.HandleFunc("POST /v1/jobs/{id}/cancel", a.cancelJob)
	mux.HandleFunc("POST /v1/explain", a.explain)
	mux.HandleFunc("POST /v1/statements", a.statement)
	mux.HandleFunc("GET /v1/tables", a.tables)
	mux.HandleFunc("GET /v1/tables/{name}", a.tables)
	mux.Handle("GET /metrics", a.c.metrics.Handler())
	mux.HandleFunc("GET /healthz", healthz)
	mux.HandleFunc("GET /readyz", a.readyz)
	return a.auth(mux)
}

func (a *API) auth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.guard(w, r) {
			return
		}
		rest, ok := strings.CutPrefix(r.URL.Path, "/v1/jobs/")
		if !ok {
			rest, ok = strings.CutPrefix(r.URL.Path, "/ui/jobs/")
		}
		if ok {
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

// ErrorBody is the body of every error response. Code and Class come from
// the error-code registry (docs/errors.md; empty for an error without a
// code, such as a bad request); Position is the 1-based character offset
// into the SQL the error points at, 0 when none.
type ErrorBody struct {
	Code     string `json:"code,omitempty"`
	Class    string `json:"class,omitempty"`
	Message  string `json:"message"`
	Position int    `json:"position"`
}

// errorBody describes err for the API.
func errorBody(err error) ErrorBody {
	b := ErrorBody{Message: redact.String(err.Error()), Code: plan.CodeOf(err), Position: plan.PositionOf(err)}
	if b.Code != "" {
		b.Class = string(plan.ClassOf(b.Code))
	}
	return b
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, errorBody(err))
}

// decodeSQL reads a request carrying SQL text, refusing text over the
// limit (413, CodeSQLTooLarge) before it reaches the planner or Redis.
func (a *API) decodeSQL(w http.ResponseWriter, r *http.Request) (SubmitRequest, bool) {
	var req SubmitRequest
	limit := a.MaxSQLBytes
	if limit <= 0 {
		limit = a.c.MaxSQLBytes()
	}
	tooLarge := func(n string) {
		writeErr(w, http.StatusRequestEntityTooLarge, SQLTooLarge(n, limit))
	}
	maxBody := int64(limit)*2 + 64<<10 // JSON escaping and the other fields
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		writeErr(w, http.StatusBadRequest, fmt.Errorf("read request: %w", err))
		return req, false
	}
	if int64(len(body)) > maxBody {
		tooLarge(fmt.Sprintf("more than %d bytes", maxBody))
		return req, false
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeErr(w, http.StatusBadRequest, fmt.Errorf("decode request: %w", err))
		return req, false
	}
	if len(req.SQL) > limit {
		tooLarge(fmt.Sprintf("%d bytes", len(req.SQL)))
		return req, false
	}
	return req, true
}

func (a *API) submit(w http.ResponseWriter, r *http.Request) {
	req, ok := a.decodeSQL(w, r)
	if !ok {
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
	req, ok := a.decodeSQL(w, r)
	if !ok {
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
	if r.URL.Query().Get("detail") == "1" {
		js, err := a.c.store.JobSummaries(r.Context(), n)
		if err != nil {
			writeErr(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, http.StatusOK, js)
		return
	}
	ids, err := a.c.store.Jobs(r.Context(), n)
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, ids)
}

// Long-poll of GET /v1/jobs/{id}: with ?wait=D&since=TAG the answer is
// held until the status differs from the one whose ETag was TAG, the job
// is terminal, or D (at most MaxStatusWait) has passed; the status is
// re-read every statusRecheck meanwhile. Every answer carries its ETag and
// LongPollHeader, so a client knows the server can hold; an old server
// ignores the parameters and answers at once without the header, and the
// client falls back to polling.
//
// A client following progress (since set, no until=done) gets at most one
// changed status every progressEvery: the answer is held that long after
// the request arrives, checking only the job's state (a terminal state is
// still answered within statusRecheck). Every task that finishes changes
// the status, and building one (the job record, its plan, every stage and
// round, decoded from Redis and encoded again) is far dearer than the
// state check: answering each change cost the shell 13% of its CPU over
// TPC-H's 22 queries, on the cores the query's own tasks run on.
const (
	LongPollHeader = "X-Sluice-Long-Poll"
	MaxStatusWait  = 30 * time.Second
	statusRecheck  = 20 * time.Millisecond
	progressEvery  = 200 * time.Millisecond
)

func (a *API) status(w http.ResponseWriter, r *http.Request) {
	ctx, job := r.Context(), r.PathValue("id")
	var wait time.Duration
	if v := r.URL.Query().Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			writeErr(w, http.StatusBadRequest, fmt.Errorf("bad wait %q: want a duration such as 10s (at most %s)", v, MaxStatusWait))
			return
		}
		wait = min(d, MaxStatusWait)
	}
	since := r.URL.Query().Get("since")
	// until=done: the client wants the end, not every step (Client.Wait
	// without a progress callback): hold until the job is terminal,
	// checking only its state.
	untilDone := r.URL.Query().Get("until") == "done"
	// view=progress: while the job runs, the status without its rounds
	// and operator metrics (Store.status); its end comes whole.
	brief := r.URL.Query().Get("view") == "progress"
	deadline := time.Now().Add(wait)
	ended, release := a.c.endings.wait(job) // this coordinator's end of the job, heard at once
	defer release()
	if since != "" {
		// Hold while the job runs: until it ends (until=done), or for
		// progressEvery before progress is looked at.
		hold := deadline
		if !untilDone {
			hold = time.Now().Add(min(progressEvery, wait))
		}
		for time.Now().Before(hold) {
			if st, ok, err := a.c.store.JobState(ctx, job); err != nil || !ok || Terminal(st) {
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-ended:
				ended = nil // heard once: the state read next is terminal
			case <-time.After(min(statusRecheck, time.Until(hold))):
			}
		}
		if untilDone {
			since = "" // answer with the status now
		}
	}
	var (
		digest uint64 // of the status last read
		stages []int  // its stages
	)
	for {
		if stages != nil {
			// Waiting: re-read only the digest of what the status is
			// made of; decode the status again once it changed.
			if d, err := a.c.store.statusFingerprint(ctx, job, stages); err == nil && d == digest && time.Now().Before(deadline) {
				select {
				case <-ctx.Done():
					return
				case <-ended:
					ended = nil // heard once: the state read next is terminal
				case <-time.After(min(statusRecheck, time.Until(deadline))):
				}
				continue
			}
		}
		// The digest is read before the status: a change in between
		// shows as a different digest at the next check.
		d, derr := a.c.store.statusFingerprint(ctx, job, stages)
		js, err := a.jobStatus(ctx, job, brief)
		if err != nil {
			code := http.StatusInternalServerError
			if errors.Is(err, ErrJobNotFound) {
				code = http.StatusNotFound
			}
			writeErr(w, code, err)
			return
		}
		body, err := json.Marshal(js)
		if err != nil {
			writeErr(w, http.StatusInternalServerError, err)
			return
		}
		tag := fmt.Sprintf("%q", fmt.Sprintf("%016x", xxh3.Hash(body)))
		if since == "" || tag != since || Terminal(js.State) || !time.Now().Before(deadline) {
			w.Header().Set("ETag", tag)
			w.Header().Set(LongPollHeader, "1")
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(append(body, '\n'))
			return
		}
		stages = stages[:0]
		for _, st := range js.Stages {
			stages = append(stages, st.ID)
		}
		if derr != nil {
			stages = nil // no digest: read the whole status next time
		}
		digest = d
		select {
		case <-ctx.Done():
			return
		case <-ended:
			ended = nil // heard once: the state read next is terminal
		case <-time.After(min(statusRecheck, time.Until(deadline))):
		}
	}
}

// jobStatus is a job's status as the API shows it: redacted, with its cost.
func (a *API) jobStatus(ctx context.Context, job string, brief bool) (*JobStatus, error) {
	js, err := a.c.store.status(ctx, job, brief)
	if err != nil {
		return nil, err
	}
	js.Error, js.Waiting = redact.String(js.Error), redact.String(js.Waiting)
	if cost, err := a.c.store.Cost(ctx, js.ID); err == nil {
		cost.Price(a.c.cfg.Prices)
		js.Cost = cost
	}
	return js, nil
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
	job := r.PathValue("id")
	refs, schema, err := a.c.store.ResultObjects(r.Context(), job)
	var failed *JobError
	if errors.As(err, &failed) {
		writeErr(w, http.StatusConflict, err) // the job's own error, with its code
		return
	}
	if err != nil {
		code := http.StatusConflict
		if errors.Is(err, ErrJobNotFound) {
			code = http.StatusNotFound
		}
		writeErr(w, code, err)
		return
	}
	// Every result object must be there and whole before the 200 header
	// goes out: after it, an error can only abort the stream. (The bucket
	// waits out an object store outage of up to S3Outage.)
	src, err := resultSource(r.Context(), a.c.bucket, refs, a.c.cfg.SmallResultBytes)
	if err != nil {
		a.c.log.Error("result not readable", "job", job, "err", err)
		writeErr(w, http.StatusServiceUnavailable, fmt.Errorf("result of job %s cannot be read: %w", job, err))
		return
	}
	w.Header().Set("Content-Type", "application/vnd.apache.arrow.stream")
	cw := &countingWriter{w: w}
	if err := WriteResult(r.Context(), src, refs, schema, cw); err != nil {
		a.c.log.Error("stream result", "job", job, "err", err)
		if cw.n == 0 {
			w.Header().Del("Content-Type")
			writeErr(w, http.StatusServiceUnavailable, fmt.Errorf("result of job %s cannot be read: %w", job, err))
			return
		}
		// Part of the stream is out: cut the connection so that the
		// client sees a broken stream, never a short answer.
		panic(http.ErrAbortHandler)
	}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// CheckObjects checks that every object of refs exists with its recorded
// size, a few at a time. It is the check before an answer is promised.
func CheckObjects(ctx context.Context, b objstore.Bucket, refs []shuffle.ObjectRef) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, 8)
	errc := make(chan error, len(refs))
	for _, ref := range refs {
		sem <- struct{}{}
		go func(ref shuffle.ObjectRef) {
			defer func() { <-sem }()
			info, err := b.Stat(ctx, ref.Key)
			switch {
			case errors.Is(err, objstore.ErrNotFound):
				err = &shuffle.MissingError{Key: ref.Key, Err: err}
			case err != nil:
				err = fmt.Errorf("stat %s: %w", ref.Key, err)
			case ref.Ranged() && info.Size < ref.Offset+ref.Bytes:
				// A partition's byte range of a data object: the object
				// must hold it whole.
				err = &shuffle.CorruptError{Key: ref.Key, Reason: fmt.Sprintf("size %d, shorter than partition %d at bytes [%d,%d)",
					info.Size, ref.Part, ref.Offset, ref.Offset+ref.Bytes)}
			case !ref.Ranged() && ref.Bytes > 0 && info.Size != ref.Bytes:
				err = &shuffle.CorruptError{Key: ref.Key, Reason: fmt.Sprintf("size %d, want %d", info.Size, ref.Bytes)}
			}
			if err != nil {
				cancel()
			}
			errc <- err
		}(ref)
	}
	var first error
	for range refs {
		if err := <-errc; err != nil && (first == nil || errors.Is(first, context.Canceled)) {
			first = err
		}
	}
	return first
}

// WriteResult streams result objects as one Arrow IPC stream whose columns
// carry the user's names (schema gives names, and types when there are no
// rows at all). When an object cannot be read completely it returns the
// error without ending the stream: the end-of-stream marker is written
// only after every object was read, so a reader can tell a complete
// result from a cut one.
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
	if err != nil {
		return err
	}
	if wr == nil {
		wr = ipc.NewWriter(w, ipc.WithSchema(schema))
	}
	return wr.Close()
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
