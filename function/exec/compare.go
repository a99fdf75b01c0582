package exec

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// commonType is the type two operands of a comparison are converted to when
// the planner did not already make them equal.
func commonType(a, b plan.DataType) (plan.DataType, error) {
	switch {
	case sameType(a, b):
		return a, nil
	case a.ID == plan.Float64 && b.IsNumeric(), b.ID == plan.Float64 && a.IsNumeric():
		return plan.Float64Type, nil
	case a.ID == plan.Decimal && (b.ID == plan.Decimal || b.ID == plan.Int64),
		b.ID == plan.Decimal && a.ID == plan.Int64:
		if a.Wide() || b.Wide() {
			return plan.DecimalType(plan.MaxDecimalPrecision, max(decScale(a), decScale(b))), nil
		}
		return plan.DecimalType(18, max(decScale(a), decScale(b))), nil
	case a.ID == plan.Timestamp && (b.ID == plan.String || b.ID == plan.Date):
		return a, nil
	case b.ID == plan.Timestamp && (a.ID == plan.String || a.ID == plan.Date):
		return b, nil
	case a.ID == plan.Date && b.ID == plan.String:
		return a, nil
	case b.ID == plan.Date && a.ID == plan.String:
		return b, nil
	}
	return plan.DataType{}, fmt.Errorf("cannot compare %s with %s", a, b)
}

func (ev *evaluator) compare(op plan.Op, a, b vec) (arrow.Array, error) {
	t, err := commonType(a.t, b.t)
	if err != nil {
		return nil, err
	}
	a, err = ev.converted(a, t)
	if err != nil {
		return nil, err
	}
	defer a.release()
	b, err = ev.converted(b, t)
	if err != nil {
		return nil, err
	}
	defer b.release()
	if a.scalar() {
		a, b = b, a
		op = op.Flipped()
	}
	n := ev.n
	valid := andValidity(ev.mem, n, a.arr, arrOf(b))
	vbuf, out := newBitmap(ev.mem, n)
	fail := func(err error) (arrow.Array, error) {
		vbuf.Release()
		if valid != nil {
			valid.Release()
		}
		return nil, err
	}
	switch kindOfType(t) {
	case kInt64:
		cmpFixed(op, a, b, b.lit.I, out)
	case kFloat64:
		cmpFixed(op, a, b, b.lit.F, out)
		totalOrderNaN(op, a, b, out)
	case kDate:
		cmpFixed(op, a, b, int32(b.lit.I), out)
	case kDec128:
		cmpWide(op, a.arr, b, out)
	case kString:
		offs, data := strOffsets(a.arr)
		if b.scalar() {
			cmpStrAS(op, offs, data, b.lit.S, out)
		} else {
			boffs, bdata := strOffsets(b.arr)
			cmpStrAA(op, offs, data, boffs, bdata, out)
		}
	case kNested:
		// Nested values compare by their key encodings (NULLs inside are
		// equal and sort last, as in DuckDB); a NULL literal leaves every
		// row NULL.
		if b.scalar() {
			break
		}
		ea, err := kernel.EncodeKeys(ev.mem, a.arr)
		if err != nil {
			return fail(err)
		}
		defer ea.Release()
		eb, err := kernel.EncodeKeys(ev.mem, b.arr)
		if err != nil {
			return fail(err)
		}
		defer eb.Release()
		offs, data := strOffsets(ea)
		boffs, bdata := strOffsets(eb)
		cmpStrAA(op, offs, data, boffs, bdata, out)
	case kBool:
		bs, off := bitsOf(a.arr)
		x := alignedBits(bs, off, n)
		var y []byte
		if b.scalar() {
			y = make([]byte, len(x))
			if b.lit.B {
				for i := range y {
					y[i] = 0xff
				}
			}
		} else {
			bs, off := bitsOf(b.arr)
			y = alignedBits(bs, off, n)
		}
		cmpBits(op, x, y, out)
	default:
		return fail(fmt.Errorf("cannot compare values of type %s", t))
	}
	return makeArray(arrow.FixedWidthTypes.Boolean, n, valid, vbuf), nil
}

// cmpFixed compares the fixed-width values of array a with b: an array, or
// the literal c.
func cmpFixed[T int64 | float64 | int32](op plan.Op, a, b vec, c T, out []byte) {
	x := values[T](a.arr)
	if b.scalar() {
		cmpAS(op, x, c, out)
		return
	}
	cmpAA(op, x, values[T](b.arr), out)
}

func cmpBits(op plan.Op, x, y, out []byte) {
	for i := range out {
		a, b := x[i], y[i]
		switch op {
		case plan.OpEq:
			out[i] = ^(a ^ b)
		case plan.OpNe:
			out[i] = a ^ b
		case plan.OpLt:
			out[i] = ^a & b
		case plan.OpLe:
			out[i] = ^a | b
		case plan.OpGt:
			out[i] = a &^ b
		case plan.OpGe:
			out[i] = a | ^b
		}
	}
}

func cmpResult(op plan.Op, c int) bool {
	switch op {
	case plan.OpEq:
		return c == 0
	case plan.OpNe:
		return c != 0
	case plan.OpLt:
		return c < 0
	case plan.OpLe:
		return c <= 0
	case plan.OpGt:
		return c > 0
	case plan.OpGe:
		return c >= 0
	}
	return false
}

// cmpStrAS compares each string with the literal c.
func cmpStrAS(op plan.Op, offs []int32, data []byte, c string, out []byte) {
	n := len(offs) - 1
	switch op {
	case plan.OpEq, plan.OpNe:
		eq := op == plan.OpEq
		for i := 0; i < n; i++ {
			s := data[offs[i]:offs[i+1]]
			if (len(s) == len(c) && string(s) == c) == eq {
				out[i>>3] |= 1 << (uint(i) & 7)
			}
		}
	default:
		cb := []byte(c)
		for i := 0; i < n; i++ {
			if cmpResult(op, bytes.Compare(data[offs[i]:offs[i+1]], cb)) {
				out[i>>3] |= 1 << (uint(i) & 7)
			}
		}
	}
}

func cmpStrAA(op plan.Op, ao []int32, ad []byte, bo []int32, bd []byte, out []byte) {
	n := len(ao) - 1
	switch op {
	case plan.OpEq, plan.OpNe:
		eq := op == plan.OpEq
		for i := 0; i < n; i++ {
			if bytes.Equal(ad[ao[i]:ao[i+1]], bd[bo[i]:bo[i+1]]) == eq {
				out[i>>3] |= 1 << (uint(i) & 7)
			}
		}
	default:
		for i := 0; i < n; i++ {
			if cmpResult(op, bytes.Compare(ad[ao[i]:ao[i+1]], bd[bo[i]:bo[i+1]])) {
				out[i>>3] |= 1 << (uint(i) & 7)
			}
		}
	}
}

// totalOrderNaN redoes the comparisons that involve a NaN in DuckDB's
// total order of floats, where NaN equals NaN and is greater than every
// other value (IEEE 754 makes every comparison with NaN false but !=).
// Without a NaN on either side it only scans.
func totalOrderNaN(op plan.Op, a, b vec, out []byte) {
	x := values[float64](a.arr)
	var y []float64
	c := b.lit.F
	if !b.scalar() {
		y = values[float64](b.arr)
	}
	for i, v := range x {
		w := c
		if y != nil {
			w = y[i]
		}
		if v == v && w == w {
			continue
		}
		var r bool
		switch d := cmpFloat(v, w); op {
		case plan.OpEq:
			r = d == 0
		case plan.OpNe:
			r = d != 0
		case plan.OpLt:
			r = d < 0
		case plan.OpLe:
			r = d <= 0
		case plan.OpGt:
			r = d > 0
		case plan.OpGe:
			r = d >= 0
		default:
			continue
		}
		if r {
			out[i>>3] |= 1 << (uint(i) & 7)
		} else {
			out[i>>3] &^= 1 << (uint(i) & 7)
		}
	}
}
