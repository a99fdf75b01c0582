package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// The nested test file: 4 row groups of 100 rows, row i (0..399) being
//
//	id  int32          i
//	s   struct<a int64, b string, c struct<x int32, y double>>
//	                   NULL when i%11 == 0; a = i (NULL when i%13 == 0),
//	                   b = a 60-byte string, c NULL when i%17 == 0, else
//	                   x = 2i, y = i/4
//	pad string         a 100-byte string
//
// so each row group's s.a and s.c.x ranges are disjoint from the others'.
const nestedRows = 400

var nestedCType = plan.StructOf([]plan.Field{{Name: "x", Type: plan.Int64Type}, {Name: "y", Type: plan.Float64Type}})
var nestedSType = plan.StructOf([]plan.Field{{Name: "a", Type: plan.Int64Type}, {Name: "b", Type: plan.StringType}, {Name: "c", Type: nestedCType}})

func nestedB(i int) string { return fmt.Sprintf("b%04d-%s", i, strings.Repeat("x", 55)) }

func writeNestedParquet(t *testing.T) string {
	t.Helper()
	cT := arrow.StructOf(
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	sT := arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "c", Type: cT, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "s", Type: sT, Nullable: true},
		{Name: "pad", Type: arrow.BinaryTypes.String},
	}, nil)
	path := filepath.Join(t.TempDir(), "nested.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(100), parquet.WithStats(true), parquet.WithDictionaryDefault(false))
	fw, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.DefaultAllocator
	for g := 0; g < 4; g++ {
		b := array.NewRecordBuilder(mem, schema)
		sb := b.Field(1).(*array.StructBuilder)
		cb := sb.FieldBuilder(2).(*array.StructBuilder)
		for i := g * 100; i < g*100+100; i++ {
			b.Field(0).(*array.Int32Builder).Append(int32(i))
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("%04d%s", i, strings.Repeat("p", 96)))
			if i%11 == 0 {
				sb.AppendNull()
				continue
			}
			sb.Append(true)
			if i%13 == 0 {
				sb.FieldBuilder(0).AppendNull()
			} else {
				sb.FieldBuilder(0).(*array.Int64Builder).Append(int64(i))
			}
			sb.FieldBuilder(1).(*array.StringBuilder).Append(nestedB(i))
			if i%17 == 0 {
				cb.AppendNull()
				continue
			}
			cb.Append(true)
			cb.FieldBuilder(0).(*array.Int32Builder).Append(int32(2 * i))
			cb.FieldBuilder(1).(*array.Float64Builder).Append(float64(i) / 4)
		}
		rec := b.NewRecordBatch()
		if err := fw.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// nestedValue is row i's value of the field path of s (nil path: id).
func nestedValue(i int, path ...string) any {
	if len(path) == 0 {
		return int64(i)
	}
	if i%11 == 0 {
		return nil
	}
	c := func(p []string) any {
		if i%17 == 0 {
			return nil
		}
		if len(p) == 0 {
			return map[string]any{"x": int64(2 * i), "y": float64(i) / 4}
		}
		if p[0] == "x" {
			return int64(2 * i)
		}
		return float64(i) / 4
	}
	a := any(int64(i))
	if i%13 == 0 {
		a = nil
	}
	switch path[0] {
	case "a":
		return a
	case "b":
		return nestedB(i)
	case "c":
		return c(path[1:])
	}
	return map[string]any{"a": a, "b": nestedB(i), "c": c(nil)}
}

// nestedVals is goVals with structs as maps of field name to value.
func nestedVals(a arrow.Array) []any {
	st, ok := a.(*array.Struct)
	if !ok {
		return goVals(a)
	}
	out := make([]any, a.Len())
	fields := st.DataType().(*arrow.StructType).Fields()
	kids := make([][]any, len(fields))
	for k := range fields {
		kids[k] = nestedVals(st.Field(k))
	}
	for i := range out {
		if st.IsNull(i) {
			continue
		}
		m := map[string]any{}
		for k, f := range fields {
			m[f.Name] = kids[k][i]
		}
		out[i] = m
	}
	return out
}

// pathCol is a scan column of the nested file: id, s or a field of s.
type pathCol struct {
	path []string // nil: id; {""}: s whole
	typ  plan.DataType
}

var (
	colID  = pathCol{nil, plan.Int64Type}
	colS   = pathCol{[]string{""}, nestedSType}
	colSA  = pathCol{[]string{"a"}, plan.Int64Type}
	colSB  = pathCol{[]string{"b"}, plan.StringType}
	colSC  = pathCol{[]string{"c"}, nestedCType}
	colSCX = pathCol{[]string{"c", "x"}, plan.Int64Type}
)

func nestedScanNode(filter *plan.Expr, cols ...pathCol) *plan.Node {
	n := &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "t", Format: "parquet", Filter: filter}}
	paths := false
	for _, c := range cols {
		switch {
		case c.path == nil:
			n.Scan.Columns = append(n.Scan.Columns, "id")
			n.Scan.Paths = append(n.Scan.Paths, nil)
		case c.path[0] == "":
			n.Scan.Columns = append(n.Scan.Columns, "s")
			n.Scan.Paths = append(n.Scan.Paths, nil)
		default:
			n.Scan.Columns = append(n.Scan.Columns, "s")
			n.Scan.Paths = append(n.Scan.Paths, c.path)
			paths = true
		}
		n.Schema = append(n.Schema, plan.Field{Name: n.Scan.ColumnName(len(n.Scan.Columns) - 1), Type: c.typ, Nullable: true})
	}
	if !paths {
		n.Scan.Paths = nil
	}
	return n
}

// TestParquetStructPaths reads fields of a struct column alone: the
// answer is the field's values (NULL where the struct is), only the
// field's leaves are fetched, and a filter on a field prunes row groups
// from its leaf's statistics.
func TestParquetStructPaths(t *testing.T) {
	path := writeNestedParquet(t)
	sa := func() *plan.Expr { return cref(0, plan.Int64Type) }
	and := func(a, b *plan.Expr) *plan.Expr { return plan.Call(plan.OpAnd, plan.BoolType, a, b) }
	cases := []struct {
		name   string
		cols   []pathCol
		filter *plan.Expr
		keep   func(i int) bool // the rows the filter keeps (nil: all)
		pruned int
		// whole: the same scan reading s whole, whose bytes the field
		// scan must undercut (nil: no comparison).
		whole []pathCol
	}{
		{name: "s.a", cols: []pathCol{colSA}, whole: []pathCol{colS}},
		{name: "s.c.x", cols: []pathCol{colSCX}, whole: []pathCol{colS}},
		{name: "s.c struct", cols: []pathCol{colSC}, whole: []pathCol{colS}},
		{name: "id s.a s.c.x", cols: []pathCol{colID, colSA, colSCX}, whole: []pathCol{colID, colS}},
		{name: "s.b s.a", cols: []pathCol{colSB, colSA}},
		{name: "s.a > 250", cols: []pathCol{colSA}, filter: plan.Call(plan.OpGt, plan.BoolType, sa(), litI(250)),
			keep: func(i int) bool { return nestedValue(i, "a") != nil && i > 250 }, pruned: 2},
		{name: "s.a = 150", cols: []pathCol{colSA, colID}, filter: plan.Call(plan.OpEq, plan.BoolType, sa(), litI(150)),
			keep: func(i int) bool { return i == 150 }, pruned: 3},
		{name: "s.a between", cols: []pathCol{colSA, colSB}, filter: and(plan.Call(plan.OpGe, plan.BoolType, sa(), litI(120)), plan.Call(plan.OpLe, plan.BoolType, sa(), litI(230))),
			keep: func(i int) bool { return nestedValue(i, "a") != nil && i >= 120 && i <= 230 }, pruned: 2},
		{name: "s.a in", cols: []pathCol{colSA}, filter: &plan.Expr{Op: plan.OpIn, Type: plan.BoolType, Args: []*plan.Expr{sa(), litI(5), litI(399)}},
			keep: func(i int) bool { return i == 5 || i == 399 }, pruned: 2},
		{name: "s.c.x < 400", cols: []pathCol{colSCX, colSC}, filter: plan.Call(plan.OpLt, plan.BoolType, sa(), litI(400)),
			keep: func(i int) bool { return nestedValue(i, "c", "x") != nil && i < 200 }, pruned: 2},
		{name: "s.a > 1000", cols: []pathCol{colSA}, filter: plan.Call(plan.OpGt, plan.BoolType, sa(), litI(1000)),
			keep: func(int) bool { return false }, pruned: 4},
		// A field of a struct column read whole prunes from its leaf.
		{name: "s whole, s.a > 250", cols: []pathCol{colS}, filter: plan.Call(plan.OpGt, plan.BoolType, field(cref(0, nestedSType), "a", plan.Int64Type), litI(250)),
			keep: func(i int) bool { return nestedValue(i, "a") != nil && i > 250 }, pruned: 2},
		{name: "s whole, s.c.x in", cols: []pathCol{colID, colS}, filter: &plan.Expr{Op: plan.OpIn, Type: plan.BoolType,
			Args: []*plan.Expr{field(field(cref(1, nestedSType), "c", nestedCType), "x", plan.Int64Type), litI(4), litI(6)}},
			keep: func(i int) bool { return i == 2 || i == 3 }, pruned: 3},
		{name: "s.c, 350 >= s.c.x", cols: []pathCol{colSC}, filter: plan.Call(plan.OpGe, plan.BoolType, litI(350), field(cref(0, nestedCType), "x", plan.Int64Type)),
			keep: func(i int) bool { return nestedValue(i, "c") != nil && 2*i <= 350 }, pruned: 2},
		// A NULL test of a struct column prunes nothing.
		{name: "s whole", cols: []pathCol{colS}, filter: plan.Call(plan.OpIsNotNull, plan.BoolType, cref(0, nestedSType)),
			keep: func(i int) bool { return i%11 != 0 }},
	}
	for _, late := range []LateMode{LateAuto, LateOff, LateAlways} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/late=%d", tc.name, late), func(t *testing.T) {
				mem := checkedMem(t)
				read := func(cols []pathCol) ([][]any, *ParquetScan) {
					op := openScanWith(t, path, nestedScanNode(tc.filter, cols...), nil, Options{Mem: mem, BatchRows: 64, Late: late})
					recs := drainAll(t, op)
					defer releaseRecs(recs)
					var out [][]any
					for _, r := range recs {
						cols := make([][]any, r.NumCols())
						for c := range cols {
							cols[c] = nestedVals(r.Column(c))
						}
						for i := 0; i < int(r.NumRows()); i++ {
							row := make([]any, len(cols))
							for c := range cols {
								row[c] = cols[c][i]
							}
							out = append(out, row)
						}
					}
					return out, op
				}
				got, op := read(tc.cols)
				if op.Pruned() != tc.pruned {
					t.Errorf("pruned %d row groups, want %d", op.Pruned(), tc.pruned)
				}
				// The scan keeps every row of a row group it reads; the
				// Filter above drops the others.
				var want [][]any
				must := 0 // rows the filter keeps
				for i := 0; i < nestedRows; i++ {
					if tc.pruned > 0 && !rgKept(i, tc.keep) {
						continue
					}
					if tc.keep != nil && tc.keep(i) {
						must++
					}
					row := make([]any, len(tc.cols))
					for c, col := range tc.cols {
						p := col.path
						if len(p) > 0 && p[0] == "" {
							p = []string{"*"}
						}
						row[c] = nestedValue(i, p...)
					}
					want = append(want, row)
				}
				if late == LateOff || tc.filter == nil {
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("got %d rows, want %d; first got %v want %v", len(got), len(want), first(got), first(want))
					}
				} else if !subsequence(got, want) || len(got) < must {
					// A late scan drops rows its filter drops, some or all.
					t.Fatalf("late scan: %d rows, not between the %d kept and the %d of the row groups", len(got), must, len(want))
				}
				if tc.whole != nil {
					_, whole := read(tc.whole)
					if op.BytesRead() >= whole.BytesRead() {
						t.Errorf("the fields read %d bytes, the whole struct %d", op.BytesRead(), whole.BytesRead())
					}
				}
			})
		}
	}
}

// field is struct_extract(e, name) of type t.
func field(e *plan.Expr, name string, t plan.DataType) *plan.Expr {
	return plan.CallFunc("struct_extract", t, e, litS(name))
}

// rgKept reports whether row i's row group holds a row keep keeps.
func rgKept(i int, keep func(int) bool) bool {
	g := i / 100 * 100
	for j := g; j < g+100; j++ {
		if keep(j) {
			return true
		}
	}
	return false
}

func first(r [][]any) any {
	if len(r) == 0 {
		return nil
	}
	return r[0]
}

// subsequence reports whether got is want with some rows left out.
func subsequence(got, want [][]any) bool {
	k := 0
	for _, w := range want {
		if k < len(got) && reflect.DeepEqual(w, got[k]) {
			k++
		}
	}
	return k == len(got)
}

// TestParquetStructPathBytes checks that a field read fetches only its
// leaf's column chunks: the bytes read for s.a plus the chunks of s's
// other leaves come to about the bytes read for s whole.
func TestParquetStructPathBytes(t *testing.T) {
	path := writeNestedParquet(t)
	mem := checkedMem(t)
	run := func(cols ...pathCol) int64 {
		op := openScanWith(t, path, nestedScanNode(nil, cols...), nil, Options{Mem: mem, BatchRows: 64})
		releaseRecs(drainAll(t, op))
		return op.BytesRead()
	}
	field, whole := run(colSA), run(colS)
	op := openScanWith(t, path, nestedScanNode(nil, colS), nil, Options{Mem: mem})
	defer op.Close()
	var other int64 // the chunks of s.b, s.c.x, s.c.y
	for _, r := range chunkRanges(op.md, []int{0, 1, 2, 3}, []int{2, 3, 4}) {
		other += r[1]
	}
	t.Logf("s.a: %d bytes, s whole: %d bytes, other leaves' chunks: %d bytes", field, whole, other)
	if field+other > whole+whole/20 || field+other < whole-whole/20 {
		t.Errorf("s.a read %d bytes, s whole %d, the other leaves' chunks are %d bytes", field, whole, other)
	}
}

// TestParquetStructPathErrors: a field the file lacks, and a path through
// a column that is not a struct.
func TestParquetStructPathErrors(t *testing.T) {
	path := writeNestedParquet(t)
	for _, tc := range []struct {
		cols []pathCol
		want string
	}{
		{[]pathCol{{[]string{"zz"}, plan.Int64Type}}, `has no field "zz"`},
		{[]pathCol{{[]string{"a", "q"}, plan.Int64Type}}, `not a struct`},
	} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewParquetScan(t.Context(), f, nestedScanNode(nil, tc.cols...), nil, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.cols, err, tc.want)
		}
		f.Close()
	}
}

// TestParquetStructPathLate: a primitive struct field decodes by the late
// path (levels under structs, nothing repeated): the filter on s.a runs
// on its values alone and s.b is decoded only for the rows it keeps.
func TestParquetStructPathLate(t *testing.T) {
	path := writeNestedParquet(t)
	mem := checkedMem(t)
	filter := plan.Call(plan.OpLe, plan.BoolType, cref(0, plan.Int64Type), litI(40))
	op := openScanWith(t, path, nestedScanNode(filter, colSA, colSB, colSCX), nil, Options{Mem: mem, BatchRows: 64, Late: LateAlways})
	recs := drainAll(t, op)
	defer releaseRecs(recs)
	got := rows(recs)
	var want [][]any
	for i := 0; i <= 40; i++ {
		if a := nestedValue(i, "a"); a != nil {
			want = append(want, []any{a, nestedValue(i, "b"), nestedValue(i, "c", "x")})
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	decoded, skipped := op.LateRows()
	if op.Pruned() != 3 || decoded == 0 || skipped == 0 {
		t.Errorf("pruned %d row groups, late rows decoded %d skipped %d", op.Pruned(), decoded, skipped)
	}
}
