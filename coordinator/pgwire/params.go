package pgwire

import (
	"encoding/binary"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sluicedb/sluice/coordinator/sqlliteral"
)

// Parameters of the extended protocol are substituted into the SQL text
// as typed literals before the query is planned: sluice plans SQL text,
// and a literal that is built here (validated for its type, strings
// quoted with ' doubled) cannot change the statement's shape. A
// parameter's type is the one the client declared in Parse; an
// undeclared one (OID 0, what pgx and psql send) is a string literal,
// which sluice converts when it meets a number, date or bool.

// paramError is an error the protocol layer finds (a bad parameter value,
// a missing portal or cursor, a bad COPY option), sent with its SQLSTATE.
type paramError struct {
	state string
	msg   string
	hint  string
}

func (e *paramError) Error() string { return e.msg }

var numericText = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// literal is the SQL literal of one parameter value.
func literal(oid uint32, format int16, v []byte, n int) (string, error) {
	if v == nil {
		return "NULL", nil
	}
	bad := func(what string) error {
		return &paramError{state: "22P02", msg: fmt.Sprintf("parameter $%d: invalid %s value %q", n, what, truncate(string(v), 40))}
	}
	if format == 1 {
		return binaryLiteral(oid, v, n)
	}
	s := string(v)
	switch oid {
	case oidInt8, oidInt4, 21, oidOID:
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return "", bad("integer")
		}
		return sqlliteral.Int(i), nil
	case oidFloat8, 700:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return "", bad("double precision")
		}
		return sqlliteral.Float(f), nil
	case oidNumeric:
		t := strings.TrimSpace(s)
		if !numericText.MatchString(t) {
			return "", bad("numeric")
		}
		return "(" + t + ")", nil
	case oidBool:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "t", "true", "y", "yes", "on", "1":
			return "TRUE", nil
		case "f", "false", "n", "no", "off", "0":
			return "FALSE", nil
		}
		return "", bad("boolean")
	case oidDate:
		t, ok := parseTemporal(s, false)
		if !ok {
			return "", bad("date")
		}
		return "DATE " + sqlliteral.Quote(t.Format("2006-01-02")), nil
	case oidTimestamp, oidTimestampTZ:
		t, ok := parseTemporal(s, oid == oidTimestampTZ)
		if !ok {
			return "", bad("timestamp")
		}
		return "TIMESTAMP " + sqlliteral.Quote(string(appendTimestamp(nil, t))), nil
	case 0:
		// An untyped value the engine will cast from its context: the
		// date and timestamp forms drivers send (pgjdbc's setDate
		// "1995-01-01 +00", node-postgres's Date
		// "1995-01-01T00:00:00.000+00:00") in the engine's own form,
		// their wall time (the context is a date or a timestamp
		// without time zone).
		if t, ok := parseTemporal(s, false); ok {
			if t.Equal(t.Truncate(24 * time.Hour)) {
				return sqlliteral.Quote(t.Format("2006-01-02")), nil
			}
			return sqlliteral.Quote(string(appendTimestamp(nil, t))), nil
		}
	}
	return stringLiteral(s, n)
}

// temporalText matches the text forms of dates and timestamps that
// clients send: a date, optionally a time with a fraction, optionally a
// zone offset (Z, +hh, +hh:mm, +hhmm), with T or a space between.
var temporalText = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?))?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$`)

// parseTemporal parses a client's date or timestamp text. With zoned (a
// timestamptz parameter) a value with an offset is converted to UTC, the
// session's time zone. Otherwise the offset is ignored, as Postgres does
// when the text becomes a date or a timestamp without time zone (the only
// kinds sluice has): pgjdbc's setDate/setTimestamp and node-postgres's
// Date send the client's local wall time with its offset, and Postgres
// keeps the wall time ('1995-03-15 +05:30'::date is 1995-03-15).
func parseTemporal(s string, zoned bool) (time.Time, bool) {
	m := temporalText.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return time.Time{}, false
	}
	text, layout := m[1], "2006-01-02"
	if m[2] != "" {
		clock := m[2]
		if len(clock) == 5 {
			clock += ":00"
		}
		text += " " + clock
		layout += " 15:04:05.999999999"
	}
	t, err := time.Parse(layout, text)
	if err != nil {
		return time.Time{}, false
	}
	if z := m[3]; zoned && z != "" && z != "Z" {
		sign := 1
		if z[0] == '-' {
			sign = -1
		}
		digits := strings.ReplaceAll(z[1:], ":", "")
		h, _ := strconv.Atoi(digits[:2])
		mins := 0
		if len(digits) == 4 {
			mins, _ = strconv.Atoi(digits[2:])
		}
		t = t.Add(-time.Duration(sign) * (time.Duration(h)*time.Hour + time.Duration(mins)*time.Minute))
	}
	return t.UTC(), true
}

// binaryNumeric decodes Postgres's binary numeric: ndigits, weight,
// sign and dscale (int16 each), then ndigits base-10000 digits, the
// first weighted 10000^weight.
func binaryNumeric(v []byte) (string, bool) {
	if len(v) < 8 {
		return "", false
	}
	nd := int(binary.BigEndian.Uint16(v[0:]))
	weight := int(int16(binary.BigEndian.Uint16(v[2:])))
	sign := binary.BigEndian.Uint16(v[4:])
	dscale := int(binary.BigEndian.Uint16(v[6:]))
	if len(v) != 8+2*nd {
		return "", false
	}
	switch sign {
	case 0xC000:
		return "'NaN'::double", true
	case 0xD000:
		return "'Infinity'::double", true
	case 0xF000:
		return "'-Infinity'::double", true
	case 0, 0x4000:
	default:
		return "", false
	}
	group := func(idx int) int {
		if idx < 0 || idx >= nd {
			return 0
		}
		return int(binary.BigEndian.Uint16(v[8+2*idx:]))
	}
	for i := 0; i < nd; i++ {
		if group(i) > 9999 {
			return "", false
		}
	}
	// Group idx has the weight weight-idx: 10000^(weight-idx).
	var ib, fb strings.Builder
	for w := max(weight, 0); w >= 0; w-- {
		if d := group(weight - w); ib.Len() == 0 {
			ib.WriteString(strconv.Itoa(d))
		} else {
			fmt.Fprintf(&ib, "%04d", d)
		}
	}
	for w := -1; w >= -(dscale+3)/4; w-- {
		fmt.Fprintf(&fb, "%04d", group(weight-w))
	}
	ip, f := ib.String(), fb.String()[:dscale]
	out := ip
	if dscale > 0 {
		out += "." + f
	}
	if sign == 0x4000 {
		out = "-" + out
	}
	return "(" + out + ")", true
}

func binaryLiteral(oid uint32, v []byte, n int) (string, error) {
	size := func(want int) error {
		if len(v) != want {
			return &paramError{state: "08P01", msg: fmt.Sprintf("parameter $%d: binary value of type %d has %d bytes, want %d", n, oid, len(v), want)}
		}
		return nil
	}
	switch oid {
	case oidInt8:
		if err := size(8); err != nil {
			return "", err
		}
		return sqlliteral.Int(int64(binary.BigEndian.Uint64(v))), nil
	case oidInt4:
		if err := size(4); err != nil {
			return "", err
		}
		return sqlliteral.Int(int64(int32(binary.BigEndian.Uint32(v)))), nil
	case 21:
		if err := size(2); err != nil {
			return "", err
		}
		return sqlliteral.Int(int64(int16(binary.BigEndian.Uint16(v)))), nil
	case oidFloat8:
		if err := size(8); err != nil {
			return "", err
		}
		return sqlliteral.Float(math.Float64frombits(binary.BigEndian.Uint64(v))), nil
	case 700:
		if err := size(4); err != nil {
			return "", err
		}
		return sqlliteral.Float(float64(math.Float32frombits(binary.BigEndian.Uint32(v)))), nil
	case oidBool:
		if err := size(1); err != nil {
			return "", err
		}
		if v[0] != 0 {
			return "TRUE", nil
		}
		return "FALSE", nil
	case oidDate:
		if err := size(4); err != nil {
			return "", err
		}
		d := int64(int32(binary.BigEndian.Uint32(v))) + pgEpochDays
		return "DATE " + sqlliteral.Quote(string(appendDate(nil, time.Unix(d*86400, 0).UTC()))), nil
	case oidTimestamp:
		if err := size(8); err != nil {
			return "", err
		}
		us := int64(binary.BigEndian.Uint64(v)) + pgEpoch.UnixMicro()
		return "TIMESTAMP " + sqlliteral.Quote(string(appendTimestamp(nil, time.UnixMicro(us).UTC()))), nil
	case oidTimestampTZ:
		if err := size(8); err != nil {
			return "", err
		}
		us := int64(binary.BigEndian.Uint64(v)) + pgEpoch.UnixMicro()
		return "TIMESTAMP " + sqlliteral.Quote(string(appendTimestamp(nil, time.UnixMicro(us).UTC()))), nil
	case oidNumeric:
		lit, ok := binaryNumeric(v)
		if !ok {
			return "", &paramError{state: "22P03", msg: fmt.Sprintf("parameter $%d: invalid binary numeric value", n)}
		}
		return lit, nil
	case oidText, oidVarchar, 0, oidName, 1042:
		return stringLiteral(string(v), n)
	}
	return "", &paramError{state: "0A000", msg: fmt.Sprintf("parameter $%d: binary format of type %d is not supported; send it as text", n, oid)}
}

func stringLiteral(s string, n int) (string, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", &paramError{state: "22021", msg: fmt.Sprintf("parameter $%d: text contains a NUL byte", n)}
	}
	return sqlliteral.Quote(s), nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// substitute replaces the parameter references $1..$n of sql, outside
// strings, quoted identifiers and comments, by lits. A reference past
// len(lits) is an error (08P01).
func substitute(sql string, lits []string) (string, error) {
	out, err := sqlliteral.Substitute(sql, lits, sqlliteral.Dollar)
	if err != nil {
		return "", &paramError{state: "08P01", msg: err.Error()}
	}
	return out, nil
}

// maxParam is the highest $n referenced in sql.
func maxParam(sql string) int { return sqlliteral.Count(sql, sqlliteral.Dollar) }
