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
	s, _ := formatValue(col, i)
	switch col.(type) {
	case *array.Int64, *array.Int32, *array.Float64, *array.Decimal64, *array.Decimal128:
		return json.Number(s)
	case *array.Boolean:
		return s == "true"
	}
	return s
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
		enc := json.NewEncoder(w)
		for _, rec := range recs {
			for r := 0; r < int(rec.NumRows()); r++ {
				obj := make(map[string]any, len(names))
				for c, n := range names {
					obj[n] = jsonValue(rec.Column(c), r)
				}
				if err := enc.Encode(obj); err != nil {
					return err
				}
			}
		}
		return nil
	case "table", "":
		t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithHeaderAlignment(tw.AlignLeft))
		hdr := make([]any, len(names))
		for i, n := range names {
			hdr[i] = n
		}
		t.Header(hdr...)
		n := 0
		for _, rec := range recs {
			for r := 0; r < int(rec.NumRows()); r++ {
				row := make([]any, len(names))
				for c := range names {
					row[c], _ = formatValue(rec.Column(c), r)
				}
				if err := t.Append(row...); err != nil {
					return err
				}
				n++
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "(%d rows)\n", n)
		return err
	}
	return fmt.Errorf("unknown output format %q (want table, csv or json)", format)
}
