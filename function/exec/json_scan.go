package exec

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/sluicedb/sluice/planner/plan"
)

// JSONScan reads one newline-delimited JSON file (n.Scan.JSON): one
// object per line, empty lines skipped, and emits the columns
// n.Scan.Columns in batches of BatchRows rows. A key is matched exactly,
// then regardless of case; a missing key or null is NULL. Values convert
// as DuckDB's read_json reads them: numbers into BIGINT (integers only)
// or DOUBLE, true/false into BOOLEAN, ISO strings into DATE or TIMESTAMP,
// strings into VARCHAR (a number or boolean in a VARCHAR column is its
// JSON text); a Raw column (plan.JSONFormat.Raw) holds every value's
// compact JSON text, as DuckDB's JSON type. A line that is not an object,
// or a value its column's type cannot hold, fails the scan with
// plan.CodeBadInput naming the file, line and column. Lines are read as
// they stream in; a line may be at most 64 MiB.
type JSONScan struct {
	n      *plan.Node
	schema *arrow.Schema
	opts   Options
	name   string
	r      io.Reader
	sc     *bufio.Scanner

	cols   []jsonCol // one per output column
	line   int64
	done   bool
	closed bool
	obj    map[string]json.RawMessage
}

type jsonCol struct {
	name string // as the format names it
	t    plan.DataType
	raw  bool
}

// jsonMaxLine bounds one line (one object).
const jsonMaxLine = 64 << 20

// NewJSONScan opens a scan of the newline-delimited JSON file r for the
// scan node n (Format "json", n.Scan.JSON set). Errors name the file by
// r's Name() when it has one, else by the table. Close closes r when it is
// an io.Closer.
func NewJSONScan(ctx context.Context, r io.Reader, n *plan.Node, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	if n == nil || n.Scan == nil {
		return nil, fmt.Errorf("exec: json scan: node has no scan description")
	}
	f := n.Scan.JSON
	if f == nil {
		return nil, fmt.Errorf("exec: json scan of %s: no JSON format", n.Scan.Table)
	}
	if len(n.Schema) != len(n.Scan.Columns) {
		return nil, fmt.Errorf("exec: json scan of %s: %d columns for a schema of %d fields", n.Scan.Table, len(n.Scan.Columns), len(n.Schema))
	}
	s := &JSONScan{n: n, schema: n.Schema.Arrow(), opts: opts, name: n.Scan.Table, r: r}
	if nm, ok := r.(interface{ Name() string }); ok && nm.Name() != "" {
		s.name = nm.Name()
	}
	for i, name := range n.Scan.Columns {
		idx := -1
		for j, c := range f.Columns {
			if c.Name == name {
				idx = j
				break
			}
		}
		if idx < 0 {
			for j, c := range f.Columns {
				if strings.EqualFold(c.Name, name) {
					idx = j
					break
				}
			}
		}
		if idx < 0 {
			return nil, fmt.Errorf("exec: json scan of %s: column %q is not in the JSON format", s.name, name)
		}
		c := jsonCol{name: f.Columns[idx].Name, t: n.Schema[i].Type, raw: f.Raw[f.Columns[idx].Name]}
		switch c.t.ID {
		case plan.Int64, plan.Float64, plan.Bool, plan.String, plan.Date, plan.Timestamp:
		default:
			return nil, fmt.Errorf("exec: json scan of %s: column %q has type %s", s.name, name, c.t)
		}
		s.cols = append(s.cols, c)
	}
	s.sc = bufio.NewScanner(r)
	s.sc.Buffer(make([]byte, 0, 64<<10), jsonMaxLine)
	return s, nil
}

func (s *JSONScan) Schema() *arrow.Schema { return s.schema }

func (s *JSONScan) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if c, ok := s.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (s *JSONScan) badf(col string, format string, args ...any) error {
	where := fmt.Sprintf("line %d", s.line)
	if col != "" {
		where += fmt.Sprintf(", column %q", col)
	}
	return plan.Errorf(plan.CodeBadInput, "json scan of %s: %s: %s", s.name, where, fmt.Sprintf(format, args...))
}

// readErrOr returns the error that ended the input, when one did, else
// bad. A read that fails part way (a truncated compressed file) hands the
// scanner its last, partial line as a token before the error: the line is
// bad because the read failed, and the read's error names the cause.
func (s *JSONScan) readErrOr(bad error) error {
	if s.sc.Scan() {
		return bad // not the last line: the input went on
	}
	if err := s.sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("exec: json scan of %s: read: %w", s.name, err)
	}
	return bad
}

func (s *JSONScan) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.done || s.closed {
		return nil, io.EOF
	}
	b := array.NewRecordBuilder(s.opts.Mem, s.schema)
	defer b.Release()
	rows := 0
	for rows < s.opts.BatchRows {
		if !s.sc.Scan() {
			if err := s.sc.Err(); err != nil {
				if errors.Is(err, bufio.ErrTooLong) {
					return nil, s.badf("", "a line longer than %d bytes", jsonMaxLine)
				}
				return nil, fmt.Errorf("exec: json scan of %s: read: %w", s.name, err)
			}
			s.done = true
			break
		}
		s.line++
		line := bytes.TrimSpace(s.sc.Bytes())
		if s.line == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' {
			return nil, s.readErrOr(s.badf("", "not a JSON object (newline-delimited JSON has one object per line)"))
		}
		clear(s.obj)
		if s.obj == nil {
			s.obj = map[string]json.RawMessage{}
		}
		if err := json.Unmarshal(line, &s.obj); err != nil {
			return nil, s.readErrOr(s.badf("", "invalid JSON: %v", err))
		}
		for i, c := range s.cols {
			if err := s.appendValue(b.Field(i), c); err != nil {
				return nil, err
			}
		}
		rows++
	}
	if rows == 0 {
		return nil, io.EOF
	}
	return b.NewRecordBatch(), nil
}

// lookup finds a column's value: the key as named, else regardless of case.
func (s *JSONScan) lookup(name string) (json.RawMessage, bool) {
	if v, ok := s.obj[name]; ok {
		return v, true
	}
	for k, v := range s.obj {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

func (s *JSONScan) appendValue(fb array.Builder, c jsonCol) error {
	v, ok := s.lookup(c.name)
	if !ok || string(v) == "null" {
		fb.AppendNull()
		return nil
	}
	bad := func() error {
		return s.badf(c.name, "cannot read %s as %s", truncateText(string(v), 40), c.t)
	}
	if c.raw {
		var buf bytes.Buffer
		if err := json.Compact(&buf, v); err != nil {
			return bad()
		}
		fb.(*array.StringBuilder).Append(buf.String())
		return nil
	}
	isString := v[0] == '"'
	var str string
	if isString {
		if err := json.Unmarshal(v, &str); err != nil {
			return bad()
		}
	}
	switch c.t.ID {
	case plan.Int64:
		if isString {
			return bad()
		}
		x, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return bad()
		}
		fb.(*array.Int64Builder).Append(x)
	case plan.Float64:
		if isString {
			return bad()
		}
		x, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return bad()
		}
		fb.(*array.Float64Builder).Append(x)
	case plan.Bool:
		switch string(v) {
		case "true":
			fb.(*array.BooleanBuilder).Append(true)
		case "false":
			fb.(*array.BooleanBuilder).Append(false)
		default:
			return bad()
		}
	case plan.Date:
		d, ok := parseDate([]byte(str))
		if !isString || !ok {
			return bad()
		}
		fb.(*array.Date32Builder).Append(arrow.Date32(d))
	case plan.Timestamp:
		if !isString {
			return bad()
		}
		x, err := plan.ParseTimestamp(str)
		if err != nil {
			return bad()
		}
		fb.(*array.TimestampBuilder).Append(arrow.Timestamp(x))
	case plan.String:
		if !isString {
			var buf bytes.Buffer
			if err := json.Compact(&buf, v); err != nil {
				return bad()
			}
			str = buf.String()
		}
		if !utf8.ValidString(str) {
			return s.badf(c.name, "value is not valid UTF-8")
		}
		fb.(*array.StringBuilder).Append(str)
	}
	return nil
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
