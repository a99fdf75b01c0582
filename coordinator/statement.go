package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// StatementRunner is implemented by planners that carry out statements
// other than plain queries (CREATE EXTERNAL TABLE, DROP TABLE, SHOW
// TABLES, DESCRIBE, CREATE TABLE AS, COPY TO, EXPLAIN); the API serves
// POST /v1/statements only when the planner is one.
type StatementRunner interface {
	// RunStatement carries out sql. A plain query is submitted through
	// env.Submit and returned as a Job; any other statement returns its
	// result set.
	RunStatement(ctx context.Context, sql string, env *StatementEnv) (*StatementResult, error)
}

// StatementResult is the outcome of a statement: a job to wait for (a
// plain query), or a result set.
type StatementResult struct {
	Job     string
	Schema  *arrow.Schema
	Records []arrow.RecordBatch
}

// Release frees the result's batches.
func (r *StatementResult) Release() {
	for _, rec := range r.Records {
		rec.Release()
	}
}

// StatementEnv is what the coordinator offers a statement: its bucket,
// and running queries as jobs.
type StatementEnv struct {
	c        *Coordinator
	adaptive *bool
}

// Bucket returns the bucket sluice runs on.
func (e *StatementEnv) Bucket() objstore.Bucket { return e.c.bucket }

// BucketName returns the bucket's name (the host of s3:// locations).
func (e *StatementEnv) BucketName() string { return e.c.cfg.Bucket }

// Prefix returns the key prefix of everything the coordinator writes.
func (e *StatementEnv) Prefix() string { return e.c.cfg.Prefix }

// Key returns the key rest under the coordinator's prefix.
func (e *StatementEnv) Key(rest string) string { return joinKey(e.c.cfg.Prefix, rest) }

// InternalPrefixes returns the key prefixes of the coordinator's own data
// (every job's shuffle objects, plan fragments, task specs and results;
// the readiness probe): no statement may write under them.
func (e *StatementEnv) InternalPrefixes() []string {
	return []string{e.Key("jobs/"), e.Key(readyProbePrefix)}
}

// Submit submits a query as a job.
func (e *StatementEnv) Submit(ctx context.Context, sql string) (string, error) {
	return e.c.Submit(ctx, sql, SubmitOptions{Adaptive: e.adaptive})
}

// Run submits a query and waits until its job is terminal. When ctx ends
// first (the client went away) the job is cancelled.
func (e *StatementEnv) Run(ctx context.Context, sql string) (*JobStatus, error) {
	job, err := e.Submit(ctx, sql)
	if err != nil {
		return nil, err
	}
	return e.wait(ctx, job)
}

// RunGraph runs a graph the statement planned itself (a query whose result
// stage writes files, plan.Graph.AddWrite) as a job showing sql, and waits
// until it is terminal; as Run.
func (e *StatementEnv) RunGraph(ctx context.Context, sql string, g *plan.Graph, explain string) (*JobStatus, error) {
	job, err := e.c.SubmitPlanned(ctx, sql, g, explain, SubmitOptions{Adaptive: e.adaptive})
	if err != nil {
		return nil, err
	}
	return e.wait(ctx, job)
}

func (e *StatementEnv) wait(ctx context.Context, job string) (*JobStatus, error) {
	js, err := e.c.waitStatus(ctx, job, 50*time.Millisecond)
	if err != nil {
		if ctx.Err() != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			_ = e.c.store.Cancel(cctx, job)
			cancel()
		}
		return nil, fmt.Errorf("job %s: %w", job, err)
	}
	return js, nil
}

// Written is what a write job wrote.
type Written struct {
	Keys []string // data files, in key order
	Rows int64
}

// CommitWritten commits the files the succeeded write job wrote (its
// result stage's table writers, plan.KindWrite, wrote one file per task
// under prefix, and its result lists them with their rows): it writes the
// marker prefix+layout.CommitMarkerPrefix+job last, listing the files.
// Until the marker exists a reader following the commit protocol sees none
// of them. An empty result wrote no file; then one empty file of schema
// (the written columns) is written first, so the output keeps its schema.
// A write to one File needs no marker: its one PUT is atomic.
func (e *StatementEnv) CommitWritten(ctx context.Context, job string, wr *plan.Write, schema *arrow.Schema) (*Written, error) {
	prefix := wr.Prefix
	refs, _, err := e.c.store.ResultObjects(ctx, job)
	if err != nil {
		return nil, err
	}
	w := &Written{}
	err = shuffle.ReadObjects(ctx, e.c.bucket, refs, func(rec arrow.RecordBatch) error {
		if rec.NumCols() != 2 {
			return fmt.Errorf("write job %s: result has %d columns, want (file, rows)", job, rec.NumCols())
		}
		files, ok1 := rec.Column(0).(*array.String)
		rows, ok2 := rec.Column(1).(*array.Int64)
		if !ok1 || !ok2 {
			return fmt.Errorf("write job %s: result is not (file, rows)", job)
		}
		for i := range files.Len() {
			w.Keys = append(w.Keys, files.Value(i))
			w.Rows += rows.Value(i)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the files job %s wrote: %w", job, err)
	}
	if len(w.Keys) == 0 && len(wr.PartitionBy) == 0 {
		// (A partitioned write of no rows has no folder to put one in:
		// it commits no files, as DuckDB writes none.)
		key := wr.Key(job, 0)
		var buf bytes.Buffer
		fw, err := exec.NewFileWriter(&buf, schema, wr)
		if err != nil {
			return nil, err
		}
		if err := fw.Close(); err != nil {
			return nil, err
		}
		if err := e.c.bucket.Put(ctx, key, buf.Bytes()); err != nil {
			return nil, fmt.Errorf("write %s: %w", key, err)
		}
		w.Keys = []string{key}
	}
	sort.Strings(w.Keys)
	if wr.File != "" {
		// One file, written by one PUT: visible whole or not at all.
		e.c.log.Info("result written", "job", job, "file", wr.File, "rows", w.Rows, "format", wr.Format)
		return w, nil
	}
	marker, err := json.Marshal(map[string]any{"job": job, "files": w.Keys, "rows": w.Rows,
		"committed": time.Now().UTC().Format(time.RFC3339Nano)})
	if err != nil {
		return nil, err
	}
	if err := e.c.bucket.Put(ctx, prefix+layout.CommitMarkerPrefix+job, marker); err != nil {
		return nil, fmt.Errorf("commit %s: %w", prefix, err)
	}
	e.c.log.Info("result written", "job", job, "prefix", prefix, "files", len(w.Keys), "rows", w.Rows, "format", wr.Format)
	return w, nil
}

// statement serves POST /v1/statements: {"sql": ...} -> 201 {"job": id}
// for a plain query, 200 and an Arrow IPC stream for any other statement.
func (a *API) statement(w http.ResponseWriter, r *http.Request) {
	sr, ok := a.c.planner.(StatementRunner)
	if !ok {
		writeErr(w, http.StatusNotImplemented, errors.New("this coordinator's planner runs queries only (POST /v1/jobs)"))
		return
	}
	req, ok := a.decodeSQL(w, r)
	if !ok {
		return
	}
	res, err := sr.RunStatement(r.Context(), req.SQL, &StatementEnv{c: a.c, adaptive: req.Adaptive})
	if err != nil {
		code := http.StatusBadRequest
		var je *JobError
		if errors.As(err, &je) {
			code = http.StatusConflict
		}
		writeErr(w, code, err)
		return
	}
	defer res.Release()
	if res.Job != "" {
		writeJSON(w, http.StatusCreated, map[string]string{"job": res.Job})
		return
	}
	w.Header().Set("Content-Type", "application/vnd.apache.arrow.stream")
	wr := ipc.NewWriter(w, ipc.WithSchema(res.Schema))
	for _, rec := range res.Records {
		if err := wr.Write(rec); err != nil {
			panic(http.ErrAbortHandler)
		}
	}
	_ = wr.Close()
}

// Statement runs one SQL statement. For a plain query it returns the
// submitted job's id (wait for it and fetch its result as for Submit);
// for any other statement its result set, with job "".
func (c *Client) Statement(ctx context.Context, sql string, adaptive *bool) (string, *arrow.Schema, []arrow.RecordBatch, error) {
	resp, err := c.do(ctx, http.MethodPost, "/v1/statements", SubmitRequest{SQL: sql, Adaptive: adaptive})
	if err != nil {
		return "", nil, nil, err
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/vnd.apache.arrow.stream") {
		var out map[string]string
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return "", nil, nil, fmt.Errorf("decode statement answer: %w", err)
		}
		return out["job"], nil, nil, nil
	}
	body := &eosReader{r: resp.Body}
	rd, err := ipc.NewReader(body)
	if err != nil {
		return "", nil, nil, fmt.Errorf("read statement result: %w", err)
	}
	defer rd.Release()
	var recs []arrow.RecordBatch
	for rd.Next() {
		rec := rd.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	err = rd.Err()
	if err == nil && !body.ended() {
		err = ErrTruncatedResult
	}
	if err != nil {
		for _, r := range recs {
			r.Release()
		}
		return "", nil, nil, fmt.Errorf("read statement result: %w", err)
	}
	return "", rd.Schema(), recs, nil
}

// waitStatus polls the job's status in Redis until it is terminal.
func (c *Coordinator) waitStatus(ctx context.Context, job string, every time.Duration) (*JobStatus, error) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		js, err := c.store.Status(ctx, job)
		if err != nil {
			return nil, err
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
