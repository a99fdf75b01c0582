package exec

import (
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// castArray converts a to engine type to. Conversions that can fail on a
// value (string parsing, narrowing, decimal overflow) fail with an error
// naming the value; NULLs stay NULL.
//
// Rounding follows DuckDB: decimal -> int and decimal -> smaller scale round
// half away from zero; float -> int rounds half to even; float -> decimal
// rounds half away from zero.
func castArray(mem memory.Allocator, a arrow.Array, to plan.DataType) (arrow.Array, error) {
	from := typeOfArrow(a.DataType())
	n := a.Len()
	at := to.Arrow()
	if from.ID == plan.Null || to.ID == plan.Null {
		return makeNulls(mem, at, n), nil
	}
	if from.IsNested() || to.IsNested() {
		if from == to {
			a.Retain()
			return a, nil
		}
		return castNested(mem, a, from, to, false)
	}
	if from.Wide() != to.Wide() || (from.Wide() && (from.Scale != to.Scale || to.Precision < from.Precision)) {
		return castWide(mem, a, from, to)
	}
	if from.ID == plan.Timestamp || to.ID == plan.Timestamp {
		return castTimestamp(mem, a, from, to)
	}
	if from.ID == to.ID && (from.ID != plan.Decimal || from.Scale == to.Scale) {
		if arrow.TypeEqual(a.DataType(), at) {
			a.Retain()
			return a, nil
		}
		return relabel(a, at), nil
	}
	vb, voff := validityOf(a)
	valid := func() *memory.Buffer { return copyValidity(mem, a) }
	bad := func(what string) error {
		return fmt.Errorf("cannot cast %s value %s to %s", from, what, to)
	}

	switch from.ID {
	case plan.Int64:
		x := values[int64](a)
		switch to.ID {
		case plan.Float64:
			buf, out := newFixed[float64](mem, n)
			for i, v := range x {
				out[i] = float64(v)
			}
			return makeArray(at, n, valid(), buf), nil
		case plan.Decimal:
			return scaleUp(mem, a, x, to, 0)
		case plan.Bool:
			return nonZeroBits(mem, a, at, x), nil
		case plan.String:
			sb := newStrBuilder(mem, n, n*8)
			var tmp [24]byte
			for i, v := range x {
				if !isValid(vb, voff, i) {
					sb.appendEmpty()
					continue
				}
				sb.append(strconv.AppendInt(tmp[:0], v, 10))
			}
			return sb.finish(valid())
		}
	case plan.Float64:
		x := values[float64](a)
		switch to.ID {
		case plan.Int64:
			buf, out := newFixed[int64](mem, n)
			for i, v := range x {
				if !isValid(vb, voff, i) {
					continue
				}
				r := math.RoundToEven(v)
				if math.IsNaN(r) || r < -9.223372036854775808e18 || r >= 9.223372036854775808e18 {
					buf.Release()
					return nil, fmt.Errorf("%w: %s", ErrIntegerOverflow, bad(strconv.FormatFloat(v, 'g', -1, 64)))
				}
				out[i] = int64(r)
			}
			return makeArray(at, n, valid(), buf), nil
		case plan.Decimal:
			buf, out := newFixed[int64](mem, n)
			p := float64(plan.Pow10[to.Scale])
			for i, v := range x {
				if !isValid(vb, voff, i) {
					continue
				}
				r := math.Round(v * p)
				if math.IsNaN(r) || r > maxDecimal || r < -maxDecimal {
					buf.Release()
					return nil, fmt.Errorf("%w: %s", plan.ErrDecimalOverflow, bad(strconv.FormatFloat(v, 'g', -1, 64)))
				}
				out[i] = int64(r)
			}
			return makeArray(at, n, valid(), buf), nil
		case plan.Bool:
			return nonZeroBits(mem, a, at, x), nil
		case plan.String:
			sb := newStrBuilder(mem, n, n*8)
			var tmp [32]byte
			for i, v := range x {
				if !isValid(vb, voff, i) {
					sb.appendEmpty()
					continue
				}
				sb.append(appendFloat(tmp[:0], v))
			}
			return sb.finish(valid())
		}
	case plan.Decimal:
		x := values[int64](a)
		s := from.Scale
		switch to.ID {
		case plan.Float64:
			buf, out := newFixed[float64](mem, n)
			p := float64(plan.Pow10[s])
			for i, v := range x {
				out[i] = float64(v) / p
			}
			return makeArray(at, n, valid(), buf), nil
		case plan.Int64:
			buf, out := newFixed[int64](mem, n)
			for i, v := range x {
				out[i] = roundDiv(v, plan.Pow10[s])
			}
			return makeArray(at, n, valid(), buf), nil
		case plan.Decimal:
			if to.Scale > s {
				return scaleUp(mem, a, x, to, s)
			}
			buf, out := newFixed[int64](mem, n)
			d := plan.Pow10[s-to.Scale]
			for i, v := range x {
				out[i] = roundDiv(v, d)
			}
			return makeArray(at, n, valid(), buf), nil
		case plan.Bool:
			return nonZeroBits(mem, a, at, x), nil
		case plan.String:
			sb := newStrBuilder(mem, n, n*10)
			var tmp [32]byte
			for i, v := range x {
				if !isValid(vb, voff, i) {
					sb.appendEmpty()
					continue
				}
				sb.append(plan.AppendDecimal(tmp[:0], v, s))
			}
			return sb.finish(valid())
		}
	case plan.Date:
		x := values[int32](a)
		switch to.ID {
		case plan.String:
			sb := newStrBuilder(mem, n, n*10)
			var tmp [24]byte
			for i, v := range x {
				if !isValid(vb, voff, i) {
					sb.appendEmpty()
					continue
				}
				sb.append(appendDate(tmp[:0], v))
			}
			return sb.finish(valid())
		}
	case plan.Bool:
		bs, off := bitsOf(a)
		switch to.ID {
		case plan.Int64, plan.Decimal:
			one := int64(1)
			if to.ID == plan.Decimal {
				one = plan.Pow10[to.Scale]
			}
			buf, out := newFixed[int64](mem, n)
			for i := range out {
				out[i] = int64(b2u(bit(bs, off+i))) * one
			}
			return makeArray(at, n, valid(), buf), nil
		case plan.Float64:
			buf, out := newFixed[float64](mem, n)
			for i := range out {
				out[i] = float64(b2u(bit(bs, off+i)))
			}
			return makeArray(at, n, valid(), buf), nil
		case plan.String:
			sb := newStrBuilder(mem, n, n*5)
			for i := 0; i < n; i++ {
				switch {
				case !isValid(vb, voff, i):
					sb.appendEmpty()
				case bit(bs, off+i):
					sb.appendString("true")
				default:
					sb.appendString("false")
				}
			}
			return sb.finish(valid())
		}
	case plan.String:
		return castString(mem, a, to)
	}
	return nil, fmt.Errorf("unsupported cast from %s to %s", from, to)
}

// scaleUp multiplies decimal/int values of scale s up to decimal to.
func scaleUp(mem memory.Allocator, a arrow.Array, x []int64, to plan.DataType, s int) (arrow.Array, error) {
	if to.Scale < s || to.Scale > plan.MaxDecimalPrecision {
		return nil, fmt.Errorf("unsupported scale change %d -> %d", s, to.Scale)
	}
	m := plan.Pow10[to.Scale-s]
	buf, out := newFixed[int64](mem, len(x))
	var badAny bool
	for i, v := range x {
		r, ovf := mulChk(v, m, true)
		out[i] = r
		badAny = badAny || ovf
	}
	if badAny {
		vb, voff := validityOf(a)
		for i, v := range x {
			if _, ovf := mulChk(v, m, true); ovf && isValid(vb, voff, i) {
				buf.Release()
				return nil, fmt.Errorf("%w: cannot cast %s to %s", plan.ErrDecimalOverflow, plan.FormatDecimal(v, s), to)
			}
		}
	}
	return makeArray(to.Arrow(), len(x), copyValidity(mem, a), buf), nil
}

// roundDiv divides v by d (> 0) rounding half away from zero.
func roundDiv(v, d int64) int64 {
	if d == 1 {
		return v
	}
	q, r := v/d, v%d
	if r < 0 {
		r = -r
	}
	if r >= d-r { // 2r >= d without overflow
		if v < 0 {
			q--
		} else {
			q++
		}
	}
	return q
}

// appendFloat renders a double the way DuckDB prints it (shortest
// round-trip form, integral values with a trailing ".0").
func appendFloat(dst []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, "nan"...)
	case math.IsInf(v, 1):
		return append(dst, "inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-inf"...)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		dst = strconv.AppendFloat(dst, v, 'f', -1, 64)
		return append(dst, ".0"...)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

// bstr views b as a string without copying; the result must not outlive b
// nor be retained.
func bstr(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// parseDecimal parses [+-]digits[.digits] into an unscaled value of the
// given scale, rounding extra fraction digits half away from zero.
func parseDecimal(b []byte, scale int) (int64, bool) {
	b = trimSpace(b)
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var v int64
	digits := 0
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		v = v*10 + int64(b[i]-'0')
		if v > maxDecimal {
			return 0, false
		}
		digits++
	}
	frac := 0
	roundUp := false
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			digits++
			if frac < scale {
				v = v*10 + int64(b[i]-'0')
				frac++
				if v > maxDecimal {
					return 0, false
				}
			} else if frac == scale {
				roundUp = b[i] >= '5'
				frac++ // only the first extra digit decides rounding
			}
		}
	}
	if i != len(b) || digits == 0 {
		return 0, false
	}
	for ; frac < scale; frac++ {
		v *= 10
		if v > maxDecimal {
			return 0, false
		}
	}
	if roundUp {
		v++
		if v > maxDecimal {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

func parseBool(b []byte) (bool, bool) {
	switch string(trimSpace(b)) {
	case "true", "TRUE", "True", "t", "T", "1", "yes", "y", "YES", "Y":
		return true, true
	case "false", "FALSE", "False", "f", "F", "0", "no", "n", "NO", "N":
		return false, true
	}
	return false, false
}

func castString(mem memory.Allocator, a arrow.Array, to plan.DataType) (arrow.Array, error) {
	n := a.Len()
	at := to.Arrow()
	offs, data := strOffsets(a)
	vb, voff := validityOf(a)
	bad := func(b []byte) error {
		return plan.Errorf(plan.CodeInvalidCast, "cannot cast string %q to %s", b, to)
	}
	switch to.ID {
	case plan.Int64:
		buf, out := newFixed[int64](mem, n)
		for i := 0; i < n; i++ {
			if !isValid(vb, voff, i) {
				continue
			}
			s := data[offs[i]:offs[i+1]]
			v, ok := parseIntText(trimSpace(s))
			if !ok {
				buf.Release()
				return nil, bad(s)
			}
			out[i] = v
		}
		return makeArray(at, n, copyValidity(mem, a), buf), nil
	case plan.Float64:
		buf, out := newFixed[float64](mem, n)
		for i := 0; i < n; i++ {
			if !isValid(vb, voff, i) {
				continue
			}
			s := data[offs[i]:offs[i+1]]
			v, err := strconv.ParseFloat(bstr(trimSpace(s)), 64)
			if err != nil {
				buf.Release()
				return nil, bad(s)
			}
			out[i] = v
		}
		return makeArray(at, n, copyValidity(mem, a), buf), nil
	case plan.Decimal:
		buf, out := newFixed[int64](mem, n)
		for i := 0; i < n; i++ {
			if !isValid(vb, voff, i) {
				continue
			}
			s := data[offs[i]:offs[i+1]]
			v, ok := parseDecimal(s, to.Scale)
			if !ok {
				buf.Release()
				return nil, bad(s)
			}
			out[i] = v
		}
		return makeArray(at, n, copyValidity(mem, a), buf), nil
	case plan.Date:
		buf, out := newFixed[int32](mem, n)
		for i := 0; i < n; i++ {
			if !isValid(vb, voff, i) {
				continue
			}
			s := data[offs[i]:offs[i+1]]
			v, ok := parseDate(s)
			if !ok {
				v, ok = dateOfTimestampText(s) // DuckDB accepts a timestamp's text
			}
			if !ok {
				buf.Release()
				return nil, bad(s)
			}
			out[i] = v
		}
		return makeArray(at, n, copyValidity(mem, a), buf), nil
	case plan.Bool:
		buf, out := newBitmap(mem, n)
		for i := 0; i < n; i++ {
			if !isValid(vb, voff, i) {
				continue
			}
			s := data[offs[i]:offs[i+1]]
			v, ok := parseBool(s)
			if !ok {
				buf.Release()
				return nil, bad(s)
			}
			if v {
				setBit(out, i)
			}
		}
		return makeArray(at, n, copyValidity(mem, a), buf), nil
	}
	return nil, fmt.Errorf("unsupported cast from string to %s", to)
}

// nonZeroBits is the cast of numbers x (the values of a) to bool: true
// where the value is not zero.
func nonZeroBits[T comparable](mem memory.Allocator, a arrow.Array, at arrow.DataType, x []T) arrow.Array {
	var zero T
	buf, out := newBitmap(mem, a.Len())
	for i, v := range x {
		if v != zero {
			setBit(out, i)
		}
	}
	return makeArray(at, a.Len(), copyValidity(mem, a), buf)
}
