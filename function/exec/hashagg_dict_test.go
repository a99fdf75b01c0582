package exec

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// dictFile is a Parquet file of the dictionary tests: rows rows of (s
// string, k int64, v int64, t string) in row groups of rowGroup rows; s is
// str(i) and t is str2(i) (nil: NULL; str2 nil: t is NULL everywhere).
type dictFile struct {
	rows, rowGroup int
	str, str2      func(i int) any
	props          []parquet.WriterProperty
}

func (f dictFile) t(i int) any {
	if f.str2 == nil {
		return nil
	}
	return f.str2(i)
}

func (f dictFile) k(i int) int64 { return int64(i % 3) }
func (f dictFile) v(i int) int64 { return int64(i%97) - 20 }

func (f dictFile) write(t testing.TB, path string) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64},
		{Name: "t", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := append([]parquet.WriterProperty{parquet.WithMaxRowGroupLength(int64(f.rowGroup))}, f.props...)
	fw, err := pqarrow.NewFileWriter(schema, out, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.DefaultAllocator
	sb, kb, vb, tb := array.NewStringBuilder(mem), array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewStringBuilder(mem)
	for i := 0; i < f.rows; i++ {
		if s := f.str(i); s == nil {
			sb.AppendNull()
		} else {
			sb.Append(s.(string))
		}
		if s := f.t(i); s == nil {
			tb.AppendNull()
		} else {
			tb.Append(s.(string))
		}
		kb.Append(f.k(i))
		vb.Append(f.v(i))
	}
	cols := []arrow.Array{sb.NewArray(), kb.NewArray(), vb.NewArray(), tb.NewArray()}
	rec := array.NewRecordBatch(schema, cols, int64(f.rows))
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	releaseAll(cols)
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}

// chainScans reads scans one after the other and counts the batches that
// carry a dictionary array; EmitDictionaries goes to every scan, as the
// function's split scan does.
type chainScans struct {
	scans  []*ParquetScan
	schema *arrow.Schema
	dicts  int
}

func (c *chainScans) Schema() *arrow.Schema { return c.schema }
func (c *chainScans) EmitDictionaries(cols []int) bool {
	any := false
	for _, s := range c.scans {
		any = s.EmitDictionaries(cols) || any
	}
	return any
}
func (c *chainScans) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for len(c.scans) > 0 {
		rec, err := c.scans[0].Next(ctx)
		if err == io.EOF {
			c.scans[0].Close()
			c.scans = c.scans[1:]
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, col := range rec.Columns() {
			if _, ok := col.(*array.Dictionary); ok {
				c.dicts++
				break
			}
		}
		return rec, nil
	}
	return nil, io.EOF
}
func (c *chainScans) Close() error {
	for _, s := range c.scans {
		s.Close()
	}
	return nil
}

// TestAggregateByDictionary groups by a dictionary-encoded string column
// read from Parquet, by index (the scan hands the column over as a
// dictionary) and by value (plain strings), and checks both against
// groups computed here: NULL keys, row groups with different
// dictionaries, a chunk that falls back to plain pages, a file of each
// kind in one aggregation, no rows, a second key, a partial aggregation
// flushing over its memory budget, and one passing rows on unaggregated.
func TestAggregateByDictionary(t *testing.T) {
	few := func(i int) any { // 7 values, a different 7 in each row group of 1000, some NULL
		if i%13 == 5 {
			return nil
		}
		return fmt.Sprintf("val-%d", i%7+(i/1000)*3)
	}
	many := func(i int) any { return fmt.Sprintf("distinct-%06d", i%4000) }
	noNull := func(i int) any { return fmt.Sprintf("seg_%d", (i*7919)%11) }
	fallback := []parquet.WriterProperty{parquet.WithDictionaryPageSizeLimit(2048)}
	cases := []struct {
		name      string
		files     []dictFile
		twoKeys   bool
		twoDicts  bool // the second key is the string column t (both dictionaries)
		partial   bool // partial aggregation, then a final one over its output
		filter    bool // a filter k <> 1 between the scan and the aggregation
		project   bool // a projection (bare references and v + 0) under the aggregation
		pushed    bool // the filter is also the scan's (late materialization with a filter)
		opts      Options
		wantDicts bool // the scan hands dictionaries over
	}{
		{name: "nulls, several dictionaries", files: []dictFile{{rows: 5000, rowGroup: 1000, str: few}}, wantDicts: true},
		{name: "no nulls", files: []dictFile{{rows: 3000, rowGroup: 700, str: noNull}}, wantDicts: true},
		{name: "partial then final", files: []dictFile{{rows: 5000, rowGroup: 1000, str: few}}, partial: true, wantDicts: true},
		{name: "two keys", files: []dictFile{{rows: 5000, rowGroup: 1000, str: few}}, twoKeys: true, wantDicts: true},
		{name: "two keys partial", files: []dictFile{{rows: 5000, rowGroup: 1000, str: few}}, twoKeys: true, partial: true, wantDicts: true},
		{name: "two dictionary keys", files: []dictFile{{rows: 5000, rowGroup: 1000, str: few, str2: noNull}}, twoDicts: true, wantDicts: true},
		{name: "two dictionary keys partial, filter, projection", files: []dictFile{{rows: 5000, rowGroup: 1000, str: few, str2: few}},
			twoDicts: true, partial: true, filter: true, project: true, wantDicts: true},
		{name: "two dictionary keys, all NULL second", files: []dictFile{{rows: 3000, rowGroup: 700, str: noNull}}, twoDicts: true, wantDicts: true},
		{name: "two dictionary keys, too many combinations", files: []dictFile{{rows: 20000, rowGroup: 20000, str: func(i int) any { return fmt.Sprintf("a-%d", i%400) },
			str2: func(i int) any { return fmt.Sprintf("b-%d", i%300) }}}, twoDicts: true, wantDicts: true},
		{name: "two dictionary keys, dictionary and fallback files", files: []dictFile{
			{rows: 5000, rowGroup: 1000, str: few, str2: noNull},
			{rows: 6000, rowGroup: 3000, str: many, str2: few, props: fallback},
		}, twoDicts: true, partial: true, wantDicts: true},
		{name: "fallback to plain pages", files: []dictFile{{rows: 6000, rowGroup: 6000, str: many, props: fallback}}},
		{name: "dictionary and fallback files", files: []dictFile{
			{rows: 5000, rowGroup: 1000, str: few},
			{rows: 6000, rowGroup: 3000, str: func(i int) any {
				if i%2 == 0 {
					return few(i % 5000)
				}
				return many(i)
			}, props: fallback},
		}, twoKeys: true, wantDicts: true},
		{name: "under a filter", files: []dictFile{{rows: 5000, rowGroup: 1000, str: few}}, filter: true, wantDicts: true},
		{name: "two keys under a filter", files: []dictFile{{rows: 5000, rowGroup: 1000, str: few}}, twoKeys: true, partial: true, filter: true, wantDicts: true},
		{name: "under a projection", files: []dictFile{{rows: 5000, rowGroup: 1000, str: few}}, project: true, wantDicts: true},
		{name: "two keys under a projection and a filter", files: []dictFile{{rows: 5000, rowGroup: 1000, str: few}}, twoKeys: true, partial: true, filter: true, project: true, wantDicts: true},
		{name: "filter pushed into the scan", files: []dictFile{{rows: 5000, rowGroup: 1000, str: few}}, filter: true, pushed: true, wantDicts: true},
		{name: "two keys, pushed filter, projection", files: []dictFile{{rows: 5000, rowGroup: 1000, str: few}}, twoKeys: true, partial: true, filter: true, pushed: true, project: true, wantDicts: true},
		{name: "pushed filter, dictionary and fallback files", files: []dictFile{
			{rows: 5000, rowGroup: 1000, str: few},
			{rows: 6000, rowGroup: 3000, str: many, props: fallback},
		}, filter: true, pushed: true, wantDicts: true},
		{name: "empty", files: []dictFile{{rows: 0, rowGroup: 1000, str: few}}},
		{name: "empty partial", files: []dictFile{{rows: 0, rowGroup: 1000, str: few}}, partial: true},
		{name: "many groups over the memory budget", files: []dictFile{{rows: 20000, rowGroup: 2000, str: func(i int) any { return fmt.Sprintf("u-%05d", (i*7)%600) }}},
			partial: true, opts: Options{MemoryLimit: 16 << 10, PartialAggSkipRatio: 2}, wantDicts: true},
		{name: "partial passes rows on", files: []dictFile{{rows: 8000, rowGroup: 2000, str: func(i int) any { return fmt.Sprintf("u-%05d", i%600) }}},
			partial: true, opts: Options{PartialAggProbeRows: 300, PartialAggSkipRatio: 0.5}, wantDicts: true},
	}
	strT, i64T := plan.StringType, plan.Int64Type
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			want := map[string][3]int64{} // key -> count, sum(v), min(v)
			for fi, f := range tc.files {
				p := filepath.Join(dir, fmt.Sprintf("f%d.parquet", fi))
				f.write(t, p)
				paths = append(paths, p)
				for i := 0; i < f.rows; i++ {
					if tc.filter && f.k(i) == 1 {
						continue
					}
					key := fmt.Sprint(f.str(i))
					if tc.twoKeys {
						key += fmt.Sprint("|", f.k(i))
					}
					if tc.twoDicts {
						key += fmt.Sprint("|", f.t(i))
					}
					w, ok := want[key]
					if !ok {
						w[2] = f.v(i)
					}
					w[0]++
					w[1] += f.v(i)
					w[2] = min(w[2], f.v(i))
					want[key] = w
				}
			}
			keys := []*plan.Expr{cref(0, strT)}
			out := plan.Schema{{Name: "s", Type: strT}}
			if tc.twoKeys {
				keys = append(keys, cref(1, i64T))
				out = append(out, plan.Field{Name: "k", Type: i64T})
			}
			if tc.twoDicts {
				keys = append(keys, cref(3, strT))
				out = append(out, plan.Field{Name: "t", Type: strT})
			}
			v := cref(2, i64T)
			aggs := []plan.AggCall{{Func: plan.AggCountStar, Type: i64T}, {Func: plan.AggSum, Arg: v, Type: i64T}, {Func: plan.AggMin, Arg: v, Type: i64T}}
			partialOut := append(plan.Schema{}, out...)
			for i, a := range aggs {
				out = append(out, plan.Field{Name: fmt.Sprint("a", i), Type: a.Type})
				partialOut = append(partialOut, plan.Field{Name: fmt.Sprint("p", i), Type: AggStateTypes(a)[0]})
			}
			scanN := &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "t", Format: "parquet", Columns: []string{"s", "k", "v", "t"}},
				Schema: plan.Schema{{Name: "s", Type: strT}, {Name: "k", Type: i64T}, {Name: "v", Type: i64T}, {Name: "t", Type: strT}}}
			if tc.pushed {
				scanN.Scan.Filter = call(plan.OpNe, plan.BoolType, cref(1, i64T), litI(1))
			}

			for _, run := range []struct {
				byIndex bool
				late    LateMode // LateAuto: dictionaries from the late path's page decoder; LateOff: from the record reader
			}{{true, LateAuto}, {true, LateOff}, {false, LateAuto}} {
				byIndex := run.byIndex
				mem := checkedMem(t)
				opts := tc.opts
				opts.Mem, opts.BatchRows = mem, 256
				chain := &chainScans{schema: scanN.Schema.Arrow()}
				for _, p := range paths {
					chain.scans = append(chain.scans, openScanWith(t, p, scanN, nil, Options{Mem: mem, BatchRows: 64, Late: run.late}))
				}
				mode, schema := plan.AggSingle, out
				if tc.partial {
					mode, schema = plan.AggPartial, partialOut
				}
				n := aggNode(mode, schema, keys, aggs...)
				n.Inputs = []*plan.Node{scanN}
				var in Operator = chain
				if tc.filter {
					fn := &plan.Node{Kind: plan.KindFilter, Inputs: []*plan.Node{scanN}, Schema: scanN.Schema,
						Predicate: call(plan.OpNe, plan.BoolType, cref(1, i64T), litI(1))}
					n.Inputs = []*plan.Node{fn}
					f, err := NewFilter(chain, fn, opts)
					if err != nil {
						t.Fatal(err)
					}
					in = f
				}
				if tc.project {
					below := n.Inputs[0]
					pn := &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{below}, Schema: scanN.Schema,
						Exprs: []*plan.Expr{cref(0, strT), cref(1, i64T), call(plan.OpAdd, i64T, cref(2, i64T), litI(0)), cref(3, strT)}}
					n.Inputs = []*plan.Node{pn}
					p, err := NewProject(in, pn, opts)
					if err != nil {
						t.Fatal(err)
					}
					in = p
				}
				wantCols := []int{0}
				if tc.twoDicts {
					wantCols = []int{0, 3}
				}
				if cols := dictKeyColumns(n); !slices.Equal(cols, wantCols) {
					t.Fatalf("dictKeyColumns = %v, want %v", cols, wantCols)
				}
				if byIndex && !in.(DictionaryEmitter).EmitDictionaries(dictKeyColumns(n)) && tc.wantDicts {
					t.Fatal("EmitDictionaries refused")
				}
				op, err := NewHashAggregate(in, n, opts)
				if err != nil {
					t.Fatal(err)
				}
				recs := drainAll(t, op)
				if sk := op.(PartialSkipper).PartialSkippedRows(); (sk > 0) != (tc.opts.PartialAggProbeRows > 0) {
					t.Errorf("byIndex %v: %d rows passed on unaggregated", byIndex, sk)
				}
				if tc.opts.MemoryLimit > 0 && len(rows(recs)) <= len(want) {
					t.Errorf("byIndex %v: the partial aggregation never flushed (%d rows for %d groups)", byIndex, len(rows(recs)), len(want))
				}
				if tc.partial {
					finalAggs := make([]plan.AggCall, len(aggs))
					for i, a := range aggs {
						finalAggs[i] = plan.AggCall{Func: a.Func, Type: a.Type}
					}
					fkeys := []*plan.Expr{cref(0, strT)}
					if tc.twoKeys {
						fkeys = append(fkeys, cref(1, i64T))
					}
					if tc.twoDicts {
						fkeys = append(fkeys, cref(1, strT))
					}
					final, err := NewHashAggregate(newSource(partialOut.Arrow(), recs...), aggNode(plan.AggFinal, out, fkeys, finalAggs...), Options{Mem: mem})
					if err != nil {
						t.Fatal(err)
					}
					recs = drainAll(t, final)
				}
				got := rows(recs)
				releaseRecs(recs)
				if gotDicts := chain.dicts > 0; gotDicts != (byIndex && tc.wantDicts) {
					t.Errorf("byIndex %v: %d batches of dictionaries, want them: %v", byIndex, chain.dicts, byIndex && tc.wantDicts)
				}
				if byIndex && tc.wantDicts && run.late == LateAuto && (!tc.filter || tc.pushed) && !strings.Contains(tc.name, "fallback") {
					// every file's chunks are dictionary-only: the page
					// decoder made the dictionaries
					for _, sc := range chain.scans {
						if sc.late == nil || sc.late.ownChunks == 0 && sc.md.NumRows > 0 {
							t.Errorf("late %v: the scan did not decode its dictionaries itself", run.late)
						}
					}
				}
				if len(got) != len(want) {
					t.Fatalf("byIndex %v: %d groups, want %d", byIndex, len(got), len(want))
				}
				nk := len(keys)
				for _, r := range got {
					key := fmt.Sprint(r[0])
					if tc.twoKeys || tc.twoDicts {
						key += fmt.Sprint("|", r[1])
					}
					w, ok := want[key]
					if !ok {
						t.Fatalf("byIndex %v: group %q not expected", byIndex, key)
					}
					if fmt.Sprint(r[nk:]) != fmt.Sprint(w[:]) {
						t.Fatalf("byIndex %v: group %q: got %v, want %v", byIndex, key, r[nk:], w)
					}
				}
			}
		})
	}
}

// TestDictKeyColumns: only a String group key read from a scan, through
// filters and bare references of projections, used by nothing else, is
// asked for as a dictionary.
func TestDictKeyColumns(t *testing.T) {
	strT, i64T := plan.StringType, plan.Int64Type
	scan := &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "t", Format: "parquet", Columns: []string{"s", "k", "t"}},
		Schema: plan.Schema{{Name: "s", Type: strT}, {Name: "k", Type: i64T}, {Name: "t", Type: strT}}}
	proj := &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{scan}, Schema: scan.Schema,
		Exprs: []*plan.Expr{cref(0, strT), cref(1, i64T), cref(2, strT)}}
	count := plan.AggCall{Func: plan.AggCountStar, Type: i64T}
	filter := func(p *plan.Expr) *plan.Node {
		return &plan.Node{Kind: plan.KindFilter, Inputs: []*plan.Node{scan}, Schema: scan.Schema, Predicate: p}
	}
	cases := []struct {
		name string
		mode plan.AggMode
		in   *plan.Node
		keys []*plan.Expr
		aggs []plan.AggCall
		want string
	}{
		{"one key", plan.AggPartial, scan, []*plan.Expr{cref(0, strT)}, []plan.AggCall{count}, "[0]"},
		{"two string keys", plan.AggSingle, scan, []*plan.Expr{cref(2, strT), cref(0, strT)}, []plan.AggCall{count}, "[0 2]"},
		{"int key", plan.AggPartial, scan, []*plan.Expr{cref(1, i64T)}, []plan.AggCall{count}, "[]"},
		{"key also an argument", plan.AggPartial, scan, []*plan.Expr{cref(0, strT)},
			[]plan.AggCall{{Func: plan.AggMax, Arg: cref(0, strT), Type: strT}}, "[]"},
		{"key in an expression key", plan.AggPartial, scan, []*plan.Expr{cref(0, strT), call(plan.OpSubstring, strT, cref(0, strT), litI(1), litI(2))}, []plan.AggCall{count}, "[]"},
		{"final", plan.AggFinal, scan, []*plan.Expr{cref(0, strT)}, []plan.AggCall{count}, "[]"},
		{"through a projection of bare references", plan.AggPartial, proj, []*plan.Expr{cref(0, strT)}, []plan.AggCall{count}, "[0]"},
		{"through a reordering projection", plan.AggPartial, &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{scan}, Schema: scan.Schema,
			Exprs: []*plan.Expr{cref(2, strT), cref(1, i64T), cref(0, strT)}}, []*plan.Expr{cref(0, strT), cref(2, strT)}, []plan.AggCall{count}, "[0 2]"},
		{"projection uses the key in an expression", plan.AggPartial, &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{scan}, Schema: scan.Schema,
			Exprs: []*plan.Expr{cref(0, strT), cref(1, i64T), call(plan.OpSubstring, strT, cref(0, strT), litI(1), litI(2))}}, []*plan.Expr{cref(0, strT)}, []plan.AggCall{count}, "[]"},
		{"projected key also an argument above", plan.AggPartial, proj, []*plan.Expr{cref(0, strT)},
			[]plan.AggCall{{Func: plan.AggMax, Arg: cref(0, strT), Type: strT}}, "[]"},
		{"projected twice, one copy an argument", plan.AggPartial, &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{scan}, Schema: scan.Schema,
			Exprs: []*plan.Expr{cref(0, strT), cref(1, i64T), cref(0, strT)}}, []*plan.Expr{cref(0, strT)},
			[]plan.AggCall{{Func: plan.AggMax, Arg: cref(2, strT), Type: strT}}, "[]"},
		{"projection over a filter on the key", plan.AggPartial, &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{filter(call(plan.OpEq, plan.BoolType, cref(2, strT), litS("x")))}, Schema: scan.Schema,
			Exprs: []*plan.Expr{cref(0, strT), cref(1, i64T), cref(2, strT)}}, []*plan.Expr{cref(0, strT), cref(2, strT)}, []plan.AggCall{count}, "[0]"},
		{"through a filter", plan.AggPartial, filter(call(plan.OpEq, plan.BoolType, cref(1, i64T), litI(3))), []*plan.Expr{cref(0, strT), cref(2, strT)}, []plan.AggCall{count}, "[0 2]"},
		{"filter on the key", plan.AggPartial, filter(call(plan.OpEq, plan.BoolType, cref(2, strT), litS("x"))), []*plan.Expr{cref(0, strT), cref(2, strT)}, []plan.AggCall{count}, "[0]"},
	}
	for _, tc := range cases {
		n := aggNode(tc.mode, nil, tc.keys, tc.aggs...)
		n.Inputs = []*plan.Node{tc.in}
		if got := fmt.Sprint(dictKeyColumns(n)); got != tc.want {
			t.Errorf("%s: dictKeyColumns = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// BenchmarkAggregateByDictionary reads a Parquet file of 1M rows (a
// 100-value dictionary-encoded string, an int64) and groups by the string
// with sum of the int64, by index and by value alternately in the same
// run, and reports the best time of each and their ratio (x-plain: by
// index over by value; below 1 is faster).
func BenchmarkAggregateByDictionary(b *testing.B) {
	path := filepath.Join(b.TempDir(), "g.parquet")
	dictFile{rows: 1 << 20, rowGroup: 122880, str: func(i int) any { return fmt.Sprintf("segment_%d", (i*7919)%100) }}.write(b, path)
	strT, i64T := plan.StringType, plan.Int64Type
	scanN := &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "t", Format: "parquet", Columns: []string{"s", "v"}},
		Schema: plan.Schema{{Name: "s", Type: strT}, {Name: "v", Type: i64T}}}
	sum := plan.AggCall{Func: plan.AggSum, Arg: cref(1, i64T), Type: i64T}
	n := aggNode(plan.AggPartial, plan.Schema{{Name: "s", Type: strT}, {Name: "p", Type: AggStateTypes(sum)[0]}}, []*plan.Expr{cref(0, strT)}, sum)
	n.Inputs = []*plan.Node{scanN}
	run := func(byIndex bool) time.Duration {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		op, err := NewParquetScan(context.Background(), f, scanN, nil, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if byIndex {
			op.(*ParquetScan).EmitDictionaries(dictKeyColumns(n))
		}
		agg, err := NewHashAggregate(op, n, Options{})
		if err != nil {
			b.Fatal(err)
		}
		recs, err := Drain(context.Background(), agg)
		if err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		if got := len(rows(recs)); got != 100 {
			b.Fatalf("%d groups, want 100", got)
		}
		releaseRecs(recs)
		agg.Close()
		return d
	}
	var best [2]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k, byIndex := range []bool{false, true} {
			if d := run(byIndex); i == 0 || d < best[k] {
				best[k] = d
			}
		}
	}
	b.ReportMetric(float64(best[0].Microseconds())/1e3, "plain-ms")
	b.ReportMetric(float64(best[1].Microseconds())/1e3, "index-ms")
	b.ReportMetric(float64(best[1])/float64(best[0]), "x-plain")
}

// TestAggregateDictionaryBadIndex: a dictionary key whose index points
// past its dictionary is an error naming the index, by either path (one
// key, or with another key), never a panic or a wrong group.
func TestAggregateDictionaryBadIndex(t *testing.T) {
	strT, i64T := plan.StringType, plan.Int64Type
	for _, twoKeys := range []bool{false, true} {
		mem := checkedMem(t)
		dict := buildArray(mem, strT, []any{"a", "b"})
		ib := array.NewInt32Builder(mem)
		ib.AppendValues([]int32{0, 1, 5}, nil)
		idx := ib.NewArray()
		ib.Release()
		d := array.NewDictionaryArray(engineDictType, idx, dict)
		idx.Release()
		dict.Release()
		k := buildArray(mem, i64T, []any{1, 2, 3})
		schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: engineDictType}, {Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
		rec := array.NewRecordBatch(schema, []arrow.Array{d, k}, 3)
		d.Release()
		k.Release()
		keys := []*plan.Expr{cref(0, strT)}
		out := plan.Schema{{Name: "s", Type: strT}}
		if twoKeys {
			keys = append(keys, cref(1, i64T))
			out = append(out, plan.Field{Name: "k", Type: i64T})
		}
		out = append(out, plan.Field{Name: "n", Type: i64T})
		op, err := NewHashAggregate(newSource(plan.Schema{{Name: "s", Type: strT}, {Name: "k", Type: i64T}}.Arrow(), rec),
			aggNode(plan.AggSingle, out, keys, plan.AggCall{Func: plan.AggCountStar, Type: i64T}), Options{Mem: mem})
		if err != nil {
			t.Fatal(err)
		}
		_, err = op.Next(context.Background())
		op.Close()
		if err == nil || !strings.Contains(err.Error(), "dictionary index 5 out of range") {
			t.Errorf("two keys %v: got %v, want an index out of range error", twoKeys, err)
		}
	}
}
