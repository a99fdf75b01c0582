package planner

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// Typing of the types beyond the original closed set: wide decimals
// (precision 19 to 38), timestamps and constant intervals.
//
//   - A numeric literal with 19 to 38 digits is a wide decimal(p,s).
//   - timestamp meets date: the date is cast to timestamp (midnight), as in
//     DuckDB; a string literal meeting a timestamp is parsed as one.
//   - timestamp ± interval and date ± interval (interval a constant) are
//     timestamps; a constant date ± a days/months interval folds to a date.
//   - date - date is the integer number of days; date ± integer is a date.

// wideLiteral types digits (no sign, with or without a point) of more
// than 18 significant digits as a 128-bit decimal literal.
func wideLiteral(s string, neg bool, intPart, frac string) (*plan.Expr, error) {
	digits := strings.TrimLeft(intPart, "0") + frac
	p := max(len(strings.TrimLeft(intPart, "0"))+len(frac), 1)
	if p > plan.MaxDecimalPrecision {
		return nil, fmt.Errorf("numeric literal out of range: %s has more than %d digits", s, plan.MaxDecimalPrecision)
	}
	n, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return nil, fmt.Errorf("invalid number %q", s)
	}
	if neg {
		n.Neg(n)
	}
	return lit(plan.Dec128Value(decimal128.FromBigInt(n)), plan.DecimalType(p, len(frac))), nil
}

// castTimestampValue folds a cast of a literal to or from a timestamp.
func castTimestampValue(v plan.Value, from, to plan.DataType) (plan.Value, bool, error) {
	switch {
	case from.ID == plan.String && to.ID == plan.Timestamp:
		us, err := plan.ParseTimestamp(v.S)
		if err != nil {
			return v, false, err
		}
		return plan.Value{I: us}, true, nil
	case from.ID == plan.Date && to.ID == plan.Timestamp:
		return plan.Value{I: v.I * plan.MicrosPerDay}, true, nil
	case from.ID == plan.Timestamp && to.ID == plan.String:
		return plan.Value{S: plan.FormatTimestamp(v.I)}, true, nil
	case from.ID == plan.Timestamp && to.ID == plan.Date:
		d := v.I / plan.MicrosPerDay
		if v.I%plan.MicrosPerDay < 0 {
			d--
		}
		return plan.Value{I: d}, true, nil
	}
	return v, false, nil
}

// intervalValue is iv as a literal of the constant interval type.
func intervalValue(iv interval) *plan.Expr {
	return lit(plan.Value{Months: int32(iv.months), Days: int32(iv.days), I: iv.micros}, plan.IntervalType)
}

// shiftByInterval builds d ± iv for a date or timestamp d that is not a
// constant date (sign -1 for minus): a timestamp, computed per row.
func (b *binder) shiftByInterval(d *plan.Expr, iv interval, sign int64, loc int32) (*plan.Expr, error) {
	op := plan.OpAdd
	if sign < 0 {
		op = plan.OpSub
	}
	e := plan.Call(op, plan.TimestampType, d, intervalValue(iv))
	if isLit(d) && d.Type.ID == plan.Timestamp {
		if d.Value.Null {
			return nullOf(plan.TimestampType), nil
		}
		us, ok := shiftMicros(d.Value.I, iv, sign)
		if !ok {
			return nil, b.errorf(CodeValue, loc, "timestamp out of range")
		}
		return lit(plan.Value{I: us}, plan.TimestampType), nil
	}
	return e, nil
}

// shiftMicros adds sign*iv to a timestamp with the executor's interval
// arithmetic (exec.AddInterval: months clamp the day to the month's end,
// then days, then microseconds); ok is false outside years 1..9999.
func shiftMicros(us int64, iv interval, sign int64) (int64, bool) {
	const span = 12 * 10_000
	if iv.months > span || iv.months < -span || iv.days > 4_000_000 || iv.days < -4_000_000 {
		return 0, false
	}
	out := exec.AddInterval(us, int32(sign*iv.months), int32(sign*iv.days), sign*iv.micros)
	day := out / plan.MicrosPerDay
	if out%plan.MicrosPerDay < 0 {
		day--
	}
	if day < int64(minDate) || day > int64(maxDate) {
		return 0, false
	}
	return out, true
}

// timestampArith handles + and - with a timestamp operand and no interval
// (intervals are bound by dateShift): the difference of two timestamps
// would be an interval value, which no column can hold yet.
func (b *binder) timestampArith(op plan.Op, l, r *plan.Expr, loc int32) (*plan.Expr, error) {
	if op == plan.OpSub && (l.Type.ID == plan.Timestamp || l.Type.ID == plan.Date) && (r.Type.ID == plan.Timestamp || r.Type.ID == plan.Date) {
		return nil, b.unsupported(loc, "timestamp - timestamp (interval values); use date_diff or epoch arithmetic")
	}
	return nil, b.errorf(CodeType, loc, "type mismatch: operator %s is not defined for %s and %s", op, l.Type, r.Type)
}

// timestampFields are the EXTRACT / date_part fields of a timestamp.
var timestampFields = map[string]bool{
	"year": true, "month": true, "day": true, "quarter": true, "dow": true, "doy": true,
	"hour": true, "minute": true, "second": true, "millisecond": true, "microsecond": true,
}

// extractTimestamp binds EXTRACT(field FROM ts) (int64, as DuckDB's
// date_part; second is the whole seconds).
func (b *binder) extractTimestamp(field string, arg *plan.Expr, loc int32) (*plan.Expr, error) {
	if !timestampFields[field] {
		return nil, b.unsupported(loc, "EXTRACT("+strings.ToUpper(field)+") of a timestamp")
	}
	e := plan.Call(plan.OpExtract, plan.Int64Type, arg)
	e.Field = field
	return e, nil
}
