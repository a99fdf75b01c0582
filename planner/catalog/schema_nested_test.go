package catalog

import (
	"strings"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestParseSchemaNested: a column list takes DuckDB's nested type names,
// spaces inside kept; a bad one is an error naming the column.
func TestParseSchemaNested(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // the columns' types, as DuckDB spells them; "" an error
	}{
		{"id bigint, l INT[]", "BIGINT BIGINT[]"},
		{"s STRUCT(a INT, b VARCHAR)", "STRUCT(a BIGINT, b VARCHAR)"},
		{"s struct (a int, \"b c\" varchar[])", `STRUCT(a BIGINT, "b c" VARCHAR[])`},
		{"r ROW(p INTEGER, q VARCHAR[]), m MAP(VARCHAR, BIGINT)", "STRUCT(p BIGINT, q VARCHAR[]) MAP(VARCHAR, BIGINT)"},
		{"ll BIGINT[][], d decimal(9, 2)", "BIGINT[][] DECIMAL(9,2)"},
		{"s STRUCT(a INT", ""},
		{"s STRUCT(a INT) x", ""},
		{"m MAP(VARCHAR)", ""},
	} {
		fs, err := ParseSchema(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s: no error, want one", tc.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		got := ""
		for i, f := range fs {
			if i > 0 {
				got += " "
			}
			got += duckTypeName(f.Type)
		}
		if got != tc.want {
			t.Errorf("%s: types %s, want %s", tc.in, got, tc.want)
		}
	}
}

func duckTypeName(t plan.DataType) string {
	if t.IsNested() {
		return t.String()
	}
	return strings.ToUpper(t.SQLName())
}
