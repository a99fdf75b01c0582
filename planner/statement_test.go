package planner

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseStatement(t *testing.T) {
	tests := []struct {
		sql  string
		want Statement
	}{
		{"select 1", Statement{Kind: StmtQuery, Query: "select 1"}},
		{"-- c\nwith x as (select 1) select * from x", Statement{Kind: StmtQuery, Query: "-- c\nwith x as (select 1) select * from x"}},
		{"SHOW TABLES;", Statement{Kind: StmtShowTables}},
		// names keep their case as written; the catalog looks them up regardless of case
		{"describe Lineitem", Statement{Kind: StmtDescribe, Name: "Lineitem", NamePos: 10}},
		{"DESC TABLE \"People\"", Statement{Kind: StmtDescribe, Name: "People", NamePos: 12}},
		{"drop table if exists public.t1;", Statement{Kind: StmtDropTable, Name: "t1", NamePos: 29, IfExists: true}},
		{"DROP TABLE t", Statement{Kind: StmtDropTable, Name: "t", NamePos: 12}},
		{"create table t2 as select a from t ;", Statement{Kind: StmtCreateTableAs, Name: "t2", NamePos: 14,
			Query: "select a from t", QueryOffset: 19}},
		{"CREATE TABLE IF NOT EXISTS t2 AS\n  WITH q AS (SELECT 1) SELECT * FROM q", Statement{Kind: StmtCreateTableAs, Name: "t2", NamePos: 28,
			IfNotExists: true, Query: "WITH q AS (SELECT 1) SELECT * FROM q", QueryOffset: 35}},
		{"CREATE EXTERNAL TABLE ev STORED AS PARQUET LOCATION 's3://b/ev/'", Statement{Kind: StmtCreateExternal, Name: "ev", NamePos: 23,
			Format: "parquet", Location: "s3://b/ev/", LocationPos: 53}},
		{"create external table p (id bigint, price decimal(15,2)) stored as csv location 's3://b/p.csv' options (header 'false', delimiter = '|')",
			Statement{Kind: StmtCreateExternal, Name: "p", NamePos: 23, Schema: "id bigint, price decimal(15,2)", SchemaPos: 26,
				Format: "csv", Location: "s3://b/p.csv", LocationPos: 81, Options: map[string]string{"header": "false", "delimiter": "|"}}},
		{"COPY (select ')' from t where x = (1)) TO 's3://b/out/' (FORMAT csv, header true)", Statement{Kind: StmtCopy,
			Query: "select ')' from t where x = (1)", QueryOffset: 6, Location: "s3://b/out/", LocationPos: 43, Format: "csv",
			Options: map[string]string{"format": "csv", "header": "true"}}},
		{"copy ( select 1 ) to 's3://b/o/'", Statement{Kind: StmtCopy, Query: "select 1", QueryOffset: 7, Location: "s3://b/o/",
			LocationPos: 22, Format: "parquet"}},
		{"EXPLAIN select 1;", Statement{Kind: StmtExplain, Query: "select 1", QueryOffset: 8}},
		{"explain analyze select 1", Statement{Kind: StmtExplain, Analyze: true, Query: "select 1", QueryOffset: 16}},
		{"INSERT INTO Rich select 1;", Statement{Kind: StmtInsert, Name: "Rich", NamePos: 13, Query: "select 1", QueryOffset: 17}},
		{"insert into \"my t\" values (1), (2)", Statement{Kind: StmtInsert, Name: "my t", NamePos: 13, Query: "values (1), (2)", QueryOffset: 19}},
		{"insert into t (with q as (select 1) select * from q)", Statement{Kind: StmtInsert, Name: "t", NamePos: 13, Query: "(with q as (select 1) select * from q)", QueryOffset: 14}},
		{"create view V as select 1;", Statement{Kind: StmtCreateView, Name: "V", NamePos: 13, Query: "select 1", QueryOffset: 17}},
		{"CREATE OR REPLACE VIEW v (a, \"B c\") AS (select 1, 2)", Statement{Kind: StmtCreateView, OrReplace: true, Name: "v", NamePos: 24, Schema: `a, "B c"`, SchemaPos: 27, Query: "(select 1, 2)", QueryOffset: 39}},
		{"create view if not exists v as with q as (select 1) select * from q", Statement{Kind: StmtCreateView, IfNotExists: true, Name: "v", NamePos: 27, Query: "with q as (select 1) select * from q", QueryOffset: 31}},
		{"drop view if exists v", Statement{Kind: StmtDropView, IfExists: true, Name: "v", NamePos: 21}},
	}
	for _, tt := range tests {
		got, err := ParseStatement(tt.sql)
		if err != nil {
			t.Errorf("%q: %v", tt.sql, err)
			continue
		}
		tt.want.SQL = tt.sql
		if !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tt.sql, *got, tt.want)
		}
	}
}

func TestParseStatementErrors(t *testing.T) {
	tests := []struct {
		sql  string
		code string
		pos  int
		msg  string
	}{
		{"create external table t location 's3://b/'", CodeSyntax, 43, "syntax error: CREATE EXTERNAL TABLE needs STORED AS PARQUET or STORED AS CSV at position 43"},
		{"create external table t stored as orc location 's3://b/'", CodeBadOption, 35, "STORED AS orc: want PARQUET, CSV, JSON or ICEBERG"},
		{"create external table t stored as csv location s3", CodeSyntax, 48, `syntax error: expected a location string 's3://bucket/prefix/', got "s3"`},
		{"create external table t stored as csv", CodeSyntax, 38, "LOCATION"},
		{"create external table t (a int stored as csv", CodeSyntax, 25, "unclosed ("},
		{"create table t (a int)", CodeUnsupported, 16, "CREATE TABLE with columns"},
		{"create index i on t (x)", CodeUnsupported, 1, "unsupported: CREATE other than"},
		{"create or replace table t as select 1", CodeSyntax, 19, "VIEW"},
		{"create view v (a, b as select 1", CodeSyntax, 15, "unclosed ( of the column list"},
		{"create table t select 1", CodeSyntax, 16, `expected AS, got "select"`},
		{"create table t as", CodeSyntax, 18, "expected a query"},
		{"drop table", CodeSyntax, 11, "expected a table name, got end of input"},
		{"drop table t extra", CodeSyntax, 14, `expected end of statement, got "extra"`},
		{"drop index i", CodeUnsupported, 6, "DROP other than DROP TABLE and DROP VIEW"},
		{"show columns", CodeUnsupported, 6, "SHOW other than SHOW TABLES"},
		{"describe 'x'", CodeSyntax, 10, "expected a table name"},
		{"copy t to 's3://b/'", CodeUnsupported, 6, "COPY of a table"},
		{"copy (select 1 to 's3://b/'", CodeSyntax, 6, "unclosed ( of the COPY query"},
		{"copy (select 1) to 's3://b/' (format orc)", CodeBadOption, 38, "FORMAT orc: want parquet, csv or json"},
		{"copy (select 1) to 's3://b/", CodeSyntax, 20, "unterminated string"},
		{"explain", CodeSyntax, 8, "expected a query"},
		{"insert t select 1", CodeSyntax, 8, `expected INTO, got "t"`},
		{"insert into t", CodeSyntax, 14, "expected a query"},
		{"insert into t (a, b) select 1, 2", CodeUnsupported, 15, "INSERT with a column list"},
		{"insert into t default values", CodeSyntax, 15, "expected a query"},
		{"/* x", CodeSyntax, 1, "unterminated /* comment"},
	}
	for _, tt := range tests {
		_, err := ParseStatement(tt.sql)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%q: err %v, want *Error", tt.sql, err)
			continue
		}
		if pe.Code != tt.code || pe.Pos != tt.pos || !contains(pe.Error(), tt.msg) {
			t.Errorf("%q: got %s (code %s pos %d), want code %s pos %d containing %q", tt.sql, pe, pe.Code, pe.Pos, tt.code, tt.pos, tt.msg)
		}
	}
}

// TestStatementQueryError: an error in the query of a CTAS points into
// the whole statement.
func TestStatementQueryError(t *testing.T) {
	st, err := ParseStatement("create table t as select l_foo from lineitem")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Plan(t.Context(), st.Query, testCatalog, Options{})
	var pe *Error
	if !errors.As(st.QueryError(err), &pe) || pe.Pos != 26 {
		t.Fatalf("got %v (%+v), want position 26 (l_foo)", st.QueryError(err), pe)
	}
}

func contains(s, sub string) bool { return len(sub) == 0 || indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// FuzzParseStatement: no input panics, an error is always an *Error with
// a code and a position inside the text, and the query part of a
// statement is a substring at QueryOffset.
func FuzzParseStatement(f *testing.F) {
	for _, s := range []string{"select 1", "create external table t stored as csv location 's3://b/'",
		"copy (select '(') to 's3://b/' (format csv)", "drop table if exists a.b", "explain analyze select 1",
		"create table t as select 1;", "describe \"x\"\"y\"", "/* c */ show tables", "copy ((((", "create external table t ((a int)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		st, err := ParseStatement(sql)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Code == "" || pe.Pos < 0 || pe.Pos > len([]rune(sql))+1 {
				t.Fatalf("%q: error %v (%#v)", sql, err, pe)
			}
			return
		}
		if st.Kind != StmtQuery && st.Query != "" && (st.QueryOffset > len(sql) || !strings.HasPrefix(sql[st.QueryOffset:], st.Query)) {
			t.Fatalf("%q: query %q not at offset %d", sql, st.Query, st.QueryOffset)
		}
	})
}
