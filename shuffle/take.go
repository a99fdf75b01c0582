package shuffle

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
)

// appender copies rows idx of src to the end of dst. One is chosen per
// column type up front, so the per-row work is a typed loop.
type appender func(src arrow.Array, idx []int32, dst array.Builder)

type valuesArray[T any] interface {
	arrow.Array
	Values() []T
}

type unsafeBuilder[T any] interface {
	array.Builder
	UnsafeAppend(T)
	UnsafeAppendBoolToBitmap(bool)
}

func appendFixed[T any, A valuesArray[T], B unsafeBuilder[T]](src arrow.Array, idx []int32, dst array.Builder) {
	a, b := src.(A), dst.(B)
	vals := a.Values()
	b.Reserve(len(idx))
	if a.NullN() == 0 {
		for _, i := range idx {
			b.UnsafeAppend(vals[i])
		}
		return
	}
	for _, i := range idx {
		if a.IsNull(int(i)) {
			b.UnsafeAppendBoolToBitmap(false)
		} else {
			b.UnsafeAppend(vals[i])
		}
	}
}

func appendBool(src arrow.Array, idx []int32, dst array.Builder) {
	a, b := src.(*array.Boolean), dst.(*array.BooleanBuilder)
	b.Reserve(len(idx))
	for _, i := range idx {
		if a.IsNull(int(i)) {
			b.UnsafeAppendBoolToBitmap(false)
		} else {
			b.UnsafeAppend(a.Value(int(i)))
		}
	}
}

func appendString(src arrow.Array, idx []int32, dst array.Builder) {
	a, b := src.(*array.String), dst.(*array.StringBuilder)
	offs := a.ValueOffsets()
	total := 0
	for _, i := range idx {
		total += int(offs[i+1] - offs[i])
	}
	b.Reserve(len(idx))
	b.ReserveData(total)
	hasNulls := a.NullN() > 0
	for _, i := range idx {
		if hasNulls && a.IsNull(int(i)) {
			b.AppendNull()
		} else {
			b.Append(a.Value(int(i)))
		}
	}
}

func appendLargeString(src arrow.Array, idx []int32, dst array.Builder) {
	a, b := src.(*array.LargeString), dst.(*array.LargeStringBuilder)
	b.Reserve(len(idx))
	for _, i := range idx {
		if a.IsNull(int(i)) {
			b.AppendNull()
		} else {
			b.Append(a.Value(int(i)))
		}
	}
}

func appendBinary(src arrow.Array, idx []int32, dst array.Builder) {
	a, b := src.(*array.Binary), dst.(*array.BinaryBuilder)
	b.Reserve(len(idx))
	for _, i := range idx {
		if a.IsNull(int(i)) {
			b.AppendNull()
		} else {
			b.Append(a.Value(int(i)))
		}
	}
}

func appendNull(_ arrow.Array, idx []int32, dst array.Builder) {
	dst.AppendNulls(len(idx))
}

// appenderFor returns the appender for columns of type t.
func appenderFor(t arrow.DataType) (appender, error) {
	switch t.ID() {
	case arrow.BOOL:
		return appendBool, nil
	case arrow.INT8:
		return appendFixed[int8, *array.Int8, *array.Int8Builder], nil
	case arrow.INT16:
		return appendFixed[int16, *array.Int16, *array.Int16Builder], nil
	case arrow.INT32:
		return appendFixed[int32, *array.Int32, *array.Int32Builder], nil
	case arrow.INT64:
		return appendFixed[int64, *array.Int64, *array.Int64Builder], nil
	case arrow.UINT8:
		return appendFixed[uint8, *array.Uint8, *array.Uint8Builder], nil
	case arrow.UINT16:
		return appendFixed[uint16, *array.Uint16, *array.Uint16Builder], nil
	case arrow.UINT32:
		return appendFixed[uint32, *array.Uint32, *array.Uint32Builder], nil
	case arrow.UINT64:
		return appendFixed[uint64, *array.Uint64, *array.Uint64Builder], nil
	case arrow.FLOAT32:
		return appendFixed[float32, *array.Float32, *array.Float32Builder], nil
	case arrow.FLOAT64:
		return appendFixed[float64, *array.Float64, *array.Float64Builder], nil
	case arrow.DATE32:
		return appendFixed[arrow.Date32, *array.Date32, *array.Date32Builder], nil
	case arrow.DATE64:
		return appendFixed[arrow.Date64, *array.Date64, *array.Date64Builder], nil
	case arrow.TIMESTAMP:
		return appendFixed[arrow.Timestamp, *array.Timestamp, *array.TimestampBuilder], nil
	case arrow.DECIMAL64:
		return appendFixed[decimal.Decimal64, *array.Decimal64, *array.Decimal64Builder], nil
	case arrow.DECIMAL128:
		return appendFixed[decimal.Decimal128, *array.Decimal128, *array.Decimal128Builder], nil
	case arrow.STRING:
		return appendString, nil
	case arrow.LARGE_STRING:
		return appendLargeString, nil
	case arrow.BINARY:
		return appendBinary, nil
	case arrow.NULL:
		return appendNull, nil
	}
	return nil, fmt.Errorf("shuffle: unsupported column type %s", t)
}
