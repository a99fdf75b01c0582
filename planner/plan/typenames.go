package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// The SQL type names sluice accepts, Postgres's and DuckDB's spellings, in
// one table: the binder's CAST and the CSV schema parser read it
// (TypeByName, ParseTypeName), and SQLName spells a type back. Every SQL
// integer type widens to int64, every float to float64, every character
// type to string.
var typeNames = map[string]TypeID{
	"int2": Int64, "int4": Int64, "int8": Int64, "smallint": Int64, "integer": Int64, "int": Int64,
	"bigint": Int64, "tinyint": Int64, "hugeint": Int64, "int32": Int64, "int64": Int64,
	"float4": Float64, "float8": Float64, "real": Float64, "float": Float64, "double": Float64,
	"doubleprecision": Float64, "float64": Float64,
	"varchar": String, "text": String, "bpchar": String, "char": String, "string": String, "character": String,
	"date":      Date,
	"timestamp": Timestamp, "datetime": Timestamp, "timestamp_us": Timestamp,
	"bool": Bool, "boolean": Bool,
	"numeric": Decimal, "decimal": Decimal,
}

// DefaultDecimal is DECIMAL without modifiers (DuckDB's decimal(18,3)).
var DefaultDecimal = DataType{ID: Decimal, Precision: 18, Scale: 3}

// TypeByName is the engine type of a SQL type name (lower case, no
// modifiers; a decimal is DefaultDecimal).
func TypeByName(name string) (DataType, bool) {
	id, ok := typeNames[name]
	switch {
	case !ok:
		return DataType{}, false
	case id == Decimal:
		return DefaultDecimal, true
	}
	return DataType{ID: id}, true
}

// DecimalOf checks the modifiers of DECIMAL(p[, s]) (mods holds p, or p
// and s) and returns the type.
func DecimalOf(mods []int) (DataType, error) {
	p, s := DefaultDecimal.Precision, DefaultDecimal.Scale
	switch len(mods) {
	case 0:
	case 1:
		p, s = mods[0], 0
	case 2:
		p, s = mods[0], mods[1]
	default:
		return DataType{}, fmt.Errorf("invalid decimal type modifier")
	}
	if p < 1 || s < 0 || s > p {
		return DataType{}, fmt.Errorf("invalid decimal type decimal(%d,%d)", p, s)
	}
	if p > MaxDecimalPrecision {
		return DataType{}, fmt.Errorf("invalid decimal type decimal(%d,%d): precision is at most %d", p, s, MaxDecimalPrecision)
	}
	return DecimalType(p, s), nil
}

// ParseTypeName parses a type as a schema spells it: a name of the table
// (case and spaces ignored: "double precision"), with modifiers for a
// decimal (decimal(p[, s])) or a character type (varchar(n), ignored).
func ParseTypeName(text string) (DataType, error) {
	s := strings.ToLower(strings.Join(strings.Fields(text), ""))
	name, mods := s, ""
	if i := strings.IndexByte(s, '('); i >= 0 && strings.HasSuffix(s, ")") {
		name, mods = s[:i], s[i+1:len(s)-1]
	}
	t, ok := TypeByName(name)
	switch {
	case !ok:
		return DataType{}, fmt.Errorf("unknown type %q", text)
	case mods == "" && name != s:
		return DataType{}, fmt.Errorf("invalid type %q", text)
	case name == s || t.ID == String:
		return t, nil
	case t.ID != Decimal:
		return DataType{}, fmt.Errorf("type %s takes no modifiers", name)
	}
	var ns []int
	for _, m := range strings.Split(mods, ",") {
		n, err := strconv.Atoi(m)
		if err != nil {
			return DataType{}, fmt.Errorf("invalid decimal type modifier %q", m)
		}
		ns = append(ns, n)
	}
	return DecimalOf(ns)
}

// SQLName spells t as SQL does (DESCRIBE, result headers): bigint,
// double, varchar, boolean, decimal(p,s), date, timestamp.
func (t DataType) SQLName() string {
	switch t.ID {
	case Int64:
		return "bigint"
	case Float64:
		return "double"
	case String:
		return "varchar"
	case Bool:
		return "boolean"
	}
	return t.String()
}
