package planner

import (
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// Typing rules (DuckDB-like, within the engine's closed type set):
//
//   - integer literals are int64; a literal with a point is decimal(p,s)
//     with s the digits after the point and p all digits (0.06 is
//     decimal(3,2)); with an exponent it is float64.
//   - int64 meets decimal: the int64 side becomes decimal(digits,0) for a
//     literal, decimal(18,0) otherwise. Anything meets float64: float64.
//   - decimal + - %: both sides are cast to the larger scale S; the result
//     is decimal(min(38, max integer digits + S + 1), S).
//   - decimal *: scale s1+s2 (more than 38 is an error), precision
//     p1+p2, but 18 when both operands have at most 18 digits (DuckDB
//     keeps such products 64-bit and checks overflow), else min(38, p1+p2).
//   - /: both sides are cast to float64; the result is float64.
//   - comparisons cast both sides to one type. A literal that converts
//     exactly to the other side's type is converted (so a column is never
//     cast only to meet a literal); a string literal converts to a date,
//     number or bool on the other side.
//   - decimal results wider than 18 digits use the 128-bit layout, up to
//     38 digits (DuckDB's rules): + - give max integer digits + S + 1, *
//     gives p1+p2 with scale s1+s2 (a scale above 38 is an error).
//   - sum(decimal(p,s)) is decimal(38,s), avg is float64, count int64.
//   - see types_wide.go for timestamps and intervals.

// Expression shapes.
func isLit(e *plan.Expr) bool     { return e.Op == plan.OpLiteral }
func isNullLit(e *plan.Expr) bool { return e.Op == plan.OpLiteral && e.Value.Null }
func isStringLit(e *plan.Expr) bool {
	return e.Op == plan.OpLiteral && !e.Value.Null && e.Type.ID == plan.String
}

func lit(v plan.Value, t plan.DataType) *plan.Expr { return plan.Literal(v, t) }
func nullOf(t plan.DataType) *plan.Expr            { return plan.Literal(plan.Value{Null: true}, t) }
func boolLit(v bool) *plan.Expr                    { return plan.Literal(plan.Value{B: v}, plan.BoolType) }
func intLit(v int64) *plan.Expr                    { return plan.Literal(plan.Value{I: v}, plan.Int64Type) }

// exprKey is a canonical text of e, equal for structurally equal
// expressions (used to match GROUP BY keys and deduplicate aggregates).
func exprKey(e *plan.Expr) string { return e.Key() }

// digits returns the number of decimal digits of |v| (1 for 0).
func digits(v int64) int {
	n := 1
	for v >= 10 || v <= -10 {
		v /= 10
		n++
	}
	return n
}

// asDecimal returns the decimal type an int64 or decimal expression is
// treated as when it meets a decimal.
func asDecimal(e *plan.Expr) plan.DataType {
	switch e.Type.ID {
	case plan.Decimal:
		return e.Type
	case plan.Int64:
		if isLit(e) && !e.Value.Null {
			return plan.DecimalType(digits(e.Value.I), 0)
		}
		return plan.DecimalType(plan.MaxDecimal64Precision, 0)
	}
	return plan.DecimalType(plan.MaxDecimal64Precision, 0)
}

// numericSuper returns the type two numeric expressions are compared or
// combined in: float64 if either is float64, int64 if both are, else the
// decimal that holds both.
func numericSuper(a, b *plan.Expr) plan.DataType {
	if a.Type.ID == plan.Float64 || b.Type.ID == plan.Float64 {
		return plan.Float64Type
	}
	if a.Type.ID == plan.Int64 && b.Type.ID == plan.Int64 {
		return plan.Int64Type
	}
	da, db := asDecimal(a), asDecimal(b)
	s := max(da.Scale, db.Scale)
	return plan.DecimalType(max(da.Precision-da.Scale, db.Precision-db.Scale)+s, s)
}

// combinedNumeric is the type a result column holding values of a and b
// takes (CASE, COALESCE, greatest, UNION, VALUES). It is numericSuper,
// except where the decimal that holds both needs more than 38 digits:
// then, as DuckDB does, the integer digits are kept and the scale is cut
// (decimal(38,4) with decimal(38,2) is decimal(38,2)), so no value of
// either side overflows; fractional digits past the scale are rounded.
// Comparisons keep numericSuper's exact scale instead.
func combinedNumeric(a, b *plan.Expr) plan.DataType {
	t := numericSuper(a, b)
	if t.ID != plan.Decimal {
		return t
	}
	da, db := asDecimal(a), asDecimal(b)
	whole := max(da.Precision-da.Scale, db.Precision-db.Scale)
	if whole+t.Scale > plan.MaxDecimalPrecision {
		return plan.DecimalType(plan.MaxDecimalPrecision, plan.MaxDecimalPrecision-whole)
	}
	return t
}

// supertype returns the type both a and b can be cast to without losing
// their meaning, for CASE branches. ok is false when there is none.
func supertype(a, b *plan.Expr) (plan.DataType, bool) {
	switch {
	case a.Type == b.Type:
		return a.Type, true
	case a.Type.ID == plan.Null:
		return b.Type, true
	case b.Type.ID == plan.Null:
		return a.Type, true
	case a.Type.IsNumeric() && b.Type.IsNumeric():
		return combinedNumeric(a, b), true
	case a.Type.ID == plan.Date && b.Type.ID == plan.Timestamp, a.Type.ID == plan.Timestamp && b.Type.ID == plan.Date:
		return plan.TimestampType, true
	case isStringLit(a) && b.Type.ID != plan.Bool:
		return b.Type, true
	case isStringLit(b) && a.Type.ID != plan.Bool:
		return a.Type, true
	case a.Type.ID == b.Type.ID && a.Type.IsNested():
		return nestedSupertype(a.Type, b.Type)
	}
	return plan.DataType{}, false
}

// nestedSupertype unifies two nested types of one kind part by part, as
// DuckDB does: a NULL part (the element of [], a field of {'y': NULL})
// takes the other side's type, and numeric parts widen ([[1], []] is
// BIGINT[][]; {'y': NULL} beside {'y': 5} is STRUCT(y BIGINT)). Structs
// unify only with the same field names in the same order.
func nestedSupertype(a, b plan.DataType) (plan.DataType, bool) {
	part := func(x, y plan.DataType) (plan.DataType, bool) {
		return supertype(&plan.Expr{Type: x}, &plan.Expr{Type: y})
	}
	switch a.ID {
	case plan.List:
		e, ok := part(a.Elem(), b.Elem())
		return plan.ListOf(e), ok
	case plan.Map:
		k, ok := part(a.Key(), b.Key())
		if !ok {
			return plan.DataType{}, false
		}
		v, ok := part(a.Value(), b.Value())
		return plan.MapOf(k, v), ok
	case plan.Struct:
		fa, fb := a.Children(), b.Children()
		if len(fa) != len(fb) {
			return plan.DataType{}, false
		}
		fields := make([]plan.Field, len(fa))
		for i := range fa {
			if !strings.EqualFold(fa[i].Name, fb[i].Name) {
				return plan.DataType{}, false
			}
			t, ok := part(fa[i].Type, fb[i].Type)
			if !ok {
				return plan.DataType{}, false
			}
			fields[i] = plan.Field{Name: fa[i].Name, Type: t, Nullable: fa[i].Nullable || fb[i].Nullable || fa[i].Type != t || fb[i].Type != t}
		}
		return plan.StructOf(fields), true
	}
	return plan.DataType{}, false
}

// castAllowed reports whether the engine can cast from one type to another.
func castAllowed(from, to plan.DataType) bool {
	switch {
	case from == to, from.ID == plan.Null, to.ID == plan.String:
		return true
	case from.ID == plan.String:
		return to.ID != plan.Map || !to.Key().IsNested()
	case from.IsNested() || to.IsNested():
		return nestedCastAllowed(from, to)
	case from.IsNumeric() && to.IsNumeric():
		return true
	case from.ID == plan.Bool && to.ID == plan.Int64, from.ID == plan.Int64 && to.ID == plan.Bool:
		return true
	case from.ID == plan.Bool && to.IsNumeric(), from.IsNumeric() && to.ID == plan.Bool:
		return true
	case from.ID == plan.Date && to.ID == plan.Timestamp, from.ID == plan.Timestamp && to.ID == plan.Date:
		return true
	}
	return false
}

// cast returns e converted to t, folding literals. A literal that cannot be
// converted is an SL008 error at loc.
func (b *binder) cast(e *plan.Expr, t plan.DataType, loc int32) (*plan.Expr, error) {
	b.noteParam(e, t)
	if e.Type == t {
		return e, nil
	}
	if !castAllowed(e.Type, t) {
		return nil, b.errorf(CodeType, loc, "type mismatch: cannot cast %s to %s", e.Type, t)
	}
	if isLit(e) {
		v, folded, err := castValue(*e.Value, e.Type, t)
		if err != nil {
			return nil, b.errorf(CodeValue, loc, "%v", err)
		}
		if folded {
			return lit(v, t), nil
		}
	}
	return plan.Call(plan.OpCast, t, e), nil
}

// exactLiteral converts literal e to t when that loses nothing; ok false
// otherwise (including when e is not a literal).
func exactLiteral(e *plan.Expr, t plan.DataType) (*plan.Expr, bool) {
	if !isLit(e) {
		return nil, false
	}
	if e.Value.Null {
		return nullOf(t), true
	}
	from := e.Type
	switch {
	case from.ID == plan.Int64 && t.ID == plan.Decimal,
		from.ID == plan.Decimal && t.ID == plan.Decimal,
		from.ID == plan.Decimal && t.ID == plan.Int64:
	case from.ID == plan.String && (t.ID == plan.Date || t.ID == plan.Bool):
	default:
		return nil, false
	}
	v, folded, err := castValue(*e.Value, from, t)
	if err != nil || !folded {
		return nil, false
	}
	back, folded, err := castValue(v, t, from)
	if from.ID != plan.String && (err != nil || !folded || back != *e.Value) {
		return nil, false
	}
	return lit(v, t), true
}

// stringLitAs turns a string literal that meets a value of type t into a
// literal of t's family: a date or bool, or the natural numeric literal the
// text spells (then unified as numbers). ok false if t is no such type.
func (b *binder) stringLitAs(e *plan.Expr, t plan.DataType, loc int32) (*plan.Expr, bool, error) {
	switch {
	case t.ID == plan.Date || t.ID == plan.Bool || t.ID == plan.Timestamp:
		v, _, err := castValue(*e.Value, plan.StringType, t)
		if err != nil {
			return nil, false, b.errorf(CodeValue, loc, "%v", err)
		}
		return lit(v, t), true, nil
	case t.IsNumeric():
		n, err := parseNumber(strings.TrimSpace(e.Value.S))
		if err != nil {
			return nil, false, b.errorf(CodeType, loc, "type mismatch: cannot compare %s and string %s", t, e.Value.Format(e.Type))
		}
		return n, true, nil
	}
	return nil, false, nil
}

// unifyCompare casts the operands of a comparison to one type.
func (b *binder) unifyCompare(l, r *plan.Expr, loc int32) (*plan.Expr, *plan.Expr, error) {
	if l.Type == r.Type {
		return l, r, nil
	}
	if l.Type.ID == plan.Null {
		b.noteParam(l, r.Type)
		return nullOf(r.Type), r, nil
	}
	if r.Type.ID == plan.Null {
		b.noteParam(r, l.Type)
		return l, nullOf(l.Type), nil
	}
	if isStringLit(l) && r.Type.ID != plan.String {
		nl, ok, err := b.stringLitAs(l, r.Type, loc)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			return b.unifyCompare(nl, r, loc)
		}
	}
	if isStringLit(r) && l.Type.ID != plan.String {
		nr, ok, err := b.stringLitAs(r, l.Type, loc)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			return b.unifyCompare(l, nr, loc)
		}
	}
	if (l.Type.ID == plan.Date && r.Type.ID == plan.Timestamp) || (l.Type.ID == plan.Timestamp && r.Type.ID == plan.Date) {
		nl, err := b.cast(l, plan.TimestampType, loc)
		if err != nil {
			return nil, nil, err
		}
		nr, err := b.cast(r, plan.TimestampType, loc)
		if err != nil {
			return nil, nil, err
		}
		return nl, nr, nil
	}
	if nl, ok := exactLiteral(l, r.Type); ok {
		return nl, r, nil
	}
	if nr, ok := exactLiteral(r, l.Type); ok {
		return l, nr, nil
	}
	if nl, nr, ok, err := b.unifyUnnamed(l, r, loc); ok || err != nil {
		return nl, nr, err
	}
	if l.Type.IsNumeric() && r.Type.IsNumeric() {
		t := numericSuper(l, r)
		nl, err := b.cast(l, t, loc)
		if err != nil {
			return nil, nil, err
		}
		nr, err := b.cast(r, t, loc)
		if err != nil {
			return nil, nil, err
		}
		return nl, nr, nil
	}
	return nil, nil, b.errorf(CodeType, loc, "type mismatch: cannot compare %s and %s", l.Type, r.Type)
}

// compare builds a comparison, coercing its operands, folded if constant.
func (b *binder) compare(op plan.Op, l, r *plan.Expr, loc int32) (*plan.Expr, error) {
	l, r, err := b.unifyCompare(l, r, loc)
	if err != nil {
		return nil, err
	}
	if isNullLit(l) || isNullLit(r) { // x = NULL is NULL
		return nullOf(plan.BoolType), nil
	}
	return fold(plan.Call(op, plan.BoolType, l, r)), nil
}

// alignScale casts an int64 or decimal expression to a decimal of scale s.
func (b *binder) alignScale(e *plan.Expr, s int, loc int32) (*plan.Expr, error) {
	d := asDecimal(e)
	if e.Type.ID == plan.Decimal && d.Scale == s {
		return e, nil
	}
	return b.cast(e, plan.DecimalType(d.Precision-d.Scale+s, s), loc)
}

// arith builds l op r for + - * / %, coercing operands, folded if constant.
func (b *binder) arith(op plan.Op, l, r *plan.Expr, loc int32) (out *plan.Expr, err error) {
	if l.Type.ID == plan.Null && r.Type.IsNumeric() {
		b.noteParam(l, r.Type)
		l = nullOf(r.Type)
	}
	if r.Type.ID == plan.Null && l.Type.IsNumeric() {
		b.noteParam(r, l.Type)
		r = nullOf(l.Type)
	}
	if l.Type.ID == plan.Null && r.Type.ID == plan.Null {
		l, r = nullOf(plan.Int64Type), nullOf(plan.Int64Type)
	}
	if !l.Type.IsNumeric() || !r.Type.IsNumeric() {
		return nil, b.errorf(CodeType, loc, "type mismatch: operator %s is not defined for %s and %s", op, l.Type, r.Type)
	}
	castBoth := func(t plan.DataType) {
		if l, err = b.cast(l, t, loc); err == nil {
			r, err = b.cast(r, t, loc)
		}
	}
	nullOperand := isNullLit(l) || isNullLit(r)
	defer func() {
		// x op NULL is NULL: fold to a NULL of the result type.
		if nullOperand && out != nil && err == nil {
			out = nullOf(out.Type)
		}
	}()
	if op == plan.OpDiv {
		castBoth(plan.Float64Type)
		if err != nil {
			return nil, err
		}
		return fold(plan.Call(op, plan.Float64Type, l, r)), nil
	}
	t := numericSuper(l, r)
	if t.ID != plan.Decimal {
		castBoth(t)
		if err != nil {
			return nil, err
		}
		return fold(plan.Call(op, t, l, r)), nil
	}
	dl, dr := asDecimal(l), asDecimal(r)
	switch op {
	case plan.OpMul:
		if l, err = b.cast(l, dl, loc); err != nil {
			return nil, err
		}
		if r, err = b.cast(r, dr, loc); err != nil {
			return nil, err
		}
		s := dl.Scale + dr.Scale
		if s > plan.MaxDecimalPrecision {
			return nil, b.errorf(CodeValue, loc, "decimal out of range: %s * %s needs scale %d, more than %d", dl, dr, s, plan.MaxDecimalPrecision)
		}
		p := dl.Precision + dr.Precision
		if p > plan.MaxDecimal64Precision && !dl.Wide() && !dr.Wide() && s <= plan.MaxDecimal64Precision {
			// DuckDB: a product of two 64-bit decimals stays 64-bit
			// (decimal(18,s1+s2)), checked for overflow at run time.
			p = plan.MaxDecimal64Precision
		}
		return fold(plan.Call(op, plan.DecimalType(p, s), l, r)), nil
	default: // + - %
		s := max(dl.Scale, dr.Scale)
		if l, err = b.alignScale(l, s, loc); err != nil {
			return nil, err
		}
		if r, err = b.alignScale(r, s, loc); err != nil {
			return nil, err
		}
		ints := max(l.Type.Precision-s, r.Type.Precision-s)
		p := ints + s + 1
		if op == plan.OpMod {
			p = ints + s
		}
		return fold(plan.Call(op, plan.DecimalType(p, s), l, r)), nil
	}
}
