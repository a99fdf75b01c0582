package exec

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/sluicedb/sluice/planner/plan"
)

// jsonWriter writes newline-delimited JSON: one object per row, its keys
// the column names in column order (duplicates kept, as DuckDB writes
// them), NULL as null. Numbers are JSON numbers (decimals exact, in their
// scale), dates "2006-01-02", timestamps "2006-01-02 15:04:05.999999",
// the floats NaN and ±Inf the strings "NaN", "Infinity", "-Infinity" (as
// Postgres's to_json), other values their text.
type jsonWriter struct {
	w   *bufio.Writer
	c   io.Closer
	buf []byte
}

func (j *jsonWriter) Write(rec arrow.RecordBatch) error {
	names := make([][]byte, rec.NumCols())
	for i, f := range rec.Schema().Fields() {
		names[i] = appendJSONString(nil, f.Name)
	}
	for r := 0; r < int(rec.NumRows()); r++ {
		b := append(j.buf[:0], '{')
		for c, col := range rec.Columns() {
			if c > 0 {
				b = append(b, ',')
			}
			b = append(append(b, names[c]...), ':')
			var err error
			if b, err = appendJSONValue(b, col, r); err != nil {
				return fmt.Errorf("write json: column %s: %w", rec.Schema().Field(c).Name, err)
			}
		}
		b = append(b, '}', '\n')
		j.buf = b
		if _, err := j.w.Write(b); err != nil {
			return fmt.Errorf("write json: %w", err)
		}
	}
	return nil
}

func (j *jsonWriter) Close() error {
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	if err := j.c.Close(); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// appendJSONValue appends row i of a as a JSON value.
func appendJSONValue(b []byte, a arrow.Array, i int) ([]byte, error) {
	if a.IsNull(i) {
		return append(b, "null"...), nil
	}
	switch a := a.(type) {
	case *array.Int64:
		return strconv.AppendInt(b, a.Value(i), 10), nil
	case *array.Int32:
		return strconv.AppendInt(b, int64(a.Value(i)), 10), nil
	case *array.Float64:
		f := a.Value(i)
		switch {
		case math.IsNaN(f):
			return append(b, `"NaN"`...), nil
		case math.IsInf(f, 1):
			return append(b, `"Infinity"`...), nil
		case math.IsInf(f, -1):
			return append(b, `"-Infinity"`...), nil
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64), nil
	case *array.Decimal64:
		if scale := a.DataType().(*arrow.Decimal64Type).Scale; scale >= 0 {
			return plan.AppendDecimal(b, int64(a.Value(i)), int(scale)), nil
		}
		return append(b, a.Value(i).ToString(a.DataType().(*arrow.Decimal64Type).Scale)...), nil
	case *array.Decimal128:
		v, scale := a.Value(i), a.DataType().(*arrow.Decimal128Type).Scale
		if scale >= 0 && v.FitsInPrecision(18) {
			return plan.AppendDecimal(b, int64(v.LowBits()), int(scale)), nil
		}
		return append(b, v.ToString(scale)...), nil
	case *array.Boolean:
		return strconv.AppendBool(b, a.Value(i)), nil
	case *array.String:
		return appendJSONString(b, a.Value(i)), nil
	case *array.Date32:
		return appendJSONString(b, a.Value(i).ToTime().Format(time.DateOnly)), nil
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return appendJSONString(b, a.Value(i).ToTime(unit).UTC().Format("2006-01-02 15:04:05.999999")), nil
	}
	return appendJSONString(b, a.ValueStr(i)), nil
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s { // invalid bytes come as utf8.RuneError (U+FFFD)
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r < 0x20 || r == 0x2028 || r == 0x2029:
			b = append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}
