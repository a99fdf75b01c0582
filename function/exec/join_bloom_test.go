package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestJoinBloom: a hash join whose probe side is a Parquet scan (through
// a filter) hands the scan a Bloom filter of its build keys once the
// build side is in, for the join types that drop unmatched probe rows;
// the scan then skips the rows no build key matches before decoding
// their other columns. The join's rows are the same with and without it,
// for every join type, and the types that keep unmatched probe rows (or
// a NOT IN join) get no filter.
func TestJoinBloom(t *testing.T) {
	path := writeLateFile(t, lateFile{rows: 6000, rowGroup: 1500, dict: true, pageBytes: 512, nullPct: 10, seed: 31})
	cols := []string{"i64", "d", "s"}
	scanNode := &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "t", Format: "parquet", Columns: cols}}
	for _, name := range cols {
		for _, c := range lateCols {
			if c.name == name {
				scanNode.Schema = append(scanNode.Schema, plan.Field{Name: c.name, Type: c.typ})
			}
		}
	}
	openScan := func(opts Options) *ParquetScan {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		op, err := NewParquetScan(context.Background(), f, scanNode, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		return op.(*ParquetScan)
	}
	// The build keys: every 40th i64 value of the file, a NULL and a key
	// the file does not hold.
	all := drainAll(t, openScan(Options{}))
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	i := 0
	for _, rec := range all {
		c := rec.Column(0).(*array.Int64)
		for r := 0; r < c.Len(); r++ {
			if c.IsValid(r) && i%40 == 0 {
				kb.Append(c.Value(r))
			}
			i++
		}
	}
	releaseRecs(all)
	kb.AppendNull()
	kb.Append(-1)
	keys := kb.NewArray()
	defer keys.Release()
	buildSchema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)

	offers := map[plan.JoinType]bool{plan.JoinInner: true, plan.JoinSemi: true, plan.JoinRight: true,
		plan.JoinRightSemi: true, plan.JoinRightAnti: true}
	for _, jt := range allJoinTypes {
		for _, nullAware := range []bool{false, true} {
			if nullAware && jt != plan.JoinAnti {
				continue
			}
			t.Run(fmt.Sprintf("%s/nullaware=%v", jt, nullAware), func(t *testing.T) {
				j := &plan.Join{Type: jt, NullAware: nullAware,
					LeftKeys: []*plan.Expr{cref(0, plan.Int64Type)}, RightKeys: []*plan.Expr{cref(0, plan.Int64Type)}}
				schema := append(plan.Schema{}, scanNode.Schema...)
				if jt.BuildOnly() {
					schema = nil
				}
				if jt != plan.JoinSemi && jt != plan.JoinAnti {
					schema = append(schema, plan.Field{Name: "k", Type: plan.Int64Type})
				}
				n := &plan.Node{Kind: plan.KindHashJoin, Schema: schema, Join: j}
				run := func(opts Options) ([]string, *ParquetScan) {
					ps := openScan(opts)
					// A filter between the scan and the join, as the plan
					// has for a pushed-down predicate.
					probe, err := NewFilter(ps, &plan.Node{Kind: plan.KindFilter, Schema: scanNode.Schema,
						Predicate: lit(plan.BoolType, plan.Value{B: true})}, opts)
					if err != nil {
						t.Fatal(err)
					}
					keys.Retain()
					rec := array.NewRecordBatch(buildSchema, []arrow.Array{keys}, int64(keys.Len()))
					keys.Release()
					op, err := NewHashJoin(probe, newSource(buildSchema, rec), n, opts)
					if err != nil {
						t.Fatal(err)
					}
					recs := drainAll(t, op)
					defer releaseRecs(recs)
					op.Close()
					return sortedRows(recs), ps
				}
				want, _ := run(Options{NoJoinFilters: true, Late: LateAlways})
				for _, late := range []LateMode{LateAlways, LateAuto} {
					got, ps := run(Options{Mem: checkedMem(t), Late: late, BatchRows: 500})
					if !slices.Equal(got, want) {
						t.Fatalf("late %v: %d rows with the join's Bloom filter, %d without", late, len(got), len(want))
					}
					took := len(ps.blooms) > 0
					if want := offers[jt] && !nullAware; took != want {
						t.Fatalf("late %v: the scan took a Bloom filter: %v, want %v", late, took, want)
					}
					if _, skipped := ps.LateRows(); late == LateAlways && took && skipped == 0 {
						t.Errorf("the scan took the filter but skipped no row")
					}
				}
			})
		}
	}
}

// TestJoinRange: a hash join hands its probe Parquet scan (through a
// filter) the range of its build keys, and the scan leaves unread the row
// groups whose statistics lie outside it, for the join types that drop
// unmatched probe rows and on integer, date and string keys; the join's
// rows are the same with and without it.
func TestJoinRange(t *testing.T) {
	const rows, rowGroup = 10000, 1000
	path := writeSortedFile(t, rows, rowGroup)
	scanNode := &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "t", Format: "parquet", Columns: []string{"id", "d", "s", "v"}},
		Schema: plan.Schema{{Name: "id", Type: plan.Int64Type}, {Name: "d", Type: plan.DateType}, {Name: "s", Type: plan.StringType},
			{Name: "v", Type: plan.Int64Type}}}
	// Build keys: rows 4200-4350 (every third), all in the fifth row
	// group, and a NULL.
	mem := memory.DefaultAllocator
	ib, db, sb := array.NewInt64Builder(mem), array.NewDate32Builder(mem), array.NewStringBuilder(mem)
	for i := 4200; i <= 4350; i += 3 {
		ib.Append(int64(i))
		db.Append(arrow.Date32(i / 10))
		sb.Append(fmt.Sprintf("k%05d", i))
	}
	ib.AppendNull()
	db.AppendNull()
	sb.AppendNull()
	keyCols := []struct {
		col  int
		typ  plan.DataType
		keys arrow.Array
	}{{0, plan.Int64Type, ib.NewArray()}, {1, plan.DateType, db.NewArray()}, {2, plan.StringType, sb.NewArray()}}
	offers := map[plan.JoinType]bool{plan.JoinInner: true, plan.JoinSemi: true, plan.JoinRight: true,
		plan.JoinRightSemi: true, plan.JoinRightAnti: true}
	for _, kc := range keyCols {
		defer kc.keys.Release()
		buildSchema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: kc.keys.DataType(), Nullable: true}}, nil)
		for _, jt := range allJoinTypes {
			t.Run(fmt.Sprintf("%s/%s", scanNode.Schema[kc.col].Name, jt), func(t *testing.T) {
				j := &plan.Join{Type: jt, LeftKeys: []*plan.Expr{cref(kc.col, kc.typ)}, RightKeys: []*plan.Expr{cref(0, kc.typ)}}
				schema := append(plan.Schema{}, scanNode.Schema...)
				if jt.BuildOnly() {
					schema = nil
				}
				if jt != plan.JoinSemi && jt != plan.JoinAnti {
					schema = append(schema, plan.Field{Name: "k", Type: kc.typ})
				}
				n := &plan.Node{Kind: plan.KindHashJoin, Schema: schema, Join: j}
				run := func(opts Options) ([]string, *ParquetScan) {
					f, err := os.Open(path)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					op, err := NewParquetScan(context.Background(), f, scanNode, nil, opts)
					if err != nil {
						t.Fatal(err)
					}
					ps := op.(*ParquetScan)
					probe, err := NewFilter(ps, &plan.Node{Kind: plan.KindFilter, Schema: scanNode.Schema,
						Predicate: lit(plan.BoolType, plan.Value{B: true})}, opts)
					if err != nil {
						t.Fatal(err)
					}
					kc.keys.Retain()
					rec := array.NewRecordBatch(buildSchema, []arrow.Array{kc.keys}, int64(kc.keys.Len()))
					kc.keys.Release()
					hj, err := NewHashJoin(probe, newSource(buildSchema, rec), n, opts)
					if err != nil {
						t.Fatal(err)
					}
					recs := drainAll(t, hj)
					defer releaseRecs(recs)
					hj.Close()
					return sortedRows(recs), ps
				}
				want, off := run(Options{NoJoinFilters: true})
				if off.JoinRangePruned() != 0 {
					t.Fatalf("NoJoinFilters: %d row groups pruned by a join range", off.JoinRangePruned())
				}
				for _, late := range []LateMode{LateAlways, LateAuto, LateOff} {
					got, ps := run(Options{Mem: checkedMem(t), Late: late})
					if !slices.Equal(got, want) {
						t.Fatalf("late %v: %d rows with the join's range, %d without", late, len(got), len(want))
					}
					wantPruned := 0
					if offers[jt] {
						wantPruned = rows/rowGroup - 1
					}
					if ps.JoinRangePruned() != int64(wantPruned) {
						t.Fatalf("late %v: %d row groups left unread by the build keys' range, want %d", late, ps.JoinRangePruned(), wantPruned)
					}
				}
			})
		}
	}
}

// writeSortedFile writes rows rows in row groups of rowGroup: id = the
// row number, d = id/10 days, s = "k" and id in five digits (all three
// ascending), v = a scattered value, NULL every 13th row.
func writeSortedFile(t *testing.T, rows, rowGroup int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sorted.parquet")
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := pqarrow.NewFileWriter(schema, out, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(int64(rowGroup))),
		pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.DefaultAllocator
	ib, db, sb, vb := array.NewInt64Builder(mem), array.NewDate32Builder(mem), array.NewStringBuilder(mem), array.NewInt64Builder(mem)
	for i := range rows {
		ib.Append(int64(i))
		db.Append(arrow.Date32(i / 10))
		sb.Append(fmt.Sprintf("k%05d", i))
		if i%13 == 0 {
			vb.AppendNull()
		} else {
			vb.Append(int64(i*7919) % 1000)
		}
	}
	rec := array.NewRecordBatch(schema, []arrow.Array{ib.NewArray(), db.NewArray(), sb.NewArray(), vb.NewArray()}, int64(rows))
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestJoinRangeThroughJoins: the range of a join's build keys reaches the
// scan under a projection and another join of any type (the plan's shape
// for a dimension joined above others: TPC-DS q21's date_dim over
// inventory joined with item and warehouse), and the rows are the same
// with and without it.
func TestJoinRangeThroughJoins(t *testing.T) {
	const rows, rowGroup = 10000, 1000
	path := writeSortedFile(t, rows, rowGroup)
	scanSchema := plan.Schema{{Name: "id", Type: plan.Int64Type}, {Name: "d", Type: plan.DateType}, {Name: "s", Type: plan.StringType},
		{Name: "v", Type: plan.Int64Type}}
	scanNode := &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "t", Format: "parquet", Columns: []string{"id", "d", "s", "v"}},
		Schema: scanSchema}
	mem := memory.DefaultAllocator
	one := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	ints := func(vals ...int64) arrow.RecordBatch {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for _, v := range vals {
			if v < 0 {
				b.AppendNull()
			} else {
				b.Append(v)
			}
		}
		a := b.NewArray()
		defer a.Release()
		return array.NewRecordBatch(one, []arrow.Array{a}, int64(a.Len()))
	}
	// The lower join's build: the even v values and a NULL; the upper's:
	// ids 4200-4350, in the fifth row group.
	var upper []int64
	for i := int64(4200); i <= 4350; i += 3 {
		upper = append(upper, i)
	}
	lowerKeys := []int64{-1}
	for v := int64(0); v < 1000; v += 2 {
		lowerKeys = append(lowerKeys, v)
	}
	for _, lower := range allJoinTypes {
		if lower.BuildOnly() {
			continue // no probe column reaches the upper join
		}
		t.Run(fmt.Sprint(lower), func(t *testing.T) {
			lowerSchema := append(plan.Schema{}, scanSchema...)
			if lower != plan.JoinSemi && lower != plan.JoinAnti {
				lowerSchema = append(lowerSchema, plan.Field{Name: "k", Type: plan.Int64Type})
			}
			lowerN := &plan.Node{Kind: plan.KindHashJoin, Schema: lowerSchema, Join: &plan.Join{Type: lower,
				LeftKeys: []*plan.Expr{cref(3, plan.Int64Type)}, RightKeys: []*plan.Expr{cref(0, plan.Int64Type)}}}
			// The projection keeps id (moved to the second column) and v.
			projN := &plan.Node{Kind: plan.KindProject, Schema: plan.Schema{{Name: "v", Type: plan.Int64Type}, {Name: "id", Type: plan.Int64Type}},
				Exprs: []*plan.Expr{cref(3, plan.Int64Type), cref(0, plan.Int64Type)}}
			upperN := &plan.Node{Kind: plan.KindHashJoin, Schema: append(append(plan.Schema{}, projN.Schema...), plan.Field{Name: "k2", Type: plan.Int64Type}),
				Join: &plan.Join{Type: plan.JoinInner, LeftKeys: []*plan.Expr{cref(1, plan.Int64Type)}, RightKeys: []*plan.Expr{cref(0, plan.Int64Type)}}}
			run := func(opts Options) ([]string, *ParquetScan) {
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				op, err := NewParquetScan(context.Background(), f, scanNode, nil, opts)
				if err != nil {
					t.Fatal(err)
				}
				ps := op.(*ParquetScan)
				lj, err := NewHashJoin(ps, newSource(one, ints(lowerKeys...)), lowerN, opts)
				if err != nil {
					t.Fatal(err)
				}
				pj, err := NewProject(lj, projN, opts)
				if err != nil {
					t.Fatal(err)
				}
				uj, err := NewHashJoin(pj, newSource(one, ints(append(upper, -1)...)), upperN, opts)
				if err != nil {
					t.Fatal(err)
				}
				recs := drainAll(t, uj)
				defer releaseRecs(recs)
				uj.Close()
				return sortedRows(recs), ps
			}
			want, _ := run(Options{NoJoinFilters: true})
			if len(want) == 0 {
				t.Fatal("no rows: the test cannot tell")
			}
			got, ps := run(Options{Mem: checkedMem(t)})
			if !slices.Equal(got, want) {
				t.Fatalf("%d rows with the range, %d without:\n%v\n%v", len(got), len(want), got, want)
			}
			if ps.JoinRangePruned() != rows/rowGroup-1 {
				t.Fatalf("%d row groups left unread, want %d", ps.JoinRangePruned(), rows/rowGroup-1)
			}
		})
	}
}

// sortedRows renders the rows of recs as strings, sorted: a join's rows
// to compare whatever their order.
func sortedRows(recs []arrow.RecordBatch) []string {
	var out []string
	for _, row := range rows(recs) {
		out = append(out, fmt.Sprint(row...))
	}
	slices.Sort(out)
	return out
}
