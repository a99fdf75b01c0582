package planner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/function/redisdb"
	"github.com/sluicedb/sluice/planner/plan"
)

// TestErrors checks the code and position of errors a user can cause.
// pos is the 1-based character offset the error points at (0: none); msg,
// when set, must appear in the message.
func TestErrors(t *testing.T) {
	cases := []struct {
		sql  string
		code string
		pos  int
		msg  string
	}{
		// SL001 syntax
		{"selec 1", CodeSyntax, 1, `syntax error at or near "selec"`},
		{"select from where x", CodeSyntax, 13, `at or near "where"`},
		{"select l_orderkey from lineitem where", CodeSyntax, 38, "at end of input"},
		{"select 'abc from lineitem", CodeSyntax, 8, "unterminated quoted string"},
		{"", CodeSyntax, 0, "empty statement"},
		// SL002 unknown table
		{"select * from nosuch", CodeUnknownTbl, 15, `unknown table "nosuch"`},
		{"select x.l_orderkey from lineitem", CodeUnknownTbl, 8, `unknown table "x"`},
		{"select l.* from lineitem", CodeUnknownTbl, 8, `unknown table "l"`},
		{"select lineitem.l_orderkey from lineitem l", CodeUnknownTbl, 8, `unknown table "lineitem"`},
		// SL003 unknown column
		{"select l_foo from lineitem", CodeUnknownCol, 8, `unknown column "l_foo" in table "lineitem"`},
		{"select l.l_foo from lineitem l", CodeUnknownCol, 8, `unknown column "l_foo" in table "lineitem"`},
		{"select * from orders where exists (select * from lineitem where l_orderkey = o_nope)", CodeUnknownCol, 78, `unknown column "o_nope"`},
		{"select x.c from (select l_orderkey from lineitem) x (a)", CodeUnknownCol, 8, `unknown column "c" in table "x"`},
		{"select l_orderkey from lineitem where o_orderkey = 1", CodeUnknownCol, 39, `unknown column "o_orderkey"`},
		{"select count(*) from lineitem group by l_nope", CodeUnknownCol, 40, `unknown column "l_nope"`},
		{"select l_orderkey from lineitem order by l_nope + 1", CodeUnknownCol, 42, `unknown column "l_nope"`},
		{"select l_orderkey from lineitem limit l_orderkey", CodeUnknownCol, 39, `unknown column "l_orderkey"`},
		// SL004 type mismatch
		{"select * from lineitem where l_shipdate = 5", CodeType, 41, "cannot compare date and int64"},
		{"select * from lineitem where l_returnflag < l_orderkey", CodeType, 43, "cannot compare string and int64"},
		{"select * from lineitem where l_quantity = 'abc'", CodeType, 41, "cannot compare decimal(15,2) and string 'abc'"},
		{"select l_shipdate + l_quantity from lineitem", CodeType, 19, "operator + is not defined for date and decimal(15,2)"},
		{"select l_comment * 2 from lineitem", CodeType, 18, "operator * is not defined for string and int64"},
		{"select * from lineitem where l_orderkey", CodeType, 30, "argument of WHERE must be bool, not int64"},
		{"select sum(l_comment) from lineitem", CodeType, 8, "sum is not defined for string"},
		{"select * from lineitem where l_orderkey like 'a%'", CodeType, 41, "LIKE needs a string"},
		{"select case when l_orderkey > 0 then 1 else 'x' end from lineitem", CodeValue, 8, `invalid input for int64: "x"`},
		{"select case when l_orderkey > 1 then l_shipdate else l_orderkey end from lineitem", CodeType, 8, "CASE results of types date and int64"},
		{"select extract(year from l_comment) from lineitem", CodeType, 8, "EXTRACT needs a date, not string"},
		{"select * from lineitem limit 1.5", CodeType, 30, "LIMIT must be an integer"},
		{"select cast(l_shipdate as int) from lineitem", CodeType, 8, "cannot cast date to int64"},
		{"select not l_orderkey from lineitem", CodeType, 12, "argument of NOT must be bool"},
		{"select l_orderkey from lineitem union all select o_orderkey, o_custkey from orders", CodeType, 0, "same number of columns"},
		{"select l_orderkey from lineitem union all select o_orderdate from orders", CodeType, 0, "UNION column 1 has types int64 and date"},
		{"select * from orders where o_orderkey in (select l_orderkey, l_partkey from lineitem)", CodeType, 39, "subquery has 2 columns"},
		{"select * from orders where o_orderdate in (select l_orderkey from lineitem)", CodeType, 40, "cannot compare date and int64"},
		// SL005 unsupported
		{"select sum(distinct l_quantity) over (order by l_orderkey groups between 1 preceding and current row) from lineitem", CodeUnsupported, 8, "unsupported: DISTINCT in window functions"},
		{"select l_orderkey from lineitem where row_number() over () > 1", CodeGrouping, 39, "window functions are not allowed in WHERE"},
		{"select median(l_quantity) over () from lineitem", CodeUnsupported, 8, "unsupported: window function median()"},
		{"select sum(l_quantity) over (order by l_comment range between 1 preceding and current row) from lineitem", CodeType, 29, "RANGE with an offset needs a numeric or date ORDER BY key"},
		{"select n_name from nation qualify nope = 1", CodeUnknownCol, 35, `unknown column "nope"`},
		{"select n_name from nation qualify row_number() over () = = 1", CodeSyntax, 58, "syntax error at or near \"=\""},
		{"values (1) qualify row_number() over () = 1", CodeUnsupported, 12, "unsupported: QUALIFY here (only after a SELECT's FROM, WHERE, GROUP BY, HAVING or WINDOW)"},
		{"select * from lineitem where (l_orderkey, l_partkey) > all (select o_orderkey, o_custkey from orders) or l_tax > 0", CodeUnsupported, 54, "unsupported: row-valued > ALL (subquery)"},
		{"select * from lineitem where l_orderkey > any (select o_orderkey, o_custkey from orders)", CodeType, 41, "type mismatch: subquery has 2 columns, > ANY needs one"},
		{"select * from lineitem where (l_orderkey, l_partkey) in (select o_orderkey from orders)", CodeType, 54, "type mismatch: subquery has 1 columns, IN needs 2"},
		{"select * from lineitem left join orders on l_orderkey = (select max(o_orderkey) from orders)", CodeUnsupported, 57, "unsupported: subqueries in JOIN ... ON"},
		{"select count(*) from nation where exists (select 1 from region where r_regionkey = n_regionkey and (select rank() over (order by n_nationkey)) = 1)", CodeUnsupported, 108, "window function over a column of an enclosing query"},
		{"select n_nationkey, (select sum(r_regionkey) over (partition by n_regionkey) from region limit 1) from nation", CodeUnsupported, 29, "window function over a column of an enclosing query"},
		{"select n_nationkey from nation where exists (select * from region where r_regionkey = n_regionkey and 0 < (select count(*) from supplier where s_nationkey < n_nationkey and s_suppkey > r_regionkey))", CodeUnsupported, 107, "other than equality below an aggregation"},
		{"select (select max(l_quantity) from lineitem where l_orderkey = o_orderkey limit 1) from orders", CodeUnsupported, 8, "correlated subqueries with LIMIT"},
		{"select * from orders where exists (select l_orderkey + o_orderkey from lineitem where l_orderkey = o_orderkey)", CodeUnsupported, 28, "correlated reference in the select list of a subquery"},
		{"select * from lineitem join orders using (l_orderkey)", CodeUnknownCol, 15, `column "l_orderkey" specified in USING clause does not exist in right table`},
		{"select * from nation n1 join nation n2 using (n_nationkey, n_nationkey)", CodeAmbiguous, 15, "appears more than once in USING clause"},
		{"select * from orders, lateral (select * from lineitem where l_orderkey = o_orderkey) x", CodeUnsupported, 39, "unsupported: LATERAL"},
		{"select l_orderkey from lineitem intersect select o_orderdate from orders", CodeType, 0, "INTERSECT column 1 has types int64 and date"},
		{"with recursive t as (select 1 from lineitem) select * from t", CodeUnsupported, 1, "unsupported: WITH RECURSIVE"},
		{"select interval '1-2' year to month + l_shipdate from lineitem", CodeValue, 8, "invalid interval"},
		{"select l_shipdate - l_shipdate::timestamp from lineitem", CodeUnsupported, 19, "timestamp - timestamp"},
		{"select no_such_fn(l_comment) from lineitem", CodeUnsupported, 8, "unsupported: function no_such_fn()"},
		{"select upper(l_quantity) from lineitem", CodeType, 8, "upper(decimal(15,2)) is not defined; upper takes (string)"},
		{"select btrim(l_quantity) from lineitem", CodeType, 8, "trim(decimal(15,2)) is not defined"},
		{"select round(l_comment) from lineitem", CodeType, 8, "round(string) is not defined"},
		{"select upper(distinct l_comment) from lineitem", CodeType, 8, "upper is not an aggregate function"},
		{"select extract(fortnight from l_shipdate) from lineitem", CodeValue, 8, `unknown date part "fortnight"`},
		{"select * from (values (1), (2, 3)) t", CodeValue, 29, "VALUES lists must all be the same length"},
		{"select * from (values (1), ('a' = 'b')) t", CodeType, 0, "VALUES column 1 has types int64 and bool"},
		{"insert into lineitem values (1)", CodeUnsupported, 1, "unsupported: INSERT statements"},
		{"select 1 from lineitem; select 2 from lineitem", CodeUnsupported, 24, "more than one statement"},
		{"select l_returnflag, grouping(l_tax) from lineitem group by rollup (l_returnflag)", CodeGrouping, 31, "arguments to GROUPING must be grouping expressions"},
		{"select distinct on (l_returnflag) l_returnflag from lineitem qualify row_number() over () = 1", CodeUnsupported, 21, "DISTINCT ON with QUALIFY"},
		{"select distinct on (3) l_returnflag from lineitem order by l_tax", CodeValue, 21, "position 3 is not in the select list"},
		{"select distinct on (1) * from lineitem order by l_tax", CodeUnsupported, 21, "DISTINCT ON with a position into SELECT *"},
		{"select cast(l_orderkey as timestamp) from lineitem", CodeType, 8, "cannot cast int64 to timestamp"},
		{"select cast(l_shipdate as timestamptz) from lineitem", CodeUnsupported, 27, "unsupported: type timestamptz"},
		{"select * from lineitem where l_quantity ilike 'a%'", CodeType, 41, "ILIKE needs a string"},
		{"select * from lineitem where l_comment like l_shipmode", CodeUnsupported, 40, "non-constant pattern"},
		// SL006 ambiguous
		{"select l_orderkey as k, l_partkey as k from lineitem order by k", CodeAmbiguous, 63, `ORDER BY "k" is ambiguous`},
		{"select l_orderkey as k, l_partkey as k from lineitem where k > 1", CodeAmbiguous, 60, `column reference "k" is ambiguous`},
		{"select * from lineitem, lineitem", CodeAmbiguous, 25, `table name "lineitem" specified more than once`},
		{"select o_orderkey from orders, (select o_orderkey from orders) t", CodeAmbiguous, 8, `column reference "o_orderkey" is ambiguous`},
		// SL007 grouping
		{"select l_returnflag, l_tax from lineitem group by l_returnflag", CodeGrouping, 22, `column "l_tax" must appear in the GROUP BY clause`},
		{"select l_orderkey, count(*) from lineitem", CodeGrouping, 8, `column "l_orderkey" must appear`},
		{"select * from lineitem where sum(l_quantity) > 1", CodeGrouping, 30, "aggregate functions are not allowed in WHERE"},
		{"select sum(l_quantity) from lineitem group by sum(l_quantity)", CodeGrouping, 47, "aggregate functions are not allowed in GROUP BY"},
		{"select sum(count(*)) from lineitem", CodeGrouping, 12, "cannot be nested"},
		{"select l_returnflag from lineitem group by l_returnflag order by l_tax", CodeGrouping, 66, `column "l_tax" must appear`},
		{"select distinct l_returnflag from lineitem order by l_tax", CodeGrouping, 53, "ORDER BY expressions must appear in select list"},
		{"select l_returnflag from lineitem group by l_returnflag having l_tax > 0", CodeGrouping, 64, `column "l_tax"`},
		// SL008 values
		{"select * from lineitem where l_shipdate < date '1998-13-01'", CodeValue, 43, `invalid date: "1998-13-01"`},
		{"select * from lineitem where l_shipdate < '1998-02-30'", CodeValue, 41, "invalid date"},
		{"select * from lineitem limit -1", CodeValue, 30, "LIMIT must not be negative"},
		{"select l_orderkey from lineitem order by 2", CodeValue, 42, "ORDER BY position 2 is not in select list"},
		{"select l_orderkey from lineitem group by 3", CodeValue, 42, "GROUP BY position 3"},
		{"select l_orderkey from lineitem order by 'x'", CodeValue, 42, "non-integer constant in ORDER BY"},
		{"select count(*) from lineitem group by 1.5", CodeValue, 40, "non-integer constant in GROUP BY"},
		{"select 123456789012345678901234567890123456789 from lineitem", CodeValue, 8, "more than 38 digits"},
		{"select 1.234567890123456789012345678901234567890 from lineitem", CodeValue, 8, "more than 38 digits"},
		{"select cast(l_quantity as decimal(38,20)) * cast(l_tax as decimal(38,20)) from lineitem", CodeValue, 43, "needs scale 40"},
		{"select cast('abc' as int) from lineitem", CodeValue, 8, `invalid input for int64: "abc"`},
		// SL090 nested deeper than the parser may go (issue 30: this one
		// crashed the process in pg_query's C code); QUALIFY's condition is
		// parsed on its own, but only after the whole text is checked.
		{"select 1" + strings.Repeat("+1", 30000), plan.CodeSQLTooLarge, 2003, "the SQL nests more than 1000 levels deep"},
		{"select n_name from nation qualify 1" + strings.Repeat("+1", 30000) + " > 0", plan.CodeSQLTooLarge, 2030, "nests more than 1000 levels"},
		{"select " + strings.Repeat("(select ", 2000) + "1" + strings.Repeat(")", 2000), plan.CodeSQLTooLarge, 8000, "nests more than 1000 levels"},
	}
	for _, c := range cases {
		_, err := Plan(context.Background(), c.sql, testCatalog, Options{})
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%q: got %v, want an *Error %s", c.sql, err, c.code)
			continue
		}
		if pe.Code != c.code || pe.Pos != c.pos || !strings.Contains(pe.Error(), c.msg) {
			t.Errorf("%q:\n got  %s (code %s pos %d)\n want code %s pos %d containing %q", c.sql, pe, pe.Code, pe.Pos, c.code, c.pos, c.msg)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	_, err := Plan(context.Background(), "select l_foo from lineitem", testCatalog, Options{})
	if got, want := err.Error(), `SL003: unknown column "l_foo" in table "lineitem" at position 8`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = Plan(context.Background(), "select * from nosuch", testCatalog, Options{})
	if !errors.Is(err, ErrUnknownTable) {
		t.Errorf("unknown table error %v does not wrap ErrUnknownTable", err)
	}
}

// failingCatalog fails every lookup with err.
type failingCatalog struct{ err error }

func (c failingCatalog) Table(context.Context, string) (*TableInfo, error) { return nil, c.err }

// TestCatalogLookupErrorsCoded: a catalog that fails for a reason other
// than an unknown table gives a coded error, never a bare internal one:
// Redis past its outage window is SL203 (the code redisdb's sentinel
// carries), anything else SL204, both naming the table.
func TestCatalogLookupErrorsCoded(t *testing.T) {
	cases := []struct {
		name string
		err  error
		code string
	}{
		{"redis outage", fmt.Errorf("catalog: %w for 5s: %w", redisdb.ErrUnavailable, io.EOF), plan.CodeStoreUnavailable},
		{"iceberg catalog down", errors.New("rest catalog: 503 Service Unavailable"), plan.CodeCatalogRead},
	}
	for _, c := range cases {
		_, err := Plan(context.Background(), "select * from events", failingCatalog{c.err}, Options{})
		if got := plan.CodeOf(err); got != c.code {
			t.Errorf("%s: code %q, want %s (err %v)", c.name, got, c.code, err)
		}
		if err == nil || !strings.Contains(err.Error(), `"events"`) || strings.Contains(err.Error(), "planner:") {
			t.Errorf("%s: message %v should name the table and carry no package prefix", c.name, err)
		}
		if !errors.Is(err, c.err) && !errors.Is(err, redisdb.ErrUnavailable) {
			t.Errorf("%s: %v does not wrap the catalog's error", c.name, err)
		}
	}
}
