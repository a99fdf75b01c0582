package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

func mustType(t *testing.T, s string) plan.DataType {
	t.Helper()
	ty, n, err := plan.ParseNestedType(s)
	if err != nil || n != len(s) {
		t.Fatalf("type %q: %v (read %d)", s, err, n)
	}
	return ty
}

// textOf is the text of every row of a (nil for NULL).
func textOf(t *testing.T, mem memory.Allocator, a arrow.Array) []any {
	t.Helper()
	s, err := castArray(mem, a, plan.StringType)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	return goVals(s)
}

// TestNestedCastText: text -> nested -> text round trips and the text
// DuckDB 1.5 prints for the same values (SELECT x::VARCHAR).
func TestNestedCastText(t *testing.T) {
	mem := checkedMem(t)
	cases := []struct {
		typ, in string
		want    any // DuckDB's text of the value; nil for NULL
		try     bool
	}{
		{"BIGINT[]", "[1, 2, NULL]", "[1, 2, NULL]", false},
		{"BIGINT[]", " [ 1 , 2 ] ", "[1, 2]", false},
		{"BIGINT[]", "[]", "[]", false},
		{"BIGINT[][]", "[[1,2],[3], NULL, []]", "[[1, 2], [3], NULL, []]", false},
		{"DOUBLE[]", "[1.5, 2]", "[1.5, 2.0]", false},
		{"DECIMAL(5,2)[]", "[1.5]", "[1.50]", false},
		{"DATE[]", "[2024-01-01, NULL]", "[2024-01-01, NULL]", false},
		{"BOOLEAN[]", "[true, false]", "[true, false]", false},
		{"VARCHAR[]", `['a', ' a', 'a ', 'NULL', 'a''b', 'a"b', '[x]', '{x}', 'a:b', 'a=b', '(x)', 'a,b', '', ' ', é, NULL]`,
			`[a, ' a', 'a ', 'NULL', 'a\'b', 'a"b', '[x]', '{x}', 'a:b', 'a=b', '(x)', 'a,b', '', ' ', é, NULL]`, false},
		{"VARCHAR[]", `['a b', "c,d", e f ]`, `[a b, 'c,d', e f]`, false},
		{"STRUCT(a BIGINT, b VARCHAR)", "{a: 1, b: x}", "{'a': 1, 'b': x}", false},
		{"STRUCT(a BIGINT, b VARCHAR)", "{'b': x y, \"a\": 1}", "{'a': 1, 'b': x y}", false},
		{"STRUCT(a BIGINT, b VARCHAR)", "(1, 2)", "{'a': 1, 'b': 2}", false},
		{"STRUCT(a BIGINT, b BIGINT[])", "{a:1, b: [1, 2]}", "{'a': 1, 'b': [1, 2]}", false},
		{"STRUCT(a BIGINT, b BIGINT)", "{a: 1}", "{'a': 1, 'b': NULL}", false},
		{"STRUCT(a BIGINT)[]", "[{a: 1}, NULL]", "[{'a': 1}, NULL]", false},
		{"MAP(VARCHAR, BIGINT)", "{k=1, z=NULL}", "{k=1, z=NULL}", false},
		{"MAP(VARCHAR, VARCHAR)", "{'a b'=v w, 'NULL'='NULL', 'x=y'='=', ''=''}", "{a b=v w, 'NULL'='NULL', 'x=y'='=', ''=''}", false},
		{"MAP(VARCHAR, BIGINT)", "{}", "{}", false},
		// TRY_CAST: a bad element is NULL, bad text or a bad map key NULL
		{"BIGINT[]", "[1, x]", "[1, NULL]", true},
		{"BIGINT[]", "garbage", nil, true},
		{"STRUCT(a BIGINT)", "{a: x}", "{'a': NULL}", true},
		{"MAP(VARCHAR, BIGINT)", "{k=1, z=x}", "{k=1, z=NULL}", true},
		{"MAP(BIGINT, BIGINT)", "{k=1}", nil, true},
		{"STRUCT(a BIGINT, b BIGINT)", "{a: 1, c: 2}", nil, true},
	}
	for _, c := range cases {
		to := mustType(t, c.typ)
		in := buildArray(mem, plan.StringType, []any{"[0]", c.in})
		one := array.NewSlice(in, 1, 2) // sliced input
		var got arrow.Array
		var err error
		if c.try {
			got, err = tryCastArray(mem, one, to)
		} else {
			got, err = castArray(mem, one, to)
		}
		one.Release()
		in.Release()
		if err != nil {
			t.Errorf("%s::%s: %v", c.in, c.typ, err)
			continue
		}
		if !arrow.TypeEqual(got.DataType(), to.Arrow()) {
			t.Errorf("%s::%s: type %s", c.in, c.typ, got.DataType())
		}
		if txt := textOf(t, mem, got); txt[0] != c.want {
			t.Errorf("%s::%s: %v, want %v", c.in, c.typ, txt[0], c.want)
		}
		got.Release()
	}
	// Text DuckDB refuses (CAST, not TRY_CAST): SL101.
	for _, c := range []struct{ typ, in string }{
		{"BIGINT[]", "[1, x]"}, {"BIGINT[]", "NULL"}, {"BIGINT[]", "[1"}, {"STRUCT(a BIGINT, b BIGINT)", "{a: 1, c: 2}"},
		{"MAP(VARCHAR, BIGINT)", "{NULL=1}"}, {"BIGINT[]", "[1] x"}, {"MAP(VARCHAR, BIGINT)", "{k=1, k=2}"},
	} {
		in := buildArray(mem, plan.StringType, []any{c.in})
		_, err := castArray(mem, in, mustType(t, c.typ))
		in.Release()
		if plan.CodeOf(err) != plan.CodeInvalidCast {
			t.Errorf("%s::%s: %v, want SL101", c.in, c.typ, err)
		}
	}
}

// TestNestedCastNested: list, map and struct casts element by element,
// struct fields by name (DuckDB 1.5: a missing field is NULL, an extra
// one dropped, none in common an error), an unnamed struct by position.
func TestNestedCastNested(t *testing.T) {
	mem := checkedMem(t)
	cases := []struct {
		from, in, to string
		want         any
		try          bool
	}{
		{"BIGINT[]", "[1, 2, NULL]", "VARCHAR[]", "[1, 2, NULL]", false},
		{"VARCHAR[]", "['1', ' 2']", "BIGINT[]", "[1, 2]", false},
		{"VARCHAR[]", "['1', x]", "BIGINT[]", "[1, NULL]", true},
		{"BIGINT[][]", "[[1], NULL]", "DOUBLE[][]", "[[1.0], NULL]", false},
		{"STRUCT(a BIGINT, b VARCHAR)", "{a: 1, b: 2}", "STRUCT(a VARCHAR, b BIGINT)", "{'a': 1, 'b': 2}", false},
		{"STRUCT(a BIGINT, b VARCHAR)", "{a: 1, b: 2}", "STRUCT(b VARCHAR, a BIGINT)", "{'b': 2, 'a': 1}", false},
		{"STRUCT(a BIGINT, b VARCHAR)", "{a: 1, b: 2}", "STRUCT(A VARCHAR)", "{'A': 1}", false},
		{"STRUCT(a BIGINT, b VARCHAR)", "{a: 1, b: 2}", "STRUCT(a VARCHAR, b BIGINT, c BIGINT)", "{'a': 1, 'b': 2, 'c': NULL}", false},
		{"STRUCT(a VARCHAR, b VARCHAR)", "{a: x, b: 1}", "STRUCT(a BIGINT, b BIGINT)", "{'a': NULL, 'b': 1}", true},
		{"MAP(VARCHAR, BIGINT)", "{k=1}", "MAP(VARCHAR, VARCHAR)", "{k=1}", false},
		{"MAP(BIGINT, VARCHAR)", "{1=2}", "MAP(VARCHAR, BIGINT)", "{1=2}", false},
		{"MAP(VARCHAR, VARCHAR)", "{a=x}", "MAP(VARCHAR, BIGINT)", "{a=NULL}", true},
		{"MAP(VARCHAR, VARCHAR)", "{a=1, b=2}", "MAP(BIGINT, VARCHAR)", nil, true},
	}
	for _, c := range cases {
		in := buildArray(mem, plan.StringType, []any{c.in, nil})
		src, err := castArray(mem, in, mustType(t, c.from))
		in.Release()
		if err != nil {
			t.Fatalf("%s::%s: %v", c.in, c.from, err)
		}
		to := mustType(t, c.to)
		var got arrow.Array
		if c.try {
			got, err = tryCastArray(mem, src, to)
		} else {
			got, err = castArray(mem, src, to)
		}
		src.Release()
		if err != nil {
			t.Errorf("%s::%s::%s: %v", c.in, c.from, c.to, err)
			continue
		}
		if txt := textOf(t, mem, got); txt[0] != c.want || txt[1] != nil {
			t.Errorf("%s::%s::%s: %v, want %v", c.in, c.from, c.to, txt, c.want)
		}
		got.Release()
	}
	// An unnamed struct (row(1, 'x')): text (1, x), cast by position.
	row := plan.StructOf([]plan.Field{{Type: plan.Int64Type}, {Type: plan.StringType}})
	in := buildArray(mem, plan.StringType, []any{"(1, x)"})
	r, err := castArray(mem, in, row)
	in.Release()
	if err != nil {
		t.Fatal(err)
	}
	if txt := textOf(t, mem, r); txt[0] != "(1, x)" {
		t.Errorf("row text: %v", txt)
	}
	named, err := castArray(mem, r, mustType(t, "STRUCT(a VARCHAR, b VARCHAR)"))
	r.Release()
	if err != nil {
		t.Fatal(err)
	}
	if txt := textOf(t, mem, named); txt[0] != "{'a': 1, 'b': x}" {
		t.Errorf("row cast: %v", txt)
	}
	named.Release()
	if _, err := StructCastFields(mustType(t, "STRUCT(a BIGINT)"), mustType(t, "STRUCT(x BIGINT)")); err == nil {
		t.Errorf("a struct cast with no common field: no error")
	}
}

// TestNestedCastMapKeysCollide: map keys that become equal by the cast
// are refused (SL101), never returned twice.
func TestNestedCastMapKeysCollide(t *testing.T) {
	mem := checkedMem(t)
	in := buildArray(mem, plan.StringType, []any{"{1=a, 01=b}"})
	m, err := castArray(mem, in, mustType(t, "MAP(VARCHAR, VARCHAR)"))
	in.Release()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	if _, err := castArray(mem, m, mustType(t, "MAP(BIGINT, VARCHAR)")); plan.CodeOf(err) != plan.CodeInvalidCast {
		t.Errorf("colliding keys: %v, want SL101", err)
	}
}
