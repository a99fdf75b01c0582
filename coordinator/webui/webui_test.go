package webui

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fixedSource serves views held in memory (the coordinator's Store is
// tested against Redis in package coordinator; here the pages are).
type fixedSource struct{ jobs []JobDetail }

func (f fixedSource) JobSummaries(ctx context.Context, n int64) ([]JobSummary, error) {
	var out []JobSummary
	for _, j := range f.jobs {
		out = append(out, j.JobSummary)
	}
	return out, nil
}

func (f fixedSource) JobDetail(ctx context.Context, id string) (*JobDetail, error) {
	for i := range f.jobs {
		if f.jobs[i].ID == id {
			return &f.jobs[i], nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
}

// A running three-stage job: stage 0 done, stage 1 running with a hedged
// task whose first attempt was cancelled, stage 2 pending; one round that
// coalesced stage 2.
func runningJob() JobDetail {
	g := func(states ...string) *Graph {
		return &Graph{Result: 2, Stages: []GraphStage{
			{ID: 0, Ops: "scan t", Output: "hash(#0) x4", State: states[0]},
			{ID: 1, Ops: "scan u", Output: "hash(#0) x4", State: states[1]},
			{ID: 2, Ops: "hash join ← read s0", Output: "single", State: states[2], Tasks: 1},
		}, Edges: []Edge{{From: 0, To: 2, Label: "hash(#0) x4"}, {From: 1, To: 2, Label: "hash(#0) x4", Whole: true}}}
	}
	return JobDetail{
		JobSummary: JobSummary{ID: "j1", State: "running", SQL: "select * from t join u using (k)", StageCount: 3,
			Created: "2026-12-01T10:00:00Z", USD: 0.000098,
			Cost: map[string]string{"s3_requests": "42", "s3_get": "40", "s3_put": "2", "cost_gb_seconds": "0.107", "usd": "0.000098"}},
		Graph: g("done", "running", "pending"),
		Rounds: []Round{
			{Round: 0, Graph: g("pending", "pending", "pending")},
			{Round: 1, After: []int{0}, Graph: g("done", "pending", "pending"),
				Fired:   []Fired{{Rule: "coalesce-partitions", Note: "stage 2: 4 partitions -> 1 tasks", Stages: []int{2}}},
				Changes: map[int][]string{2: {"tasks 4 → 1"}}},
		},
		Stages: []Stage{{ID: 0, State: "done", Tasks: 1, TasksDone: 1, P50: 0.1, P90: 0.1, Max: 0.1, PeakMemory: 3 << 20,
			PhaseSum: &Phases{Queue: 0.25, Startup: 0.012, Read: 0.5, Compute: 0.125, Write: 0.03, Commit: 0.04},
			PhaseMax: &Phases{Queue: 0.25, Startup: 0.012, Read: 0.5, Compute: 0.125, Write: 0.03, Commit: 0.04},
			Operators: []Operator{{Node: -1, Kind: "shuffle_write", Text: "ShuffleWriter: hash(#0) x4", Tasks: 1, Rows: 10, Batches: 1, Bytes: 2048},
				{Node: 0, Depth: 1, Kind: "scan", Text: "Scan: t format=parquet columns=[k]", Tasks: 1, Rows: 12345, Batches: 2, Bytes: 4096, Compute: 0.5}},
			Objects: []Object{{Partitions: []int{0}, Key: "jobs/j1/stage-0/task-0/a1/part-0.arrow", Bytes: 2048, Rows: 10}}},
			{ID: 1, State: "running", Tasks: 1}, {ID: 2, State: "pending"}},
		Tasks: []Task{
			{Stage: 0, Task: 0, State: "done", Committed: 1, Attempts: []Attempt{{Attempt: 1, Open: 1000, Invoked: 1100, End: 1500, Outcome: "committed"}}},
			{Stage: 1, Task: 0, State: "running", Attempts: []Attempt{
				{Attempt: 1, Open: 1500, Invoked: 1500, Outcome: "running"},
				{Attempt: 2, Open: 2500, Invoked: 2600, Outcome: "running", Hedge: true}}},
		},
		Now: 3000,
	}
}

func get(t *testing.T, h http.Handler, path string, code int) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	b, _ := io.ReadAll(rec.Body)
	if rec.Code != code {
		t.Fatalf("GET %s: %d, want %d: %s", path, rec.Code, code, b)
	}
	return string(b)
}

func TestPages(t *testing.T) {
	h := New(fixedSource{jobs: []JobDetail{runningJob()}}, nil).Handler()
	tests := []struct {
		path string
		code int
		want []string
		not  []string
	}{
		{"/ui/", 200, []string{`data-job="j1"`, `data-live="1"`, `<td class="num cost" title="0.107 GB-s · 42 S3 requests (40 GET, 2 PUT)">$0.000098</td>`,
			`<td class="sql" title="select * from t join u using (k)">select * from t join u using (k)</td>`, `running <b>1</b>`}, []string{"s3_requests="}},
		{"/ui/?state=succeeded", 200, []string{"No succeeded jobs."}, []string{`data-job="j1"`}},
		{"/ui/?q=JOIN+U", 200, []string{`data-job="j1"`, `value="JOIN U"`}, nil},
		{"/ui/?q=nosuch", 200, []string{"No jobs matching “nosuch”."}, []string{`data-job="j1"`}},
		{"/ui/jobs/j1", 200, []string{
			`data-live="1"`,
			`class="node st-done" data-stage="0"`, `class="node st-running" data-stage="1"`, `data-stage="2" data-state="pending"`,
			`class="e-label" data-stage="0"`, "read whole", // the broadcast read of stage 1
			`<a href="#stage-1" class="node-link">`, `id="stage-1"`, // nodes link to their stage
			`data-round="compare"`, `data-round="0"`, `data-round="1"`,
			`data-rule="coalesce-partitions" data-stages="2"`, "tasks 4 → 1",
			`class="node st-pending changed result" data-stage="2"`, // highlighted in round 1
			`data-attempt="2" data-outcome="running"`, `attempt a-running hedge`,
			"3.0 MiB",                                                            // peak memory column
			`data-node="0" data-kind="scan"`, "12,345", "Scan: t format=parquet", // operator metrics
			"queue 250 ms, startup 12 ms, read 500 ms", // phase breakdown
			"/v1/jobs/j1/objects?key=jobs%2Fj1%2Fstage-0%2Ftask-0%2Fa1%2Fpart-0.arrow", "2.0 KiB",
			"$0.000098", `<details class="sql-box" id="sql-box">`, // cost in $, SQL collapsed
			`data-objects="1"`, `id="task-table"`, `id="settings"`,
		}, []string{"cost_gb_seconds", "<details class=\"sql-box\" id=\"sql-box\" open"}},
		{"/ui/jobs/nosuch", 404, []string{"job not found"}, nil},
		{"/ui/static/ui.js", 200, []string{"data-live"}, nil},
		{"/ui/static/ui.css", 200, []string{".node.st-done"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			body := get(t, h, tc.path, tc.code)
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("lacks %q", w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(body, w) {
					t.Errorf("has %q", w)
				}
			}
		})
	}
}

func TestLayoutGraph(t *testing.T) {
	d := runningJob()
	l := layoutGraph(d.Graph, map[int][]string{2: {"added"}})
	pos := map[int]svgNode{}
	for _, n := range l.Nodes {
		pos[n.Stage.ID] = n
	}
	// Scans in the first layer, stacked; the join to their right, centred.
	if pos[0].X != pos[1].X || pos[0].Y == pos[1].Y || pos[2].X != pos[0].X+layerDX {
		t.Errorf("positions %+v", pos)
	}
	if pos[2].Y != (pos[0].Y+pos[1].Y)/2 || !pos[2].Result || len(pos[2].Changed) != 1 {
		t.Errorf("result node %+v", pos[2])
	}
	if len(l.Edges) != 2 || l.Edges[1].Note != "read whole" || l.W != 2*margin+layerDX+nodeW || l.H != 2*margin+rowDY+nodeH+14 {
		t.Errorf("edges %+v, size %dx%d", l.Edges, l.W, l.H)
	}
	// Two inputs of one stage arrive at two ports; the partitioning is
	// written once per source, left of where its edges leave.
	if l.Edges[0].Path[len(l.Edges[0].Path)-3:] == l.Edges[1].Path[len(l.Edges[1].Path)-3:] || len(l.Labels) != 2 ||
		l.Labels[0].X != pos[0].X+nodeW+6 {
		t.Errorf("ports or labels: edges %+v labels %+v", l.Edges, l.Labels)
	}
	if e := layoutGraph(nil, nil); len(e.Nodes) != 0 {
		t.Errorf("empty graph drew %d nodes", len(e.Nodes))
	}
}

func TestLayoutTimeline(t *testing.T) {
	d := runningJob()
	tl := layoutTimeline(d.Tasks, d.Now)
	if len(tl.Rows) != 2 || tl.Span != 2 {
		t.Fatalf("rows %d, span %v", len(tl.Rows), tl.Span)
	}
	first, hedge := tl.Rows[0].Bars[0], tl.Rows[1].Bars[1]
	// The first attempt starts at the left edge; the running hedge runs to now (the right edge).
	if first.QX != tlLeft || first.X <= first.QX || hedge.X+hedge.W != tlWidth-8 || !hedge.Attempt.Hedge {
		t.Errorf("bars %+v %+v", first, hedge)
	}
	if len(tl.Ticks) < 2 || tl.Ticks[0].Label != "0s" {
		t.Errorf("ticks %+v", tl.Ticks)
	}
	if empty := layoutTimeline(nil, 0); len(empty.Rows) != 0 {
		t.Errorf("no tasks drew %d rows", len(empty.Rows))
	}
}

func TestHumanize(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{humanBytes(0), "0 B"}, {humanBytes(1023), "1023 B"}, {humanBytes(1536), "1.5 KiB"}, {humanBytes(5 << 30), "5.0 GiB"},
		{humanSeconds(0), "–"}, {humanSeconds(0.25), "250 ms"}, {humanSeconds(3.5), "3.50 s"}, {humanSeconds(125), "2m05s"},
		{commaInt(1234567), "1,234,567"}, {commaInt(-1000), "-1,000"}, {commaInt(12), "12"},
		{humanTime("2026-12-01T10:26:24.715675209Z"), "2026-12-01 10:26:24"}, {humanTime("bad"), "bad"},
		{usd(-1), "–"}, {usd(0), "$0"}, {usd(0.4234), "$0.42"}, {usd(0.000098), "$0.000098"}, {usd(0.00012345), "$0.00012"},
		{firstLine("\n  select a,\n b from t"), "select a, …"}, {firstLine("select 1"), "select 1"},
		{skipWord("inlined into stage 4"), "inlined"}, {skipWord("fused into stage 2"), "fused"}, {skipWord("empty input"), "skipped"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestListPaging: 120 jobs page 50 at a time, newest first, and the
// search keeps its place across pages.
func TestListPaging(t *testing.T) {
	var jobs []JobDetail
	for i := range 120 {
		sql := "select 1"
		if i%2 == 0 {
			sql = "select * from lineitem"
		}
		jobs = append(jobs, JobDetail{JobSummary: JobSummary{ID: fmt.Sprintf("j%03d", i), State: "succeeded", SQL: sql, USD: -1}})
	}
	h := New(fixedSource{jobs: jobs}, nil).Handler()
	for _, tc := range []struct {
		path, first, last, pager string
	}{
		{"/ui/", "j000", "j049", `1–50 of 120`},
		{"/ui/?page=3", "j100", "j119", `101–120 of 120`},
		{"/ui/?page=99", "j100", "j119", `101–120 of 120`},
		{"/ui/?q=lineitem&page=2", "j100", "j118", `51–60 of 60 (of 120 jobs)`},
	} {
		body := get(t, h, tc.path, 200)
		rows := strings.Count(body, `<tr data-job="`)
		i, j := strings.Index(body, `<tr data-job="`), strings.LastIndex(body, `<tr data-job="`)
		first, last := body[i+14:i+18], body[j+14:j+18]
		if first != tc.first || last != tc.last || !strings.Contains(body, tc.pager) || rows == 0 {
			t.Errorf("%s: rows %s..%s (%d), pager %q missing?", tc.path, first, last, rows, tc.pager)
		}
	}
	if body := get(t, h, "/ui/?q=lineitem", 200); !strings.Contains(body, `href="/ui/?page=2&amp;q=lineitem" rel="next"`) {
		t.Errorf("next page link lost the search")
	}
}

// TestLayoutMoved: a stage inlined into its reader stands left of it,
// tied by a dashed "inlined" edge that carries no partitioning label.
func TestLayoutMoved(t *testing.T) {
	g := &Graph{Result: 2, Stages: []GraphStage{
		{ID: 0, State: "skipped", Reason: "inlined into stage 1", Main: "scan", Tables: []string{"region"}},
		{ID: 1, State: "done", Main: "hash join", Tables: []string{"nation"}},
		{ID: 2, State: "done", Main: "agg final"},
	}, Edges: []Edge{{From: 1, To: 2, Label: "hash(#0) x8"}}}
	l := layoutGraph(g, nil)
	x := map[int]int{}
	for _, n := range l.Nodes {
		x[n.Stage.ID] = n.X
	}
	if !(x[0] < x[1] && x[1] < x[2]) {
		t.Errorf("x positions %v, want 0 left of 1 left of 2", x)
	}
	var moved []string
	for _, e := range l.Edges {
		if e.Moved != "" {
			moved = append(moved, fmt.Sprintf("%d->%d %s", e.From, e.To, e.Note))
		}
	}
	if len(moved) != 1 || moved[0] != "0->1 inlined" || len(l.Labels) != 1 || l.Labels[0].Stage != 1 {
		t.Errorf("moved edges %v, labels %+v", moved, l.Labels)
	}
	body := get(t, New(fixedSource{jobs: []JobDetail{{JobSummary: JobSummary{ID: "j", State: "succeeded", USD: -1}, Graph: g}}}, nil).Handler(), "/ui/jobs/j", 200)
	for _, w := range []string{`class="node st-skipped sk-inlined" data-stage="0"`, `inlined → stage 1</text>`, `read by the tasks of stage 1`, `class="edge moved"`} {
		if !strings.Contains(body, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}
