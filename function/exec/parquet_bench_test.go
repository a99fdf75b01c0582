package exec

import (
	"context"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/sluicedb/sluice/local/tpch"
	"github.com/sluicedb/sluice/planner/plan"
)

// BenchmarkParquetScanLineitem scans columns of a lineitem file at SF 0.1
// (600 k rows, the generator's row groups) into engine batches: the ones
// TPC-H Q1 reads, and lineitem's five strings. Each is scanned with our
// page decoder (own) and with arrow-go's column readers (arrow, the
// baseline); MB/s is of the file's bytes.
func BenchmarkParquetScanLineitem(b *testing.B) {
	dir := b.TempDir()
	files, err := tpch.WriteTableParquet(context.Background(), dir, tpch.Lineitem, 0.1, tpch.WriteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	dec := plan.DecimalType(15, 2)
	node := func(sch plan.Schema) *plan.Node {
		n := &plan.Node{Kind: plan.KindScan, Schema: sch, Scan: &plan.Scan{Table: "lineitem", Format: "parquet"}}
		for _, c := range sch {
			n.Scan.Columns = append(n.Scan.Columns, c.Name)
		}
		return n
	}
	cases := []struct {
		name string
		n    *plan.Node
	}{
		{"q1", node(plan.Schema{{Name: "l_quantity", Type: dec}, {Name: "l_extendedprice", Type: dec},
			{Name: "l_discount", Type: dec}, {Name: "l_tax", Type: dec},
			{Name: "l_returnflag", Type: plan.StringType}, {Name: "l_linestatus", Type: plan.StringType},
			{Name: "l_shipdate", Type: plan.DateType}})},
		{"strings", node(plan.Schema{{Name: "l_returnflag", Type: plan.StringType}, {Name: "l_linestatus", Type: plan.StringType},
			{Name: "l_shipinstruct", Type: plan.StringType}, {Name: "l_shipmode", Type: plan.StringType},
			{Name: "l_comment", Type: plan.StringType}})},
	}
	var size int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			b.Fatal(err)
		}
		size += st.Size()
	}
	for _, tc := range cases {
		for _, dec := range []struct {
			name       string
			arrowPages bool
		}{{"own", false}, {"arrow", true}} {
			b.Run(tc.name+"/"+dec.name, func(b *testing.B) {
				b.SetBytes(size)
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					var rows int64
					for _, path := range files {
						f, err := os.Open(path)
						if err != nil {
							b.Fatal(err)
						}
						op, err := NewParquetScan(context.Background(), f, tc.n, nil, Options{arrowPages: dec.arrowPages})
						if err != nil {
							b.Fatal(err)
						}
						for {
							rec, err := op.Next(context.Background())
							if err == io.EOF {
								break
							}
							if err != nil {
								b.Fatal(err)
							}
							rows += rec.NumRows()
							rec.Release()
						}
						op.Close()
						f.Close()
					}
					if want := tpch.RowCount(tpch.Lineitem, 0.1); rows != want {
						b.Fatalf("%d rows, want %d", rows, want)
					}
				}
			})
		}
	}
}

// BenchmarkParquetScanSelective scans lineitem at SF 0.1 with a pruning
// filter that keeps few rows, with late materialization off (the record
// reader decodes every column of every row, the Filter above drops
// them) and on (the default, adaptive). Each mode's rows are counted
// after the Filter the plan has above the scan. q6 is TPC-H Q6's filter
// and columns (about 2% of rows kept, three of four columns filtered
// on); q1cols reads Q1's seven columns and keeps one month of ship dates
// (about 1.3%); orderkeys is a runtime filter's IN list of 1,000 order
// keys (0.7%) over Q1's columns; nearlyall keeps 98% of rows (the
// adaptive switch should make it cost what off costs).
func BenchmarkParquetScanSelective(b *testing.B) {
	dir := b.TempDir()
	files, err := tpch.WriteTableParquet(context.Background(), dir, tpch.Lineitem, 0.1, tpch.WriteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	dec := plan.DecimalType(15, 2)
	q1 := plan.Schema{{Name: "l_quantity", Type: dec}, {Name: "l_extendedprice", Type: dec},
		{Name: "l_discount", Type: dec}, {Name: "l_tax", Type: dec},
		{Name: "l_returnflag", Type: plan.StringType}, {Name: "l_linestatus", Type: plan.StringType},
		{Name: "l_shipdate", Type: plan.DateType}, {Name: "l_orderkey", Type: plan.Int64Type}}
	q6 := plan.Schema{{Name: "l_extendedprice", Type: dec}, {Name: "l_discount", Type: dec},
		{Name: "l_quantity", Type: dec}, {Name: "l_shipdate", Type: plan.DateType}}
	node := func(sch plan.Schema, f *plan.Expr) *plan.Node {
		n := &plan.Node{Kind: plan.KindScan, Schema: sch, Scan: &plan.Scan{Table: "lineitem", Format: "parquet", Filter: f}}
		for _, c := range sch {
			n.Scan.Columns = append(n.Scan.Columns, c.Name)
		}
		return n
	}
	and := func(es ...*plan.Expr) *plan.Expr {
		out := es[0]
		for _, e := range es[1:] {
			out = plan.Call(plan.OpAnd, plan.BoolType, out, e)
		}
		return out
	}
	cmp := func(op plan.Op, a, b *plan.Expr) *plan.Expr { return plan.Call(op, plan.BoolType, a, b) }
	keys := []*plan.Expr{cref(7, plan.Int64Type)}
	for k := int64(1); k <= 1000; k++ {
		keys = append(keys, litI(k*577))
	}
	cases := []struct {
		name string
		n    *plan.Node
	}{
		{"q6", node(q6, and(cmp(plan.OpGe, cref(3, plan.DateType), litDate("1994-01-01")), cmp(plan.OpLt, cref(3, plan.DateType), litDate("1995-01-01")),
			cmp(plan.OpGe, cref(1, dec), litD("0.05", 15, 2)), cmp(plan.OpLe, cref(1, dec), litD("0.07", 15, 2)),
			cmp(plan.OpLt, cref(2, dec), litD("24", 15, 2))))},
		{"q1cols", node(q1, and(cmp(plan.OpGe, cref(6, plan.DateType), litDate("1995-01-01")), cmp(plan.OpLt, cref(6, plan.DateType), litDate("1995-02-01"))))},
		{"orderkeys", node(q1, plan.Call(plan.OpIn, plan.BoolType, keys...))},
		{"nearlyall", node(q1, cmp(plan.OpLt, cref(6, plan.DateType), litDate("1998-08-01")))},
	}
	for _, tc := range cases {
		for _, mode := range []struct {
			name string
			late LateMode
		}{{"off", LateOff}, {"auto", LateAuto}} {
			b.Run(tc.name+"/"+mode.name, func(b *testing.B) {
				b.ReportAllocs()
				opts := Options{Late: mode.late}
				var want int64 = -1
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					var rows int64
					for _, path := range files {
						f, err := os.Open(path)
						if err != nil {
							b.Fatal(err)
						}
						op, err := NewParquetScan(context.Background(), f, tc.n, nil, opts)
						if err != nil {
							b.Fatal(err)
						}
						op, err = NewFilter(op, &plan.Node{Kind: plan.KindFilter, Schema: tc.n.Schema, Predicate: tc.n.Scan.Filter}, opts)
						if err != nil {
							b.Fatal(err)
						}
						for {
							rec, err := op.Next(context.Background())
							if err == io.EOF {
								break
							}
							if err != nil {
								b.Fatal(err)
							}
							rows += rec.NumRows()
							rec.Release()
						}
						op.Close()
						f.Close()
					}
					if want >= 0 && rows != want {
						b.Fatalf("%d rows, then %d", want, rows)
					}
					want = rows
				}
				b.ReportMetric(float64(want), "rows")
				// The process's CPU time (GC included): on a loaded
				// machine it varies far less than the wall time.
				b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
