package tests

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestNestedTypeNames: DuckDB's nested type names where a type is
// written. In a CREATE EXTERNAL TABLE column list, a CSV column typed
// INT[], STRUCT(...), ROW(...) or MAP(...) reads its text as DuckDB's
// read_csv does with such a column type (a cast of the text); in casts,
// TRY_CAST and :: take STRUCT, ROW, MAP and T[]. Answers as DuckDB's,
// adaptive and static.
func TestNestedTypeNames(t *testing.T) {
	db := openDuckPlain(t)
	st := startStack(t, "", nil)
	path := filepath.Join(t.TempDir(), "nt.csv")
	src := `select i as id,
		case when i % 9 = 0 then null else [i, null, i + 1] end as l,
		{'a': i, 'b': 'x, "y" ' || i} as s,
		case when i % 4 = 0 then null else {'p': i % 3, 'q': [i::varchar, 'z']} end as r,
		map(['k' || (i % 5)], [i]) as m,
		[[i], [], [i, i]] as ll
		from range(60) t(i)`
	if _, err := db.Exec(fmt.Sprintf("COPY (%s) TO '%s' (HEADER)", src, path)); err != nil {
		t.Fatal(err)
	}
	upload(t, st, path, "raw/nt/nt.csv")
	cols := `id BIGINT, l INT[], s STRUCT(a INT, b VARCHAR), r ROW(p INTEGER, q VARCHAR[]), m MAP(VARCHAR, BIGINT), ll BIGINT[][]`
	stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE nt (%s) STORED AS CSV LOCATION 's3://%s/raw/nt/'", cols, st.S3.Bucket))
	if _, err := db.Exec(fmt.Sprintf(`CREATE VIEW nt AS SELECT * FROM read_csv('%s', header = true, columns = {'id': 'BIGINT', 'l': 'INT[]', 's': 'STRUCT(a INT, b VARCHAR)', 'r': 'STRUCT(p INTEGER, q VARCHAR[])', 'm': 'MAP(VARCHAR, BIGINT)', 'll': 'BIGINT[][]'})`, path)); err != nil {
		t.Fatal(err)
	}
	// The same file with the types in the columns option.
	stmt(t, st, fmt.Sprintf(`CREATE EXTERNAL TABLE nt2 STORED AS CSV LOCATION 's3://%s/raw/nt/' OPTIONS (header true, columns '{''id'': ''BIGINT'', ''l'': ''INT[]'', ''s'': ''STRUCT(a INT, b VARCHAR)'', ''r'': ''ROW(p INTEGER, q VARCHAR[])'', ''m'': ''MAP(VARCHAR, BIGINT)'', ''ll'': ''BIGINT[][]''}')`, st.S3.Bucket))
	if _, err := db.Exec(`CREATE VIEW nt2 AS SELECT * FROM nt`); err != nil {
		t.Fatal(err)
	}
	checkModes(t, st, db, []query{
		{name: "option-all", sql: `select * from nt2`},
		{name: "option-fields", sql: `select id, l[2], s.b, r.q, m['k1'], ll[1] from nt2 where id % 7 = 2`},
		{name: "all", sql: `select * from nt`},
		{name: "fields", sql: `select id, l[1], l[3], s.a, s.b, r.p, r.q[1], m['k2'], ll[3][2], len(ll[2]) from nt`},
		{name: "filter", sql: `select id, s from nt where s.a > 50 and l is not null`},
		{name: "group", sql: `select r.p, count(*), sum(s.a) from nt group by r.p`},
		{name: "unnest", sql: `select id, x from nt, unnest(l) as u(x) where id < 20`},
		{name: "cast-struct", sql: `select id, cast(s as struct(a varchar, b varchar)), try_cast(s.b as struct(a int)), s::row(a double, b varchar) from nt where id < 10`},
		{name: "cast-row", sql: `select id, try_cast(r as row(p varchar, q int[])), cast(row(id, s.b) as row(k bigint, v varchar)) from nt where id < 10`},
		{name: "cast-list", sql: `select id, l::varchar[], try_cast(l as double[]), cast(ll as varchar[][]), try_cast(s.b as int[]) from nt where id < 10`},
		{name: "cast-map", sql: `select id, cast(m as map(varchar, varchar)), try_cast(m as map(varchar, double)) from nt where id < 10`},
		{name: "cast-text", sql: `select id, ('[' || id || ', 2]')::int[], try_cast('{''a'': ' || id || '}' as struct(a int)) from nt where id < 10`},
	})
}
