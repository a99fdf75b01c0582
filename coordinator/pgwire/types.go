package pgwire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sluicedb/sluice/planner/plan"
)

// Postgres type OIDs of the types sluice has (pg_type.oid).
const (
	oidBool        = 16
	oidInt8        = 20
	oidInt4        = 23
	oidText        = 25
	oidOID         = 26
	oidFloat8      = 701
	oidVarchar     = 1043
	oidDate        = 1082
	oidTimestamp   = 1114
	oidTimestampTZ = 1184
	oidInterval    = 1186
	oidNumeric     = 1700
	oidName        = 19
	oidChar        = 18
)

// pgType is the Postgres type an Arrow column is sent as.
type pgType struct {
	OID    uint32
	Size   int16 // pg_type.typlen: -1 for variable length
	Mod    int32 // type modifier: numeric precision and scale, else -1
	Name   string
	binary bool // a binary encoding is implemented
}

// typeOf maps an Arrow type of a sluice result to its Postgres type.
// Types sluice never produces fall back to text (their Arrow string form).
func typeOf(t arrow.DataType) pgType {
	switch tt := t.(type) {
	case *arrow.BooleanType:
		return pgType{OID: oidBool, Size: 1, Mod: -1, Name: "boolean", binary: true}
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type:
		return pgType{OID: oidInt8, Size: 8, Mod: -1, Name: "bigint", binary: true}
	case *arrow.Float32Type, *arrow.Float64Type:
		return pgType{OID: oidFloat8, Size: 8, Mod: -1, Name: "double precision", binary: true}
	case *arrow.Decimal64Type:
		return numericType(tt.Precision, tt.Scale)
	case *arrow.Decimal128Type:
		return numericType(tt.Precision, tt.Scale)
	case *arrow.StringType, *arrow.LargeStringType:
		return pgType{OID: oidText, Size: -1, Mod: -1, Name: "text", binary: true}
	case *arrow.Date32Type:
		return pgType{OID: oidDate, Size: 4, Mod: -1, Name: "date", binary: true}
	case *arrow.TimestampType:
		return pgType{OID: oidTimestamp, Size: 8, Mod: -1, Name: "timestamp without time zone", binary: true}
	}
	if nt, ok := nestedType(t); ok {
		return nt
	}
	return pgType{OID: oidText, Size: -1, Mod: -1, Name: "text"}
}

func numericType(p, s int32) pgType {
	return pgType{OID: oidNumeric, Size: -1, Mod: (p<<16 | s) + 4, Name: fmt.Sprintf("numeric(%d,%d)", p, s), binary: true}
}

// fields describes schema as a RowDescription; formats are the client's
// result format codes (none: all text; one: for every column).
func fields(schema *arrow.Schema, formats []int16) []pgproto3.FieldDescription {
	out := make([]pgproto3.FieldDescription, schema.NumFields())
	for i, f := range schema.Fields() {
		t := typeOf(f.Type)
		out[i] = pgproto3.FieldDescription{Name: []byte(f.Name), DataTypeOID: t.OID, DataTypeSize: t.Size,
			TypeModifier: t.Mod, Format: formatOf(formats, i, t)}
	}
	return out
}

// formatOf is the format of column i: binary only when asked for and
// implemented for its type.
func formatOf(formats []int16, i int, t pgType) int16 {
	f := int16(0)
	switch {
	case len(formats) == 1:
		f = formats[0]
	case i < len(formats):
		f = formats[i]
	}
	if f == 1 && t.binary {
		return 1
	}
	return 0
}

// pgEpoch is 2000-01-01, the epoch of Postgres dates and timestamps.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

const pgEpochDays = 10957 // days from 1970-01-01 to 2000-01-01

// appendValue encodes row i of col in format (0 text, 1 binary) to buf;
// the caller has checked that it is not null.
func appendValue(buf []byte, col arrow.Array, i int, format int16) []byte {
	bin := format == 1
	switch a := col.(type) {
	case *array.Boolean:
		if bin {
			if a.Value(i) {
				return append(buf, 1)
			}
			return append(buf, 0)
		}
		if a.Value(i) {
			return append(buf, 't')
		}
		return append(buf, 'f')
	case *array.Int64:
		return appendInt(buf, a.Value(i), bin)
	case *array.Int32:
		return appendInt(buf, int64(a.Value(i)), bin)
	case *array.Int16:
		return appendInt(buf, int64(a.Value(i)), bin)
	case *array.Int8:
		return appendInt(buf, int64(a.Value(i)), bin)
	case *array.Uint32:
		return appendInt(buf, int64(a.Value(i)), bin)
	case *array.Uint16:
		return appendInt(buf, int64(a.Value(i)), bin)
	case *array.Uint8:
		return appendInt(buf, int64(a.Value(i)), bin)
	case *array.Float64:
		return appendFloat(buf, a.Value(i), bin)
	case *array.Float32:
		return appendFloat(buf, float64(a.Value(i)), bin)
	case *array.String:
		return append(buf, a.Value(i)...)
	case *array.LargeString:
		return append(buf, a.Value(i)...)
	case *array.Decimal64:
		scale := a.DataType().(*arrow.Decimal64Type).Scale
		if scale < 0 {
			return appendDecimalText(buf, a.Value(i).ToString(scale), bin)
		}
		if bin {
			var tmp [48]byte
			return appendNumeric(buf, plan.AppendDecimal(tmp[:0], int64(a.Value(i)), int(scale)))
		}
		return plan.AppendDecimal(buf, int64(a.Value(i)), int(scale))
	case *array.Decimal128:
		v, scale := a.Value(i), a.DataType().(*arrow.Decimal128Type).Scale
		if scale < 0 || !v.FitsInPrecision(18) {
			return appendDecimalText(buf, v.ToString(scale), bin)
		}
		if bin {
			var tmp [48]byte
			return appendNumeric(buf, plan.AppendDecimal(tmp[:0], int64(v.LowBits()), int(scale)))
		}
		return plan.AppendDecimal(buf, int64(v.LowBits()), int(scale))
	case *array.Date32:
		d := int32(a.Value(i))
		if bin {
			return binary.BigEndian.AppendUint32(buf, uint32(d-pgEpochDays))
		}
		if d >= minFastDate && d <= maxFastDate {
			return plan.AppendDate(buf, d)
		}
		return appendDate(buf, time.Unix(int64(d)*86400, 0).UTC())
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		us := toMicros(int64(a.Value(i)), unit)
		if bin {
			return binary.BigEndian.AppendUint64(buf, uint64(us-pgEpoch.UnixMicro()))
		}
		return appendTimestamp(buf, time.UnixMicro(us).UTC())
	case *array.List:
		if bin {
			return appendArrayBinary(buf, a, i)
		}
		return appendNested(buf, col, i)
	case *array.Map, *array.Struct:
		return appendNested(buf, col, i)
	}
	return append(buf, col.ValueStr(i)...)
}

func toMicros(v int64, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		return v * 1e6
	case arrow.Millisecond:
		return v * 1e3
	case arrow.Nanosecond:
		return v / 1e3
	}
	return v
}

func appendInt(buf []byte, v int64, bin bool) []byte {
	if bin {
		return binary.BigEndian.AppendUint64(buf, uint64(v))
	}
	return strconv.AppendInt(buf, v, 10)
}

// appendFloat writes a float8 as Postgres does with extra_float_digits 1
// (the default since Postgres 12): the shortest text that reads back
// exactly, in exponent form outside [1e-4, 1e15).
func appendFloat(buf []byte, f float64, bin bool) []byte {
	if bin {
		return binary.BigEndian.AppendUint64(buf, math.Float64bits(f))
	}
	switch {
	case math.IsNaN(f):
		return append(buf, "NaN"...)
	case math.IsInf(f, 1):
		return append(buf, "Infinity"...)
	case math.IsInf(f, -1):
		return append(buf, "-Infinity"...)
	}
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e15) {
		return strconv.AppendFloat(buf, f, 'g', -1, 64)
	}
	return strconv.AppendFloat(buf, f, 'f', -1, 64)
}

func appendDate(buf []byte, t time.Time) []byte {
	if t.Year() <= 0 {
		return append(buf, fmt.Sprintf("%04d-%02d-%02d BC", 1-t.Year(), t.Month(), t.Day())...)
	}
	return t.AppendFormat(buf, "2006-01-02")
}

func appendTimestamp(buf []byte, t time.Time) []byte {
	return t.AppendFormat(buf, "2006-01-02 15:04:05.999999")
}

// appendDecimalText writes a decimal's text, or its binary numeric form.
func appendDecimalText(buf []byte, s string, bin bool) []byte {
	if bin {
		return appendNumeric(buf, []byte(s))
	}
	return append(buf, s...)
}

// The dates plan.AppendDate prints as appendDate does: years 1 to 9999
// (appendDate writes BC years its own way).
const (
	minFastDate = -719162 // 0001-01-01
	maxFastDate = 2932896 // 9999-12-31
)

// appendNumeric writes a decimal's text (-?digits[.digits]) in the binary
// numeric format: ndigits, weight, sign, dscale, then base-10000 digits.
// The text is read as if its integer part were padded on the left and its
// fraction on the right to whole groups of four digits; nothing is
// allocated.
func appendNumeric(buf []byte, s []byte) []byte {
	sign := uint16(0)
	if len(s) > 0 && s[0] == '-' {
		sign, s = 0x4000, s[1:]
	}
	intPart, frac := s, s[:0]
	if dot := bytes.IndexByte(s, '.'); dot >= 0 {
		intPart, frac = s[:dot], s[dot+1:]
	}
	dscale := len(frac)
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	padL := (4 - len(intPart)%4) % 4
	padR := (4 - len(frac)%4) % 4
	groups := (padL + len(intPart) + len(frac) + padR) / 4
	digitAt := func(k int) int {
		switch {
		case k < padL:
			return 0
		case k < padL+len(intPart):
			return int(intPart[k-padL] - '0')
		case k < padL+len(intPart)+len(frac):
			return int(frac[k-padL-len(intPart)] - '0')
		}
		return 0
	}
	group := func(g int) uint16 {
		k := 4 * g
		return uint16(digitAt(k)*1000 + digitAt(k+1)*100 + digitAt(k+2)*10 + digitAt(k+3))
	}
	weight := (padL+len(intPart))/4 - 1
	// Strip leading and trailing zero groups (the weight follows the
	// leading ones).
	first, last := 0, groups
	for first < last && group(first) == 0 {
		first, weight = first+1, weight-1
	}
	for last > first && group(last-1) == 0 {
		last--
	}
	if first == last {
		weight, sign = 0, 0
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(last-first))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, uint16(dscale))
	for g := first; g < last; g++ {
		buf = binary.BigEndian.AppendUint16(buf, group(g))
	}
	return buf
}

// paramOID is the type OID a parameter of engine type t is described
// with; 0 (unknown) for a parameter no context types.
func paramOID(t plan.DataType) uint32 {
	switch t.ID {
	case plan.Bool:
		return oidBool
	case plan.Int64:
		return oidInt8
	case plan.Float64:
		return oidFloat8
	case plan.Decimal:
		return oidNumeric
	case plan.String:
		return oidText
	case plan.Date:
		return oidDate
	case plan.Timestamp:
		return oidTimestamp
	}
	return 0
}
