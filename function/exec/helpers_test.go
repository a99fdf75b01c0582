package exec

import (
	"context"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// checkedMem returns an allocator that fails the test if anything it handed
// out is still allocated at the end.
func checkedMem(t testing.TB) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// col describes a test column: engine type and Go values (nil = NULL).
type col struct {
	name string
	t    plan.DataType
	vals []any
}

func ints(name string, v ...any) col   { return col{name, plan.Int64Type, v} }
func floats(name string, v ...any) col { return col{name, plan.Float64Type, v} }
func strs(name string, v ...any) col   { return col{name, plan.StringType, v} }
func bools(name string, v ...any) col  { return col{name, plan.BoolType, v} }
func dates(name string, v ...any) col  { return col{name, plan.DateType, v} }
func decs(name string, p, s int, v ...any) col {
	return col{name, plan.DecimalType(p, s), v}
}

// buildArray builds an engine array from Go values. Decimals and dates are
// given as strings ("1.25", "1998-09-02") or unscaled int64 / day numbers.
func buildArray(mem memory.Allocator, t plan.DataType, vals []any) arrow.Array {
	switch t.ID {
	case plan.Int64:
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for _, v := range vals {
			if v == nil {
				b.AppendNull()
			} else {
				b.Append(toI64(v))
			}
		}
		return b.NewArray()
	case plan.Float64:
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		for _, v := range vals {
			switch x := v.(type) {
			case nil:
				b.AppendNull()
			case float64:
				b.Append(x)
			default:
				b.Append(float64(toI64(v)))
			}
		}
		return b.NewArray()
	case plan.Decimal:
		b := array.NewDecimal64Builder(mem, t.Arrow().(*arrow.Decimal64Type))
		defer b.Release()
		for _, v := range vals {
			switch x := v.(type) {
			case nil:
				b.AppendNull()
			case string:
				u, ok := parseDecimal([]byte(x), t.Scale)
				if !ok {
					panic("bad decimal " + x)
				}
				b.Append(decimal.Decimal64(u))
			default:
				b.Append(decimal.Decimal64(toI64(v)))
			}
		}
		return b.NewArray()
	case plan.String:
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for _, v := range vals {
			if v == nil {
				b.AppendNull()
			} else {
				b.Append(v.(string))
			}
		}
		return b.NewArray()
	case plan.Bool:
		b := array.NewBooleanBuilder(mem)
		defer b.Release()
		for _, v := range vals {
			if v == nil {
				b.AppendNull()
			} else {
				b.Append(v.(bool))
			}
		}
		return b.NewArray()
	case plan.Date:
		b := array.NewDate32Builder(mem)
		defer b.Release()
		for _, v := range vals {
			switch x := v.(type) {
			case nil:
				b.AppendNull()
			case string:
				d, err := plan.ParseDate(x)
				if err != nil {
					panic(err)
				}
				b.Append(arrow.Date32(d))
			default:
				b.Append(arrow.Date32(toI64(v)))
			}
		}
		return b.NewArray()
	}
	panic("unsupported test type " + t.String())
}

func toI64(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	case int32:
		return int64(x)
	}
	panic(fmt.Sprintf("not an int: %T", v))
}

func schemaOf(cols []col) plan.Schema {
	s := make(plan.Schema, len(cols))
	for i, c := range cols {
		s[i] = plan.Field{Name: c.name, Type: c.t, Nullable: true}
	}
	return s
}

func mkRec(mem memory.Allocator, cols ...col) arrow.RecordBatch {
	arrs := make([]arrow.Array, len(cols))
	n := 0
	for i, c := range cols {
		arrs[i] = buildArray(mem, c.t, c.vals)
		n = len(c.vals)
	}
	rec := array.NewRecordBatch(schemaOf(cols).Arrow(), arrs, int64(n))
	releaseAll(arrs)
	return rec
}

// goVals renders an array as Go values: int64, float64, string, bool, nil;
// decimals as their decimal string, dates as YYYY-MM-DD.
func goVals(a arrow.Array) []any {
	out := make([]any, a.Len())
	for i := range out {
		if a.IsNull(i) {
			continue
		}
		switch x := a.(type) {
		case *array.Int64:
			out[i] = x.Value(i)
		case *array.Float64:
			out[i] = x.Value(i)
			if math.IsNaN(x.Value(i)) {
				out[i] = "NaN" // comparable, unlike NaN
			}
		case *array.String:
			out[i] = x.Value(i)
		case *array.Boolean:
			out[i] = x.Value(i)
		case *array.Date32:
			out[i] = plan.FormatDate(int32(x.Value(i)))
		case *array.Decimal64:
			out[i] = plan.FormatDecimal(int64(x.Value(i)), int(x.DataType().(*arrow.Decimal64Type).Scale))
		case *array.Decimal128:
			out[i] = formatDec128(x.Value(i), int(x.DataType().(*arrow.Decimal128Type).Scale))
		case *array.Timestamp:
			out[i] = plan.FormatTimestamp(int64(x.Value(i)))
		default:
			out[i] = fmt.Sprintf("?%s", a.DataType())
		}
	}
	return out
}

// rows renders record batches as rows of Go values.
func rows(recs []arrow.RecordBatch) [][]any {
	var out [][]any
	for _, r := range recs {
		cols := make([][]any, r.NumCols())
		for c := range cols {
			cols[c] = goVals(r.Column(c))
		}
		for i := 0; i < int(r.NumRows()); i++ {
			row := make([]any, len(cols))
			for c := range cols {
				row[c] = cols[c][i]
			}
			out = append(out, row)
		}
	}
	return out
}

// source is an operator over fixed batches (retained until read).
type source struct {
	schema *arrow.Schema
	recs   []arrow.RecordBatch
	closed bool
}

func newSource(schema *arrow.Schema, recs ...arrow.RecordBatch) *source {
	return &source{schema: schema, recs: recs}
}

func (s *source) Schema() *arrow.Schema { return s.schema }
func (s *source) Next(context.Context) (arrow.RecordBatch, error) {
	if len(s.recs) == 0 {
		return nil, io.EOF
	}
	r := s.recs[0]
	s.recs = s.recs[1:]
	return r, nil
}
func (s *source) Close() error {
	for _, r := range s.recs {
		r.Release()
	}
	s.recs = nil
	s.closed = true
	return nil
}

// drainAll runs op to the end and closes it.
func drainAll(t testing.TB, op Operator) []arrow.RecordBatch {
	t.Helper()
	recs, err := Drain(context.Background(), op)
	if err != nil {
		t.Fatalf("drain: %v", err)
	}
	if err := op.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	return recs
}

func releaseRecs(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// Expression shorthands.
func cref(i int, t plan.DataType) *plan.Expr       { return plan.Column(i, "", t) }
func lit(t plan.DataType, v plan.Value) *plan.Expr { return plan.Literal(v, t) }
func litI(v int64) *plan.Expr                      { return plan.Literal(plan.Value{I: v}, plan.Int64Type) }
func litF(v float64) *plan.Expr                    { return plan.Literal(plan.Value{F: v}, plan.Float64Type) }
func litS(v string) *plan.Expr                     { return plan.Literal(plan.Value{S: v}, plan.StringType) }
func litB(v bool) *plan.Expr                       { return plan.Literal(plan.Value{B: v}, plan.BoolType) }
func litNull(t plan.DataType) *plan.Expr           { return plan.Literal(plan.Value{Null: true}, t) }
func litD(s string, p, sc int) *plan.Expr {
	u, ok := parseDecimal([]byte(s), sc)
	if !ok {
		panic(s)
	}
	return plan.Literal(plan.Value{I: u}, plan.DecimalType(p, sc))
}
func litDate(s string) *plan.Expr {
	d, err := plan.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return plan.Literal(plan.Value{I: int64(d)}, plan.DateType)
}
func call(op plan.Op, t plan.DataType, args ...*plan.Expr) *plan.Expr {
	return plan.Call(op, t, args...)
}
