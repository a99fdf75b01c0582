package sqlliteral

import (
	"math"
	"testing"
	"time"

	"github.com/sluicedb/sluice/planner/plan"
)

func TestLiterals(t *testing.T) {
	num := func(s string) string {
		lit, err := Numeric(s, 1)
		if err != nil {
			return "error"
		}
		return lit
	}
	str := func(s string) string {
		lit, err := String(s, 1)
		if err != nil {
			return "error " + plan.CodeOf(err)
		}
		return lit
	}
	for _, c := range []struct{ got, want string }{
		{Int(42), "42"},
		{Int(-42), "(-42)"},
		{Uint(math.MaxUint64), "18446744073709551615"},
		{Float(0.5), "CAST(0.5 AS DOUBLE PRECISION)"},
		{Float(-1e300), "CAST(-1e+300 AS DOUBLE PRECISION)"},
		{Float(math.NaN()), "CAST('NaN' AS DOUBLE PRECISION)"},
		{Float(math.Inf(-1)), "CAST('-Infinity' AS DOUBLE PRECISION)"},
		{Bool(true), "TRUE"},
		{num("-123.45"), "(-123.45)"},
		{num(" 1e5 "), "(1e5)"},
		{num("1; drop table x"), "error"},
		{num("--1"), "error"},
		{str("it's"), "'it''s'"},
		{str("a\x00b"), "error SL008"},
		{Date(time.Date(1995, 3, 15, 23, 0, 0, 0, time.UTC)), "DATE '1995-03-15'"},
		{Date(time.Date(0, 1, 2, 0, 0, 0, 0, time.UTC)), "DATE '1-01-02 BC'"},
		{Timestamp(time.Date(2024, 2, 29, 13, 14, 15, 500_000_999, time.FixedZone("x", 3600))), "TIMESTAMP '2024-02-29 12:14:15.5'"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

func TestSubstitute(t *testing.T) {
	for _, c := range []struct {
		name, sql string
		lits      []string
		style     Style
		want      string // "error": SL008
		count     int
	}{
		{"dollar", `select $1, $2, $1`, []string{"1", "'a'"}, Dollar, `select 1, 'a', 1`, 2},
		{"question ignored in Dollar", `select ? , $1`, []string{"1"}, Dollar, `select ? , 1`, 1},
		{"question", `select ?, ?`, []string{"1", "2"}, DollarOrQuestion, `select 1, 2`, 2},
		{"not in strings, identifiers, comments", "select '$1 ?', \"?$1\", $$ ? $1 $$ -- ? $1\n, ? /* $1 ? */", []string{"7"}, DollarOrQuestion, "select '$1 ?', \"?$1\", $$ ? $1 $$ -- ? $1\n, 7 /* $1 ? */", 1},
		{"quoted quote", `select 'it''s ?', ?`, []string{"1"}, DollarOrQuestion, `select 'it''s ?', 1`, 1},
		{"identifier with $", `select a$1 from t where x = $1`, []string{"1"}, Dollar, `select a$1 from t where x = 1`, 1},
		{"missing", `select $2`, []string{"1"}, Dollar, "error", 2},
		{"mixed", `select $1, ?`, []string{"1", "2"}, DollarOrQuestion, "error", 1},
		{"mixed the other way", `select ?, $1`, []string{"1", "2"}, DollarOrQuestion, "error", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Substitute(c.sql, c.lits, c.style)
			if err != nil {
				if c.want != "error" || plan.CodeOf(err) != plan.CodeValue {
					t.Fatalf("%v (code %q)", err, plan.CodeOf(err))
				}
			} else if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			if n := Count(c.sql, c.style); n != c.count {
				t.Fatalf("count %d, want %d", n, c.count)
			}
		})
	}
}
