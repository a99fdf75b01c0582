package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// APIError is an error answer of the coordinator API.
type APIError struct {
	Status   int
	Msg      string
	Code     string // registry code (docs/errors.md), "" when none
	Position int    // 1-based character offset into the SQL, 0 when none
}

func (e *APIError) Error() string { return e.Msg }

// ErrorCode and ErrorPosition make plan.CodeOf and plan.PositionOf see
// the server's code and position.
func (e *APIError) ErrorCode() string  { return e.Code }
func (e *APIError) ErrorPosition() int { return e.Position }

// retryableAPI reports whether a failed API call may succeed later: the
// coordinator was unreachable or answered 5xx (its Redis restarting, say).
func retryableAPI(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status >= 500
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// Client talks to a coordinator's HTTP API.
type Client struct {
	URL   string
	Token string
	HTTP  *http.Client
}

// NewClient returns a client of the coordinator at url.
func NewClient(url, token string) *Client {
	return &Client{URL: strings.TrimRight(url, "/"), Token: token, HTTP: &http.Client{Timeout: 5 * time.Minute}}
}

func (c *Client) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, rd)
	if err != nil {
		return nil, err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("coordinator %s: %w", c.URL, err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		var eb ErrorBody
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if json.Unmarshal(b, &eb) == nil && eb.Message != "" {
			return nil, &APIError{Status: resp.StatusCode, Msg: eb.Message, Code: eb.Code, Position: eb.Position}
		}
		return nil, &APIError{Status: resp.StatusCode, Msg: fmt.Sprintf("coordinator %s: %s: %s", c.URL, resp.Status, strings.TrimSpace(string(b)))}
	}
	return resp, nil
}

func (c *Client) getJSON(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(out)
}

// Submit submits sql and returns the job id.
func (c *Client) Submit(ctx context.Context, sql string, adaptive *bool) (string, error) {
	var out map[string]string
	if err := c.getJSON(ctx, http.MethodPost, "/v1/jobs", SubmitRequest{SQL: sql, Adaptive: adaptive}, &out); err != nil {
		return "", err
	}
	return out["job"], nil
}

// Explain returns the plan of sql: logical plan, physical plan and stage
// graph.
func (c *Client) Explain(ctx context.Context, sql string) (string, error) {
	var out map[string]string
	if err := c.getJSON(ctx, http.MethodPost, "/v1/explain", SubmitRequest{SQL: sql}, &out); err != nil {
		return "", err
	}
	return out["explain"], nil
}

// Status returns a job's status.
func (c *Client) Status(ctx context.Context, job string) (*JobStatus, error) {
	var js JobStatus
	return &js, c.getJSON(ctx, http.MethodGet, "/v1/jobs/"+job, nil, &js)
}

// Jobs lists job ids, newest first.
func (c *Client) Jobs(ctx context.Context) ([]string, error) {
	var ids []string
	return ids, c.getJSON(ctx, http.MethodGet, "/v1/jobs", nil, &ids)
}

// Cancel cancels a job.
func (c *Client) Cancel(ctx context.Context, job string) error {
	var out map[string]string
	return c.getJSON(ctx, http.MethodPost, "/v1/jobs/"+job+"/cancel", nil, &out)
}

// StatusWait is how long Wait asks the server to hold each status request
// (long-poll) before answering with an unchanged status.
const StatusWait = 10 * time.Second

// statusPoll is the polling interval against a server without long-poll.
const statusPoll = 100 * time.Millisecond

// Wait returns when the job is terminal, calling progress on every status
// it gets. Against a server that long-polls (LongPollHeader) it asks for
// the next change of status (?wait=&since=ETag), so it learns of the end
// of a job at once; against an older server it polls every 100 ms.
// Requests that fail for a while (coordinator restarting, Redis outage)
// are retried for up to two minutes; an unknown job fails at once.
func (c *Client) Wait(ctx context.Context, job string, progress func(*JobStatus)) (*JobStatus, error) {
	var since time.Time
	tag, longPoll := "", false
	for {
		js, etag, lp, err := c.statusSince(ctx, job, tag, progress == nil)
		if err != nil {
			if !retryableAPI(err) {
				return nil, err
			}
			if since.IsZero() {
				since = time.Now()
			} else if time.Since(since) > 2*time.Minute {
				return nil, err
			}
			select {
			case <-ctx.Done():
				return nil, err
			case <-time.After(250 * time.Millisecond):
			}
			continue
		}
		since = time.Time{}
		if progress != nil {
			progress(js)
		}
		if Terminal(js.State) {
			return js, nil
		}
		tag, longPoll = "", lp && etag != ""
		if longPoll {
			tag = etag
		} else {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(statusPoll):
			}
		}
	}
}

// statusSince reads a job's status; with tag set (the ETag of the status
// already seen) the server holds the answer until the status changes (with
// untilDone, until the job ends) or StatusWait passes. It returns the answer's ETag and whether the server
// long-polls.
func (c *Client) statusSince(ctx context.Context, job, tag string, untilDone bool) (*JobStatus, string, bool, error) {
	path := "/v1/jobs/" + job
	switch {
	case tag != "":
		path += "?wait=" + StatusWait.String() + "&since=" + url.QueryEscape(tag)
		if untilDone {
			path += "&until=done" // no progress shown: only the end matters
		} else {
			path += "&view=progress" // the end comes whole
		}
	case !untilDone:
		path += "?view=progress"
	}
	resp, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, "", false, err
	}
	defer resp.Body.Close()
	var js JobStatus
	if err := json.NewDecoder(resp.Body).Decode(&js); err != nil {
		return nil, "", false, fmt.Errorf("coordinator %s: status of job %s: %w", c.URL, job, err)
	}
	return &js, resp.Header.Get("ETag"), resp.Header.Get(LongPollHeader) != "", nil
}

// Result fetches a succeeded job's result.
func (c *Client) Result(ctx context.Context, job string) (*arrow.Schema, []arrow.RecordBatch, error) {
	var schema *arrow.Schema
	var recs []arrow.RecordBatch
	err := c.ResultStream(ctx, job, 0, func(s *arrow.Schema) error {
		schema = s
		return nil
	}, func(rec arrow.RecordBatch) error {
		rec.Retain()
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		for _, r := range recs {
			r.Release()
		}
		return nil, nil, err
	}
	return schema, recs, nil
}

// ResultStream reads a succeeded job's result as it arrives: onSchema
// once, then onBatch for each batch in order (a batch is released after
// onBatch returns; Retain it to keep it). The first skip rows are left
// out, so a caller whose earlier read was cut resumes where it stopped:
// the result of a finished job is the same rows in the same order on
// every read. An error from onSchema or onBatch ends the read and is
// returned as is. A stream cut short (no end-of-stream marker) is
// ErrTruncatedResult, after the batches that did arrive whole.
func (c *Client) ResultStream(ctx context.Context, job string, skip int64, onSchema func(*arrow.Schema) error, onBatch func(arrow.RecordBatch) error) error {
	resp, err := c.do(ctx, http.MethodGet, "/v1/jobs/"+job+"/result", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body := &eosReader{r: resp.Body}
	rd, err := ipc.NewReader(body)
	if err != nil {
		return fmt.Errorf("read result stream: %w", err)
	}
	defer rd.Release()
	if err := onSchema(rd.Schema()); err != nil {
		return err
	}
	for rd.Next() {
		rec := rd.RecordBatch()
		n := rec.NumRows()
		if skip >= n {
			skip -= n
			continue
		}
		if skip > 0 {
			sl := rec.NewSlice(skip, n)
			skip = 0
			err = onBatch(sl)
			sl.Release()
		} else {
			err = onBatch(rec)
		}
		if err != nil {
			return err
		}
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("read result stream: %w", err)
	}
	if !body.ended() {
		return fmt.Errorf("read result stream of job %s: %w", job, ErrTruncatedResult)
	}
	return nil
}

func arrowNewRecord(schema *arrow.Schema, cols []arrow.Array, n int64) arrow.RecordBatch {
	return array.NewRecordBatch(schema, cols, n)
}

// ErrTruncatedResult is returned by Client.Result when the result stream
// ended without its end-of-stream marker: the coordinator could not read
// the whole result, and what arrived is not the answer.
var ErrTruncatedResult = errors.New("result stream cut short (no end-of-stream marker): the result could not be read completely")

// eosReader remembers the last 8 bytes read, to check that an Arrow IPC
// stream ended with its end-of-stream marker (0xFFFFFFFF, length 0).
type eosReader struct {
	r    io.Reader
	tail [8]byte
	n    int64
}

func (e *eosReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if n >= 8 {
		copy(e.tail[:], p[n-8:n])
	} else if n > 0 {
		copy(e.tail[:], e.tail[n:])
		copy(e.tail[8-n:], p[:n])
	}
	e.n += int64(n)
	return n, err
}

func (e *eosReader) ended() bool {
	return e.n >= 8 && e.tail == [8]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}
}
