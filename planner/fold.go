package planner

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// Constant folding: an operator whose arguments are all literals is
// evaluated at plan time when the result is certain to equal what the
// runtime would compute. Anything doubtful (overflow, division by zero,
// float-to-integer rounding) is left for the runtime, which raises or
// yields what DuckDB does.

// fold returns e evaluated to a literal if possible, else e (AND/OR with a
// constant side are also simplified).
func fold(e *plan.Expr) *plan.Expr {
	switch e.Op {
	case plan.OpAnd, plan.OpOr:
		return foldLogic(e)
	case plan.OpColumn, plan.OpLiteral:
		return e
	}
	if e.Type.IsNested() {
		return e // a nested value has no literal: list_value(1, 2) stays a call
	}
	for _, a := range e.Args {
		if !isLit(a) {
			return e
		}
	}
	if v, ok := evalConst(e); ok {
		return lit(v, e.Type)
	}
	return e
}

// negations of comparison operators: NOT (a < b) is a >= b, also under
// three-valued logic (both are NULL when an operand is).
var negations = map[plan.Op]plan.Op{
	plan.OpEq: plan.OpNe, plan.OpNe: plan.OpEq, plan.OpLt: plan.OpGe, plan.OpGe: plan.OpLt,
	plan.OpGt: plan.OpLe, plan.OpLe: plan.OpGt, plan.OpIsNull: plan.OpIsNotNull, plan.OpIsNotNull: plan.OpIsNull,
}

// not returns NOT e, pushed into e where that gives a simpler predicate
// (so NOT (x = 1) can prune row groups as x <> 1).
func not(e *plan.Expr) *plan.Expr {
	if op, ok := negations[e.Op]; ok {
		return plan.Call(op, plan.BoolType, e.Args...)
	}
	switch e.Op {
	case plan.OpNot:
		return e.Args[0]
	case plan.OpLike, plan.OpIn:
		c := *e
		c.Negated = !e.Negated
		return &c
	}
	return fold(plan.Call(plan.OpNot, plan.BoolType, e))
}

// foldLogic simplifies AND/OR with a literal operand, by SQL's three-valued
// logic: false AND x = false, true AND x = x, true OR x = true, false OR x = x.
func foldLogic(e *plan.Expr) *plan.Expr {
	l, r := e.Args[0], e.Args[1]
	isTrue := func(x *plan.Expr) bool { return isLit(x) && !x.Value.Null && x.Value.B }
	isFalse := func(x *plan.Expr) bool { return isLit(x) && !x.Value.Null && !x.Value.B }
	if e.Op == plan.OpAnd {
		switch {
		case isFalse(l) || isFalse(r):
			return boolLit(false)
		case isTrue(l):
			return r
		case isTrue(r):
			return l
		case isNullLit(l) && isNullLit(r):
			return nullOf(plan.BoolType)
		}
		return e
	}
	switch {
	case isTrue(l) || isTrue(r):
		return boolLit(true)
	case isFalse(l):
		return r
	case isFalse(r):
		return l
	case isNullLit(l) && isNullLit(r):
		return nullOf(plan.BoolType)
	}
	return e
}

// evalConst evaluates an operator over literal arguments.
func evalConst(e *plan.Expr) (plan.Value, bool) {
	null := plan.Value{Null: true}
	args := make([]plan.Value, len(e.Args))
	anyNull := false
	for i, a := range e.Args {
		args[i] = *a.Value
		anyNull = anyNull || a.Value.Null
		if a.Value.H != 0 && e.Op != plan.OpIsNull && e.Op != plan.OpIsNotNull {
			return null, false // a literal beyond int64: left to the runtime
		}
	}
	switch e.Op {
	case plan.OpIsNull:
		return plan.Value{B: args[0].Null}, true
	case plan.OpIsNotNull:
		return plan.Value{B: !args[0].Null}, true
	case plan.OpCast:
		v, ok, err := castValue(args[0], e.Args[0].Type, e.Type)
		return v, ok && err == nil
	}
	if anyNull {
		switch e.Op {
		case plan.OpNeg, plan.OpNot, plan.OpAdd, plan.OpSub, plan.OpMul, plan.OpDiv, plan.OpMod,
			plan.OpEq, plan.OpNe, plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe, plan.OpExtract:
			return null, true
		}
		return null, false
	}
	switch e.Op {
	case plan.OpNot, plan.OpNeg, plan.OpEq, plan.OpNe, plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe,
		plan.OpAdd, plan.OpSub, plan.OpMul, plan.OpDiv, plan.OpMod, plan.OpExtract:
		return evalKernel(e)
	}
	return null, false
}

// evalKernel evaluates e, an operator over literals, with the executor's
// own kernels on a one-row batch (as DuckDB folds constants with its
// executor), so a folded constant is what the runtime would compute: the
// planner and the functions cannot disagree. ok is false when the
// executor fails (an overflow, say: left for the runtime to raise) or the
// result is not a literal the plan holds as it is.
func evalKernel(e *plan.Expr) (plan.Value, bool) {
	rec := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	defer rec.Release()
	arr, err := exec.Eval(e, rec, nil)
	if err != nil {
		return plan.Value{}, false
	}
	defer arr.Release()
	if arr.Len() != 1 {
		return plan.Value{}, false
	}
	if arr.IsNull(0) {
		return plan.Value{Null: true}, true
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return plan.Value{B: a.Value(0)}, e.Type.ID == plan.Bool
	case *array.Int64:
		return plan.Value{I: a.Value(0)}, e.Type.ID == plan.Int64
	case *array.Float64:
		return plan.Value{F: a.Value(0)}, e.Type.ID == plan.Float64
	case *array.Decimal64:
		return plan.Value{I: int64(a.Value(0))}, e.Type.ID == plan.Decimal
	case *array.Date32:
		return plan.Value{I: int64(a.Value(0))}, e.Type.ID == plan.Date
	case *array.String:
		return plan.Value{S: a.Value(0)}, e.Type.ID == plan.String
	}
	return plan.Value{}, false // wide decimals, timestamps, intervals: as they are
}

func mulChecked(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	r := a * b
	if r/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return r, true
}

// fitsPrecision reports whether an unscaled decimal has at most p digits
// (an int64 always fits 19 digits or more).
func fitsPrecision(v int64, p int) bool {
	if p >= 19 {
		return true
	}
	return v < plan.Pow10[p] && v > -plan.Pow10[p]
}

// rescale changes the scale of an unscaled decimal, rounding half away from
// zero when digits are dropped. ok is false on overflow.
func rescale(v int64, from, to int) (int64, bool) {
	switch {
	case to == from:
		return v, true
	case to > from:
		if to-from > plan.MaxDecimal64Precision {
			return 0, v == 0
		}
		return mulChecked(v, plan.Pow10[to-from])
	default:
		if from-to > plan.MaxDecimal64Precision {
			return 0, true
		}
		d := plan.Pow10[from-to]
		q, r := v/d, v%d
		if 2*r >= d {
			q++
		} else if -2*r >= d {
			q--
		}
		return q, true
	}
}

// castValue converts a non-folded literal value between types. folded is
// false when the conversion is left to the runtime; err reports a value
// that cannot be converted at all.
func castValue(v plan.Value, from, to plan.DataType) (out plan.Value, folded bool, err error) {
	if v.Null {
		return plan.Value{Null: true}, true, nil
	}
	if from == to {
		return v, true, nil
	}
	if v.H != 0 {
		return v, false, nil // a literal beyond int64: converted by the runtime
	}
	if from.ID == plan.Timestamp || to.ID == plan.Timestamp {
		return castTimestampValue(v, from, to)
	}
	switch from.ID {
	case plan.Int64:
		switch to.ID {
		case plan.Decimal:
			r, ok := rescale(v.I, 0, to.Scale)
			if !ok && to.Wide() {
				return v, false, nil // fits 128 bits only: converted by the runtime
			}
			if !ok || !fitsPrecision(r, to.Precision) {
				return v, false, fmt.Errorf("value out of range: %d does not fit in %s", v.I, to)
			}
			return plan.Value{I: r}, true, nil
		case plan.Float64:
			return plan.Value{F: float64(v.I)}, true, nil
		case plan.String:
			return plan.Value{S: strconv.FormatInt(v.I, 10)}, true, nil
		case plan.Bool:
			return plan.Value{B: v.I != 0}, true, nil
		}
	case plan.Decimal:
		switch to.ID {
		case plan.Decimal:
			r, ok := rescale(v.I, from.Scale, to.Scale)
			if !ok && to.Wide() {
				return v, false, nil
			}
			if !ok || !fitsPrecision(r, to.Precision) {
				return v, false, fmt.Errorf("value out of range: %s does not fit in %s", plan.FormatDecimal(v.I, from.Scale), to)
			}
			return plan.Value{I: r}, true, nil
		case plan.Int64:
			r, _ := rescale(v.I, from.Scale, 0)
			return plan.Value{I: r}, true, nil
		case plan.Float64:
			f, _ := strconv.ParseFloat(plan.FormatDecimal(v.I, from.Scale), 64)
			return plan.Value{F: f}, true, nil
		case plan.String:
			return plan.Value{S: plan.FormatDecimal(v.I, from.Scale)}, true, nil
		}
	case plan.Date:
		if to.ID == plan.String {
			return plan.Value{S: plan.FormatDate(int32(v.I))}, true, nil
		}
	case plan.Bool:
		switch to.ID {
		case plan.String:
			return plan.Value{S: strconv.FormatBool(v.B)}, true, nil
		case plan.Int64:
			if v.B {
				return plan.Value{I: 1}, true, nil
			}
			return plan.Value{I: 0}, true, nil
		}
	case plan.String:
		s := strings.TrimSpace(v.S)
		switch to.ID {
		case plan.Date:
			d, err := parseDate(s)
			if err != nil {
				return v, false, err
			}
			return plan.Value{I: int64(d)}, true, nil
		case plan.Bool:
			switch strings.ToLower(s) {
			case "true", "t", "yes", "y", "1", "on":
				return plan.Value{B: true}, true, nil
			case "false", "f", "no", "n", "0", "off":
				return plan.Value{B: false}, true, nil
			}
			return v, false, fmt.Errorf("invalid input for bool: %q", v.S)
		case plan.Int64, plan.Decimal, plan.Float64:
			n, err := parseNumber(s)
			if err != nil {
				return v, false, fmt.Errorf("invalid input for %s: %q", to, v.S)
			}
			if n.Type.ID == plan.Float64 && to.ID != plan.Float64 {
				return v, false, nil // leave float-to-exact rounding to the runtime
			}
			return castValue(*n.Value, n.Type, to)
		}
	}
	return v, false, nil
}

// parseDate parses a date literal, strictly YYYY-MM-DD.
func parseDate(s string) (int32, error) {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return 0, fmt.Errorf("invalid date: %q", s)
	}
	return daysOf(t), nil
}

// daysOf returns the days since the epoch of t's date. (plan.DaysOf goes
// through time.Duration, which only spans the years 1678 to 2261.)
func daysOf(t time.Time) int32 {
	secs := t.Unix()
	days := secs / 86400
	if secs%86400 < 0 {
		days--
	}
	return int32(days)
}

// parseNumber types a numeric literal: integer text is int64; text with a
// point is decimal(p,s), s the digits after the point and p all digits
// (DuckDB's rule); text with an exponent is float64.
func parseNumber(s string) (*plan.Expr, error) {
	body, neg := s, false
	if body != "" && (body[0] == '-' || body[0] == '+') {
		body, neg = body[1:], body[0] == '-'
	}
	if body == "" || body[0] == '-' || body[0] == '+' {
		return nil, fmt.Errorf("invalid number %q", s)
	}
	if strings.ContainsAny(body, "eE") || strings.EqualFold(body, "inf") || strings.EqualFold(body, "infinity") || strings.EqualFold(body, "nan") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid number %q", s)
		}
		return lit(plan.Value{F: f}, plan.Float64Type), nil
	}
	intPart, frac, hasPoint := strings.Cut(body, ".")
	for _, part := range []string{intPart, frac} {
		for _, c := range part {
			if c < '0' || c > '9' {
				return nil, fmt.Errorf("invalid number %q", s)
			}
		}
	}
	if intPart == "" && frac == "" {
		return nil, fmt.Errorf("invalid number %q", s)
	}
	if !hasPoint {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return wideLiteral(s, neg, intPart, "") // a wide decimal(p,0), as DuckDB's HUGEINT
		}
		return intLit(n), nil
	}
	trimmed := strings.TrimLeft(intPart, "0")
	p := len(intPart) + len(frac)
	if p > plan.MaxDecimal64Precision {
		p = max(len(trimmed)+len(frac), 1)
	}
	if p > plan.MaxDecimal64Precision {
		return wideLiteral(s, neg, intPart, frac)
	}
	var u int64
	if trimmed+frac != "" {
		var err error
		if u, err = strconv.ParseInt(trimmed+frac, 10, 64); err != nil {
			return nil, fmt.Errorf("invalid number %q", s)
		}
	}
	if neg {
		u = -u
	}
	return lit(plan.Value{I: u}, plan.DecimalType(p, len(frac))), nil
}

// interval is a constant INTERVAL: months, days and microseconds.
type interval struct {
	months int64
	days   int64
	micros int64
}

// The dates a literal may have: years 1 to 9999, as YYYY-MM-DD can spell.
var (
	minDate = daysOf(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC))
	maxDate = daysOf(time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC))
)

// addInterval adds iv (months and days) to a date the way the executor
// adds an interval to a timestamp (exec.AddInterval, the one interval
// arithmetic): months first, clamping the day to the end of the month
// (2020-01-31 + 1 month = 2020-02-29), then days. ok is false outside
// the dates a literal may have.
func addInterval(day int32, iv interval) (int32, bool) {
	const span = 12 * 10_000 // more months (or days) than years 1..9999 hold in months
	if iv.months > span || iv.months < -span || iv.days > 4_000_000 || iv.days < -4_000_000 {
		return 0, false
	}
	us := exec.AddInterval(int64(day)*plan.MicrosPerDay, int32(iv.months), int32(iv.days), 0)
	out := us / plan.MicrosPerDay
	if out < int64(minDate) || out > int64(maxDate) {
		return 0, false
	}
	return int32(out), true
}

// Postgres interval range masks (typmod of INTERVAL '..' <field>).
const (
	intervalMonth  = 1 << 1
	intervalYear   = 1 << 2
	intervalDay    = 1 << 3
	intervalAll    = 0x7FFF
	intervalNoMask = -1
)

// maxIntervalUnits bounds each number of an interval literal, so that no
// arithmetic on it overflows (dates only span years 1 to 9999 anyway).
const maxIntervalUnits = 10_000_000

// errIntervalTime reports an interval with a field range (INTERVAL '1-2'
// YEAR TO MONTH), which the engine does not support.
var errIntervalTime = errors.New("INTERVAL with field ranges")

// Postgres interval masks of the time fields.
const (
	intervalHour   = 1 << 10
	intervalMinute = 1 << 11
	intervalSecond = 1 << 12
)

// parseInterval parses an interval literal's text: a bare number in the
// unit of field (a single YEAR, MONTH or DAY qualifier), or "<n> <unit>"
// pairs with units year, month, week, day (and their plurals).
func parseInterval(text string, mask int) (interval, error) {
	var iv interval
	fields := strings.Fields(strings.ToLower(text))
	if len(fields) == 1 {
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err == nil && (n > maxIntervalUnits || n < -maxIntervalUnits) {
			return iv, fmt.Errorf("interval out of range: %q", text)
		}
		if err == nil {
			switch mask {
			case intervalYear:
				iv.months = n * 12
			case intervalMonth:
				iv.months = n
			case intervalDay:
				iv.days = n
			case intervalHour:
				iv.micros = n * 3600 * plan.MicrosPerSecond
			case intervalMinute:
				iv.micros = n * 60 * plan.MicrosPerSecond
			case intervalSecond:
				iv.micros = n * plan.MicrosPerSecond
			case intervalNoMask, intervalAll:
				return iv, fmt.Errorf("invalid interval %q: a number needs a unit (YEAR, MONTH or DAY)", text)
			default:
				return iv, errIntervalTime
			}
			return iv, nil
		}
	}
	if len(fields) == 0 || len(fields)%2 != 0 {
		return iv, fmt.Errorf("invalid interval %q", text)
	}
	for i := 0; i < len(fields); i += 2 {
		n, err := strconv.ParseInt(fields[i], 10, 64)
		if err != nil || n > maxIntervalUnits || n < -maxIntervalUnits {
			return iv, fmt.Errorf("invalid interval %q", text)
		}
		switch strings.TrimSuffix(fields[i+1], "s") {
		case "year", "yr", "y":
			iv.months += n * 12
		case "mon", "month":
			iv.months += n
		case "week", "w":
			iv.days += 7 * n
		case "day", "d":
			iv.days += n
		case "hour", "hr", "h":
			iv.micros += n * 3600 * plan.MicrosPerSecond
		case "minute", "min", "m":
			iv.micros += n * 60 * plan.MicrosPerSecond
		case "second", "sec":
			iv.micros += n * plan.MicrosPerSecond
		case "millisecond", "ms":
			iv.micros += n * 1000
		case "microsecond", "us":
			iv.micros += n
		default:
			return iv, fmt.Errorf("invalid interval %q", text)
		}
	}
	return iv, nil
}
