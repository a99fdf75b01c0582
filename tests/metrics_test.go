package tests

import (
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/coordinator/webui"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/planner/plan"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/")

// opRows sums, over every done stage of js, the output rows of the
// operators for which pick is true.
func opRows(js *coordinator.JobStatus, pick func(n *plan.Node) bool) (rows int64, found int) {
	for _, s := range js.Stages {
		if s.Metrics == nil || s.Plan == nil {
			continue
		}
		id := 0
		var walk func(n *plan.Node)
		walk = func(n *plan.Node) {
			if pick(n) {
				if o := s.Metrics.Operator(id); o != nil {
					rows += o.Rows
					found++
				}
			}
			id++
			for _, c := range n.Inputs {
				walk(c)
			}
		}
		walk(s.Plan)
	}
	return rows, found
}

func scanOf(table string) func(n *plan.Node) bool {
	return func(n *plan.Node) bool { return n.Kind == plan.KindScan && n.Scan != nil && n.Scan.Table == table }
}

// filterOver picks the filters right above a scan of table.
func filterOver(table string) func(n *plan.Node) bool {
	return func(n *plan.Node) bool {
		return n.Kind == plan.KindFilter && len(n.Inputs) == 1 && scanOf(table)(n.Inputs[0])
	}
}

// TestOperatorMetrics checks the per-operator metrics of real queries
// against known values: a full scan's output_rows is the table's row count
// and a filter's is DuckDB's count of the rows passing it; each stage's
// shuffle writer wrote the stage's rows; the phase breakdown is filled.
func TestOperatorMetrics(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", func(o *local.Options) {
		// Every scan in a stage of its own, so that each table row is
		// counted once (an inlined scan runs in every task of its reader:
		// inline-scans; TestInlineScans covers it).
		o.Coordinator.AQE.InlineScanBytes = 0
	})
	// A filter's rows are checked against DuckDB's count of its predicate
	// alone: no join may hand the scan under it a filter of its build
	// keys (TestJoinRange and TestJoinBloom in function/exec cover those).
	st.Runtime.Exec.NoJoinFilters = true
	if _, err := st.LoadDir(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	count := func(q string) int64 {
		rs := duckRows(t, db, q)
		return int64(rs[0][0].(float64))
	}
	qs := tpchQueries(t)
	cases := []struct {
		name  string
		sql   string
		pick  func(n *plan.Node) bool
		duck  string
		stage int // a stage that must carry metrics
	}{
		{"full scan", "select sum(l_quantity) from lineitem", scanOf("lineitem"), "select count(*) from lineitem", 0},
		{"q01 filter", qs[0].sql, filterOver("lineitem"), "select count(*) from lineitem where l_shipdate <= date '1998-12-01' - interval 90 day", 0},
		{"q03 customer filter", qs[2].sql, filterOver("customer"), "select count(*) from customer where c_mktsegment = 'BUILDING'", 0},
		{"q03 orders filter", qs[2].sql, filterOver("orders"), "select count(*) from orders where o_orderdate < date '1995-03-15'", 0},
		{"q03 lineitem filter", qs[2].sql, filterOver("lineitem"), "select count(*) from lineitem where l_shipdate > date '1995-03-15'", 0},
	}
	for _, c := range cases {
		for _, adaptive := range []bool{false, true} {
			name := c.name + "/static"
			if adaptive {
				name = c.name + "/adaptive"
			}
			t.Run(name, func(t *testing.T) {
				res := run(t, st, c.sql, adaptive)
				js := res.Status
				got, found := opRows(js, c.pick)
				if found == 0 {
					t.Fatalf("no metrics for the operator; stages: %+v", js.Stages)
				}
				if want := count(c.duck); got != want {
					t.Fatalf("output_rows = %d, DuckDB counts %d (%s)", got, want, c.duck)
				}
				if c.name == "full scan" {
					checkDetailMetrics(t, st.APIURL, res.Job, count(c.duck))
				}
				for _, s := range js.Stages {
					if s.State != coordinator.StageDone {
						continue
					}
					if s.Metrics == nil {
						t.Fatalf("stage %d done without metrics", s.ID)
					}
					w := s.Metrics.Operator(function.WriterNode)
					if w == nil || w.Rows != s.Rows {
						t.Fatalf("stage %d: shuffle writer metrics %+v, stage rows %d", s.ID, w, s.Rows)
					}
					if root := s.Metrics.Operator(0); root == nil || root.Rows != s.Rows {
						t.Fatalf("stage %d: root operator metrics %+v, stage rows %d", s.ID, root, s.Rows)
					}
					p := s.Metrics.PhaseSum
					if p.Startup <= 0 || p.Commit <= 0 || p.Read+p.Compute <= 0 || s.Metrics.PhaseMax.Commit > p.Commit {
						t.Fatalf("stage %d: phases %+v max %+v", s.ID, p, s.Metrics.PhaseMax)
					}
				}
			})
		}
	}
}

// timings matches what varies from run to run in EXPLAIN ANALYZE output.
var timings = regexp.MustCompile(`(elapsed_compute|wall_max|elapsed)=[0-9.]+(ns|µs|ms|s)|, bytes_cached=[0-9]+|[0-9]+\.[0-9]{3}/[0-9]+\.[0-9]{3}|job [0-9a-z-]+:`)

// TestExplainAnalyzeGolden runs TPC-H Q3 (static plan) through the CLI
// with --analyze and compares the operator metrics section, timings
// masked, with testdata/explain_analyze/q03.txt (-update rewrites it).
func TestExplainAnalyzeGolden(t *testing.T) {
	bin := buildSluice(t)
	dir := dataDir(t, *sfFlag)
	tmp := t.TempDir()
	_, errOut, code := runCLI(t, bin, tmp, nil, "local", "query", "--data", dir, "--format", "csv",
		"--adaptive=false", "--analyze", "--stats", tpchQueries(t)[2].sql)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"time by phase", "queue", "commit"} {
		if !strings.Contains(errOut, want) {
			t.Fatalf("--stats output lacks %q:\n%s", want, errOut)
		}
	}
	i := strings.Index(errOut, "== operator metrics")
	if i < 0 {
		t.Fatalf("no operator metrics section:\n%s", errOut)
	}
	got := errOut[i:]
	if j := strings.Index(got, "\nerror:"); j >= 0 {
		got = got[:j+1]
	}
	got = timings.ReplaceAllStringFunc(got, func(s string) string {
		if strings.HasPrefix(s, ", bytes_cached=") {
			return "" // whether a task finds a footer cached depends on timing
		}
		if k := strings.IndexByte(s, '='); k >= 0 {
			return s[:k+1] + "<t>"
		}
		return "<t>"
	})
	path := filepath.Join("testdata", "explain_analyze", "q03.txt")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Fatalf("EXPLAIN ANALYZE differs from %s (run with -update):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
	if left := leftovers(t, tmp); left != "" {
		t.Fatalf("processes left running:\n%s", left)
	}
}

// checkDetailMetrics reads the job page's JSON (GET /v1/jobs/{id}/detail)
// and checks that it carries the stages' operator metrics and phases: the
// lineitem scan's output_rows summed over its stage is scanRows.
func checkDetailMetrics(t *testing.T, api, job string, scanRows int64) {
	t.Helper()
	resp, err := http.Get(api + "/v1/jobs/" + job + "/detail")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d webui.JobDetail
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Fatalf("decode job detail: %v", err)
	}
	var got int64
	found := false
	for _, s := range d.Stages {
		if len(s.Operators) == 0 || s.PhaseSum == nil || s.PhaseMax == nil {
			t.Fatalf("stage %d of the job detail has no metrics: %+v", s.ID, s)
		}
		if s.Operators[0].Node != function.WriterNode || s.Operators[0].Rows != s.Rows {
			t.Fatalf("stage %d: first operator %+v, want the shuffle writer with the stage's %d rows", s.ID, s.Operators[0], s.Rows)
		}
		for _, o := range s.Operators {
			if o.Kind == string(plan.KindScan) && strings.Contains(o.Text, "lineitem") {
				got += o.Rows
				found = true
			}
		}
	}
	if !found || got != scanRows {
		t.Fatalf("job detail: lineitem scan output_rows %d (found %v), want %d", got, found, scanRows)
	}
}

// checkStageMetrics checks that every done stage of job has its metrics
// (as after a coordinator takeover: they are read back from Redis) and
// that its shuffle writer wrote the stage's rows.
func checkStageMetrics(t *testing.T, cl *coordinator.Client, job string) {
	t.Helper()
	js, err := cl.Status(t.Context(), job)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range js.Stages {
		if s.State != coordinator.StageDone {
			continue
		}
		if s.Metrics == nil || s.Metrics.Tasks == 0 || s.Metrics.Tasks > s.Tasks {
			t.Fatalf("job %s stage %d: metrics %+v for %d tasks", job, s.ID, s.Metrics, s.Tasks)
		}
		if w := s.Metrics.Operator(function.WriterNode); w == nil || w.Rows != s.Rows {
			t.Fatalf("job %s stage %d: shuffle writer %+v, stage rows %d", job, s.ID, w, s.Rows)
		}
	}
}
