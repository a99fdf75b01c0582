package exec

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/sluicedb/sluice/planner/plan"
)

func wide(p, s int) plan.DataType { return plan.DataType{ID: plan.Decimal, Precision: p, Scale: s} }

// evalStrings evaluates e over a one-column string batch of vals.
func evalStrings(t *testing.T, e *plan.Expr, vals ...any) ([]any, error) {
	t.Helper()
	mem := checkedMem(t)
	rec := mkRec(mem, strs("s", vals...))
	defer rec.Release()
	out, err := Eval(e, rec, mem)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	return goVals(out), nil
}

func TestWideDecimalCasts(t *testing.T) {
	s := cref(0, plan.StringType)
	cases := []struct {
		name string
		e    *plan.Expr
		in   []any
		want []any
		err  error
	}{
		{"string->decimal(38,4)", call(plan.OpCast, wide(38, 4), s),
			[]any{"1.5", " -12345678901234567890123.45675 ", nil, "0", "99999999999999999999999999999999.9999"},
			[]any{"1.5000", "-12345678901234567890123.4568", nil, "0.0000", "99999999999999999999999999999999.9999"}, nil},
		{"string->decimal(38,4) too wide", call(plan.OpCast, wide(38, 4), s), []any{"1234567890123456789012345678901234567"}, nil, errCastFails},
		{"decimal(38,4)->decimal(20,1) rounds half away", call(plan.OpCast, wide(20, 1), call(plan.OpCast, wide(38, 4), s)),
			[]any{"1.25", "-1.25", "-0.0499", "123456789012345678.95"}, []any{"1.3", "-1.3", "0.0", "123456789012345679.0"}, nil},
		{"decimal(38,2)->int64", call(plan.OpCast, plan.Int64Type, call(plan.OpCast, wide(38, 2), s)),
			[]any{"2.5", "-2.5", "9223372036854775807.4"}, []any{int64(3), int64(-3), int64(9223372036854775807)}, nil},
		{"decimal(38,0)->int64 overflow", call(plan.OpCast, plan.Int64Type, call(plan.OpCast, wide(38, 0), s)),
			[]any{"9223372036854775808"}, nil, ErrIntegerOverflow},
		{"decimal(38,2)->decimal(15,2) overflow", call(plan.OpCast, plan.DecimalType(15, 2), call(plan.OpCast, wide(38, 2), s)),
			[]any{"10000000000000"}, nil, plan.ErrDecimalOverflow},
		{"decimal(38,3)->double", call(plan.OpCast, plan.Float64Type, call(plan.OpCast, wide(38, 3), s)),
			[]any{"-1.125", "12345678901234567890.5"}, []any{-1.125, 12345678901234567890.5}, nil},
		{"narrow + wide", call(plan.OpAdd, wide(39, 2), call(plan.OpCast, plan.DecimalType(15, 2), s), call(plan.OpCast, wide(38, 2), s)),
			[]any{"1.25", "-3.10"}, []any{"2.50", "-6.20"}, nil},
		{"wide * narrow", call(plan.OpMul, wide(38, 4), call(plan.OpCast, wide(30, 2), s), call(plan.OpCast, plan.DecimalType(15, 2), s)),
			[]any{"12345678901234.56", "-0.01"}, []any{"152415787532388172687092138.3936", "0.0001"}, nil},
		{"wide * overflow", call(plan.OpMul, wide(38, 0), call(plan.OpCast, wide(38, 0), s), call(plan.OpCast, wide(38, 0), s)),
			[]any{"10000000000000000000"}, nil, plan.ErrDecimalOverflow},
		{"wide - and %", call(plan.OpMod, wide(38, 1), call(plan.OpSub, wide(38, 1), call(plan.OpCast, wide(38, 1), s), lit(wide(38, 1), plan.Dec128Value(decimal128.FromI64(5)))), lit(wide(38, 1), plan.Value{I: 30})),
			[]any{"7.5", "-100000000000000000000.0"}, []any{"1.0", "-1.5"}, nil},
		{"negate, compare", call(plan.OpLt, plan.BoolType, call(plan.OpNeg, wide(38, 0), call(plan.OpCast, wide(38, 0), s)), lit(wide(38, 0), plan.Value{I: 0, H: 1})),
			[]any{"-18446744073709551615", "-18446744073709551616", "-18446744073709551617"}, []any{true, false, false}, nil},
		{"decimal(38,2)->decimal(20,2) checks precision", call(plan.OpCast, wide(20, 2), call(plan.OpCast, wide(38, 2), s)),
			[]any{"1000000000000000000"}, nil, plan.ErrDecimalOverflow},
		{"wide IN", &plan.Expr{Op: plan.OpIn, Type: plan.BoolType, Args: []*plan.Expr{call(plan.OpCast, wide(38, 0), s),
			lit(wide(38, 0), plan.Value{I: 0, H: 1}), lit(wide(38, 0), plan.Value{I: -5})}},
			[]any{"18446744073709551616", "-5", "5", nil}, []any{true, true, false, nil}, nil},
		{"try_cast string->decimal(20,2)", call(plan.OpTryCast, wide(20, 2), s),
			[]any{"1.005", "x", nil, "1e3", "123456789012345678901"}, []any{"1.01", nil, nil, nil, nil}, nil},
		{"try_cast string->int64", call(plan.OpTryCast, plan.Int64Type, s),
			[]any{" 12 ", "1.5", "-2.5", "abc", "1e3", "", "9223372036854775808"}, []any{int64(12), int64(2), int64(-3), nil, int64(1000), nil, nil}, nil},
		{"string->timestamp->string", call(plan.OpCast, plan.StringType, call(plan.OpCast, plan.TimestampType, s)),
			[]any{"2024-01-02 03:04:05", "2024-01-02", "1969-12-31 23:59:59.5", "2024-02-29T12:00:00.000001", "2024-01-02 03:04:05+02"},
			[]any{"2024-01-02 03:04:05", "2024-01-02 00:00:00", "1969-12-31 23:59:59.5", "2024-02-29 12:00:00.000001", "2024-01-02 01:04:05"}, nil},
		{"try_cast string->timestamp", call(plan.OpTryCast, plan.TimestampType, s),
			[]any{"2024-13-01", "2024-01-02 25:00:00", "x", "2024-01-02 03:04"}, []any{nil, nil, nil, "2024-01-02 03:04:00"}, nil},
		{"timestamp->date", call(plan.OpCast, plan.StringType, call(plan.OpCast, plan.DateType, call(plan.OpCast, plan.TimestampType, s))),
			[]any{"2024-01-02 23:59:59", "1969-12-31 23:00:00"}, []any{"2024-01-02", "1969-12-31"}, nil},
		{"timestamp + interval", call(plan.OpAdd, plan.TimestampType, call(plan.OpCast, plan.TimestampType, s), lit(plan.IntervalType, plan.Value{Months: 1, Days: 1, I: 3_600_000_000})),
			[]any{"2024-01-31 10:00:00", "2023-12-31 23:30:00"}, []any{"2024-03-01 11:00:00", "2024-02-02 00:30:00"}, nil},
		{"date - interval", call(plan.OpSub, plan.TimestampType, call(plan.OpCast, plan.DateType, s), lit(plan.IntervalType, plan.Value{Months: 3})),
			[]any{"2024-05-31", "2024-01-15"}, []any{"2024-02-29 00:00:00", "2023-10-15 00:00:00"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := evalStrings(t, c.e, c.in...)
			if c.err != nil {
				if err == nil || (c.err != errCastFails && !errors.Is(err, c.err)) {
					t.Fatalf("got %v, %v; want error %v", got, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("got  %v\nwant %v", got, c.want)
			}
		})
	}
}

var errCastFails = errors.New("any cast error")

func TestTimestampFields(t *testing.T) {
	ts, err := plan.ParseTimestamp("2024-03-10 13:14:15.678901") // a Sunday
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]int64{"year": 2024, "month": 3, "day": 10, "hour": 13, "minute": 14, "second": 15,
		"millisecond": 15678, "microsecond": 15678901, "dow": 0, "doy": 70, "quarter": 1} {
		if got, ok := timestampField(field, ts); !ok || got != want {
			t.Errorf("%s: got %d, want %d", field, got, want)
		}
	}
	for field, want := range map[string]string{"hour": "2024-03-10 13:00:00", "day": "2024-03-10 00:00:00", "week": "2024-03-04 00:00:00",
		"month": "2024-03-01 00:00:00", "quarter": "2024-01-01 00:00:00", "year": "2024-01-01 00:00:00", "second": "2024-03-10 13:14:15"} {
		got, ok := truncTimestamp(field, ts)
		if !ok || plan.FormatTimestamp(got) != want {
			t.Errorf("date_trunc(%s): got %s, want %s", field, plan.FormatTimestamp(got), want)
		}
	}
}

// TestWideSum: sums of decimals are 128-bit (narrow inputs included);
// beyond 38 digits they fail with the decimal overflow error, never wrap.
// Group keys, min and max work on wide values, in single and in
// partial+final mode.
func TestWideSum(t *testing.T) {
	max38 := "99999999999999999999999999999999999999"
	s := cref(0, plan.StringType)
	cases := []struct {
		name string
		arg  *plan.Expr
		vals []any
		want string
		err  error
	}{
		{"narrow into wide", call(plan.OpCast, plan.DecimalType(18, 0), s),
			[]any{"999999999999999999", "999999999999999999", "999999999999999999", nil, "-1"}, "[[a 2999999999999999996 -1 999999999999999999]]", nil},
		{"wide", call(plan.OpCast, wide(38, 0), s), []any{max38, "-1", "-" + max38}, "[[a -1 -" + max38 + " " + max38 + "]]", nil},
		{"overflow", call(plan.OpCast, wide(38, 0), s), []any{max38, "1"}, "", plan.ErrDecimalOverflow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := checkedMem(t)
			aggs := []plan.AggCall{
				{Func: plan.AggSum, Arg: c.arg, Type: plan.SumType(c.arg.Type)},
				{Func: plan.AggMin, Arg: call(plan.OpCast, wide(38, 0), s), Type: wide(38, 0)},
				{Func: plan.AggMax, Arg: call(plan.OpCast, wide(38, 0), s), Type: wide(38, 0)},
			}
			schema := plan.Schema{{Name: "k", Type: plan.StringType}, {Name: "sum", Type: plan.SumType(c.arg.Type)}, {Name: "min", Type: wide(38, 0)}, {Name: "max", Type: wide(38, 0)}}
			in := plan.Schema{{Name: "s", Type: plan.StringType}}
			src := newSource(in.Arrow(), mkRec(mem, strs("s", c.vals...)))
			op, err := NewHashAggregate(src, aggNode(plan.AggSingle, schema, []*plan.Expr{litS("a")}, aggs...), Options{Mem: mem})
			if c.err != nil {
				if err == nil {
					var recs []arrow.RecordBatch
					recs, err = Drain(context.Background(), op)
					releaseRecs(recs)
					op.Close()
				}
				if !errors.Is(err, c.err) {
					t.Fatalf("got %v, want %v", err, c.err)
				}
				return
			}
			if got := fmt.Sprint(runOp(t, op, err)); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}
