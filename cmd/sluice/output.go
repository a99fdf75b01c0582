package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/tw"
	"golang.org/x/term"

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
		v, scale := c.Value(i), c.DataType().(*arrow.Decimal128Type).Scale
		if scale >= 0 && v.FitsInPrecision(18) {
			return plan.FormatDecimal(int64(v.LowBits()), int(scale)), true
		}
		return v.ToString(scale), true
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

// writeResult prints a result in format; a table is fitted as defaultFit
// says for w (to the terminal's width when w is one, complete otherwise).
func writeResult(w io.Writer, format string, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	return writeResultFit(w, format, schema, recs, defaultFit(w))
}

// writeResultFit is writeResult with the table fitting given; csv and json
// are never fitted.
func writeResultFit(w io.Writer, format string, schema *arrow.Schema, recs []arrow.RecordBatch, fit tableFit) error {
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	switch format {
	case "csv":
		return writeCSV(w, names, recs)
	case "json":
		return writeJSON(w, names, recs)
	case "table", "":
		return writeTable(w, schema, recs, fit)
	}
	return fmt.Errorf("unknown output format %q (want table, csv or json)", format)
}

// appendText appends the text formatValue gives a non-NULL value of the
// scalar types results mostly hold, without allocating; ok is false for
// the other types, which take formatValue.
func appendText(dst []byte, col arrow.Array, i int) (_ []byte, ok bool) {
	switch c := col.(type) {
	case *array.Int64:
		return strconv.AppendInt(dst, c.Value(i), 10), true
	case *array.Int32:
		return strconv.AppendInt(dst, int64(c.Value(i)), 10), true
	case *array.Float64:
		v := c.Value(i)
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return dst, false
		}
		return strconv.AppendFloat(dst, v, 'f', -1, 64), true
	case *array.Decimal64:
		return plan.AppendDecimal(dst, int64(c.Value(i)), int(c.DataType().(*arrow.Decimal64Type).Scale)), true
	case *array.Decimal128:
		v, scale := c.Value(i), c.DataType().(*arrow.Decimal128Type).Scale
		if scale < 0 || !v.FitsInPrecision(18) {
			return dst, false
		}
		return plan.AppendDecimal(dst, int64(v.LowBits()), int(scale)), true
	case *array.Date32:
		return plan.AppendDate(dst, int32(c.Value(i))), true
	case *array.Timestamp:
		return plan.AppendTimestamp(dst, int64(c.Value(i))), true
	case *array.Boolean:
		return strconv.AppendBool(dst, c.Value(i)), true
	}
	return dst, false
}

// writeCSV prints rows as encoding/csv writes them (comma, LF, a field
// quoted when it holds a comma, quote, CR or LF, starts with a space, or
// is \.), NULL as an empty field, through one buffer: a row costs no
// allocation for the scalar types.
func writeCSV(w io.Writer, names []string, recs []arrow.RecordBatch) error {
	return writeAll(newCSVStream(w, names), recs)
}

// rowStream prints a result batch by batch (csv, json): a caller can
// print a result as it arrives instead of holding it whole.
type rowStream interface {
	write(rec arrow.RecordBatch) error
	// close writes out what is buffered.
	close() error
}

// writeAll writes recs through s and closes it.
func writeAll(s rowStream, recs []arrow.RecordBatch) error {
	for _, rec := range recs {
		if err := s.write(rec); err != nil {
			return err
		}
	}
	return s.close()
}

// newRowStream is the stream of a format that prints batch by batch, nil
// for one that needs all rows first (a table sizes its columns from them).
func newRowStream(w io.Writer, format string, schema *arrow.Schema) (rowStream, error) {
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	switch format {
	case "csv":
		return newCSVStream(w, names), nil
	case "json":
		return newJSONStream(w, names)
	}
	return nil, nil
}

// csvStream is writeCSV batch by batch: the header when made, rows as
// they are written.
type csvStream struct {
	bw  *bufio.Writer
	buf []byte
}

func newCSVStream(w io.Writer, names []string) *csvStream {
	s := &csvStream{bw: bufio.NewWriterSize(w, 64<<10)}
	for i, n := range names {
		if i > 0 {
			s.buf = append(s.buf, ',')
		}
		s.buf = appendCSVField(s.buf, n)
	}
	s.buf = append(s.buf, '\n')
	return s
}

func (s *csvStream) write(rec arrow.RecordBatch) error {
	buf := s.buf
	cols := rec.Columns()
	for r := 0; r < int(rec.NumRows()); r++ {
		for c, col := range cols {
			if c > 0 {
				buf = append(buf, ',')
			}
			if col.IsNull(r) {
				continue
			}
			if str, ok := col.(*array.String); ok {
				buf = appendCSVField(buf, str.Value(r))
				continue
			}
			var ok bool
			if buf, ok = appendText(buf, col, r); !ok { // scalars never need quotes
				v, _ := formatValue(col, r)
				buf = appendCSVField(buf, v)
			}
		}
		buf = append(buf, '\n')
		if len(buf) >= 32<<10 {
			if _, err := s.bw.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	s.buf = buf
	return nil
}

func (s *csvStream) close() error {
	if _, err := s.bw.Write(s.buf); err != nil {
		return err
	}
	s.buf = s.buf[:0]
	return s.bw.Flush()
}

// appendCSVField appends one field as encoding/csv's Writer does.
func appendCSVField(dst []byte, f string) []byte {
	if !csvNeedsQuotes(f) {
		return append(dst, f...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(f); i++ {
		if f[i] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, f[i])
	}
	return append(dst, '"')
}

// csvNeedsQuotes is encoding/csv's fieldNeedsQuotes for the comma.
func csvNeedsQuotes(f string) bool {
	if f == "" {
		return false
	}
	if f == `\.` || strings.ContainsAny(f, ",\"\r\n") {
		return true
	}
	r, _ := utf8.DecodeRuneInString(f)
	return unicode.IsSpace(r)
}

// writeJSON prints one object per line, keys in SELECT order; duplicate
// names are disambiguated (n_name, n_name_1, ...), never collapsed.
// Numbers, booleans, dates and timestamps are written straight into the
// line; strings and nested values go through encoding/json.
func writeJSON(w io.Writer, names []string, recs []arrow.RecordBatch) error {
	s, err := newJSONStream(w, names)
	if err != nil {
		return err
	}
	return writeAll(s, recs)
}

// jsonStream is writeJSON batch by batch.
type jsonStream struct {
	bw     *bufio.Writer
	quoted [][]byte // the keys, as JSON strings
	buf    []byte
}

func newJSONStream(w io.Writer, names []string) (*jsonStream, error) {
	keys := jsonKeys(names)
	quoted := make([][]byte, len(keys))
	for i, k := range keys {
		b, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		quoted[i] = b
	}
	return &jsonStream{bw: bufio.NewWriterSize(w, 64<<10), quoted: quoted}, nil
}

func (s *jsonStream) write(rec arrow.RecordBatch) error {
	buf := s.buf
	cols := rec.Columns()
	for r := 0; r < int(rec.NumRows()); r++ {
		buf = append(buf, '{')
		for c, col := range cols {
			if c > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, s.quoted[c]...)
			buf = append(buf, ':')
			if col.IsNull(r) {
				buf = append(buf, "null"...)
				continue
			}
			switch col := col.(type) {
			case *array.String:
				buf = appendJSONString(buf, col.Value(r))
				continue
			case *array.Date32, *array.Timestamp: // digits, '-', ':', ' ', '.': nothing to escape
				buf = append(buf, '"')
				buf, _ = appendText(buf, col, r)
				buf = append(buf, '"')
				continue
			}
			var ok bool
			if buf, ok = appendText(buf, col, r); ok {
				continue
			}
			v, err := json.Marshal(jsonValue(col, r))
			if err != nil {
				return err
			}
			buf = append(buf, v...)
		}
		buf = append(buf, '}', '\n')
		if len(buf) >= 32<<10 {
			if _, err := s.bw.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	s.buf = buf
	return nil
}

func (s *jsonStream) close() error {
	if _, err := s.bw.Write(s.buf); err != nil {
		return err
	}
	s.buf = s.buf[:0]
	return s.bw.Flush()
}

// appendJSONString appends s as encoding/json's Marshal writes a string:
// quotes, backslash escapes for \b \f \n \r \t, \u00XX for the other
// control characters and for < > & (HTML-safe), \ufffd for invalid UTF-8,
// and \u2028 \u2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// tableFit says how a table is fitted to the screen.
type tableFit struct {
	// maxWidth is the widest line a table may print, 0 for no limit. Past
	// it, long values are cut with "…" and then middle columns are hidden
	// behind one "…" column, as the DuckDB CLI does.
	maxWidth int
	// maxRows is how many rows a table shows before it elides the middle
	// of the result, 0 for all.
	maxRows int
}

// defaultTermWidth is the width used for a terminal whose size cannot be
// read and where COLUMNS is not set.
const defaultTermWidth = 120

// defaultFit is the fitting for output to w: the terminal's width when w
// is a terminal, no width limit otherwise (piped output stays complete),
// and maxTableRows rows either way.
func defaultFit(w io.Writer) tableFit {
	return tableFit{maxWidth: terminalWidth(w), maxRows: maxTableRows}
}

// terminalWidth is the width of w when it is a terminal (from the
// terminal, else COLUMNS, else defaultTermWidth), 0 when it is not one.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
		return cols
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return defaultTermWidth
}

// writeTable renders a result as a box table: column types under the
// names, numbers right-aligned, the middle of results over fit.maxRows
// elided, values and columns fitted to fit.maxWidth, and the row count
// last.
func writeTable(w io.Writer, schema *arrow.Schema, recs []arrow.RecordBatch, fit tableFit) error {
	ncol := schema.NumFields()
	names := make([]string, ncol)
	types := make([]string, ncol)
	numeric := make([]bool, ncol)
	for i, f := range schema.Fields() {
		names[i], types[i], numeric[i] = f.Name, sqlTypeName(f.Type), isNumeric(f.Type)
	}
	var total int64
	for _, rec := range recs {
		total += rec.NumRows()
	}
	head, tail := total, int64(0)
	if fit.maxRows > 0 && total > int64(fit.maxRows) {
		head, tail = int64(fit.maxRows/2), int64(fit.maxRows-fit.maxRows/2)
	}
	var rows [][]string
	var at int64
	for _, rec := range recs {
		for r := 0; r < int(rec.NumRows()); r++ {
			if at == head && tail > 0 {
				for k := 0; k < 3; k++ {
					rows = append(rows, dotsRow(ncol))
				}
			}
			if at < head || at >= total-tail {
				row := make([]string, ncol)
				for c := range row {
					row[c], _ = formatValue(rec.Column(c), r)
				}
				rows = append(rows, row)
			}
			at++
		}
	}
	ft := fitTable(names, types, numeric, rows, fit.maxWidth)
	align := make([]tw.Align, len(ft.names))
	hdr := make([]any, len(ft.names))
	for i := range ft.names {
		hdr[i] = ft.names[i] + "\n" + ft.types[i]
		align[i] = tw.AlignLeft
		if ft.numeric[i] {
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
	for _, row := range ft.rows {
		cells := make([]any, len(row))
		for i, v := range row {
			cells[i] = v
		}
		if err := t.Append(cells...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, tableFooter(total, head+tail, ncol, ft.hidden))
	return err
}

func dotsRow(n int) []string {
	dots := make([]string, n)
	for c := range dots {
		dots[c] = "·"
	}
	return dots
}

// tableFooter is the line under a table: the row count, how many rows
// were shown when some were elided, and how many columns were hidden.
func tableFooter(total, shown int64, ncol, hidden int) string {
	noun := "rows"
	if total == 1 {
		noun = "row"
	}
	s := fmt.Sprintf("(%d %s", total, noun)
	if shown < total {
		s += fmt.Sprintf(", %d shown", shown)
	}
	if hidden > 0 {
		s += fmt.Sprintf("; %d of %d columns hidden, .maxwidth 0 shows all", hidden, ncol)
	}
	return s + ")"
}

// maxCellWidth is the width a value is first cut to when a table is wider
// than its limit (DuckDB's box renderer uses 20 too); columns grow back
// towards their full width while room is left.
const maxCellWidth = 20

// fittedTable is a table cut to a width by fitTable.
type fittedTable struct {
	names, types []string
	numeric      []bool
	rows         [][]string
	hidden       int // columns left out, shown as one "…" column
}

// fitTable fits a table to maxWidth display columns (0: no limit) as
// drawn by writeTable, whose line is the column widths plus 3 per column
// plus 1. When the table is too wide, every column is first cut to
// maxCellWidth; if that is still too wide, columns are kept from both ends
// (first, last, second, second last, ...; a side stops at its first
// column that does not fit) and the middle ones are replaced by one "…"
// column; then the space left grows the cut
// columns back, left to right. A cut value ends with "…". A fitted value
// shows newlines and tabs as \n and \t so that a row stays one line.
func fitTable(names, types []string, numeric []bool, rows [][]string, maxWidth int) fittedTable {
	ft := fittedTable{names: names, types: types, numeric: numeric, rows: rows}
	ncol := len(names)
	if maxWidth <= 0 || ncol == 0 {
		return ft
	}
	const border = 3 // "│ " before a value and " " after it; one more "│" ends the line
	col := func(c int) []string {
		cells := []string{names[c], types[c]}
		for _, r := range rows {
			cells = append(cells, r[c])
		}
		return cells
	}
	full := make([]int, ncol)
	for c := range full {
		for _, v := range col(c) {
			full[c] = max(full[c], cellWidth(v, maxWidth))
		}
	}
	lineWidth := func(ws []int) int {
		n := 1
		for _, w := range ws {
			n += w + border
		}
		return n
	}
	if lineWidth(full) <= maxWidth {
		if !needsEscape(rows) {
			return ft
		}
		return cutTable(ft, seq(ncol), full)
	}
	capped := make([]int, ncol)
	for c := range capped {
		capped[c] = min(full[c], maxCellWidth)
	}
	keep := seq(ncol)
	if lineWidth(capped) > maxWidth {
		// Keep columns from both ends, alternately, while they fit beside
		// a "…" column; a side whose next column does not fit is done.
		used := 1 + 1 + border // the line's end and the "…" column
		var left, right []int
		l, r := 0, ncol-1
		leftDone, rightDone := false, false
		for turn := 0; l <= r && !(leftDone && rightDone); turn++ {
			fromLeft := turn%2 == 0
			if (fromLeft && leftDone) || (!fromLeft && rightDone) {
				continue
			}
			c := r
			if fromLeft {
				c = l
			}
			if used+capped[c]+border > maxWidth && len(left)+len(right) > 0 {
				if fromLeft {
					leftDone = true
				} else {
					rightDone = true
				}
				continue
			}
			used += capped[c] + border
			if fromLeft {
				left = append(left, c)
				l++
			} else {
				right = append([]int{c}, right...)
				r--
			}
		}
		keep = left
		if ft.hidden = ncol - len(left) - len(right); ft.hidden > 0 {
			keep = append(append(left, -1), right...)
		}
	}
	widths := make([]int, len(keep))
	for i, c := range keep {
		if c < 0 {
			widths[i] = 1
		} else {
			widths[i] = capped[c]
		}
	}
	// Grow cut columns back while room is left; shrink the only column
	// when even it alone is too wide.
	room := maxWidth - lineWidth(widths)
	for i, c := range keep {
		if c < 0 {
			continue
		}
		if room < 0 {
			widths[i] = max(1, widths[i]+room)
			room = 0
		}
		grow := min(full[c]-widths[i], room)
		widths[i] += grow
		room -= grow
	}
	return cutTable(ft, keep, widths)
}

// cutTable keeps the columns keep (-1 is the "…" column) of ft, each cut
// to its width.
func cutTable(ft fittedTable, keep, widths []int) fittedTable {
	out := fittedTable{hidden: ft.hidden}
	for i, c := range keep {
		if c < 0 {
			out.names = append(out.names, "…")
			out.types = append(out.types, "")
			out.numeric = append(out.numeric, false)
			continue
		}
		out.names = append(out.names, cutValue(ft.names[c], widths[i]))
		out.types = append(out.types, cutValue(ft.types[c], widths[i]))
		out.numeric = append(out.numeric, ft.numeric[c])
	}
	for _, r := range ft.rows {
		row := make([]string, len(keep))
		for i, c := range keep {
			if c < 0 {
				row[i] = "…"
				if r[0] == "·" {
					row[i] = "·"
				}
				continue
			}
			row[i] = cutValue(r[c], widths[i])
		}
		out.rows = append(out.rows, row)
	}
	return out
}

// escapeCell shows the characters that would break a row's line.
var escapeCell = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)

func needsEscape(rows [][]string) bool {
	for _, r := range rows {
		for _, v := range r {
			if strings.ContainsAny(v, "\n\r\t") {
				return true
			}
		}
	}
	return false
}

// clip bounds s to a prefix long enough to fill width display columns,
// so that a 1 MB value is never measured or escaped whole.
func clip(s string, width int) string {
	limit := 4*width + 8
	if len(s) <= limit {
		return s
	}
	i := limit
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…" // a tail that keeps the clipped value wider than width
}

// cellWidth is the display width of v once escaped, at most limit+1.
func cellWidth(v string, limit int) int {
	return min(twwidth.Width(escapeCell.Replace(clip(v, limit))), limit+1)
}

// cutValue escapes v and cuts it to width display columns, ending a cut
// value with "…".
func cutValue(v string, width int) string {
	v = escapeCell.Replace(clip(v, width))
	if twwidth.Width(v) <= width {
		return v
	}
	return twwidth.Truncate(v, width-1) + "…"
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
