package exec

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Wide decimals: precision 19 to 38, held as arrow Decimal128 (two's
// complement 128-bit unscaled values). Decimals up to 18 digits keep the
// int64 layout (the fast path); a kernel widens its operands when the
// planner typed its result wide. Every result is checked against 38
// digits: a value that does not fit fails with plan.ErrDecimalOverflow.

type num = decimal128.Num

// pow10w returns 10^k as a 128-bit value (0 <= k <= 38).
func pow10w(k int) num { return decimal128.GetScaleMultiplier(k) }

// fitsDigits reports whether |n| < 10^p (p <= 38).
func fitsDigits(n num, p int) bool {
	if p > plan.MaxDecimalPrecision {
		p = plan.MaxDecimalPrecision
	}
	m := pow10w(p)
	if n.Sign() < 0 {
		return n.Greater(m.Negate())
	}
	return n.Less(m)
}

// abs128 returns |n| as an unsigned (hi, lo) pair (exact also for -2^127).
func abs128(n num) (uint64, uint64) {
	hi, lo := uint64(n.HighBits()), n.LowBits()
	if n.HighBits() < 0 {
		lo = ^lo + 1
		hi = ^hi
		if lo == 0 {
			hi++
		}
	}
	return hi, lo
}

func fromAbs(hi, lo uint64, neg bool) num {
	n := decimal128.New(int64(hi), lo)
	if neg {
		return n.Negate()
	}
	return n
}

// add128 returns a+b and whether it overflowed 38 digits.
func add128(a, b num) (num, bool) {
	r := a.Add(b)
	// signed overflow: operands of one sign, result of the other
	if (a.Sign() >= 0) == (b.Sign() >= 0) && (r.Sign() >= 0) != (a.Sign() >= 0) && r.Sign() != 0 {
		return r, true
	}
	return r, !fitsDigits(r, plan.MaxDecimalPrecision)
}

func sub128(a, b num) (num, bool) { return add128(a, b.Negate()) }

// mul128 returns a*b and whether it overflowed 38 digits.
func mul128(a, b num) (num, bool) {
	ah, al := abs128(a)
	bh, bl := abs128(b)
	neg := (a.Sign() < 0) != (b.Sign() < 0)
	if ah != 0 && bh != 0 {
		return num{}, true
	}
	hi, lo := bits.Mul64(al, bl)
	var c1, c2 uint64
	var h1, h2 uint64
	if ah != 0 {
		h1, c1 = bits.Mul64(ah, bl)
	}
	if bh != 0 {
		h2, c2 = bits.Mul64(al, bh)
	}
	if h1 != 0 || h2 != 0 {
		return num{}, true
	}
	var carry uint64
	hi, carry = bits.Add64(hi, c1, 0)
	if carry != 0 {
		return num{}, true
	}
	hi, carry = bits.Add64(hi, c2, 0)
	if carry != 0 || hi>>63 != 0 {
		return num{}, true
	}
	r := fromAbs(hi, lo, neg)
	return r, !fitsDigits(r, plan.MaxDecimalPrecision)
}

// divRound divides n by 10^k rounding half away from zero.
func divRound(n num, k int) num {
	if k == 0 {
		return n
	}
	if k <= 19 {
		hi, lo := abs128(n)
		d := uint64(1)
		for i := 0; i < k; i++ {
			d *= 10
		}
		qh := hi / d
		ql, r := bits.Div64(hi%d, lo, d)
		if r >= d-r {
			var c uint64
			ql, c = bits.Add64(ql, 1, 0)
			qh += c
		}
		return fromAbs(qh, ql, n.Sign() < 0)
	}
	return n.ReduceScaleBy(int32(k), true)
}

// rescale128 changes the scale of n from s to t (rounding half away from
// zero when digits are dropped); ok is false on overflow.
func rescale128(n num, s, t int) (num, bool) {
	switch {
	case t == s:
		return n, true
	case t > s:
		if t-s > plan.MaxDecimalPrecision {
			return n, n.Sign() == 0
		}
		r, ovf := mul128(n, pow10w(t-s))
		return r, !ovf
	default:
		if s-t > plan.MaxDecimalPrecision {
			return num{}, true
		}
		return divRound(n, s-t), true
	}
}

// formatDec128 renders an unscaled value with scale s as DuckDB prints it.
func formatDec128(n num, s int) string {
	if n.HighBits() == int64(n.LowBits())>>63 {
		return plan.FormatDecimal(int64(n.LowBits()), s)
	}
	str := n.BigInt().String()
	neg := str[0] == '-'
	if neg {
		str = str[1:]
	}
	if s > 0 {
		for len(str) <= s {
			str = "0" + str
		}
		str = str[:len(str)-s] + "." + str[len(str)-s:]
	}
	if neg {
		str = "-" + str
	}
	return str
}

// parseDec128 parses [+-]digits[.digits] (spaces trimmed) into an unscaled
// value of the given scale, rounding extra fraction digits half away from
// zero; ok is false for bad text or more than 38 digits.
func parseDec128(b []byte, scale int) (num, bool) {
	b = trimSpace(b)
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	var v num
	ten := decimal128.FromI64(10)
	digits, frac := 0, 0
	roundUp, point := false, false
	push := func(d byte) bool {
		var ovf bool
		if v, ovf = mul128(v, ten); ovf {
			return false
		}
		v, ovf = add128(v, decimal128.FromI64(int64(d)))
		return !ovf
	}
	for _, c := range b {
		switch {
		case c == '.' && !point:
			point = true
		case c >= '0' && c <= '9':
			digits++
			if point {
				if frac < scale {
					if !push(c - '0') {
						return num{}, false
					}
					frac++
				} else if frac == scale {
					roundUp = c >= '5'
					frac++
				}
			} else if !push(c - '0') {
				return num{}, false
			}
		default:
			return num{}, false
		}
	}
	if digits == 0 {
		return num{}, false
	}
	for ; frac < scale; frac++ {
		if !push(0) {
			return num{}, false
		}
	}
	if roundUp {
		var ovf bool
		if v, ovf = add128(v, decimal128.FromI64(1)); ovf {
			return num{}, false
		}
	}
	if neg {
		v = v.Negate()
	}
	return v, true
}

// wideValues returns the values of an int64, decimal or wide decimal
// operand as 128-bit decimals of scale s (NULL rows hold garbage).
func (ev *evaluator) wideValues(v vec, s int) ([]num, error) {
	if v.scalar() {
		arr, err := broadcast(ev.mem, v.t, v.lit, 1)
		if err != nil {
			return nil, err
		}
		defer arr.Release()
		one, err := toWide(arr, s)
		if err != nil {
			return nil, err
		}
		out := make([]num, ev.n)
		for i := range out {
			out[i] = one[0]
		}
		return out, nil
	}
	return toWide(v.arr, s)
}

// toWide converts an int64/decimal array to 128-bit values of scale s.
func toWide(a arrow.Array, s int) ([]num, error) {
	t := typeOfArrow(a.DataType())
	vb, voff := validityOf(a)
	out := make([]num, a.Len())
	from := 0
	switch {
	case t.Wide():
		copy(out, values[num](a))
		from = t.Scale
	case t.ID == plan.Decimal || t.ID == plan.Int64:
		for i, x := range values[int64](a) {
			out[i] = decimal128.FromI64(x)
		}
		from = decScale(t)
	default:
		return nil, fmt.Errorf("cannot widen %s to a 128-bit decimal", t)
	}
	if from == s {
		return out, nil
	}
	for i, x := range out {
		r, ok := rescale128(x, from, s)
		if !ok && isValid(vb, voff, i) {
			return nil, fmt.Errorf("%w: %s does not fit decimal(38,%d)", plan.ErrDecimalOverflow, formatDec128(x, from), s)
		}
		out[i] = r
	}
	return out, nil
}

// wideArith computes + - * % for a wide decimal result type.
func (ev *evaluator) wideArith(e *plan.Expr, a, b vec) (arrow.Array, error) {
	rt := e.Type
	sa, sb := decScale(a.t), decScale(b.t)
	if e.Op != plan.OpMul {
		sa, sb = rt.Scale, rt.Scale
	}
	x, err := ev.wideValues(a, sa)
	if err != nil {
		return nil, err
	}
	y, err := ev.wideValues(b, sb)
	if err != nil {
		return nil, err
	}
	n := ev.n
	valid := andValidity(ev.mem, n, arrOf(a), arrOf(b))
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
	}
	buf, out := newFixed[num](ev.mem, n)
	fail := func(i int) error {
		buf.Release()
		if valid != nil {
			valid.Release()
		}
		return fmt.Errorf("%w: %s %s %s does not fit %s", plan.ErrDecimalOverflow,
			formatDec128(x[i], sa), e.Op, formatDec128(y[i], sb), rt)
	}
	for i := range out {
		var r num
		var ovf bool
		switch e.Op {
		case plan.OpAdd:
			r, ovf = add128(x[i], y[i])
		case plan.OpSub:
			r, ovf = sub128(x[i], y[i])
		case plan.OpMul:
			r, ovf = mul128(x[i], y[i])
		case plan.OpMod:
			if y[i].Sign() == 0 {
				if valid == nil {
					valid, vb = newOnes(ev.mem, n)
				}
				clearBit(vb, i)
				continue
			}
			_, r = x[i].Div(y[i]) // remainder has the dividend's sign, as in SQL
		default:
			buf.Release()
			if valid != nil {
				valid.Release()
			}
			return nil, fmt.Errorf("unsupported decimal operator %q", e.Op)
		}
		if ovf && (vb == nil || bit(vb, i)) {
			return nil, fail(i)
		}
		out[i] = r
	}
	if e.Op == plan.OpMul && sa+sb != rt.Scale {
		buf.Release()
		if valid != nil {
			valid.Release()
		}
		return nil, fmt.Errorf("decimal product of scales %d and %d typed with scale %d", sa, sb, rt.Scale)
	}
	return makeArray(rt.Arrow(), n, valid, buf), nil
}

// castWide converts to or from a wide decimal.
func castWide(mem memory.Allocator, a arrow.Array, from, to plan.DataType) (arrow.Array, error) {
	n := a.Len()
	at := to.Arrow()
	vb, voff := validityOf(a)
	valid := func() *memory.Buffer { return copyValidity(mem, a) }
	overflow := func(what string) error {
		return fmt.Errorf("%w: cannot cast %s value %s to %s", plan.ErrDecimalOverflow, from, what, to)
	}
	if to.Wide() {
		buf, out := newFixed[num](mem, n)
		fail := func(err error) (arrow.Array, error) {
			buf.Release()
			return nil, err
		}
		switch from.ID {
		case plan.Int64, plan.Decimal:
			x, err := toWide(a, to.Scale)
			if err != nil {
				return fail(err)
			}
			for i, v := range x {
				if isValid(vb, voff, i) && !fitsDigits(v, to.Precision) {
					return fail(overflow(formatDec128(v, to.Scale)))
				}
			}
			copy(out, x)
		case plan.Float64:
			p := math.Pow10(to.Scale)
			for i, v := range values[float64](a) {
				if !isValid(vb, voff, i) {
					continue
				}
				r := math.Round(v * p)
				if math.IsNaN(r) || math.IsInf(r, 0) || math.Abs(r) >= 1e38 {
					return fail(overflow(strconv.FormatFloat(v, 'g', -1, 64)))
				}
				bf := new(big.Float).SetFloat64(r)
				bi, _ := bf.Int(nil)
				d := decimal128.FromBigInt(bi)
				if !fitsDigits(d, to.Precision) {
					return fail(overflow(strconv.FormatFloat(v, 'g', -1, 64)))
				}
				out[i] = d
			}
		case plan.Bool:
			bs, off := bitsOf(a)
			one := pow10w(to.Scale)
			for i := range out {
				if bit(bs, off+i) {
					out[i] = one
				}
			}
		case plan.String:
			offs, data := strOffsets(a)
			for i := 0; i < n; i++ {
				if !isValid(vb, voff, i) {
					continue
				}
				s := data[offs[i]:offs[i+1]]
				v, ok := parseDec128(s, to.Scale)
				if !ok || !fitsDigits(v, to.Precision) {
					return fail(fmt.Errorf("cannot cast string %q to %s", s, to))
				}
				out[i] = v
			}
		default:
			return fail(fmt.Errorf("unsupported cast from %s to %s", from, to))
		}
		return makeArray(at, n, valid(), buf), nil
	}
	// from is wide
	x := values[num](a)
	s := from.Scale
	switch to.ID {
	case plan.Decimal, plan.Int64:
		ts := decScale(to)
		p := to.Precision
		if to.ID == plan.Int64 {
			p = 19
		}
		buf, out := newFixed[int64](mem, n)
		for i, v := range x {
			if !isValid(vb, voff, i) {
				continue
			}
			r, ok := rescale128(v, s, ts)
			fits := ok && r.HighBits() == int64(r.LowBits())>>63 && (to.ID == plan.Int64 || fitsDigits(r, p))
			if !fits {
				buf.Release()
				if to.ID == plan.Int64 {
					return nil, fmt.Errorf("%w: cannot cast %s value %s to int64", ErrIntegerOverflow, from, formatDec128(v, s))
				}
				return nil, overflow(formatDec128(v, s))
			}
			out[i] = int64(r.LowBits())
		}
		return makeArray(at, n, valid(), buf), nil
	case plan.Float64:
		buf, out := newFixed[float64](mem, n)
		for i, v := range x {
			out[i] = v.ToFloat64(int32(s))
		}
		return makeArray(at, n, valid(), buf), nil
	case plan.Bool:
		return nonZeroBits(mem, a, at, x), nil
	case plan.String:
		sb := newStrBuilder(mem, n, n*20)
		for i, v := range x {
			if !isValid(vb, voff, i) {
				sb.appendEmpty()
				continue
			}
			sb.appendString(formatDec128(v, s))
		}
		return sb.finish(valid())
	}
	return nil, fmt.Errorf("unsupported cast from %s to %s", from, to)
}

// cmpWide compares wide decimals (a is an array; b an array or literal).
func cmpWide(op plan.Op, a arrow.Array, b vec, out []byte) {
	x := values[num](a)
	if b.scalar() {
		c := b.lit.Dec128()
		for i, v := range x {
			if cmpResult(op, v.Cmp(c)) {
				setBit(out, i)
			}
		}
		return
	}
	y := values[num](b.arr)
	for i, v := range x {
		if cmpResult(op, v.Cmp(y[i])) {
			setBit(out, i)
		}
	}
}

// negWide negates a wide decimal array.
func (ev *evaluator) negWide(a arrow.Array) (arrow.Array, error) {
	x := values[num](a)
	buf, out := newFixed[num](ev.mem, len(x))
	for i, v := range x {
		out[i] = v.Negate()
	}
	return makeArray(a.DataType(), len(x), copyValidity(ev.mem, a), buf), nil
}

// sumNarrowWide adds int64 (Decimal64) values into 128-bit sums by group
// (gids nil: all rows are group 0). It cannot overflow: 2^63 rows of 18
// digits stay below 10^38.
func sumNarrowWide(sums []num, has []bool, gids []uint32, x []int64, vb []byte, voff int) {
	if gids == nil {
		// Sum in int64 runs, flushing before a run could overflow.
		var s num
		var run int64
		any := false
		for i, v := range x {
			if vb != nil && !bit(vb, voff+i) {
				continue
			}
			t := run + v
			if (run^t)&(v^t) < 0 {
				s = s.Add(decimal128.FromI64(run))
				t = v
			}
			run = t
			any = true
		}
		if any {
			sums[0] = sums[0].Add(s).Add(decimal128.FromI64(run))
			has[0] = true
		}
		return
	}
	for i, g := range gids {
		if vb == nil || bit(vb, voff+i) {
			sums[g] = sums[g].Add(decimal128.FromI64(x[i]))
			has[g] = true
		}
	}
}

// sumWide adds 128-bit values into sums by group; it reports overflow.
func sumWide(sums []num, has []bool, gids []uint32, x []num, vb []byte, voff int) bool {
	bad := false
	for i, v := range x {
		if vb != nil && !bit(vb, voff+i) {
			continue
		}
		g := uint32(0)
		if gids != nil {
			g = gids[i]
		}
		var ovf bool
		sums[g], ovf = add128(sums[g], v)
		bad = bad || ovf
		has[g] = true
	}
	return bad
}

func minMaxWide(st []num, has []bool, gids []uint32, x []num, vb []byte, voff int, isMax bool) {
	for i, v := range x {
		if vb != nil && !bit(vb, voff+i) {
			continue
		}
		g := uint32(0)
		if gids != nil {
			g = gids[i]
		}
		if !has[g] || (isMax && v.Greater(st[g])) || (!isMax && v.Less(st[g])) {
			st[g], has[g] = v, true
		}
	}
}

// avgWide divides a 128-bit sum of scale s by a count, as a double.
func avgWide(sum num, cnt int64, s int) float64 {
	if sum.HighBits() == int64(sum.LowBits())>>63 {
		return avgInt(int64(sum.LowBits()), cnt, math.Pow10(s))
	}
	q, r := sum.Div(decimal128.FromI64(cnt))
	v := q.ToFloat64(int32(s)) + r.ToFloat64(int32(s))/float64(cnt)
	return v
}
