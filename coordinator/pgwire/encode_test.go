package pgwire

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestNumericBinary encodes decimals in the binary numeric format and
// decodes them with pgx's codec: the text must come back unchanged.
func TestNumericBinary(t *testing.T) {
	m := pgtype.NewMap()
	for _, s := range []string{"0", "0.00", "1", "-1", "12345.6789", "-0.0001", "10000", "99999999.99",
		"123456789012345678.123", "0.5", "-98765432109876543210987654321.12345678", "100000000.00000001"} {
		buf := appendNumeric(nil, []byte(s))
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

// TestDecimalDateText checks the allocation-free decimal and date
// encoders against arrow's exact decimal text and the time package, in
// text and (decoded by pgx) in binary.
func TestDecimalDateText(t *testing.T) {
	m := pgtype.NewMap()
	r := rand.New(rand.NewPCG(3, 4))
	mem := memory.DefaultAllocator
	for _, scale := range []int32{0, 2, 9, 18} {
		d64 := array.NewDecimal64Builder(mem, &arrow.Decimal64Type{Precision: 18, Scale: scale})
		d128 := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: scale})
		for _, v := range []int64{0, 1, -1, 5, -5, 999999999999999999, -999999999999999999, 100, -100} {
			d64.Append(decimal.Decimal64(v))
			d128.Append(decimal128.FromI64(v))
		}
		for range 500 {
			v := r.Int64N(1e18) >> r.IntN(60)
			if r.IntN(2) == 0 {
				v = -v
			}
			d64.Append(decimal.Decimal64(v))
			d128.Append(decimal128.FromI64(v))
			// and a 128-bit value past the fast path
			d128.Append(decimal128.New(r.Int64N(1<<40)-(1<<39), r.Uint64()))
		}
		for _, a := range []arrow.Array{d64.NewArray(), d128.NewArray()} {
			for i := 0; i < a.Len(); i++ {
				var want string
				switch x := a.(type) {
				case *array.Decimal64:
					want = x.Value(i).ToString(scale)
				case *array.Decimal128:
					want = x.Value(i).ToString(scale)
				}
				if got := string(appendValue(nil, a, i, 0)); got != want {
					t.Fatalf("%s scale %d: text %q, want %q", a.DataType(), scale, got, want)
				}
				var n pgtype.Numeric
				if err := m.Scan(oidNumeric, 1, appendValue(nil, a, i, 1), &n); err != nil {
					t.Fatalf("%s: decode %s: %v", a.DataType(), want, err)
				}
				if v, _ := n.Value(); v != want && !(n.Int.Sign() == 0 && strings.Trim(want, "-0.") == "") {
					t.Fatalf("%s scale %d: binary decodes to %v, want %s", a.DataType(), scale, v, want)
				}
			}
			a.Release()
		}
	}
	db := array.NewDate32Builder(mem)
	for d := int32(-800000); d <= 3000000; d += 7 {
		db.Append(arrow.Date32(d))
	}
	dates := db.NewArray()
	defer dates.Release()
	for i := 0; i < dates.Len(); i++ {
		d := int32(dates.(*array.Date32).Value(i))
		want := string(appendDate(nil, time.Unix(int64(d)*86400, 0).UTC()))
		if got := string(appendValue(nil, dates, i, 0)); got != want {
			t.Fatalf("date %d: %q, want %q", d, got, want)
		}
	}
}
