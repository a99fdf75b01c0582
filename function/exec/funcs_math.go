package exec

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// sameAsFirst is the return rule "the type of the first argument".
func sameAsFirst(args []plan.DataType) plan.DataType { return args[0] }

// decimalScale0 is the return rule of floor/ceil/round on a decimal:
// decimal(p, 0), as in DuckDB.
func decimalScale0(args []plan.DataType) plan.DataType {
	return plan.DecimalType(args[0].Precision, 0)
}

// numericOverloads gives an int64, a decimal and a float64 overload that
// keep their input type.
func numericOverloads(extra ...plan.TypeID) []Signature {
	var out []Signature
	for _, t := range []plan.TypeID{tI, tDec, tF} {
		out = append(out, Signature{Params: append([]plan.TypeID{t}, extra...), Return: sameAsFirst})
	}
	return out
}

func f64Map(f func(float64) (float64, error)) Kernel {
	return func(c *Call) (arrow.Array, error) {
		a := c.Args[0]
		return eachRow(c, func(i int, o *out) error {
			v, err := f(a.Float(i))
			if err != nil {
				return err
			}
			o.f64(v)
			return nil
		})
	}
}

func f64Ok(f func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) { return f(x), nil }
}

// roundKind selects how roundKernel rounds to a multiple of 10^-n.
type roundKind int

const (
	roundHalfAway roundKind = iota // round: half away from zero, as DuckDB
	roundFloor
	roundCeil
	roundTrunc
)

func roundFloat(x float64, k roundKind) float64 {
	switch k {
	case roundFloor:
		return math.Floor(x)
	case roundCeil:
		return math.Ceil(x)
	case roundTrunc:
		return math.Trunc(x)
	}
	return math.Round(x)
}

// roundUnscaled rounds the unscaled decimal v from scale s to a multiple of
// 10^drop units.
func roundUnscaled(v int64, drop int, k roundKind) int64 {
	if drop <= 0 {
		return v
	}
	if drop > 18 {
		return 0
	}
	p := int64(1)
	for ; drop > 0; drop-- {
		p *= 10
	}
	q, r := v/p, v%p
	switch k {
	case roundFloor:
		if r < 0 {
			q--
		}
	case roundCeil:
		if r > 0 {
			q++
		}
	case roundHalfAway:
		if 2*r >= p {
			q++
		} else if 2*r <= -p {
			q--
		}
	}
	return q
}

// roundKernel implements round/floor/ceil/trunc with an optional digits
// argument: ints stay ints, decimals are rounded exactly, floats in
// float64.
func roundKernel(k roundKind) Kernel {
	return func(c *Call) (arrow.Array, error) {
		a := c.Args[0]
		digits := func(i int) int64 {
			if len(c.Args) > 1 {
				return c.Args[1].Int(i)
			}
			return 0
		}
		switch a.Type().ID {
		case plan.Int64:
			return eachRow(c, func(i int, o *out) error {
				v, d := a.Int(i), digits(i)
				if d < 0 {
					p := int64(math.Pow10(int(min(-d, 18))))
					v = roundUnscaled(v, int(-d), k) * p
				}
				o.i64(v)
				return nil
			})
		case plan.Decimal:
			in := a.Type().Scale
			return eachRow(c, func(i int, o *out) error {
				d := digits(i)
				v := roundUnscaled(a.Int(i), in-int(max(min(d, int64(in)), -18)), k)
				// v is now in units of 10^-d; bring it to the result scale.
				have := int(min(d, int64(in)))
				want := c.Type.Scale
				for ; have < want; have++ {
					v *= 10
				}
				for ; have > want; have-- {
					v /= 10
				}
				o.i64(v)
				return nil
			})
		}
		return eachRow(c, func(i int, o *out) error {
			x, d := a.Float(i), digits(i)
			if d == 0 {
				o.f64(roundFloat(x, k))
				return nil
			}
			p := math.Pow10(int(d))
			r := roundFloat(x*p, k) / p
			if math.IsInf(x*p, 0) {
				r = x
			}
			o.f64(r)
			return nil
		})
	}
}

func mathFunctions() []*ScalarFunction {
	f64 := plan.Float64Type
	roundSigs := func() []Signature {
		return []Signature{
			{Params: []plan.TypeID{tI}, Return: sameAsFirst},
			{Params: []plan.TypeID{tDec}, Return: decimalScale0, ReturnDoc: "decimal(p, 0)"},
			{Params: []plan.TypeID{tF}, Return: sameAsFirst},
		}
	}
	return []*ScalarFunction{
		{Name: "abs", Doc: "absolute value", Signatures: numericOverloads(),
			Kernel: func(c *Call) (arrow.Array, error) {
				a := c.Args[0]
				if a.Type().ID == plan.Float64 {
					return eachRow(c, func(i int, o *out) error { o.f64(math.Abs(a.Float(i))); return nil })
				}
				return eachRow(c, func(i int, o *out) error {
					v := a.Int(i)
					if v == math.MinInt64 {
						return ErrIntegerOverflow
					}
					if v < 0 {
						v = -v
					}
					o.i64(v)
					return nil
				})
			}},
		{Name: "sign", Doc: "-1, 0 or 1 by the sign of the argument",
			Signatures: []Signature{sig(plan.Int64Type, tI), sig(plan.Int64Type, tDec), sig(plan.Int64Type, tF)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a := c.Args[0]
				return eachRow(c, func(i int, o *out) error {
					x := a.Float(i)
					switch {
					case x > 0:
						o.i64(1)
					case x < 0:
						o.i64(-1)
					default:
						o.i64(0)
					}
					return nil
				})
			}},
		{Name: "round", Doc: "rounds half away from zero, to n decimal places (default 0; negative: tens, hundreds...)",
			Signatures: append(roundSigs(),
				Signature{Params: []plan.TypeID{tI, tI}, Return: sameAsFirst},
				Signature{Params: []plan.TypeID{tDec, tI}, Return: sameAsFirst},
				Signature{Params: []plan.TypeID{tF, tI}, Return: sameAsFirst}),
			Kernel: roundKernel(roundHalfAway)},
		{Name: "floor", Doc: "the largest integer not above the argument", Signatures: roundSigs(), Kernel: roundKernel(roundFloor)},
		{Name: "ceil", Aliases: []string{"ceiling"}, Doc: "the smallest integer not below the argument", Signatures: roundSigs(), Kernel: roundKernel(roundCeil)},
		{Name: "trunc", Doc: "rounds toward zero (to n decimal places)",
			Signatures: append(roundSigs(),
				Signature{Params: []plan.TypeID{tI, tI}, Return: sameAsFirst},
				Signature{Params: []plan.TypeID{tDec, tI}, Return: sameAsFirst},
				Signature{Params: []plan.TypeID{tF, tI}, Return: sameAsFirst}),
			Kernel: roundKernel(roundTrunc)},
		{Name: "power", Aliases: []string{"pow"}, Doc: "x raised to the power y",
			Signatures: []Signature{sig(f64, tF, tF)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a, b := c.Args[0], c.Args[1]
				return eachRow(c, func(i int, o *out) error { o.f64(math.Pow(a.Float(i), b.Float(i))); return nil })
			}},
		{Name: "sqrt", Doc: "square root", Signatures: []Signature{sig(f64, tF)},
			Kernel: f64Map(func(x float64) (float64, error) {
				if x < 0 {
					return 0, fmt.Errorf("cannot take the square root of a negative number")
				}
				return math.Sqrt(x), nil
			})},
		{Name: "cbrt", Doc: "cube root", Signatures: []Signature{sig(f64, tF)}, Kernel: f64Map(f64Ok(math.Cbrt))},
		{Name: "ln", Doc: "natural logarithm", Signatures: []Signature{sig(f64, tF)}, Kernel: f64Map(logOf(math.Log))},
		{Name: "log10", Doc: "base-10 logarithm", Signatures: []Signature{sig(f64, tF)}, Kernel: f64Map(logOf(math.Log10))},
		{Name: "log2", Doc: "base-2 logarithm", Signatures: []Signature{sig(f64, tF)}, Kernel: f64Map(logOf(math.Log2))},
		{Name: "log", Doc: "log(x): base-10 logarithm (as DuckDB); log(b, x): logarithm of x in base b",
			Signatures: []Signature{sig(f64, tF), sig(f64, tF, tF)},
			Kernel: func(c *Call) (arrow.Array, error) {
				if len(c.Args) == 1 {
					return f64Map(logOf(math.Log10))(c)
				}
				b, x := c.Args[0], c.Args[1]
				return eachRow(c, func(i int, o *out) error {
					lb, err := logOf(math.Log)(b.Float(i))
					if err != nil {
						return err
					}
					lx, err := logOf(math.Log)(x.Float(i))
					if err != nil {
						return err
					}
					o.f64(lx / lb)
					return nil
				})
			}},
		{Name: "exp", Doc: "e raised to the argument", Signatures: []Signature{sig(f64, tF)}, Kernel: f64Map(f64Ok(math.Exp))},
		{Name: "pi", Doc: "the constant pi", Signatures: []Signature{sig(f64)},
			Kernel: func(c *Call) (arrow.Array, error) {
				return eachRow(c, func(i int, o *out) error { o.f64(math.Pi); return nil })
			}},
		{Name: "mod", Doc: "remainder of x / y with the sign of x; NULL when y is 0",
			Signatures:   []Signature{sig(plan.Int64Type, tI, tI), sig(f64, tF, tF)},
			NullOnValues: true,
			Kernel: func(c *Call) (arrow.Array, error) {
				a, b := c.Args[0], c.Args[1]
				if c.Type.ID == plan.Int64 {
					return eachRow(c, func(i int, o *out) error {
						if b.Int(i) == 0 {
							o.null()
						} else if b.Int(i) == -1 {
							o.i64(0)
						} else {
							o.i64(a.Int(i) % b.Int(i))
						}
						return nil
					})
				}
				return eachRow(c, func(i int, o *out) error {
					if b.Float(i) == 0 {
						o.null()
					} else {
						o.f64(math.Mod(a.Float(i), b.Float(i)))
					}
					return nil
				})
			}},
		{Name: "greatest", Doc: "the largest argument, ignoring NULLs (NULL when all are)",
			Signatures: []Signature{{Params: []plan.TypeID{SameType}, Variadic: true, Return: sameAsFirst, ReturnDoc: "T"}},
			Nulls:      NullCustom, Kernel: extremeKernel(1)},
		{Name: "least", Doc: "the smallest argument, ignoring NULLs (NULL when all are)",
			Signatures: []Signature{{Params: []plan.TypeID{SameType}, Variadic: true, Return: sameAsFirst, ReturnDoc: "T"}},
			Nulls:      NullCustom, Kernel: extremeKernel(-1)},
	}
}

func logOf(f func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) {
		switch {
		case x == 0:
			return 0, fmt.Errorf("cannot take the logarithm of zero")
		case x < 0:
			return 0, fmt.Errorf("cannot take the logarithm of a negative number")
		}
		return f(x), nil
	}
}

// extremeKernel picks, per row, the greatest (dir 1) or least (dir -1)
// non-NULL argument; all arguments have the result type.
func extremeKernel(dir int) Kernel {
	return func(c *Call) (arrow.Array, error) {
		o := newOut(c.Mem, c.Type, c.N)
		for i := 0; i < c.N; i++ {
			best := -1
			for k, a := range c.Args {
				if a.Null(i) {
					continue
				}
				if best < 0 || compareDatums(a, c.Args[best], i)*dir > 0 {
					best = k
				}
			}
			if best < 0 {
				o.null()
				continue
			}
			appendDatum(o, c.Args[best], i)
		}
		return o.finish(), nil
	}
}

// compareDatums compares row i of two datums of the same type.
func compareDatums(a, b Datum, i int) int {
	switch a.Type().ID {
	case plan.Float64:
		// NaN is above every number, as in ORDER BY and DuckDB: greatest
		// of a NaN is NaN, least skips it.
		return cmpFloat(a.Float(i), b.Float(i))
	case plan.String:
		return cmpOrdered(a.Str(i), b.Str(i))
	case plan.Bool:
		return cmpOrdered(b2i(a.Bool(i)), b2i(b.Bool(i)))
	}
	return cmpOrdered(a.Int(i), b.Int(i))
}

func cmpOrdered[T int | int64 | float64 | string](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// appendDatum appends row i of d (of the output's type) to o.
func appendDatum(o *out, d Datum, i int) {
	switch o.t.ID {
	case plan.Float64:
		o.f64(d.Float(i))
	case plan.String:
		o.str(d.Str(i))
	case plan.Bool:
		o.boolean(d.Bool(i))
	default:
		o.i64(d.Int(i))
	}
}
