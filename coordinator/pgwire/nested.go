package pgwire

import (
	"encoding/binary"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Nested result columns on the wire, always in text format:
//
//   - a LIST of a scalar type is a Postgres array of that type's array
//     OID (bigint[] 1016, text[] 1009, ...) in array text, {1,2,NULL},
//     or Postgres's binary array format; a list of lists of a scalar
//     type (at any depth) is an array of the same OID in Postgres's
//     multi-dimensional text form, {{1,2},{3},NULL} (text only: the binary
//     form holds only rectangular arrays, and lists need not be);
//   - a list of structs or maps is sent as text in array form, each
//     element quoted;
//   - a STRUCT is text in Postgres's composite (record) form, (1,abc,);
//   - a MAP is text as DuckDB prints maps, {k=v, k2=NULL}.

// arrayOIDs are the array types of the scalar element types.
var arrayOIDs = map[uint32]uint32{oidBool: 1000, oidInt8: 1016, oidText: 1009, oidFloat8: 1022, oidDate: 1182, oidTimestamp: 1115, oidNumeric: 1231}

// nestedType is the Postgres type of a nested column (ok false: t is not
// nested).
func nestedType(t arrow.DataType) (pgType, bool) {
	switch tt := t.(type) {
	case *arrow.ListType:
		if e := typeOf(tt.Elem()); e.OID != 0 {
			if oid, ok := arrayOIDs[e.OID]; ok && e.binary {
				return pgType{OID: oid, Size: -1, Mod: -1, Name: e.Name + "[]", binary: true}, true
			}
		}
		if e, ok := multiDimElem(tt); ok {
			return pgType{OID: arrayOIDs[e.OID], Size: -1, Mod: -1, Name: e.Name + "[]"}, true
		}
		return pgType{OID: oidText, Size: -1, Mod: -1, Name: "text"}, true
	case *arrow.StructType, *arrow.MapType:
		return pgType{OID: oidText, Size: -1, Mod: -1, Name: "text"}, true
	}
	return pgType{}, false
}

// multiDimElem reports whether t is a list of lists (at any depth) of a
// scalar type with an array type, and returns that scalar type.
func multiDimElem(t *arrow.ListType) (pgType, bool) {
	inner, ok := t.Elem().(*arrow.ListType)
	if !ok {
		return pgType{}, false
	}
	for {
		next, ok := inner.Elem().(*arrow.ListType)
		if !ok {
			break
		}
		inner = next
	}
	e := typeOf(inner.Elem())
	if _, ok := arrayOIDs[e.OID]; !ok || e.OID == 0 || !e.binary {
		return pgType{}, false
	}
	return e, true
}

// appendArrayBinary appends row i of a list of a scalar type in
// Postgres's binary array format: dimensions, a has-NULLs flag, the
// element OID, the length and lower bound (1), then each element as its
// length (-1: NULL) and binary value.
func appendArrayBinary(buf []byte, a *array.List, i int) []byte {
	lo, hi := a.ValueOffsets(i)
	vals := a.ListValues()
	ndim, hasNull := uint32(1), uint32(0)
	if hi == lo {
		ndim = 0
	}
	for j := lo; j < hi; j++ {
		if vals.IsNull(int(j)) {
			hasNull = 1
		}
	}
	buf = binary.BigEndian.AppendUint32(buf, ndim)
	buf = binary.BigEndian.AppendUint32(buf, hasNull)
	buf = binary.BigEndian.AppendUint32(buf, typeOf(vals.DataType()).OID)
	if ndim == 0 {
		return buf
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(hi-lo))
	buf = binary.BigEndian.AppendUint32(buf, 1)
	for j := lo; j < hi; j++ {
		if vals.IsNull(int(j)) {
			buf = binary.BigEndian.AppendUint32(buf, 0xffffffff)
			continue
		}
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		buf = appendValue(buf, vals, int(j), 1)
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	return buf
}

// appendNested appends the text form of row i of a nested column.
func appendNested(buf []byte, col arrow.Array, i int) []byte {
	switch a := col.(type) {
	case *array.Map:
		lo, hi := a.ValueOffsets(i)
		buf = append(buf, '{')
		for j := lo; j < hi; j++ {
			if j > lo {
				buf = append(buf, ", "...)
			}
			buf = appendElem(buf, a.Keys(), int(j), "NULL", nil)
			buf = append(buf, '=')
			buf = appendElem(buf, a.Items(), int(j), "NULL", nil)
		}
		return append(buf, '}')
	case *array.List:
		lo, hi := a.ValueOffsets(i)
		_, multi := multiDimElem(a.DataType().(*arrow.ListType))
		buf = append(buf, '{')
		for j := lo; j < hi; j++ {
			if j > lo {
				buf = append(buf, ',')
			}
			if multi {
				// A sub-array: in its own braces, unquoted.
				buf = appendElem(buf, a.ListValues(), int(j), "NULL", nil)
				continue
			}
			buf = appendElem(buf, a.ListValues(), int(j), "NULL", arrayQuote)
		}
		return append(buf, '}')
	case *array.Struct:
		buf = append(buf, '(')
		for f := 0; f < a.NumField(); f++ {
			if f > 0 {
				buf = append(buf, ',')
			}
			buf = appendElem(buf, a.Field(f), i, "", recordQuote)
		}
		return append(buf, ')')
	}
	return append(buf, col.ValueStr(i)...)
}

// appendElem appends element j of a nested value: null as the given
// text, a nested element in its own form (quoted as text), a scalar in
// its text format, quoted by quote when it needs it.
func appendElem(buf []byte, c arrow.Array, j int, null string, quote func([]byte, string) []byte) []byte {
	if c.IsNull(j) {
		return append(buf, null...)
	}
	var s []byte
	if _, ok := nestedType(c.DataType()); ok {
		s = appendNested(nil, c, j)
	} else {
		s = appendValue(nil, c, j, 0)
	}
	if quote == nil {
		return append(buf, s...)
	}
	return quote(buf, string(s))
}

// arrayQuote quotes an array element as Postgres's array_out does: when it
// is empty, NULL, or holds a brace, comma, quote, backslash or space.
func arrayQuote(buf []byte, s string) []byte {
	if s != "" && !strings.EqualFold(s, "NULL") && !strings.ContainsAny(s, "{},\"\\ \t\n\r\v\f") {
		return append(buf, s...)
	}
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			buf = append(buf, '\\')
		}
		buf = append(buf, s[i])
	}
	return append(buf, '"')
}

// recordQuote quotes a composite field as Postgres's record_out does:
// when it is empty or holds a parenthesis, comma, quote, backslash or
// space; quotes and backslashes inside are doubled.
func recordQuote(buf []byte, s string) []byte {
	if s != "" && !strings.ContainsAny(s, "(),\"\\ \t\n\r\v\f") {
		return append(buf, s...)
	}
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			buf = append(buf, s[i])
		}
		buf = append(buf, s[i])
	}
	return append(buf, '"')
}
