package tests

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// writeParquet writes rows built by fill into dir/<table>/part-<f>.parquet
// with arrow-go's pqarrow, several row groups per file.
func writeParquet(t *testing.T, dir, table string, schema *arrow.Schema, files, rowsPerFile int, fill func(b *array.RecordBuilder, row int)) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, table), 0o755); err != nil {
		t.Fatal(err)
	}
	for f := 0; f < files; f++ {
		out, err := os.Create(filepath.Join(dir, table, fmt.Sprintf("part-%d.parquet", f)))
		if err != nil {
			t.Fatal(err)
		}
		fw, err := pqarrow.NewFileWriter(schema, out, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(700), parquet.WithStats(true)), pqarrow.DefaultWriterProps())
		if err != nil {
			t.Fatal(err)
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for r := 0; r < rowsPerFile; r++ {
			fill(b, f*rowsPerFile+r)
		}
		rec := b.NewRecordBatch()
		if err := fw.WriteBuffered(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
		if err := fw.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func bigDec(s string) decimal128.Num {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return decimal128.FromBigInt(n)
}

// typedSchema has a column of every type the engine reads from Parquet
// beyond the TPC-H ones.
var typedSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "ts_us", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "ts_ms", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "ts_ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
	{Name: "d38", Type: &arrow.Decimal128Type{Precision: 38, Scale: 4}, Nullable: true},
	{Name: "d20", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
	{Name: "i16", Type: arrow.PrimitiveTypes.Int16},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32},
	{Name: "u8", Type: arrow.PrimitiveTypes.Uint8},
	{Name: "u32", Type: arrow.PrimitiveTypes.Uint32},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "dt", Type: arrow.FixedWidthTypes.Date32},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "u64", Type: arrow.PrimitiveTypes.Uint64},
}, nil)

func fillTyped(rng *rand.Rand) func(b *array.RecordBuilder, i int) {
	const base = int64(1704067200) * 1_000_000 // 2024-01-01 00:00:00
	texts := []string{" 12 ", "1.5", "-2.5", "abc", "2024-01-02 03:04:05", "2024-02-30", "true", "no", "12345678901234567890.25", "", "7"}
	return func(b *array.RecordBuilder, i int) {
		us := base + rng.Int64N(400*86400*1_000_000) - 30*86400*1_000_000
		null := func(k int) bool { return i%k == k-1 }
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if null(17) {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(us))
		}
		if null(13) {
			b.Field(2).AppendNull()
		} else { // coarse, so groups and join matches repeat
			b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(us / 1000 / 3_600_000 * 3_600_000))
		}
		if null(11) {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(us*1000 + int64(i%1000)))
		}
		if null(19) {
			b.Field(4).AppendNull()
		} else {
			v := fmt.Sprintf("%d%018d", rng.Int64N(2_000_000)-1_000_000, rng.Int64N(1e18))
			if i%5 == 0 {
				v = fmt.Sprint(rng.Int64N(1000) - 500) // small values repeat
			}
			b.Field(4).(*array.Decimal128Builder).Append(bigDec(v))
		}
		if null(23) {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.Decimal128Builder).Append(bigDec(fmt.Sprint(rng.Int64N(2e15) - 1e15 + int64(i%3)*1e17)))
		}
		if null(7) {
			b.Field(6).AppendNull()
		} else {
			b.Field(6).(*array.BooleanBuilder).Append(rng.IntN(3) == 0)
		}
		if null(9) {
			b.Field(7).AppendNull()
		} else {
			b.Field(7).(*array.Int8Builder).Append(int8(rng.IntN(256) - 128))
		}
		b.Field(8).(*array.Int16Builder).Append(int16(rng.IntN(65536) - 32768))
		b.Field(9).(*array.Int32Builder).Append(rng.Int32())
		b.Field(10).(*array.Uint8Builder).Append(uint8(rng.IntN(256)))
		b.Field(11).(*array.Uint32Builder).Append(rng.Uint32())
		if null(29) {
			b.Field(12).AppendNull()
		} else {
			b.Field(12).(*array.Float32Builder).Append(float32(rng.NormFloat64() * 1000))
		}
		b.Field(13).(*array.Date32Builder).Append(arrow.Date32(19700 + rng.IntN(500)))
		if null(31) {
			b.Field(14).AppendNull()
		} else {
			b.Field(14).(*array.StringBuilder).Append(texts[i%len(texts)])
		}
		b.Field(15).(*array.Uint64Builder).Append(rng.Uint64() >> 1)
	}
}

// TestTypesParquet registers a Parquet table with timestamp (us, ms UTC,
// ns), decimal(38,4), decimal(20,2), boolean, int8/16/32, uint8/32,
// uint64 (below 2^63), float32, date and string columns and checks queries over each against
// DuckDB on the same file, adaptive and static.
func TestTypesParquet(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 9))
	writeParquet(t, dir, "typed", typedSchema, 2, 2500, fillTyped(rng))
	db := openDuckTables(t, dir, "typed")
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	queries := []string{
		"select * from typed order by id",
		"select id, cast(d38 as varchar), cast(d20 as varchar), cast(ts_us as varchar), cast(cast(ts_ns as timestamp) as varchar), cast(b as varchar) from typed order by id",
		"select b, count(*), sum(d38), min(d38), max(d38), min(ts_us), max(ts_ns), max(ts_ms), sum(i8), sum(u32), avg(d20), sum(d20), cast(sum(d38) as varchar) from typed group by b order by b",
		"select ts_ms, count(*), min(id) from typed group by ts_ms order by ts_ms",
		"select d38, count(*) from typed group by d38 order by d38 desc nulls last limit 40",
		"select d20 % 1000 as k, count(*) from typed group by k order by k",
		"select count(*), count(x.id) from typed x join typed y on x.ts_us = y.ts_us and x.d38 = y.d38",
		"select count(*) from typed x join typed y on x.ts_ms = y.ts_ms",
		"select count(*) from typed x join typed y on x.d38 = y.d20",
		"select count(*) from typed where ts_us >= timestamp '2024-03-01 12:00:00' and d38 > 123456789012345678.5",
		"select count(*) from typed where ts_ns < date '2024-02-01' or d20 <= -500000000000.25",
		"select id, ts_us + interval '1' day, ts_us - interval '3' month, ts_ns + interval '1 hour 30 minutes', dt + interval '1' month, dt - date '2024-01-01', dt + i8, dt - 7 from typed order by id",
		"select id, extract(hour from ts_us), extract(minute from ts_ns), extract(second from ts_us), extract(year from ts_ns), extract(dow from ts_us), extract(doy from ts_us), extract(quarter from ts_us), extract(millisecond from ts_ns), extract(microsecond from ts_us) from typed order by id",
		"select id, try_cast(s as bigint), try_cast(s as decimal(10,2)), try_cast(s as timestamp), try_cast(s as date), try_cast(s as boolean), try_cast(s as double), try_cast(s as decimal(38,2)) from typed order by id",
		"select id, cast(i32 as decimal(38,2)) + d38, d38 * 2, d20 * d20, d38 - d20, -d38, d20 * 1.5, cast(d38 as double), cast(d20 as bigint), cast(d38 as decimal(38,1)), cast(d20 as decimal(18,0)) from typed order by id",
		"select id, d38 from typed order by d38 desc nulls last, id limit 30",
		"select id, ts_ns from typed order by ts_ns nulls first, id limit 30",
		"select sum(f32), min(f32), max(i16), min(u8), sum(i32), count(b), sum(case when b then 1 else 0 end), max(u64), min(u64) from typed",
		"select case when b then d38 else d20 end, case when i8 > 0 then ts_us else ts_ns end from typed order by id",
		"select count(distinct d38), count(distinct ts_ms), count(distinct b) from typed",
	}
	for i, q := range queries {
		want := duckRows(t, db, q)
		for _, adaptive := range []bool{true, false} {
			t.Run(fmt.Sprintf("q%02d/adaptive=%v", i, adaptive), func(t *testing.T) {
				res := run(t, st, q, adaptive)
				compareRows(t, sluiceRows(res), want, strings.Contains(q, "order by"))
			})
		}
	}
}

// TestWideMoneySums runs TPC-H Q1's aggregates over a table whose sums
// exceed the 18-digit (and int64) range, as SF 10 and above do: the sums
// are decimal(38,s) and equal DuckDB's to the last digit.
func TestWideMoneySums(t *testing.T) {
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "l_returnflag", Type: arrow.BinaryTypes.String},
		{Name: "l_quantity", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}},
		{Name: "l_extendedprice", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}},
		{Name: "l_discount", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}},
		{Name: "l_tax", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}},
	}, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	writeParquet(t, dir, "money", schema, 3, 20000, func(b *array.RecordBuilder, i int) {
		b.Field(0).(*array.StringBuilder).Append([]string{"A", "N", "R"}[i%3])
		b.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(rng.Int64N(5000) + 100))
		// prices near 10^11 (13 digits of the 15): one row's charge fits
		// decimal(18,6), but 60,000 of them overflow 18 digits and int64.
		b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(9_000_000_000_000 + rng.Int64N(999_999_999_999)))
		b.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(rng.Int64N(11)))
		b.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(rng.Int64N(9)))
	})
	db := openDuckTables(t, dir, "money")
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	q := `select l_returnflag,
		cast(sum(l_quantity) as varchar) as sum_qty,
		cast(sum(l_extendedprice) as varchar) as sum_base_price,
		cast(sum(l_extendedprice * (1 - l_discount)) as varchar) as sum_disc_price,
		cast(sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as varchar) as sum_charge,
		avg(l_quantity), avg(l_extendedprice), count(*)
		from money group by l_returnflag order by l_returnflag`
	want := duckRows(t, db, q)
	for _, adaptive := range []bool{true, false} {
		res := run(t, st, q, adaptive)
		got := sluiceRows(res)
		compareRows(t, got, want, true)
		if len(got) > 0 && len(got[0][4].(string)) < 23 {
			t.Errorf("sum_charge %v does not exceed 18 digits: the test data is too small", got[0][4])
		}
	}
	// Result types follow DuckDB's decimal rules (asked with typeof).
	for _, e := range []string{
		"sum(l_quantity)", "avg(l_quantity)", "l_extendedprice * (1 - l_discount)",
		"l_extendedprice * (1 - l_discount) * (1 + l_tax)", "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax))",
		"cast(l_quantity as decimal(30,2)) * l_tax", "cast(l_quantity as decimal(30,2)) + l_tax",
		"sum(cast(l_quantity as decimal(30,2)))", "l_quantity - l_tax", "max(cast(l_tax as decimal(25,3)))",
	} {
		var want string
		if err := db.QueryRow("select typeof(" + e + ") from money limit 1").Scan(&want); err != nil {
			t.Fatal(err)
		}
		res := run(t, st, "select "+e+" from money limit 1", false)
		if got := duckTypeName(res.Schema.Field(0).Type); got != want {
			t.Errorf("%s: sluice type %s, DuckDB %s", e, got, want)
		}
	}
}

// duckTypeName spells an engine Arrow type as DuckDB's typeof does.
func duckTypeName(t arrow.DataType) string {
	switch tt := t.(type) {
	case *arrow.Decimal64Type:
		return fmt.Sprintf("DECIMAL(%d,%d)", tt.Precision, tt.Scale)
	case *arrow.Decimal128Type:
		return fmt.Sprintf("DECIMAL(%d,%d)", tt.Precision, tt.Scale)
	case *arrow.Float64Type:
		return "DOUBLE"
	case *arrow.Int64Type:
		return "BIGINT"
	}
	return t.String()
}

// openDuckTables opens DuckDB with a view per named table folder.
func openDuckTables(t *testing.T, dir string, tables ...string) *sql.DB {
	t.Helper()
	conn, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	for _, tb := range tables {
		q := fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet('%s/*.parquet')", tb, filepath.Join(dir, tb))
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("duckdb: %s: %v", q, err)
		}
	}
	return db
}

// TestTypesCSV: boolean and small-width integer columns written by DuckDB
// as CSV (types inferred at registration) give DuckDB's answers.
func TestTypesCSV(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, dir, "typed", typedSchema, 1, 3000, fillTyped(rand.New(rand.NewPCG(3, 4))))
	db := openDuckTables(t, dir, "typed")
	csvDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(csvDir, "small"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(csvDir, "small", "small.csv")
	if _, err := db.Exec("COPY (SELECT id, b, i8, i16, i32, u8, u32, dt FROM typed) TO '" + out + "' (HEADER, DELIMITER ',')"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE VIEW small AS SELECT id, b, i8, i16, i32, u8, u32, dt FROM typed"); err != nil {
		t.Fatal(err)
	}
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), csvDir); err != nil {
		t.Fatal(err)
	}
	for i, q := range []string{
		"select * from small order by id",
		"select b, count(*), sum(i8), min(i16), max(u32), sum(u8), count(i8) from small group by b order by b",
		"select count(*) from small where b and i8 > 0 or not b and i32 < 0",
		"select id, dt - date '2024-01-01', dt + interval '1' month from small where i8 is null order by id",
	} {
		want := duckRows(t, db, q)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			res := run(t, st, q, true)
			compareRows(t, sluiceRows(res), want, strings.Contains(q, "order by"))
		})
	}
}
