package exec

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// maxDecimal is the largest unscaled value of an 18-digit decimal.
const maxDecimal = 999_999_999_999_999_999

// converted returns v as type t as a new reference the caller releases
// (v itself stays owned by its holder).
func (ev *evaluator) converted(v vec, t plan.DataType) (vec, error) {
	if v.arr != nil {
		v.arr.Retain()
	}
	return ev.castVec(v, t)
}

// int64View gives the int64 values of an operand: the array's values or a
// scratch slice filled with the literal.
func (ev *evaluator) int64View(v vec) []int64 {
	if v.arr != nil {
		return values[int64](v.arr)
	}
	s := make([]int64, ev.n)
	for i := range s {
		s[i] = v.lit.I
	}
	return s
}

func (ev *evaluator) float64View(v vec) []float64 {
	if v.arr != nil {
		return values[float64](v.arr)
	}
	s := make([]float64, ev.n)
	for i := range s {
		s[i] = v.lit.F
	}
	return s
}

func arrOf(v vec) arrow.Array { return v.arr }

func (ev *evaluator) arith(e *plan.Expr, a, b vec) (arrow.Array, error) {
	rt := e.Type
	switch {
	case e.Op == plan.OpDiv || rt.ID == plan.Float64:
		fa, err := ev.converted(a, plan.Float64Type)
		if err != nil {
			return nil, err
		}
		defer fa.release()
		fb, err := ev.converted(b, plan.Float64Type)
		if err != nil {
			return nil, err
		}
		defer fb.release()
		out, err := ev.floatArith(e.Op, fa, fb)
		if err != nil || rt.ID == plan.Float64 || rt.ID == plan.Null {
			return out, err
		}
		defer out.Release()
		return castArray(ev.mem, out, rt)
	case rt.Wide():
		return ev.wideArith(e, a, b)
	case a.t.ID == plan.Timestamp || b.t.ID == plan.Timestamp || rt.ID == plan.Timestamp:
		return ev.timestampArith(e.Op, a, b, rt)
	case rt.ID == plan.Date || (a.t.ID == plan.Date && b.t.ID == plan.Date):
		return ev.dateArith(e.Op, a, b, rt)
	case rt.ID == plan.Int64:
		ia, err := ev.converted(a, plan.Int64Type)
		if err != nil {
			return nil, err
		}
		defer ia.release()
		ib, err := ev.converted(b, plan.Int64Type)
		if err != nil {
			return nil, err
		}
		defer ib.release()
		return ev.intArith(e.Op, ia, ib, rt, false)
	case rt.ID == plan.Decimal:
		sa, sb := decScale(a.t), decScale(b.t)
		var ta, tb plan.DataType
		scale := 0
		if e.Op == plan.OpMul {
			ta, tb = plan.DecimalType(18, sa), plan.DecimalType(18, sb)
			scale = sa + sb
		} else {
			scale = max(sa, sb)
			ta, tb = plan.DecimalType(18, scale), plan.DecimalType(18, scale)
		}
		if scale > plan.MaxDecimalPrecision {
			return nil, fmt.Errorf("%w: result scale %d exceeds %d", plan.ErrDecimalOverflow, scale, plan.MaxDecimalPrecision)
		}
		da, err := ev.converted(a, ta)
		if err != nil {
			return nil, err
		}
		defer da.release()
		db, err := ev.converted(b, tb)
		if err != nil {
			return nil, err
		}
		defer db.release()
		out, err := ev.intArith(e.Op, da, db, plan.DecimalType(18, scale), true)
		if err != nil {
			return nil, err
		}
		if scale == rt.Scale {
			if rt.Precision == 18 {
				return out, nil
			}
			defer out.Release()
			return relabel(out, rt.Arrow()), nil
		}
		defer out.Release()
		return castArray(ev.mem, out, rt)
	}
	return nil, fmt.Errorf("unsupported result type %s for %s %s %s", rt, a.t, e.Op, b.t)
}

func decScale(t plan.DataType) int {
	if t.ID == plan.Decimal {
		return t.Scale
	}
	return 0
}

// intArith computes int64 (or decimal, with the 18-digit bound) arithmetic.
func (ev *evaluator) intArith(op plan.Op, a, b vec, rt plan.DataType, dec bool) (arrow.Array, error) {
	n := ev.n
	valid := andValidity(ev.mem, n, arrOf(a), arrOf(b))
	buf, out := newFixed[int64](ev.mem, n)
	var bad int64
	var x, y []int64
	scalar := op == plan.OpAdd || op == plan.OpSub || op == plan.OpMul
	switch {
	case scalar && a.arr != nil && b.arr == nil:
		// A literal operand (Q1's 1 - l_discount) is not broadcast into
		// a slice of n values per batch: a fresh allocation each time.
		bad = scalarArith(op, out, values[int64](a.arr)[:n], b.lit.I, false, dec)
	case scalar && a.arr == nil && b.arr != nil:
		bad = scalarArith(op, out, values[int64](b.arr)[:n], a.lit.I, true, dec)
	default:
		x, y = ev.int64View(a), ev.int64View(b)
	}
	switch {
	case x == nil:
		if bad != 0 {
			x, y = ev.int64View(a), ev.int64View(b) // find the first overflow below
		}
	case op == plan.OpAdd:
		bad = addI64(out, x, y, dec)
	case op == plan.OpSub:
		bad = subI64(out, x, y, dec)
	case op == plan.OpMul:
		bad = mulI64(out, x, y, dec)
	case op == plan.OpMod:
		valid = modI64(ev.mem, out, x, y, valid)
	default:
		buf.Release()
		if valid != nil {
			valid.Release()
		}
		return nil, fmt.Errorf("unsupported integer operator %q", op)
	}
	if bad != 0 {
		var vb []byte
		if valid != nil {
			vb = valid.Bytes()
		}
		i := firstOverflow(op, x, y, vb, dec)
		if i >= 0 {
			buf.Release()
			if valid != nil {
				valid.Release()
			}
			if dec {
				return nil, fmt.Errorf("%w: %s %s %s does not fit %s", plan.ErrDecimalOverflow,
					plan.FormatDecimal(x[i], decScale(a.t)), op, plan.FormatDecimal(y[i], decScale(b.t)), rt)
			}
			return nil, fmt.Errorf("%w: %d %s %d", ErrIntegerOverflow, x[i], op, y[i])
		}
	}
	return makeArray(rt.Arrow(), n, valid, buf), nil
}

func b2i(b bool) int64 { return int64(b2u(b)) }

// scalarArith is addI64, subI64 and mulI64 with one operand the constant
// c: a[i] op c, or c op a[i] when left. Any other operator is reported
// bad, for the caller to take the general path's error.
func scalarArith(op plan.Op, out, a []int64, c int64, left, dec bool) (bad int64) {
	out = out[:len(a)]
	switch {
	case op == plan.OpAdd:
		for i, x := range a {
			s := x + c
			out[i] = s
			bad |= ((x ^ s) & (c ^ s)) >> 63
			if dec {
				bad |= b2i(uint64(s+maxDecimal) > 2*maxDecimal)
			}
		}
	case op == plan.OpSub && left:
		for i, y := range a {
			s := c - y
			out[i] = s
			bad |= ((c ^ y) & (c ^ s)) >> 63
			if dec {
				bad |= b2i(uint64(s+maxDecimal) > 2*maxDecimal)
			}
		}
	case op == plan.OpSub:
		for i, x := range a {
			s := x - c
			out[i] = s
			bad |= ((x ^ c) & (x ^ s)) >> 63
			if dec {
				bad |= b2i(uint64(s+maxDecimal) > 2*maxDecimal)
			}
		}
	case op == plan.OpMul:
		for i, x := range a {
			r, ovf := mulChk(x, c, dec)
			out[i] = r
			bad |= b2i(ovf)
		}
	default:
		return 1
	}
	return bad
}

func addI64(out, a, b []int64, dec bool) (bad int64) {
	b = b[:len(a)]
	out = out[:len(a)]
	if dec {
		for i := range a {
			s := a[i] + b[i]
			out[i] = s
			bad |= ((a[i]^s)&(b[i]^s))>>63 | b2i(uint64(s+maxDecimal) > 2*maxDecimal)
		}
		return bad
	}
	for i := range a {
		s := a[i] + b[i]
		out[i] = s
		bad |= ((a[i] ^ s) & (b[i] ^ s)) >> 63
	}
	return bad
}

func subI64(out, a, b []int64, dec bool) (bad int64) {
	b = b[:len(a)]
	out = out[:len(a)]
	if dec {
		for i := range a {
			s := a[i] - b[i]
			out[i] = s
			bad |= ((a[i]^b[i])&(a[i]^s))>>63 | b2i(uint64(s+maxDecimal) > 2*maxDecimal)
		}
		return bad
	}
	for i := range a {
		s := a[i] - b[i]
		out[i] = s
		bad |= ((a[i] ^ b[i]) & (a[i] ^ s)) >> 63
	}
	return bad
}

// mulChk multiplies with overflow detection: bad unless the magnitude fits
// limit (MaxInt64, one more for a negative product, or maxDecimal).
func mulChk(x, y int64, dec bool) (int64, bool) {
	mx, my := x>>63, y>>63
	ux, uy := uint64((x^mx)-mx), uint64((y^my)-my)
	hi, lo := bits.Mul64(ux, uy)
	neg := (x ^ y) < 0
	limit := uint64(math.MaxInt64) + uint64(b2u(neg))
	if dec {
		limit = maxDecimal
	}
	r := int64(lo)
	if neg {
		r = -r
	}
	return r, hi != 0 || lo > limit
}

func mulI64(out, a, b []int64, dec bool) (bad int64) {
	b = b[:len(a)]
	out = out[:len(a)]
	for i := range a {
		r, ovf := mulChk(a[i], b[i], dec)
		out[i] = r
		bad |= b2i(ovf)
	}
	return bad
}

// modI64 computes a % b; a zero divisor yields NULL. It returns the
// (possibly new) validity.
func modI64(mem memory.Allocator, out, a, b []int64, valid *memory.Buffer) *memory.Buffer {
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
	}
	for i := range a {
		d := b[i]
		if d == 0 {
			out[i] = 0
			if valid == nil {
				valid, vb = newOnes(mem, len(a))
			}
			clearBit(vb, i)
			continue
		}
		out[i] = a[i] % d
	}
	return valid
}

// firstOverflow finds the first valid row whose operation overflows, -1 if
// the flagged overflow was only in NULL rows.
func firstOverflow(op plan.Op, a, b []int64, valid []byte, dec bool) int {
	for i := range a {
		if valid != nil && !bit(valid, i) {
			continue
		}
		x, y := a[i], b[i]
		var s int64
		var ovf bool
		switch op {
		case plan.OpAdd:
			s = x + y
			ovf = (x^s)&(y^s) < 0
		case plan.OpSub:
			s = x - y
			ovf = (x^y)&(x^s) < 0
		case plan.OpMul:
			s, ovf = mulChk(x, y, dec)
		}
		if ovf || (dec && (s > maxDecimal || s < -maxDecimal)) {
			return i
		}
	}
	return -1
}

func (ev *evaluator) floatArith(op plan.Op, a, b vec) (arrow.Array, error) {
	n := ev.n
	x, y := ev.float64View(a), ev.float64View(b)
	y = y[:len(x)]
	valid := andValidity(ev.mem, n, arrOf(a), arrOf(b))
	buf, out := newFixed[float64](ev.mem, n)
	out = out[:len(x)]
	switch op {
	case plan.OpAdd:
		for i := range x {
			out[i] = x[i] + y[i]
		}
	case plan.OpSub:
		for i := range x {
			out[i] = x[i] - y[i]
		}
	case plan.OpMul:
		for i := range x {
			out[i] = x[i] * y[i]
		}
	case plan.OpDiv:
		// IEEE 754, as DuckDB (ieee_floating_point_ops): x / 0 is +-Inf,
		// 0 / 0 NaN. (Integer and decimal % by zero are NULL, in their
		// own kernels.)
		for i := range x {
			out[i] = x[i] / y[i]
		}
	case plan.OpMod:
		for i := range x {
			out[i] = math.Mod(x[i], y[i]) // NaN for a zero divisor
		}
	default:
		buf.Release()
		if valid != nil {
			valid.Release()
		}
		return nil, fmt.Errorf("unsupported float operator %q", op)
	}
	return makeArray(arrow.PrimitiveTypes.Float64, n, valid, buf), nil
}

// dateArith: date ± int64 days -> date; date - date -> int64 days.
func (ev *evaluator) dateArith(op plan.Op, a, b vec, rt plan.DataType) (arrow.Array, error) {
	n := ev.n
	day := func(v vec, i int) int64 {
		if v.arr == nil {
			return v.lit.I
		}
		if v.t.ID == plan.Date {
			return int64(values[int32](v.arr)[i])
		}
		return values[int64](v.arr)[i]
	}
	valid := andValidity(ev.mem, n, arrOf(a), arrOf(b))
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
	}
	if a.t.ID == plan.Date && b.t.ID == plan.Date {
		if op != plan.OpSub {
			if valid != nil {
				valid.Release()
			}
			return nil, fmt.Errorf("unsupported date operator %q", op)
		}
		buf, out := newFixed[int64](ev.mem, n)
		for i := range out {
			out[i] = day(a, i) - day(b, i)
		}
		return makeArray(arrow.PrimitiveTypes.Int64, n, valid, buf), nil
	}
	if (a.t.ID != plan.Date && b.t.ID != plan.Date) || (op != plan.OpAdd && op != plan.OpSub) ||
		(a.t.ID != plan.Date && op == plan.OpSub) || (a.t.ID != plan.Int64 && a.t.ID != plan.Date) || (b.t.ID != plan.Int64 && b.t.ID != plan.Date) {
		if valid != nil {
			valid.Release()
		}
		return nil, fmt.Errorf("unsupported date arithmetic %s %s %s", a.t, op, b.t)
	}
	buf, out := newFixed[int32](ev.mem, n)
	for i := range out {
		if vb != nil && !bit(vb, i) {
			continue
		}
		var r int64
		if op == plan.OpAdd {
			r = day(a, i) + day(b, i)
		} else {
			r = day(a, i) - day(b, i)
		}
		if r < math.MinInt32 || r > math.MaxInt32 {
			buf.Release()
			if valid != nil {
				valid.Release()
			}
			return nil, fmt.Errorf("%w: date out of range", ErrIntegerOverflow)
		}
		out[i] = int32(r)
	}
	return makeArray(arrow.FixedWidthTypes.Date32, n, valid, buf), nil
}

func (ev *evaluator) neg(e *plan.Expr, v vec) (arrow.Array, error) {
	a := v.arr
	n := ev.n
	switch a.DataType().ID() {
	case arrow.INT64, arrow.DECIMAL64:
		x := values[int64](a)
		buf, out := newFixed[int64](ev.mem, n)
		var bad bool
		for i := range x {
			out[i] = -x[i]
			bad = bad || x[i] == math.MinInt64
		}
		if bad {
			vb, voff := validityOf(a)
			for i := range x {
				if x[i] == math.MinInt64 && isValid(vb, voff, i) {
					buf.Release()
					return nil, fmt.Errorf("%w: -(%d)", ErrIntegerOverflow, x[i])
				}
			}
		}
		return makeArray(a.DataType(), n, copyValidity(ev.mem, a), buf), nil
	case arrow.DECIMAL128:
		return ev.negWide(a)
	case arrow.FLOAT64:
		x := values[float64](a)
		buf, out := newFixed[float64](ev.mem, n)
		for i := range x {
			out[i] = -x[i]
		}
		return makeArray(a.DataType(), n, copyValidity(ev.mem, a), buf), nil
	}
	return nil, fmt.Errorf("cannot negate %s", a.DataType())
}
