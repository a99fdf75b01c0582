package exec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/sluicedb/sluice/planner/plan"
)

// DuckDB's printf (C-style %d, %5.2f, %-8s, %x, %%) and format (the
// {fmt} library's {} and {1}, {:>8}, {:08.3f}, {:x}, {:,}, {{ }}). As in
// DuckDB, each argument keeps its kind: an integer (a boolean is one for
// %d, else true/false), a double (a decimal is converted to one), or a
// string (dates and timestamps as their text), and a specifier of another
// kind is an error (%d of a double, %s of an integer in format's {:s}, %f
// of an integer). A NULL argument prints as NULL; a NULL format gives
// NULL. Errors are SL100.

func formatFunctions() []*ScalarFunction {
	return []*ScalarFunction{
		{Name: "printf", Doc: "the arguments formatted by a C-style format string (%s, %d, %i, %x, %X, %o, %c, %f, %e, %g, %%, with flags, width and precision)",
			Signatures: []Signature{variadic(plan.StringType, tS, AnyType)}, Nulls: NullPropagates, TakesWide: true, Kernel: formatKernel(printfOne)},
		{Name: "format", Doc: "the arguments formatted by a {fmt}-style format string ({} in order, {0} by position, {:[[fill]align][sign][#][0][width][,][.precision][type]}, {{ and }} for braces)",
			Signatures: []Signature{variadic(plan.StringType, tS, AnyType)}, Nulls: NullPropagates, TakesWide: true, Kernel: formatKernel(fmtOne)},
	}
}

// fmtArg is one argument of a row, as the formatter sees it.
type fmtArg struct {
	null bool
	kind byte // 'i' integer, 'b' boolean, 'f' double, 's' string
	i    int64
	f    float64
	s    string
	// wide is the digits of an integer beyond int64 (a decimal(38,0),
	// sluice's HUGEINT), printed by %d and {} only.
	wide string
}

func fmtArgOf(d Datum, i int) fmtArg {
	if d.Null(i) {
		return fmtArg{null: true}
	}
	t := d.Type()
	switch t.ID {
	case plan.Int64:
		return fmtArg{kind: 'i', i: d.Int(i)}
	case plan.Bool:
		b := d.Bool(i)
		a := fmtArg{kind: 'b', s: strconv.FormatBool(b)}
		if b {
			a.i = 1
		}
		return a
	case plan.Float64:
		return fmtArg{kind: 'f', f: d.Float(i)}
	case plan.Decimal:
		if t.Precision > plan.MaxDecimal64Precision {
			var n decimal128.Num
			if d.arr != nil {
				n = d.arr.(*array.Decimal128).Value(i)
			} else {
				n = decimal128.New(d.lit.H, uint64(d.lit.I))
			}
			if t.Scale == 0 && t.Precision == plan.MaxDecimalPrecision { // a sum of integers: DuckDB's HUGEINT
				if lo := n.LowBits(); (n.HighBits() == 0 && lo < 1<<63) || (n.HighBits() == -1 && lo >= 1<<63) {
					return fmtArg{kind: 'i', i: int64(lo)}
				}
				return fmtArg{kind: 'i', wide: formatDec128(n, 0)}
			}
			f, _ := strconv.ParseFloat(formatDec128(n, t.Scale), 64)
			return fmtArg{kind: 'f', f: f}
		}
		return fmtArg{kind: 'f', f: d.Float(i)}
	case plan.Date:
		return fmtArg{kind: 's', s: plan.FormatDate(int32(d.Int(i)))}
	case plan.Timestamp:
		return fmtArg{kind: 's', s: plan.FormatTimestamp(d.Int(i))}
	}
	return fmtArg{kind: 's', s: d.Str(i)}
}

// formatKernel runs one formatter over each row: a NULL format is NULL.
func formatKernel(one func(f string, args []fmtArg) (string, error)) Kernel {
	return func(c *Call) (arrow.Array, error) {
		o := newOut(c.Mem, c.Type, c.N)
		args := make([]fmtArg, len(c.Args)-1)
	rows:
		for i := 0; i < c.N; i++ {
			// Any NULL argument gives NULL, as in DuckDB (NullPropagates).
			for k := range c.Args {
				if c.Args[k].Null(i) {
					o.null()
					continue rows
				}
			}
			for k := range args {
				args[k] = fmtArgOf(c.Args[k+1], i)
			}
			s, err := one(c.Args[0].Str(i), args)
			if err != nil {
				o.bld.Release()
				return nil, plan.Errorf(plan.CodeRuntime, "%v", err)
			}
			o.str(s)
		}
		return o.finish(), nil
	}
}

// printfOne formats one row C-style.
func printfOne(f string, args []fmtArg) (string, error) {
	var b strings.Builder
	next := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("-+ 0#", f[j]) >= 0 {
			j++
		}
		for j < len(f) && (f[j] >= '0' && f[j] <= '9' || f[j] == '.') {
			j++
		}
		if j >= len(f) {
			return "", fmt.Errorf("incomplete format specifier %q", f[i:])
		}
		spec, verb := f[i+1:j], f[j]
		i = j
		if verb == '%' {
			b.WriteByte('%')
			continue
		}
		if next >= len(args) {
			return "", fmt.Errorf("argument index %d out of range", next)
		}
		a := args[next]
		next++
		goFmt := "%" + spec
		if a.null {
			fmt.Fprintf(&b, stripPrecision(goFmt)+"s", "NULL")
			continue
		}
		switch verb {
		case 'd', 'i':
			if a.kind != 'i' && a.kind != 'b' {
				return "", fmt.Errorf("invalid type specifier %q for %s", verb, a.kindName())
			}
			if a.wide != "" {
				fmt.Fprintf(&b, stripPrecision(goFmt)+"s", a.wide)
				continue
			}
			fmt.Fprintf(&b, goFmt+"d", a.i)
		case 'x', 'X', 'o':
			if a.kind != 'i' && a.kind != 'b' || a.wide != "" {
				return "", fmt.Errorf("invalid type specifier %q for %s", verb, a.kindName())
			}
			fmt.Fprintf(&b, goFmt+string(verb), uint64(a.i)) // C's: two's complement
		case 'c':
			if a.kind != 'i' {
				return "", fmt.Errorf("invalid type specifier %q for %s", verb, a.kindName())
			}
			fmt.Fprintf(&b, goFmt+"c", rune(a.i))
		case 'f', 'F', 'e', 'E', 'g', 'G':
			if a.kind != 'f' {
				return "", fmt.Errorf("invalid type specifier %q for %s", verb, a.kindName())
			}
			v := verb
			if v == 'F' {
				v = 'f'
			}
			fmt.Fprintf(&b, goFmt+string(v), a.f)
		case 's':
			switch a.kind {
			case 's', 'b':
				fmt.Fprintf(&b, goFmt+"s", a.s)
			case 'i':
				if a.wide != "" {
					return "", fmt.Errorf("invalid type specifier %q for %s", verb, a.kindName())
				}
				fmt.Fprintf(&b, stripPrecision(goFmt)+"s", strconv.FormatInt(a.i, 10))
			default:
				return "", fmt.Errorf("invalid type specifier %q for %s", verb, a.kindName())
			}
		default:
			return "", fmt.Errorf("unknown format specifier %q", "%"+spec+string(verb))
		}
	}
	return b.String(), nil
}

// stripPrecision drops a .precision from a Go format prefix (NULL and
// integers under %s print whole).
func stripPrecision(s string) string {
	if k := strings.IndexByte(s, '.'); k >= 0 {
		return s[:k]
	}
	return s
}

func (a fmtArg) kindName() string {
	switch a.kind {
	case 'i':
		return "an integer"
	case 'b':
		return "a boolean"
	case 'f':
		return "a double"
	}
	return "a string"
}

// fmtOne formats one row {fmt}-style.
func fmtOne(f string, args []fmtArg) (string, error) {
	var b strings.Builder
	auto, manual := 0, false
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c == '}' {
			if i+1 < len(f) && f[i+1] == '}' {
				b.WriteByte('}')
				i++
				continue
			}
			return "", fmt.Errorf("unmatched '}' in format string")
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(f) && f[i+1] == '{' {
			b.WriteByte('{')
			i++
			continue
		}
		end := strings.IndexByte(f[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unmatched '{' in format string")
		}
		field := f[i+1 : i+end]
		i += end
		id, spec, _ := strings.Cut(field, ":")
		var k int
		if id == "" {
			if manual {
				return "", fmt.Errorf("cannot switch from manual to automatic argument indexing")
			}
			k = auto
			auto++
		} else {
			n, err := strconv.Atoi(id)
			if err != nil || n < 0 {
				return "", fmt.Errorf("invalid argument id %q", id)
			}
			if auto > 0 {
				return "", fmt.Errorf("cannot switch from automatic to manual argument indexing")
			}
			manual, k = true, n
		}
		if k >= len(args) {
			return "", fmt.Errorf("argument index %d out of range", k)
		}
		s, err := fmtField(spec, args[k])
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// fmtField formats one value by a {fmt} spec
// [[fill]align][sign][#][0][width][,][.precision][type].
func fmtField(spec string, a fmtArg) (string, error) {
	fill, align := ' ', byte(0)
	if r, size := utf8.DecodeRuneInString(spec); size > 0 && size < len(spec) && strings.IndexByte("<>^", spec[size]) >= 0 {
		fill, align, spec = r, spec[size], spec[size+1:]
	} else if spec != "" && strings.IndexByte("<>^", spec[0]) >= 0 {
		align, spec = spec[0], spec[1:]
	}
	sign := byte(0)
	if spec != "" && strings.IndexByte("+- ", spec[0]) >= 0 {
		sign, spec = spec[0], spec[1:]
	}
	alt := strings.HasPrefix(spec, "#")
	spec = strings.TrimPrefix(spec, "#")
	zero := false
	if strings.HasPrefix(spec, "0") {
		zero, spec = true, spec[1:]
	}
	j := 0
	for j < len(spec) && spec[j] >= '0' && spec[j] <= '9' {
		j++
	}
	width, _ := strconv.Atoi(spec[:j])
	spec = spec[j:]
	group := strings.HasPrefix(spec, ",")
	spec = strings.TrimPrefix(spec, ",")
	prec := -1
	if strings.HasPrefix(spec, ".") {
		j = 1
		for j < len(spec) && spec[j] >= '0' && spec[j] <= '9' {
			j++
		}
		if j == 1 {
			return "", fmt.Errorf("missing precision in format specifier")
		}
		prec, _ = strconv.Atoi(spec[1:j])
		spec = spec[j:]
	}
	if len(spec) > 1 {
		return "", fmt.Errorf("invalid format specifier %q", spec)
	}
	typ := byte(0)
	if spec != "" {
		typ = spec[0]
	}
	var body string
	numeric := false
	switch {
	case a.null:
		body = "NULL"
	case a.kind == 'b' && typ == 0, a.kind == 'b' && typ == 's':
		body = a.s
	case a.kind == 'i' || a.kind == 'b':
		numeric = true
		v := a.i
		neg := v < 0
		u := uint64(v)
		if neg {
			u = -u
		}
		if a.wide != "" {
			neg, u = strings.HasPrefix(a.wide, "-"), 0
			if typ != 0 && typ != 'd' {
				return "", fmt.Errorf("invalid type specifier %q for a 128-bit integer", typ)
			}
		}
		switch typ {
		case 0, 'd':
			body = strconv.FormatUint(u, 10)
			if a.wide != "" {
				body = strings.TrimPrefix(a.wide, "-")
			}
			if group {
				body = groupThousands(body)
			}
		case 'x', 'X', 'o', 'b', 'B':
			base := map[byte]int{'x': 16, 'X': 16, 'o': 8, 'b': 2, 'B': 2}[typ]
			body = strconv.FormatUint(u, base)
			if typ == 'X' {
				body = strings.ToUpper(body)
			}
			if alt {
				body = map[byte]string{'x': "0x", 'X': "0X", 'o': "0", 'b': "0b", 'B': "0B"}[typ] + body
			}
		case 'c':
			numeric, body = false, string(rune(v))
		default:
			return "", fmt.Errorf("invalid type specifier %q for %s", typ, a.kindName())
		}
		body = signed(body, neg, sign)
	case a.kind == 'f':
		numeric = true
		v := a.f
		neg := math.Signbit(v) && !math.IsNaN(v)
		v = math.Abs(v)
		switch {
		case math.IsInf(v, 0):
			body = "inf"
		case math.IsNaN(v):
			body = "nan"
		}
		switch typ {
		case 0:
			if body == "" {
				if prec >= 0 {
					body = strconv.FormatFloat(v, 'g', prec, 64)
				} else {
					body = shortestDouble(v)
				}
			}
		case 'f', 'F', 'e', 'E', 'g', 'G':
			if prec < 0 {
				prec = 6
			}
			if body == "" {
				body = strconv.FormatFloat(v, typ|0x20, prec, 64)
			}
			if typ >= 'A' && typ <= 'Z' {
				body = strings.ToUpper(body)
			}
		case '%':
			if prec < 0 {
				prec = 6
			}
			body = strconv.FormatFloat(v*100, 'f', prec, 64) + "%"
		default:
			return "", fmt.Errorf("invalid type specifier %q for %s", typ, a.kindName())
		}
		body = signed(body, neg, sign)
	default:
		if typ != 0 && typ != 's' {
			return "", fmt.Errorf("invalid type specifier %q for %s", typ, a.kindName())
		}
		body = a.s
		if prec >= 0 && utf8.RuneCountInString(body) > prec {
			body = string([]rune(body)[:prec])
		}
	}
	n := utf8.RuneCountInString(body)
	if n >= width {
		return body, nil
	}
	pad := width - n
	if zero && numeric && align == 0 {
		k := 0
		if body != "" && (body[0] == '-' || body[0] == '+' || body[0] == ' ') {
			k = 1
		}
		if alt && len(body) > k+1 && body[k] == '0' && strings.IndexByte("xXbB", body[k+1]) >= 0 {
			k += 2
		}
		return body[:k] + strings.Repeat("0", pad) + body[k:], nil
	}
	if align == 0 {
		align = '<'
		if numeric {
			align = '>'
		}
	}
	fs := string(fill)
	switch align {
	case '>':
		return strings.Repeat(fs, pad) + body, nil
	case '^':
		return strings.Repeat(fs, pad/2) + body + strings.Repeat(fs, pad-pad/2), nil
	}
	return body + strings.Repeat(fs, pad), nil
}

func signed(body string, neg bool, sign byte) string {
	switch {
	case neg:
		return "-" + body
	case sign == '+':
		return "+" + body
	case sign == ' ':
		return " " + body
	}
	return body
}

// shortestDouble is {fmt}'s {} of a double: the shortest text that reads
// back, with a .0 on whole numbers, in exponent form below 1e-4 and from
// 1e16.
func shortestDouble(v float64) string {
	if v != 0 {
		es := strconv.FormatFloat(v, 'e', -1, 64)
		if e, err := strconv.Atoi(es[strings.IndexByte(es, 'e')+1:]); err == nil && (e < -4 || e >= 16) {
			return es
		}
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

func groupThousands(d string) string {
	var b strings.Builder
	for i, c := range d {
		if i > 0 && (len(d)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
