package exec

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

const (
	benchProbeRows = 1 << 20
	benchBuildRows = 100_000
)

// joinBenchInputs: probe (k int64 in [0, 2*build) so about half match, d
// decimal(12,2)); build (k int64 unique in [0, build), name string).
func joinBenchInputs() (plan.Schema, []arrow.RecordBatch, plan.Schema, []arrow.RecordBatch) {
	mem := memory.DefaultAllocator
	rng := rand.New(rand.NewSource(1))
	ps := plan.Schema{{Name: "k", Type: i64T}, {Name: "d", Type: dec(12, 2)}}
	bs := plan.Schema{{Name: "k", Type: i64T}, {Name: "name", Type: strT}}
	var probe, build []arrow.RecordBatch
	for lo := 0; lo < benchProbeRows; lo += 8192 {
		kb := array.NewInt64Builder(mem)
		db := array.NewDecimal64Builder(mem, dec(12, 2).Arrow().(*arrow.Decimal64Type))
		for i := 0; i < 8192; i++ {
			kb.Append(int64(rng.Intn(2 * benchBuildRows)))
			db.Append(decimal.Decimal64(rng.Intn(100000)))
		}
		cols := []arrow.Array{kb.NewArray(), db.NewArray()}
		probe = append(probe, array.NewRecordBatch(ps.Arrow(), cols, 8192))
		releaseAll(cols)
		kb.Release()
		db.Release()
	}
	perm := rng.Perm(benchBuildRows)
	for lo := 0; lo < benchBuildRows; lo += 8192 {
		hi := min(benchBuildRows, lo+8192)
		kb := array.NewInt64Builder(mem)
		sb := array.NewStringBuilder(mem)
		for i := lo; i < hi; i++ {
			kb.Append(int64(perm[i]))
			sb.Append(fmt.Sprintf("Supplier#%09d", perm[i]))
		}
		cols := []arrow.Array{kb.NewArray(), sb.NewArray()}
		build = append(build, array.NewRecordBatch(bs.Arrow(), cols, int64(hi-lo)))
		releaseAll(cols)
		kb.Release()
		sb.Release()
	}
	return ps, probe, bs, build
}

func BenchmarkHashJoin(b *testing.B) {
	ps, probe, bs, build := joinBenchInputs()
	defer releaseRecs(probe)
	defer releaseRecs(build)
	keys := func(j *plan.Join) *plan.Join {
		j.LeftKeys, j.RightKeys = []*plan.Expr{cref(0, i64T)}, []*plan.Expr{cref(0, i64T)}
		return j
	}
	for _, tc := range []struct {
		name string
		n    *plan.Node
	}{
		{"inner", &plan.Node{Kind: plan.KindHashJoin, Schema: append(append(plan.Schema{}, ps...), bs...), Join: keys(&plan.Join{Type: plan.JoinInner})}},
		{"semi", &plan.Node{Kind: plan.KindHashJoin, Schema: ps, Join: keys(&plan.Join{Type: plan.JoinSemi})}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			out := 0
			for i := 0; i < b.N; i++ {
				op, err := NewHashJoin(retainedSource(ps, probe), retainedSource(bs, build), tc.n, Options{})
				if err != nil {
					b.Fatal(err)
				}
				out = 0
				for {
					rec, err := op.Next(context.Background())
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					out += int(rec.NumRows())
					rec.Release()
				}
				op.Close()
			}
			b.ReportMetric(float64(benchProbeRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(out), "out-rows")
		})
	}
}

const benchCSVRows = 200_000

func BenchmarkCSVScan(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	var buf bytes.Buffer
	words := []string{"furiously", "special", "requests", "carefully", "final", "deposits"}
	for i := 0; i < benchCSVRows; i++ {
		fmt.Fprintf(&buf, "%d|%d|%d.%02d|0.%02d|%s|%s|%s %s|\n", i, rng.Intn(200000), rng.Intn(100000), rng.Intn(100), rng.Intn(10),
			plan.FormatDate(int32(8000+rng.Intn(2500))), []string{"AIR", "MAIL", "SHIP", "TRUCK"}[rng.Intn(4)],
			words[rng.Intn(len(words))], words[rng.Intn(len(words))])
	}
	data := buf.Bytes()
	f := &plan.CSVFormat{Delimiter: "|", Columns: []plan.Field{
		{Name: "orderkey", Type: i64T}, {Name: "partkey", Type: i64T}, {Name: "price", Type: dec(15, 2)},
		{Name: "discount", Type: dec(15, 2)}, {Name: "shipdate", Type: dateT}, {Name: "mode", Type: strT}, {Name: "comment", Type: strT}}}
	var cols []string
	for _, c := range f.Columns {
		cols = append(cols, c.Name)
	}
	n := csvNode(f, cols...)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		op, err := NewCSVScan(context.Background(), bytes.NewReader(data), n, Options{})
		if err != nil {
			b.Fatal(err)
		}
		rowsRead := 0
		for {
			rec, err := op.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rowsRead += int(rec.NumRows())
			rec.Release()
		}
		op.Close()
		if rowsRead != benchCSVRows {
			b.Fatalf("%d rows", rowsRead)
		}
	}
	b.ReportMetric(float64(benchCSVRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
