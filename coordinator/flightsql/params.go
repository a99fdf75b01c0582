package flightsql

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/sluicedb/sluice/coordinator/sqlliteral"
	"github.com/sluicedb/sluice/planner/plan"
)

// literals renders row i of a parameter record batch as SQL literals, one
// per column: column n is parameter $n (or the nth ?).
func literals(rec arrow.RecordBatch, i int) ([]string, error) {
	out := make([]string, rec.NumCols())
	for c := range out {
		lit, err := literal(rec.Column(c), i, c+1)
		if err != nil {
			return nil, err
		}
		out[c] = lit
	}
	return out, nil
}

// literal is the SQL literal of row i of a, parameter n. A type that has
// no literal is SL005.
func literal(a arrow.Array, i, n int) (string, error) {
	if a.IsNull(i) {
		return sqlliteral.Null, nil
	}
	switch a := a.(type) {
	case *array.Null:
		return sqlliteral.Null, nil
	case *array.Boolean:
		return sqlliteral.Bool(a.Value(i)), nil
	case *array.Int8:
		return sqlliteral.Int(int64(a.Value(i))), nil
	case *array.Int16:
		return sqlliteral.Int(int64(a.Value(i))), nil
	case *array.Int32:
		return sqlliteral.Int(int64(a.Value(i))), nil
	case *array.Int64:
		return sqlliteral.Int(a.Value(i)), nil
	case *array.Uint8:
		return sqlliteral.Uint(uint64(a.Value(i))), nil
	case *array.Uint16:
		return sqlliteral.Uint(uint64(a.Value(i))), nil
	case *array.Uint32:
		return sqlliteral.Uint(uint64(a.Value(i))), nil
	case *array.Uint64:
		return sqlliteral.Uint(a.Value(i)), nil
	case *array.Float16:
		return sqlliteral.Float(float64(a.Value(i).Float32())), nil
	case *array.Float32:
		return sqlliteral.Float(float64(a.Value(i))), nil
	case *array.Float64:
		return sqlliteral.Float(a.Value(i)), nil
	case *array.Decimal32:
		return sqlliteral.Numeric(a.ValueStr(i), n)
	case *array.Decimal64:
		return sqlliteral.Numeric(a.ValueStr(i), n)
	case *array.Decimal128:
		return sqlliteral.Numeric(a.ValueStr(i), n)
	case *array.Decimal256:
		return sqlliteral.Numeric(a.ValueStr(i), n)
	case *array.String:
		return sqlliteral.String(a.Value(i), n)
	case *array.LargeString:
		return sqlliteral.String(a.Value(i), n)
	case *array.StringView:
		return sqlliteral.String(a.Value(i), n)
	case *array.Date32:
		return sqlliteral.Date(a.Value(i).ToTime()), nil
	case *array.Date64:
		return sqlliteral.Date(a.Value(i).ToTime()), nil
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return sqlliteral.Timestamp(a.Value(i).ToTime(unit)), nil
	}
	return "", plan.Errorf(plan.CodeUnsupported, "parameter $%d: Arrow type %s cannot be bound (bind an integer, float, decimal, string, bool, date or timestamp)", n, a.DataType())
}
