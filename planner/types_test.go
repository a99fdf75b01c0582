package planner

import (
	"context"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// bindExprSQL binds "select <expr> from lineitem" and returns the bound
// select-list expression.
func bindExprSQL(t *testing.T, expr string) (*plan.Expr, error) {
	t.Helper()
	sql := "select " + expr + " from lineitem"
	tree, err := pg.Parse(maskTryCast(sql))
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	b := &binder{ctx: context.Background(), sql: sql, cat: testCatalog, md: &metadata{}, pos: map[*plan.Expr]int32{}}
	root, err := b.bindStatement(tree.Stmts[0])
	if err != nil {
		return nil, err
	}
	for {
		if p, ok := root.(*projectNode); ok {
			return p.exprs[0], nil
		}
		root = root.children()[0]
	}
}

// TestExprTyping checks the types, coercions and folding of expressions.
func TestExprTyping(t *testing.T) {
	cases := []struct {
		expr string
		typ  string // result type
		text string // logical rendering
	}{
		// literals
		{"0.06", "decimal(3,2)", "0.06"},
		{"0.06 - 0.01", "decimal(4,2)", "0.05"},
		{"0.06 + 0.01", "decimal(4,2)", "0.07"},
		{"1.5", "decimal(2,1)", "1.5"},
		{"123.456", "decimal(6,3)", "123.456"},
		{".5", "decimal(1,1)", "0.5"},
		{"-0.06", "decimal(3,2)", "-0.06"},
		{"1e5", "float64", "100000"},
		{"42", "int64", "42"},
		{"'x'", "string", "'x'"},
		{"true", "bool", "true"},
		{"null + 1", "int64", "NULL"},
		// wide decimals, timestamps, intervals, TRY_CAST
		{"12345678901234567890.5", "decimal(21,1)", "12345678901234567890.5"},
		{"l_quantity * 12345678901234567890.5", "decimal(36,3)", "(l_quantity * 12345678901234567890.5)"},
		{"cast(l_quantity as decimal(30,2)) + l_quantity", "decimal(31,2)", "(CAST(l_quantity AS decimal(30,2)) + l_quantity)"},
		{"cast(l_quantity as decimal(30,2)) * l_tax", "decimal(38,4)", "(CAST(l_quantity AS decimal(30,2)) * l_tax)"},
		{"timestamp '2024-01-02 03:04:05.5'", "timestamp", "TIMESTAMP '2024-01-02 03:04:05.5'"},
		{"timestamp '2024-01-02 03:04:05' + interval '1' day", "timestamp", "TIMESTAMP '2024-01-03 03:04:05'"},
		{"l_shipdate + interval '1' day", "timestamp", "(l_shipdate + INTERVAL '0 months 1 days 0 us')"},
		{"l_shipdate - interval '2 hours'", "timestamp", "(l_shipdate - INTERVAL '0 months 0 days 7200000000 us')"},
		{"date '2024-01-31' + interval '1' month", "date", "DATE '2024-02-29'"},
		{"l_shipdate - l_commitdate", "int64", "(l_shipdate - l_commitdate)"},
		{"date '2024-03-01' - date '2024-02-01'", "int64", "29"},
		{"l_shipdate + 3", "date", "(l_shipdate + 3)"},
		{"l_shipdate < timestamp '1995-01-01 12:00:00'", "bool", "(CAST(l_shipdate AS timestamp) < TIMESTAMP '1995-01-01 12:00:00')"},
		{"cast(l_shipdate as timestamp) = '1995-01-01'", "bool", "(CAST(l_shipdate AS timestamp) = TIMESTAMP '1995-01-01 00:00:00')"},
		{"try_cast(l_comment as bigint)", "int64", "TRY_CAST(l_comment AS int64)"},
		{"TRY_CAST ('x' as bigint)", "int64", "NULL"},
		{"try_cast('2024-01-02' as timestamp)", "timestamp", "TIMESTAMP '2024-01-02 00:00:00'"},
		// arithmetic
		{"l_extendedprice * (1 - l_discount)", "decimal(18,4)", "(l_extendedprice * (1.00 - l_discount))"},
		{"l_extendedprice * (1 - l_discount) * (1 + l_tax)", "decimal(18,6)", "((l_extendedprice * (1.00 - l_discount)) * (1.00 + l_tax))"},
		{"l_quantity + 1", "decimal(16,2)", "(l_quantity + 1.00)"},
		{"l_quantity + 0.005", "decimal(17,3)", "(CAST(l_quantity AS decimal(16,3)) + 0.005)"},
		{"l_quantity + l_orderkey", "decimal(21,2)", "(l_quantity + CAST(l_orderkey AS decimal(20,2)))"},
		{"l_quantity * 2", "decimal(16,2)", "(l_quantity * 2)"},
		{"l_quantity / 2", "float64", "(CAST(l_quantity AS float64) / 2)"},
		{"5 / 2", "float64", "2.5"},
		{"7 % 3", "int64", "1"},
		{"l_orderkey % 3", "int64", "(l_orderkey % 3)"},
		{"l_quantity % 2", "decimal(15,2)", "(l_quantity % 2.00)"},
		{"l_orderkey + 1.5e0", "float64", "(CAST(l_orderkey AS float64) + 1.5)"},
		{"-l_quantity", "decimal(15,2)", "(-l_quantity)"},
		{"2 * 3 + 1", "int64", "7"},
		{"1.10 * 2.5", "decimal(5,3)", "2.750"},
		// dates and intervals (Postgres month arithmetic, clamped)
		{"date '1998-12-01' - interval '90' day", "date", "DATE '1998-09-02'"},
		{"date '1994-01-01' + interval '1' year", "date", "DATE '1995-01-01'"},
		{"date '2020-01-31' + interval '1' month", "date", "DATE '2020-02-29'"},
		{"date '2021-01-31' + interval '1' month", "date", "DATE '2021-02-28'"},
		{"date '2020-02-29' + interval '1' year", "date", "DATE '2021-02-28'"},
		{"date '2020-03-31' - interval '1' month", "date", "DATE '2020-02-29'"},
		{"date '2020-01-31' + interval '13' month", "date", "DATE '2021-02-28'"},
		{"date '2020-01-01' + interval '1 year 2 months'", "date", "DATE '2021-03-01'"},
		{"date '2020-01-01' + interval '2 weeks'", "date", "DATE '2020-01-15'"},
		{"interval '3' month + date '2020-11-30'", "date", "DATE '2021-02-28'"},
		{"'2020-01-01' + interval '1' day", "date", "DATE '2020-01-02'"},
		{"date '2020-01-01' + 10", "date", "DATE '2020-01-11'"},
		{"date '2020-03-01' - 1", "date", "DATE '2020-02-29'"},
		{"extract(year from date '2020-05-07')", "int64", "2020"},
		{"extract(month from l_shipdate)", "int64", "EXTRACT(MONTH FROM l_shipdate)"},
		{"date_part('day', l_shipdate)", "int64", "EXTRACT(DAY FROM l_shipdate)"},
		// comparisons coerce the literal, not the column
		{"l_quantity < 24", "bool", "(l_quantity < 24.00)"},
		{"l_discount >= 0.06 - 0.01", "bool", "(l_discount >= 0.05)"},
		{"l_quantity > 10.505", "bool", "(CAST(l_quantity AS decimal(16,3)) > 10.505)"},
		{"l_orderkey = 1.0", "bool", "(l_orderkey = 1)"},
		{"l_orderkey < 1.5", "bool", "(CAST(l_orderkey AS decimal(19,1)) < 1.5)"},
		{"'1998-12-01' < l_shipdate", "bool", "(DATE '1998-12-01' < l_shipdate)"},
		{"l_orderkey = '5'", "bool", "(l_orderkey = 5)"},
		{"l_quantity = '5.5'", "bool", "(l_quantity = 5.50)"},
		{"l_orderkey < l_quantity", "bool", "(CAST(l_orderkey AS decimal(20,2)) < CAST(l_quantity AS decimal(20,2)))"},
		{"l_orderkey = null", "bool", "NULL"},
		{"null = null", "bool", "NULL"},
		{"1 < 2", "bool", "true"},
		{"'a' < 'b'", "bool", "true"},
		{"l_discount between 0.05 and 0.07", "bool", "((l_discount >= 0.05) AND (l_discount <= 0.07))"},
		{"l_discount not between 0.05 and 0.07", "bool", "((l_discount < 0.05) OR (l_discount > 0.07))"},
		// boolean logic
		{"true and l_orderkey > 1", "bool", "(l_orderkey > 1)"},
		{"false and l_orderkey > 1", "bool", "false"},
		{"l_orderkey > 1 or true", "bool", "true"},
		{"not (l_orderkey = 1)", "bool", "(l_orderkey <> 1)"},
		{"not l_comment like 'a%'", "bool", "(l_comment NOT LIKE 'a%')"},
		{"not (l_tax is null)", "bool", "(l_tax IS NOT NULL)"},
		{"null is null", "bool", "true"},
		// IN lists
		{"l_orderkey in (1, 2, 3)", "bool", "(l_orderkey IN (1, 2, 3))"},
		{"l_shipmode not in ('MAIL', 'SHIP')", "bool", "(l_shipmode NOT IN ('MAIL', 'SHIP'))"},
		{"l_quantity in (1, 2.5)", "bool", "(l_quantity IN (1.00, 2.50))"},
		{"l_orderkey in (1, 2.5)", "bool", "((l_orderkey = 1) OR (CAST(l_orderkey AS decimal(19,1)) = 2.5))"},
		{"l_orderkey in (1, null)", "bool", "((l_orderkey IN (1)) OR NULL)"},
		{"l_orderkey not in (1, null)", "bool", "((l_orderkey NOT IN (1)) AND NULL)"},
		{"l_shipdate in ('1998-01-01', date '1998-01-02')", "bool", "(l_shipdate IN (DATE '1998-01-01', DATE '1998-01-02'))"},
		// CASE, COALESCE, NULLIF
		{"case when l_quantity > 1 then 1 else 1.5 end", "decimal(2,1)", "CASE WHEN (l_quantity > 1.00) THEN 1.0 ELSE 1.5 END"},
		{"case when l_quantity > 1 then l_tax end", "decimal(15,2)", "CASE WHEN (l_quantity > 1.00) THEN l_tax ELSE NULL END"},
		{"case l_returnflag when 'A' then 1 when 'B' then 2 end", "int64", "CASE WHEN (l_returnflag = 'A') THEN 1 WHEN (l_returnflag = 'B') THEN 2 ELSE NULL END"},
		{"case when false then 1 when true then 2 else 3 end", "int64", "2"},
		{"case when l_quantity > l_tax then l_shipdate else '1998-01-01' end", "date", "CASE WHEN (l_quantity > l_tax) THEN l_shipdate ELSE DATE '1998-01-01' END"},
		{"coalesce(l_tax, 0)", "decimal(15,2)", "CASE WHEN (l_tax IS NOT NULL) THEN l_tax ELSE 0.00 END"},
		{"nullif(l_orderkey, 0)", "int64", "CASE WHEN (l_orderkey = 0) THEN NULL ELSE l_orderkey END"},
		// casts
		{"cast('2020-01-01' as date)", "date", "DATE '2020-01-01'"},
		{"'12.345'::decimal(10,2)", "decimal(10,2)", "12.35"},
		{"l_quantity::numeric", "decimal(18,3)", "CAST(l_quantity AS decimal(18,3))"},
		{"l_quantity::double precision", "float64", "CAST(l_quantity AS float64)"},
		{"cast(l_orderkey as varchar)", "string", "CAST(l_orderkey AS string)"},
		{"cast(1.5 as integer)", "int64", "2"},
		{"cast(-1.5 as integer)", "int64", "-2"},
		{"cast(2.5e0 as integer)", "int64", "CAST(2.5 AS int64)"},
		{"l_orderkey::bigint", "int64", "l_orderkey"},
		// strings
		{"substring(l_comment from 1 for 3)", "string", "SUBSTRING(l_comment, 1, 3)"},
		{"substring(l_comment, 2)", "string", "SUBSTRING(l_comment, 2)"},
		{"l_comment like '%x%'", "bool", "(l_comment LIKE '%x%')"},
	}
	for _, c := range cases {
		e, err := bindExprSQL(t, c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if e.Type.String() != c.typ || exprString(e) != c.text {
			t.Errorf("%s:\n got  %s  %s\n want %s  %s", c.expr, e.Type, exprString(e), c.typ, c.text)
		}
	}
}

func TestParseNumber(t *testing.T) {
	cases := []struct{ in, typ, val string }{
		{"0.06", "decimal(3,2)", "0.06"},
		{"-0.06", "decimal(3,2)", "-0.06"},
		{"5.", "decimal(1,0)", "5"},
		{"000000000000000000001.5", "decimal(2,1)", "1.5"},
		{"123456789012345678", "int64", "123456789012345678"},
		{"1e-2", "float64", "0.01"},
		// beyond int64 / 18 digits: wide decimals (DuckDB types the integer HUGEINT)
		{"12345678901234567890", "decimal(20,0)", "12345678901234567890"},
		{"-1234567890123456789.0123", "decimal(23,4)", "-1234567890123456789.0123"},
		{"99999999999999999999999999999999999999", "decimal(38,0)", "99999999999999999999999999999999999999"},
	}
	for _, c := range cases {
		e, err := parseNumber(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if e.Type.String() != c.typ || exprString(e) != c.val {
			t.Errorf("%s: got %s %s, want %s %s", c.in, e.Type, exprString(e), c.typ, c.val)
		}
	}
	for _, bad := range []string{"", "-", "1.2.3", "--1", "1a", "123456789012345678901234567890123456789"} {
		if _, err := parseNumber(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestMaskTryCast(t *testing.T) {
	for in, want := range map[string]string{
		"select try_cast(x as int)":                  "select     cast(x as int)",
		"select TRY_CAST (x as int), 'try_cast(y)'":  "select     CAST (x as int), 'try_cast(y)'",
		"select my_try_cast(x), try_castle(y)":       "select my_try_cast(x), try_castle(y)",
		"select \"try_cast\"(x) -- try_cast(z)\n, 1": "select \"try_cast\"(x) -- try_cast(z)\n, 1",
	} {
		if got := maskTryCast(in); got != want {
			t.Errorf("maskTryCast(%q) = %q, want %q", in, got, want)
		}
	}
}
