package exec

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// typeof(x), DuckDB's: the name of x's type, on every row (NULL ones
// too). The names are DuckDB's spelling of sluice's engine types, so an
// integer column of any width says BIGINT (sluice computes on 64 bits)
// and a sum of integers DECIMAL(38,0) (DuckDB: HUGEINT).
func typeFunctions() []*ScalarFunction {
	return []*ScalarFunction{
		{Name: "typeof", Doc: "the name of the argument's type (BIGINT, DOUBLE, VARCHAR, DECIMAL(p,s), BIGINT[], STRUCT(...), MAP(...)); sluice's engine types: every integer is BIGINT",
			Signatures: []Signature{sig(plan.StringType, AnyType)}, Nulls: NullCustom, Nested: true,
			Kernel: func(c *Call) (arrow.Array, error) {
				name := TypeName(c.Args[0].Type())
				o := newOut(c.Mem, c.Type, c.N)
				for i := 0; i < c.N; i++ {
					o.str(name)
				}
				return o.finish(), nil
			}},
	}
}

// TypeName spells t as DuckDB's typeof does.
func TypeName(t plan.DataType) string {
	switch t.ID {
	case plan.Null:
		return `"NULL"`
	case plan.List:
		return TypeName(t.Elem()) + "[]"
	case plan.Map:
		return "MAP(" + TypeName(t.Key()) + ", " + TypeName(t.Value()) + ")"
	case plan.Struct:
		var parts []string
		for _, f := range t.Children() {
			parts = append(parts, typeofIdent(f.Name)+" "+TypeName(f.Type))
		}
		return "STRUCT(" + strings.Join(parts, ", ") + ")"
	}
	return strings.ToUpper(t.SQLName())
}

// typeofIdent quotes a struct field name unless it is a plain lower-case
// identifier, as DuckDB prints it.
func typeofIdent(s string) string {
	plain := s != ""
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			plain = false
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
