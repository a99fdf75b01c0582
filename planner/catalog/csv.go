package catalog

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// CSVOptions say how to read a CSV table.
type CSVOptions struct {
	// Schema, when set, names and types every column in file order, and
	// may name hive partition keys too (their declared types win; they are
	// not file columns); otherwise names come from the header and types
	// are inferred from a sample of the first file.
	Schema    []plan.Field
	Header    bool
	Delimiter rune
	// Quote and Escape (0: '"', and the quote doubled), Null (the text of
	// NULL, "" by default), QuotedNotNull, Skip, NullPadding and
	// IgnoreErrors are the dialect (plan.CSVFormat).
	Quote, Escape rune
	Null          string
	QuotedNotNull bool
	Skip          int
	NullPadding   bool
	IgnoreErrors  bool
	// AllVarchar reads every column as VARCHAR (no type inference).
	AllVarchar bool
	// Types override the inferred types of the columns they name
	// (types={'a': 'VARCHAR'}); names match regardless of case.
	Types []plan.Field
	// DateFormat, when set, is the format of every DATE column
	// (DayFirst or MonthFirst, any of '/', '-', '.'): sampled values in
	// that form make the column a DATE.
	DateFormat string
	// NoHivePartitions reads key=value folders as plain folders
	// (hive_partitioning=false).
	NoHivePartitions bool
	// Compression is auto (or ""), gzip, zstd or none: the files'
	// extensions must agree (they name the codec the scan uses).
	Compression string
}

// sampleBytes is how much of the first file type inference reads.
const sampleBytes = 256 << 10

// InspectCSV builds a CSV table's catalog entry from the .csv files under
// prefix. Row counts are estimated from the sample's average line length.
func InspectCSV(ctx context.Context, b objstore.Bucket, name, prefix string, opts CSVOptions) (*Table, error) {
	objs, err := ListFiles(ctx, b, prefix, ".csv")
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	if opts.Delimiter == 0 {
		opts.Delimiter = ','
	}
	t := &Table{Name: name, Format: "csv", Location: prefix, CSV: opts.csvFormat(), NoHive: opts.NoHivePartitions}
	for _, o := range objs {
		if err := checkCompression(opts.Compression, o.Key); err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		t.Files = append(t.Files, layout.File{Key: o.Key, Size: o.Size, ETag: o.ETag,
			RowGroups: []layout.RowGroup{{Bytes: o.Size}}})
		t.Bytes += o.Size
	}
	if len(t.Files) == 0 {
		return nil, fmt.Errorf("table %s: no .csv files under %s", name, prefix)
	}
	first := t.Files[0]
	sample, truncated, expand, err := sampleFile(ctx, b, first)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	cols, formats, _, avgLine, err := inferCSV(sample, truncated, opts)
	if err != nil {
		return nil, fmt.Errorf("table %s: file %s: %w", name, first.Key, err)
	}
	t.CSV.DateFormats = formats
	if opts.AllVarchar && opts.Schema == nil {
		for i := range cols {
			cols[i].Type = plan.StringType
		}
		t.CSV.DateFormats = nil
	}
	for _, o := range opts.Types {
		i := slices.IndexFunc(cols, func(c plan.Field) bool { return strings.EqualFold(c.Name, o.Name) })
		if i < 0 {
			names := make([]string, len(cols))
			for j, c := range cols {
				names[j] = c.Name
			}
			return nil, badOption("table %s: CSV option types names column %q, which the file has not (columns: %s)", name, o.Name, strings.Join(names, ", "))
		}
		if cols[i].Type != o.Type {
			cols[i].Type = o.Type
			if o.Type.ID != plan.Date {
				delete(t.CSV.DateFormats, cols[i].Name)
			}
		}
	}
	t.Schema = opts.Schema
	if err := applyPartitions(t, cols); err != nil {
		return nil, err
	}
	t.CSV.Columns = cols
	if t.Schema != nil {
		t.CSV.Columns = fileColumns(t)
	}
	estimateRows(t, avgLine, expand)
	return t, nil
}

// checkCompression checks a compression option against a file's name,
// whose extension names the codec the scan reads it with.
func checkCompression(opt, key string) error {
	got := "none"
	switch objstore.CompressionOf(key) {
	case objstore.Gzip:
		got = "gzip"
	case objstore.Zstd:
		got = "zstd"
	}
	if opt == "" || opt == "auto" || opt == got {
		return nil
	}
	return badOption("CSV option compression %s: file %s is %s by its name (the codec is taken from the extension: .gz, .zst)", opt, key, got)
}

// estimateRows sets a text table's row counts from the sample's average
// line length and the stored bytes (times expand, the sample's
// uncompressed bytes per stored byte, for compressed files): estimates,
// and marked so.
func estimateRows(t *Table, avgLine, expand float64) {
	if avgLine <= 0 {
		return
	}
	t.RowsEstimated = true
	t.Rows = 0
	for i := range t.Files {
		f := &t.Files[i]
		scale := 1.0
		if objstore.CompressionOf(f.Key) != objstore.Uncompressed {
			scale = expand
		}
		f.RowGroups[0].Rows = int64(float64(f.Size) * scale / avgLine)
		t.Rows += f.RowGroups[0].Rows
	}
}

// sampleFile reads the first sampleBytes of a text file, decompressed
// when its key names a codec. truncated: the file holds more. expand is
// the uncompressed bytes per stored byte of what was read (1 for an
// uncompressed file), for row estimates.
func sampleFile(ctx context.Context, b objstore.Bucket, f layout.File) (sample []byte, truncated bool, expand float64, err error) {
	codec := objstore.CompressionOf(f.Key)
	if codec == objstore.Uncompressed {
		n := min(f.Size, sampleBytes)
		sample, err := b.GetRange(ctx, f.Key, 0, n)
		if err != nil {
			return nil, false, 0, fmt.Errorf("read %s: %w", f.Key, err)
		}
		return sample, n < f.Size, 1, nil
	}
	// Compressed: read stored bytes until sampleBytes decompressed, in
	// steps (text compresses 3-10x), never more than the file.
	var stored int64 = 64 << 10
	for {
		n := min(f.Size, stored)
		raw, err := b.GetRange(ctx, f.Key, 0, n)
		if err != nil {
			return nil, false, 0, fmt.Errorf("read %s: %w", f.Key, err)
		}
		zr, err := objstore.Decompress(codec, bytes.NewReader(raw))
		if err != nil {
			return nil, false, 0, fmt.Errorf("file %s: not %s data: %w", f.Key, codec, err)
		}
		out, rerr := io.ReadAll(io.LimitReader(zr, sampleBytes+1))
		zr.Close()
		switch {
		case len(out) > sampleBytes:
			return out[:sampleBytes], true, float64(len(out)) / float64(n), nil
		case rerr == nil && n == f.Size:
			return out, false, float64(len(out)) / float64(max(n, 1)), nil
		case rerr != nil && n == f.Size:
			return nil, false, 0, fmt.Errorf("file %s: corrupt %s data: %w", f.Key, codec, rerr)
		}
		// The stored bytes ran out (an unexpected EOF) before the sample
		// was full: read more.
		stored *= 4
	}
}

var (
	intRE   = regexp.MustCompile(`^[-+]?[0-9]{1,18}$`)
	decRE   = regexp.MustCompile(`^[-+]?[0-9]*\.([0-9]+)$`)
	dateRE  = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	tsRE    = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?$`)
	dmyRE   = regexp.MustCompile(`^([0-9]{1,2})([/.-])([0-9]{1,2})([/.-])([0-9]{4})$`)
	identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
)

// The date formats of CSV columns (plan.CSVFormat.DateFormats): day
// first or month first, as DuckDB's sniffer names them.
const (
	DayFirst   = "%d/%m/%Y"
	MonthFirst = "%m/%d/%Y"
)

// csvGuess collects what a column's sampled values could all be.
type csvGuess struct {
	isInt, isDec, isFloat, isDate, isTS, isBool bool
	dmy, mdy                                    bool // every value is a d/m/y (m/d/y) date
	sep                                         byte // separator of the d/m/y dates
	scale, digits                               int
	seen                                        bool
}

func newGuess() *csvGuess {
	return &csvGuess{isInt: true, isDec: true, isFloat: true, isDate: true, isTS: true, isBool: true, dmy: true, mdy: true}
}

// observe narrows the guess by one non-empty value (spaces trimmed).
func (g *csvGuess) observe(v string) {
	g.seen = true
	lead0 := len(strings.TrimLeft(v, "+-")) > 1 && strings.TrimLeft(v, "+-")[0] == '0'
	if !intRE.MatchString(v) || lead0 { // DuckDB: 007 is text
		g.isInt = false
	}
	if m := decRE.FindStringSubmatch(v); m != nil {
		g.scale = max(g.scale, len(m[1]))
		g.digits = max(g.digits, len(strings.TrimLeft(strings.Trim(v, "+-"), "0"))-1)
		if ip, _, _ := strings.Cut(strings.TrimLeft(v, "+-"), "."); len(ip) > 1 && ip[0] == '0' {
			g.isDec, g.isFloat = false, false
		}
	} else if !intRE.MatchString(v) || lead0 {
		g.isDec = false
	} else {
		g.digits = max(g.digits, len(strings.TrimLeft(v, "+-")))
	}
	if _, err := strconv.ParseFloat(v, 64); err != nil || lead0 || strings.ContainsAny(v, "xXpP_") || isSpecialFloat(v) {
		g.isFloat = false
	}
	isDate := dateRE.MatchString(v)
	if isDate {
		if _, err := plan.ParseDate(v); err != nil {
			isDate = false
		}
	}
	if !isDate {
		g.isDate = false
	}
	if !isDate && !tsRE.MatchString(v) {
		g.isTS = false
	} else if !isDate {
		if _, err := plan.ParseTimestamp(v); err != nil {
			g.isTS = false
		}
	}
	if m := dmyRE.FindStringSubmatch(v); m == nil || m[2] != m[4] || (g.sep != 0 && g.sep != m[2][0]) {
		g.dmy, g.mdy = false, false
	} else {
		g.sep = m[2][0]
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[3])
		y, _ := strconv.Atoi(m[5])
		if !validDate(y, b, a) {
			g.dmy = false
		}
		if !validDate(y, a, b) {
			g.mdy = false
		}
	}
	switch strings.ToLower(v) {
	case "true", "false", "t", "f", "yes", "no":
	default:
		g.isBool = false
	}
}

func isSpecialFloat(v string) bool {
	switch strings.ToLower(strings.TrimLeft(v, "+-")) {
	case "inf", "infinity", "nan":
		return true
	}
	return false
}

func validDate(y, m, d int) bool {
	if m < 1 || m > 12 || d < 1 {
		return false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	return t.Day() == d
}

// typ is the column's inferred type and, for dates not in ISO form, their
// format (DayFirst or MonthFirst with the sampled separator). The order
// follows DuckDB's sniffer: BIGINT, then DECIMAL (DuckDB: DOUBLE; sluice
// keeps fixed-point decimals exact), DOUBLE, DATE, TIMESTAMP, BOOLEAN,
// VARCHAR. Ambiguous d/m/y dates are read day first, as DuckDB does.
func (g *csvGuess) typ() (plan.DataType, string) {
	if !g.seen {
		return plan.StringType, ""
	}
	switch {
	case g.isInt:
		return plan.Int64Type, ""
	case g.isDec && g.digits+g.scale <= plan.MaxDecimal64Precision && g.scale <= 6:
		return plan.DecimalType(plan.MaxDecimal64Precision, g.scale), ""
	case g.isFloat:
		return plan.Float64Type, ""
	case g.isDate:
		return plan.DateType, ""
	case g.isTS:
		return plan.TimestampType, ""
	case g.dmy:
		return plan.DateType, strings.ReplaceAll(DayFirst, "/", string(g.sep))
	case g.mdy:
		return plan.DateType, strings.ReplaceAll(MonthFirst, "/", string(g.sep))
	case g.isBool:
		return plan.BoolType, ""
	}
	return plan.StringType, ""
}

// headerNames returns the header's column names as written (surrounding
// spaces trimmed): an empty name becomes column<i> and a name equal to an
// earlier one regardless of case gets a suffix _1, _2, ... (as DuckDB).
func headerNames(h []string) []string {
	out := make([]string, len(h))
	seen := map[string]bool{}
	for i, n := range h {
		n = strings.TrimSpace(n)
		if n == "" {
			n = fmt.Sprintf("column%d", i)
		}
		base := n
		for k := 1; seen[strings.ToLower(n)]; k++ {
			n = fmt.Sprintf("%s_%d", base, k)
		}
		seen[strings.ToLower(n)] = true
		out[i] = n
	}
	return out
}

// inferCSV reads the sample and returns the columns, their date formats
// (by column name, for dates not in ISO form), the number of data lines
// read and their average length in bytes.
func inferCSV(sample []byte, truncated bool, opts CSVOptions) ([]plan.Field, map[string]string, int, float64, error) {
	sample = bytes.TrimPrefix(sample, []byte("\xef\xbb\xbf")) // UTF-8 byte order mark
	if truncated {                                            // drop the partial last line
		if i := bytes.LastIndexByte(sample, '\n'); i >= 0 {
			sample = sample[:i+1]
		}
	}
	for i := 0; i < opts.Skip; i++ {
		if j := bytes.IndexByte(sample, '\n'); j >= 0 {
			sample = sample[j+1:]
		} else {
			sample = nil
		}
	}
	var read func() ([]string, error)
	var offset func() int64
	if q := opts.quote(); q == '"' && (opts.Escape == 0 || opts.Escape == '"') {
		r := csv.NewReader(bytes.NewReader(sample))
		r.Comma = opts.Delimiter
		r.FieldsPerRecord = -1
		read = func() ([]string, error) {
			rec, err := r.Read()
			var pe *csv.ParseError
			if err != nil && err != io.EOF && errors.As(err, &pe) {
				err = fmt.Errorf("line %d, column %d: %w", pe.Line+opts.Skip, pe.Column, err)
			}
			return rec, err
		}
		offset = r.InputOffset
	} else {
		d := &dialectReader{data: sample, delim: byte(opts.Delimiter), quote: byte(q), escape: byte(opts.Escape)}
		if d.escape == 0 {
			d.escape = d.quote
		}
		read, offset = d.read, func() int64 { return int64(d.pos) }
	}
	var names []string
	if opts.Header {
		h, err := read()
		if err != nil {
			return nil, nil, 0, 0, plan.Errorf(plan.CodeBadInput, "read header: %w", err)
		}
		names = headerNames(h)
	}
	var gs []*csvGuess
	lines := 0
	start := offset()
	for {
		rec, err := read()
		if err == io.EOF {
			break
		}
		if err != nil {
			if truncated && lines > 0 { // a quoted field may span the cut
				break
			}
			if opts.IgnoreErrors {
				continue
			}
			return nil, nil, 0, 0, plan.Errorf(plan.CodeBadInput, "%w", err)
		}
		lines++
		for len(gs) < len(rec) {
			gs = append(gs, newGuess())
		}
		for i, v := range rec {
			// A value equal to the NULL text says nothing of the type; so
			// is an empty one when that is the NULL text (else it is a
			// string, as DuckDB's sniffer takes it).
			if v = strings.TrimSpace(v); v != opts.Null {
				gs[i].observe(v)
			}
		}
	}
	avg := 0.0
	if lines > 0 {
		avg = float64(offset()-start) / float64(lines)
	}
	if opts.Schema != nil {
		return opts.Schema, nil, lines, avg, nil
	}
	if names == nil {
		for i := range gs {
			names = append(names, fmt.Sprintf("column%d", i))
		}
	}
	cols := make([]plan.Field, len(names))
	var formats map[string]string
	for i, n := range names {
		t := plan.StringType
		if i < len(gs) {
			var f string
			t, f = gs[i].typ()
			if opts.DateFormat != "" && (t.ID == plan.String || f != "") && gs[i].dateIn(opts.DateFormat) {
				t, f = plan.DateType, opts.DateFormat
			}
			if f != "" {
				if formats == nil {
					formats = map[string]string{}
				}
				formats[n] = f
			}
		}
		cols[i] = plan.Field{Name: n, Type: t, Nullable: true}
	}
	return cols, formats, lines, avg, nil
}

// ParseSchema parses "name type, name type, ..." with SQL type names
// (bigint, integer, double, decimal(p,s), varchar, text, date, boolean).
func ParseSchema(s string) ([]plan.Field, error) {
	var out []plan.Field
	for _, part := range splitTopLevel(s) {
		f := strings.Fields(strings.TrimSpace(part))
		if len(f) < 2 {
			return nil, fmt.Errorf("schema column %q: want NAME TYPE", strings.TrimSpace(part))
		}
		name := strings.ToLower(f[0])
		if !identRE.MatchString(name) {
			return nil, fmt.Errorf("schema column name %q is not a plain identifier", f[0])
		}
		text := strings.TrimSpace(strings.TrimSpace(part)[len(f[0]):])
		var t plan.DataType
		var err error
		if nestedTypeText(text) {
			t, err = parseNestedType(text)
		} else {
			t, err = parseType(strings.ToLower(strings.Join(f[1:], "")))
		}
		if err != nil {
			return nil, fmt.Errorf("schema column %s: %w", name, err)
		}
		out = append(out, plan.Field{Name: name, Type: t, Nullable: true})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty schema")
	}
	return out, nil
}

// nestedTypeText reports whether a column list's type is DuckDB's
// spelling of a nested type: T[], STRUCT(...), ROW(...) or MAP(...).
func nestedTypeText(t string) bool {
	l := strings.ToLower(t)
	if strings.HasSuffix(l, "]") {
		return true
	}
	for _, p := range []string{"struct", "row", "map"} {
		if rest, ok := strings.CutPrefix(l, p); ok && strings.HasPrefix(strings.TrimSpace(rest), "(") {
			return true
		}
	}
	return false
}

// parseNestedType parses a nested column type with the type parser of
// casts (plan.ParseNestedType), the whole text.
func parseNestedType(text string) (plan.DataType, error) {
	t, n, err := plan.ParseNestedType(text)
	if err != nil {
		return plan.DataType{}, err
	}
	if strings.TrimSpace(text[n:]) != "" {
		return plan.DataType{}, fmt.Errorf("unexpected %q after type %s", strings.TrimSpace(text[n:]), t)
	}
	return t, nil
}

func splitTopLevel(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// parseType parses a schema column's type with the one SQL type-name
// parser (plan.ParseTypeName); decimals are kept to the int64 layout the
// CSV reader parses into.
func parseType(t string) (plan.DataType, error) {
	dt, err := plan.ParseTypeName(t)
	if err != nil {
		return plan.DataType{}, err
	}
	if dt.Wide() {
		return plan.DataType{}, fmt.Errorf("decimal(%d,%d) not supported (precision at most 18, scale at most precision)", dt.Precision, dt.Scale)
	}
	return dt, nil
}

// dateIn reports whether every sampled value is a date in format (a
// dateformat option: DayFirst or MonthFirst with any separator).
func (g *csvGuess) dateIn(format string) bool {
	if strings.HasPrefix(format, "%d") {
		return g.dmy && g.sep == format[2]
	}
	return g.mdy && g.sep == format[2]
}

// dialectReader splits a CSV sample into records with a quote and an
// escape character other than '"' (encoding/csv reads only that one).
type dialectReader struct {
	data                 []byte
	pos                  int
	line                 int
	delim, quote, escape byte
}

func (d *dialectReader) read() ([]string, error) {
	for d.pos < len(d.data) && (d.data[d.pos] == '\n' || d.data[d.pos] == '\r') {
		if d.data[d.pos] == '\n' {
			d.line++
		}
		d.pos++ // empty lines
	}
	if d.pos >= len(d.data) {
		return nil, io.EOF
	}
	var rec []string
	var f []byte
	quoted := false
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		d.pos++
		switch {
		case quoted && c == d.escape && d.pos < len(d.data) && (d.data[d.pos] == d.quote || d.data[d.pos] == d.escape) && (d.escape != d.quote || d.data[d.pos] == d.quote):
			f = append(f, d.data[d.pos])
			d.pos++
		case quoted && c == d.quote:
			quoted = false
		case quoted:
			if c == '\n' {
				d.line++
			}
			f = append(f, c)
		case c == d.quote:
			quoted = true
		case c == d.delim:
			rec, f = append(rec, string(f)), nil
		case c == '\n' || c == '\r':
			if c == '\r' && d.pos < len(d.data) && d.data[d.pos] == '\n' {
				d.pos++
			}
			d.line++
			return append(rec, string(f)), nil
		default:
			f = append(f, c)
		}
	}
	if quoted {
		return nil, fmt.Errorf("line %d: quoted field not terminated", d.line+1)
	}
	return append(rec, string(f)), nil
}
