package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/coordinator/webui"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/local"
)

// chromiumPath returns the headless browser the web UI tests drive
// (Debian's chromium package), skipping the test when there is none.
func uiChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SLUICE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (apt-get install -y chromium)")
	return ""
}

// browser starts a headless Chromium with a fresh profile and a
// 1400x1000 window.
func uiBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(uiChromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser, for the life of ctx
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// artifact returns the path of a test artifact under the repo's .tmp.
func uiArtifact(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".tmp", "webui"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// TestWebUIJobPage runs a multi-stage TPC-H join on the embedded stack
// (the planner partitions the join, the re-planner broadcasts the small
// side), checks its answer against DuckDB, then loads the jobs list and
// the job page in a real headless Chromium and checks what the page shows
// against the job's recorded status: one graph node per stage in its
// state, the re-planning rounds with the rules that fired, one timeline
// bar per attempt. Screenshots are saved under .tmp/webui/.
func TestWebUIJobPage(t *testing.T) {
	ctx := uiBrowser(t)
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", func(o *local.Options) {
		o.BroadcastBytes = -1 // the planner never broadcasts
		o.Coordinator.AQE.BroadcastBytes = 1 << 20
		o.Coordinator.DeferProbeRatio = 2
	})
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	q := `select o_orderpriority, count(*) as n, sum(l_quantity) as q from lineitem, orders
		where l_orderkey = o_orderkey and o_totalprice > 300000 group by o_orderpriority order by o_orderpriority`
	res := run(t, st, q, true)
	compareRows(t, sluiceRows(res), duckRows(t, db, q), true)
	js := res.Status
	if len(js.Stages) < 3 {
		t.Fatalf("want a multi-stage plan, got %d stages", len(js.Stages))
	}
	wantRules := map[string]bool{}
	for _, r := range js.Rounds {
		for _, f := range r.Fired {
			wantRules[f.Rule] = true
		}
	}
	if !wantRules["select-join"] {
		t.Fatalf("select-join did not fire: %+v", js.Rounds)
	}
	attempts := 0
	for _, s := range js.Stages {
		attempts += s.Attempts
	}

	// The jobs list.
	if err := uiDo(ctx, chromedp.Navigate(st.APIURL+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`tr[data-job="`+res.Job+`"]`))); err != nil {
		t.Fatalf("jobs list: %v", err)
	}
	listed, err := uiEval[[]string](ctx, `[...document.querySelectorAll("tr[data-job]")].map(r => r.dataset.job + "/" + r.dataset.state)`)
	if err != nil {
		t.Fatalf("jobs list: %v", err)
	}
	if len(listed) != 1 || listed[0] != res.Job+"/succeeded" {
		t.Errorf("jobs list shows %v, want [%s/succeeded]", listed, res.Job)
	}
	// The SQL's first line in its cell (all of it on hover), the cost in
	// dollars, no raw cost fields.
	type listRow struct {
		SQL   string `json:"sql"`
		Title string `json:"title"`
		Cost  string `json:"cost"`
		Raw   bool   `json:"raw"`
	}
	lr, err := uiEval[listRow](ctx, `(() => { const r = document.querySelector("tr[data-job]"); return {
			sql: r.querySelector("td.sql").textContent, title: r.querySelector("td.sql").title,
			cost: r.querySelector("td.cost").textContent, raw: document.body.textContent.includes("cost_gb_seconds=") }})()`)
	if err != nil {
		t.Fatal(err)
	}
	detail, err := coordinator.NewClient(st.APIURL, "").Detail(context.Background(), res.Job)
	if err != nil {
		t.Fatal(err)
	}
	if want := "select o_orderpriority, count(*) as n, sum(l_quantity) as q from lineitem, orders …"; lr.SQL != want || lr.Title != q {
		t.Errorf("SQL cell %q (title %q), want %q (title the whole SQL)", lr.SQL, lr.Title, want)
	}
	if !uiDollars.MatchString(lr.Cost) || lr.Raw || detail.USD <= 0 {
		t.Errorf("cost cell %q (raw fields shown: %v), want dollars of the job's $%v", lr.Cost, lr.Raw, detail.USD)
	} else if v, _ := strconv.ParseFloat(lr.Cost[1:], 64); math.Abs(v-detail.USD) > 0.05*detail.USD {
		t.Errorf("cost cell %q, the job's cost is $%v", lr.Cost, detail.USD)
	}
	// Search keeps the job for a word of its SQL, drops it for another.
	for _, tc := range []struct {
		q    string
		rows int
	}{{"O_ORDERPRIORITY", 1}, {"no such text", 0}} {
		if err := uiDo(ctx, chromedp.SetValue(chromedp.CSS(`#search input[name=q]`), tc.q), chromedp.Submit(chromedp.CSS(`#search input[name=q]`)),
			chromedp.WaitVisible(chromedp.CSS(`#search input[name=q]`))); err != nil {
			t.Fatal(err)
		}
		n, err := uiEval[int](ctx, `document.querySelectorAll("tr[data-job]").length`)
		if err != nil || n != tc.rows {
			t.Errorf("search %q: %d rows (%v), want %d", tc.q, n, err, tc.rows)
		}
	}
	if err := uiDo(ctx, chromedp.Navigate(st.APIURL+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`tr[data-job="`+res.Job+`"]`))); err != nil {
		t.Fatal(err)
	}
	// Every column fits the card on a laptop screen and a wide one (the
	// SQL column takes the room left, its text cut with an ellipsis).
	for _, w := range []int64{1024, 1400} {
		if err := uiDo(ctx, chromedp.EmulateViewport(w, 800), chromedp.Navigate(st.APIURL+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`#jobs`))); err != nil {
			t.Fatal(err)
		}
		over, err := uiEval[int](ctx, `(() => { const t = document.getElementById("jobs"); return t.scrollWidth - t.parentElement.clientWidth })()`)
		if err != nil || over > 0 {
			t.Errorf("at %d px the jobs table is %d px wider than its card (%v)", w, over, err)
		}
	}
	uiScreenshot(t, ctx, "jobs.png")

	// The job page.
	type pageView struct {
		Nodes    []string `json:"nodes"` // "id:state" of the current graph
		Tabs     []string `json:"tabs"`
		Rules    []string `json:"rules"`
		Attempts int      `json:"attempts"`
		Rows     int      `json:"rows"`
		Code     string   `json:"code"`
		// OpStages are "stage:rows written" of the operator tables.
		OpStages []string `json:"op_stages"`
	}
	if err := uiDo(ctx, chromedp.Navigate(st.APIURL+"/ui/jobs/"+res.Job), chromedp.WaitVisible(chromedp.CSS(`#graph-now svg .node[data-stage]`))); err != nil {
		t.Fatalf("job page: %v", err)
	}
	pv, err := uiEval[pageView](ctx, `({
			nodes: [...document.querySelectorAll("#graph-now .node[data-stage]")].map(n => n.dataset.stage + ":" + n.dataset.state),
			tabs: [...document.querySelectorAll("#rounds .tab")].map(b => b.dataset.round),
			rules: [...new Set([...document.querySelectorAll("#rounds li.rule")].map(l => l.dataset.rule))],
			attempts: document.querySelectorAll("#timeline .attempt").length,
			rows: document.querySelectorAll("#stages tbody tr").length,
			op_stages: [...document.querySelectorAll("#operators details.ops")].map(d =>
				d.dataset.stage + ":" + d.querySelector('tr[data-node="-1"] td:nth-child(3)').textContent.replaceAll(",", "")),
		})`)
	if err != nil {
		t.Fatalf("job page: %v", err)
	}
	var want []string
	for _, s := range js.Stages {
		state := string(s.State)
		if state == "skipped" && s.Tasks > 0 {
			state = "cancelled"
		}
		want = append(want, strconv.Itoa(s.ID)+":"+state)
	}
	sort.Strings(want)
	sort.Strings(pv.Nodes)
	if !slices.Equal(pv.Nodes, want) {
		t.Errorf("graph nodes %v, want %v", pv.Nodes, want)
	}
	if pv.Rows != len(js.Stages) {
		t.Errorf("stage table has %d rows, want %d", pv.Rows, len(js.Stages))
	}
	// Every stage that ran has its operator table, whose shuffle writer
	// wrote the stage's rows.
	var wantOps []string
	for _, s := range js.Stages {
		if s.Metrics != nil {
			wantOps = append(wantOps, strconv.Itoa(s.ID)+":"+strconv.FormatInt(s.Rows, 10))
		}
	}
	if len(wantOps) == 0 || !slices.Equal(pv.OpStages, wantOps) {
		t.Errorf("operator tables %v, want %v", pv.OpStages, wantOps)
	}
	// "compare", round 0 (as submitted), then every re-planning round.
	if len(pv.Tabs) != len(js.Rounds)+2 || pv.Tabs[0] != "compare" || pv.Tabs[1] != "0" {
		t.Errorf("round tabs %v, want compare, 0 and %d rounds", pv.Tabs, len(js.Rounds))
	}
	got := map[string]bool{}
	for _, r := range pv.Rules {
		got[r] = true
	}
	if len(got) != len(wantRules) {
		t.Errorf("rules on the page %v, want %v", pv.Rules, wantRules)
	}
	for r := range wantRules {
		if !got[r] {
			t.Errorf("rule %s fired but is not on the page", r)
		}
	}
	if pv.Attempts != attempts {
		t.Errorf("timeline has %d attempts, want %d", pv.Attempts, attempts)
	}

	// Selecting the round where select-join fired shows its graph with the
	// changed stages highlighted.
	round := -1
	for _, r := range js.Rounds {
		for _, f := range r.Fired {
			if f.Rule == "select-join" && round < 0 {
				round = r.Round
			}
		}
	}
	type panelView struct {
		Panel   string   `json:"panel"`
		Rules   []string `json:"rules"`
		Changed int      `json:"changed"`
		Nodes   int      `json:"nodes"`
	}
	if err := uiDo(ctx, chromedp.Click(chromedp.CSS(`#rounds .tab[data-round="`+strconv.Itoa(round)+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#rounds .round-panel.on[data-panel="`+strconv.Itoa(round)+`"]`))); err != nil {
		t.Fatalf("select round %d: %v", round, err)
	}
	shown, err := uiEval[panelView](ctx, `(() => { const p = document.querySelector("#rounds .round-panel.on"); return {
			panel: p.dataset.panel,
			rules: [...p.querySelectorAll("li.rule")].map(l => l.dataset.rule),
			changed: p.querySelectorAll(".node.changed").length,
			nodes: p.querySelectorAll(".node[data-stage]").length,
		}})()`)
	if err != nil {
		t.Fatalf("select round %d: %v", round, err)
	}
	if shown.Panel != strconv.Itoa(round) || !slices.Contains(shown.Rules, "select-join") || shown.Changed == 0 || shown.Nodes == 0 {
		t.Errorf("round %d panel: %+v", round, shown)
	}
	uiScreenshot(t, ctx, "job-round.png")
	checkJobPageItems(t, ctx, st, res.Job, detail, js)
	if err := uiDo(ctx, chromedp.Click(chromedp.CSS(`#rounds .tab[data-round="compare"]`))); err != nil {
		t.Fatal(err)
	}
	uiScreenshot(t, ctx, "job.png")

	// A laptop screen: the page fits its width (wide tables scroll inside
	// their cards) and the round graphs stack.
	if err := uiDo(ctx, chromedp.EmulateViewport(1024, 700), chromedp.Navigate(st.APIURL+"/ui/jobs/"+res.Job),
		chromedp.WaitVisible(chromedp.CSS(`#graph-now svg .node[data-stage]`))); err != nil {
		t.Fatal(err)
	}
	overflow, err := uiEval[int](ctx, `document.documentElement.scrollWidth - window.innerWidth`)
	if err != nil {
		t.Fatal(err)
	}
	if overflow > 0 {
		t.Errorf("at 1024 px the page is %d px too wide", overflow)
	}
	uiScreenshot(t, ctx, "job-laptop.png")
}

func uiScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := uiArtifact(t, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// uiScreenshotView saves what the window shows (the first screen).
func uiScreenshotView(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := uiArtifact(t, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// uiDo runs browser steps with a timeout (derived from the browser's
// context, which lives on).
func uiDo(ctx context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return chromedp.Do(ctx, steps...)
}

// uiEval evaluates a JavaScript expression in the page.
func uiEval[T any](ctx context.Context, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr))
}

// gatedInvoker holds every invocation of a task that reads exchanges (a
// stage after the scans) until open is closed.
type gatedInvoker struct {
	next coordinator.Invoker
	open chan struct{}
}

func (g *gatedInvoker) Invoke(ctx context.Context, body []byte) ([]byte, error) {
	spec, err := function.DecodeSpec(body)
	if err == nil && len(spec.Inputs) > 0 {
		select {
		case <-g.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.next.Invoke(ctx, body)
}

// TestWebUILiveUpdates opens the page of a job held after its scan
// stages, sees it running (live badge, a done scan stage, running tasks on
// the timeline), lets the job go on and watches the same page, never
// reloaded, turn to succeeded with every stage done.
func TestWebUILiveUpdates(t *testing.T) {
	ctx := uiBrowser(t)
	dir := dataDir(t, *sfFlag)
	gate := &gatedInvoker{open: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(gate.open) }) }
	t.Cleanup(release)
	st := startStack(t, "", func(o *local.Options) {
		o.WrapInvoker = func(inv coordinator.Invoker) coordinator.Invoker { gate.next = inv; return gate }
	})
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	cl := coordinator.NewClient(st.APIURL, "")
	on := true
	job, err := cl.Submit(context.Background(), `select n_name, count(*) as n from nation, region
		where n_regionkey = r_regionkey group by n_name`, &on)
	if err != nil {
		t.Fatal(err)
	}
	// The page while the job is held: some stage done, some running.
	if err := uiDo(ctx, chromedp.Navigate(coordinator.UIURL(st.APIURL, job)),
		chromedp.WaitVisible(chromedp.CSS(`#summary[data-state="running"]`))); err != nil {
		t.Fatalf("job page: %v", err)
	}
	type liveView struct {
		State   string   `json:"state"`
		Live    bool     `json:"live"`
		Nodes   []string `json:"nodes"`
		Running int      `json:"running"`
	}
	const view = `({
		state: document.querySelector("#summary").dataset.state,
		live: !document.getElementById("live").hidden,
		nodes: [...document.querySelectorAll("#graph-now .node[data-stage]")].map(n => n.dataset.state),
		running: document.querySelectorAll('#timeline .attempt[data-outcome="running"]').length,
	})`
	var before liveView
	deadline := time.Now().Add(time.Minute)
	for {
		before, err = uiEval[liveView](ctx, view)
		if err != nil {
			t.Fatal(err)
		}
		// Refreshed by the page itself until a downstream task is in flight.
		if before.Running > 0 && slices.Contains(before.Nodes, "done") || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if before.State != "running" || !before.Live || !slices.Contains(before.Nodes, "done") ||
		!slices.Contains(before.Nodes, "running") || before.Running == 0 {
		t.Fatalf("held job's page: %+v", before)
	}
	// Each node counts its tasks done of planned, as the status does
	// while the job is held (the page refreshed itself since the last
	// change: the held tasks cannot commit).
	time.Sleep(2500 * time.Millisecond)
	held, err := cl.Status(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := uiEval[map[string]string](ctx, `Object.fromEntries([...document.querySelectorAll("#graph-now .node[data-stage]")].map(n =>
		[n.dataset.stage, n.dataset.state + " " + n.querySelector(".n-tasks").textContent]))`)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range held.Stages {
		if s.State != "running" && s.State != "done" {
			continue
		}
		if want := fmt.Sprintf("%s %d/%d tasks", s.State, s.TasksDone, s.Tasks); counts[strconv.Itoa(s.ID)] != want {
			t.Errorf("held job: node %d shows %q, the status %q", s.ID, counts[strconv.Itoa(s.ID)], want)
		}
	}
	uiScreenshot(t, ctx, "job-running.png")

	release()
	if err := uiDo(ctx, chromedp.WaitVisible(chromedp.CSS(`#summary[data-state="succeeded"]`))); err != nil {
		t.Fatalf("the page did not turn to succeeded by itself: %v", err)
	}
	after, err := uiEval[liveView](ctx, view)
	if err != nil {
		t.Fatal(err)
	}
	js, err := cl.Status(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if after.Live || after.Running != 0 || len(after.Nodes) != len(js.Stages) {
		t.Errorf("finished job's page: %+v (status has %d stages)", after, len(js.Stages))
	}
	for _, s := range after.Nodes {
		if s != "done" && s != "skipped" {
			t.Errorf("finished job's page shows a stage %s: %v", s, after.Nodes)
		}
	}
}

// TestJobsShowJSON: `sluice jobs show --json` prints the same view the
// job page is rendered from (GET /v1/jobs/{id}/detail).
func TestJobsShowJSON(t *testing.T) {
	bin := buildSluice(t)
	dir := dataDir(t, *sfFlag)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	res := run(t, st, `select r_name, count(*) as n from nation, region where n_regionkey = r_regionkey group by r_name`, true)
	out, errOut, code := runCLI(t, bin, t.TempDir(), nil, "jobs", "show", "--json", "--coordinator", st.APIURL, res.Job)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var cli webui.JobDetail
	if err := json.Unmarshal([]byte(out), &cli); err != nil {
		t.Fatalf("decode jobs show --json: %v\n%s", err, out)
	}
	api, err := coordinator.NewClient(st.APIURL, "").Detail(context.Background(), res.Job)
	if err != nil {
		t.Fatal(err)
	}
	cli.Now, api.Now = 0, 0
	if !reflect.DeepEqual(&cli, api) {
		t.Errorf("jobs show --json differs from GET /v1/jobs/{id}/detail:\n%s", out)
	}
	if cli.ID != res.Job || cli.State != "succeeded" || len(cli.Stages) != len(res.Status.Stages) ||
		len(cli.Rounds) != len(res.Status.Rounds)+1 || len(cli.Tasks) == 0 {
		t.Errorf("jobs show --json: %d stages, %d rounds, %d tasks; status has %d stages, %d rounds",
			len(cli.Stages), len(cli.Rounds), len(cli.Tasks), len(res.Status.Stages), len(res.Status.Rounds))
	}
}

// uiDollars is how the UI prints a cost: "$0.42", "$0.000098".
var uiDollars = regexp.MustCompile(`^\$(0|[1-9]\d*)\.(\d\d|0*[1-9]\d?)$`)

// checkJobPageItems checks the job page of a finished job against the
// job's records (GET /v1/jobs/{id}/detail and the status) and the bucket
// (`sluice shuffle ls`): the page opens on the summary and the graph
// with the SQL folded; nodes name their tables and main operators and
// count their tasks; the per-task table sorts; the per-stage byte
// quantiles; the settings; and the objects counted as shuffle ls lists
// them.
func checkJobPageItems(t *testing.T, ctx context.Context, st *local.Stack, job string, detail *webui.JobDetail, js *coordinator.JobStatus) {
	t.Helper()
	if err := uiDo(ctx, chromedp.EmulateViewport(1400, 1000), chromedp.Navigate(st.APIURL+"/ui/jobs/"+job),
		chromedp.WaitVisible(chromedp.CSS(`#graph-now svg .node[data-stage]`))); err != nil {
		t.Fatal(err)
	}
	uiScreenshotView(t, ctx, "job-first-screen.png")
	type first struct {
		SQLOpen  bool     `json:"sql_open"`
		SQLShown bool     `json:"sql_shown"`
		Summary  string   `json:"summary"`
		GraphTop float64  `json:"graph_top"`
		GraphBot float64  `json:"graph_bottom"`
		Height   float64  `json:"height"`
		Cost     string   `json:"cost"`
		Nodes    []string `json:"nodes"`
		Links    []string `json:"links"`
		Overlaps []string `json:"overlaps"`
	}
	f, err := uiEval[first](ctx, `(() => {
		const g = document.querySelector("#graph-now svg").getBoundingClientRect();
		const texts = [...document.querySelectorAll("#graph-now svg text")].filter(t => t.getBBox().width > 0);
		const overlaps = [];
		for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
			const a = texts[i].getBoundingClientRect(), b = texts[j].getBoundingClientRect();
			if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1)
				overlaps.push(texts[i].textContent + " / " + texts[j].textContent);
		}
		// Node text that runs out of its box.
		document.querySelectorAll("#graph-now .node").forEach(n => {
			const box = n.querySelector("rect").getBoundingClientRect();
			n.querySelectorAll("text").forEach(t => { const r = t.getBoundingClientRect();
				if (r.right > box.right + 0.5) overlaps.push("out of stage " + n.dataset.stage + ": " + t.textContent); });
		});
		return {
			sql_open: document.getElementById("sql-box").open,
			sql_shown: document.getElementById("sql").checkVisibility(),
			summary: document.querySelector("#sql-box summary code").textContent,
			graph_top: g.top, graph_bottom: g.bottom, height: window.innerHeight,
			cost: document.querySelector("#cost b").textContent,
			nodes: [...document.querySelectorAll("#graph-now .node[data-stage]")].map(n =>
				n.dataset.stage + "|" + n.querySelector(".n-main").textContent + "|" + n.querySelector(".n-tables").textContent + "|" + n.querySelector(".n-tasks").textContent),
			links: [...document.querySelectorAll("#graph-now a.node-link")].map(a => a.getAttribute("href")),
			overlaps: overlaps,
		}})()`)
	if err != nil {
		t.Fatal(err)
	}
	if f.SQLOpen || f.SQLShown || !strings.HasPrefix(f.Summary, "select o_orderpriority") {
		t.Errorf("the SQL is not folded: open %v, shown %v, summary %q", f.SQLOpen, f.SQLShown, f.Summary)
	}
	if f.GraphTop <= 0 || f.GraphBot > f.Height {
		t.Errorf("the graph is not on the first screen: %v..%v of %v px", f.GraphTop, f.GraphBot, f.Height)
	}
	if !uiDollars.MatchString(f.Cost) {
		t.Errorf("summary cost %q, want dollars", f.Cost)
	}
	if len(f.Overlaps) > 0 {
		t.Errorf("graph text overlaps: %q", f.Overlaps)
	}
	// The join reads lineitem and broadcasts orders into it: the stage
	// scanning lineitem is the join; the one scanning orders only scans.
	// Every node counts its tasks done of planned, as the status does.
	done := map[int]string{}
	for _, s := range js.Stages {
		if s.State == "done" {
			done[s.ID] = fmt.Sprintf("%d/%d tasks", s.Tasks, s.Tasks)
		}
	}
	var joins, scans int
	for _, n := range f.Nodes {
		p := strings.Split(n, "|")
		id, _ := strconv.Atoi(p[0])
		switch {
		case p[1] == "hash join" && p[2] == "lineitem · reads s1":
			joins++
		case p[1] == "scan" && p[2] == "orders":
			scans++
		}
		if want, ok := done[id]; ok && p[3] != want {
			t.Errorf("node %s: tasks %q, want %q", p[0], p[3], want)
		}
		if !slices.Contains(f.Links, "#stage-"+p[0]) {
			t.Errorf("node %s links nowhere: %v", p[0], f.Links)
		}
	}
	if joins != 1 || scans != 1 {
		t.Errorf("nodes %q: want one \"hash join|lineitem · reads s1\" and one \"scan|orders\"", f.Nodes)
	}
	// A node's link goes to its stage's row.
	if err := uiDo(ctx, chromedp.Click(chromedp.CSS(`#graph-now a.node-link[href="#stage-0"]`))); err != nil {
		t.Fatal(err)
	}
	if h, err := uiEval[string](ctx, `location.hash + ":" + document.querySelector("tr:target").dataset.stage`); err != nil || h != "#stage-0:0" {
		t.Errorf("node link went to %q (%v)", h, err)
	}

	// The task table: every task, sorted by a click on a heading, largest
	// first, then again smallest first.
	var maxIn, minIn int64 = -1, -1
	byStage := map[int][]int64{}
	for _, tk := range detail.Tasks {
		if tk.Committed == 0 {
			continue
		}
		if maxIn < 0 || tk.InputBytes > maxIn {
			maxIn = tk.InputBytes
		}
		if minIn < 0 || tk.InputBytes < minIn {
			minIn = tk.InputBytes
		}
		byStage[tk.Stage] = append(byStage[tk.Stage], tk.InputBytes)
	}
	// The per-task input bytes add up to each stage's, as the stage
	// record counted them at commit.
	for _, s := range js.Stages {
		var sum int64
		for _, b := range byStage[s.ID] {
			sum += b
		}
		if len(byStage[s.ID]) > 0 && sum != s.InputBytes {
			t.Errorf("stage %d: tasks read %d bytes, the stage %d", s.ID, sum, s.InputBytes)
		}
	}
	col := `[...document.querySelectorAll("#task-table thead th")].findIndex(h => h.dataset.key === "input_bytes")`
	sorted := func() []int64 {
		v, err := uiEval[[]int64](ctx, `[...document.querySelectorAll("#task-table tbody tr")].map(r => +r.cells[`+col+`].dataset.v)`)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if n := len(sorted()); n != len(detail.Tasks) {
		t.Errorf("task table has %d rows, the job %d tasks", n, len(detail.Tasks))
	}
	for i, want := range []int64{maxIn, minIn} {
		if err := uiDo(ctx, chromedp.Click(chromedp.CSS(`#task-table th[data-key="input_bytes"]`))); err != nil {
			t.Fatal(err)
		}
		v := sorted()
		ok := len(v) > 0 && v[0] == want
		for j := 1; j < len(v); j++ {
			if (i == 0 && v[j] > v[j-1]) || (i == 1 && v[j] < v[j-1]) {
				ok = false
			}
		}
		if !ok {
			t.Errorf("click %d on input bytes: column %v, want it sorted from %d", i+1, v, want)
		}
	}

	// Quantiles of input bytes per stage: min and max are the stage's
	// smallest and largest task; a one-task stage has all five equal to
	// the stage's input.
	type qrow struct {
		Stage int     `json:"stage"`
		In    []int64 `json:"in"`
		Out   []int64 `json:"out"`
	}
	qs, err := uiEval[[]qrow](ctx, `[...document.querySelectorAll("#skew tbody tr[data-stage]")].map(r => ({stage: +r.dataset.stage,
		in: [...r.querySelectorAll("td.q-in")].map(c => +c.dataset.v), out: [...r.querySelectorAll("td.q-out")].map(c => +c.dataset.v)}))`)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) == 0 {
		t.Errorf("no byte quantiles on the page")
	}
	for _, r := range qs {
		b := slices.Clone(byStage[r.Stage])
		slices.Sort(b)
		if len(r.In) != 5 || len(r.Out) != 5 || len(b) == 0 || r.In[0] != b[0] || r.In[4] != b[len(b)-1] || !slices.IsSorted(r.In) || !slices.IsSorted(r.Out) {
			t.Errorf("stage %d quantiles in %v out %v, tasks read %v", r.Stage, r.In, r.Out, b)
		}
	}

	// The settings it ran with.
	set, err := uiEval[map[string]string](ctx, `Object.fromEntries([...document.querySelectorAll("#settings dl div")].map(d => [d.dataset.name, d.dataset.value]))`)
	if err != nil {
		t.Fatal(err)
	}
	if set["adaptive"] != "true" || set["defer-probe-ratio"] != "2" || set["broadcast-bytes"] != "1048576" {
		t.Errorf("settings %v: want adaptive true, defer-probe-ratio 2, broadcast-bytes 1048576 (as the stack was started)", set)
	}

	// Objects per stage, as `sluice shuffle ls` counts them (manifests
	// aside).
	env := []string{"SLUICE_S3_ENDPOINT=" + st.S3.Endpoint, "SLUICE_S3_BUCKET=" + st.S3.Bucket,
		"AWS_ACCESS_KEY_ID=" + st.S3.AccessKey, "AWS_SECRET_ACCESS_KEY=" + st.S3.SecretKey}
	out, errOut, code := runCLI(t, sluiceBin(t), t.TempDir(), env, "shuffle", "ls", job)
	if code != 0 {
		t.Fatalf("shuffle ls: exit %d: %s", code, errOut)
	}
	listed := map[string]int{}
	for _, line := range strings.Split(out, "\n")[1:] {
		if f := strings.Fields(line); len(f) > 4 && f[3] != "manifest" {
			listed[f[0]]++
		}
	}
	shown, err := uiEval[map[string]int](ctx, `Object.fromEntries([...document.querySelectorAll("#objects details.objs")].map(d => [d.dataset.stage, +d.dataset.objects]))`)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) == 0 || !maps.Equal(listed, shown) {
		t.Errorf("objects per stage on the page %v, shuffle ls lists %v:\n%s", shown, listed, out)
	}
	uiScreenshot(t, ctx, "job-tasks.png")
}

// TestWebUIInlinedStage: a star join whose small tables inline-scans
// reads in their readers' tasks (answer checked against DuckDB). The
// page draws each inlined stage as inlined into its reader, naming the
// table it scans, not as an empty skipped stage.
func TestWebUIInlinedStage(t *testing.T) {
	ctx := uiBrowser(t)
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", func(o *local.Options) { o.Coordinator.PackBytes = 0 })
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	q := `select n_name, count(*) as n, sum(s_acctbal) as bal from supplier join nation on s_nationkey = n_nationkey
		join region on n_regionkey = r_regionkey where r_name <> 'ASIA' group by n_name`
	res := run(t, st, q, true)
	compareRows(t, sluiceRows(res), duckRows(t, db, q), false)
	want := map[string]string{} // stage -> "inlined → stage N"
	for _, s := range res.Status.Stages {
		if into, ok := strings.CutPrefix(s.Reason, "inlined into "); ok {
			want[strconv.Itoa(s.ID)] = "inlined → " + into
		}
	}
	if len(want) == 0 {
		t.Fatalf("inline-scans inlined no stage: %+v", res.Status.Rounds)
	}
	if err := uiDo(ctx, chromedp.Navigate(st.APIURL+"/ui/jobs/"+res.Job), chromedp.WaitVisible(chromedp.CSS(`#graph-now svg .node[data-stage]`))); err != nil {
		t.Fatal(err)
	}
	type node struct {
		Class, State, Main, Tables, Note string
	}
	nodes, err := uiEval[map[string]node](ctx, `Object.fromEntries([...document.querySelectorAll("#graph-now .node.sk-inlined")].map(n => [n.dataset.stage, {
		Class: n.getAttribute("class"), State: n.querySelector(".n-state").textContent, Main: n.querySelector(".n-main").textContent,
		Tables: n.querySelector(".n-tables").textContent, Note: n.querySelector(".n-tasks").textContent}]))`)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != len(want) {
		t.Errorf("inlined nodes %v, want stages %v", nodes, want)
	}
	for id, label := range want {
		n := nodes[id]
		if n.State != label || n.Main != "scan" || (n.Tables != "nation" && n.Tables != "region") || strings.Contains(n.Main+n.Tables, "empty") {
			t.Errorf("stage %s drawn %+v, want %q, scan, its table", id, n, label)
		}
	}
	uiScreenshot(t, ctx, "job-inlined.png")
}

// refusingInvoker refuses every task that reads exchanges (a stage after
// the scans) with "no healthy function endpoint", an outage the job waits
// out, until open is closed; first is when it first refused.
type refusingInvoker struct {
	next  coordinator.Invoker
	open  chan struct{}
	mu    sync.Mutex
	first time.Time
}

func (g *refusingInvoker) Invoke(ctx context.Context, body []byte) ([]byte, error) {
	spec, err := function.DecodeSpec(body)
	if err == nil && len(spec.Inputs) > 0 {
		select {
		case <-g.open:
		default:
			g.mu.Lock()
			if g.first.IsZero() {
				g.first = time.Now()
			}
			g.mu.Unlock()
			return nil, coordinator.ErrNoEndpoint
		}
	}
	return g.next.Invoke(ctx, body)
}

// TestWebUIWaiting: while the functions are unreachable the job waits
// (the outage budget) and the open page, never reloaded, says so within
// 5 s of the first refusal; once they are back the notice goes and the
// job succeeds.
func TestWebUIWaiting(t *testing.T) {
	ctx := uiBrowser(t)
	dir := dataDir(t, *sfFlag)
	gate := &refusingInvoker{open: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(gate.open) }) }
	t.Cleanup(release)
	st := startStack(t, "", func(o *local.Options) {
		o.WrapInvoker = func(inv coordinator.Invoker) coordinator.Invoker { gate.next = inv; return gate }
	})
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	cl := coordinator.NewClient(st.APIURL, "")
	on := true
	job, err := cl.Submit(context.Background(), `select n_name, count(*) as n from nation, region
		where n_regionkey = r_regionkey group by n_name`, &on)
	if err != nil {
		t.Fatal(err)
	}
	if err := uiDo(ctx, chromedp.Navigate(coordinator.UIURL(st.APIURL, job)), chromedp.WaitVisible(chromedp.CSS(`#summary`))); err != nil {
		t.Fatal(err)
	}
	var shown string
	var seen time.Time
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		shown, err = uiEval[string](ctx, `(document.getElementById("waiting") || {}).textContent || ""`)
		if err != nil {
			t.Fatal(err)
		}
		if shown != "" {
			seen = time.Now()
			break
		}
	}
	gate.mu.Lock()
	first := gate.first
	gate.mu.Unlock()
	if shown == "" || first.IsZero() {
		t.Fatalf("the page never showed the job waiting (first refusal at %v)", first)
	}
	if d := seen.Sub(first); d > 5*time.Second || !strings.Contains(shown, "waiting for functions") {
		t.Errorf("the page showed %q %v after the first refusal, want \"waiting for functions\" within 5s", shown, d)
	}
	t.Logf("waiting shown %v after the first refusal: %q", seen.Sub(first), shown)
	uiScreenshot(t, ctx, "job-waiting.png")
	release()
	if err := uiDo(ctx, chromedp.WaitVisible(chromedp.CSS(`#summary[data-state="succeeded"]`))); err != nil {
		t.Fatalf("the page did not turn to succeeded: %v", err)
	}
	if n, err := uiEval[int](ctx, `document.querySelectorAll("#waiting").length`); err != nil || n != 0 {
		t.Errorf("a finished job still shows waiting (%d, %v)", n, err)
	}
}

// holdingInvoker holds the scan tasks of one table until open is closed;
// first is when it first held one.
type holdingInvoker struct {
	next  coordinator.Invoker
	table string
	open  chan struct{}
	mu    sync.Mutex
	first time.Time
}

func (g *holdingInvoker) Invoke(ctx context.Context, body []byte) ([]byte, error) {
	spec, err := function.DecodeSpec(body)
	if err == nil && len(spec.Splits) > 0 && strings.Contains("/"+spec.Splits[0].Key, "/"+g.table+"/") {
		g.mu.Lock()
		if g.first.IsZero() {
			g.first = time.Now()
		}
		g.mu.Unlock()
		select {
		case <-g.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.next.Invoke(ctx, body)
}

// TestWebUIHeldStage: a join's probe-side scan (lineitem) held for the
// runtime filter of its build side (part, whose scan is kept running):
// the job page shows the hold within 5 s of the build scan's start, and
// drops it once the build side is done; the answer equals DuckDB's.
func TestWebUIHeldStage(t *testing.T) {
	ctx := uiBrowser(t)
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	gate := &holdingInvoker{table: "part", open: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(gate.open) }) }
	t.Cleanup(release)
	st := startStack(t, "", func(o *local.Options) {
		o.BroadcastBytes = -1 // a partitioned join: the probe scan is a stage of its own
		o.Coordinator.AQE.RuntimeFilterProbeBytes = 1
		o.Coordinator.RuntimeFilterWait = time.Minute
		o.Coordinator.DeferProbeRatio = 0
		o.WrapInvoker = func(inv coordinator.Invoker) coordinator.Invoker { gate.next = inv; return gate }
	})
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	q := `select count(*) as n, sum(l_quantity) as q from lineitem join part on l_partkey = p_partkey where p_brand = 'Brand#23'`
	done := make(chan *local.Result, 1)
	go func() {
		on := true
		res, err := st.Query(context.Background(), q, &on, nil)
		if err != nil {
			t.Errorf("sluice: %v", err)
		}
		done <- res
	}()
	// The running job, from the jobs list.
	var job string
	for deadline := time.Now().Add(time.Minute); job == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := uiDo(ctx, chromedp.Navigate(st.APIURL+"/ui/?state=running")); err != nil {
			t.Fatal(err)
		}
		if ids, err := uiEval[[]string](ctx, `[...document.querySelectorAll("tr[data-job]")].map(r => r.dataset.job)`); err == nil && len(ids) == 1 {
			job = ids[0]
		}
	}
	if job == "" {
		t.Fatal("no running job listed")
	}
	if err := uiDo(ctx, chromedp.Navigate(st.APIURL+"/ui/jobs/"+job), chromedp.WaitVisible(chromedp.CSS(`#summary`))); err != nil {
		t.Fatal(err)
	}
	var shown string
	var seen time.Time
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		shown, _ = uiEval[string](ctx, `(document.getElementById("waiting") || {}).textContent || ""`)
		if shown != "" {
			seen = time.Now()
			break
		}
	}
	gate.mu.Lock()
	first := gate.first
	gate.mu.Unlock()
	if shown == "" || first.IsZero() {
		t.Fatalf("the page never showed a held stage (build scan started at %v)", first)
	}
	if d := seen.Sub(first); d > 5*time.Second || !strings.Contains(shown, "held: waiting for a runtime filter from build stage") {
		t.Errorf("the page showed %q %v after the build scan started, want the hold within 5s", shown, d)
	}
	t.Logf("hold shown %v after the build scan started: %q", seen.Sub(first), shown)
	// The API's status says the same: it is what `submit` and the shell
	// show on their progress line (TestProgressWaiting).
	if js, err := coordinator.NewClient(st.APIURL, "").Status(context.Background(), job); err != nil || !strings.Contains(js.Waiting, "held: waiting for a runtime filter from build stage") || !strings.Contains(js.Waiting, "(up to 1m0s)") {
		t.Errorf("the API's status of the held job: waiting %q (%v)", js.Waiting, err)
	}
	// The held stage's node says so: the one stage the notice names.
	heldNodes, err := uiEval[[]string](ctx, `[...document.querySelectorAll("#graph-now .node.held")].map(n => n.dataset.stage + ":" + n.querySelector(".n-state").textContent)`)
	if err != nil {
		t.Fatal(err)
	}
	if id, _, _ := strings.Cut(strings.Join(heldNodes, ""), ":"); len(heldNodes) != 1 || heldNodes[0] != id+":held" || !strings.HasPrefix(shown, "stage "+id+" held: waiting for") {
		t.Errorf("held nodes %v, the notice %q", heldNodes, shown)
	}
	uiScreenshot(t, ctx, "job-held.png")
	release()
	res := <-done
	if res == nil {
		t.FailNow()
	}
	t.Cleanup(res.Release)
	compareRows(t, sluiceRows(res), duckRows(t, db, q), false)
	if err := uiDo(ctx, chromedp.WaitVisible(chromedp.CSS(`#summary[data-state="succeeded"]`))); err != nil {
		t.Fatalf("the page did not turn to succeeded: %v", err)
	}
	if n, err := uiEval[int](ctx, `document.querySelectorAll("#waiting").length`); err != nil || n != 0 {
		t.Errorf("a finished job still shows a hold (%d, %v)", n, err)
	}
}
