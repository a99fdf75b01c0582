package tests

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluicedb/sluice/local"
)

// duckWrite writes the rows of query q to the Parquet file path with
// DuckDB (the files of these tests are as DuckDB writes them).
func duckWrite(t *testing.T, db *sql.DB, q, path string) {
	t.Helper()
	if _, err := db.Exec(fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet)", q, path)); err != nil {
		t.Fatalf("duckdb: write %s: %v", path, err)
	}
}

// TestUnsupportedColumnLeftOut: a Parquet column of a type sluice does
// not read (BLOB, TIME) does not refuse its table (a UUID reads as its
// text, as DuckDB prints it): the table registers
// without it, the other columns answer as DuckDB's, and a reference to it
// is SL005 naming the column and its type.
func TestUnsupportedColumnLeftOut(t *testing.T) {
	db := openDuckPlain(t)
	st := startStack(t, "", nil)
	path := filepath.Join(t.TempDir(), "odd.parquet")
	duckWrite(t, db, `select i as id, ('x' || i)::blob as payload, ('10:00:00'::time + to_seconds(i)) as at, 'n' || i as name,
		case when i % 9 = 0 then null else uuid() end as u
		from range(100) t(i)`, path)
	upload(t, st, path, "raw/odd/odd.parquet")
	stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE odd STORED AS PARQUET LOCATION 's3://%s/raw/odd/'", st.S3.Bucket))
	duck := fmt.Sprintf("read_parquet('%s')", path)
	for _, q := range []string{
		`select id, name from %s where id %% 7 = 3`,
		`select count(*), sum(id), max(name) from %s`,
		`select id, u::varchar from %s where id < 30`,
		`select count(u), count(distinct u), min(u::varchar) from %s`,
	} {
		got := sluiceRows(run(t, st, fmt.Sprintf(q, "odd"), true))
		if d := rowsDiff(got, duckRows(t, db, fmt.Sprintf(q, duck)), false); d != "" {
			t.Errorf("%s: %s", q, d)
		}
	}
	if got := sluiceRows(run(t, st, "select * from odd where id = 1", true)); len(got) != 1 || fmt.Sprint(got[0][:2]) != "[1 n1]" || len(got[0]) != 3 {
		t.Errorf("select * leaves the unsupported columns out: got %v", got)
	}
	on := true
	for q, want := range map[string]string{
		"select payload from odd":         `column "payload" of table "odd" has type binary`,
		"select odd.at from odd":          `column "at" of table "odd" has type time64[us]`,
		"select id from odd where at > 1": `column "at" of table "odd" has type time64[us]`,
	} {
		_, err := st.Query(context.Background(), q, &on, nil)
		if !strings.Contains(fmt.Sprint(err), "SL005") || !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("%s: %v, want SL005 %q", q, err, want)
		}
	}
}

// nestedSource is the DuckDB query of the nested test file: struct, list,
// map, list of struct, struct of list, two levels deep, with NULLs at each
// level, over enough rows for several row groups and scan tasks.
const nestedSource = `select i::int as id,
	case when i % 11 = 0 then null else {'a': i, 'b': 'n' || i, 'c': {'x': i % 3, 'y': case when i % 5 = 0 then null else [i, i + 1] end}} end as s,
	case when i % 13 = 0 then null when i % 7 = 0 then [] else [i::int, null, (i * 2)::int][1:1 + i % 3] end as l,
	case when i % 17 = 0 then null else map(['k' || (i % 4), 'z'], [i::bigint, case when i % 2 = 0 then null else -i end]) end as m,
	case when i % 19 = 0 then null else [{'p': i % 5, 'q': 'q' || i}, case when i % 3 = 0 then null else {'p': null, 'q': 'r'} end] end as ls,
	[[i::smallint, null], null, []] as ll,
	(i * 0.25)::decimal(9,2) as d
	from range(3000) t(i)`

// TestNestedParquet: a DuckDB-written Parquet file with LIST, STRUCT and
// MAP columns, nested two levels with NULLs at each level, registers and
// answers as DuckDB on the same file, adaptive and static: the columns as
// they are (through the hash shuffle as payload of a join and a sort),
// and the nested SQL over them.
func TestNestedParquet(t *testing.T) {
	db := openDuckPlain(t)
	st := startStack(t, "", nil)
	dir := t.TempDir()
	path := filepath.Join(dir, "nested.parquet")
	if _, err := db.Exec(fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet, ROW_GROUP_SIZE 500)", nestedSource, path)); err != nil {
		t.Fatal(err)
	}
	upload(t, st, path, "raw/nested/nested.parquet")
	stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE nested STORED AS PARQUET LOCATION 's3://%s/raw/nested/'", st.S3.Bucket))
	if _, err := db.Exec(fmt.Sprintf("CREATE VIEW nested AS SELECT * FROM read_parquet('%s')", path)); err != nil {
		t.Fatal(err)
	}
	checkModes(t, st, db, []query{
		{name: "all", sql: `select id, s, l, m, ls, ll, d from nested`},
		{name: "filter", sql: `select id, s, ls from nested where id % 10 = 3 and d > 100`},
		{name: "sort", sql: `select id, l, m from nested order by id desc limit 50`, ordered: true},
		{name: "join", sql: `select a.id, b.s, b.ll from nested a join nested b on a.id = b.id + 1 where a.id < 400`},
		{name: "nulls", sql: `select count(*), count(s), count(l), count(m), count(ls) from nested`},
		{name: "isnull", sql: `select id, l from nested where s is null and l is not null`},
		{name: "fields", sql: `select id, s.a, s.b, s.c.x, s.c.y, nested.s.c, s['b'], (struct_extract(s, 'c')).y, (s).c.x, struct_extract(s, 'A') from nested where id < 300`},
		{name: "fieldfilter", sql: `select id, s.B from nested where s.c.x = 1 and s.a % 4 = 1`},
		{name: "fieldagg", sql: `select s.c.x, count(*), sum(s.a), max(s.b) from nested group by s.c.x`},
		{name: "listindex", sql: `select id, l[1], l[2], l[3], l[-1], l[-3], l[0], l[id % 5 - 2], ll[1], ll[1][1], ls[2].q from nested`},
		{name: "listlen", sql: `select id, len(l), length(l), array_length(l), len(ll), length(s.b) from nested where id < 500`},
		{name: "contains", sql: `select id, list_contains(l, 5), array_contains(l, id), list_has(l, null), list_contains(s.c.y, id + 1) from nested where id < 600`},
		{name: "maps", sql: `select id, m['z'], m['k' || (id % 4)::varchar], m['nope'], map_keys(m), map_values(m), cardinality(m), element_at(m, 'z'), map_extract(m, 'q') from nested`},
		{name: "mapfilter", sql: `select id, m from nested where m['z'] is null and cardinality(m) = 2`},
		{name: "listfilter", sql: `select count(*), sum(l[1]) from nested where len(l) >= 2 and list_contains(l, id)`},
		{name: "unnest", sql: `select id, unnest(l) from nested`},
		{name: "unnestexpr", sql: `select id, unnest(s.c.y) + 1 as v, s.a from nested where id % 3 = 0`},
		{name: "unnestfield", sql: `select id, (unnest(ls)).q, (unnest(ls)).p from nested where id < 500`},
		{name: "unnestmap", sql: `select id, unnest(map_keys(m)) as k from nested`},
		{name: "unnestlist", sql: `select id, unnest(ll) as inner_list from nested where id < 100`},
		{name: "unnestjoin", sql: `select a.id, unnest(b.l) from nested a join nested b on a.id = b.id + 1 where a.id < 1000`},
		{name: "unnestgroup", sql: `select x, count(*), sum(id) from (select id, unnest(l) as x from nested) u group by x`},
		{name: "unnestorder", sql: `select id, unnest(l) as x from nested where id between 100 and 130 order by id desc, x`, ordered: true},
		{name: "fromunnest", sql: `select id, x from nested, unnest(nested.l) as u(x) where id < 400`},
		{name: "fromunnestlateral", sql: `select n.id, u.e.q, u.e.p from nested n, lateral unnest(n.ls) as u(e) where n.id % 7 = 1`},
		{name: "fromunnestgroup", sql: `select x % 10 as k, count(*), sum(id) from nested, unnest(l) as u(x) group by k`},
		{name: "fromunnestjoin", sql: `select a.id, k from nested a join nested b on a.id = b.id, unnest(map_keys(b.m)) as u(k) where a.id < 300`},
		{name: "agg", sql: `select id % 5 as k, count(l), count(distinct id) from nested where m is not null group by k`},
		// Nested values as keys: grouped, distinct, sorted, joined on,
		// compared and hashed through the shuffle.
		{name: "argminmax", sql: `select id % 7 as g, arg_min(id, {'l': l, 'i': id}), arg_max(s, id), arg_max(ls, {'c': s.c, 'i': id}), arg_min_null(m, id), max_by(ll, [d, id]) from nested group by g`},
		{name: "groupstruct", sql: `select s, count(*), sum(id) from nested group by s`},
		{name: "groupfieldstruct", sql: `select s.c, count(*), sum(id) from nested group by s.c`},
		{name: "grouplist", sql: `select l, count(*), min(id) from nested group by l`},
		{name: "groupmap", sql: `select m, ls, count(*) from nested group by m, ls`},
		{name: "distinctlist", sql: `select distinct l from nested`},
		{name: "distinctnested", sql: `select distinct s.c.y, ll from nested`},
		{name: "countdistinct", sql: `select count(distinct l), count(distinct s.c), count(distinct m), count(distinct ls) from nested`},
		{name: "orderlist", sql: `select id, l from nested order by l, id limit 200`, ordered: true},
		{name: "orderlistdesc", sql: `select id, l from nested order by l desc, id limit 200`, ordered: true},
		{name: "orderstruct", sql: `select id, s.c from nested order by s.c desc nulls first, id limit 100`, ordered: true},
		{name: "ordermap", sql: `select id, m, ls from nested order by ls, m, id`, ordered: true},
		{name: "joinfield", sql: `select a.id, b.id from nested a join nested b on a.s.c = b.s.c where a.id < 40 and b.id < 300`},
		{name: "joinstruct", sql: `select a.id, b.id, a.s.b from nested a join nested b on a.s = b.s`},
		{name: "joinlist", sql: `select a.id, count(*) from nested a join nested b on a.l = b.l group by a.id`},
		{name: "comparelists", sql: `select a.id, a.l = b.l, a.l < b.l, a.l >= b.l, a.s <> b.s, a.s.c > b.s.c, a.m = b.m from nested a join nested b on a.id = b.id + 1 where a.id < 500`},
		{name: "filterlist", sql: `select id, l from nested where l > s.c.y or l = s.c.y`},
		{name: "union", sql: `select l, s.c from nested union select l, s.c from nested where id < 10`},
		// Literals and list functions over the file's values.
		{name: "literals", sql: `select id, [id, id * 2, null] as a, {'k': id, 'v': s.b, 'w': [l[1]]} as b, list_value(s.a, id), struct_pack(x := id % 3, y := m) from nested where id < 200`},
		{name: "literalcompare", sql: `select id, l from nested where l = [id, null] or l = [id::bigint] or s.c = {'x': 2, 'y': [id, id + 1]}`},
		{name: "slices", sql: `select id, l[2:3], l[:1], l[-2:], l[0:0], list_slice(l, id % 4 - 2, 2), ls[1:1] from nested where id < 400`},
		{name: "listsort", sql: `select id, list_sort(l), list_sort(l, 'DESC'), list_sort(l, 'ASC', 'NULLS FIRST'), list_reverse_sort(s.c.y), list_sort(ls) from nested where id < 400`},
		{name: "listdistinct", sql: `select id, list_sort(list_distinct(l)), list_sort(list_distinct([id % 3, null, id % 3, 1])), list_sort(list_distinct(map_values(m))) from nested where id < 400`},
		{name: "hasany", sql: `select id, list_has_any(l, [1, 2, 3, id]), list_has_any(s.c.y, l), array_has_any(l, [0, 7]) from nested where id < 600`},
		{name: "tostring", sql: `select id, array_to_string(l, ','), array_to_string(map_keys(m), ' | '), array_to_string(s.c.y, '') from nested where id < 600`},
		{name: "concat", sql: `select id, l || s.c.y, list_concat(l, null), array_cat(s.c.y, l), l || null, [id] || l from nested where id < 300`},
		{name: "subscripts", sql: `select id, generate_subscripts(l, 1) as i, l[generate_subscripts(l, 1)] from nested where id < 300`},
		{name: "series", sql: `select id, generate_series(1, len(l)), range(id % 4), list_sort(generate_series(id % 3, 2), 'DESC') from nested where id < 300`},
		{name: "callsubscript", sql: `select id, list_sort(l)[1], map_keys(m)[2], list_sort(ls, 'DESC')[1].q, generate_series(1, 5)[2:id % 4] from nested where id < 300`},
		{name: "flatten", sql: `select id, flatten(ll), flatten([l, s.c.y, null]) from nested where id < 300`},
		{name: "groupliteral", sql: `select {'x': s.c.x, 'odd': id % 2 = 1} as k, count(*), min(id), sum(id) from nested group by k`},
		// list/array_agg: ordered, unordered (sorted after), DISTINCT,
		// of nested values, grouped by a struct, and over everything.
		{name: "listagg", sql: `select id % 7 as k, list(id order by id desc), array_agg(s.b order by id), list_sort(list(l[1])), list(distinct s.c.x order by s.c.x) from nested where id < 1000 group by k`},
		{name: "listaggnested", sql: `select s.c.x, list(l order by id), array_agg(s order by id desc) from nested where id % 50 = 1 group by s.c.x`},
		{name: "listaggstruct", sql: `select s.c, count(*), list(id order by id) from nested where id < 600 group by s.c`},
		{name: "listaggall", sql: `select list(id order by id), len(list(m order by id)), list(distinct id % 5 order by id % 5 desc) from nested`},
		{name: "windowstruct", sql: `select id, row_number() over (partition by s.c order by id), rank() over (order by l, id) from nested where id < 300`},
	})
	// EXPLAIN shows the unnest, in the stage of the scan (row by row).
	if got := fmt.Sprint(sluiceRows(stmt(t, st, "explain select id, unnest(l) from nested where id > 5"))); !strings.Contains(got, "Unnest: ") {
		t.Errorf("explain: %s", got)
	}

	// pgwire: Postgres array text (bigint[]), composite text and map text,
	// through psql and pgx.
	pg, err := st.StartPG(context.Background(), local.PGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if psql, err := exec.LookPath("psql"); err == nil {
		out, err := exec.Command(psql, pgURL(pg), "-X", "-A", "-t", "-F", "|", "-v", "ON_ERROR_STOP=1", "-c",
			"select id, l, s, m, ls from nested where id in (1, 5, 13, 14) order by id").CombinedOutput()
		if err != nil {
			t.Fatalf("psql: %v\n%s", err, out)
		}
		want := `1|{1,NULL}|(1,n1,"(1,""{1,2}"")")|{k1=1, z=-1}|{"(1,q1)","(,r)"}
5|{5,NULL,10}|(5,n5,"(2,)")|{k1=5, z=-5}|{"(0,q5)","(,r)"}
13||(13,n13,"(1,""{13,14}"")")|{k1=13, z=-13}|{"(3,q13)","(,r)"}
14|{}|(14,n14,"(2,""{14,15}"")")|{k2=14, z=NULL}|{"(4,q14)","(,r)"}`
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("psql:\n%s\nwant:\n%s", got, want)
		}
	}
	conn, err := pgx.Connect(context.Background(), pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var l []*int64
	if err := conn.QueryRow(context.Background(), "select l from nested where id = 5").Scan(&l); err != nil {
		t.Fatal(err)
	}
	if len(l) != 3 || *l[0] != 5 || l[1] != nil || *l[2] != 10 {
		t.Errorf("pgx bigint[]: %v", l)
	}

	// Flight SQL: the nested Arrow columns as they are.
	addr, err := st.StartFlight(local.FlightOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	fq := `select id, s, l, m, ls from nested where id % 9 = 4`
	schema, got := flightRows(t, context.Background(), cl, fq)
	if schema.Field(1).Type.ID() != arrow.STRUCT || schema.Field(2).Type.ID() != arrow.LIST || schema.Field(3).Type.ID() != arrow.MAP {
		t.Errorf("flight sql schema: %s", schema)
	}
	if d := rowsDiff(got, duckRows(t, db, fq), false); d != "" {
		t.Errorf("flight sql: %s", d)
	}

	// What the engine has no kernels for yet is SL005 at planning, never
	// a failed task or a wrong order.
	on := true
	for _, q := range []string{
		"select unnest(l), count(*) from nested", "select unnest(l), unnest(ll) from nested", "select distinct unnest(l) from nested",
	} {
		_, err := st.Query(context.Background(), q, &on, nil)
		if !strings.Contains(fmt.Sprint(err), "SL005") {
			t.Errorf("%s: %v, want SL005", q, err)
		}
	}
}

// TestNestedTypesInside: nested columns whose children are of every type
// the engine reads (decimals of both widths, dates, timestamps, floats,
// booleans, small integers), maps with integer keys, lists of maps, a
// UUID inside a struct (read as its text).
func TestNestedTypesInside(t *testing.T) {
	db := openDuckPlain(t)
	st := startStack(t, "", nil)
	path := filepath.Join(t.TempDir(), "inside.parquet")
	duckWrite(t, db, `select i as id,
		{'d': (i / 8)::decimal(9,3), 'w': (i * 1000000000.5)::decimal(30,2), 'day': date '2024-01-01' + i::int, 'at': timestamp '2024-01-01 10:00:00' + to_seconds(i * 61),
		 'f': i / 3.0, 'ok': i % 2 = 0, 't': (i % 100)::tinyint} as s,
		map([i, i + 1], [i::double, null]) as mi,
		[map(['a'], [i]), null, map(['b', 'c'], [i, -i])] as lm,
		case when i % 4 = 0 then null else [date '2020-02-29' + i::int, null] end as ld,
		{'u': uuid(), 'v': i} as su
		from range(200) t(i)`, path)
	upload(t, st, path, "raw/inside/inside.parquet")
	stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE inside STORED AS PARQUET LOCATION 's3://%s/raw/inside/'", st.S3.Bucket))
	if _, err := db.Exec(fmt.Sprintf("CREATE VIEW inside AS SELECT * FROM read_parquet('%s')", path)); err != nil {
		t.Fatal(err)
	}
	checkModes(t, st, db, []query{
		{name: "all", sql: `select id, s, mi, lm, ld from inside`},
		{name: "fields", sql: `select id, s.d, s.w, s.day, s.at, s.f, s.ok, s.t, mi[id + 1], mi[id], lm[3]['c'], ld[1] from inside where s.ok`},
		{name: "unnest", sql: `select id, unnest(lm) as mm from inside where id < 50`},
		{name: "sortjoin", sql: `select a.id, b.s, b.lm from inside a join inside b on a.id = b.id order by a.id limit 20`, ordered: true},
		{name: "uuid", sql: `select id, su.u::varchar, su.v from inside where id % 3 = 0`},
	})
}
