package pgwire

import (
	"math"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestNumericBinary encodes decimals in the binary numeric format and
// decodes them with pgx's codec: the text must come back unchanged.
func TestNumericBinary(t *testing.T) {
	m := pgtype.NewMap()
	for _, s := range []string{"0", "0.00", "1", "-1", "12345.6789", "-0.0001", "10000", "99999999.99",
		"123456789012345678.123", "0.5", "-98765432109876543210987654321.12345678", "100000000.00000001"} {
		buf := appendNumeric(nil, s)
		var n pgtype.Numeric
		if err := m.Scan(oidNumeric, 1, buf, &n); err != nil {
			t.Fatalf("%s: decode: %v", s, err)
		}
		v, err := n.Value()
		if err != nil {
			t.Fatal(err)
		}
		if v != s && !(s == "0.00" && v == "0") { // pgx drops the scale of a zero
			t.Errorf("numeric %s: decoded %v", s, v)
		}
	}
}

func TestFloatText(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {1.5, "1.5"}, {0.1, "0.1"}, {123456789012, "123456789012"}, {1e15, "1e+15"}, {1.5e300, "1.5e+300"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {-2.25, "-2.25"}, {math.Inf(1), "Infinity"}, {math.NaN(), "NaN"},
	} {
		if got := string(appendFloat(nil, c.f, false)); got != c.want {
			t.Errorf("float %v: %q, want %q", c.f, got, c.want)
		}
	}
}

// TestSubstitute checks that parameters become typed literals that cannot
// change the statement, and that $n inside strings, identifiers and
// comments is left alone.
func TestSubstitute(t *testing.T) {
	cases := []struct {
		sql    string
		oids   []uint32
		params []string
		want   string
		err    string
	}{
		{sql: "select * from t where a = $1", params: []string{"x' or '1'='1"}, want: "select * from t where a = 'x'' or ''1''=''1'"},
		{sql: "select $1, '$1', \"$1\", $2 -- $1\n/* $2 */", params: []string{"a", "b"}, want: "select 'a', '$1', \"$1\", 'b' -- $1\n/* $2 */"},
		{sql: "select $1", oids: []uint32{oidInt8}, params: []string{"-42"}, want: "select (-42)"},
		{sql: "select $1", oids: []uint32{oidInt8}, params: []string{"1; drop table t"}, err: "invalid integer"},
		{sql: "select $1", oids: []uint32{oidNumeric}, params: []string{"1.50"}, want: "select (1.50)"},
		{sql: "select $1", oids: []uint32{oidNumeric}, params: []string{"1) or (1"}, err: "invalid numeric"},
		{sql: "select $1", oids: []uint32{oidDate}, params: []string{"1998-09-02"}, want: "select DATE '1998-09-02'"},
		{sql: "select $1", oids: []uint32{oidBool}, params: []string{"yes"}, want: "select TRUE"},
		{sql: "select $1", oids: []uint32{oidFloat8}, params: []string{"2.5"}, want: "select CAST(2.5 AS DOUBLE PRECISION)"},
		{sql: "select $$a $1 b$$, $1", params: []string{"x"}, want: "select $$a $1 b$$, 'x'"},
		{sql: "select E'\\'$1', $1", params: []string{"y"}, want: "select E'\\'$1', 'y'"},
		{sql: "select $2", params: []string{"x"}, err: "no parameter $2"},
		{sql: "select $1", params: []string{"a\x00b"}, err: "NUL"},
	}
	for _, c := range cases {
		lits := make([]string, len(c.params))
		var err error
		for i, p := range c.params {
			var oid uint32
			if i < len(c.oids) {
				oid = c.oids[i]
			}
			if lits[i], err = literal(oid, 0, []byte(p), i+1); err != nil {
				break
			}
		}
		var got string
		if err == nil {
			got, err = substitute(c.sql, lits)
		}
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q %q: error %v, want %q", c.sql, c.params, err, c.err)
			}
		case err != nil:
			t.Errorf("%q: %v", c.sql, err)
		case got != c.want:
			t.Errorf("%q:\n got %s\nwant %s", c.sql, got, c.want)
		}
	}
}

func TestSQLState(t *testing.T) {
	for code, want := range map[string]string{"SL001": "42601", "SL002": "42P01", "SL003": "42703", "SL005": "0A000",
		"SL102": "22003", "SL900": "XX000", "SL099": "22000", "": "XX000"} {
		if got := SQLState(code); got != want {
			t.Errorf("SQLState(%q) = %s, want %s", code, got, want)
		}
	}
}
