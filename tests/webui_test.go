package tests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
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
