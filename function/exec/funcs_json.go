package exec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// DuckDB's JSON functions over VARCHAR values holding JSON text. A path is
// DuckDB's: '$.a.b', '$.a[0]', '$[#-1]' (from the end), '$."a.b"' (a
// quoted key), a JSON pointer '/a/0', a plain key 'a', or an integer (an
// array index). json_extract gives the JSON text of the value, written
// back as DuckDB does (compactJSON), json_extract_string the same with a string unquoted and JSON
// null as NULL. A path that is not there gives NULL; malformed JSON or a
// malformed path is an error (SL100), as in DuckDB. Functions of a list
// result (json_keys, paths with [*]) wait for the LIST type.

func jsonFunctions() []*ScalarFunction {
	str, i64 := plan.StringType, plan.Int64Type
	pathSigs := func(ret plan.DataType) []Signature {
		return []Signature{sig(ret, tS, tS), sig(ret, tS, tI)}
	}
	return []*ScalarFunction{
		{Name: "json_extract", Doc: "the JSON text of the value at the path (NULL when absent); also the -> operator",
			Signatures: pathSigs(str), Kernel: jsonPathKernel(func(v json.RawMessage, o *out) error {
				o.str(compactJSON(v))
				return nil
			})},
		{Name: "json_extract_string", Doc: "the value at the path as text: a string unquoted, JSON null as NULL, others as JSON text; also the ->> operator",
			Signatures: pathSigs(str), Kernel: jsonPathKernel(func(v json.RawMessage, o *out) error {
				switch jsonKind(v) {
				case "NULL":
					o.null()
				case "VARCHAR":
					var s string
					if err := json.Unmarshal(v, &s); err != nil {
						return err
					}
					o.str(s)
				default:
					o.str(compactJSON(v))
				}
				return nil
			})},
		{Name: "json_array_length", Doc: "the number of elements of the JSON array (at the path), 0 for any other value",
			Signatures: append([]Signature{sig(i64, tS)}, pathSigs(i64)...), Kernel: jsonPathKernel(func(v json.RawMessage, o *out) error {
				if jsonKind(v) != "ARRAY" {
					o.i64(0)
					return nil
				}
				var a []json.RawMessage
				if err := json.Unmarshal(v, &a); err != nil {
					return err
				}
				o.i64(int64(len(a)))
				return nil
			})},
		{Name: "json_type", Doc: "the JSON type of the value (at the path): OBJECT, ARRAY, VARCHAR, BIGINT, UBIGINT, DOUBLE, BOOLEAN or NULL",
			Signatures: append([]Signature{sig(str, tS)}, pathSigs(str)...), Kernel: jsonPathKernel(func(v json.RawMessage, o *out) error {
				o.str(jsonKind(v))
				return nil
			})},
		{Name: "json_valid", Doc: "whether the string is valid JSON",
			Signatures: []Signature{sig(plan.BoolType, tS)},
			Kernel: func(c *Call) (arrow.Array, error) {
				a := c.Args[0]
				return eachRow(c, func(i int, o *out) error {
					o.boolean(json.Valid([]byte(a.Str(i))))
					return nil
				})
			}},
	}
}

// jsonPathKernel runs f on the value at the path of each row's document
// (the whole document without a path); a path that is not there is NULL.
func jsonPathKernel(f func(v json.RawMessage, o *out) error) Kernel {
	return func(c *Call) (arrow.Array, error) {
		doc := c.Args[0]
		var path *Datum
		if len(c.Args) > 1 {
			path = &c.Args[1]
		}
		var cached []jsonStep
		cachedOK := false
		return eachRow(c, func(i int, o *out) error {
			text := doc.Str(i)
			if !json.Valid([]byte(text)) {
				return plan.Errorf(plan.CodeRuntime, "malformed JSON %s", quoteShort(text))
			}
			v := json.RawMessage(text)
			if path != nil {
				var steps []jsonStep
				switch {
				case path.Type().ID == plan.Int64:
					steps = []jsonStep{{idx: path.Int(i), isIdx: true}}
				case path.Const() && cachedOK:
					steps = cached
				default:
					var err error
					if steps, err = parseJSONPath(path.Str(i)); err != nil {
						return plan.Errorf(plan.CodeRuntime, "%v", err)
					}
					if path.Const() {
						cached, cachedOK = steps, true
					}
				}
				var ok bool
				var err error
				if v, ok, err = jsonWalk(v, steps); err != nil {
					return plan.Errorf(plan.CodeRuntime, "%v", err)
				}
				if !ok {
					o.null()
					return nil
				}
			}
			return f(v, o)
		})
	}
}

func quoteShort(s string) string {
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return strconv.Quote(s)
}

// jsonStep is one step of a path: an object key or an array index (from
// the end when fromEnd: [#-n]).
type jsonStep struct {
	key     string
	idx     int64
	isIdx   bool
	fromEnd bool
}

// parseJSONPath reads DuckDB's path forms: '$...' (JSONPath), '/...' (a
// JSON pointer), anything else one key.
func parseJSONPath(p string) ([]jsonStep, error) {
	switch {
	case strings.HasPrefix(p, "$"):
		return parseDollarPath(p)
	case strings.HasPrefix(p, "/"):
		var steps []jsonStep
		for _, tok := range strings.Split(p[1:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			s := jsonStep{key: tok}
			if n, err := strconv.ParseInt(tok, 10, 64); err == nil && n >= 0 && (tok == "0" || tok[0] != '0') {
				s.idx, s.isIdx = n, true // a key on an object, an index on an array
			}
			steps = append(steps, s)
		}
		return steps, nil
	}
	if p == "" {
		return nil, nil // the whole document, as DuckDB
	}
	return []jsonStep{{key: p}}, nil
}

func parseDollarPath(p string) ([]jsonStep, error) {
	bad := func(why string) error { return fmt.Errorf("invalid JSON path %q: %s", p, why) }
	var steps []jsonStep
	i := 1
	for i < len(p) {
		switch p[i] {
		case '.':
			i++
			if i < len(p) && p[i] == '"' {
				end := strings.IndexByte(p[i+1:], '"')
				if end < 0 {
					return nil, bad("unclosed quote")
				}
				steps = append(steps, jsonStep{key: p[i+1 : i+1+end]})
				i += end + 2
				continue
			}
			j := i
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			if j == i {
				return nil, bad("empty key")
			}
			if p[i:j] == "*" {
				return nil, bad("wildcards give a list, which sluice does not have yet")
			}
			steps = append(steps, jsonStep{key: p[i:j]})
			i = j
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, bad("unclosed [")
			}
			in := p[i+1 : i+end]
			s := jsonStep{isIdx: true}
			if strings.HasPrefix(in, "#") {
				s.fromEnd = true
				in = strings.TrimPrefix(in[1:], "-")
				if in == "" {
					return nil, bad("want [#-n]")
				}
			}
			if in == "*" {
				return nil, bad("wildcards give a list, which sluice does not have yet")
			}
			n, err := strconv.ParseInt(in, 10, 64)
			if err != nil || n < 0 {
				return nil, bad("an index must be a non-negative integer or #-n")
			}
			s.idx = n
			steps = append(steps, s)
			i += end + 1
		default:
			return nil, bad(fmt.Sprintf("unexpected %q at %d", p[i], i))
		}
	}
	return steps, nil
}

// jsonWalk follows steps from v; ok is false when a step is not there.
func jsonWalk(v json.RawMessage, steps []jsonStep) (json.RawMessage, bool, error) {
	for _, s := range steps {
		switch jsonKind(v) {
		case "OBJECT":
			if s.isIdx && s.key == "" { // $[n] of an object
				return nil, false, nil
			}
			got, ok, err := jsonMember(v, s.key)
			if err != nil || !ok {
				return nil, false, err
			}
			v = got
		case "ARRAY":
			if !s.isIdx {
				return nil, false, nil
			}
			var a []json.RawMessage
			if err := json.Unmarshal(v, &a); err != nil {
				return nil, false, err
			}
			k := s.idx
			if s.fromEnd {
				k = int64(len(a)) - s.idx
			}
			if k < 0 || k >= int64(len(a)) {
				return nil, false, nil
			}
			v = a[k]
		default:
			return nil, false, nil
		}
	}
	return v, true, nil
}

// jsonMember is the first member named key of the object v.
func jsonMember(v json.RawMessage, key string) (json.RawMessage, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	if _, err := dec.Token(); err != nil { // {
		return nil, false, err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false, err
		}
		var m json.RawMessage
		if err := dec.Decode(&m); err != nil {
			return nil, false, err
		}
		if k, _ := t.(string); k == key {
			return m, true, nil
		}
	}
	return nil, false, nil
}

// jsonKind is DuckDB's json_type of a valid JSON value.
func jsonKind(v json.RawMessage) string {
	t := bytes.TrimSpace(v)
	if len(t) == 0 {
		return "NULL"
	}
	switch t[0] {
	case '{':
		return "OBJECT"
	case '[':
		return "ARRAY"
	case '"':
		return "VARCHAR"
	case 't', 'f':
		return "BOOLEAN"
	case 'n':
		return "NULL"
	}
	s := string(t)
	if strings.ContainsAny(s, ".eE") {
		return "DOUBLE"
	}
	if _, err := strconv.ParseUint(s, 10, 64); err == nil {
		return "UBIGINT" // as DuckDB's reader: a non-negative integer is unsigned
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return "BIGINT"
	}
	return "DOUBLE"
}

// compactJSON writes v back as DuckDB's reader and writer (yyjson) do:
// no blanks, strings with only the escapes JSON needs (UTF-8 as is),
// integers as integers and other numbers as doubles (2.50 is 2.5, 1e2 is
// 100.0).
func compactJSON(v json.RawMessage) string {
	var b strings.Builder
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	type level struct {
		obj bool
		n   int
	}
	var stack []level
	for {
		t, err := dec.Token()
		if err != nil {
			break
		}
		if d, ok := t.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			b.WriteByte(byte(d))
			continue
		}
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			switch {
			case top.obj && top.n%2 == 1:
				b.WriteByte(':')
			case top.n > 0:
				b.WriteByte(',')
			}
			top.n++
		}
		switch x := t.(type) {
		case json.Delim:
			b.WriteByte(byte(x))
			stack = append(stack, level{obj: x == '{'})
		case string:
			writeJSONString(&b, x)
		case json.Number:
			b.WriteString(jsonNumber(string(x)))
		case bool:
			b.WriteString(strconv.FormatBool(x))
		case nil:
			b.WriteString("null")
		}
	}
	return b.String()
}

// jsonNumber spells a JSON number as DuckDB prints it back.
func jsonNumber(s string) string {
	if !strings.ContainsAny(s, ".eE") {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
		if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			return strconv.FormatUint(n, 10)
		}
		return s // beyond 64 bits: kept as written, as DuckDB does
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		m, e, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
		neg := strings.HasPrefix(e, "-")
		e = strings.TrimLeft(e, "+-0")
		if neg {
			e = "-" + e
		}
		return m + "e" + e // 1e300, 1e-7
	}
	out := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(out, ".") {
		out += ".0"
	}
	return out
}

func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
