package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/planner/plan"
)

// TestErrorCodesThroughAPI checks that errors reach an API client with
// their registry code: a planning error at once with its position, and a
// run-time user error (a bad cast) as the job's failure, on the first
// attempt of every task (never retried), counted by class in the metrics.
func TestErrorCodesThroughAPI(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	post := func(path, sql string) (int, coordinator.ErrorBody, map[string]string) {
		body, _ := json.Marshal(coordinator.SubmitRequest{SQL: sql})
		resp, err := http.Post(st.APIURL+path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var eb coordinator.ErrorBody
		var ok map[string]string
		if resp.StatusCode >= 300 {
			if err := json.Unmarshal(b, &eb); err != nil {
				t.Fatalf("error body %q: %v", b, err)
			}
		} else if err := json.Unmarshal(b, &ok); err != nil {
			t.Fatalf("body %q: %v", b, err)
		}
		return resp.StatusCode, eb, ok
	}

	// A planning error: 400 with code, class and position.
	code, eb, _ := post("/v1/jobs", "select l_orderkey form lineitem")
	if code != http.StatusBadRequest || eb.Code != plan.CodeSyntax || eb.Class != "user" || eb.Position != 24 || !strings.Contains(eb.Message, "SL001") {
		t.Fatalf("syntax error: HTTP %d %+v, want 400 SL001 user at position 24", code, eb)
	}
	code, eb, _ = post("/v1/explain", "select * from nosuch")
	if code != http.StatusBadRequest || eb.Code != plan.CodeUnknownTbl || eb.Position != 15 {
		t.Fatalf("unknown table: HTTP %d %+v", code, eb)
	}

	// A bad cast fails at run time, on the first attempt.
	code, _, ok := post("/v1/jobs", "select cast(l_comment as integer) from lineitem")
	if code != http.StatusCreated {
		t.Fatalf("submit: HTTP %d", code)
	}
	c := coordinator.NewClient(st.APIURL, "")
	js, err := c.Wait(ctx, ok["job"], nil)
	if err != nil {
		t.Fatal(err)
	}
	if js.State != coordinator.StateFailed || js.Code != plan.CodeInvalidCast || js.Class != "user" ||
		!strings.HasPrefix(js.Error, "SL101: ") || !strings.Contains(js.Error, "cannot cast string") {
		t.Fatalf("job: %s code %q class %q error %q", js.State, js.Code, js.Class, js.Error)
	}
	for _, s := range js.Stages {
		// Each task started at most once (Retries counts failed attempts:
		// the ones that hit the bad value, failing the job).
		if s.Attempts > s.Tasks {
			t.Fatalf("stage %d: %d attempts of %d tasks: a user error was retried", s.ID, s.Attempts, s.Tasks)
		}
	}
	// Its result is the job's error, with the code.
	resp, err := http.Get(st.APIURL + "/v1/jobs/" + js.ID + "/result")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := json.Unmarshal(b, &eb); err != nil || resp.StatusCode != http.StatusConflict || eb.Code != plan.CodeInvalidCast || eb.Class != "user" {
		t.Fatalf("result of the failed job: HTTP %d %s", resp.StatusCode, b)
	}
	// The client and RunQuery keep the code.
	if _, err := st.Query(ctx, "select cast(l_comment as integer) from lineitem", nil, nil); plan.CodeOf(err) != plan.CodeInvalidCast {
		t.Fatalf("query error %v: code %q, want SL101", err, plan.CodeOf(err))
	}
	if _, err := c.Submit(ctx, "select l_nosuch from lineitem", nil); plan.CodeOf(err) != plan.CodeUnknownCol || plan.PositionOf(err) != 8 {
		t.Fatalf("submit error %v: code %q position %d", err, plan.CodeOf(err), plan.PositionOf(err))
	}
	// Metrics count the failures by class. A job's failure is counted
	// after its state is recorded, so a client that saw the state may read
	// the metrics a moment before the count: read until it shows.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err = http.Get(st.APIURL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), `sluice_job_failures_total{class="user"} 2`) || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{`sluice_job_failures_total{class="user"} 2`, `sluice_task_failures_total{class="transient"} 0`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %q:\n%s", want, grepLines(string(b), "failures_total"))
		}
	}
	if strings.Contains(string(b), `sluice_task_failures_total{class="user"} 0`) {
		t.Error("no user-class task failure counted")
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
