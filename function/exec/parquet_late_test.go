package exec

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// lateCols are the columns of the randomized files: every type the late
// path decodes, and a timestamp, which it leaves to the record reader.
var lateCols = []struct {
	name  string
	arrow arrow.DataType
	typ   plan.DataType
	null  bool
}{
	{"b", arrow.FixedWidthTypes.Boolean, plan.BoolType, true},
	{"i32", arrow.PrimitiveTypes.Int32, plan.Int64Type, true},
	{"i8", arrow.PrimitiveTypes.Int8, plan.Int64Type, false},
	{"u16", arrow.PrimitiveTypes.Uint16, plan.Int64Type, true},
	{"d", arrow.FixedWidthTypes.Date32, plan.DateType, true},
	{"dec9", &arrow.Decimal128Type{Precision: 9, Scale: 2}, plan.DecimalType(9, 2), true},
	{"i64", arrow.PrimitiveTypes.Int64, plan.Int64Type, true},
	{"i64r", arrow.PrimitiveTypes.Int64, plan.Int64Type, false},
	{"dec15", &arrow.Decimal128Type{Precision: 15, Scale: 2}, plan.DecimalType(15, 2), false},
	{"f32", arrow.PrimitiveTypes.Float32, plan.Float64Type, true},
	{"f64", arrow.PrimitiveTypes.Float64, plan.Float64Type, false},
	{"s", arrow.BinaryTypes.String, plan.StringType, true},  // a few distinct values
	{"sh", arrow.BinaryTypes.String, plan.StringType, true}, // many: dictionary falls back to plain
	{"sr", arrow.BinaryTypes.String, plan.StringType, false},
	{"ts", &arrow.TimestampType{Unit: arrow.Microsecond}, plan.TimestampType, true},
	{"l", arrow.ListOf(arrow.PrimitiveTypes.Int64), plan.ListOf(plan.Int64Type), true},
}

type lateFile struct {
	rows, rowGroup int
	dict           bool
	pageBytes      int64
	v2             bool
	nullPct        int
	seed           int64
}

// writeLateFile writes a randomized file; small pages give several pages
// per column chunk, and a small dictionary page limit makes the chunks of
// sh fall back from dictionary to plain pages.
func writeLateFile(t testing.TB, f lateFile) string {
	t.Helper()
	rng := rand.New(rand.NewSource(f.seed))
	var fields []arrow.Field
	for _, c := range lateCols {
		fields = append(fields, arrow.Field{Name: c.name, Type: c.arrow, Nullable: c.null})
	}
	sch := arrow.NewSchema(fields, nil)
	path := filepath.Join(t.TempDir(), fmt.Sprintf("late-%d.parquet", f.seed))
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := []parquet.WriterProperty{parquet.WithMaxRowGroupLength(int64(f.rowGroup)), parquet.WithDictionaryDefault(f.dict),
		parquet.WithDataPageSize(f.pageBytes), parquet.WithDictionaryPageSizeLimit(2048), parquet.WithStoreDecimalAsInteger(true),
		parquet.WithStats(true), parquet.WithBatchSize(64),
		// s stays dictionary-encoded in every chunk (arrow-go would
		// fall back to plain where it guesses plain is smaller).
		parquet.WithDictionaryCostFallbackFor("s", false)}
	if f.v2 {
		props = append(props, parquet.WithDataPageVersion(parquet.DataPageV2))
	}
	fw, err := pqarrow.NewFileWriter(sch, out, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties())
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for done := 0; done < f.rows; {
		n := min(f.rows-done, 1+rng.Intn(700))
		for r := 0; r < n; r++ {
			for j, c := range lateCols {
				fb := b.Field(j)
				if c.null && rng.Intn(100) < f.nullPct {
					fb.AppendNull()
					continue
				}
				v := rng.Int63n(1000)
				switch x := fb.(type) {
				case *array.BooleanBuilder:
					x.Append(v%3 == 0)
				case *array.Int32Builder:
					x.Append(int32(v*1000 - 400_000))
				case *array.Int8Builder:
					x.Append(int8(v%200 - 100))
				case *array.Uint16Builder:
					x.Append(uint16(v * 60))
				case *array.Date32Builder:
					x.Append(arrow.Date32(9000 + v))
				case *array.Decimal128Builder:
					x.Append(decimal128.FromI64(v*1001 - 300_000))
				case *array.Int64Builder:
					x.Append(v*1_000_000_007 - 3)
				case *array.Float32Builder:
					x.Append(float32(v) / 8)
				case *array.Float64Builder:
					x.Append(float64(v)/3 - 50)
				case *array.StringBuilder:
					switch c.name {
					case "s":
						x.Append(fmt.Sprintf("v%d", v%7))
					case "sh":
						x.Append(fmt.Sprintf("high-%d-%d", v, rng.Intn(50)))
					default:
						x.Append(fmt.Sprintf("r%d", v%40))
					}
				case *array.TimestampBuilder:
					x.Append(arrow.Timestamp(v * 86_400_000_000))
				case *array.ListBuilder:
					x.Append(true)
					for k := int64(0); k < v%4; k++ {
						x.ValueBuilder().(*array.Int64Builder).Append(v + k)
					}
				}
			}
		}
		rec := b.NewRecordBatch()
		if err := fw.WriteBuffered(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		done += n
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func lateNode(filter *plan.Expr) *plan.Node {
	n := &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "t", Format: "parquet", Filter: filter}}
	for _, c := range lateCols {
		n.Schema = append(n.Schema, plan.Field{Name: c.name, Type: c.typ})
		n.Scan.Columns = append(n.Scan.Columns, c.name)
	}
	return n
}

func lateCol_(name string) *plan.Expr {
	for i, c := range lateCols {
		if c.name == name {
			return cref(i, c.typ)
		}
	}
	panic(name)
}

// scanRows runs a scan of path with the given mode; filter, when set, is
// applied above it as the plan's Filter node would be.
func scanRows(t *testing.T, path string, n *plan.Node, opts Options, filter bool) ([][]any, *ParquetScan) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return scanRowsFrom(t, f, n, opts, filter)
}

// sharedSource is a file in memory that hands out its own bytes (View),
// as objstore.ReaderAt does with its read-ahead: a scan over it must read
// the column chunks without copying them and never write into them.
type sharedSource struct {
	*bytes.Reader
	data  []byte
	views int
}

func (s *sharedSource) View(off, n int64) ([]byte, error) {
	s.views++
	if off < 0 || off > int64(len(s.data)) {
		return nil, io.EOF
	}
	end := min(off+n, int64(len(s.data)))
	if end-off < n {
		return s.data[off:end], io.EOF
	}
	return s.data[off:end], nil
}

// scanRowsShared is scanRows over a sharedSource; it fails the test when
// no chunk was viewed or the scan changed the shared bytes.
func scanRowsShared(t *testing.T, path string, n *plan.Node, opts Options, filter bool) ([][]any, *ParquetScan) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	orig := bytes.Clone(data)
	src := &sharedSource{Reader: bytes.NewReader(data), data: data}
	rows, ps := scanRowsFrom(t, src, n, opts, filter)
	if src.views == 0 && len(rows) > 0 {
		t.Error("no column chunk was read through View")
	}
	if !bytes.Equal(data, orig) {
		t.Error("the scan wrote into the source's shared bytes")
	}
	return rows, ps
}

func scanRowsFrom(t *testing.T, f parquet.ReaderAtSeeker, n *plan.Node, opts Options, filter bool) ([][]any, *ParquetScan) {
	t.Helper()
	op, err := NewParquetScan(context.Background(), f, n, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	ps := op.(*ParquetScan)
	if filter && n.Scan.Filter != nil {
		fo, err := NewFilter(op, &plan.Node{Kind: plan.KindFilter, Schema: n.Schema, Predicate: n.Scan.Filter}, opts)
		if err != nil {
			t.Fatal(err)
		}
		op = fo
	}
	recs := drainAll(t, op)
	defer releaseRecs(recs)
	op.Close()
	var out [][]any
	for _, rec := range recs {
		out = appendRows(out, rec)
	}
	return out, ps
}

// scanRowsStreamed is scanRows (without a Filter above) that releases
// each batch as soon as its rows are copied out, as an aggregation does:
// the scan's recycler hands the released buffers to its next batches.
func scanRowsStreamed(t *testing.T, path string, n *plan.Node, opts Options) ([][]any, *ParquetScan) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	op, err := NewParquetScan(context.Background(), f, n, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]any
	for {
		rec, err := op.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = appendRows(out, rec)
		rec.Release()
	}
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
	return out, op.(*ParquetScan)
}

// appendRows appends rec's rows to out as Go values (copies).
func appendRows(out [][]any, rec arrow.RecordBatch) [][]any {
	cols := make([][]any, rec.NumCols())
	for j, c := range rec.Columns() {
		if l, ok := c.(*array.List); ok {
			cols[j] = make([]any, l.Len())
			for i := range cols[j] {
				if !l.IsNull(i) {
					cols[j][i] = l.ValueStr(i)
				}
			}
			continue
		}
		cols[j] = goVals(c)
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		r := make([]any, len(cols))
		for j := range cols {
			r[j] = cols[j][i]
		}
		out = append(out, r)
	}
	return out
}

// TestLateMaterialization checks the late path against the record reader
// on randomized files: for each file and filter, the rows the late scan
// emits (with no Filter above) are exactly the rows the plain scan emits
// that the filter keeps, in the same order; the adaptive scan under a
// Filter gives the same rows.
func TestLateMaterialization(t *testing.T) {
	files := []lateFile{
		{rows: 5000, rowGroup: 1200, dict: true, pageBytes: 512, nullPct: 10, seed: 1},
		{rows: 4000, rowGroup: 4000, dict: false, pageBytes: 300, nullPct: 30, seed: 2},
		{rows: 6000, rowGroup: 900, dict: true, pageBytes: 2048, v2: true, nullPct: 5, seed: 3},
		{rows: 3000, rowGroup: 700, dict: true, pageBytes: 1 << 20, nullPct: 0, seed: 4},
		{rows: 2500, rowGroup: 2500, dict: false, pageBytes: 128, v2: true, nullPct: 50, seed: 5},
	}
	s, i64, sh := lateCol_("s"), lateCol_("i64"), lateCol_("sh")
	and := func(a, b *plan.Expr) *plan.Expr { return call(plan.OpAnd, plan.BoolType, a, b) }
	filters := []struct {
		name string
		f    *plan.Expr
	}{
		{"string equality (dictionary)", call(plan.OpEq, plan.BoolType, s, litS("v3"))},
		{"string IN", call(plan.OpIn, plan.BoolType, s, litS("v1"), litS("v5"), litS("nope"))},
		{"string LIKE", call(plan.OpLike, plan.BoolType, sh, litS("high-1%"))},
		{"range on int64", and(call(plan.OpGe, plan.BoolType, i64, litI(100_000_000_000)), call(plan.OpLt, plan.BoolType, i64, litI(130_000_000_000)))},
		{"decimal and date", and(call(plan.OpLt, plan.BoolType, lateCol_("dec15"), litD("-2000.00", 15, 2)),
			call(plan.OpGt, plan.BoolType, lateCol_("d"), litDate("1994-08-01")))},
		{"IS NULL", call(plan.OpIsNull, plan.BoolType, lateCol_("f32"))},
		{"keeps nearly all", call(plan.OpIsNotNull, plan.BoolType, lateCol_("sr"))},
		{"keeps none", call(plan.OpEq, plan.BoolType, s, litS("v35"))}, // inside the statistics' range
		{"dictionary and row conjuncts", and(call(plan.OpNe, plan.BoolType, s, litS("v2")), call(plan.OpLt, plan.BoolType, lateCol_("f64"), litF(40)))},
		{"no filter: one pass through the fast path", nil},
		{"on a timestamp", call(plan.OpLt, plan.BoolType, lateCol_("ts"), lit(plan.TimestampType, plan.Value{I: 100 * 86_400_000_000}))},
	}
	dictEvals := 0
	defer func() {
		if dictEvals == 0 {
			t.Error("no filter was evaluated on a dictionary")
		}
	}()
	for _, lf := range files {
		path := writeLateFile(t, lf)
		for _, fc := range filters {
			t.Run(fmt.Sprintf("seed%d/%s", lf.seed, fc.name), func(t *testing.T) {
				n := lateNode(fc.f)
				want, _ := scanRows(t, path, n, Options{Late: LateOff, BatchRows: 1000}, true)
				for _, o := range []struct {
					batch, gap int
					arrowPages bool // arrow-go's column readers instead of pageDecoder
					shared     bool // column chunks viewed in the source's bytes, not copied
				}{{1000, 0, false, false}, {97, 0, false, false}, {1000, 1, false, false}, {333, 7, false, false}, {97, 0, true, false},
					{1000, 0, false, true}, {97, 0, true, true}} {
					batch := o.batch
					mem := checkedMem(t)
					scan := scanRows
					if o.shared {
						scan = scanRowsShared
					}
					got, ps := scan(t, path, n, Options{Mem: mem, Late: LateAlways, BatchRows: batch, lateGap: o.gap, arrowPages: o.arrowPages}, false)
					if ps.late == nil {
						t.Fatal("the late path was not taken")
					}
					if own := ps.late.ownChunks; (own > 0) == o.arrowPages && (own > 0 || len(want) > 0) {
						t.Errorf("arrowPages=%v: %d column chunks went through pageDecoder", o.arrowPages, own)
					}
					if ps.late.ownChunks > 0 && lf.rowGroup < lf.rows && fc.f == nil && ps.late.reusedReaders == 0 {
						t.Errorf("%d column chunks through pageDecoder over %d row groups, none by a reused page reader", ps.late.ownChunks, len(ps.rowGroups))
					}
					if len(want) == 0 && lf.rowGroup < lf.rows && ps.late.unopened == 0 {
						t.Error("no row kept, yet every column chunk was opened")
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("batch %d: late scan gave %d rows, the record reader and filter %d; first difference at %d", batch, len(got), len(want), firstRowDiff(got, want))
					}
					if fc.name == "string equality (dictionary)" && dictionaryOnly(ps.md, ps.rowGroups, 11) && ps.late.dictEvals == 0 {
						t.Error("no conjunct was evaluated on a dictionary")
					}
					dictEvals += ps.late.dictEvals
					dec, skip := ps.LateRows()
					if dec != int64(len(want)) {
						t.Errorf("late_rows_decoded=%d, want %d", dec, len(want))
					}
					if dec+skip == 0 {
						t.Errorf("nothing decoded or skipped")
					}
				}
				// Each batch released before the next is read, as an
				// aggregation does: the late columns' buffers come back
				// recycled, released ones poisoned.
				got, ps := scanRowsStreamed(t, path, n, Options{Mem: checkedMem(t), Late: LateAlways, BatchRows: 97, PoisonFreed: true})
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("streamed late scan gave %d rows, want %d; first difference at %d", len(got), len(want), firstRowDiff(got, want))
				}
				if len(want) > 4*97 && ps.late.fixed.reused == 0 {
					t.Errorf("%d rows in batches of 97 released as they came, no buffer recycled", len(want))
				}
				got, _ = scanRows(t, path, n, Options{Late: LateAuto, BatchRows: 500}, true)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("adaptive scan gave %d rows, want %d", len(got), len(want))
				}
				// Without the timestamp and the list, the fast path reads
				// every column (unless the filter is on s, a dictionary)
				// and batches are cut by row count.
				if fc.name == "on a timestamp" {
					return
				}
				flat := lateNode(fc.f)
				flat.Schema, flat.Scan.Columns = flat.Schema[:14], flat.Scan.Columns[:14]
				var wantFlat [][]any
				for _, r := range want {
					wantFlat = append(wantFlat, r[:14])
				}
				for _, batch := range []int{1000, 77} {
					got, _ := scanRows(t, path, flat, Options{Mem: checkedMem(t), Late: LateAlways, BatchRows: batch}, false)
					if !reflect.DeepEqual(got, wantFlat) {
						t.Fatalf("flat columns, batch %d: late scan gave %d rows, want %d; first difference at %d", batch, len(got), len(wantFlat), firstRowDiff(got, wantFlat))
					}
				}
			})
		}
	}
}

func firstRowDiff(a, b [][]any) int {
	for i := range min(len(a), len(b)) {
		if !reflect.DeepEqual(a[i], b[i]) {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestLateAdaptiveSwitch: a filter that keeps nearly every row turns the
// scan back into one pass after the probe rows; a selective one does not.
func TestLateAdaptiveSwitch(t *testing.T) {
	path := writeLateFile(t, lateFile{rows: 90_000, rowGroup: 30_000, dict: true, pageBytes: 8192, nullPct: 1, seed: 9})
	for _, tc := range []struct {
		name    string
		f       *plan.Expr
		onePass bool
	}{
		{"keeps 99%", call(plan.OpIsNotNull, plan.BoolType, lateCol_("i32")), true},
		{"keeps 1/7", call(plan.OpEq, plan.BoolType, lateCol_("s"), litS("v3")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := lateNode(tc.f)
			want, _ := scanRows(t, path, n, Options{Late: LateOff}, true)
			got, ps := scanRows(t, path, n, Options{Late: LateAuto}, true)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%d rows, want %d", len(got), len(want))
			}
			if ps.late.onePass != tc.onePass {
				t.Errorf("one pass %v, want %v (kept %d of %d)", ps.late.onePass, tc.onePass, ps.late.kept, ps.late.seen)
			}
			dec, skip := ps.LateRows()
			if dec+skip != 90_000 {
				t.Errorf("late_rows_decoded=%d + late_rows_skipped=%d, want the file's 90000 rows", dec, skip)
			}
			if !tc.onePass && skip < int64(len(want)) {
				t.Errorf("late_rows_skipped=%d for %d rows kept", skip, len(want))
			}
			if tc.onePass && skip > ps.late.seen {
				t.Errorf("late_rows_skipped=%d after the switch at %d rows", skip, ps.late.seen)
			}
		})
	}
}

// TestLateBloom checks a runtime filter's Bloom filter tested in the scan
// (TakeBloom) against the plan's shape without it: the record reader
// under a Filter node carrying the Bloom filter. The rows must be the
// same, in the same order, with the filter's false positives kept alike;
// the rows the Bloom filter drops must not be decoded.
func TestLateBloom(t *testing.T) {
	files := []lateFile{
		{rows: 5000, rowGroup: 1200, dict: true, pageBytes: 512, nullPct: 10, seed: 11},
		{rows: 4000, rowGroup: 4000, dict: false, pageBytes: 300, v2: true, nullPct: 30, seed: 12},
	}
	colIdx := func(name string) int {
		for i, c := range lateCols {
			if c.name == name {
				return i
			}
		}
		panic(name)
	}
	// vals are the keys a build side would have produced, in the
	// generator's value space (v in [0, 1000)).
	keys := func(name string, vs ...int64) []plan.Value {
		var out []plan.Value
		for _, v := range vs {
			switch name {
			case "i64":
				out = append(out, plan.Value{I: v*1_000_000_007 - 3})
			case "d":
				out = append(out, plan.Value{I: 9000 + v})
			case "s":
				out = append(out, plan.Value{S: fmt.Sprintf("v%d", v%7)})
			}
		}
		return out
	}
	some := func(n int) []int64 {
		var out []int64
		for v := int64(0); v < 1000 && len(out) < n; v += 37 {
			out = append(out, v)
		}
		return out
	}
	cases := []struct {
		name   string
		col    string
		vals   []plan.Value
		bytes  int // a small filter has false positives
		filter *plan.Expr
	}{
		{"int64 keys", "i64", keys("i64", some(20)...), 1024, nil},
		{"int64 keys, a small filter", "i64", keys("i64", some(20)...), 32, nil},
		{"date keys with a range conjunct", "d", keys("d", some(27)...), 512,
			call(plan.OpGe, plan.BoolType, lateCol_("d"), litDate("1994-09-01"))},
		{"a dictionary string column", "s", keys("s", 2), 256, nil},
		{"no key matches", "i64", []plan.Value{{I: 7}}, 4096, nil},
	}
	for _, lf := range files {
		path := writeLateFile(t, lf)
		for _, tc := range cases {
			t.Run(fmt.Sprintf("seed%d/%s", lf.seed, tc.name), func(t *testing.T) {
				col := colIdx(tc.col)
				f, err := kernel.NewBloom(tc.bytes)
				if err != nil {
					t.Fatal(err)
				}
				if err := BloomAddValues(f, lateCols[col].typ, tc.vals); err != nil {
					t.Fatal(err)
				}
				probe := &plan.BloomProbe{Column: col, Bits: f.Bytes()}
				n := lateNode(tc.filter)
				pred := tc.filter
				if pred == nil {
					pred = lit(plan.BoolType, plan.Value{B: true})
				}
				run := func(opts Options, inScan bool) ([][]any, *ParquetScan) {
					fh, err := os.Open(path)
					if err != nil {
						t.Fatal(err)
					}
					defer fh.Close()
					op, err := NewParquetScan(context.Background(), fh, n, nil, opts)
					if err != nil {
						t.Fatal(err)
					}
					ps := op.(*ParquetScan)
					if inScan {
						if !ps.TakeBloom(probe) {
							t.Fatal("the scan refused the Bloom filter")
						}
					} else {
						op, err = NewFilter(op, &plan.Node{Kind: plan.KindFilter, Schema: n.Schema, Predicate: pred, Bloom: probe}, opts)
						if err != nil {
							t.Fatal(err)
						}
					}
					recs := drainAll(t, op)
					defer releaseRecs(recs)
					op.Close()
					var out [][]any
					for _, rec := range recs {
						for i := 0; i < int(rec.NumRows()); i++ {
							var r []any
							for j, c := range rec.Columns() {
								if lateCols[j].name == "l" {
									r = append(r, c.ValueStr(i))
									continue
								}
								r = append(r, goVals(c)[i])
							}
							out = append(out, r)
						}
					}
					return out, ps
				}
				want, _ := run(Options{Late: LateOff, BatchRows: 1000}, false)
				for _, batch := range []int{1000, 97} {
					got, ps := run(Options{Mem: checkedMem(t), Late: LateAlways, BatchRows: batch}, true)
					if ps.late == nil {
						t.Fatal("the late path was not taken")
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("batch %d: the scan testing the Bloom filter gave %d rows, the Filter %d; first difference at %d",
							batch, len(got), len(want), firstRowDiff(got, want))
					}
					dec, skip := ps.LateRows()
					if dec != int64(len(want)) || dec+skip != int64(lf.rows) {
						t.Errorf("batch %d: late_rows_decoded=%d late_rows_skipped=%d, want %d decoded of %d", batch, dec, skip, len(want), lf.rows)
					}
				}
				if tc.bytes >= 1024 && len(want) > lf.rows/4 {
					t.Errorf("the Bloom filter kept %d of %d rows", len(want), lf.rows)
				}
			})
		}
	}
}
