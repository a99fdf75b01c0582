package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// InspectJSON builds a newline-delimited JSON table's catalog entry from
// the .json, .ndjson and .jsonl files under prefix: the columns and their
// types are inferred from the first 256 KiB of the first file (inferJSON)
// and the row count is estimated from the sample's average line length.
func InspectJSON(ctx context.Context, b objstore.Bucket, name, prefix string, noHive bool) (*Table, error) {
	objs, err := ListFiles(ctx, b, prefix, FormatExtensions("json")...)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	t := &Table{Name: name, Format: "json", Location: prefix, JSON: &plan.JSONFormat{}, NoHive: noHive}
	for _, o := range objs {
		t.Files = append(t.Files, layout.File{Key: o.Key, Size: o.Size, ETag: o.ETag, RowGroups: []layout.RowGroup{{Bytes: o.Size}}})
		t.Bytes += o.Size
	}
	if len(t.Files) == 0 {
		return nil, fmt.Errorf("table %s: no .json, .ndjson or .jsonl files under %s", name, prefix)
	}
	first := t.Files[0]
	sample, truncated, expand, err := sampleFile(ctx, b, first)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	cols, raw, avgLine, err := inferJSON(sample, truncated)
	if err != nil {
		return nil, fmt.Errorf("table %s: file %s: %w", name, first.Key, err)
	}
	if err := applyPartitions(t, cols); err != nil {
		return nil, err
	}
	t.JSON.Columns, t.JSON.Raw = cols, raw
	estimateRows(t, avgLine, expand)
	return t, nil
}

// jsonKind is what one key's sampled values are.
type jsonKind int

const (
	jNone   jsonKind = iota // only nulls so far
	jInt                    // integers (fit int64)
	jDouble                 // numbers, some with a fraction or exponent
	jBool
	jDate      // ISO date strings
	jTimestamp // ISO timestamp strings (one separator, ' ' or 'T')
	jString
	jRaw // conflicting kinds, objects or arrays: the JSON text
)

type jsonGuess struct {
	kind  jsonKind
	tsSep byte // the timestamps' date-time separator
}

// observe widens the guess by one value, as DuckDB's read_json_auto does:
// integers and doubles make DOUBLE, dates and timestamps make TIMESTAMP,
// timestamps written two ways make VARCHAR, and other conflicts (or an
// object or array) make DuckDB's JSON type, here the value's JSON text.
func (g *jsonGuess) observe(v any) {
	var k jsonKind
	var sep byte
	switch x := v.(type) {
	case nil:
		return
	case json.Number:
		k = jDouble
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			k = jInt
		}
	case bool:
		k = jBool
	case string:
		k = jString
		switch {
		case dateRE.MatchString(x):
			if _, err := plan.ParseDate(x); err == nil {
				k = jDate
			}
		case tsRE.MatchString(x):
			if _, err := plan.ParseTimestamp(x); err == nil {
				k, sep = jTimestamp, x[10]
			}
		}
	default: // map or slice
		k = jRaw
	}
	switch {
	case g.kind == jNone || g.kind == k:
		if k == jTimestamp && g.tsSep != 0 && g.tsSep != sep {
			k = jString
		}
		g.kind = k
		if sep != 0 {
			g.tsSep = sep
		}
	case g.kind == jRaw || k == jRaw:
		g.kind = jRaw
	case (g.kind == jInt || g.kind == jDouble) && (k == jInt || k == jDouble):
		g.kind = jDouble
	case (g.kind == jDate || g.kind == jTimestamp) && (k == jDate || k == jTimestamp):
		g.kind = jTimestamp
		if sep != 0 && g.tsSep != 0 && sep != g.tsSep {
			g.kind = jString
		}
		if sep != 0 {
			g.tsSep = sep
		}
	case isText(g.kind) && isText(k):
		g.kind = jString // dates, timestamps and other strings
	default:
		g.kind = jRaw
	}
}

func isText(k jsonKind) bool { return k == jString || k == jDate || k == jTimestamp }

// inferJSON reads the sample's lines (one object each, empty lines
// skipped) and returns the columns in the order their keys first appear,
// the columns read as JSON text, and the average line length. A key
// missing from a line is NULL there; a key seen only with null is VARCHAR
// (DuckDB: JSON). Keys that differ only in case are one column, as DuckDB
// matches them.
func inferJSON(sample []byte, truncated bool) ([]plan.Field, map[string]bool, float64, error) {
	sample = bytes.TrimPrefix(sample, []byte("\xef\xbb\xbf"))
	if truncated { // drop the partial last line
		i := bytes.LastIndexByte(sample, '\n')
		if i < 0 {
			return nil, nil, 0, plan.Errorf(plan.CodeBadInput, "line 1: longer than the %d-byte sample", len(sample))
		}
		sample = sample[:i+1]
	}
	var names []string
	byKey := map[string]int{}
	var gs []*jsonGuess
	lines := 0
	for ln, line := range bytes.Split(sample, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		lines++
		if line[0] != '{' {
			return nil, nil, 0, plan.Errorf(plan.CodeBadInput, "line %d: not a JSON object (newline-delimited JSON has one object per line)", ln+1)
		}
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		var obj map[string]any
		if err := d.Decode(&obj); err != nil {
			return nil, nil, 0, plan.Errorf(plan.CodeBadInput, "line %d: invalid JSON: %w", ln+1, err)
		}
		if d.More() {
			return nil, nil, 0, plan.Errorf(plan.CodeBadInput, "line %d: more than one JSON value", ln+1)
		}
		// Keys in the order the line has them (a map has none).
		for _, k := range objectKeys(line) {
			lk := strings.ToLower(k)
			i, ok := byKey[lk]
			if !ok {
				i = len(names)
				byKey[lk] = i
				names = append(names, k)
				gs = append(gs, &jsonGuess{})
			}
			gs[i].observe(obj[k])
		}
	}
	if len(names) == 0 {
		return nil, nil, 0, plan.Errorf(plan.CodeBadInput, "no JSON objects with keys in the first %d bytes", len(sample))
	}
	cols := make([]plan.Field, len(names))
	var raw map[string]bool
	for i, n := range names {
		t := plan.StringType
		switch gs[i].kind {
		case jInt:
			t = plan.Int64Type
		case jDouble:
			t = plan.Float64Type
		case jBool:
			t = plan.BoolType
		case jDate:
			t = plan.DateType
		case jTimestamp:
			t = plan.TimestampType
		case jRaw:
			if raw == nil {
				raw = map[string]bool{}
			}
			raw[n] = true
		}
		cols[i] = plan.Field{Name: n, Type: t, Nullable: true}
	}
	return cols, raw, float64(len(sample)) / float64(lines), nil
}

// objectKeys returns the top-level keys of a JSON object in order.
func objectKeys(obj []byte) []string {
	d := json.NewDecoder(bytes.NewReader(obj))
	d.UseNumber()
	if _, err := d.Token(); err != nil { // {
		return nil
	}
	var keys []string
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return keys
		}
		k, _ := tok.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}
