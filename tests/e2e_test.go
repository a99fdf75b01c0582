package tests

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/local/redisserver"
)

// query is one end-to-end case: SQL and whether its row order is defined.
type query struct {
	name    string
	sql     string
	ordered bool
}

// singleTable are the single-table queries checked against DuckDB.
var singleTable = []query{
	{"q1", local.DemoQueries[0].SQL, true},
	{"q6", local.DemoQueries[1].SQL, true},
	{"orders-priority", local.DemoQueries[2].SQL, true},
	{"topk", local.DemoQueries[3].SQL, true},
	{"empty-groups", local.DemoQueries[4].SQL, true},
	{"having", `select l_suppkey, sum(l_quantity) as q, count(*) as n from lineitem
		group by l_suppkey having sum(l_quantity) > 250 order by q desc, l_suppkey limit 20`, true},
	{"case-like", `select sum(case when l_shipinstruct like 'DELIVER%' then 1 else 0 end) as deliver,
		count(*) as n, min(l_shipdate) as first, max(l_receiptdate) as last
		from lineitem where l_comment not like '%special%'`, true},
	{"customer-segments", `select c_mktsegment, count(*) as n, avg(c_acctbal) as avg_bal, min(c_acctbal), max(c_acctbal)
		from customer group by c_mktsegment order by 1`, true},
	{"extract-year", `select extract(year from o_orderdate) as y, count(*) as n, sum(o_totalprice) as total
		from orders group by extract(year from o_orderdate) order by y`, true},
	{"no-aggregate-filter", `select p_partkey, p_name, p_retailprice from part
		where p_size between 10 and 12 and p_brand = 'Brand#23' and p_container in ('SM BOX', 'LG CASE', 'MED BAG')`, false},
	{"order-offset", `select o_orderkey, o_totalprice from orders where o_orderstatus = 'F'
		order by o_totalprice desc, o_orderkey limit 7 offset 3`, true},
	{"arith-case", `select l_linestatus, sum(case when l_discount > 0.05 then l_extendedprice * l_discount else 0 end) as big_disc,
		count(*) as n, avg(l_tax * 100) as avg_tax from lineitem
		where l_shipdate >= date '1995-01-01' and l_shipdate < date '1995-01-01' + interval '6' month
		group by l_linestatus order by l_linestatus`, true},
	{"global-agg-empty", `select count(*) as n, sum(l_quantity) as s, avg(l_discount) as a from lineitem where l_orderkey < 0`, true},
	{"distinct", `select distinct l_shipmode from lineitem order by l_shipmode`, true},
	{"nation-text", `select n_name, n_regionkey from nation where n_name like '%A%' order by n_name`, true},
}

// backend starts an embedded stack on one kind of Redis.
type backend struct {
	name  string
	start func(t *testing.T) (redisURL string, stop func())
}

var backends = []backend{
	{"miniredis", func(t *testing.T) (string, func()) { return "", func() {} }},
	{"redis-server", func(t *testing.T) (string, func()) {
		srv, err := redisserver.Start(context.Background())
		if errors.Is(err, redisserver.ErrNotInstalled) && os.Getenv("CI") == "" {
			t.Skip("redis-server not installed; .ci/run installs it")
		}
		if err != nil {
			t.Fatal(err)
		}
		return srv.URL, srv.Stop
	}},
}

func startStack(t testing.TB, redisURL string, mod func(*local.Options)) *local.Stack {
	t.Helper()
	opts := local.DefaultOptions()
	opts.RedisURL = redisURL
	opts.Coordinator.SplitBytes = 256 << 10 // several scan tasks at small scale
	if mod != nil {
		mod(&opts)
	}
	st, err := local.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// benchStack is startStack for the benchmarks, with the process's garbage
// collector tuned as `sluice local` tunes it for the same options
// (function.TuneGC of local.GCLimit), restored at the end.
func benchStack(b testing.TB, mod func(*local.Options)) *local.Stack {
	b.Helper()
	var opts local.Options
	st := startStack(b, "", func(o *local.Options) {
		if mod != nil {
			mod(o)
		}
		opts = *o
	})
	b.Cleanup(function.TuneGC(local.GCLimit(opts), st.Runtime.Files.Bytes))
	return st
}

func run(t testing.TB, st *local.Stack, sql string, adaptive bool) *local.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := st.Query(ctx, sql, &adaptive, nil)
	if err != nil {
		t.Fatalf("sluice: %v\n%s", err, sql)
	}
	t.Cleanup(res.Release)
	return res
}

// TestSingleTableQueries runs every single-table query through the whole
// path on both Redis backends, adaptive and static, against DuckDB.
func TestSingleTableQueries(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			url, stop := be.start(t)
			defer stop()
			st := startStack(t, url, nil)
			if _, err := st.LoadDir(context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			checkModes(t, st, db, singleTable)
		})
	}
}

// TestEmptyFilterSkipsStages: when the scan's filter matches nothing, no
// function is invoked for the stages after the scan, and the answer is the
// right empty result.
func TestEmptyFilterSkipsStages(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	before := st.Pool.Invocations()
	res := run(t, st, `select l_shipmode, count(*) from lineitem where l_quantity < 0 group by l_shipmode order by 1`, true)
	if n := len(sluiceRows(res)); n != 0 {
		t.Fatalf("got %d rows, want none", n)
	}
	js := res.Status
	scan := js.Stages[0]
	if scan.State != coordinator.StageDone || scan.Rows != 0 || scan.Tasks == 0 {
		t.Fatalf("scan stage: %+v", scan)
	}
	for _, s := range js.Stages[1:] {
		if s.State != coordinator.StageSkipped || s.Tasks != 0 {
			t.Fatalf("stage %d after an empty scan: state %s with %d tasks, want skipped with none", s.ID, s.State, s.Tasks)
		}
	}
	// Only the scan ran: every invocation is one of its tasks' (small
	// scan tasks may share one, packed).
	if got := st.Pool.Invocations() - before; got != int64(scan.Invoked) || scan.Invoked == 0 || scan.Invoked > scan.Tasks {
		t.Fatalf("functions invoked: %d, want only the scan's (%d invocations for %d tasks)", got, scan.Invoked, scan.Tasks)
	}
	if !firedRule(js, "propagate-empty") {
		t.Fatalf("propagate-empty not in the plan history: %+v", js.Rounds)
	}
}

// TestCoalescePartitions: many small hash partitions are packed into fewer
// tasks, with the same answer as the static plan.
func TestCoalescePartitions(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", func(o *local.Options) { o.Partitions = 16 })
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	q := `select l_orderkey % 100 as k, count(*) as n, sum(l_quantity) as q from lineitem group by l_orderkey % 100 order by k`
	want := duckRows(t, db, q)
	static := run(t, st, q, false)
	compareRows(t, sluiceRows(static), want, true)
	if got := static.Status.Stages[1].Tasks; got != 16 {
		t.Fatalf("static plan: stage 1 ran %d tasks, want one per partition (16)", got)
	}
	adaptive := run(t, st, q, true)
	compareRows(t, sluiceRows(adaptive), want, true)
	if got := adaptive.Status.Stages[1].Tasks; got >= 16 {
		t.Fatalf("adaptive plan: stage 1 ran %d tasks, want fewer than 16 partitions", got)
	}
	if !firedRule(adaptive.Status, "coalesce-partitions") {
		t.Fatalf("coalesce-partitions not in the plan history: %+v", adaptive.Status.Rounds)
	}
}

func firedRule(js *coordinator.JobStatus, rule string) bool {
	for _, r := range js.Rounds {
		for _, f := range r.Fired {
			if f.Rule == rule {
				return true
			}
		}
	}
	return false
}

// TestBadQueries: user errors come back as clear errors naming the problem
// and are never retried.
func TestBadQueries(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ sql, want string }{
		{"select l_orderkey form lineitem", "position"},
		{"select * from no_such_table", "no_such_table"},
		{"select l_nosuch from lineitem", "l_nosuch"},
		{"select l_orderkey from lineitem where l_shipdate = 5", "date"},
		{"select l_comment + 1 from lineitem", "string"},
	}
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			adaptive := true
			_, err := st.Query(context.Background(), c.sql, &adaptive, nil)
			if err == nil {
				t.Fatalf("no error for %q", c.sql)
			}
			if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.want)) {
				t.Fatalf("error %q does not name %q", err, c.want)
			}
		})
	}
}
