package tests

import (
	"fmt"
	"path/filepath"
	"testing"
)

// nestedPathsSource is the DuckDB query of TestNestedFieldScan's file:
// s.a rises with the row, so each row group holds its own range of it;
// s.b is a wide string (64 hex digits) the field reads must not fetch, s.c a struct in the
// struct; NULL structs and NULL fields at each level.
const nestedPathsSource = `select i::int as id,
	case when i % 11 = 0 then null else {'a': i, 'b': md5(i::varchar) || md5((i * 7)::varchar), 'c': case when i % 17 = 0 then null else {'x': i // 100, 'y': [i, i + 1]} end} end as s,
	repeat('p', 60) || i as pad
	from range(40000) t(i)`

// TestNestedFieldScan: a query that reads a struct field reads only its
// leaf, and a filter on the field prunes row groups from the leaf's
// statistics; answers as DuckDB's on the same file, adaptive and static.
// The bytes fetched and row groups pruned are those of the struct read
// whole with the same filter, which prunes nothing.
func TestNestedFieldScan(t *testing.T) {
	db := openDuckPlain(t)
	st := startStack(t, "", nil)
	path := filepath.Join(t.TempDir(), "np.parquet")
	if _, err := db.Exec(fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet, ROW_GROUP_SIZE 4096)", nestedPathsSource, path)); err != nil {
		t.Fatal(err)
	}
	upload(t, st, path, "raw/np/np.parquet")
	stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE np STORED AS PARQUET LOCATION 's3://%s/raw/np/'", st.S3.Bucket))
	if _, err := db.Exec(fmt.Sprintf("CREATE VIEW np AS SELECT * FROM read_parquet('%s')", path)); err != nil {
		t.Fatal(err)
	}
	var groups int
	if err := db.QueryRow(fmt.Sprintf("select count(distinct row_group_id) from parquet_metadata('%s')", path)).Scan(&groups); err != nil {
		t.Fatal(err)
	}
	checkModes(t, st, db, []query{
		{name: "gt", sql: `select s.a from np where s.a > 31000`},
		{name: "eq", sql: `select id, s.a, s.c from np where s.a = 20777`},
		{name: "between", sql: `select s.c.x, s.b from np where s.a between 5000 and 9000 and s.c.x > 60`},
		{name: "deep", sql: `select s.c.x, count(*) from np where s.c.x >= 390 group by s.c.x`},
		{name: "in", sql: `select s.a, s.c.y from np where s.a in (3, 39999, 12345)`},
		{name: "nulls", sql: `select count(*), count(s.a), count(s.c), count(s.c.x) from np where s.a < 30 or s.a is null`},
		{name: "whole", sql: `select s, s.a from np where s.a > 39000`},
		{name: "none", sql: `select s.a from np where s.a > 99999`},
	})

	// One query, its fields read alone, against the struct read whole
	// with a filter that prunes from the leaf too, and against the struct
	// read whole with a filter the statistics cannot decide (what the scan
	// did before: s whole, every row group). bytes are the scans' bytes_read.
	measure := func(q string) (pruned int, bytes int64, rows int) {
		res := run(t, st, q, true)
		for _, s := range res.Status.Stages {
			pruned += s.RowGroupsPruned
			if s.Metrics == nil {
				t.Fatalf("stage %d has no metrics", s.ID)
			}
			for _, o := range s.Metrics.Operators {
				if o.Leaf && o.Kind == "scan" {
					bytes += o.Bytes
				}
			}
		}
		return pruned, bytes, len(sluiceRows(res))
	}
	fp, fb, fr := measure(`select s.a from np where s.a > 31000`)
	wp, wb, wr := measure(`select s from np where s.a > 31000`)
	bp, bb, br := measure(`select s from np where s.a + 0 > 31000`)
	t.Logf("%d row groups, s.a > 31000: reading s.a pruned %d row groups, read %d bytes; reading s whole pruned %d, read %d bytes; s whole, s.a + 0 > 31000: pruned %d, read %d bytes",
		groups, fp, fb, wp, wb, bp, bb)
	if fr != wr || fr != br || fr == 0 {
		t.Fatalf("%d rows reading s.a, %d reading s, %d unpruned", fr, wr, br)
	}
	// Rows 0..31000 fill at least 7 row groups of at most 4096 rows.
	if fp < 7 || fp >= groups || wp != fp || bp != 0 {
		t.Errorf("row groups pruned: %d reading s.a, %d reading s, %d unpruned, of %d", fp, wp, bp, groups)
	}
	if fb == 0 || fb*4 > wb || wb >= bb {
		t.Errorf("bytes read: %d reading s.a, %d reading s, %d unpruned", fb, wb, bb)
	}
}

// listFieldsSource is the DuckDB query of TestListFieldScan's file: l a
// list of structs whose b is a wide string the field reads must not
// fetch, c a struct in the element with a list in it; s a struct holding
// a list of structs. NULL lists, NULL elements and NULL fields at each
// level, and empty lists.
const listFieldsSource = `select i::int as id,
	case when i % 13 = 0 then null when i % 7 = 0 then [] else
		[{'a': i, 'b': md5(i::varchar) || md5((i * 3)::varchar), 'c': {'x': i % 10, 'y': [i::varchar, 'z']}},
		 case when i % 5 = 0 then null else {'a': case when i % 3 = 0 then null else i * 2 end, 'b': md5((i * 5)::varchar) || md5((i * 9)::varchar), 'c': case when i % 4 = 0 then null else {'x': i % 7, 'y': []::varchar[]} end} end]
	end as l,
	{'k': i % 100, 'l': case when i % 9 = 0 then null else [{'p': i, 'q': repeat('q', 40) || i}, {'p': -i, 'q': md5(i::varchar)}] end} as s
	from range(20000) t(i)`

// TestListFieldScan: a query that reads some fields of the elements of
// a list of structs (l[1].a, unnest(l) and a field of the element, the
// same in a list in a struct) reads only their leaves (list_fields), with
// answers as DuckDB's on the same file, adaptive and static; the bytes
// the scans fetch are a fraction of those of the same query reading the
// lists whole.
func TestListFieldScan(t *testing.T) {
	db := openDuckPlain(t)
	st := startStack(t, "", nil)
	path := filepath.Join(t.TempDir(), "lf.parquet")
	if _, err := db.Exec(fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet, ROW_GROUP_SIZE 4096)", listFieldsSource, path)); err != nil {
		t.Fatal(err)
	}
	upload(t, st, path, "raw/lf/lf.parquet")
	stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE lf STORED AS PARQUET LOCATION 's3://%s/raw/lf/'", st.S3.Bucket))
	if _, err := db.Exec(fmt.Sprintf("CREATE VIEW lf AS SELECT * FROM read_parquet('%s')", path)); err != nil {
		t.Fatal(err)
	}
	checkModes(t, st, db, []query{
		{name: "index", sql: `select id, l[1].a, l[2].a, l[-1].c.x from lf where id % 97 = 1`},
		{name: "deep", sql: `select l[1].c.y, l[2].c from lf where id < 60`},
		{name: "unnest", sql: `select x.a, x.c.x from lf, unnest(l) as u(x) where id between 100 and 140`},
		{name: "unnest-agg", sql: `select x.c.x, count(*), count(x.a), sum(x.a) from lf, unnest(l) as u(x) group by x.c.x`},
		{name: "select-unnest", sql: `select id, struct_extract(unnest(l), 'a') as a from lf where id < 30`},
		{name: "slice", sql: `select id, l[2:2][1].a from lf where id < 40`},
		{name: "struct-list", sql: `select id, s.k, s.l[2].p from lf where id < 50`},
		{name: "struct-list-unnest", sql: `select s.k, sum(x.p), count(*) from lf, unnest(s.l) as u(x) group by s.k`},
		{name: "nulls", sql: `select count(*), count(l[1].a), count(l[2]), count(l[2].c.x), count(s.l[1].p) from lf`},
		{name: "whole", sql: `select id, l, l[1].a from lf where id < 25`},
		{name: "shape", sql: `select id, len(l), l is null, l[2] is null, l[2].c is null, len(l[1].c.y), len(s.l), s.l is not null from lf where id < 80`},
		{name: "shape-unnest", sql: `select count(*), count(x) from lf, unnest(l) as u(x) where x is null or id % 3 = 0`},
		{name: "shape-value", sql: `select id, len(l), l[1].b from lf where id between 200 and 230`},
	})

	// bytes are the scans' bytes_read.
	measure := func(q string) (bytes int64, rows []row) {
		res := run(t, st, q, true)
		for _, s := range res.Status.Stages {
			if s.Metrics == nil {
				t.Fatalf("stage %d has no metrics", s.ID)
			}
			for _, o := range s.Metrics.Operators {
				if o.Leaf && o.Kind == "scan" {
					bytes += o.Bytes
				}
			}
		}
		return bytes, sluiceRows(res)
	}
	for _, tc := range []struct{ name, fields, whole string }{
		// The same answer, with l = l (true where l is not NULL) making
		// the list a use whole.
		{"index", `select sum(l[1].a), count(l[2].c.x) from lf`, `select sum(l[1].a), count(l[2].c.x) from lf where l is null or l = l`},
		{"unnest", `select sum(x.a) from lf, unnest(l) as u(x)`, `select sum(x.a) from lf, unnest(l) as u(x) where l = l`},
		{"struct-list", `select sum(s.l[1].p) from lf`, `select sum(s.l[1].p) from lf where s.l is null or s.l = s.l`},
		// Only the lists' shape: one leaf, a number's.
		{"shape", `select sum(len(l)), count(*) filter (where l[2] is null) from lf where l is not null`,
			`select sum(len(l)), count(*) filter (where l[2] is null) from lf where l is not null and l = l`},
	} {
		fb, fr := measure(tc.fields)
		wb, wr := measure(tc.whole)
		t.Logf("%s: reading the fields used %d bytes, the lists whole %d bytes (%.1fx)", tc.name, fb, wb, float64(wb)/float64(max(fb, 1)))
		if fmt.Sprint(fr) != fmt.Sprint(wr) || len(fr) == 0 {
			t.Errorf("%s: %v reading the fields, %v reading whole", tc.name, fr, wr)
		}
		if fb == 0 || fb*2 > wb {
			t.Errorf("%s: bytes read: %d reading the fields used, %d reading the lists whole", tc.name, fb, wb)
		}
	}
}

// shapeSource is the DuckDB query of TestShapeAndMapScan's file: m a map
// of small keys to wide values, s a struct with a wide field, l a list of
// structs with a wide field and a map in its elements, t a struct holding
// a map; NULLs and empty maps at each level.
const shapeSource = `select i::int as id,
	case when i % 9 = 0 then null when i % 7 = 0 then map([], []) else map([i % 5, 10 + i % 3], [md5(i::varchar) || md5((i * 3)::varchar), case when i % 4 = 0 then null else md5((i * 7)::varchar) end]) end as m,
	case when i % 17 = 0 then null else {'p': i, 'q': md5(i::varchar) || md5((i * 5)::varchar)} end as s,
	case when i % 13 = 0 then null when i % 6 = 0 then [] else
		[{'a': i, 'b': md5(i::varchar) || md5((i * 11)::varchar), 'm': map(['x' || (i % 4)], [md5((i * 13)::varchar)])},
		 case when i % 5 = 0 then null else {'a': -i, 'b': md5((i * 2)::varchar), 'm': case when i % 3 = 0 then null else map(['y'], [md5(i::varchar)]) end} end]
	end as l,
	{'k': i % 10, 'm': case when i % 11 = 0 then null else map([i % 2], [md5((i * 17)::varchar) || md5((i * 19)::varchar)]) end} as t
	from range(20000) t(i)`

// TestShapeAndMapScan: uses of only a value's NULLs and lengths (count(x),
// x IS NULL, len, cardinality) of a list, struct or map read one leaf, the
// cheapest (a map's key); map_keys reads a map's key leaf only; a list of
// structs read for a field skips the map beside it. Answers as DuckDB's
// on the same file, adaptive and static; the bytes the scans fetch are a
// fraction of those of the same query reading the values whole.
func TestShapeAndMapScan(t *testing.T) {
	db := openDuckPlain(t)
	st := startStack(t, "", nil)
	path := filepath.Join(t.TempDir(), "sm.parquet")
	if _, err := db.Exec(fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet, ROW_GROUP_SIZE 4096)", shapeSource, path)); err != nil {
		t.Fatal(err)
	}
	upload(t, st, path, "raw/sm/sm.parquet")
	stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE sm STORED AS PARQUET LOCATION 's3://%s/raw/sm/'", st.S3.Bucket))
	if _, err := db.Exec(fmt.Sprintf("CREATE VIEW sm AS SELECT * FROM read_parquet('%s')", path)); err != nil {
		t.Fatal(err)
	}
	checkModes(t, st, db, []query{
		{name: "count", sql: `select count(*), count(m), count(s), count(l), count(t.m), count(l[2]) from sm`},
		{name: "is-null", sql: `select id, m is null, s is null, l is not null, t.m is null from sm where id < 40`},
		{name: "cardinality", sql: `select id, cardinality(m), cardinality(t.m), len(l) from sm where id between 100 and 130`},
		{name: "map-keys", sql: `select id, map_keys(m), map_keys(t.m), map_keys(l[1].m) from sm where id < 30`},
		{name: "map-keys-agg", sql: `select k, count(*) from sm, unnest(map_keys(m)) as u(k) group by k`},
		{name: "list-field", sql: `select sum(l[1].a), count(l[2].a) from sm`},
		{name: "map-whole", sql: `select id, m, map_keys(m), cardinality(m) from sm where id < 12`},
		{name: "map-value", sql: `select id, m[1], cardinality(m) from sm where id < 20`},
		{name: "shape-and-field", sql: `select count(s), sum(s.p), count(*) filter (where s is null) from sm`},
	})

	measure := func(q string) (bytes int64, rows []row) {
		res := run(t, st, q, true)
		for _, s := range res.Status.Stages {
			if s.Metrics == nil {
				t.Fatalf("stage %d has no metrics", s.ID)
			}
			for _, o := range s.Metrics.Operators {
				if o.Leaf && o.Kind == "scan" {
					bytes += o.Bytes
				}
			}
		}
		return bytes, sluiceRows(res)
	}
	for _, tc := range []struct{ name, pruned, whole string }{
		// The same answer, with x = x (true where x is not NULL) making
		// the value a use whole.
		{"count-list", `select count(l) from sm`, `select count(l) from sm where l is null or l = l`},
		{"count-struct", `select count(s), count(*) filter (where s is null) from sm`, `select count(s), count(*) filter (where s is null) from sm where s is null or s = s`},
		{"map-cardinality", `select count(m), sum(cardinality(m)) from sm`, `select count(m), sum(cardinality(m)) from sm where m is null or m = m`},
		{"map-keys", `select sum(map_keys(m)[1]), sum(map_keys(m)[-1]) from sm`, `select sum(map_keys(m)[1]), sum(map_keys(m)[-1]) from sm where m is null or m = m`},
		{"struct-map-keys", `select sum(k), count(*) from sm, unnest(map_keys(t.m)) as u(k)`, `select sum(k), count(*) from sm, unnest(map_keys(t.m)) as u(k) where t is null or t = t`},
		// A field of a list's elements, a map beside it: the map's
		// leaves are not read.
		{"list-beside-map", `select sum(l[1].a) from sm`, `select sum(l[1].a) from sm where l is null or l = l`},
	} {
		fb, fr := measure(tc.pruned)
		wb, wr := measure(tc.whole)
		t.Logf("%s: reading the leaves used %d bytes, the values whole %d bytes (%.1fx)", tc.name, fb, wb, float64(wb)/float64(max(fb, 1)))
		if fmt.Sprint(fr) != fmt.Sprint(wr) || len(fr) == 0 {
			t.Errorf("%s: %v reading the leaves used, %v reading whole", tc.name, fr, wr)
		}
		if fb == 0 || fb*2 > wb {
			t.Errorf("%s: bytes read: %d reading the leaves used, %d reading the values whole", tc.name, fb, wb)
		}
	}
}
