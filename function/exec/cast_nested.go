package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// Casts of nested values, as DuckDB does them:
//
//	LIST -> LIST     the elements are cast (the scalar kernels, recursively)
//	MAP -> MAP       keys and values are cast
//	STRUCT -> STRUCT fields are matched by name, regardless of case (an
//	                 unnamed struct, row(...), by position); a target field
//	                 the source lacks is NULL, a source field the target
//	                 lacks is dropped
//	nested -> VARCHAR DuckDB's text: [1, 2, NULL], {'a': 1, 'b': x},
//	                 {k=v}, (1, x) for an unnamed struct; a string inside
//	                 is quoted ('...') only when it would not read back
//	VARCHAR -> nested that text parsed back (brackets, quotes as above)
//
// Under TRY_CAST an element, field or value that cannot be cast is NULL,
// and text that does not parse, or a map key that cannot be cast, makes
// the whole value NULL (DuckDB's answers).

// castNested casts a, of which from or to is nested.
func castNested(mem memory.Allocator, a arrow.Array, from, to plan.DataType, try bool) (arrow.Array, error) {
	switch {
	case to.ID == plan.String:
		return nestedToText(mem, a, from)
	case from.ID == plan.String:
		return textToNested(mem, a, to, try)
	case from.ID == plan.List && to.ID == plan.List:
		l := a.(array.ListLike)
		kid, err := castElems(mem, l.ListValues(), to.Elem(), try)
		if err != nil {
			return nil, err
		}
		defer kid.Release()
		return withKids(a, to.Arrow(), kid), nil
	case from.ID == plan.Map && to.ID == plan.Map:
		m := a.(*array.Map)
		keys, err := castArray(mem, m.Keys(), to.Key())
		if err != nil && try { // a key that cannot be cast makes its map NULL
			if a.Len() == 1 {
				return makeNulls(mem, to.Arrow(), 1), nil
			}
			return tryRowByRow(mem, a, from, to)
		}
		if err != nil {
			return nil, err
		}
		defer keys.Release()
		vals, err := castElems(mem, m.Items(), to.Value(), try)
		if err != nil {
			return nil, err
		}
		defer vals.Release()
		mt := to.Arrow().(*arrow.MapType)
		ed := array.NewData(mt.Elem(), keys.Len(), []*memory.Buffer{nil}, []arrow.ArrayData{keys.Data(), vals.Data()}, 0, 0)
		entries := array.MakeFromData(ed)
		ed.Release()
		defer entries.Release()
		out := withKids(a, mt, entries)
		if from.Key() != to.Key() {
			if err := uniqueKeys(out.(*array.Map)); err != nil {
				out.Release()
				return nil, err
			}
		}
		return out, nil
	case from.ID == plan.Struct && to.ID == plan.Struct:
		idx, err := StructCastFields(from, to)
		if err != nil {
			return nil, err
		}
		s := a.(*array.Struct)
		fs := to.Children()
		kids := make([]arrow.Array, len(fs))
		defer releaseAll(kids)
		for i, f := range fs {
			if idx[i] < 0 {
				kids[i] = makeNulls(mem, f.Type.Arrow(), a.Len())
				continue
			}
			k, err := castElems(mem, s.Field(idx[i]), f.Type, try)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			kids[i] = k
		}
		return makeNested(to.Arrow(), a.Len(), copyValidity(mem, a), nil, kids), nil
	}
	return nil, plan.Errorf(plan.CodeType, "cannot cast %s to %s", from, to)
}

// StructCastFields maps each field of struct type to to the field of
// from it is cast from (-1: none, NULL), as DuckDB matches them: by name
// regardless of case, or by position when from is unnamed (row(...)).
// It fails when no field matches.
func StructCastFields(from, to plan.DataType) ([]int, error) {
	ff, tf := from.Children(), to.Children()
	idx := make([]int, len(tf))
	if unnamedStruct(from) {
		if len(ff) != len(tf) {
			return nil, fmt.Errorf("cannot cast %s to %s: an unnamed struct is cast by position, and the field counts differ", from, to)
		}
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	matched := false
	for i, f := range tf {
		idx[i] = -1
		for j, g := range ff {
			if strings.EqualFold(f.Name, g.Name) {
				idx[i], matched = j, true
				break
			}
		}
	}
	if !matched {
		return nil, fmt.Errorf("cannot cast %s to %s: a struct cast matches fields by name, and none matches", from, to)
	}
	return idx, nil
}

// IsUnnamedStruct reports whether struct type t is unnamed (row(...)):
// its fields have empty names.
func IsUnnamedStruct(t plan.DataType) bool { return unnamedStruct(t) }

func unnamedStruct(t plan.DataType) bool {
	cs := t.Children()
	for _, c := range cs {
		if c.Name != "" {
			return false
		}
	}
	return len(cs) > 0
}

// castElems casts the children of a nested value (TRY_CAST's per-element
// NULLs under try).
func castElems(mem memory.Allocator, a arrow.Array, to plan.DataType, try bool) (arrow.Array, error) {
	if try {
		return tryCastArray(mem, a, to)
	}
	return castArray(mem, a, to)
}

// withKids is a with its child replaced by kid (a list's values, a map's
// entries), its buffers (validity, offsets) and offset kept.
func withKids(a arrow.Array, t arrow.DataType, kid arrow.Array) arrow.Array {
	d := a.Data()
	nd := array.NewData(t, d.Len(), d.Buffers(), []arrow.ArrayData{kid.Data()}, d.NullN(), d.Offset())
	out := array.MakeFromData(nd)
	nd.Release()
	return out
}

// tryRowByRow is TRY_CAST of a one row at a time, a row whose cast fails
// NULL.
func tryRowByRow(mem memory.Allocator, a arrow.Array, from, to plan.DataType) (arrow.Array, error) {
	n := a.Len()
	var srcs []arrow.Array
	defer func() { releaseAll(srcs) }()
	bi, ri := make([]int32, n), make([]int32, n)
	for i := 0; i < n; i++ {
		bi[i] = -1
		if a.IsNull(i) {
			continue
		}
		one := array.NewSlice(a, int64(i), int64(i+1))
		c, err := castNested(mem, one, from, to, true)
		one.Release()
		if err != nil {
			continue
		}
		bi[i] = int32(len(srcs))
		srcs = append(srcs, c)
	}
	return kernel.TakeMulti(mem, to.Arrow(), srcs, bi, ri)
}

// ---- nested -> text ---------------------------------------------------------

// nestedToText renders each row of nested a (of type t) as DuckDB's text.
func nestedToText(mem memory.Allocator, a arrow.Array, t plan.DataType) (arrow.Array, error) {
	texts, err := renderValues(mem, a, t)
	if err != nil {
		return nil, err
	}
	sb := newStrBuilder(mem, a.Len(), 16*a.Len())
	for i, s := range texts {
		if a.IsNull(i) {
			sb.appendEmpty()
			continue
		}
		sb.appendString(s)
	}
	return sb.finish(copyValidity(mem, a))
}

// renderValues is the text of every row of a as an element of a nested
// value: NULL for a NULL, strings quoted where they must be.
func renderValues(mem memory.Allocator, a arrow.Array, t plan.DataType) ([]string, error) {
	n := a.Len()
	out := make([]string, n)
	switch t.ID {
	case plan.List:
		l := a.(array.ListLike)
		elems, err := renderValues(mem, l.ListValues(), t.Elem())
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		for i := 0; i < n; i++ {
			if a.IsNull(i) {
				out[i] = "NULL"
				continue
			}
			lo, hi := l.ValueOffsets(i)
			b.Reset()
			b.WriteByte('[')
			for j := lo; j < hi; j++ {
				if j > lo {
					b.WriteString(", ")
				}
				b.WriteString(elems[j])
			}
			b.WriteByte(']')
			out[i] = b.String()
		}
		return out, nil
	case plan.Map:
		m := a.(*array.Map)
		keys, err := renderValues(mem, m.Keys(), t.Key())
		if err != nil {
			return nil, err
		}
		vals, err := renderValues(mem, m.Items(), t.Value())
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		for i := 0; i < n; i++ {
			if a.IsNull(i) {
				out[i] = "NULL"
				continue
			}
			lo, hi := m.ValueOffsets(i)
			b.Reset()
			b.WriteByte('{')
			for j := lo; j < hi; j++ {
				if j > lo {
					b.WriteString(", ")
				}
				b.WriteString(keys[j])
				b.WriteByte('=')
				b.WriteString(vals[j])
			}
			b.WriteByte('}')
			out[i] = b.String()
		}
		return out, nil
	case plan.Struct:
		s := a.(*array.Struct)
		fs := t.Children()
		kids := make([][]string, len(fs))
		for k, f := range fs {
			r, err := renderValues(mem, s.Field(k), f.Type)
			if err != nil {
				return nil, err
			}
			kids[k] = r
		}
		unnamed := unnamedStruct(t)
		var b strings.Builder
		for i := 0; i < n; i++ {
			if a.IsNull(i) {
				out[i] = "NULL"
				continue
			}
			b.Reset()
			if unnamed {
				b.WriteByte('(')
			} else {
				b.WriteByte('{')
			}
			for k, f := range fs {
				if k > 0 {
					b.WriteString(", ")
				}
				if !unnamed {
					b.WriteString("'" + escapeNestedText(f.Name) + "': ")
				}
				b.WriteString(kids[k][i])
			}
			if unnamed {
				b.WriteByte(')')
			} else {
				b.WriteByte('}')
			}
			out[i] = b.String()
		}
		return out, nil
	}
	strs, err := castArray(mem, a, plan.StringType)
	if err != nil {
		return nil, err
	}
	defer strs.Release()
	offs, data := strOffsets(strs)
	for i := 0; i < n; i++ {
		if strs.IsNull(i) {
			out[i] = "NULL"
			continue
		}
		out[i] = quoteNestedText(string(data[offs[i]:offs[i+1]]))
	}
	return out, nil
}

// quoteNestedText quotes s as DuckDB does inside a nested value's text:
// when it is empty, starts or ends with a space, holds a character of the
// nested syntax, or reads as NULL.
func quoteNestedText(s string) string {
	need := s == "" || strings.EqualFold(s, "null") || isSpace(s[0]) || isSpace(s[len(s)-1]) ||
		strings.ContainsAny(s, `'"[]{}():=,`)
	if !need {
		return s
	}
	return "'" + escapeNestedText(s) + "'"
}

func escapeNestedText(s string) string {
	if !strings.ContainsAny(s, `'\`) {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// ---- text -> nested ---------------------------------------------------------

// textNode is one value of nested text: NULL, a scalar's text, or the
// children of a list (kids), a struct (kids, by names or by position
// when names is nil) or a map (kids: key, value, key, value, ...).
type textNode struct {
	null  bool
	text  string
	kids  []*textNode
	names []string
}

var nullNode = &textNode{null: true}

// textToNested parses each string of a as a value of nested type to.
func textToNested(mem memory.Allocator, a arrow.Array, to plan.DataType, try bool) (arrow.Array, error) {
	n := a.Len()
	offs, data := strOffsets(a)
	nodes := make([]*textNode, n)
	for i := 0; i < n; i++ {
		if a.IsNull(i) {
			nodes[i] = nullNode
			continue
		}
		s := string(data[offs[i]:offs[i+1]])
		p := &textParser{s: s}
		v, err := p.value(to, 0, true)
		if err == nil {
			p.space()
			if p.i < len(p.s) {
				err = fmt.Errorf("text after the value")
			}
		}
		if err != nil {
			if try {
				nodes[i] = nullNode
				continue
			}
			return nil, plan.Errorf(plan.CodeInvalidCast, "cannot cast string %q to %s: %v", s, to, err)
		}
		nodes[i] = v
	}
	return buildFromText(mem, nodes, to, try)
}

type textParser struct {
	s string
	i int
}

func (p *textParser) space() {
	for p.i < len(p.s) && isSpace(p.s[p.i]) {
		p.i++
	}
}

func (p *textParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *textParser) expect(c byte) error {
	p.space()
	if p.peek() != c {
		return fmt.Errorf("expected %q at %d", c, p.i)
	}
	p.i++
	return nil
}

// value parses one value of type t; stop is the extra byte that ends a
// scalar (a map key's '=', a struct name's ':'), top whether it is the
// whole text (where NULL is no value).
func (p *textParser) value(t plan.DataType, stop byte, top bool) (*textNode, error) {
	p.space()
	if !top && t.IsNested() && p.nullWord() {
		return nullNode, nil
	}
	switch t.ID {
	case plan.List:
		if err := p.expect('['); err != nil {
			return nil, err
		}
		v := &textNode{}
		p.space()
		if p.peek() == ']' {
			p.i++
			return v, nil
		}
		for {
			e, err := p.value(t.Elem(), 0, false)
			if err != nil {
				return nil, err
			}
			v.kids = append(v.kids, e)
			p.space()
			switch p.peek() {
			case ',':
				p.i++
			case ']':
				p.i++
				return v, nil
			default:
				return nil, fmt.Errorf("expected ',' or ']' at %d", p.i)
			}
		}
	case plan.Map:
		if err := p.expect('{'); err != nil {
			return nil, err
		}
		v := &textNode{}
		p.space()
		if p.peek() == '}' {
			p.i++
			return v, nil
		}
		for {
			k, err := p.value(t.Key(), '=', false)
			if err != nil {
				return nil, err
			}
			if err := p.expect('='); err != nil {
				return nil, err
			}
			x, err := p.value(t.Value(), 0, false)
			if err != nil {
				return nil, err
			}
			v.kids = append(v.kids, k, x)
			p.space()
			switch p.peek() {
			case ',':
				p.i++
			case '}':
				p.i++
				return v, nil
			default:
				return nil, fmt.Errorf("expected ',' or '}' at %d", p.i)
			}
		}
	case plan.Struct:
		p.space()
		fs := t.Children()
		v := &textNode{}
		switch p.peek() {
		case '(':
			p.i++
			for k, f := range fs {
				if k > 0 {
					if err := p.expect(','); err != nil {
						return nil, err
					}
				}
				x, err := p.value(f.Type, 0, false)
				if err != nil {
					return nil, err
				}
				v.kids = append(v.kids, x)
			}
			return v, p.expect(')')
		case '{':
			p.i++
			v.names = []string{}
			p.space()
			if p.peek() == '}' {
				p.i++
				return v, nil
			}
			for {
				name, err := p.value(plan.StringType, ':', false)
				if err != nil {
					return nil, err
				}
				f, k := t.Field(name.text)
				if name.null || k < 0 {
					return nil, fmt.Errorf("no field %q in %s", name.text, t)
				}
				if err := p.expect(':'); err != nil {
					return nil, err
				}
				x, err := p.value(f.Type, 0, false)
				if err != nil {
					return nil, err
				}
				v.names = append(v.names, f.Name)
				v.kids = append(v.kids, x)
				p.space()
				switch p.peek() {
				case ',':
					p.i++
				case '}':
					p.i++
					return v, nil
				default:
					return nil, fmt.Errorf("expected ',' or '}' at %d", p.i)
				}
			}
		}
		return nil, fmt.Errorf("expected '{' or '(' at %d", p.i)
	}
	return p.scalar(stop)
}

// nullWord consumes an unquoted NULL ending at a delimiter.
func (p *textParser) nullWord() bool {
	if len(p.s)-p.i < 4 || !strings.EqualFold(p.s[p.i:p.i+4], "null") {
		return false
	}
	j := p.i + 4
	for j < len(p.s) && isSpace(p.s[j]) {
		j++
	}
	if j < len(p.s) && !strings.ContainsRune(",]}):=", rune(p.s[j])) {
		return false
	}
	p.i += 4
	return true
}

// scalar reads a quoted string, or bare text up to a ',' or closing
// bracket at its own depth (or stop), trimmed; bare NULL is NULL.
func (p *textParser) scalar(stop byte) (*textNode, error) {
	if c := p.peek(); c == '\'' || c == '"' {
		p.i++
		var b strings.Builder
		for p.i < len(p.s) {
			d := p.s[p.i]
			switch {
			case d == '\\' && p.i+1 < len(p.s):
				b.WriteByte(p.s[p.i+1])
				p.i += 2
				continue
			case d == c && p.i+1 < len(p.s) && p.s[p.i+1] == c:
				b.WriteByte(c)
				p.i += 2
				continue
			case d == c:
				p.i++
				return &textNode{text: b.String()}, nil
			}
			b.WriteByte(d)
			p.i++
		}
		return nil, fmt.Errorf("unterminated quote")
	}
	start, depth := p.i, 0
loop:
	for ; p.i < len(p.s); p.i++ {
		switch c := p.s[p.i]; c {
		case '[', '{', '(':
			depth++
		case ']', '}', ')':
			if depth == 0 {
				break loop
			}
			depth--
		case ',':
			if depth == 0 {
				break loop
			}
		default:
			if c == stop && depth == 0 {
				break loop
			}
		}
	}
	text := strings.TrimRight(p.s[start:p.i], " \t\n\r")
	if strings.EqualFold(text, "null") {
		return nullNode, nil
	}
	return &textNode{text: text}, nil
}

// buildFromText builds the column of type t of parsed values nodes.
func buildFromText(mem memory.Allocator, nodes []*textNode, t plan.DataType, try bool) (arrow.Array, error) {
	n := len(nodes)
	if t.ID == plan.Map && try {
		var err error
		if nodes, err = dropBadKeys(mem, nodes, t.Key()); err != nil {
			return nil, err
		}
	}
	vbuf, valid := newBitmap(mem, n)
	nulls := 0
	for i, v := range nodes {
		if !v.null {
			setBit(valid, i)
		} else {
			nulls++
		}
	}
	if nulls == 0 { // no validity: an Arrow map's keys must have no nulls, counted
		vbuf.Release()
		vbuf = nil
	}
	switch t.ID {
	case plan.List, plan.Map:
		obuf, offs := newFixed[int32](mem, n+1)
		var kids []*textNode
		for i, v := range nodes {
			kids = append(kids, v.kids...)
			k := int32(len(kids))
			if t.ID == plan.Map {
				k /= 2
			}
			offs[i+1] = k
		}
		var kid arrow.Array
		var err error
		if t.ID == plan.List {
			kid, err = buildFromText(mem, kids, t.Elem(), try)
		} else {
			kid, err = buildMapEntries(mem, kids, t, try)
		}
		if err != nil {
			if vbuf != nil {
				vbuf.Release()
			}
			obuf.Release()
			return nil, err
		}
		defer kid.Release()
		out := makeNested(t.Arrow(), n, vbuf, []*memory.Buffer{obuf}, []arrow.Array{kid})
		if m, ok := out.(*array.Map); ok {
			if err := uniqueKeys(m); err != nil {
				out.Release()
				return nil, err
			}
		}
		return out, nil
	case plan.Struct:
		fs := t.Children()
		cols := make([][]*textNode, len(fs))
		for _, v := range nodes {
			for k, f := range fs {
				x := nullNode
				switch {
				case v.null:
				case v.names == nil:
					if k < len(v.kids) {
						x = v.kids[k]
					}
				default:
					for j, name := range v.names {
						if name == f.Name {
							x = v.kids[j]
						}
					}
				}
				cols[k] = append(cols[k], x)
			}
		}
		kids := make([]arrow.Array, len(fs))
		defer releaseAll(kids)
		for k, f := range fs {
			c, err := buildFromText(mem, cols[k], f.Type, try)
			if err != nil {
				if vbuf != nil {
					vbuf.Release()
				}
				return nil, err
			}
			kids[k] = c
		}
		return makeNested(t.Arrow(), n, vbuf, nil, kids), nil
	}
	sb := newStrBuilder(mem, n, 8*n)
	for _, v := range nodes {
		if v.null {
			sb.appendEmpty()
		} else {
			sb.appendString(v.text)
		}
	}
	strs, err := sb.finish(vbuf)
	if err != nil {
		return nil, err
	}
	if t.ID == plan.String {
		return strs, nil
	}
	defer strs.Release()
	return castElems(mem, strs, t, try)
}

// buildMapEntries builds a map's key/value struct array from kids (key,
// value, key, value, ...).
func buildMapEntries(mem memory.Allocator, kids []*textNode, t plan.DataType, try bool) (arrow.Array, error) {
	keys := make([]*textNode, 0, len(kids)/2)
	vals := make([]*textNode, 0, len(kids)/2)
	for i := 0; i+1 < len(kids); i += 2 {
		if kids[i].null && !try {
			return nil, plan.Errorf(plan.CodeInvalidCast, "cannot cast to %s: a map key is NULL", t)
		}
		keys, vals = append(keys, kids[i]), append(vals, kids[i+1])
	}
	k, err := buildFromText(mem, keys, t.Key(), try)
	if err != nil {
		return nil, err
	}
	defer k.Release()
	v, err := buildFromText(mem, vals, t.Value(), try)
	if err != nil {
		return nil, err
	}
	defer v.Release()
	et := t.Arrow().(*arrow.MapType).Elem()
	return makeNested(et, len(keys), nil, nil, []arrow.Array{k, v}), nil
}

// dropBadKeys is nodes with each map that has a key which is NULL or
// cannot be cast to kt NULL (TRY_CAST).
func dropBadKeys(mem memory.Allocator, nodes []*textNode, kt plan.DataType) ([]*textNode, error) {
	var keys []*textNode
	for _, v := range nodes {
		for i := 0; i+1 < len(v.kids); i += 2 {
			keys = append(keys, v.kids[i])
		}
	}
	k, err := buildFromText(mem, keys, kt, true)
	if err != nil {
		return nil, err
	}
	defer k.Release()
	if k.NullN() == 0 {
		return nodes, nil
	}
	out := make([]*textNode, len(nodes))
	j := 0
	for r, v := range nodes {
		out[r] = v
		for i := 0; i+1 < len(v.kids); i += 2 {
			if k.IsNull(j) {
				out[r] = nullNode
			}
			j++
		}
	}
	return out, nil
}

// uniqueKeys fails (SL101) when a map of m holds a key twice (keys that
// became equal by the cast, or text that repeats one): DuckDB refuses
// the text, and a map of repeated keys is no value to return.
func uniqueKeys(m *array.Map) error {
	rep, err := repeatedKey(m)
	if err == nil && rep {
		err = plan.Errorf(plan.CodeInvalidCast, "cannot cast to %s: map keys must be unique", m.DataType())
	}
	return err
}
