package tests

import (
	"bufio"
	"cmp"
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/planner/plan"
)

var (
	updateTPCDS = flag.Bool("update-tpcds", false, "TestTPCDS: rewrite testdata/tpcds_pass.txt with the queries that pass")
	onlyTPCDS   = flag.String("tpcds-queries", "", "TestTPCDS, BenchmarkTPCDS: run only these queries (q01,q27,...)")
)

// selectTPCDS keeps the queries -tpcds-queries names (all without it).
func selectTPCDS(qs []tpcdsQuery) []tpcdsQuery {
	if *onlyTPCDS == "" {
		return qs
	}
	want := map[string]bool{}
	for _, n := range strings.Split(*onlyTPCDS, ",") {
		want[strings.TrimSpace(n)] = true
	}
	var out []tpcdsQuery
	for _, q := range qs {
		if want[q.name()] {
			out = append(out, q)
		}
	}
	return out
}

// tpcdsPassFile lists the TPC-DS queries that must equal DuckDB; one
// that stops passing is a regression.
const tpcdsPassFile = "testdata/tpcds_pass.txt"

type tpcdsOutcome string

const (
	tpcdsPass    tpcdsOutcome = "pass"
	tpcdsRefused tpcdsOutcome = "refused" // SL005: a known gap, reported, not a failure
	tpcdsWrong   tpcdsOutcome = "wrong"
	tpcdsError   tpcdsOutcome = "error" // any other failure: a crash, an internal error, a wrong refusal
)

// runTPCDSQuery runs one query on sluice and compares it with want.
func runTPCDSQuery(st *local.Stack, q tpcdsQuery, want []row, adaptive bool) (tpcdsOutcome, string, time.Duration) {
	o, msg, took, _ := runTPCDSQueryStatus(st, q, want, adaptive)
	return o, msg, took
}

// runTPCDSQueryStatus is runTPCDSQuery that also returns the job's
// status (nil when the job did not run).
func runTPCDSQueryStatus(st *local.Stack, q tpcdsQuery, want []row, adaptive bool) (tpcdsOutcome, string, time.Duration, *coordinator.JobStatus) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t0 := time.Now()
	res, err := st.Query(ctx, q.SQL, &adaptive, nil)
	took := time.Since(t0)
	if err != nil {
		if strings.Contains(err.Error(), "SL005") {
			return tpcdsRefused, firstLine(err.Error()), took, nil
		}
		return tpcdsError, err.Error(), took, nil
	}
	defer res.Release()
	if d := rowsDiff(sluiceRows(res), want, isOrdered(q.SQL)); d != "" {
		return tpcdsWrong, d, took, res.Status
	}
	return tpcdsPass, "", took, res.Status
}

// scanWork is what a job's scans read: the table bytes its scan operators
// fetched, the row groups they skipped from statistics (runtime filters
// included), and the rows partial aggregations passed on unaggregated.
type scanWork struct {
	bytes          int64
	rowGroupsSkip  int
	partialSkipped int64
	// byTable splits bytes by the table each scan read.
	byTable map[string]int64
}

// add adds o's figures to w.
func (w *scanWork) add(o scanWork) {
	w.bytes += o.bytes
	w.rowGroupsSkip += o.rowGroupsSkip
	w.partialSkipped += o.partialSkipped
	for t, n := range o.byTable {
		if w.byTable == nil {
			w.byTable = map[string]int64{}
		}
		w.byTable[t] += n
	}
}

func scanWorkOf(js *coordinator.JobStatus) scanWork {
	var w scanWork
	if js == nil {
		return w
	}
	w.byTable = map[string]int64{}
	for _, st := range js.Stages {
		w.rowGroupsSkip += st.RowGroupsPruned
		if st.Metrics == nil {
			continue
		}
		// The metrics number a stage's nodes as exec.NodeIDs does.
		tables := map[int]string{}
		for n, id := range exec.NodeIDs(st.Plan) {
			if n.Kind == plan.KindScan && n.Scan != nil {
				tables[id] = n.Scan.Table
			}
		}
		for _, op := range st.Metrics.Operators {
			if op.Kind == string(plan.KindScan) {
				w.bytes += op.Bytes
				t, ok := tables[op.Node]
				if !ok {
					t = "?"
				}
				w.byTable[t] += op.Bytes
			}
			w.partialSkipped += op.PartialSkippedRows
		}
	}
	return w
}

// tableBytesReport splits the total bytes scanned by table, with and
// without runtime filters, largest first: where the filters saved bytes
// and which tables they could not.
func tableBytesReport(on, off scanWork, mb func(int64) float64) string {
	all := map[string]bool{} // the tables either run read
	for t := range off.byTable {
		all[t] = true
	}
	for t := range on.byTable {
		all[t] = true
	}
	names := slices.SortedFunc(maps.Keys(all), func(a, b string) int {
		return cmp.Or(cmp.Compare(off.byTable[b], off.byTable[a]), strings.Compare(a, b))
	})
	r := fmt.Sprintf("by table, summed over the queries:\n%-24s %10s %10s %6s %8s\n", "table", "MB rf", "MB no rf", "x", "share")
	for _, t := range names {
		x := "-"
		if off.byTable[t] > 0 {
			x = fmt.Sprintf("%.2f", float64(on.byTable[t])/float64(off.byTable[t]))
		}
		share := 0.0
		if off.bytes > 0 {
			share = float64(off.byTable[t]) / float64(off.bytes)
		}
		r += fmt.Sprintf("%-24s %10.1f %10.1f %6s %8.3f\n", t, mb(on.byTable[t]), mb(off.byTable[t]), x, share)
	}
	return r
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func readPassList(t *testing.T) map[string]bool {
	f, err := os.Open(tpcdsPassFile)
	if os.IsNotExist(err) {
		return map[string]bool{}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l != "" && !strings.HasPrefix(l, "#") {
			out[l] = true
		}
	}
	return out
}

// TestTPCDS runs DuckDB's 99 TPC-DS queries on the embedded stack (at
// -tpcds-sf, 0.01 by default), adaptive and static, against DuckDB on the
// same Parquet files, and prints the tally. A query sluice refuses with
// SL005 is a known gap; a wrong answer, any other error, or a query of
// testdata/tpcds_pass.txt that no longer passes fails the test.
func TestTPCDS(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir, qs := tpcdsData(t, *tpcdsSF)
	db := openDuckOn(t, dir, tpcdsTables)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	qs = selectTPCDS(qs)
	if *updateTPCDS && *onlyTPCDS != "" {
		t.Fatal("-update-tpcds needs all 99 queries: drop -tpcds-queries")
	}
	expected := readPassList(t)
	tally := map[tpcdsOutcome]int{}
	var passed []string
	var report strings.Builder
	for _, q := range qs {
		want, err := duckQuery(context.Background(), db, q.SQL)
		if err != nil {
			t.Fatalf("%s: duckdb: %v", q.name(), err)
		}
		outcome := tpcdsPass
		for _, adaptive := range []bool{true, false} {
			mode := map[bool]string{true: "adaptive", false: "static"}[adaptive]
			o, detail, _ := runTPCDSQuery(st, q, want, adaptive)
			if o != tpcdsPass {
				fmt.Fprintf(&report, "%s/%s: %s: %s\n", q.name(), mode, o, firstLine(detail))
				if o == tpcdsWrong || o == tpcdsError {
					t.Errorf("%s/%s: %s: %s", q.name(), mode, o, detail)
				}
			}
			if outcome == tpcdsPass || o == tpcdsWrong || o == tpcdsError {
				outcome = o
			}
		}
		tally[outcome]++
		if outcome == tpcdsPass {
			passed = append(passed, q.name())
		} else if expected[q.name()] {
			t.Errorf("%s: listed in %s but %s", q.name(), tpcdsPassFile, outcome)
		}
	}
	t.Logf("TPC-DS SF %g: %d/%d pass, %d refused (SL005), %d wrong, %d error\n%s",
		*tpcdsSF, tally[tpcdsPass], len(qs), tally[tpcdsRefused], tally[tpcdsWrong], tally[tpcdsError], report.String())
	if *updateTPCDS {
		sort.Strings(passed)
		body := "# TPC-DS queries that equal DuckDB at SF 0.01, adaptive and static (go test ./tests -run TestTPCDS -update-tpcds)\n" +
			strings.Join(passed, "\n") + "\n"
		if err := os.MkdirAll(filepath.Dir(tpcdsPassFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tpcdsPassFile, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkTPCDS runs the TPC-DS queries sluice accepts on the embedded
// stack and on DuckDB over the same Parquet files, at -tpcds-sf, and prints
// both times per query and in total (refused queries are listed as such).
// Every query runs twice, on two stacks over the same files: with the
// runtime-filter rule (the default) and without it (and without the
// join filters inside tasks, exec.Options.NoJoinFilters), and both answers
// are checked against DuckDB's. Per query and in total it prints the table
// bytes the scans read with and without runtime filters, the row groups
// skipped from statistics with them, and the rows partial aggregations
// passed on unaggregated, and after the total the bytes split by table.
// The times are the runs with filters.
func BenchmarkTPCDS(b *testing.B) {
	dir, qs := tpcdsData(b, *tpcdsSF)
	qs = selectTPCDS(qs)
	report := benchTPCDSLayout(b, dir, qs, "dsdgen's row order")
	// The same rows with each fact table sorted by its date key, the layout
	// lakehouse fact tables usually have: there a runtime filter on a date
	// range can skip row groups, which dsdgen's order (every row group
	// spans all five years) never allows.
	report += benchTPCDSLayout(b, tpcdsClustered(b, *tpcdsSF), qs, "fact tables sorted by their date key")
	fmt.Fprint(os.Stderr, report)
}

// benchTPCDSLayout runs qs over the tables under dir, with and without
// runtime filters, and returns the report.
func benchTPCDSLayout(b *testing.B, dir string, qs []tpcdsQuery, layout string) string {
	db := openDuckOn(b, dir, tpcdsTables)
	stack := func(filters bool) *local.Stack {
		st := startStack(b, "", func(o *local.Options) {
			o.Coordinator.SplitBytes = 32 << 20
			o.Functions = 4
			o.Coordinator.AQE.RuntimeFilters = filters
		})
		// Off is off inside tasks too: no join hands its probe scan the
		// range or a Bloom filter of its build keys.
		st.Runtime.Exec.NoJoinFilters = !filters
		if _, err := st.LoadDir(context.Background(), dir); err != nil {
			b.Fatal(err)
		}
		return st
	}
	on, off := stack(true), stack(false)
	defer on.Close()
	defer off.Close()
	var totS, totD time.Duration
	var totOn, totOff scanWork
	mb := func(n int64) float64 { return float64(n) / (1 << 20) }
	report := fmt.Sprintf("\nTPC-DS SF %g, %s, %d in-process functions; MB scanned with and without runtime filters (rf)\n%-6s %10s %10s %8s %10s %10s %6s %8s %10s  %s\n",
		*tpcdsSF, layout, 4, "query", "sluice(s)", "duckdb(s)", "ratio", "MB rf", "MB no rf", "x", "rg skip", "agg skip", "outcome")
	for _, q := range qs {
		t0 := time.Now()
		want, err := duckQuery(context.Background(), db, q.SQL)
		dk := time.Since(t0)
		if err != nil {
			b.Fatalf("%s: duckdb: %v", q.name(), err)
		}
		o, msg, sl, js := runTPCDSQueryStatus(on, q, want, true)
		if o == tpcdsRefused || o == tpcdsError {
			report += fmt.Sprintf("%-6s %10s %10.3f %8s  %s: %s\n", q.name(), "-", dk.Seconds(), "-", o, firstLine(msg))
			continue
		}
		if o != tpcdsPass {
			o += tpcdsOutcome(": " + firstLine(msg))
		}
		o2, msg2, _, js2 := runTPCDSQueryStatus(off, q, want, true)
		if o2 != tpcdsPass {
			o += tpcdsOutcome(", without rf " + string(o2) + ": " + firstLine(msg2))
		}
		w, w2 := scanWorkOf(js), scanWorkOf(js2)
		totS += sl
		totD += dk
		totOn.add(w)
		totOff.add(w2)
		x := "-"
		if w2.bytes > 0 {
			x = fmt.Sprintf("%.2f", float64(w.bytes)/float64(w2.bytes))
		}
		report += fmt.Sprintf("%-6s %10.3f %10.3f %8.1f %10.1f %10.1f %6s %8d %10d  %s\n", q.name(), sl.Seconds(), dk.Seconds(), sl.Seconds()/dk.Seconds(),
			mb(w.bytes), mb(w2.bytes), x, w.rowGroupsSkip, w.partialSkipped, o)
	}
	if totD > 0 {
		x := "-"
		if totOff.bytes > 0 {
			x = fmt.Sprintf("%.2f", float64(totOn.bytes)/float64(totOff.bytes))
		}
		report += fmt.Sprintf("%-6s %10.3f %10.3f %8.1f %10.1f %10.1f %6s %8d %10d  (queries sluice ran)\n", "total", totS.Seconds(), totD.Seconds(), totS.Seconds()/totD.Seconds(),
			mb(totOn.bytes), mb(totOff.bytes), x, totOn.rowGroupsSkip, totOn.partialSkipped)
		report += tableBytesReport(totOn, totOff, mb)
	}
	return report
}

// TestScanWorkByTable checks that the bench's split of scanned bytes by
// table names each scan operator's table, by the node ids the metrics
// use, and adds up over queries.
func TestScanWorkByTable(t *testing.T) {
	scan := func(table string) *plan.Node {
		return &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: table}}
	}
	// Join(Filter(Scan a), Scan b): ids 0 join, 1 filter, 2 scan a, 3 scan b.
	root := &plan.Node{Kind: plan.KindHashJoin, Inputs: []*plan.Node{
		{Kind: plan.KindFilter, Inputs: []*plan.Node{scan("a")}},
		scan("b"),
	}}
	op := func(node int, kind plan.Kind, bytes int64) function.StageOperator {
		return function.StageOperator{OpMetrics: exec.OpMetrics{Node: node, Kind: string(kind), Bytes: bytes}}
	}
	js := &coordinator.JobStatus{Stages: []coordinator.StageStatus{
		{ID: 0, Plan: root, RowGroupsPruned: 2, Metrics: &function.StageMetrics{Operators: []function.StageOperator{
			op(0, plan.KindHashJoin, 0), op(2, plan.KindScan, 100), op(3, plan.KindScan, 7), op(9, plan.KindScan, 1),
		}}},
		{ID: 1, Plan: &plan.Node{Kind: plan.KindExchange}, Metrics: &function.StageMetrics{Operators: []function.StageOperator{
			op(0, plan.KindExchange, 500),
		}}},
	}}
	tests := []struct {
		name  string
		times int
		want  map[string]int64
		bytes int64
	}{
		{"one query", 1, map[string]int64{"a": 100, "b": 7, "?": 1}, 108},
		{"two queries", 2, map[string]int64{"a": 200, "b": 14, "?": 2}, 216},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tot scanWork
			for range tc.times {
				tot.add(scanWorkOf(js))
			}
			if tot.bytes != tc.bytes || tot.rowGroupsSkip != 2*tc.times || !maps.Equal(tot.byTable, tc.want) {
				t.Fatalf("got bytes %d, row groups %d, by table %v; want %d, %d, %v", tot.bytes, tot.rowGroupsSkip, tot.byTable, tc.bytes, 2*tc.times, tc.want)
			}
			r := tableBytesReport(tot, tot, func(n int64) float64 { return float64(n) })
			if i, j := strings.Index(r, "\na "), strings.Index(r, "\nb "); i < 0 || j < i {
				t.Fatalf("report lists a (largest) before b:\n%s", r)
			}
		})
	}
}
