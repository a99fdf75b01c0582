package tests

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/sluicedb/sluice/local"
)

// flightStack starts a stack with the TPC-H tables and a Flight SQL
// server taking the token "s3cret", and returns a DuckDB on the same
// files, an arrow-go client and a context carrying the token.
func flightStack(t *testing.T, timeout time.Duration) (*flightsql.Client, context.Context, func(string) []row) {
	t.Helper()
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	addr, err := st.StartFlight(local.FlightOptions{Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer s3cret")
	return cl, ctx, func(q string) []row { return duckRows(t, db, q) }
}

// infoRows reads every endpoint of info and returns the schema and the
// normalized rows.
func infoRows(t *testing.T, ctx context.Context, cl *flightsql.Client, info *flight.FlightInfo) (*arrow.Schema, []row) {
	t.Helper()
	var out []row
	var schema *arrow.Schema
	for _, ep := range info.Endpoint {
		rd, err := cl.DoGet(ctx, ep.Ticket)
		if err != nil {
			t.Fatal(err)
		}
		schema = rd.Schema()
		for rd.Next() {
			rec := rd.RecordBatch()
			for i := 0; i < int(rec.NumRows()); i++ {
				r := make(row, rec.NumCols())
				for c := range r {
					r[c] = normArrow(rec.Column(c), i)
				}
				out = append(out, r)
			}
		}
		if err := rd.Err(); err != nil {
			t.Fatal(err)
		}
		rd.Release()
	}
	return schema, out
}

// preparedRows prepares q, binds params (nil: none), executes it and
// returns the statement's dataset schema, the result schema and rows.
func preparedRows(t *testing.T, ctx context.Context, cl *flightsql.Client, q string, params arrow.RecordBatch) (*arrow.Schema, *arrow.Schema, []row) {
	t.Helper()
	prep, err := cl.Prepare(ctx, q)
	if err != nil {
		t.Fatalf("prepare: %v\n%s", err, q)
	}
	defer func() {
		if err := prep.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	if params != nil {
		prep.SetParameters(params)
	}
	info, err := prep.Execute(ctx)
	if err != nil {
		t.Fatalf("execute: %v\n%s", err, q)
	}
	schema, rows := infoRows(t, ctx, cl, info)
	return prep.DatasetSchema(), schema, rows
}

// params builds a one-row parameter batch: one column per value, of the
// value's Arrow type (a nil value is a NULL of type nullType).
func params(t *testing.T, vals ...any) arrow.RecordBatch {
	t.Helper()
	mem := memory.DefaultAllocator
	var fields []arrow.Field
	var cols []arrow.Array
	for i, v := range vals {
		var b array.Builder
		switch v := v.(type) {
		case nil:
			b = array.NewInt64Builder(mem)
			b.AppendNull()
		case int64:
			ib := array.NewInt64Builder(mem)
			ib.Append(v)
			b = ib
		case float64:
			fb := array.NewFloat64Builder(mem)
			fb.Append(v)
			b = fb
		case string:
			sb := array.NewStringBuilder(mem)
			sb.Append(v)
			b = sb
		case bool:
			bb := array.NewBooleanBuilder(mem)
			bb.Append(v)
			b = bb
		case decimal128.Num:
			db := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 15, Scale: 2})
			db.Append(v)
			b = db
		case arrow.Date32:
			db := array.NewDate32Builder(mem)
			db.Append(v)
			b = db
		case time.Time:
			tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond})
			tb.AppendTime(v)
			b = tb
		default:
			t.Fatalf("params: %T", v)
		}
		cols = append(cols, b.NewArray())
		b.Release()
		fields = append(fields, arrow.Field{Name: "p" + string(rune('1'+i)), Type: cols[i].DataType(), Nullable: true})
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, 1)
	for _, c := range cols {
		c.Release()
	}
	t.Cleanup(rec.Release)
	return rec
}

func date(s string) arrow.Date32 {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return arrow.Date32FromTime(d)
}

// TestFlightSQLTPCH runs the 22 TPC-H queries over Flight SQL as
// statements and as prepared statements without parameters, and some
// with parameters bound from an Arrow record batch ($n and ?), each
// checked against DuckDB. A prepared statement's dataset schema (planned,
// not run) has the result's column names.
func TestFlightSQLTPCH(t *testing.T) {
	cl, ctx, duck := flightStack(t, 9*time.Minute)
	for _, q := range tpchQueries(t) {
		want := duck(q.sql)
		t.Run(q.name+"/statement", func(t *testing.T) {
			info, err := cl.Execute(ctx, q.sql)
			if err != nil {
				t.Fatal(err)
			}
			_, got := infoRows(t, ctx, cl, info)
			compareRows(t, got, want, q.ordered)
		})
		t.Run(q.name+"/prepared", func(t *testing.T) {
			ds, schema, got := preparedRows(t, ctx, cl, q.sql, nil)
			compareRows(t, got, want, q.ordered)
			if ds == nil || schema == nil || ds.NumFields() != schema.NumFields() {
				t.Fatalf("dataset schema %v, result schema %v", ds, schema)
			}
			for i := range ds.Fields() {
				if ds.Field(i).Name != schema.Field(i).Name || !arrow.TypeEqual(ds.Field(i).Type, schema.Field(i).Type) {
					t.Errorf("column %d: dataset %s, result %s", i, ds.Field(i), schema.Field(i))
				}
			}
		})
	}
	// TPC-H Q6 and Q3 with their substitution parameters bound.
	q6 := `select sum(l_extendedprice * l_discount) as revenue from lineitem
where l_shipdate >= $1 and l_shipdate < $2 and l_discount between $3 and $4 and l_quantity < $5`
	q6duck := `select sum(l_extendedprice * l_discount) as revenue from lineitem
where l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01' and l_discount between 0.05 and 0.07 and l_quantity < 24`
	q3 := `select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, o_shippriority
from customer, orders, lineitem
where c_mktsegment = ? and c_custkey = o_custkey and l_orderkey = o_orderkey and o_orderdate < ? and l_shipdate > ?
group by l_orderkey, o_orderdate, o_shippriority order by revenue desc, o_orderdate limit 10`
	q3duck := strings.NewReplacer("= ?", "= 'BUILDING'", "< ?", "< date '1995-03-15'", "> ?", "> date '1995-03-15'").Replace(q3)
	for _, c := range []struct {
		name, sql, duck string
		params          arrow.RecordBatch
	}{
		{"q06", q6, q6duck, params(t, date("1994-01-01"), date("1995-01-01"), decimal128.FromI64(5), decimal128.FromI64(7), int64(24))},
		{"q03", q3, q3duck, params(t, "BUILDING", date("1995-03-15"), date("1995-03-15"))},
	} {
		t.Run(c.name+"/parameters", func(t *testing.T) {
			_, _, got := preparedRows(t, ctx, cl, c.sql, c.params)
			compareRows(t, got, duck(c.duck), true)
		})
	}
}

// TestFlightSQLPrepared binds parameters of every type arrow-go's client
// sends (int64, float64, decimal, string, bool, date, timestamp, NULL) and
// checks each answer against DuckDB with the values written as literals;
// a bound statement executes again with other values; a string cannot
// change the statement; the parameter schema has one field per parameter;
// wrong bindings are errors with their codes.
func TestFlightSQLPrepared(t *testing.T) {
	cl, ctx, duck := flightStack(t, 5*time.Minute)
	ts := time.Date(1995, 3, 15, 12, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		name, sql, duck string
		params          arrow.RecordBatch
	}{
		{"int64", `select n_name from nation where n_nationkey < $1 order by n_name`, `select n_name from nation where n_nationkey < 7 order by n_name`, params(t, int64(7))},
		{"negative int64", `select $1 - n_nationkey as d from nation order by d`, `select -3 - n_nationkey as d from nation order by d`, params(t, int64(-3))},
		{"float64", `select count(*) from lineitem where l_extendedprice > $1`, `select count(*) from lineitem where l_extendedprice > 50000.5`, params(t, 50000.5)},
		{"decimal", `select count(*) from lineitem where l_discount between $1 and $2`, `select count(*) from lineitem where l_discount between 0.05 and 0.07`, params(t, decimal128.FromI64(5), decimal128.FromI64(7))},
		{"string", `select count(*) from customer where c_mktsegment = $1`, `select count(*) from customer where c_mktsegment = 'BUILDING'`, params(t, "BUILDING")},
		{"string with a quote", `select count(*) from customer where c_mktsegment = $1`, `select count(*) from customer where c_mktsegment = 'BUILDING'' or ''1''=''1'`, params(t, "BUILDING' or '1'='1")},
		{"bool", `select count(*) from nation where (n_nationkey < 5) = $1`, `select count(*) from nation where (n_nationkey < 5) = true`, params(t, true)},
		{"date", `select count(*) from orders where o_orderdate < $1`, `select count(*) from orders where o_orderdate < date '1995-03-15'`, params(t, date("1995-03-15"))},
		{"timestamp", `select count(*) from orders where o_orderdate < $1`, `select count(*) from orders where o_orderdate < timestamp '1995-03-15 12:30:00'`, params(t, ts)},
		{"NULL", `select count(*) from nation where n_nationkey = $1`, `select count(*) from nation where n_nationkey = NULL`, params(t, nil)},
		{"NULL in coalesce", `select n_name from nation where n_regionkey = coalesce($1, 1) order by n_name`, `select n_name from nation where n_regionkey = coalesce(NULL, 1) order by n_name`, params(t, nil)},
		{"? placeholders", `select n_name from nation where n_regionkey = ? and n_name <> ? order by n_name`, `select n_name from nation where n_regionkey = 1 and n_name <> 'BRAZIL' order by n_name`, params(t, int64(1), "BRAZIL")},
		{"$2 before $1", `select n_name from nation where n_name like $2 and n_regionkey = $1 order by 1`, `select n_name from nation where n_name like 'A%' and n_regionkey = 1 order by 1`, params(t, int64(1), "A%")},
		{"? in a string is not a parameter", `select n_name, '?' as q from nation where n_nationkey = ?`, `select n_name, '?' as q from nation where n_nationkey = 3`, params(t, int64(3))},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, got := preparedRows(t, ctx, cl, c.sql, c.params)
			compareRows(t, got, duck(c.duck), true)
		})
	}

	t.Run("schemas and rebinding", func(t *testing.T) {
		prep, err := cl.Prepare(ctx, `select n_nationkey, n_name from nation where n_regionkey = $1 and n_nationkey > $2 order by n_nationkey`)
		if err != nil {
			t.Fatal(err)
		}
		defer prep.Close(ctx)
		if ps := prep.ParameterSchema(); ps == nil || ps.NumFields() != 2 || ps.Field(0).Name != "$1" || ps.Field(1).Name != "$2" {
			t.Fatalf("parameter schema: %v", ps)
		}
		if ds := prep.DatasetSchema(); ds == nil || ds.NumFields() != 2 || ds.Field(0).Name != "n_nationkey" || ds.Field(1).Type.ID() != arrow.STRING {
			t.Fatalf("dataset schema: %v", ds)
		}
		sr, err := prep.GetSchema(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s, err := flight.DeserializeSchema(sr.GetSchema(), nil); err != nil || s.NumFields() != 2 || s.Field(1).Name != "n_name" {
			t.Fatalf("GetSchema of the prepared statement: %v %v", s, err)
		}
		for _, p := range [][2]int64{{1, 0}, {3, 10}, {0, 100}} {
			prep.SetParameters(params(t, p[0], p[1]))
			info, err := prep.Execute(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, got := infoRows(t, ctx, cl, info)
			want := duck(strings.NewReplacer("$1", strconv.FormatInt(p[0], 10), "$2", strconv.FormatInt(p[1], 10)).Replace(`select n_nationkey, n_name from nation where n_regionkey = $1 and n_nationkey > $2 order by n_nationkey`))
			compareRows(t, got, want, true)
		}
	})

	// Parameter types inferred from their context, as Postgres infers an
	// unspecified parameter's (x = $1, LIMIT $1, $1 + col, LIKE, a cast).
	for _, c := range []struct {
		sql  string
		want []arrow.Type
	}{
		{`select n_name from nation where n_nationkey = $1 and n_name <> $2`, []arrow.Type{arrow.INT64, arrow.STRING}},
		{`select n_name from nation order by n_name limit $1 offset $2`, []arrow.Type{arrow.INT64, arrow.INT64}},
		{`select l_extendedprice * ? from lineitem where l_shipdate < ? and l_comment like ?`, []arrow.Type{arrow.DECIMAL64, arrow.DATE32, arrow.STRING}},
		{`select $1::double as x, $2 as untyped`, []arrow.Type{arrow.FLOAT64, arrow.NULL}},
		{`select n_name from nation where n_nationkey in ($1, $2) and n_regionkey = coalesce($3, 1)`, []arrow.Type{arrow.INT64, arrow.INT64, arrow.INT64}},
		{`select nope from nation where n_nationkey = $1`, []arrow.Type{arrow.NULL}}, // cannot be typed: null, the error at execution
	} {
		t.Run("parameter types/"+c.sql, func(t *testing.T) {
			prep, err := cl.Prepare(ctx, c.sql)
			if err != nil {
				t.Fatal(err)
			}
			defer prep.Close(ctx)
			ps := prep.ParameterSchema()
			if ps == nil || ps.NumFields() != len(c.want) {
				t.Fatalf("parameter schema %v, want %d fields", ps, len(c.want))
			}
			for i, w := range c.want {
				if f := ps.Field(i); f.Type.ID() != w || f.Name != fmt.Sprintf("$%d", i+1) {
					t.Errorf("field %d: %s, want $%d of %s", i, f, i+1, w)
				}
			}
		})
	}

	t.Run("typed parameters bound as their schema says", func(t *testing.T) {
		q := `select n_name from nation where n_nationkey < $1 order by n_name limit $2`
		prep, err := cl.Prepare(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer prep.Close(ctx)
		ps := prep.ParameterSchema()
		b := array.NewRecordBuilder(memory.DefaultAllocator, ps)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).Append(10)
		b.Field(1).(*array.Int64Builder).Append(3)
		rec := b.NewRecordBatch()
		defer rec.Release()
		prep.SetParameters(rec)
		info, err := prep.Execute(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, got := infoRows(t, ctx, cl, info)
		compareRows(t, got, duck(`select n_name from nation where n_nationkey < 10 order by n_name limit 3`), true)
	})

	t.Run("no parameters: empty parameter schema", func(t *testing.T) {
		prep, err := cl.Prepare(ctx, `select 1 as one`)
		if err != nil {
			t.Fatal(err)
		}
		defer prep.Close(ctx)
		if ps := prep.ParameterSchema(); ps == nil || ps.NumFields() != 0 {
			t.Fatalf("parameter schema: %v", ps)
		}
	})

	for _, c := range []struct {
		name, sql string
		params    func() arrow.RecordBatch
		code      codes.Code
		sl        string
	}{
		{"not bound", `select n_name from nation where n_nationkey = $1`, nil, codes.InvalidArgument, "SL008"},
		{"too few", `select n_name from nation where n_nationkey = $1 or n_nationkey = $2`, func() arrow.RecordBatch { return params(t, int64(1)) }, codes.InvalidArgument, "SL008"},
		{"mixed styles", `select n_name from nation where n_nationkey = $1 or n_nationkey = ?`, nil, codes.InvalidArgument, "SL008"},
		{"two rows", `select n_name from nation where n_nationkey = $1`, func() arrow.RecordBatch { return twoRows(t) }, codes.Unimplemented, "SL005"},
		{"unknown column", `select nope from nation`, nil, codes.InvalidArgument, "SL003"},
	} {
		t.Run("error/"+c.name, func(t *testing.T) {
			prep, err := cl.Prepare(ctx, c.sql)
			if err == nil {
				defer prep.Close(ctx)
				if c.params != nil {
					prep.SetParameters(c.params())
				}
				_, err = prep.Execute(ctx)
			}
			if status.Code(err) != c.code || !strings.Contains(err.Error(), c.sl) {
				t.Fatalf("%v, want %s with %s", err, c.code, c.sl)
			}
		})
	}
}

// twoRows is a parameter batch of two rows.
func twoRows(t *testing.T) arrow.RecordBatch {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues([]int64{1, 2}, nil)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "p1", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{col}, 2)
	t.Cleanup(rec.Release)
	return rec
}

// TestFlightSQLMetadata: GetTableTypes answers TABLE; GetSchema of a
// statement is the schema its execution answers, without running it;
// the key calls answer no rows in their schemas.
func TestFlightSQLMetadata(t *testing.T) {
	cl, ctx, _ := flightStack(t, 3*time.Minute)
	info, err := cl.GetTableTypes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, got := infoRows(t, ctx, cl, info); len(got) != 1 || got[0][0] != "TABLE" {
		t.Fatalf("table types: %v", got)
	}
	for _, q := range []string{
		`select l_returnflag, sum(l_extendedprice) as s, avg(l_quantity) as q, count(*) as n, min(l_shipdate) as d from lineitem group by 1`,
		`select n_name, n_nationkey + $1 as k from nation`,
	} {
		sr, err := cl.GetExecuteSchema(ctx, q)
		if err != nil {
			t.Fatalf("GetExecuteSchema: %v", err)
		}
		planned, err := flight.DeserializeSchema(sr.GetSchema(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(q, "$1") {
			if planned.NumFields() != 2 || planned.Field(0).Name != "n_name" || planned.Field(1).Name != "k" {
				t.Fatalf("planned schema with a parameter: %s", planned)
			}
			continue
		}
		info, err := cl.Execute(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		ran, _ := infoRows(t, ctx, cl, info)
		if !planned.Equal(ran) {
			t.Fatalf("planned schema %s\nresult schema %s", planned, ran)
		}
	}
	if _, err := cl.GetExecuteSchema(ctx, "select nope from nation"); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "SL003") {
		t.Fatalf("GetExecuteSchema of a bad statement: %v", err)
	}
	nation := flightsql.TableRef{Table: "nation"}
	region := flightsql.TableRef{Table: "region"}
	for _, c := range []struct {
		name   string
		call   func() (*flight.FlightInfo, error)
		schema *arrow.Schema
	}{
		{"primary keys", func() (*flight.FlightInfo, error) { return cl.GetPrimaryKeys(ctx, nation) }, schema_ref.PrimaryKeys},
		{"imported keys", func() (*flight.FlightInfo, error) { return cl.GetImportedKeys(ctx, nation) }, schema_ref.ImportedKeys},
		{"exported keys", func() (*flight.FlightInfo, error) { return cl.GetExportedKeys(ctx, region) }, schema_ref.ExportedKeys},
		{"cross reference", func() (*flight.FlightInfo, error) { return cl.GetCrossReference(ctx, region, nation) }, schema_ref.CrossReference},
	} {
		t.Run(c.name, func(t *testing.T) {
			info, err := c.call()
			if err != nil {
				t.Fatal(err)
			}
			schema, rows := infoRows(t, ctx, cl, info)
			if !schema.Equal(c.schema) || len(rows) != 0 {
				t.Fatalf("schema %s rows %v, want no rows of %s", schema, rows, c.schema)
			}
		})
	}
}

// TestFlightSQLTLS serves Flight SQL with TLS: a TLS client that trusts
// the certificate runs a query (checked against DuckDB), a plain client
// fails.
func TestFlightSQLTLS(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	conf := selfSigned(t)
	addr, err := st.StartFlight(local.FlightOptions{Token: "s3cret", TLS: conf})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(conf.Certificates[0].Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer s3cret")
	cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	q := `select n_regionkey, count(*) as n from nation group by 1 order by 1`
	info, err := cl.Execute(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	_, got := infoRows(t, ctx, cl, info)
	compareRows(t, got, duckRows(t, db, q), true)

	plain, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.Execute(ctx, q); status.Code(err) != codes.Unavailable {
		t.Fatalf("a plain client on the TLS port: %v, want Unavailable", err)
	}
}
