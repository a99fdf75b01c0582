package flightsql

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/planner/plan"
)

// TestLiteral: one value of every Arrow type a client binds, as the SQL
// literal substituted for it.
func TestLiteral(t *testing.T) {
	mem := memory.NewGoAllocator()
	build := func(dt arrow.DataType, fill func(array.Builder)) arrow.Array {
		b := array.NewBuilder(mem, dt)
		defer b.Release()
		fill(b)
		return b.NewArray()
	}
	ts := time.Date(1995, 3, 15, 12, 30, 0, 123456789, time.UTC)
	for _, c := range []struct {
		name string
		a    arrow.Array
		want string // "SL005": an error with that code
	}{
		{"int64", build(arrow.PrimitiveTypes.Int64, func(b array.Builder) { b.(*array.Int64Builder).Append(-7) }), "(-7)"},
		{"int32", build(arrow.PrimitiveTypes.Int32, func(b array.Builder) { b.(*array.Int32Builder).Append(7) }), "7"},
		{"uint64", build(arrow.PrimitiveTypes.Uint64, func(b array.Builder) { b.(*array.Uint64Builder).Append(1 << 63) }), "9223372036854775808"},
		{"float64", build(arrow.PrimitiveTypes.Float64, func(b array.Builder) { b.(*array.Float64Builder).Append(0.25) }), "CAST(0.25 AS DOUBLE PRECISION)"},
		{"float32", build(arrow.PrimitiveTypes.Float32, func(b array.Builder) { b.(*array.Float32Builder).Append(0.5) }), "CAST(0.5 AS DOUBLE PRECISION)"},
		{"decimal128", build(&arrow.Decimal128Type{Precision: 15, Scale: 2}, func(b array.Builder) { b.(*array.Decimal128Builder).Append(decimal128.FromI64(-12345)) }), "(-123.45)"},
		{"string", build(arrow.BinaryTypes.String, func(b array.Builder) { b.(*array.StringBuilder).Append("O'Brien") }), "'O''Brien'"},
		{"large string", build(arrow.BinaryTypes.LargeString, func(b array.Builder) { b.(*array.LargeStringBuilder).Append("x") }), "'x'"},
		{"bool", build(arrow.FixedWidthTypes.Boolean, func(b array.Builder) { b.(*array.BooleanBuilder).Append(false) }), "FALSE"},
		{"date32", build(arrow.FixedWidthTypes.Date32, func(b array.Builder) { b.(*array.Date32Builder).Append(arrow.Date32FromTime(ts)) }), "DATE '1995-03-15'"},
		{"date64", build(arrow.FixedWidthTypes.Date64, func(b array.Builder) { b.(*array.Date64Builder).Append(arrow.Date64FromTime(ts)) }), "DATE '1995-03-15'"},
		{"timestamp us", build(&arrow.TimestampType{Unit: arrow.Microsecond}, func(b array.Builder) { b.(*array.TimestampBuilder).AppendTime(ts) }), "TIMESTAMP '1995-03-15 12:30:00.123456'"},
		{"timestamp s with zone", build(&arrow.TimestampType{Unit: arrow.Second, TimeZone: "America/New_York"}, func(b array.Builder) { b.(*array.TimestampBuilder).AppendTime(ts) }), "TIMESTAMP '1995-03-15 12:30:00'"},
		{"NULL int64", build(arrow.PrimitiveTypes.Int64, func(b array.Builder) { b.AppendNull() }), "NULL"},
		{"null type", build(arrow.Null, func(b array.Builder) { b.AppendNull() }), "NULL"},
		{"binary", build(arrow.BinaryTypes.Binary, func(b array.Builder) { b.(*array.BinaryBuilder).Append([]byte("x")) }), plan.CodeUnsupported},
		{"NUL in a string", build(arrow.BinaryTypes.String, func(b array.Builder) { b.(*array.StringBuilder).Append("a\x00") }), plan.CodeValue},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer c.a.Release()
			got, err := literal(c.a, 0, 1)
			if err != nil {
				got = plan.CodeOf(err)
			}
			if got != c.want {
				t.Fatalf("got %s (%v), want %s", got, err, c.want)
			}
		})
	}
}

// TestHandle: a handle carries the statement and its bound literals; a
// foreign handle is InvalidArgument; the parameters are substituted.
func TestHandle(t *testing.T) {
	p := prepared{SQL: "select ? || 'x?', $$?$$", Params: []string{"'a'"}}
	h, err := p.handle()
	if err != nil {
		t.Fatal(err)
	}
	back, err := parseHandle(h)
	if err != nil || back.SQL != p.SQL || strings.Join(back.Params, ",") != "'a'" {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if sql, err := back.bound(); err != nil || sql != "select 'a' || 'x?', $$?$$" {
		t.Fatalf("bound: %q %v", sql, err)
	}
	if _, err := (prepared{SQL: "select $1"}).bound(); plan.CodeOf(err) != plan.CodeValue {
		t.Fatalf("unbound: %v", err)
	}
	for _, bad := range []string{"", "job-123", string(handlePrefix) + "{", "sluice-prepared-v2:{}"} {
		if _, err := parseHandle([]byte(bad)); status.Code(err) != codes.InvalidArgument {
			t.Errorf("handle %q: %v", bad, err)
		}
	}
}

// typesOnly is an Engine that only types parameters.
type typesOnly struct {
	coordinator.Engine
	types []plan.DataType
	err   error
	sql   *string
}

func (e typesOnly) ParamTypes(_ context.Context, sql string) ([]plan.DataType, error) {
	*e.sql = sql
	return e.types, e.err
}

// TestParamSchema: the parameter schema's fields are typed as the engine
// types the parameters (? placeholders asked as $n), null where it gives
// no type or cannot type the statement.
func TestParamSchema(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name, sql, asked string
		n                int
		types            []plan.DataType
		err              error
		want             []arrow.Type
	}{
		{"typed", "select * from t where a = $1 limit $2", "select * from t where a = $1 limit $2", 2,
			[]plan.DataType{plan.StringType, plan.Int64Type}, nil, []arrow.Type{arrow.STRING, arrow.INT64}},
		{"question marks", "select * from t where d < ? and x = ?", "select * from t where d < $1 and x = $2", 2,
			[]plan.DataType{plan.DateType, plan.DecimalType(15, 2)}, nil, []arrow.Type{arrow.DATE32, arrow.DECIMAL64}},
		{"untyped", "select $1, $2", "select $1, $2", 2, []plan.DataType{plan.NullType, plan.Float64Type}, nil, []arrow.Type{arrow.NULL, arrow.FLOAT64}},
		{"fewer types than parameters", "select $2", "select $2", 2, []plan.DataType{plan.NullType}, nil, []arrow.Type{arrow.NULL, arrow.NULL}},
		{"cannot be typed", "select nope from t where a = $1", "select nope from t where a = $1", 1, nil,
			plan.Errorf(plan.CodeUnknownCol, "nope"), []arrow.Type{arrow.NULL}},
		{"no parameters", "select 1", "", 0, nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked string
			s := &Server{Engine: typesOnly{types: tc.types, err: tc.err, sql: &asked}, Log: log}
			ps := s.paramSchema(context.Background(), prepared{SQL: tc.sql}, tc.n)
			if asked != tc.asked {
				t.Errorf("asked to type %q, want %q", asked, tc.asked)
			}
			if ps.NumFields() != len(tc.want) {
				t.Fatalf("parameter schema %s, want %d fields", ps, len(tc.want))
			}
			for i, w := range tc.want {
				if f := ps.Field(i); f.Name != fmt.Sprintf("$%d", i+1) || f.Type.ID() != w || !f.Nullable {
					t.Errorf("field %d: %s, want $%d of %s", i, f, i+1, w)
				}
			}
		})
	}
}
