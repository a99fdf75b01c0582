package kernel

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The key encoding of nested values (LIST, MAP, STRUCT): one byte string
// per value such that two values are equal exactly when their encodings
// are, and order as DuckDB orders them exactly when their encodings do
// (bytewise). Hashing, grouping, DISTINCT, joins, comparisons and sorting
// of nested values all go through it, so they agree with each other.
//
// DuckDB's order of nested values: lists lexicographically by element, a
// list that is a prefix of another first; structs field by field; maps as
// lists of key/value structs; a NULL inside a value equals another NULL
// and sorts after every non-NULL (so DESC, the exact reverse, puts it
// first). A NULL value itself is left to the caller (SQL NULL semantics).
//
// Encoding of a value inside a nested value:
//
//   - NULL: 0x02. Otherwise 0x01 then the payload:
//   - integers, dates, timestamps, Decimal64: the value as int64, big-endian
//     with the sign bit flipped (unsigned integers: as uint64, big-endian);
//   - booleans: one byte 0 or 1;
//   - floats (widened): the IEEE bits, all flipped for negatives and the sign
//     flipped otherwise, with -0 as +0 and every NaN as one NaN (the largest,
//     as in DuckDB);
//   - Decimal128: the high word (sign flipped) then the low word, big-endian;
//   - strings and binaries: the bytes with 0x00 written 0x00 0xFF, then the
//     terminator 0x00 0x00;
//   - lists and maps: 0x01 before each element, then 0x00;
//   - structs: the fields in order.
//
// The top-level value is its payload (no NULL marker).

// AppendKey appends the key encoding of row i of a (not NULL) to dst.
func AppendKey(dst []byte, a arrow.Array, i int) ([]byte, error) {
	switch x := a.(type) {
	case *array.Int64:
		return appendInt(dst, x.Value(i)), nil
	case *array.Int32:
		return appendInt(dst, int64(x.Value(i))), nil
	case *array.Int16:
		return appendInt(dst, int64(x.Value(i))), nil
	case *array.Int8:
		return appendInt(dst, int64(x.Value(i))), nil
	case *array.Uint64:
		return binary.BigEndian.AppendUint64(dst, x.Value(i)), nil
	case *array.Uint32:
		return binary.BigEndian.AppendUint64(dst, uint64(x.Value(i))), nil
	case *array.Uint16:
		return binary.BigEndian.AppendUint64(dst, uint64(x.Value(i))), nil
	case *array.Uint8:
		return binary.BigEndian.AppendUint64(dst, uint64(x.Value(i))), nil
	case *array.Date32:
		return appendInt(dst, int64(x.Value(i))), nil
	case *array.Timestamp:
		return appendInt(dst, int64(x.Value(i))), nil
	case *array.Decimal64:
		return appendInt(dst, int64(x.Value(i))), nil
	case *array.Decimal128:
		return appendDec128(dst, x.Value(i)), nil
	case *array.Float64:
		return appendFloat(dst, x.Value(i)), nil
	case *array.Float32:
		return appendFloat(dst, float64(x.Value(i))), nil
	case *array.Boolean:
		if x.Value(i) {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case *array.String:
		return appendBytes(dst, []byte(x.Value(i))), nil
	case *array.LargeString:
		return appendBytes(dst, []byte(x.Value(i))), nil
	case *array.Binary:
		return appendBytes(dst, x.Value(i)), nil
	case *array.Null:
		return dst, nil
	case *array.List:
		lo, hi := x.ValueOffsets(i)
		return appendElems(dst, x.ListValues(), lo, hi)
	case *array.Map:
		lo, hi := x.ValueOffsets(i)
		return appendElems(dst, x.ListValues(), lo, hi)
	case *array.Struct:
		var err error
		for f := 0; f < x.NumField(); f++ {
			c := x.Field(f) // sliced to x's rows
			if dst, err = appendInner(dst, c, i); err != nil {
				return nil, err
			}
		}
		return dst, nil
	}
	return nil, fmt.Errorf("cannot encode values of type %s as keys", a.DataType())
}

// appendInner appends row i of a with its NULL marker.
func appendInner(dst []byte, a arrow.Array, i int) ([]byte, error) {
	if a.IsNull(i) {
		return append(dst, 2), nil
	}
	return AppendKey(append(dst, 1), a, i)
}

func appendElems(dst []byte, vals arrow.Array, lo, hi int64) ([]byte, error) {
	var err error
	for j := lo; j < hi; j++ {
		if dst, err = appendInner(append(dst, 1), vals, int(j)); err != nil {
			return nil, err
		}
	}
	return append(dst, 0), nil
}

func appendInt(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^1<<63)
}

func appendDec128(dst []byte, v decimal128.Num) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(v.HighBits())^1<<63)
	return binary.BigEndian.AppendUint64(dst, v.LowBits())
}

func appendFloat(dst []byte, f float64) []byte {
	b := floatBits(f)
	if b&(1<<63) != 0 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	return binary.BigEndian.AppendUint64(dst, b)
}

func appendBytes(dst, s []byte) []byte {
	for _, c := range s {
		if c == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, c)
		}
	}
	return append(dst, 0, 0)
}

// IsNested reports whether t is a LIST, MAP or STRUCT.
func IsNested(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.LIST, arrow.MAP, arrow.STRUCT, arrow.LARGE_LIST:
		return true
	}
	return false
}

// EncodeKeys returns a String array (allocated from mem) of the key
// encodings of a's rows: NULL where a is NULL. Equal values get equal
// strings, and strings order (bytewise) as the values do in DuckDB.
func EncodeKeys(mem memory.Allocator, a arrow.Array) (arrow.Array, error) {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(a.Len())
	var buf []byte
	var err error
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			b.AppendNull()
			continue
		}
		if buf, err = AppendKey(buf[:0], a, i); err != nil {
			return nil, err
		}
		b.BinaryBuilder.Append(buf)
	}
	return b.NewArray(), nil
}
