package tpch

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

const testSF = 0.01

// rowsOf generates a slice of a table and renders each row as one string.
func rowsOf(t testing.TB, table string, sf float64, slice, slices, batch int) []string {
	t.Helper()
	schema, _ := Schema(table)
	var rows []string
	var sb strings.Builder
	err := Generate(context.Background(), table, sf, slice, slices, batch, func(rec arrow.RecordBatch) error {
		if !rec.Schema().Equal(schema) {
			t.Fatalf("%s: batch schema %v", table, rec.Schema())
		}
		if batch > 0 && rec.NumRows() > int64(batch) {
			t.Fatalf("%s: batch of %d rows > %d", table, rec.NumRows(), batch)
		}
		for c := 0; c < int(rec.NumCols()); c++ {
			if n := rec.Column(c).NullN(); n != 0 {
				t.Fatalf("%s.%s: %d nulls", table, schema.Field(c).Name, n)
			}
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			sb.Reset()
			for c := 0; c < int(rec.NumCols()); c++ {
				if c > 0 {
					sb.WriteByte('|')
				}
				sb.WriteString(rec.Column(c).ValueStr(r))
			}
			rows = append(rows, sb.String())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Generate(%s): %v", table, err)
	}
	return rows
}

func TestTablesAndSchemas(t *testing.T) {
	want := []string{"region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"}
	if got := Tables(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Tables() = %v", got)
	}
	cols := map[string]int{"region": 3, "nation": 4, "supplier": 7, "customer": 8, "part": 9, "partsupp": 5, "orders": 9, "lineitem": 16}
	for _, tb := range want {
		s, err := Schema(tb)
		if err != nil {
			t.Fatal(err)
		}
		if s.NumFields() != cols[tb] {
			t.Errorf("%s: %d columns, want %d", tb, s.NumFields(), cols[tb])
		}
		for _, f := range s.Fields() {
			if f.Nullable {
				t.Errorf("%s.%s nullable", tb, f.Name)
			}
			var want arrow.DataType = arrow.BinaryTypes.String
			switch {
			case strings.HasSuffix(f.Name, "key"):
				want = arrow.PrimitiveTypes.Int64
			case f.Name == "p_size" || f.Name == "ps_availqty" || f.Name == "l_linenumber" || f.Name == "o_shippriority":
				want = arrow.PrimitiveTypes.Int32
			case strings.HasSuffix(f.Name, "date"):
				want = arrow.FixedWidthTypes.Date32
			case strings.Contains("s_acctbal c_acctbal p_retailprice ps_supplycost o_totalprice l_quantity l_extendedprice l_discount l_tax", f.Name):
				want = &arrow.Decimal128Type{Precision: 15, Scale: 2}
			}
			if !arrow.TypeEqual(f.Type, want) {
				t.Errorf("%s.%s: type %v, want %v", tb, f.Name, f.Type, want)
			}
		}
	}
	if _, err := Schema("nope"); err == nil {
		t.Error("Schema(nope) did not fail")
	}
}

func TestRowCounts(t *testing.T) {
	cases := []struct {
		table string
		sf    float64
		want  int64 // 0: check a range instead (lineitem)
	}{
		{"region", testSF, 5},
		{"nation", testSF, 25},
		{"supplier", testSF, 100},
		{"customer", testSF, 1500},
		{"part", testSF, 2000},
		{"partsupp", testSF, 8000},
		{"orders", testSF, 15000},
		{"lineitem", testSF, 0},
		{"supplier", 0.00001, 1},
		{"orders", 0.00001, 15},
		{"lineitem", 0.00001, 0},
		{"customer", 0.123, 18450},
		{"supplier", 1, 10000},
		{"orders", 10, 15_000_000},
	}
	for _, c := range cases {
		got := RowCount(c.table, c.sf)
		if c.want != 0 && got != c.want {
			t.Errorf("RowCount(%s, %v) = %d, want %d", c.table, c.sf, got, c.want)
		}
		orders := RowCount("orders", c.sf)
		if c.table == "lineitem" && (got < orders || got > 7*orders) {
			t.Errorf("RowCount(lineitem, %v) = %d for %d orders", c.sf, got, orders)
		}
		if c.sf > 0.1 {
			continue // counted only
		}
		if n := int64(len(rowsOf(t, c.table, c.sf, 0, 1, 1000))); n != got {
			t.Errorf("%s at SF %v: generated %d rows, RowCount %d", c.table, c.sf, n, got)
		}
	}
	if li, o := RowCount("lineitem", testSF), RowCount("orders", testSF); float64(li)/float64(o) < 3.8 || float64(li)/float64(o) > 4.2 {
		t.Errorf("lineitem/orders = %d/%d, want about 4", li, o)
	}
}

func TestDeterminism(t *testing.T) {
	for _, tb := range Tables() {
		a := rowsOf(t, tb, testSF, 0, 1, 0)
		b := rowsOf(t, tb, testSF, 0, 1, 777)
		if strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("%s: two runs differ", tb)
		}
	}
}

func TestSliceEquality(t *testing.T) {
	for _, tb := range []string{"orders", "lineitem", "partsupp", "supplier", "nation"} {
		for _, n := range []int{4, 7} {
			full := rowsOf(t, tb, testSF, 0, 1, 0)
			var parts []string
			for k := 0; k < n; k++ {
				parts = append(parts, rowsOf(t, tb, testSF, k, n, 1000)...)
			}
			if len(parts) != len(full) {
				t.Errorf("%s: %d slices give %d rows, full %d", tb, n, len(parts), len(full))
				continue
			}
			for i := range full {
				if full[i] != parts[i] {
					t.Errorf("%s: %d slices differ at row %d:\n%s\n%s", tb, n, i, full[i], parts[i])
					break
				}
			}
		}
	}
	if err := Generate(context.Background(), "orders", testSF, 4, 4, 0, func(arrow.RecordBatch) error { return nil }); err == nil {
		t.Error("slice 4 of 4 accepted")
	}
}

// tableCols generates a whole table and returns its columns as strings,
// ints (keys, Int32, Date32 and decimals in cents) by name.
type cols struct {
	n    int
	s    map[string][]string
	i    map[string][]int64
	name string
}

func load(t testing.TB, table string, sf float64) *cols {
	t.Helper()
	c := &cols{s: map[string][]string{}, i: map[string][]int64{}, name: table}
	err := Generate(context.Background(), table, sf, 0, 1, 4096, func(rec arrow.RecordBatch) error {
		for ci, f := range rec.Schema().Fields() {
			switch a := rec.Column(ci).(type) {
			case *array.String:
				for r := 0; r < a.Len(); r++ {
					c.s[f.Name] = append(c.s[f.Name], a.Value(r))
				}
			case *array.Int64:
				c.i[f.Name] = append(c.i[f.Name], a.Int64Values()...)
			case *array.Int32:
				for _, v := range a.Int32Values() {
					c.i[f.Name] = append(c.i[f.Name], int64(v))
				}
			case *array.Date32:
				for _, v := range a.Date32Values() {
					c.i[f.Name] = append(c.i[f.Name], int64(v))
				}
			case *array.Decimal128:
				for r := 0; r < a.Len(); r++ {
					v := a.Value(r)
					if !v.FitsInPrecision(15) {
						t.Fatalf("%s.%s: %v does not fit", table, f.Name, v)
					}
					c.i[f.Name] = append(c.i[f.Name], int64(v.LowBits()))
				}
			default:
				t.Fatalf("%s.%s: unexpected array %T", table, f.Name, a)
			}
		}
		c.n += int(rec.NumRows())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// like matches SQL LIKE patterns made of literals and % only.
func like(s, pattern string) bool {
	parts := strings.Split(pattern, "%")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i, p := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(s, p)
		}
		j := strings.Index(s, p)
		if j < 0 {
			return false
		}
		s = s[j+len(p):]
	}
	return true
}

func day(s string) int64 {
	d, _ := time.Parse("2006-01-02", s)
	return d.Unix() / 86400
}

func countLike(vals []string, pattern string) int {
	n := 0
	for _, v := range vals {
		if like(v, pattern) {
			n++
		}
	}
	return n
}

func TestRelations(t *testing.T) {
	sc := newScale(testSF)
	region, nation := load(t, "region", testSF), load(t, "nation", testSF)
	supp, cust := load(t, "supplier", testSF), load(t, "customer", testSF)
	part, ps := load(t, "part", testSF), load(t, "partsupp", testSF)
	ord, li := load(t, "orders", testSF), load(t, "lineitem", testSF)

	if region.s["r_name"][3] != "EUROPE" || nation.s["n_name"][24] != "UNITED STATES" || nation.i["n_regionkey"][24] != 1 {
		t.Errorf("fixed lists: %v %v", region.s["r_name"], nation.s["n_name"])
	}
	for i := 0; i < nation.n; i++ {
		if r := nation.i["n_regionkey"][i]; r < 0 || r > 4 {
			t.Errorf("nation %d region %d", i, r)
		}
	}
	// suppliers and customers
	for _, x := range []struct {
		c      *cols
		prefix string
		n      int64
	}{{supp, "s_", sc.supp}, {cust, "c_", sc.cust}} {
		p := x.prefix
		for i := 0; i < x.c.n; i++ {
			key, nk := x.c.i[p+map[string]string{"s_": "suppkey", "c_": "custkey"}[p]][i], x.c.i[p+"nationkey"][i]
			if key != int64(i+1) || nk < 0 || nk > 24 {
				t.Fatalf("%s row %d: key %d nation %d", x.c.name, i, key, nk)
			}
			ph := x.c.s[p+"phone"][i]
			if len(ph) != 15 || ph[:3] != strconv.FormatInt(nk+10, 10)+"-" {
				t.Fatalf("%s row %d: phone %q for nation %d", x.c.name, i, ph, nk)
			}
			if bal := x.c.i[p+"acctbal"][i]; bal < -99999 || bal > 999999 {
				t.Fatalf("%s row %d: acctbal %d", x.c.name, i, bal)
			}
			if a := x.c.s[p+"address"][i]; len(a) < 10 || len(a) > 40 {
				t.Fatalf("%s row %d: address %q", x.c.name, i, a)
			}
		}
	}
	if supp.s["s_name"][41] != "Supplier#000000042" || cust.s["c_name"][0] != "Customer#000000001" {
		t.Errorf("names %q %q", supp.s["s_name"][41], cust.s["c_name"][0])
	}
	if n := countLike(supp.s["s_comment"], "%Customer%Complaints%"); n < 1 || n > 2 {
		t.Errorf("%d suppliers with Customer%%Complaints", n)
	}
	if n := countLike(supp.s["s_comment"], "%Customer%Recommends%"); n < 1 || n > 2 {
		t.Errorf("%d suppliers with Customer%%Recommends", n)
	}
	segs := map[string]int{}
	for _, s := range cust.s["c_mktsegment"] {
		segs[s]++
	}
	if len(segs) != 5 || segs["BUILDING"] < 200 {
		t.Errorf("segments %v", segs)
	}

	// parts
	colorSet := map[string]bool{}
	for _, c := range colors {
		colorSet[c] = true
	}
	if len(colors) != 92 || len(colorSet) != 92 {
		t.Fatalf("%d colors", len(colors))
	}
	retail := map[int64]int64{}
	for i := 0; i < part.n; i++ {
		pk := part.i["p_partkey"][i]
		words := strings.Split(part.s["p_name"][i], " ")
		seen := map[string]bool{}
		for _, w := range words {
			if !colorSet[w] || seen[w] {
				t.Fatalf("p_name %q", part.s["p_name"][i])
			}
			seen[w] = true
		}
		if len(words) != 5 {
			t.Fatalf("p_name %q", part.s["p_name"][i])
		}
		m, b := part.s["p_mfgr"][i], part.s["p_brand"][i]
		if len(b) != 8 || !strings.HasPrefix(b, "Brand#") || m != "Manufacturer#"+b[6:7] || b[7] < '1' || b[7] > '5' {
			t.Fatalf("mfgr %q brand %q", m, b)
		}
		if sz := part.i["p_size"][i]; sz < 1 || sz > 50 {
			t.Fatalf("p_size %d", sz)
		}
		want := (90000 + ((pk / 10) % 20001) + 100*(pk%1000))
		if part.i["p_retailprice"][i] != want {
			t.Fatalf("part %d retail %d want %d", pk, part.i["p_retailprice"][i], want)
		}
		retail[pk] = want
	}
	if n := countLike(part.s["p_type"], "%BRASS"); n == 0 || n == part.n {
		t.Errorf("%d BRASS parts", n)
	}
	if n := countLike(part.s["p_name"], "%green%"); n == 0 || n == part.n {
		t.Errorf("%d green parts", n)
	}

	// partsupp
	type pair struct{ p, s int64 }
	pairs := map[pair]bool{}
	perPart := map[int64]int{}
	for i := 0; i < ps.n; i++ {
		p := pair{ps.i["ps_partkey"][i], ps.i["ps_suppkey"][i]}
		if p.s < 1 || p.s > sc.supp || pairs[p] {
			t.Fatalf("partsupp pair %v", p)
		}
		pairs[p] = true
		perPart[p.p]++
		S := sc.supp
		if j := int64(i % 4); p.s != (p.p+j*(S/4+(p.p-1)/S))%S+1 {
			t.Fatalf("ps_suppkey %d for part %d index %d off formula", p.s, p.p, j)
		}
	}
	if len(perPart) != part.n {
		t.Errorf("%d parts in partsupp, %d parts", len(perPart), part.n)
	}

	// orders
	type oinfo struct {
		date, total, nlines int64
		status              string
	}
	orders := map[int64]*oinfo{}
	custWithOrders := map[int64]bool{}
	for i := 0; i < ord.n; i++ {
		k, c := ord.i["o_orderkey"][i], ord.i["o_custkey"][i]
		if (k-1)%32 >= 8 || orders[k] != nil {
			t.Fatalf("order key %d", k)
		}
		if c%3 == 0 || c < 1 || c > sc.cust {
			t.Fatalf("o_custkey %d", c)
		}
		custWithOrders[c] = true
		d := ord.i["o_orderdate"][i]
		if d < day("1992-01-01") || d > day("1998-08-02") {
			t.Fatalf("o_orderdate %d", d)
		}
		orders[k] = &oinfo{date: d, total: ord.i["o_totalprice"][i], status: ord.s["o_orderstatus"][i]}
		if ord.i["o_shippriority"][i] != 0 || !strings.HasPrefix(ord.s["o_clerk"][i], "Clerk#0000000") {
			t.Fatalf("order %d: shippriority/clerk %q", k, ord.s["o_clerk"][i])
		}
	}
	if len(custWithOrders) < int(sc.cust)*2/3*9/10 {
		t.Errorf("only %d customers have orders", len(custWithOrders))
	}
	if n := countLike(ord.s["o_comment"], "%special%requests%"); n == 0 || n > ord.n/5 {
		t.Errorf("%d of %d orders like %%special%%requests%%", n, ord.n)
	}

	// lineitems
	current := day("1995-06-17")
	sums := map[int64]int64{}
	nO := map[int64]int64{}
	lastKey, lastLine := int64(-1), int64(0)
	for i := 0; i < li.n; i++ {
		k := li.i["l_orderkey"][i]
		o := orders[k]
		if o == nil {
			t.Fatalf("l_orderkey %d not in orders", k)
		}
		ln := li.i["l_linenumber"][i]
		if k != lastKey {
			if ln != 1 {
				t.Fatalf("order %d starts at line %d", k, ln)
			}
		} else if ln != lastLine+1 {
			t.Fatalf("order %d line %d after %d", k, ln, lastLine)
		}
		lastKey, lastLine = k, ln
		o.nlines++
		pk, sk := li.i["l_partkey"][i], li.i["l_suppkey"][i]
		if !pairs[pair{pk, sk}] {
			t.Fatalf("(l_partkey, l_suppkey) = (%d, %d) not in partsupp", pk, sk)
		}
		q, ext, disc, tax := li.i["l_quantity"][i], li.i["l_extendedprice"][i], li.i["l_discount"][i], li.i["l_tax"][i]
		if q%100 != 0 || q < 100 || q > 5000 || disc < 0 || disc > 10 || tax < 0 || tax > 8 {
			t.Fatalf("qty %d disc %d tax %d", q, disc, tax)
		}
		if ext != q/100*retail[pk] {
			t.Fatalf("l_extendedprice %d != %d * %d", ext, q/100, retail[pk])
		}
		sums[k] += ext * (100 - disc) / 100 * (100 + tax) / 100
		ship, commit, receipt := li.i["l_shipdate"][i], li.i["l_commitdate"][i], li.i["l_receiptdate"][i]
		if d := ship - o.date; d < 1 || d > 121 {
			t.Fatalf("ship - order = %d", d)
		}
		if d := commit - o.date; d < 30 || d > 90 {
			t.Fatalf("commit - order = %d", d)
		}
		if d := receipt - ship; d < 1 || d > 30 {
			t.Fatalf("receipt - ship = %d", d)
		}
		rf, ls := li.s["l_returnflag"][i], li.s["l_linestatus"][i]
		if (receipt <= current) != (rf == "R" || rf == "A") || (receipt > current) != (rf == "N") {
			t.Fatalf("returnflag %q receipt %d", rf, receipt)
		}
		if (ship > current) != (ls == "O") || (ship <= current) != (ls == "F") {
			t.Fatalf("linestatus %q ship %d", ls, ship)
		}
		if ls == "O" {
			nO[k]++
		}
	}
	for k, o := range orders {
		if o.nlines < 1 || o.nlines > 7 {
			t.Fatalf("order %d has %d lines", k, o.nlines)
		}
		if sums[k] != o.total {
			t.Fatalf("order %d: totalprice %d, lineitems give %d", k, o.total, sums[k])
		}
		want := "P"
		if nO[k] == 0 {
			want = "F"
		} else if nO[k] == o.nlines {
			want = "O"
		}
		if o.status != want {
			t.Fatalf("order %d status %q want %q", k, o.status, want)
		}
	}
	modes := map[string]int{}
	for _, m := range li.s["l_shipmode"] {
		modes[m]++
	}
	if len(modes) != 7 || modes["MAIL"] == 0 {
		t.Errorf("ship modes %v", modes)
	}
}

func TestWriteParquetRoundTrip(t *testing.T) {
	dir := t.TempDir()
	opts := WriteOptions{RowsPerFile: 25000, RowsPerRowGroup: 4096}
	files, err := WriteParquet(context.Background(), dir, testSF, opts)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int64{}
	read := map[string][]string{}
	for _, name := range files {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		table := strings.SplitN(st.Name(), "-", 2)[0]
		rdr, err := file.OpenParquetFile(name, false)
		if err != nil {
			t.Fatal(err)
		}
		if n := rdr.NumRows(); n > opts.RowsPerFile {
			t.Errorf("%s: %d rows", name, n)
		}
		for rg := 0; rg < rdr.NumRowGroups(); rg++ {
			md := rdr.MetaData().RowGroup(rg)
			if md.NumRows() > opts.RowsPerRowGroup {
				t.Errorf("%s: row group of %d rows", name, md.NumRows())
			}
			for c := 0; c < md.NumColumns(); c++ {
				cc, err := md.ColumnChunk(c)
				if err != nil {
					t.Fatal(err)
				}
				st, err := cc.Statistics()
				if err != nil || st == nil || !st.HasMinMax() {
					t.Errorf("%s rg %d col %d: no min/max statistics (%v)", name, rg, c, err)
				}
			}
		}
		fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Schema(table)
		got := tbl.Schema()
		if got.NumFields() != want.NumFields() {
			t.Fatalf("%s: schema %v", name, got)
		}
		for i, f := range want.Fields() {
			g := got.Field(i)
			if g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) || g.Nullable {
				t.Errorf("%s: field %d is %v, want %v", name, i, g, f)
			}
		}
		tr := array.NewTableReader(tbl, 4096)
		for tr.Next() {
			rec := tr.RecordBatch()
			for r := 0; r < int(rec.NumRows()); r++ {
				var sb strings.Builder
				for c := 0; c < int(rec.NumCols()); c++ {
					if c > 0 {
						sb.WriteByte('|')
					}
					sb.WriteString(rec.Column(c).ValueStr(r))
				}
				read[table] = append(read[table], sb.String())
			}
		}
		tr.Release()
		rows[table] += tbl.NumRows()
		tbl.Release()
		rdr.Close()
	}
	for _, tb := range Tables() {
		if rows[tb] != RowCount(tb, testSF) {
			t.Errorf("%s: %d rows in files, want %d", tb, rows[tb], RowCount(tb, testSF))
		}
		if strings.Join(read[tb], "\n") != strings.Join(rowsOf(t, tb, testSF, 0, 1, 0), "\n") {
			t.Errorf("%s: rows read back differ from generated rows", tb)
		}
	}
	if len(files) != 7+3 { // lineitem ~60k rows: 3 files of at most 25k
		t.Errorf("files: %v", files)
	}
	if _, err := os.Stat(FileName(dir, "lineitem", 2)); err != nil {
		t.Errorf("lineitem split: %v", err)
	}
}

func BenchmarkGenerateLineitem(b *testing.B) {
	const sf = 0.05
	getTextPool()
	b.ReportAllocs()
	b.ResetTimer()
	var rows int64
	for i := 0; i < b.N; i++ {
		err := Generate(context.Background(), "lineitem", sf, 0, 1, 0, func(rec arrow.RecordBatch) error {
			rows += rec.NumRows()
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// TestWriteScale writes all tables at the scale factor in TPCH_SF to the
// folder TPCH_DIR (or a temporary one) and logs sizes and times. It is
// skipped unless TPCH_SF is set, e.g.
//
//	TPCH_SF=1 TPCH_DIR=/tmp/sf1 go test ./local/tpch -run TestWriteScale -v -timeout 30m
func TestWriteScale(t *testing.T) {
	sfEnv := os.Getenv("TPCH_SF")
	if sfEnv == "" {
		t.Skip("TPCH_SF not set")
	}
	sf, err := strconv.ParseFloat(sfEnv, 64)
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("TPCH_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	var total int64
	start := time.Now()
	for _, tb := range Tables() {
		t0 := time.Now()
		files, err := WriteTableParquet(context.Background(), dir, tb, sf, WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var size int64
		for _, f := range files {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			size += st.Size()
		}
		total += size
		t.Logf("%-9s %10d rows %3d files %8.1f MiB %6.2fs", tb, RowCount(tb, sf), len(files), float64(size)/(1<<20), time.Since(t0).Seconds())
	}
	t.Logf("total %.1f MiB in %.2fs", float64(total)/(1<<20), time.Since(start).Seconds())
}

func BenchmarkWriteLineitemParquet(b *testing.B) {
	const sf = 0.05
	getTextPool()
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := WriteTableParquet(context.Background(), dir, "lineitem", sf, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(RowCount("lineitem", sf))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func TestErrors(t *testing.T) {
	stop := os.ErrClosed
	calls := 0
	err := Generate(context.Background(), "lineitem", testSF, 0, 1, 100, func(arrow.RecordBatch) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Errorf("emit error: got %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	if files, err := WriteTableParquet(ctx, dir, "orders", testSF, WriteOptions{}); err == nil || len(files) != 0 {
		t.Errorf("cancelled write: %v, %v", files, err)
	}
	if left, _ := os.ReadDir(dir + "/orders"); len(left) != 0 {
		t.Errorf("cancelled write left %d files", len(left))
	}
	for _, bad := range []struct {
		table         string
		sf            float64
		slice, slices int
	}{{"nope", 1, 0, 1}, {"orders", 0, 0, 1}, {"orders", -1, 0, 1}, {"orders", 1, -1, 2}, {"orders", 1, 0, 0}} {
		if err := Generate(context.Background(), bad.table, bad.sf, bad.slice, bad.slices, 0, func(arrow.RecordBatch) error { return nil }); err == nil {
			t.Errorf("Generate(%+v) accepted", bad)
		}
	}
}
