package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/sluicedb/sluice/planner/plan"
)

// formatValue renders one value of an engine-typed column as text.
func formatValue(col arrow.Array, i int) (string, bool) {
	if col.IsNull(i) {
		return "NULL", false
	}
	switch c := col.(type) {
	case *array.Int64:
		return strconv.FormatInt(c.Value(i), 10), true
	case *array.Int32:
		return strconv.FormatInt(int64(c.Value(i)), 10), true
	case *array.Float64:
		v := c.Value(i)
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return strconv.FormatFloat(v, 'g', -1, 64), true
		}
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case *array.Decimal64:
		return plan.FormatDecimal(int64(c.Value(i)), int(c.DataType().(*arrow.Decimal64Type).Scale)), true
	case *array.Decimal128:
		return c.Value(i).ToString(c.DataType().(*arrow.Decimal128Type).Scale), true
	case *array.String:
		return c.Value(i), true
	case *array.Date32:
		return plan.FormatDate(int32(c.Value(i))), true
	case *array.Timestamp: // engine timestamps are microseconds
		return plan.FormatTimestamp(int64(c.Value(i))), true
	case *array.Boolean:
		return strconv.FormatBool(c.Value(i)), true
	case *array.List, *array.Map, *array.Struct:
		return nestedText(col, i), true
	}
	return col.ValueStr(i), true
}

// jsonValue returns a value for JSON output: numbers stay numbers
// (decimals as exact strings would lose their type for most users, so they
// are emitted as JSON numbers with the exact digits).
func jsonValue(col arrow.Array, i int) any {
	if col.IsNull(i) {
		return nil
	}
	if isNested(col.DataType()) {
		return nestedJSON(col, i)
	}
	s, _ := formatValue(col, i)
	switch col.(type) {
	case *array.Int64, *array.Int32, *array.Float64, *array.Decimal64, *array.Decimal128:
		return json.Number(s)
	case *array.Boolean:
		return s == "true"
	}
	return s
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// maxTableRows is how many rows table output shows before it elides the
// middle of the result, as the DuckDB CLI does.
const maxTableRows = 40

// jsonKeys returns one key per column in SELECT order; a repeated name gets
// a suffix (_1, _2, ...) that no other column has, so no value is lost.
func jsonKeys(names []string) []string {
	keys := make([]string, len(names))
	taken := make(map[string]bool, len(names))
	for _, n := range names {
		taken[n] = true // a suffixed key never shadows a real column name
	}
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		k := n
		if seen[n] {
			for j := 1; ; j++ {
				k = fmt.Sprintf("%s_%d", n, j)
				if !taken[k] && !seen[k] {
					break
				}
			}
		}
		seen[k] = true
		keys[i] = k
	}
	return keys
}

// sqlTypeName names an Arrow type as SQL does, for the table header.
func sqlTypeName(t arrow.DataType) string {
	if isNested(t) {
		if dt, ok := plan.FromArrow(t); ok {
			return dt.String()
		}
	}
	switch t := t.(type) {
	case *arrow.Int64Type:
		return "bigint"
	case *arrow.Int32Type:
		return "integer"
	case *arrow.Int16Type:
		return "smallint"
	case *arrow.Int8Type:
		return "tinyint"
	case *arrow.Float64Type:
		return "double"
	case *arrow.Float32Type:
		return "float"
	case *arrow.Decimal64Type:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case *arrow.Decimal128Type:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case *arrow.StringType, *arrow.LargeStringType:
		return "varchar"
	case *arrow.Date32Type:
		return "date"
	case *arrow.BooleanType:
		return "boolean"
	case *arrow.TimestampType:
		return "timestamp"
	}
	return t.String()
}

func isNumeric(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		return true
	}
	return false
}

func writeResult(w io.Writer, format string, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(names); err != nil {
			return err
		}
		row := make([]string, len(names))
		for _, rec := range recs {
			for r := 0; r < int(rec.NumRows()); r++ {
				for c := range row {
					v, ok := formatValue(rec.Column(c), r)
					if !ok {
						v = ""
					}
					row[c] = v
				}
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
		cw.Flush()
		return cw.Error()
	case "json":
		// One object per line, keys in SELECT order; duplicate names are
		// disambiguated (n_name, n_name_1, ...), never collapsed.
		keys := jsonKeys(names)
		quoted := make([][]byte, len(keys))
		for i, k := range keys {
			b, err := json.Marshal(k)
			if err != nil {
				return err
			}
			quoted[i] = b
		}
		var buf []byte
		for _, rec := range recs {
			for r := 0; r < int(rec.NumRows()); r++ {
				buf = append(buf[:0], '{')
				for c := range keys {
					if c > 0 {
						buf = append(buf, ',')
					}
					buf = append(buf, quoted[c]...)
					buf = append(buf, ':')
					v, err := json.Marshal(jsonValue(rec.Column(c), r))
					if err != nil {
						return err
					}
					buf = append(buf, v...)
				}
				buf = append(buf, '}', '\n')
				if _, err := w.Write(buf); err != nil {
					return err
				}
			}
		}
		return nil
	case "table", "":
		return writeTable(w, schema, recs)
	}
	return fmt.Errorf("unknown output format %q (want table, csv or json)", format)
}

// writeTable renders a result as a box table: column types under the
// names, numbers right-aligned, the middle of results over maxTableRows
// elided, and the row count last.
func writeTable(w io.Writer, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	ncol := schema.NumFields()
	align := make([]tw.Align, ncol)
	hdr := make([]any, ncol)
	for i, f := range schema.Fields() {
		hdr[i] = f.Name + "\n" + sqlTypeName(f.Type)
		align[i] = tw.AlignLeft
		if isNumeric(f.Type) {
			align[i] = tw.AlignRight
		}
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off))
	t.Header(hdr...)
	var total int64
	for _, rec := range recs {
		total += rec.NumRows()
	}
	head, tail := total, int64(0)
	if total > maxTableRows {
		head, tail = maxTableRows/2, maxTableRows/2
	}
	appendRow := func(rec arrow.RecordBatch, r int) error {
		row := make([]any, ncol)
		for c := 0; c < ncol; c++ {
			row[c], _ = formatValue(rec.Column(c), r)
		}
		return t.Append(row...)
	}
	var at int64
	for _, rec := range recs {
		for r := 0; r < int(rec.NumRows()); r++ {
			if at == head && tail > 0 {
				dots := make([]any, ncol)
				for c := range dots {
					dots[c] = "·"
				}
				for k := 0; k < 3; k++ {
					if err := t.Append(dots...); err != nil {
						return err
					}
				}
			}
			if at < head || at >= total-tail {
				if err := appendRow(rec, r); err != nil {
					return err
				}
			}
			at++
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	noun := "rows"
	if total == 1 {
		noun = "row"
	}
	if tail > 0 {
		_, err := fmt.Fprintf(w, "(%d %s, %d shown)\n", total, noun, head+tail)
		return err
	}
	_, err := fmt.Fprintf(w, "(%d %s)\n", total, noun)
	return err
}
