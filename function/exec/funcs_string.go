package exec

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// Short names of parameter types for the signature tables.
const (
	tS   = plan.String
	tI   = plan.Int64
	tF   = plan.Float64
	tB   = plan.Bool
	tD   = plan.Date
	tDec = plan.Decimal
	tNum = NumericType
)

func sig(ret plan.DataType, params ...plan.TypeID) Signature {
	return Signature{Params: params, Returns: ret}
}

func variadic(ret plan.DataType, params ...plan.TypeID) Signature {
	return Signature{Params: params, Returns: ret, Variadic: true}
}

// strMap is the kernel of a string -> string function.
func strMap(f func(string) string) Kernel {
	return func(c *Call) (arrow.Array, error) {
		a := c.Args[0]
		return eachRow(c, func(i int, o *out) error { o.str(f(a.Str(i))); return nil })
	}
}

func stringFunctions() []*ScalarFunction {
	str := plan.StringType
	return []*ScalarFunction{
		{Name: "upper", Aliases: []string{"ucase"}, Doc: "the string in upper case",
			Signatures: []Signature{sig(str, tS)}, Kernel: strMap(upperString)},
		{Name: "lower", Aliases: []string{"lcase"}, Doc: "the string in lower case",
			Signatures: []Signature{sig(str, tS)}, Kernel: strMap(strings.ToLower)},
		{Name: "length", Aliases: []string{"char_length", "character_length", "len"}, Doc: "the number of characters of a string, or of elements of a list",
			Signatures: []Signature{sig(plan.Int64Type, tS), {Params: []plan.TypeID{plan.List}, Returns: plan.Int64Type}}, Nested: true,
			Kernel: func(c *Call) (arrow.Array, error) {
				a := c.Args[0]
				if a.t.ID == plan.List {
					return listLengthKernel(c)
				}
				return eachRow(c, func(i int, o *out) error { o.i64(int64(utf8.RuneCountInString(a.Str(i)))); return nil })
			}},
		{Name: "strlen", Aliases: []string{"octet_length"}, Doc: "the number of bytes (of the UTF-8 encoding; length counts characters)",
			Signatures: []Signature{sig(plan.Int64Type, tS)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a := c.Args[0]
				return eachRow(c, func(i int, o *out) error { o.i64(int64(len(a.Str(i)))); return nil })
			}},
		{Name: "trim", Aliases: []string{"btrim"}, Doc: "removes the characters (default: spaces) from both ends",
			Signatures: []Signature{sig(str, tS), sig(str, tS, tS)}, Kernel: trimKernel(strings.Trim)},
		{Name: "ltrim", Doc: "removes the characters (default: spaces) from the start",
			Signatures: []Signature{sig(str, tS), sig(str, tS, tS)}, Kernel: trimKernel(strings.TrimLeft)},
		{Name: "rtrim", Doc: "removes the characters (default: spaces) from the end",
			Signatures: []Signature{sig(str, tS), sig(str, tS, tS)}, Kernel: trimKernel(strings.TrimRight)},
		{Name: "concat", Doc: "the arguments as strings, one after the other; NULLs are skipped",
			Signatures: []Signature{variadic(str, ToString)}, Nulls: NullCustom, Kernel: concatKernel(false)},
		{Name: "concat_ws", Doc: "the arguments after the first, joined by the first; NULLs are skipped",
			Signatures: []Signature{variadic(str, tS, ToString)}, Nulls: NullCustom, Kernel: concatKernel(true)},
		{Name: "||", Doc: "string concatenation operator: NULL if either side is NULL",
			Signatures: []Signature{sig(str, ToString, ToString)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a, b := c.Args[0], c.Args[1]
				return eachRow(c, func(i int, o *out) error { o.str(a.Str(i) + b.Str(i)); return nil })
			}},
		{Name: "replace", Doc: "replaces every occurrence of the second argument by the third",
			Signatures: []Signature{sig(str, tS, tS, tS)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a, f, t := c.Args[0], c.Args[1], c.Args[2]
				return eachRow(c, func(i int, o *out) error {
					if f.Str(i) == "" { // as DuckDB: nothing to replace
						o.str(a.Str(i))
						return nil
					}
					o.str(strings.ReplaceAll(a.Str(i), f.Str(i), t.Str(i)))
					return nil
				})
			}},
		{Name: "strpos", Aliases: []string{"position", "instr"}, Doc: "1-based character position of the second argument in the first, 0 if absent",
			Signatures: []Signature{sig(plan.Int64Type, tS, tS)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a, b := c.Args[0], c.Args[1]
				return eachRow(c, func(i int, o *out) error {
					h := a.Str(i)
					k := strings.Index(h, b.Str(i))
					if k < 0 {
						o.i64(0)
					} else {
						o.i64(int64(utf8.RuneCountInString(h[:k])) + 1)
					}
					return nil
				})
			}},
		{Name: "left", Doc: "the first n characters (all but the last -n when n < 0)",
			Signatures: []Signature{sig(str, tS, tI)}, Kernel: leftRight(true)},
		{Name: "right", Doc: "the last n characters (all but the first -n when n < 0)",
			Signatures: []Signature{sig(str, tS, tI)}, Kernel: leftRight(false)},
		{Name: "lpad", Doc: "pads the string on the left with the fill to n characters (truncates when longer)",
			Signatures: []Signature{sig(str, tS, tI, tS)}, Kernel: padKernel(true)},
		{Name: "rpad", Doc: "pads the string on the right with the fill to n characters (truncates when longer)",
			Signatures: []Signature{sig(str, tS, tI, tS)}, Kernel: padKernel(false)},
		{Name: "split_part", Doc: "the n-th (1-based; negative: from the end) field of the string split by the delimiter, '' when out of range",
			Signatures: []Signature{sig(str, tS, tS, tI)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a, d, n := c.Args[0], c.Args[1], c.Args[2]
				return eachRow(c, func(i int, o *out) error {
					var parts []string
					if d.Str(i) == "" { // as DuckDB: split into characters
						for _, r := range a.Str(i) {
							parts = append(parts, string(r))
						}
					} else {
						parts = strings.Split(a.Str(i), d.Str(i))
					}
					k := n.Int(i)
					switch {
					case k > 0 && k <= int64(len(parts)):
						o.str(parts[k-1])
					case k < 0 && -k <= int64(len(parts)):
						o.str(parts[int64(len(parts))+k])
					case k == 0:
						return fmt.Errorf("field position must not be zero")
					default:
						o.str("")
					}
					return nil
				})
			}},
		{Name: "starts_with", Doc: "whether the string starts with the prefix",
			Signatures: []Signature{sig(plan.BoolType, tS, tS)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a, p := c.Args[0], c.Args[1]
				return eachRow(c, func(i int, o *out) error { o.boolean(strings.HasPrefix(a.Str(i), p.Str(i))); return nil })
			}},
		{Name: "ends_with", Aliases: []string{"suffix"}, Doc: "whether the string ends with the suffix",
			Signatures: []Signature{sig(plan.BoolType, tS, tS)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a, p := c.Args[0], c.Args[1]
				return eachRow(c, func(i int, o *out) error { o.boolean(strings.HasSuffix(a.Str(i), p.Str(i))); return nil })
			}},
		{Name: "contains", Doc: "whether the string contains the second argument",
			Signatures: []Signature{sig(plan.BoolType, tS, tS)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a, p := c.Args[0], c.Args[1]
				return eachRow(c, func(i int, o *out) error { o.boolean(strings.Contains(a.Str(i), p.Str(i))); return nil })
			}},
		{Name: "reverse", Doc: "the characters in reverse order",
			Signatures: []Signature{sig(str, tS)}, Kernel: strMap(reverseString)},
		{Name: "repeat", Doc: "the string repeated n times ('' when n <= 0)",
			Signatures: []Signature{sig(str, tS, tI)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a, n := c.Args[0], c.Args[1]
				return eachRow(c, func(i int, o *out) error {
					k := n.Int(i)
					if k <= 0 {
						o.str("")
						return nil
					}
					if int64(len(a.Str(i)))*k > 1<<28 {
						return fmt.Errorf("result of %d bytes is too large", int64(len(a.Str(i)))*k)
					}
					o.str(strings.Repeat(a.Str(i), int(k)))
					return nil
				})
			}},
		{Name: "regexp_matches", Doc: "whether the regular expression (RE2) matches anywhere in the string; options: i (case-insensitive), s, m",
			Signatures: []Signature{sig(plan.BoolType, tS, tS), sig(plan.BoolType, tS, tS, tS)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a := c.Args[0]
				re := newRegexCache(c, 1, 2)
				return eachRow(c, func(i int, o *out) error {
					r, _, err := re.at(i)
					if err != nil {
						return err
					}
					o.boolean(r.MatchString(a.Str(i)))
					return nil
				})
			}},
		{Name: "regexp_extract", Doc: "the part of the string the regular expression's group (default 0: the whole match) matched first, '' when it does not match; options as regexp_matches",
			Signatures: []Signature{sig(str, tS, tS), sig(str, tS, tS, tI), sig(str, tS, tS, tI, tS)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a := c.Args[0]
				re := newRegexCache(c, 1, 3)
				return eachRow(c, func(i int, o *out) error {
					r, _, err := re.at(i)
					if err != nil {
						return err
					}
					g := int64(0)
					if len(c.Args) > 2 {
						g = c.Args[2].Int(i)
					}
					if g < 0 || g > int64(r.NumSubexp()) {
						return fmt.Errorf("regexp_extract: group %d out of range: the expression has %d groups", g, r.NumSubexp())
					}
					m := r.FindStringSubmatchIndex(a.Str(i))
					if m == nil || m[2*g] < 0 {
						o.str("")
						return nil
					}
					o.str(a.Str(i)[m[2*g]:m[2*g+1]])
					return nil
				})
			}},
		{Name: "regexp_replace", Doc: "replaces the first match (every match with option g) of the regular expression; \\1 in the replacement is a group",
			Signatures: []Signature{sig(str, tS, tS, tS), sig(str, tS, tS, tS, tS)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a, rep := c.Args[0], c.Args[2]
				re := newRegexCache(c, 1, 3)
				return eachRow(c, func(i int, o *out) error {
					r, global, err := re.at(i)
					if err != nil {
						return err
					}
					o.str(regexReplace(r, a.Str(i), goReplacement(rep.Str(i)), global))
					return nil
				})
			}},
	}
}

func trimKernel(f func(string, string) string) Kernel {
	return func(c *Call) (arrow.Array, error) {
		a := c.Args[0]
		return eachRow(c, func(i int, o *out) error {
			cut := " "
			if len(c.Args) > 1 {
				cut = c.Args[1].Str(i)
			}
			o.str(f(a.Str(i), cut))
			return nil
		})
	}
}

func concatKernel(withSep bool) Kernel {
	return func(c *Call) (arrow.Array, error) {
		o := newOut(c.Mem, c.Type, c.N)
		args := c.Args
		var b strings.Builder
		for i := 0; i < c.N; i++ {
			sep := ""
			vals := args
			if withSep {
				if args[0].Null(i) {
					o.null()
					continue
				}
				sep, vals = args[0].Str(i), args[1:]
			}
			b.Reset()
			first := true
			for _, a := range vals {
				if a.Null(i) {
					continue
				}
				if !first {
					b.WriteString(sep)
				}
				first = false
				b.WriteString(a.Str(i))
			}
			o.str(b.String())
		}
		return o.finish(), nil
	}
}

// runePrefix returns the byte length of the first n characters of s.
func runePrefix(s string, n int64) int {
	if n <= 0 {
		return 0
	}
	for k := range s {
		if n == 0 {
			return k
		}
		n--
	}
	return len(s)
}

func leftRight(left bool) Kernel {
	return func(c *Call) (arrow.Array, error) {
		a, n := c.Args[0], c.Args[1]
		return eachRow(c, func(i int, o *out) error {
			str, k := a.Str(i), n.Int(i)
			total := int64(utf8.RuneCountInString(str))
			if k < 0 {
				k = max(total+k, 0)
			}
			k = min(k, total)
			if left {
				o.str(str[:runePrefix(str, k)])
			} else {
				o.str(str[runePrefix(str, total-k):])
			}
			return nil
		})
	}
}

func padKernel(leftSide bool) Kernel {
	return func(c *Call) (arrow.Array, error) {
		a, n, fill := c.Args[0], c.Args[1], c.Args[2]
		return eachRow(c, func(i int, o *out) error {
			str, k, f := a.Str(i), n.Int(i), fill.Str(i)
			if k < 0 {
				k = 0
			}
			if k > 1<<28 {
				return fmt.Errorf("length %d is too large", k)
			}
			have := int64(utf8.RuneCountInString(str))
			if have >= k {
				o.str(str[:runePrefix(str, k)])
				return nil
			}
			if f == "" {
				return fmt.Errorf("insufficient padding: the fill is empty")
			}
			fr := []rune(f)
			pad := make([]rune, 0, k-have)
			for int64(len(pad)) < k-have {
				pad = append(pad, fr[len(pad)%len(fr)])
			}
			if leftSide {
				o.str(string(pad) + str)
			} else {
				o.str(str + string(pad))
			}
			return nil
		})
	}
}

// upperString upper-cases as DuckDB does (ß becomes ẞ, not SS or ß).
func upperString(s string) string {
	return strings.Map(func(r rune) rune {
		if r == 'ß' {
			return 'ẞ'
		}
		return unicode.ToUpper(r)
	}, s)
}

func reverseString(s string) string {
	r := []rune(s)
	for a, b := 0, len(r)-1; a < b; a, b = a+1, b-1 {
		r[a], r[b] = r[b], r[a]
	}
	return string(r)
}

// regexCache compiles a pattern argument once when it is constant (the
// usual case) and per row otherwise.
type regexCache struct {
	c          *Call
	pat, opt   int
	re         *regexp.Regexp
	global     bool
	err        error
	constant   bool
	lastSource string
}

func newRegexCache(c *Call, pat, opt int) *regexCache {
	rc := &regexCache{c: c, pat: pat, opt: opt}
	rc.constant = c.Args[pat].Const() && (len(c.Args) <= opt || c.Args[opt].Const())
	if rc.constant && !c.Args[pat].Null(0) {
		rc.compile(0)
	}
	return rc
}

func (rc *regexCache) compile(i int) {
	src, opts := rc.c.Args[rc.pat].Str(i), ""
	if len(rc.c.Args) > rc.opt {
		opts = rc.c.Args[rc.opt].Str(i)
	}
	flags := ""
	rc.global = false
	for _, o := range opts {
		switch o {
		case 'i':
			flags += "i"
		case 's':
			flags += "s"
		case 'm', 'n', 'p':
			flags += "m"
		case 'c':
		case 'g':
			rc.global = true
		default:
			rc.re, rc.err = nil, fmt.Errorf("unknown regular expression option %q", o)
			return
		}
	}
	if flags != "" {
		src = "(?" + flags + ")" + src
	}
	rc.re, rc.err = regexp.Compile(src)
	if rc.err != nil {
		rc.err = fmt.Errorf("invalid regular expression %q: %w", rc.c.Args[rc.pat].Str(i), rc.err)
	}
	rc.lastSource = src
}

func (rc *regexCache) at(i int) (*regexp.Regexp, bool, error) {
	if !rc.constant {
		rc.compile(i)
	}
	return rc.re, rc.global, rc.err
}

// goReplacement turns an RE2 replacement (\1 is group 1, \\ a backslash)
// into Go's template syntax (${1}, $$ for a dollar).
func goReplacement(r string) string {
	var b strings.Builder
	for k := 0; k < len(r); k++ {
		ch := r[k]
		switch {
		case ch == '$':
			b.WriteString("$$")
		case ch == '\\' && k+1 < len(r) && r[k+1] >= '0' && r[k+1] <= '9':
			b.WriteString("${" + string(r[k+1]) + "}")
			k++
		case ch == '\\' && k+1 < len(r) && r[k+1] == '\\':
			b.WriteByte('\\')
			k++
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

func regexReplace(re *regexp.Regexp, src, tmpl string, global bool) string {
	if global {
		return re.ReplaceAllString(src, tmpl)
	}
	m := re.FindStringSubmatchIndex(src)
	if m == nil {
		return src
	}
	dst := re.ExpandString(nil, tmpl, src, m)
	return src[:m[0]] + string(dst) + src[m[1]:]
}
