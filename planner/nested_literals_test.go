package planner

import "testing"

// TestRewriteNestedLiterals: list, struct and map literals become calls where an
// expression starts; subscripts, slices, ARRAY[...], type brackets,
// strings, comments and read_parquet's path lists stay as written.
func TestRewriteNestedLiterals(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`select [1, 2]`, `select (list_value(1, 2))`},
		{`select l[1], l[2:3], (x)[1] from t`, `select l[1], l[2:3], (x)[1] from t`},
		{`select {'a': 1, 'b': [x]}`, `select (struct_pack("a" := 1, "b" := (list_value(x))))`},
		{`select {'a': {'b': 2}}.a.b`, `select (struct_pack("a" := (struct_pack("b" := 2)))).a.b`},
		{`select * from t where l = [1] and s = {'x': 1::int}`, `select * from t where l = (list_value(1)) and s = (struct_pack("x" := 1::int))`},
		{`select [[1], []][1]`, `select (list_value((list_value(1)), (list_value())))[1]`},
		{`select ARRAY[1, 2], '{1,2}'::int[], '[1]' -- [x]`, `select ARRAY[1, 2], '{1,2}'::int[], '[1]' -- [x]`},
		{`select * from read_parquet(['s3://b/x/'])`, `select * from read_parquet(['s3://b/x/'])`},
		{`select * from read_csv('s3://b/x.csv', types={'a': 'VARCHAR'})`, `select * from read_csv('s3://b/x.csv', types={'a': 'VARCHAR'})`},
		{`select 1 where x in [1]`, `select 1 where x in (list_value(1))`},
		{`select list_sort(l)[1], f(g(x))[2:3], (y)[1], t.l[1], array[1][1] from t`, `select (list_sort(l))[1], (f(g(x)))[2:3], (y)[1], t.l[1], array[1][1] from t`},
		{`select s.f(x)[1]`, `select (s.f(x))[1]`},
		{`select MAP {'a': 1, 'b': [2]}, map {1: {'x': 2}}['k'], MAP {}`, `select (sluice_map_literal('a', 1, 'b', (list_value(2)))), (sluice_map_literal(1, (struct_pack("x" := 2))))['k'], (sluice_map_literal())`},
		{`select x::MAP(VARCHAR, INT), map([1], [2])`, `select x::MAP(VARCHAR, INT), map((list_value(1)), (list_value(2)))`},
	} {
		if got := rewriteNestedLiterals(tc.in); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}
