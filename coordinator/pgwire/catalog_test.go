package pgwire

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/planner/plan"
)

// catalogOnly is an Engine whose catalog is a fixed list; it runs no SQL
// (the emulation must answer without it).
type catalogOnly struct{ tables []coordinator.TableInfo }

func (e catalogOnly) Tables(context.Context) ([]coordinator.TableInfo, error) { return e.tables, nil }
func (catalogOnly) Submit(context.Context, string) (string, error) {
	panic("the catalog emulation sent a query to the engine")
}
func (catalogOnly) Wait(context.Context, string) error   { return nil }
func (catalogOnly) Cancel(context.Context, string) error { return nil }
func (catalogOnly) Result(context.Context, string, func(arrow.RecordBatch) error) (*arrow.Schema, error) {
	return nil, nil
}
func (catalogOnly) Schema(context.Context, string) (*arrow.Schema, error) { return nil, nil }

// rowsText renders a result as lines of |-separated text values.
func rowsText(res *result) string {
	var lines []string
	for _, rec := range res.recs {
		for i := 0; i < int(rec.NumRows()); i++ {
			var vals []string
			for _, col := range rec.Columns() {
				if col.IsNull(i) {
					vals = append(vals, "NULL")
					continue
				}
				vals = append(vals, string(appendValue(nil, col, i, 0)))
			}
			lines = append(lines, strings.Join(vals, "|"))
		}
	}
	return strings.Join(lines, "\n")
}

func TestCatalogEmulation(t *testing.T) {
	eng := catalogOnly{tables: []coordinator.TableInfo{
		{Name: "orders", Columns: []plan.Field{{Name: "o_id", Type: plan.Int64Type}, {Name: "o_total", Type: plan.DecimalType(12, 2), Nullable: true}}},
		{Name: "nation", Columns: []plan.Field{{Name: "n_name", Type: plan.StringType}}},
	}}
	c := &conn{s: &Server{Engine: eng}, user: "u", db: "d", settings: defaultSettings()}
	cases := []struct{ sql, want string }{
		// psql \dt (abridged).
		{`SELECT n.nspname as "Schema", c.relname as "Name", CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' END as "Type",
		  pg_catalog.pg_get_userbyid(c.relowner) as "Owner" FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		  WHERE c.relkind IN ('r','p','') AND n.nspname <> 'pg_catalog' AND n.nspname !~ '^pg_toast' AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 1,2`,
			"public|nation|table|u\npublic|orders|table|u"},
		// psql \d orders, first query.
		{`SELECT c.oid, n.nspname, c.relname FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		  WHERE c.relname OPERATOR(pg_catalog.~) '^(orders)$' COLLATE pg_catalog.default AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 2, 3`,
			"16385|public|orders"},
		// psql \d orders, columns.
		{`SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), (SELECT 1) AS attrdef, a.attnotnull
		  FROM pg_catalog.pg_attribute a WHERE a.attrelid = '16385' AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
			"o_id|bigint|NULL|t\no_total|numeric(12,2)|NULL|f"},
		// An inner join with a catalog relation the emulation has empty.
		{`SELECT c.oid::pg_catalog.regclass FROM pg_catalog.pg_class c, pg_catalog.pg_inherits i WHERE c.oid = i.inhparent AND i.inhrelid = '16385'`, ""},
		// DBeaver's columns of one table: the class oid through the join.
		{`SELECT c.relname, a.attname, a.attnum FROM pg_catalog.pg_attribute a INNER JOIN pg_catalog.pg_class c ON (a.attrelid = c.oid)
		  WHERE NOT a.attisdropped AND c.relkind NOT IN ('i','I','c') AND c.oid = 16384 ORDER BY a.attnum`, "nation|n_name|1"},
		{`SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'orders' ORDER BY ordinal_position`,
			"orders|o_id|bigint|NO\norders|o_total|numeric|YES"},
		{`select current_database(), current_schema(), current_user, current_setting('server_version_num')`, "d|public|u|150000"},
		{`select nspname from pg_namespace where nspname = 'public'`, "public"},
		{`select count(*) from pg_catalog.pg_index`, "0"},
		{`select count(*) as n from information_schema.tables where table_schema = 'public'`, "2"},
	}
	for _, tc := range cases {
		res, ok, err := c.answer(context.Background(), tc.sql, parseOne(tc.sql), false)
		if err != nil || !ok {
			t.Fatalf("%s: ok %v err %v", tc.sql, ok, err)
		}
		if got := rowsText(res); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.sql, got, tc.want)
		}
	}
	// Plain SQL is the engine's.
	if _, ok, _ := c.answer(context.Background(), "select o_id from orders", parseOne("select o_id from orders"), false); ok {
		t.Fatal("a table query was answered by the catalog emulation")
	}
}

// TestRouteSelect: who answers a SELECT is decided by the relations it
// reads, never by words in its text. Each engine case was once answered
// by the catalog emulation with a row of NULLs or no rows.
func TestRouteSelect(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want route
		err  bool
	}{
		{"select extract(year from o_orderdate) from orders", routeEngine, false},
		{"select substring(c_phone from 1 for 2) from customer", routeEngine, false},
		{"select trim(n_name), position('A' in n_name) from nation", routeEngine, false},
		{"select count(*) from orders where o_orderdate < current_date", routeEngine, false},
		{"select current_date, current_timestamp", routeEngine, false},
		{"select extract(year from date '1995-01-01')", routeEngine, false},
		{"select o_orderdate at time zone 'UTC' from orders", routeEngine, false},
		{"with pg_x as (select 1 as a) select * from pg_x", routeEngine, false},
		{"select * from (select n_name from nation) s, region", routeEngine, false},
		{"select version()", routeCatalog, false},
		{"select current_user", routeCatalog, false},
		{"select current_setting('max_index_keys')", routeCatalog, false},
		{"select 'orders'::regclass", routeCatalog, false},
		{"select relname from pg_catalog.pg_class where relname like 'ord%'", routeCatalog, false},
		{"select * from information_schema.tables t, (select 1) x", routeCatalog, false},
		{"select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace", routeCatalog, false},
		{"select * from orders, pg_catalog.pg_class", routeEngine, true},
		{"select * from orders where o_custkey in (select oid from pg_class)", routeEngine, true},
	} {
		tree, err := pg_query.Parse(c.sql)
		if err != nil {
			t.Fatal(err)
		}
		got, err := routeSelect(tree.Stmts[0].Stmt)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("%s: route %d, err %v; want route %d, error %v", c.sql, got, err, c.want, c.err)
		}
		if err != nil && plan.CodeOf(err) != plan.CodeUnsupported {
			t.Errorf("%s: error code %q, want %s", c.sql, plan.CodeOf(err), plan.CodeUnsupported)
		}
	}
}
