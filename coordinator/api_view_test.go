package coordinator

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/coordinator/webui"
	"github.com/sluicedb/sluice/function"
)

// TestJobDetailViews runs an adaptive two-stage job whose task 1 of stage
// 0 fails once, then reads it through the JSON views and the pages: the
// retry and the commit are on the timeline with their times, the rounds
// carry their graphs and the coalescing they did, and the shuffle objects
// link to their bytes.
func TestJobDetailViews(t *testing.T) {
	e := newFakeEnv(t, 4)
	e.inv.bucket = e.bucket
	e.inv.behave = func(ctx context.Context, spec *function.TaskSpec) (*function.TaskResult, error, bool) {
		if spec.Stage == 0 && spec.Task == 1 && spec.Attempt == 1 {
			return &function.TaskResult{Job: spec.Job, Stage: spec.Stage, Task: spec.Task, Attempt: spec.Attempt,
				Fence: spec.Fence, Error: "SL901: injected transient failure", Kind: function.ErrTransient}, nil, true
		}
		return nil, nil, false
	}
	cfg := testConfig("c1")
	cfg.Adaptive = true
	cfg.PackBytes = 0 // one invocation per attempt: the timeline's accounting is what is checked
	c := e.coordinator(t, cfg)
	ctx := context.Background()
	job, err := c.Submit(ctx, "select x from t", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := waitJob(t, c, job); m.State != StateSucceeded {
		t.Fatalf("job %s: %v", m.State, m.Error)
	}
	srv := httptest.NewServer(NewAPI(c).Handler())
	defer srv.Close()

	var d webui.JobDetail
	getJSON(t, srv.URL+"/v1/jobs/"+job+"/detail", http.StatusOK, &d)
	if d.State != string(StateSucceeded) || d.StageCount != 2 || len(d.Graph.Stages) != 2 || len(d.Graph.Edges) != 1 {
		t.Fatalf("detail: state %s, %d stages, graph %+v", d.State, d.StageCount, d.Graph)
	}
	if e := d.Graph.Edges[0]; e.From != 0 || e.To != 1 || e.Label != "hash(x) x2" {
		t.Errorf("edge %+v, want 0 -> 1 labelled hash(x) x2", e)
	}
	for _, s := range d.Graph.Stages {
		if s.State != string(StageDone) {
			t.Errorf("stage %d is %s, want done", s.ID, s.State)
		}
	}
	// 4 scan tasks (one per file) and the result stage's tasks.
	var attempts, retried int
	for _, tk := range d.Tasks {
		for _, a := range tk.Attempts {
			attempts++
			if a.Open == 0 || a.Invoked < a.Open || a.End < a.Invoked {
				t.Errorf("task %d/%d attempt %d: times open %d invoked %d end %d out of order", tk.Stage, tk.Task, a.Attempt, a.Open, a.Invoked, a.End)
			}
		}
		if tk.Stage == 0 && tk.Task == 1 {
			retried++
			if len(tk.Attempts) != 2 || tk.Attempts[0].Outcome != "retrying" || tk.Attempts[1].Outcome != "committed" || tk.Committed != 2 {
				t.Errorf("retried task: %+v", tk)
			}
		}
	}
	if retried != 1 || d.Invoked != attempts || attempts != 6 {
		t.Errorf("retried %d, invoked %d, attempts %d", retried, d.Invoked, attempts)
	}
	st0 := d.Stages[0]
	if st0.Retries != 1 || st0.Tasks != 4 || st0.P50 < 0 || st0.P90 < st0.P50 || st0.Max < st0.P90 || len(st0.Objects) != 8 {
		t.Errorf("stage 0 row: %+v", st0)
	}
	// Round 0 is the plan as submitted; the round after stage 0 coalesced
	// the two tiny partitions of stage 1 into one task.
	if len(d.Rounds) < 2 || d.Rounds[0].Round != 0 || d.Rounds[0].Graph == nil {
		t.Fatalf("rounds: %+v", d.Rounds)
	}
	var coalesced *webui.Round
	for i, r := range d.Rounds {
		if r.Graph == nil {
			t.Errorf("round %d has no graph", r.Round)
		}
		if len(r.Fired) > 0 {
			coalesced = &d.Rounds[i]
		}
	}
	if coalesced == nil || len(coalesced.Fired) != 1 || coalesced.Fired[0].Rule != "coalesce-partitions" ||
		len(coalesced.Fired[0].Stages) != 1 || coalesced.Fired[0].Stages[0] != 1 || len(coalesced.After) != 1 || coalesced.After[0] != 0 {
		t.Fatalf("no round coalesced stage 1 after stage 0: %+v", d.Rounds)
	}
	if got := strings.Join(coalesced.Changes[1], ","); got != "tasks 2 → 1" || len(coalesced.Changes) != 1 {
		t.Errorf("the coalescing round changed %v", coalesced.Changes)
	}
	round := strconv.Itoa(coalesced.Round)

	var list []webui.JobSummary
	getJSON(t, srv.URL+"/v1/jobs?detail=1", http.StatusOK, &list)
	if len(list) != 1 || list[0].ID != job || list[0].RulesFired != 1 || list[0].ShuffledBytes != st0.Bytes || list[0].Seconds <= 0 {
		t.Errorf("summaries: %+v", list)
	}

	// The pages.
	page := getBody(t, srv.URL+"/ui/jobs/"+job+"?round="+round, http.StatusOK)
	for _, want := range []string{`data-stage="0"`, `data-stage="1"`, `data-round="` + round + `"`, "coalesce-partitions",
		`data-outcome="retrying"`, `data-outcome="committed"`, "select x from t"} {
		if !strings.Contains(page, want) {
			t.Errorf("job page lacks %s", want)
		}
	}
	if body := getBody(t, srv.URL+"/ui/", http.StatusOK); !strings.Contains(body, `data-job="`+job+`"`) {
		t.Errorf("jobs list lacks the job")
	}
	if body := getBody(t, srv.URL+"/ui/?state=failed", http.StatusOK); strings.Contains(body, `data-job="`+job+`"`) {
		t.Errorf("the failed filter lists a succeeded job")
	}
	getBody(t, srv.URL+"/ui/jobs/nosuchjob", http.StatusNotFound)
	getBody(t, srv.URL+"/v1/jobs/nosuchjob/detail", http.StatusNotFound)

	// Shuffle objects: a listed one is served; a key outside the job is refused.
	obj := st0.Objects[0]
	if body := getBody(t, srv.URL+"/v1/jobs/"+job+"/objects?key="+url.QueryEscape(obj.Key), http.StatusOK); body != "x" {
		t.Errorf("object %s: %q", obj.Key, body)
	}
	getBody(t, srv.URL+"/v1/jobs/"+job+"/objects?key="+url.QueryEscape("tables/t/f00000.parquet"), http.StatusBadRequest)
}

func getJSON(t *testing.T, u string, code int, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(getBody(t, u, code)), v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

func getBody(t *testing.T, u string, code int) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != code {
		t.Fatalf("GET %s: %d, want %d: %s", u, resp.StatusCode, code, b)
	}
	return string(b)
}

// TestJobDetailFailed: a job failed by a user error shows the error with
// its code, the failed attempt on the timeline, and the stage that never
// ran as pending.
func TestJobDetailFailed(t *testing.T) {
	e := newFakeEnv(t, 2)
	e.inv.behave = func(ctx context.Context, spec *function.TaskSpec) (*function.TaskResult, error, bool) {
		if spec.Stage == 0 && spec.Task == 1 {
			return &function.TaskResult{Job: spec.Job, Stage: spec.Stage, Task: spec.Task, Attempt: spec.Attempt,
				Fence: spec.Fence, Error: "division by zero", Code: "SL104", Kind: function.ErrUser}, nil, true
		}
		return nil, nil, false
	}
	c := e.coordinator(t, testConfig("c1"))
	job, err := c.Submit(context.Background(), "select 1/0 from t", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := waitJob(t, c, job); m.State != StateFailed {
		t.Fatalf("job %s, want failed", m.State)
	}
	srv := httptest.NewServer(NewAPI(c).Handler())
	defer srv.Close()
	var d webui.JobDetail
	getJSON(t, srv.URL+"/v1/jobs/"+job+"/detail", http.StatusOK, &d)
	if d.Code != "SL104" || !strings.Contains(d.Error, "division by zero") {
		t.Errorf("error %q, code %q", d.Error, d.Code)
	}
	var outcomes []string
	for _, tk := range d.Tasks {
		if tk.Stage == 0 && tk.Task == 1 {
			for _, a := range tk.Attempts {
				outcomes = append(outcomes, a.Outcome)
			}
		}
	}
	if strings.Join(outcomes, ",") != "failed" {
		t.Errorf("failed task's attempts: %v, want [failed]", outcomes)
	}
	if s := d.Stages[1]; s.State != string(StagePending) {
		t.Errorf("stage 1 is %s, want pending", s.State)
	}
	page := getBody(t, srv.URL+"/ui/jobs/"+job, http.StatusOK)
	for _, want := range []string{`<span class="code">SL104</span>`, `data-outcome="failed"`, `data-stage="1" data-state="pending"`} {
		if !strings.Contains(page, want) {
			t.Errorf("job page lacks %s", want)
		}
	}
	if body := getBody(t, srv.URL+"/ui/?state=failed", http.StatusOK); !strings.Contains(body, `data-job="`+job+`"`) || !strings.Contains(body, "SL104") {
		t.Errorf("the failed filter does not list the failed job with its code")
	}
}

// TestJobDetailHedge: a straggling attempt gets a duplicate that commits;
// the view marks the duplicate as a hedge and the straggler, which never
// reported, as cancelled when the duplicate committed.
func TestJobDetailHedge(t *testing.T) {
	e := newFakeEnv(t, 4)
	e.inv.behave = func(ctx context.Context, spec *function.TaskSpec) (*function.TaskResult, error, bool) {
		if spec.Stage == 0 && spec.Task == 3 && spec.Attempt == 1 {
			<-ctx.Done() // a straggler, until the duplicate wins
			return nil, ctx.Err(), true
		}
		return nil, nil, false
	}
	cfg := testConfig("c1")
	cfg.HedgeFactor = 3
	cfg.HedgeAfter = 20 * time.Millisecond
	c := e.coordinator(t, cfg)
	job, err := c.Submit(context.Background(), "select x from t", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := waitJob(t, c, job); m.State != StateSucceeded {
		t.Fatalf("job %s: %s", m.State, m.Error)
	}
	d, err := c.store.JobDetail(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range d.Tasks {
		hedged := tk.Stage == 0 && tk.Task == 3
		if !hedged {
			if len(tk.Attempts) != 1 || tk.Attempts[0].Hedge || tk.Attempts[0].Outcome != "committed" {
				t.Errorf("task %d/%d: %+v", tk.Stage, tk.Task, tk.Attempts)
			}
			continue
		}
		if len(tk.Attempts) != 2 {
			t.Fatalf("hedged task: %+v", tk.Attempts)
		}
		first, dup := tk.Attempts[0], tk.Attempts[1]
		if first.Outcome != "cancelled" || first.Hedge || first.End != dup.End {
			t.Errorf("straggler %+v, want cancelled when the duplicate (%+v) committed", first, dup)
		}
		if dup.Outcome != "committed" || !dup.Hedge || tk.Committed != 2 {
			t.Errorf("duplicate %+v, want a committed hedge", dup)
		}
	}
}
