package pgwire

import (
	"encoding/binary"
	"testing"
)

// TestParamLiterals: the text and binary forms drivers send, as the SQL
// literals the engine receives.
func TestParamLiterals(t *testing.T) {
	num := func(weight, sign, dscale int16, digits ...uint16) []byte {
		b := make([]byte, 8+2*len(digits))
		binary.BigEndian.PutUint16(b[0:], uint16(len(digits)))
		binary.BigEndian.PutUint16(b[2:], uint16(weight))
		binary.BigEndian.PutUint16(b[4:], uint16(sign))
		binary.BigEndian.PutUint16(b[6:], uint16(dscale))
		for i, d := range digits {
			binary.BigEndian.PutUint16(b[8+2*i:], d)
		}
		return b
	}
	for _, c := range []struct {
		name   string
		oid    uint32
		format int16
		v      []byte
		want   string
	}{
		{"pgjdbc setDate (unspecified)", 0, 0, []byte("1995-01-01 +00"), "'1995-01-01'"},
		{"pgjdbc setDate typed", oidDate, 0, []byte("1995-01-01 +00"), "DATE '1995-01-01'"},
		{"node Date at midnight UTC", 0, 0, []byte("1995-01-01T00:00:00.000+00:00"), "'1995-01-01'"},
		{"node Date with an offset: its wall time", 0, 0, []byte("1995-01-01T02:30:00.000+02:00"), "'1995-01-01 02:30:00'"},
		{"node Date at local midnight west of UTC", 0, 0, []byte("1995-03-15T00:00:00.000-05:00"), "'1995-03-15'"},
		{"pgjdbc setDate east of UTC", 0, 0, []byte("1995-03-15 +05:30"), "'1995-03-15'"},
		{"pgjdbc setDate typed east of UTC", oidDate, 0, []byte("1995-03-15 +05:30"), "DATE '1995-03-15'"},
		{"pgjdbc setTimestamp east of UTC", 0, 0, []byte("1995-03-15 00:30:00+05:30"), "'1995-03-15 00:30:00'"},
		{"timestamp text with an offset: its wall time", oidTimestamp, 0, []byte("2024-02-29 13:14:15.5+01"), "TIMESTAMP '2024-02-29 13:14:15.5'"},
		{"timestamptz text", oidTimestampTZ, 0, []byte("2024-02-29 13:14:15.5+01"), "TIMESTAMP '2024-02-29 12:14:15.5'"},
		{"timestamp text", oidTimestamp, 0, []byte("2024-02-29T13:14:15"), "TIMESTAMP '2024-02-29 13:14:15'"},
		{"a plain string stays a string", 0, 0, []byte("BUILDING"), "'BUILDING'"},
		{"a date-like string with words stays", 0, 0, []byte("1995-01-01 was a Sunday"), "'1995-01-01 was a Sunday'"},
		{"binary numeric 9000.50", oidNumeric, 1, num(0, 0, 2, 9000, 5000), "(9000.50)"},
		{"binary numeric -123456.789", oidNumeric, 1, num(1, 0x4000, 3, 12, 3456, 7890), "(-123456.789)"},
		{"binary numeric 0.0012", oidNumeric, 1, num(-1, 0, 4, 12), "(0.0012)"},
		{"binary numeric 0.00000012", oidNumeric, 1, num(-2, 0, 8, 12), "(0.00000012)"},
		{"binary numeric 20000", oidNumeric, 1, num(1, 0, 0, 2), "(20000)"},
		{"binary numeric 0", oidNumeric, 1, num(0, 0, 0), "(0)"},
	} {
		got, err := literal(c.oid, c.format, c.v, 1)
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := literal(oidDate, 0, []byte("01/06/2024"), 1); err == nil {
		t.Errorf("a date in another form: want an error")
	}
}
