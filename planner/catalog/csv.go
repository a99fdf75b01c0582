package catalog

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

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
	t := &Table{Name: strings.ToLower(name), Format: "csv", Location: prefix,
		CSV: &plan.CSVFormat{Header: opts.Header, Delimiter: string(opts.Delimiter)}}
	for _, o := range objs {
		t.Files = append(t.Files, layout.File{Key: o.Key, Size: o.Size,
			RowGroups: []layout.RowGroup{{Bytes: o.Size}}})
		t.Bytes += o.Size
	}
	if len(t.Files) == 0 {
		return nil, fmt.Errorf("table %s: no .csv files under %s", name, prefix)
	}
	first := t.Files[0]
	n := min(first.Size, sampleBytes)
	sample, err := b.GetRange(ctx, first.Key, 0, n)
	if err != nil {
		return nil, fmt.Errorf("table %s: read %s: %w", name, first.Key, err)
	}
	cols, lines, avgLine, err := inferCSV(sample, n < first.Size, opts)
	if err != nil {
		return nil, fmt.Errorf("table %s: %s: %w", name, first.Key, err)
	}
	t.Schema = opts.Schema
	if err := applyPartitions(t, cols); err != nil {
		return nil, err
	}
	t.CSV.Columns = cols
	if t.Schema != nil {
		t.CSV.Columns = fileColumns(t)
	}
	if avgLine > 0 {
		t.Rows = int64(float64(t.Bytes) / avgLine)
		for i := range t.Files {
			t.Files[i].RowGroups[0].Rows = int64(float64(t.Files[i].Size) / avgLine)
		}
	}
	_ = lines
	return t, nil
}

var (
	intRE   = regexp.MustCompile(`^[-+]?[0-9]{1,18}$`)
	decRE   = regexp.MustCompile(`^[-+]?[0-9]*\.([0-9]+)$`)
	dateRE  = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
)

// inferCSV reads the sample and returns the columns, the number of data
// lines read and their average length in bytes.
func inferCSV(sample []byte, truncated bool, opts CSVOptions) ([]plan.Field, int, float64, error) {
	if truncated { // drop the partial last line
		if i := strings.LastIndexByte(string(sample), '\n'); i >= 0 {
			sample = sample[:i+1]
		}
	}
	r := csv.NewReader(strings.NewReader(string(sample)))
	r.Comma = opts.Delimiter
	r.FieldsPerRecord = -1
	var names []string
	if opts.Header {
		h, err := r.Read()
		if err != nil {
			return nil, 0, 0, fmt.Errorf("read header: %w", err)
		}
		for _, n := range h {
			names = append(names, strings.ToLower(strings.TrimSpace(n)))
		}
	}
	headerEnd, _ := r.FieldPos(0)
	_ = headerEnd
	type guess struct {
		isInt, isDec, isFloat, isDate, isBool bool
		scale, digits                         int
		seen                                  bool
	}
	var gs []*guess
	lines := 0
	start := r.InputOffset()
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, 0, fmt.Errorf("line %d: %w", lines+2, err)
		}
		lines++
		for len(gs) < len(rec) {
			gs = append(gs, &guess{isInt: true, isDec: true, isFloat: true, isDate: true, isBool: true})
		}
		for i, v := range rec {
			v = strings.TrimSpace(v)
			if v == "" {
				continue
			}
			g := gs[i]
			g.seen = true
			if !intRE.MatchString(v) {
				g.isInt = false
			}
			if m := decRE.FindStringSubmatch(v); m != nil {
				g.scale = max(g.scale, len(m[1]))
				g.digits = max(g.digits, len(strings.TrimLeft(strings.Trim(v, "+-"), "0"))-1)
			} else if !intRE.MatchString(v) {
				g.isDec = false
			} else {
				g.digits = max(g.digits, len(strings.TrimLeft(v, "+-")))
			}
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				g.isFloat = false
			}
			if !dateRE.MatchString(v) {
				g.isDate = false
			} else if _, err := plan.ParseDate(v); err != nil {
				g.isDate = false
			}
			if lv := strings.ToLower(v); lv != "true" && lv != "false" {
				g.isBool = false
			}
		}
	}
	avg := 0.0
	if lines > 0 {
		avg = float64(r.InputOffset()-start) / float64(lines)
	}
	if opts.Schema != nil {
		return opts.Schema, lines, avg, nil
	}
	if names == nil {
		for i := range gs {
			names = append(names, fmt.Sprintf("column%d", i))
		}
	}
	cols := make([]plan.Field, len(names))
	for i, n := range names {
		if !identRE.MatchString(n) {
			return nil, 0, 0, fmt.Errorf("column name %q in the header is not a plain identifier; give --schema", n)
		}
		t := plan.StringType
		if i < len(gs) && gs[i].seen {
			g := gs[i]
			switch {
			case g.isInt:
				t = plan.Int64Type
			case g.isDec && g.digits+g.scale <= plan.MaxDecimal64Precision && g.scale <= 6:
				t = plan.DecimalType(plan.MaxDecimal64Precision, g.scale)
			case g.isFloat:
				t = plan.Float64Type
			case g.isDate:
				t = plan.DateType
			case g.isBool:
				t = plan.BoolType
			}
		}
		cols[i] = plan.Field{Name: n, Type: t, Nullable: true}
	}
	return cols, lines, avg, nil
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
		t, err := parseType(strings.ToLower(strings.Join(f[1:], "")))
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

var decTypeRE = regexp.MustCompile(`^(?:decimal|numeric)\((\d+),(\d+)\)$`)

func parseType(t string) (plan.DataType, error) {
	switch t {
	case "bigint", "int", "integer", "int64", "int32", "smallint", "tinyint":
		return plan.Int64Type, nil
	case "double", "float", "float64", "real", "doubleprecision":
		return plan.Float64Type, nil
	case "varchar", "text", "string", "char":
		return plan.StringType, nil
	case "date":
		return plan.DateType, nil
	case "bool", "boolean":
		return plan.BoolType, nil
	}
	if strings.HasPrefix(t, "varchar(") || strings.HasPrefix(t, "char(") {
		return plan.StringType, nil
	}
	if m := decTypeRE.FindStringSubmatch(t); m != nil {
		p, _ := strconv.Atoi(m[1])
		s, _ := strconv.Atoi(m[2])
		if p > plan.MaxDecimal64Precision || s > p { // the CSV reader parses into the int64 layout
			return plan.DataType{}, fmt.Errorf("decimal(%d,%d) not supported (precision at most 18, scale at most precision)", p, s)
		}
		return plan.DecimalType(p, s), nil
	}
	return plan.DataType{}, fmt.Errorf("unknown type %q", t)
}
