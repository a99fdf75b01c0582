package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/sluicedb/sluice/planner/plan"
)

const testBaseDay = 10000 // 1997-05-19

// writeTestParquet writes 4 row groups of 100 rows with disjoint id ranges:
// row group g holds ids [100g, 100g+100).
func writeTestParquet(t *testing.T, decAsInt bool) string {
	t.Helper()
	return writeTestParquetWith(t, decAsInt, parquet.WithStats(true))
}

// writeTestParquetWith is writeTestParquet with more writer properties.
func writeTestParquetWith(t *testing.T, decAsInt bool, extra ...parquet.WriterProperty) string {
	t.Helper()
	mem := memory.DefaultAllocator
	dictT := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "big", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
		{Name: "ratio", Type: arrow.PrimitiveTypes.Float32},
		{Name: "cat", Type: dictT, Nullable: true},
		{Name: "lname", Type: arrow.BinaryTypes.LargeString},
		{Name: "small", Type: arrow.PrimitiveTypes.Int16},
	}, nil)
	path := filepath.Join(t.TempDir(), "t.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := append([]parquet.WriterProperty{parquet.WithMaxRowGroupLength(100)}, extra...)
	if decAsInt {
		props = append(props, parquet.WithStoreDecimalAsInteger(true))
	}
	fw, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	for g := 0; g < 4; g++ {
		b := array.NewRecordBuilder(mem, schema)
		for i := g * 100; i < g*100+100; i++ {
			b.Field(0).(*array.Int32Builder).Append(int32(i))
			if i%10 == 3 {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.Int64Builder).Append(int64(i) * 1_000_000_000)
			}
			b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i) * 125))
			b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("name-%04d", i))
			b.Field(4).(*array.Date32Builder).Append(arrow.Date32(testBaseDay + i))
			b.Field(5).(*array.Float32Builder).Append(float32(i) / 4)
			if i%7 == 0 {
				b.Field(6).AppendNull()
			} else {
				b.Field(6).(*array.BinaryDictionaryBuilder).AppendString(fmt.Sprintf("cat%d", i%3))
			}
			b.Field(7).(*array.LargeStringBuilder).Append(fmt.Sprintf("L%d", i))
			b.Field(8).(*array.Int16Builder).Append(int16(-i))
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

var scanSchema = plan.Schema{
	{Name: "id", Type: plan.Int64Type},
	{Name: "big", Type: plan.Int64Type},
	{Name: "price", Type: plan.DecimalType(12, 2)},
	{Name: "name", Type: plan.StringType},
	{Name: "day", Type: plan.DateType},
	{Name: "ratio", Type: plan.Float64Type},
	{Name: "cat", Type: plan.StringType},
	{Name: "lname", Type: plan.StringType},
	{Name: "small", Type: plan.Int64Type},
}

func scanNode(filter *plan.Expr, cols ...int) *plan.Node {
	n := &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "t", Format: "parquet", Filter: filter}}
	if cols == nil {
		for i := range scanSchema {
			cols = append(cols, i)
		}
	}
	for _, c := range cols {
		n.Schema = append(n.Schema, scanSchema[c])
		n.Scan.Columns = append(n.Scan.Columns, scanSchema[c].Name)
	}
	return n
}

func openScan(t *testing.T, path string, n *plan.Node, rgs []int, mem memory.Allocator) *ParquetScan {
	t.Helper()
	return openScanWith(t, path, n, rgs, Options{Mem: mem, BatchRows: 64})
}

// openScanWith is openScan with the given options.
func openScanWith(t *testing.T, path string, n *plan.Node, rgs []int, opts Options) *ParquetScan {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	op, err := NewParquetScan(context.Background(), f, n, rgs, opts)
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	return op.(*ParquetScan)
}

func TestParquetScanConverts(t *testing.T) {
	for _, decAsInt := range []bool{false, true} {
		path := writeTestParquet(t, decAsInt)
		mem := checkedMem(t)
		op := openScan(t, path, scanNode(nil), nil, mem)
		recs := drainAll(t, op)
		total := 0
		for _, r := range recs {
			if !r.Schema().Equal(scanSchema.Arrow()) {
				t.Fatalf("batch schema %v, want %v", r.Schema(), scanSchema.Arrow())
			}
			if r.NumRows() > 64 {
				t.Fatalf("batch of %d rows, want <= 64", r.NumRows())
			}
			total += int(r.NumRows())
		}
		rs := rows(recs)
		releaseRecs(recs)
		if total != 400 {
			t.Fatalf("%d rows, want 400", total)
		}
		want := []any{int64(123), nil, "153.75", "name-0123", plan.FormatDate(testBaseDay + 123), 30.75, "cat0", "L123", int64(-123)}
		if !reflect.DeepEqual(rs[123], want) {
			t.Fatalf("row 123: got %v want %v", rs[123], want)
		}
		if rs[7][6] != nil || rs[8][6] != "cat2" {
			t.Fatalf("dictionary column: %v %v", rs[7][6], rs[8][6])
		}
		if op.BytesRead() == 0 {
			t.Fatal("no bytes counted")
		}
	}
}

func TestParquetScanColumnsAndRowGroups(t *testing.T) {
	path := writeTestParquet(t, false)
	mem := checkedMem(t)
	// reordered, repeated columns; two row groups, read in the order given
	op := openScan(t, path, scanNode(nil, 3, 0, 0), []int{2, 0}, mem)
	recs := drainAll(t, op)
	rs := rows(recs)
	releaseRecs(recs)
	if len(rs) != 200 {
		t.Fatalf("%d rows", len(rs))
	}
	if !reflect.DeepEqual(rs[0], []any{"name-0200", int64(200), int64(200)}) || !reflect.DeepEqual(rs[150], []any{"name-0050", int64(50), int64(50)}) {
		t.Fatalf("rows %v %v", rs[0], rs[150])
	}
	// zero columns: row counts only
	op = openScan(t, path, scanNode(nil, []int{}...), []int{1, 3}, mem)
	recs = drainAll(t, op)
	n := 0
	for _, r := range recs {
		n += int(r.NumRows())
	}
	releaseRecs(recs)
	if n != 200 {
		t.Fatalf("zero-column scan: %d rows", n)
	}
	// errors name the column
	f, _ := os.Open(path)
	bad := scanNode(nil, 0)
	bad.Scan.Columns[0] = "nope"
	if _, err := NewParquetScan(context.Background(), f, bad, nil, Options{Mem: mem}); err == nil {
		t.Fatal("missing column accepted")
	}
	f.Close()
}

func TestParquetRowGroupPruning(t *testing.T) {
	id := cref(0, i64T)
	price := cref(2, dec(12, 2))
	name := cref(3, strT)
	day := cref(4, dateT)
	big := cref(1, i64T)
	and := func(a, b *plan.Expr) *plan.Expr { return call(plan.OpAnd, boolT, a, b) }
	or := func(a, b *plan.Expr) *plan.Expr { return call(plan.OpOr, boolT, a, b) }
	cmp := func(op plan.Op, a, b *plan.Expr) *plan.Expr { return call(op, boolT, a, b) }
	for _, decAsInt := range []bool{false, true} {
		path := writeTestParquet(t, decAsInt)
		for _, tc := range []struct {
			name   string
			filter *plan.Expr
			rgs    []int
			pruned int
			rows   int
		}{
			{"range", and(cmp(plan.OpGe, id, litI(300)), cmp(plan.OpLt, id, litI(350))), nil, 3, 100},
			{"between", and(cmp(plan.OpGe, id, litI(120)), cmp(plan.OpLe, id, litI(250))), nil, 2, 200},
			{"string eq", cmp(plan.OpEq, name, litS("name-0150")), nil, 3, 100},
			{"string lt", cmp(plan.OpLt, name, litS("name-0100")), nil, 3, 100},
			{"in", in(false, id, litI(5), litI(399)), nil, 2, 200},
			{"not in keeps", in(true, id, litI(5)), nil, 0, 400},
			{"decimal", cmp(plan.OpGt, price, litD("400.00", 5, 2)), nil, 3, 100},
			{"decimal other scale", cmp(plan.OpGt, price, litD("400.0", 4, 1)), nil, 3, 100},
			{"decimal eq", cmp(plan.OpEq, price, litD("125.00", 5, 2)), nil, 3, 100},
			{"date", cmp(plan.OpLt, day, lit(dateT, plan.Value{I: testBaseDay + 100})), nil, 3, 100},
			{"not understood", cmp(plan.OpEq, call(plan.OpMod, i64T, id, litI(2)), litI(0)), nil, 0, 400},
			{"or", or(cmp(plan.OpLt, id, litI(100)), cmp(plan.OpGe, id, litI(300))), nil, 2, 200},
			{"literal left", cmp(plan.OpLt, litI(1000), id), nil, 4, 0},
			{"ne", cmp(plan.OpNe, id, litI(5)), nil, 0, 400},
			{"and with unknown", and(cmp(plan.OpEq, call(plan.OpMod, i64T, id, litI(2)), litI(0)), cmp(plan.OpGt, id, litI(250))), nil, 2, 200},
			{"subset", cmp(plan.OpLt, id, litI(150)), []int{1, 2}, 1, 100},
			{"nullable column", cmp(plan.OpGe, big, litI(300_000_000_000)), nil, 3, 100},
			{"false", litB(false), nil, 4, 0},
		} {
			mem := checkedMem(t)
			// The rows of the row groups read: late materialization
			// (which drops rows inside them) is off.
			op := openScanWith(t, path, scanNode(tc.filter), tc.rgs, Options{Mem: mem, BatchRows: 64, Late: LateOff})
			recs := drainAll(t, op)
			n := 0
			for _, r := range recs {
				n += int(r.NumRows())
			}
			releaseRecs(recs)
			if op.Pruned() != tc.pruned || n != tc.rows {
				t.Errorf("decAsInt=%v %s: pruned %d rows %d, want pruned %d rows %d", decAsInt, tc.name, op.Pruned(), n, tc.pruned, tc.rows)
			}
		}
	}
}

// failingReader fails every read, as an unreachable object store does.
type failingReader struct{ *os.File }

func (failingReader) ReadAt(p []byte, off int64) (int, error) {
	return 0, errors.New("connection reset by peer")
}

// TestParquetCorruptInput: a file that reads fine but does not decode is
// corrupt input (SL106, the user's: never retried); a file that cannot be
// read is not (a transient error, without a code).
func TestParquetCorruptInput(t *testing.T) {
	path := writeTestParquet(t, false)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"garbage":   []byte("this is not a parquet file at all, but long enough to have a footer"),
		"truncated": good[:len(good)/2],
		"footer":    append(append([]byte(nil), good[:len(good)-12]...), []byte("\x00\x00\x00\x00\x00\x00\x00\x00PAR1")...),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), name+".parquet")
			if err := os.WriteFile(p, body, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			_, err = NewParquetScan(context.Background(), f, scanNode(nil), nil, Options{Mem: memory.NewGoAllocator()})
			if err == nil || plan.CodeOf(err) != plan.CodeCorruptInput || !strings.Contains(err.Error(), "parquet scan of t") {
				t.Fatalf("err %v: code %q, want %s naming the table", err, plan.CodeOf(err), plan.CodeCorruptInput)
			}
		})
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = NewParquetScan(context.Background(), failingReader{f}, scanNode(nil), nil, Options{Mem: memory.NewGoAllocator()})
	if err == nil || plan.CodeOf(err) != "" {
		t.Fatalf("unreadable file: err %v, code %q; want an error without a code", err, plan.CodeOf(err))
	}
}

// TestParquetDictionaryRead: string columns whose pages are all
// dictionary-encoded are read as indices and gathered; a chunk that fell
// back to plain pages, or a column without a dictionary, is read value by
// value. Every way reads the strings written, NULLs included, over several
// row groups, pages and batches.
func TestParquetDictionaryRead(t *testing.T) {
	cases := []struct {
		name     string
		distinct int // values cycle through this many strings
		props    []parquet.WriterProperty
		dictOnly bool
	}{
		{"dictionary", 5, nil, true},
		{"dictionary small pages", 50, []parquet.WriterProperty{parquet.WithDataPageSize(256)}, true},
		{"fallback to plain", 5000, []parquet.WriterProperty{parquet.WithDictionaryPageSizeLimit(1024)}, false},
		{"no dictionary", 5, []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := checkedMem(t)
			schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
			path := filepath.Join(t.TempDir(), "d.parquet")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			props := append([]parquet.WriterProperty{parquet.WithMaxRowGroupLength(3000)}, tc.props...)
			fw, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
			if err != nil {
				t.Fatal(err)
			}
			const rowsN = 7000
			var want []any
			b := array.NewStringBuilder(memory.DefaultAllocator)
			for i := 0; i < rowsN; i++ {
				if i%11 == 4 {
					b.AppendNull()
					want = append(want, nil)
					continue
				}
				v := fmt.Sprintf("value-%d-%s", i%tc.distinct, strings.Repeat("x", i%tc.distinct%7))
				b.Append(v)
				want = append(want, v)
			}
			col := b.NewArray()
			rec := array.NewRecordBatch(schema, []arrow.Array{col}, rowsN)
			if err := fw.Write(rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
			col.Release()
			b.Release()
			if err := fw.Close(); err != nil {
				t.Fatal(err)
			}
			n := &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "d", Format: "parquet", Columns: []string{"s"}},
				Schema: plan.Schema{{Name: "s", Type: plan.StringType}}}
			op := openScan(t, path, n, nil, mem)
			all := []int{0, 1, 2}
			if got := dictionaryOnly(op.md, all, 0); got != tc.dictOnly {
				t.Errorf("dictionaryOnly = %v, want %v", got, tc.dictOnly)
			}
			recs := drainAll(t, op)
			var got []any
			for _, r := range rows(recs) {
				got = append(got, r[0])
			}
			releaseRecs(recs)
			op.Close()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read %d values, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
		})
	}
}

func firstDiff(a, b []any) int {
	for i := range min(len(a), len(b)) {
		if !reflect.DeepEqual(a[i], b[i]) {
			return i
		}
	}
	return min(len(a), len(b))
}
