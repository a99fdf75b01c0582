package pgwire

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// TestFigureColname: the names Postgres gives unaliased output columns
// (FigureColname in parse_target.c), from the parse tree.
func TestFigureColname(t *testing.T) {
	for _, c := range []struct{ sql, want string }{
		{`select count(*)`, "count"},
		{`select sum(x), avg(x), min(x)`, "sum avg min"},
		{`select extract(year from d)`, "extract"},
		{`select substring(s from 1 for 2), trim(s), position('a' in s)`, "substring btrim position"},
		{`select x + 1, -x, x > 1, x is null, not b, x between 1 and 2`, "?column? ?column? ?column? ?column? ?column? ?column?"},
		{`select cast(x as int), x::bigint, t.x::text`, "x x x"},
		{`select cast(1 as int), 1::bigint, '1995-01-01'::date, date '1995-01-01', cast(1.5 as numeric(10,2))`, "int4 int8 date date numeric"},
		{`select cast(count(*) as double precision)`, "count"},
		{`select case when x > 1 then 1 else 0 end, case when b then 1 end`, "case case"},
		{`select case when b then 1 else y end`, "y"},
		{`select x, t.y, s.t.z, "Mixed Case", "Mixed Case" as "Alias", x as y`, "x y z Mixed Case Alias y"},
		{`select 1, 'a', null, true`, "?column? ?column? ?column? ?column?"},
		{`select coalesce(a, b), nullif(a, b), greatest(a, b), least(a, b)`, "coalesce nullif greatest least"},
		{`select (select max(x) from t), (select x as q from t), exists(select 1), array(select 1)`, "max q exists array"},
		{`select current_date, current_timestamp, localtimestamp, current_user, session_user`, "current_date current_timestamp localtimestamp current_user session_user"},
		{`select a[1], (r).f, row(1, 2), array[1, 2]`, "a f row array"},
		{`select grouping(x), count(*) over (), row_number() over (order by x)`, "grouping count row_number"},
		{`select x collate "C"`, "x"},
		{`select upper(s) from t union all select 'b'`, "upper"},
		{`with w as (select 1 as a) select a + 0, a from w`, "?column? a"},
		{`values (1, 'a'), (2, 'b')`, "column1 column2"},
		{`select "Count"(x)`, "Count"},
	} {
		n := parseOne(c.sql)
		names, _, ok := outputNames(n)
		if got := strings.Join(names, " "); !ok || got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.sql, got, c.want)
		}
	}
}

// TestPGNames lines the names up with the engine's fields: one-to-one,
// around a star, and not at all when they cannot be.
func TestPGNames(t *testing.T) {
	schema := func(names ...string) *arrow.Schema {
		fs := make([]arrow.Field, len(names))
		for i, n := range names {
			fs[i] = arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Int64}
		}
		return arrow.NewSchema(fs, nil)
	}
	for _, c := range []struct {
		sql    string
		fields []string
		want   string
	}{
		{`select count(*), x + 1 from t`, []string{"count(*)", "(x + 1)"}, "count ?column?"},
		{`select count(*), * , x + 1 from t`, []string{"count(*)", "a", "b", "(x + 1)"}, "count a b ?column?"},
		{`select t.*, 1 from t`, []string{"a", "b", "1"}, "a b ?column?"},
		{`select *, 1 from t, u`, []string{"a", "b", "c", "1"}, "a b c ?column?"},
		{`select a.*, count(*), b.* from a, b`, []string{"x", "count(*)", "y"}, "x count(*) y"}, // between stars: keep
		{`select count(*), sum(x) from t`, []string{"only"}, "only"},                            // cannot line up: keep
		{`select x + 1 from t qualify x = 1`, []string{"(x + 1)"}, "(x + 1)"},                   // not Postgres SQL: keep
	} {
		got := pgNames(parseOne(c.sql), schema(c.fields...))
		var names []string
		for _, f := range got.Fields() {
			names = append(names, f.Name)
		}
		if strings.Join(names, " ") != c.want {
			t.Errorf("%s: got %q, want %q", c.sql, names, c.want)
		}
	}
}

// TestQueryText takes the query out of COPY and DECLARE as written.
func TestQueryText(t *testing.T) {
	for _, c := range []struct {
		sql  string
		tok  pg_query.Token
		want string
	}{
		{`COPY (select x, (1 + 2) from t where s = ')') TO STDOUT WITH CSV`, pg_query.Token_COPY, `select x, (1 + 2) from t where s = ')'`},
		{`copy ( values (1) ) to stdout`, pg_query.Token_COPY, `values (1)`},
		{`DECLARE c BINARY NO SCROLL CURSOR WITH HOLD FOR select x from t for update`, pg_query.Token_CURSOR, `select x from t for update`},
		{`declare "for" cursor for select 1;`, pg_query.Token_CURSOR, `select 1`},
	} {
		if got, ok := queryText(c.sql, c.tok); !ok || got != c.want {
			t.Errorf("%s: got %q %v, want %q", c.sql, got, ok, c.want)
		}
	}
}
