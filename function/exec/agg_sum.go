package exec

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// sum and avg. sum(int64) is decimal(38,0) (DuckDB's HUGEINT), sum(float64)
// float64, sum(decimal(p,s)) decimal(38,s) (DuckDB's rule), all kept as a
// wide decimal (plan.SumType), so a sum of 64-bit values does not
// overflow. The partial state of sum is the sum, of avg [sum, count]; avg
// sums in sum's type. A sum of int64 (an error on overflow) is only
// planned by the planner's own rewrites (a sum of counts).

func sumAggregates() []*AggregateFunction {
	return []*AggregateFunction{
		{Name: plan.AggSum, Doc: "the sum of the non-NULL values (NULL for none); an error on overflow",
			Signatures: []AggSignature{{Arg: NumericType, Return: plan.SumType, ReturnDoc: "decimal(38, s) of a decimal, decimal(38, 0) of an integer, else double"}},
			NumStates:  1, StateTypes: func(c plan.AggCall) []plan.DataType { return []plan.DataType{c.Type} },
			Frame: sumFrames(false), New: newSumAcc},
		{Name: plan.AggAvg, Doc: "the mean of the non-NULL values (NULL for none)",
			Signatures: []AggSignature{{Arg: NumericType, Returns: plan.Float64Type}},
			NumStates:  2, StateNames: []string{"[sum]", "[count]"}, StateTypes: func(c plan.AggCall) []plan.DataType { return []plan.DataType{avgSumType(c.Arg.Type), plan.Int64Type} },
			Frame: sumFrames(true), New: newAvgAcc},
	}
}

// sumAcc is sum's state: one value per group.
type sumAcc struct{ valueState }

func newSumAcc(s AggSpec) (Accumulator, error) {
	t := s.Call.Type
	if s.Mode == plan.AggPartial {
		t = s.States[0]
	}
	a := &sumAcc{}
	a.setType(t)
	if a.k == kString {
		return nil, fmt.Errorf("%s over strings", s.Call.Func)
	}
	return a, nil
}

func (a *sumAcc) Grow(n int)   { a.grow(n) }
func (a *sumAcc) Bytes() int64 { return a.bytes() }

func (a *sumAcc) Update(arg arrow.Array, gids []uint32, _ int) error { return a.sum(arg, gids) }

func (a *sumAcc) Merge(st []arrow.Array, gids []uint32) error {
	if isNullArray(st[0]) {
		return nil
	}
	return a.sum(st[0], gids)
}

func (a *sumAcc) Result(mem memory.Allocator, t arrow.DataType, lo, hi int) (arrow.Array, error) {
	if a.k == kDec128 {
		for g := lo; g < hi; g++ {
			if v := a.w[g]; a.has[g] && !fitsDigits(v, plan.MaxDecimalPrecision) {
				return nil, fmt.Errorf("%w: SUM %s does not fit %s", plan.ErrDecimalOverflow, formatDec128(v, a.scale), t)
			}
		}
	} else if a.dec {
		for g := lo; g < hi; g++ {
			if v := a.i64[g]; a.has[g] && (v > maxDecimal || v < -maxDecimal) {
				return nil, fmt.Errorf("%w: SUM %s does not fit %s", plan.ErrDecimalOverflow, plan.FormatDecimal(v, a.scale), t)
			}
		}
	}
	return a.array(mem, t, lo, hi)
}

// avgAcc is avg's state: the sum (as sum's) and the count per group.
type avgAcc struct {
	valueState
	cnt []int64
}

func newAvgAcc(s AggSpec) (Accumulator, error) {
	var t plan.DataType
	switch {
	case s.Mode == plan.AggPartial:
		t = s.States[0]
	case s.Call.Arg != nil:
		t = avgSumType(s.Call.Arg.Type)
	default:
		t = plan.NullType // known from the first state batch
	}
	a := &avgAcc{}
	a.setType(t)
	if a.k == kString {
		return nil, fmt.Errorf("%s over strings", s.Call.Func)
	}
	return a, nil
}

func (a *avgAcc) Grow(n int) {
	a.cnt = growTo(a.cnt, n)
	a.grow(n)
}

func (a *avgAcc) Bytes() int64 { return a.bytes() + int64(cap(a.cnt)*8) }

func (a *avgAcc) Update(arg arrow.Array, gids []uint32, _ int) error {
	countValid(a.cnt, gids, arg)
	return a.sum(arg, gids)
}

func (a *avgAcc) Merge(st []arrow.Array, gids []uint32) error {
	if a.k == kNull && !isNullArray(st[0]) {
		a.setType(typeOfArrow(st[0].DataType()))
		a.grow(len(a.cnt))
	}
	if err := addCounts(a.cnt, gids, st[1]); err != nil {
		return err
	}
	if isNullArray(st[0]) {
		return nil
	}
	return a.sum(st[0], gids)
}

func (a *avgAcc) States(mem memory.Allocator, ts []arrow.DataType, lo, hi int) ([]arrow.Array, error) {
	s, err := a.array(mem, ts[0], lo, hi)
	if err != nil {
		return nil, err
	}
	return []arrow.Array{s, countArray(mem, a.cnt[lo:hi])}, nil
}

func (a *avgAcc) Result(mem memory.Allocator, _ arrow.DataType, lo, hi int) (arrow.Array, error) {
	n := hi - lo
	vbuf, valid := newBitmap(mem, n)
	buf, out := newFixed[float64](mem, n)
	div := 1.0
	if a.dec {
		div = float64(plan.Pow10[a.scale])
	}
	for i := 0; i < n; i++ {
		g := lo + i
		c := a.cnt[g]
		if c == 0 || a.k == kNull {
			continue
		}
		setBit(valid, i)
		switch a.k {
		case kInt64:
			out[i] = avgInt(a.i64[g], c, div)
		case kFloat64:
			out[i] = a.f64[g] / float64(c)
		case kDec128:
			out[i] = avgWide(a.w[g], c, a.scale)
		}
	}
	return makeArray(arrow.PrimitiveTypes.Float64, n, vbuf, buf), nil
}

// avgSumType is the type avg sums its argument in: sum's (integers in
// 128 bits, as DuckDB sums them in a HUGEINT), so the mean of 64-bit ids
// near the int64 limit does not overflow.
func avgSumType(arg plan.DataType) plan.DataType { return plan.SumType(arg) }

// avgInt divides an exact integer sum (unscaled by div) by a count with one
// rounding where possible: the integral quotient and the remainder are
// converted separately, so large sums keep their precision.
func avgInt(sum, cnt int64, div float64) float64 {
	q, r := sum/cnt, sum%cnt
	v := float64(q) + float64(r)/float64(cnt)
	if div != 1 {
		v /= div
	}
	if math.IsInf(v, 0) {
		return float64(sum) / float64(cnt) / div
	}
	return v
}

// sum adds arg's non-NULL values into the groups' values.
func (a *valueState) sum(arg arrow.Array, gids []uint32) error {
	if err := a.checkKind(arg, true); err != nil {
		return err
	}
	vb, voff := validityOf(arg)
	switch a.k {
	case kInt64:
		if sumI64(a.i64, a.has, gids, values[int64](arg), vb, voff) {
			if a.dec {
				return fmt.Errorf("%w: SUM exceeds the 64-bit decimal range", plan.ErrDecimalOverflow)
			}
			return fmt.Errorf("%w: SUM exceeds int64", ErrIntegerOverflow)
		}
	case kFloat64:
		sumF64(a.f64, a.has, gids, values[float64](arg), vb, voff)
	case kDec128:
		if layoutOf(arg) == kInt64 {
			sumNarrowWide(a.w, a.has, gids, values[int64](arg), vb, voff)
		} else if sumWide(a.w, a.has, gids, values[decimal128.Num](arg), vb, voff) {
			return fmt.Errorf("%w: SUM exceeds the 128-bit decimal range", plan.ErrDecimalOverflow)
		}
	default:
		return fmt.Errorf("SUM over %s", arg.DataType())
	}
	return nil
}

// sumI64 adds x into sums by group; it reports int64 overflow.
func sumI64(sums []int64, has []bool, gids []uint32, x []int64, vb []byte, voff int) bool {
	var ovf int64
	if gids == nil {
		var s int64
		any := false
		if vb == nil {
			for _, v := range x {
				t := s + v
				ovf |= (s ^ t) & (v ^ t)
				s = t
			}
			any = len(x) > 0
		} else {
			for i, v := range x {
				if bit(vb, voff+i) {
					t := s + v
					ovf |= (s ^ t) & (v ^ t)
					s = t
					any = true
				}
			}
		}
		o := sums[0]
		t := o + s
		ovf |= (o ^ t) & (s ^ t)
		sums[0] = t
		has[0] = has[0] || any
		return ovf < 0
	}
	if vb == nil {
		for i, g := range gids {
			v := x[i]
			o := sums[g]
			t := o + v
			ovf |= (o ^ t) & (v ^ t)
			sums[g] = t
			has[g] = true
		}
		return ovf < 0
	}
	for i, g := range gids {
		if bit(vb, voff+i) {
			v := x[i]
			o := sums[g]
			t := o + v
			ovf |= (o ^ t) & (v ^ t)
			sums[g] = t
			has[g] = true
		}
	}
	return ovf < 0
}

func sumF64(sums []float64, has []bool, gids []uint32, x []float64, vb []byte, voff int) {
	if gids == nil {
		var s float64
		any := false
		for i, v := range x {
			if isValid(vb, voff, i) {
				s += v
				any = true
			}
		}
		sums[0] += s
		has[0] = has[0] || any
		return
	}
	for i, g := range gids {
		if isValid(vb, voff, i) {
			sums[g] += x[i]
			has[g] = true
		}
	}
}

// sumFrames is sum or avg over each row's frame (window.go): a segment
// tree of partial sums, checked for overflow; avg divides by the frame's
// count of non-NULL values.
func sumFrames(avg bool) func(in *frameInput) (arrow.Array, error) {
	return func(in *frameInput) (arrow.Array, error) {
		mem, t, n, x, vb, voff := in.mem, in.t, in.p.n, in.x, in.vb, in.voff
		if in.isNull {
			return makeNulls(mem, t, n), nil
		}
		valid, outBits := newOnes(mem, n)
		fail := func(err error) (arrow.Array, error) {
			valid.Release()
			return nil, err
		}
		// Integers and decimals sum in 128 bits: a sum of decimal(p,s) is
		// decimal(38,s) and of an integer decimal(38,0) (plan.SumType,
		// DuckDB's rule), and the input may be wide already (a sum over a
		// sum). avg of these sums here too, so a frame of ids near the
		// int64 limit does not overflow.
		if wt, ok := t.(*arrow.Decimal128Type); ok || layoutOf(x) == kDec128 || layoutOf(x) == kInt64 {
			scale := 0
			switch xt := x.DataType().(type) {
			case *arrow.Decimal128Type:
				scale = int(xt.Scale)
			case *arrow.Decimal64Type:
				scale = int(xt.Scale)
			}
			if ok {
				scale = int(wt.Scale)
			}
			xs, err := toWide(x, scale)
			if err != nil {
				return fail(err)
			}
			type acc struct {
				s        num
				overflow bool
			}
			tree := newSegTree(n, acc{}, func(i int) acc {
				if !isValid(vb, voff, i) {
					return acc{}
				}
				return acc{s: xs[i]}
			}, func(a, b acc) acc {
				s, over := add128(a.s, b.s)
				return acc{s: s, overflow: a.overflow || b.overflow || over || !fitsDigits(s, 38)}
			})
			if !avg {
				if !ok {
					return fail(fmt.Errorf("%s of %s as %s: want decimal(38, s)", in.call.Func, x.DataType(), t))
				}
				buf, v := newFixed[num](mem, n)
				for i := range v {
					f := in.rows(i)
					if in.count(f) == 0 {
						clearBit(outBits, i)
						continue
					}
					a := queryFrame(tree, f)
					if a.overflow {
						buf.Release()
						return fail(fmt.Errorf("%w: window sum does not fit decimal(38,%d)", plan.ErrDecimalOverflow, scale))
					}
					v[i] = a.s
				}
				return makeArray(t, n, valid, buf), nil
			}
			buf, v := newFixed[float64](mem, n)
			for i := range v {
				f := in.rows(i)
				c := in.count(f)
				if c == 0 {
					clearBit(outBits, i)
					continue
				}
				a := queryFrame(tree, f)
				if a.overflow {
					buf.Release()
					return fail(fmt.Errorf("%w: window avg", plan.ErrDecimalOverflow))
				}
				v[i] = avgWide(a.s, c, scale)
			}
			return makeArray(t, n, valid, buf), nil
		}
		switch layoutOf(x) {
		case kFloat64:
			xs := values[float64](x)
			tree := newSegTree(n, 0.0, func(i int) float64 {
				if !isValid(vb, voff, i) {
					return 0
				}
				return xs[i]
			}, func(a, b float64) float64 { return a + b })
			buf, v := newFixed[float64](mem, n)
			for i := range v {
				f := in.rows(i)
				c := in.count(f)
				if c == 0 {
					clearBit(outBits, i)
					continue
				}
				v[i] = queryFrame(tree, f)
				if avg {
					v[i] /= float64(c)
				}
			}
			return makeArray(t, n, valid, buf), nil
		}
		return fail(fmt.Errorf("%s of %s", in.call.Func, x.DataType()))
	}
}
