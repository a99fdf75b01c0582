package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/catalog/layout"
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

// Written is what WriteResult wrote.
type Written struct {
	Keys []string // data files, in part order
	Rows int64
}

// WriteResult writes the result of the succeeded job as files of format
// ("parquet" or "csv") under prefix (a key prefix ending in "/"), one
// file per result object, up to 8 at a time, then commits them with the
// marker prefix+layout.CommitMarkerPrefix+job written last (it lists the
// files). Until the marker exists a reader following the commit protocol
// sees none of the files. The columns get the query's names.
func (e *StatementEnv) WriteResult(ctx context.Context, job, prefix, format string) (*Written, error) {
	refs, schema, err := e.c.store.ResultObjects(ctx, job)
	if err != nil {
		return nil, err
	}
	// One file per result object; with no objects (an empty result) one
	// empty file, so that the output still has its schema.
	n := max(len(refs), 1)
	keys := make([]string, n)
	rows := make([]int64, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range n {
		keys[i] = prefix + layout.DataFileName(job, i, format)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var part []shuffle.ObjectRef
			if i < len(refs) {
				part = refs[i : i+1]
			}
			rows[i], errs[i] = e.writeFile(ctx, part, schema, keys[i], format)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	w := &Written{Keys: keys}
	for _, r := range rows {
		w.Rows += r
	}
	marker, err := json.Marshal(map[string]any{"job": job, "files": keys, "rows": w.Rows,
		"committed": time.Now().UTC().Format(time.RFC3339Nano)})
	if err != nil {
		return nil, err
	}
	if err := e.c.bucket.Put(ctx, prefix+layout.CommitMarkerPrefix+job, marker); err != nil {
		return nil, fmt.Errorf("commit %s: %w", prefix, err)
	}
	e.c.log.Info("result written", "job", job, "prefix", prefix, "files", len(keys), "rows", w.Rows, "format", format)
	return w, nil
}

// writeFile writes the records of refs as one file at key.
func (e *StatementEnv) writeFile(ctx context.Context, refs []shuffle.ObjectRef, schema *arrow.Schema, key, format string) (int64, error) {
	var buf bytes.Buffer
	var fw exec.FileWriter
	var rows int64
	err := shuffle.ReadObjects(ctx, e.c.bucket, refs, func(rec arrow.RecordBatch) error {
		renamed := renameColumns(rec, schema)
		defer renamed.Release()
		if fw == nil {
			var err error
			if fw, err = exec.NewFileWriter(&buf, renamed.Schema(), format); err != nil {
				return err
			}
		}
		rows += renamed.NumRows()
		return fw.Write(renamed)
	})
	if err != nil {
		return 0, fmt.Errorf("read result for %s: %w", key, err)
	}
	if fw == nil {
		if fw, err = exec.NewFileWriter(&buf, schema, format); err != nil {
			return 0, err
		}
	}
	if err := fw.Close(); err != nil {
		return 0, err
	}
	if err := e.c.bucket.Put(ctx, key, buf.Bytes()); err != nil {
		return 0, fmt.Errorf("write %s: %w", key, err)
	}
	return rows, nil
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
