package plan

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Nested types: LIST, STRUCT and MAP. Their children are kept encoded in
// DataType.Sub (so DataType stays comparable); these are its constructors
// and accessors.

// ListOf is the type of lists of elem.
func ListOf(elem DataType) DataType {
	return DataType{ID: List, Sub: encodeSub([]Field{{Name: "element", Type: elem, Nullable: true}})}
}

// MapOf is the type of maps from key to value.
func MapOf(key, value DataType) DataType {
	return DataType{ID: Map, Sub: encodeSub([]Field{{Name: "key", Type: key}, {Name: "value", Type: value, Nullable: true}})}
}

// StructOf is the type of structs of fields (in order; every field is
// nullable).
func StructOf(fields []Field) DataType {
	fs := make([]Field, len(fields))
	for i, f := range fields {
		fs[i] = Field{Name: f.Name, Type: f.Type, Nullable: true}
	}
	return DataType{ID: Struct, Sub: encodeSub(fs)}
}

func encodeSub(fs []Field) string {
	b, err := json.Marshal(fs)
	if err != nil { // Field holds strings and ints only
		panic(err)
	}
	return string(b)
}

// IsNested reports whether t is a LIST, STRUCT or MAP.
func (t DataType) IsNested() bool { return t.ID == List || t.ID == Struct || t.ID == Map }

// Children returns the child fields of a nested type (nil for others, and
// for a malformed Sub, which Validate reports).
func (t DataType) Children() []Field {
	if t.Sub == "" {
		return nil
	}
	var fs []Field
	if err := json.Unmarshal([]byte(t.Sub), &fs); err != nil {
		return nil
	}
	return fs
}

func (t DataType) child(i int) DataType {
	cs := t.Children()
	if i >= len(cs) {
		return NullType
	}
	return cs[i].Type
}

// Elem is the element type of a list.
func (t DataType) Elem() DataType { return t.child(0) }

// Key is the key type of a map.
func (t DataType) Key() DataType { return t.child(0) }

// Value is the value type of a map.
func (t DataType) Value() DataType { return t.child(1) }

// Field returns the field of a struct named name (exactly, else ignoring
// case, as DuckDB matches names), and its position; -1 when there is none.
func (t DataType) Field(name string) (Field, int) {
	cs := t.Children()
	for i, c := range cs {
		if c.Name == name {
			return c, i
		}
	}
	for i, c := range cs {
		if strings.EqualFold(c.Name, name) {
			return c, i
		}
	}
	return Field{}, -1
}

var plainName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// nestedName spells a nested type as DuckDB does: BIGINT[],
// STRUCT(a BIGINT, b VARCHAR), MAP(VARCHAR, BIGINT).
func (t DataType) nestedName() string {
	switch t.ID {
	case List:
		return duckName(t.Elem()) + "[]"
	case Map:
		return "MAP(" + duckName(t.Key()) + ", " + duckName(t.Value()) + ")"
	case Struct:
		var b strings.Builder
		b.WriteString("STRUCT(")
		for i, c := range t.Children() {
			if i > 0 {
				b.WriteString(", ")
			}
			if plainName.MatchString(c.Name) {
				b.WriteString(c.Name)
			} else {
				b.WriteString(`"` + strings.ReplaceAll(c.Name, `"`, `""`) + `"`)
			}
			b.WriteString(" " + duckName(c.Type))
		}
		b.WriteString(")")
		return b.String()
	}
	return t.String()
}

// duckName is a child type's name inside a nested type's: DuckDB's upper
// case names.
func duckName(t DataType) string {
	if t.IsNested() {
		return t.nestedName()
	}
	return strings.ToUpper(t.SQLName())
}

// ParseNestedType parses a type as DuckDB spells it, nested or not, at
// the start of text: BIGINT[], STRUCT(a BIGINT, "b c" VARCHAR[]),
// MAP(VARCHAR, DECIMAL(9,2)), ROW(a BIGINT) (a struct). It returns the
// type and the bytes of text it read.
func ParseNestedType(text string) (DataType, int, error) {
	p := &typeParser{s: text}
	t, err := p.typ()
	return t, p.i, err
}

type typeParser struct {
	s string
	i int
}

func (p *typeParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\n\r", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *typeParser) eat(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *typeParser) word() string {
	p.space()
	j := p.i
	for j < len(p.s) && (p.s[j] == '_' || p.s[j] >= 'a' && p.s[j] <= 'z' || p.s[j] >= 'A' && p.s[j] <= 'Z' || p.s[j] >= '0' && p.s[j] <= '9') {
		j++
	}
	w := p.s[p.i:j]
	p.i = j
	return w
}

// name is a field name: a word or a double-quoted name.
func (p *typeParser) name() (string, error) {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '"' {
		var b strings.Builder
		for j := p.i + 1; j < len(p.s); j++ {
			if p.s[j] == '"' {
				if j+1 < len(p.s) && p.s[j+1] == '"' {
					b.WriteByte('"')
					j++
					continue
				}
				p.i = j + 1
				return b.String(), nil
			}
			b.WriteByte(p.s[j])
		}
		return "", fmt.Errorf("unterminated field name in type %q", p.s)
	}
	if w := p.word(); w != "" {
		return w, nil
	}
	return "", fmt.Errorf("expected a field name at %d of type %q", p.i, p.s)
}

func (p *typeParser) typ() (DataType, error) {
	w := strings.ToLower(p.word())
	var t DataType
	switch w {
	case "":
		return DataType{}, fmt.Errorf("expected a type at %d of %q", p.i, p.s)
	case "struct", "row":
		if !p.eat('(') {
			return DataType{}, fmt.Errorf("STRUCT takes its fields in parentheses: STRUCT(a BIGINT, b VARCHAR)")
		}
		var fs []Field
		seen := map[string]bool{}
		for {
			n, err := p.name()
			if err != nil {
				return DataType{}, err
			}
			if seen[strings.ToLower(n)] {
				return DataType{}, fmt.Errorf("duplicate struct field name %q", n)
			}
			seen[strings.ToLower(n)] = true
			ft, err := p.typ()
			if err != nil {
				return DataType{}, err
			}
			fs = append(fs, Field{Name: n, Type: ft})
			if p.eat(')') {
				break
			}
			if !p.eat(',') {
				return DataType{}, fmt.Errorf("expected ',' or ')' at %d of type %q", p.i, p.s)
			}
		}
		t = StructOf(fs)
	case "map":
		if !p.eat('(') {
			return DataType{}, fmt.Errorf("MAP takes its key and value types in parentheses: MAP(VARCHAR, BIGINT)")
		}
		k, err := p.typ()
		if err != nil {
			return DataType{}, err
		}
		if !p.eat(',') {
			return DataType{}, fmt.Errorf("MAP takes two types: MAP(VARCHAR, BIGINT)")
		}
		v, err := p.typ()
		if err != nil {
			return DataType{}, err
		}
		if !p.eat(')') {
			return DataType{}, fmt.Errorf("MAP takes two types: MAP(VARCHAR, BIGINT)")
		}
		if k.IsNested() {
			return DataType{}, fmt.Errorf("unsupported: a map key of type %s", k)
		}
		t = MapOf(k, v)
	default:
		name := w
		if w == "double" { // DOUBLE PRECISION
			save := p.i
			if strings.EqualFold(p.word(), "precision") {
				name = "doubleprecision"
			} else {
				p.i = save
			}
		}
		save := p.i
		mods := ""
		if p.eat('(') {
			j := strings.IndexByte(p.s[p.i:], ')')
			if j < 0 {
				return DataType{}, fmt.Errorf("unterminated type modifiers in %q", p.s)
			}
			mods = "(" + p.s[p.i:p.i+j] + ")"
			p.i += j + 1
		} else {
			p.i = save
		}
		var err error
		if t, err = ParseTypeName(name + mods); err != nil {
			return DataType{}, err
		}
	}
	for {
		save := p.i
		if p.eat('[') && p.eat(']') {
			t = ListOf(t)
			continue
		}
		p.i = save
		return t, nil
	}
}
