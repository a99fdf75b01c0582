package exec

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// fileLeaves scans one Parquet file; hide makes the scan not offer
// FoldStats, so the aggregate reads every row (the reference answer).
type fileLeaves struct {
	t      *testing.T
	path   string
	hide   bool
	opened *ParquetScan
}

type hiddenScan struct{ Operator }

func (l *fileLeaves) Scan(ctx context.Context, n *plan.Node) (Operator, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, err
	}
	op, err := NewParquetScan(ctx, f, n, nil, Options{Mem: checkedMem(l.t), BatchRows: 64})
	if err != nil {
		return nil, err
	}
	l.opened = op.(*ParquetScan)
	if l.hide {
		return hiddenScan{op}, nil
	}
	return op, nil
}

func (l *fileLeaves) Exchange(context.Context, *plan.Node) (Operator, error) {
	return nil, os.ErrInvalid
}

// partialAgg is a partial aggregate of calls over a scan of cols
// (scanSchema indexes), optionally through a reordering projection.
func partialAgg(cols []int, reorder bool, calls ...plan.AggCall) *plan.Node {
	in := scanNode(nil, cols...)
	if reorder {
		p := &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{in}}
		for i := len(in.Schema) - 1; i >= 0; i-- {
			p.Exprs = append(p.Exprs, cref(i, in.Schema[i].Type))
			p.Schema = append(p.Schema, in.Schema[i])
		}
		in = p
	}
	n := &plan.Node{Kind: plan.KindAggregate, Inputs: []*plan.Node{in},
		Aggregate: &plan.Aggregate{Mode: plan.AggPartial, Aggs: calls}}
	for _, c := range calls {
		for _, t := range AggStateTypes(c) {
			n.Schema = append(n.Schema, plan.Field{Name: c.Name, Type: t})
		}
	}
	return n
}

func aggCall(fn plan.AggFunc, arg *plan.Expr, t plan.DataType) plan.AggCall {
	return plan.AggCall{Func: fn, Arg: arg, Type: t, Name: string(fn)}
}

// TestStatsFold: a global count/min/max over a Parquet scan answers the
// row groups whose statistics tell it from the footer, and its partial
// states equal those of reading every row; columns whose bounds are not
// exact answers (strings, floats, FIXED_LEN_BYTE_ARRAY decimals) are read.
func TestStatsFold(t *testing.T) {
	i64, dec := plan.Int64Type, plan.DecimalType(12, 2)
	cases := []struct {
		name     string
		decAsInt bool
		cols     []int
		reorder  bool
		calls    []plan.AggCall
		folded   int // row groups of the 4 answered from statistics
	}{
		{"count star", false, []int{0}, false, []plan.AggCall{aggCall(plan.AggCountStar, nil, i64)}, 4},
		{"int32 min max", false, []int{0}, false, []plan.AggCall{aggCall(plan.AggMin, cref(0, i64), i64), aggCall(plan.AggMax, cref(0, i64), i64)}, 4},
		{"int64 with nulls", false, []int{1}, false, []plan.AggCall{aggCall(plan.AggCount, cref(0, i64), i64), aggCall(plan.AggMax, cref(0, i64), i64)}, 4},
		{"int16", false, []int{8}, false, []plan.AggCall{aggCall(plan.AggMin, cref(0, i64), i64)}, 4},
		{"date", false, []int{4}, false, []plan.AggCall{aggCall(plan.AggMin, cref(0, plan.DateType), plan.DateType), aggCall(plan.AggMax, cref(0, plan.DateType), plan.DateType)}, 4},
		{"decimal as int", true, []int{2}, false, []plan.AggCall{aggCall(plan.AggMax, cref(0, dec), dec)}, 4},
		{"decimal as bytes", false, []int{2}, false, []plan.AggCall{aggCall(plan.AggMax, cref(0, dec), dec)}, 0},
		{"string count", false, []int{3}, false, []plan.AggCall{aggCall(plan.AggCount, cref(0, plan.StringType), i64)}, 4},
		{"string min read", false, []int{3}, false, []plan.AggCall{aggCall(plan.AggMin, cref(0, plan.StringType), plan.StringType)}, 0},
		{"float max read", false, []int{5}, false, []plan.AggCall{aggCall(plan.AggMax, cref(0, plan.Float64Type), plan.Float64Type)}, 0},
		{"dictionary count with nulls", false, []int{6}, false, []plan.AggCall{aggCall(plan.AggCount, cref(0, plan.StringType), i64)}, 4},
		{"one call not answerable", false, []int{0, 3}, false, []plan.AggCall{aggCall(plan.AggCountStar, nil, i64), aggCall(plan.AggMin, cref(1, plan.StringType), plan.StringType)}, 0},
		{"through a projection", false, []int{0, 4}, true, []plan.AggCall{aggCall(plan.AggMax, cref(0, plan.DateType), plan.DateType), aggCall(plan.AggMin, cref(1, i64), i64)}, 4},
		{"sum is read", false, []int{0}, false, []plan.AggCall{aggCall(plan.AggSum, cref(0, i64), i64)}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTestParquet(t, tc.decAsInt)
			run := func(hide bool) ([][]any, int64) {
				n := partialAgg(tc.cols, tc.reorder, tc.calls...)
				m := NewMetrics()
				op, err := Build(context.Background(), n, &fileLeaves{t: t, path: path, hide: hide}, Options{Mem: checkedMem(t), Metrics: m})
				if err != nil {
					t.Fatal(err)
				}
				recs := drainAll(t, op)
				defer releaseRecs(recs)
				var folded int64
				if h, ok := scanUnder(op).(*hashAggOp); ok && h.stats != nil {
					folded = h.stats.RowGroups()
				}
				op.Close()
				return rows(recs), folded
			}
			want, _ := run(true)
			got, folded := run(false)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("from statistics %v, read %v", got, want)
			}
			if folded != int64(tc.folded) {
				t.Errorf("%d row groups answered from statistics, want %d", folded, tc.folded)
			}
		})
	}
}

// TestStatsFoldNoStatistics: a file written without statistics is read
// whole, and the answer is the same.
func TestStatsFoldNoStatistics(t *testing.T) {
	path := writeTestParquetWith(t, false, parquet.WithStats(false))
	i64 := plan.Int64Type
	for _, hide := range []bool{true, false} {
		n := partialAgg([]int{1}, false, aggCall(plan.AggCount, cref(0, i64), i64), aggCall(plan.AggMin, cref(0, i64), i64))
		op, err := Build(context.Background(), n, &fileLeaves{t: t, path: path, hide: hide}, Options{Mem: checkedMem(t)})
		if err != nil {
			t.Fatal(err)
		}
		recs := drainAll(t, op)
		got := rows(recs)
		releaseRecs(recs)
		if h, ok := scanUnder(op).(*hashAggOp); ok && h.stats != nil && h.stats.RowGroups() != 0 {
			t.Errorf("%d row groups answered from absent statistics", h.stats.RowGroups())
		}
		op.Close()
		// 400 rows, every tenth NULL; the least is row 0's 0.
		if want := [][]any{{int64(360), int64(0)}}; !reflect.DeepEqual(got, want) {
			t.Errorf("hide=%v: got %v, want %v", hide, got, want)
		}
	}
}

// TestStatsFoldAllNullRowGroup: a row group of NULLs only has no bounds
// in its statistics; its min and max are NULL, and the aggregate over it
// and a row group of values gives the values' bounds.
func TestStatsFoldAllNullRowGroup(t *testing.T) {
	mem := memory.DefaultAllocator
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	path := filepath.Join(t.TempDir(), "n.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(3), parquet.WithStats(true)),
		pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewInt64Builder(mem)
	b.AppendNulls(3)
	b.AppendValues([]int64{7, -2, 5}, nil)
	col := b.NewArray()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, 6)
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	col.Release()
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	i64 := plan.Int64Type
	in := &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "n", Format: "parquet", Columns: []string{"id"}},
		Schema: plan.Schema{{Name: "id", Type: i64}}}
	calls := []plan.AggCall{aggCall(plan.AggMin, cref(0, i64), i64), aggCall(plan.AggMax, cref(0, i64), i64),
		aggCall(plan.AggCount, cref(0, i64), i64), aggCall(plan.AggCountStar, nil, i64)}
	n := &plan.Node{Kind: plan.KindAggregate, Inputs: []*plan.Node{in}, Aggregate: &plan.Aggregate{Mode: plan.AggPartial, Aggs: calls}}
	for _, c := range calls {
		n.Schema = append(n.Schema, plan.Field{Name: c.Name, Type: AggStateTypes(c)[0]})
	}
	op, err := Build(context.Background(), n, &fileLeaves{t: t, path: path}, Options{Mem: checkedMem(t)})
	if err != nil {
		t.Fatal(err)
	}
	recs := drainAll(t, op)
	got := rows(recs)
	releaseRecs(recs)
	h := scanUnder(op).(*hashAggOp)
	if h.stats == nil || h.stats.RowGroups() != 2 {
		t.Errorf("row groups answered from statistics: %v, want 2", h.stats)
	}
	op.Close()
	if want := [][]any{{int64(-2), int64(7), int64(3), int64(6)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
