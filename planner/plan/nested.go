package plan

import (
	"encoding/json"
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
