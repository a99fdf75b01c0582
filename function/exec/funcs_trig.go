package exec

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// moreFunctions: trigonometry, integer number theory, float classes,
// character codes and hashes, as DuckDB names and computes them.
func moreFunctions() []*ScalarFunction {
	f64, i64, str, boolean := plan.Float64Type, plan.Int64Type, plan.StringType, plan.BoolType
	unit := func(name string, f func(float64) float64) func(float64) (float64, error) {
		return func(x float64) (float64, error) {
			if x < -1 || x > 1 {
				return 0, fmt.Errorf("%s is undefined outside [-1,1]", strings.ToUpper(name))
			}
			return f(x), nil
		}
	}
	fclass := func(f func(float64) bool) Kernel {
		return func(c *Call) (arrow.Array, error) {
			a := c.Args[0]
			return eachRow(c, func(i int, o *out) error { o.boolean(f(a.Float(i))); return nil })
		}
	}
	intPair := func(f func(a, b int64) (int64, error)) Kernel {
		return func(c *Call) (arrow.Array, error) {
			a, b := c.Args[0], c.Args[1]
			return eachRow(c, func(i int, o *out) error {
				v, err := f(a.Int(i), b.Int(i))
				if err != nil {
					return err
				}
				o.i64(v)
				return nil
			})
		}
	}
	return []*ScalarFunction{
		{Name: "sin", Doc: "sine (radians)", Signatures: []Signature{sig(f64, tF)}, Kernel: f64Map(f64Ok(math.Sin))},
		{Name: "cos", Doc: "cosine (radians)", Signatures: []Signature{sig(f64, tF)}, Kernel: f64Map(f64Ok(math.Cos))},
		{Name: "tan", Doc: "tangent (radians)", Signatures: []Signature{sig(f64, tF)}, Kernel: f64Map(f64Ok(math.Tan))},
		{Name: "cot", Doc: "cotangent (radians)", Signatures: []Signature{sig(f64, tF)},
			Kernel: f64Map(f64Ok(func(x float64) float64 { return 1 / math.Tan(x) }))},
		{Name: "asin", Doc: "arcsine, in radians; an error outside [-1, 1]", Signatures: []Signature{sig(f64, tF)}, Kernel: f64Map(unit("asin", math.Asin))},
		{Name: "acos", Doc: "arccosine, in radians; an error outside [-1, 1]", Signatures: []Signature{sig(f64, tF)}, Kernel: f64Map(unit("acos", math.Acos))},
		{Name: "atan", Doc: "arctangent, in radians", Signatures: []Signature{sig(f64, tF)}, Kernel: f64Map(f64Ok(math.Atan))},
		{Name: "atan2", Doc: "the arctangent of y / x in radians, by the signs of both (atan2(y, x))", Signatures: []Signature{sig(f64, tF, tF)},
			Kernel: func(c *Call) (arrow.Array, error) {
				y, x := c.Args[0], c.Args[1]
				return eachRow(c, func(i int, o *out) error { o.f64(math.Atan2(y.Float(i), x.Float(i))); return nil })
			}},
		{Name: "degrees", Doc: "radians converted to degrees", Signatures: []Signature{sig(f64, tF)},
			Kernel: f64Map(f64Ok(func(x float64) float64 { return x * 180 / math.Pi }))},
		{Name: "radians", Doc: "degrees converted to radians", Signatures: []Signature{sig(f64, tF)},
			Kernel: f64Map(f64Ok(func(x float64) float64 { return x * math.Pi / 180 }))},
		{Name: "isnan", Doc: "whether the float is NaN", Signatures: []Signature{sig(boolean, tF)}, Kernel: fclass(math.IsNaN)},
		{Name: "isinf", Doc: "whether the float is infinite", Signatures: []Signature{sig(boolean, tF)},
			Kernel: fclass(func(x float64) bool { return math.IsInf(x, 0) })},
		{Name: "isfinite", Doc: "whether the float is neither infinite nor NaN", Signatures: []Signature{sig(boolean, tF)},
			Kernel: fclass(func(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) })},
		{Name: "gcd", Aliases: []string{"greatest_common_divisor"}, Doc: "the greatest common divisor (non-negative)",
			Signatures: []Signature{sig(i64, tI, tI)},
			Kernel:     intPair(func(a, b int64) (int64, error) { return gcd(a, b) })},
		{Name: "lcm", Aliases: []string{"least_common_multiple"}, Doc: "the least common multiple (non-negative); an error past int64",
			Signatures: []Signature{sig(i64, tI, tI)},
			Kernel: intPair(func(a, b int64) (int64, error) {
				if a == 0 || b == 0 {
					return 0, nil
				}
				g, err := gcd(a, b)
				if err != nil {
					return 0, err
				}
				q := a / g
				if q < 0 {
					q = -q
				}
				if b < 0 {
					b = -b
				}
				if q < 0 || b < 0 || q > math.MaxInt64/b {
					return 0, fmt.Errorf("lcm(%d, %d): %w", a, b, ErrIntegerOverflow)
				}
				return q * b, nil
			})},
		{Name: "divide", Doc: "x // y: the integer quotient of integers, truncated towards zero (NULL when y is 0)",
			Signatures: []Signature{sig(i64, tI, tI)}, NullOnValues: true,
			Kernel: func(c *Call) (arrow.Array, error) {
				a, b := c.Args[0], c.Args[1]
				return eachRow(c, func(i int, o *out) error {
					x, y := a.Int(i), b.Int(i)
					switch {
					case y == 0:
						o.null()
					case y == -1 && x == math.MinInt64:
						return fmt.Errorf("%d // -1: %w", x, ErrIntegerOverflow)
					default:
						o.i64(x / y)
					}
					return nil
				})
			}},
		{Name: "factorial", Doc: "n! (an error past 20!, the largest in int64)", Signatures: []Signature{sig(i64, tI)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a := c.Args[0]
				return eachRow(c, func(i int, o *out) error {
					n := a.Int(i)
					if n > 20 {
						return fmt.Errorf("factorial(%d): %w", n, ErrIntegerOverflow)
					}
					v := int64(1)
					for k := int64(2); k <= n; k++ {
						v *= k
					}
					o.i64(v)
					return nil
				})
			}},
		{Name: "ascii", Doc: "the Unicode code point of the first character (0 for the empty string)", Signatures: []Signature{sig(i64, tS)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a := c.Args[0]
				return eachRow(c, func(i int, o *out) error {
					r, _ := utf8.DecodeRuneInString(a.Str(i))
					if r == utf8.RuneError {
						r = 0
					}
					o.i64(int64(r))
					return nil
				})
			}},
		{Name: "chr", Doc: "the character of a Unicode code point", Signatures: []Signature{sig(str, tI)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a := c.Args[0]
				return eachRow(c, func(i int, o *out) error {
					v := a.Int(i)
					if v < 0 || v > utf8.MaxRune || !utf8.ValidRune(rune(v)) {
						return fmt.Errorf("chr(%d): not a valid code point", v)
					}
					o.str(string(rune(v)))
					return nil
				})
			}},
		{Name: "translate", Doc: "the string with each character of the second argument replaced by the character at the same place in the third (deleted when the third is shorter)",
			Signatures: []Signature{sig(str, tS, tS, tS)},
			Kernel: func(c *Call) (arrow.Array, error) {
				s, from, to := c.Args[0], c.Args[1], c.Args[2]
				return eachRow(c, func(i int, o *out) error { o.str(translate(s.Str(i), from.Str(i), to.Str(i))); return nil })
			}},
		{Name: "md5", Doc: "the MD5 digest of the string, as 32 hex digits", Signatures: []Signature{sig(str, tS)},
			Kernel: strMap(func(s string) string { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]) })},
		{Name: "sha256", Doc: "the SHA-256 digest of the string, as 64 hex digits", Signatures: []Signature{sig(str, tS)},
			Kernel: strMap(func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) })},
	}
}

// gcd is the non-negative greatest common divisor; gcd(0, 0) = 0.
func gcd(a, b int64) (int64, error) {
	for b != 0 {
		a, b = b, a%b
	}
	if a == math.MinInt64 {
		return 0, fmt.Errorf("gcd: %w", ErrIntegerOverflow)
	}
	if a < 0 {
		a = -a
	}
	return a, nil
}

// translate replaces each rune of s found in from by the rune at the same
// index of to, deleting it when to is shorter (Postgres and DuckDB).
func translate(s, from, to string) string {
	fr, tr := []rune(from), []rune(to)
	m := make(map[rune]int, len(fr))
	for i := len(fr) - 1; i >= 0; i-- {
		m[fr[i]] = i // the first occurrence wins
	}
	var b strings.Builder
	for _, r := range s {
		k, ok := m[r]
		switch {
		case !ok:
			b.WriteRune(r)
		case k < len(tr):
			b.WriteRune(tr[k])
		}
	}
	return b.String()
}
