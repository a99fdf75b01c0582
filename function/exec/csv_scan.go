package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// CSVScan reads one CSV file per n.Scan.CSV and emits the columns
// n.Scan.Columns, in that order, with the types of the node's schema, in
// batches of BatchRows rows.
//
// Parsing follows RFC 4180: fields are separated by the delimiter, records
// end with LF or CRLF, a field may be quoted with '"' (then it may hold
// delimiters, line breaks and doubled quotes ""). Beyond the RFC: a UTF-8
// byte order mark is skipped, empty lines are skipped, and a record with
// one field more than the file has columns is accepted when that last field
// is empty (a trailing delimiter, as in TPC-H .tbl files).
//
// A field equal to the NULL text (CSVFormat.Null, default the empty string)
// is NULL, unless it was quoted: "" is an empty string, not NULL. Only the
// selected columns are converted, each straight into its Arrow buffer:
// int64 and float64 as Go parses them, decimals digit by digit at the
// column's scale (extra fraction digits round half away from zero, like
// CAST; more integer digits than the precision allows is an error), dates
// as YYYY-MM-DD, booleans as true/false/t/f/1/0/yes/no, strings as they are
// (they must be valid UTF-8). Surrounding spaces are ignored except in
// strings (so a blank non-string field is NULL by default). A value that
// does not parse fails the scan with a user error naming the file, line,
// column and type. The file's lines are counted from 1, the header
// included.
type CSVScan struct {
	n      *plan.Node
	schema *arrow.Schema
	opts   Options
	name   string // file name for errors
	r      io.Reader

	delim  byte
	quote  byte // '"' unless CSVFormat.Quote
	escape byte // the quote (doubled) unless CSVFormat.Escape
	null   []byte
	header bool
	skip   int // lines still to skip before the header (CSVFormat.Skip)
	// quotedNull: a quoted field equal to the NULL text is NULL too
	// (not CSVFormat.QuotedNotNull).
	quotedNull bool
	padding    bool // CSVFormat.NullPadding
	ignore     bool // CSVFormat.IgnoreErrors
	// nested: a column is of a nested type (cast from its text per batch,
	// castNested); rowLine is then the line of each row of the batch.
	nested  bool
	rowLine []int64
	nFile   int // columns of the file

	fileCol []int    // per file column: parsed column index, -1 when unused
	parsed  []csvCol // the file columns that are read
	outCol  []int    // per output column: parsed column index

	// reader state
	buf        []byte
	start      int   // first unparsed byte
	end        int   // end of valid data
	eof        bool  // the reader is exhausted
	line       int64 // line number of buf[start] (1-based)
	recLine    int64 // line number where the current record starts
	fields     []csvField
	scratch    []byte // unescaped quoted fields
	bomDone    bool
	headerDone bool
	done       bool
	closed     bool
	rows       int64 // records read (after the header)
}

type csvField struct {
	lo, hi int  // bytes in buf (or scratch when esc)
	esc    bool // unescaped copy in scratch
	quoted bool
}

// csvCol builds one column of a batch directly in Arrow buffers.
type csvCol struct {
	name string
	t    plan.DataType
	k    kind
	at   arrow.DataType
	lim  int64 // decimals: 10^precision
	// dates: 0 for YYYY-MM-DD, 'd' for day first, 'm' for month first
	// (plan.CSVFormat.DateFormats)
	dateOrder byte

	n      int
	vbuf   *memory.Buffer // values (fixed width or bool bitmap)
	i64    []int64
	f64    []float64
	i32    []int32
	bits   []byte
	valid  *memory.Buffer // nil until the batch's first NULL
	vbits  []byte
	sb     *strBuilder
	sbHint int
	// nested, for a LIST, STRUCT or MAP column: its type. The field is
	// read as text and cast as DuckDB casts VARCHAR to it ([1, 2],
	// {'a': 1}, {k=v}), as read_csv does with such a column type.
	nested plan.DataType
	mem    memory.Allocator
}

// csvReadSize is the initial buffer size (grown for longer records).
const csvReadSize = 1 << 20

// NewCSVScan opens a scan of the CSV file r for the scan node n (Format
// "csv", n.Scan.CSV set). Errors name the file by r's Name() when r has one
// (an *os.File does), else by the table. Close closes r when it is an
// io.Closer.
func NewCSVScan(ctx context.Context, r io.Reader, n *plan.Node, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	if n == nil || n.Scan == nil {
		return nil, fmt.Errorf("exec: csv scan: node has no scan description")
	}
	f := n.Scan.CSV
	if f == nil {
		return nil, fmt.Errorf("exec: csv scan of %s: no CSV format", n.Scan.Table)
	}
	if len(n.Schema) != len(n.Scan.Columns) {
		return nil, fmt.Errorf("exec: csv scan of %s: %d columns for a schema of %d fields", n.Scan.Table, len(n.Scan.Columns), len(n.Schema))
	}
	s := &CSVScan{n: n, schema: n.Schema.Arrow(), opts: opts, name: n.Scan.Table, r: r,
		delim: ',', quote: '"', null: []byte(f.Null), header: f.Header, nFile: len(f.Columns), line: 1,
		skip: f.Skip, quotedNull: !f.QuotedNotNull, padding: f.NullPadding, ignore: f.IgnoreErrors}
	if nm, ok := r.(interface{ Name() string }); ok && nm.Name() != "" {
		s.name = nm.Name()
	}
	if f.Delimiter != "" {
		if len(f.Delimiter) != 1 || f.Delimiter[0] == '"' || f.Delimiter[0] == '\n' || f.Delimiter[0] == '\r' {
			return nil, plan.Errorf(plan.CodeBadInput, "csv scan of %s: delimiter %q is not a single ASCII character other than quote or line break", s.name, f.Delimiter)
		}
		s.delim = f.Delimiter[0]
	}
	for _, c := range []struct {
		name, v string
		to      *byte
	}{{"quote", f.Quote, &s.quote}, {"escape", f.Escape, &s.escape}} {
		if c.v == "" {
			continue
		}
		if len(c.v) != 1 || c.v[0] == s.delim || c.v[0] == '\n' || c.v[0] == '\r' {
			return nil, plan.Errorf(plan.CodeBadInput, "csv scan of %s: %s %q is not a single ASCII character other than the delimiter or a line break", s.name, c.name, c.v)
		}
		*c.to = c.v[0]
	}
	if s.escape == 0 {
		s.escape = s.quote
	}
	if s.nFile == 0 {
		return nil, fmt.Errorf("exec: csv scan of %s: the CSV format lists no columns", s.name)
	}
	s.fileCol = make([]int, s.nFile)
	for i := range s.fileCol {
		s.fileCol[i] = -1
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
			return nil, fmt.Errorf("exec: csv scan of %s: column %q is not in the CSV format", s.name, name)
		}
		if s.fileCol[idx] < 0 {
			t := n.Schema[i].Type
			k := kindOfType(t)
			if k == kNull {
				return nil, fmt.Errorf("exec: csv scan of %s: column %q has type %s", s.name, name, t)
			}
			c := csvCol{name: f.Columns[idx].Name, t: t, k: k, at: t.Arrow(), sbHint: 64}
			if k == kNested {
				c.nested, c.t, c.k, c.at = t, plan.StringType, kString, plan.StringType.Arrow()
				s.nested = true
			}
			if df := f.DateFormats[c.name]; df != "" && t.ID == plan.Date {
				switch {
				case strings.HasPrefix(df, "%d"):
					c.dateOrder = 'd'
				case strings.HasPrefix(df, "%m"):
					c.dateOrder = 'm'
				default:
					return nil, fmt.Errorf("exec: csv scan of %s: column %q: unknown date format %q", s.name, name, df)
				}
			}
			if t.ID == plan.Decimal {
				c.lim = math.MaxInt64
				if t.Precision > 0 && t.Precision < plan.MaxDecimalPrecision {
					c.lim = plan.Pow10[t.Precision]
				}
			}
			s.fileCol[idx] = len(s.parsed)
			s.parsed = append(s.parsed, c)
		} else if p := s.parsed[s.fileCol[idx]]; p.t != n.Schema[i].Type && (p.nested.ID == "" || p.nested != n.Schema[i].Type) {
			return nil, fmt.Errorf("exec: csv scan of %s: column %q read as %s and %s", s.name, name, p.t, n.Schema[i].Type)
		}
		s.outCol = append(s.outCol, s.fileCol[idx])
	}
	s.buf = make([]byte, csvReadSize)
	return s, nil
}

// Rows reports the records read so far (not counting a header).
func (s *CSVScan) Rows() int64 { return s.rows }

func (s *CSVScan) Schema() *arrow.Schema { return s.schema }

func (s *CSVScan) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	for i := range s.parsed {
		s.parsed[i].release()
	}
	s.buf = nil
	if c, ok := s.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (s *CSVScan) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.done || s.closed {
		return nil, io.EOF
	}
	limit := s.opts.BatchRows
	for i := range s.parsed {
		s.parsed[i].reset(s.opts.Mem, limit)
	}
	s.rowLine = s.rowLine[:0]
	rows := 0
	for rows < limit {
		ok, err := s.record()
		if err != nil {
			return nil, err
		}
		if !ok {
			s.done = true
			break
		}
		if s.skip > 0 {
			s.skip--
			continue
		}
		if !s.headerDone {
			s.headerDone = true
			if s.header {
				continue
			}
		}
		if len(s.fields) == 1 && !s.fields[0].quoted && s.fields[0].hi == s.fields[0].lo {
			continue // empty line
		}
		nf := len(s.fields)
		if nf == s.nFile+1 && s.fields[nf-1].hi == s.fields[nf-1].lo && !s.fields[nf-1].quoted {
			nf-- // trailing delimiter
		}
		if nf != s.nFile && !(nf < s.nFile && s.padding) {
			if s.ignore {
				continue
			}
			return nil, plan.Errorf(plan.CodeBadInput, "csv scan of %s: line %d: %d fields, want %d", s.name, s.recLine, len(s.fields), s.nFile)
		}
		bad := false
		for fi, pc := range s.fileCol {
			if pc < 0 {
				continue
			}
			if fi >= nf { // null_padding
				s.parsed[pc].appendNull(s.opts.Mem)
				continue
			}
			fd := s.fields[fi]
			v := s.value(fd)
			nv := v
			if s.parsed[pc].k != kString {
				nv = trimSpace(v)
			}
			if (!fd.quoted || s.quotedNull) && bytes.Equal(nv, s.null) {
				s.parsed[pc].appendNull(s.opts.Mem)
				continue
			}
			if err := s.parsed[pc].appendValue(v); err != nil {
				if s.ignore {
					bad = true
					break
				}
				return nil, plan.Errorf(plan.CodeBadInput, "csv scan of %s: line %d, column %q: %w", s.name, s.recLine, s.parsed[pc].name, err)
			}
		}
		if bad { // ignore_errors: take back the line's values
			for i := range s.parsed {
				if s.parsed[i].n > rows {
					s.parsed[i].pop()
				}
			}
			continue
		}
		if s.nested {
			s.rowLine = append(s.rowLine, s.recLine)
		}
		rows++
		s.rows++
	}
	if rows == 0 {
		return nil, io.EOF
	}
	arrs := make([]arrow.Array, len(s.parsed))
	for i := range s.parsed {
		a, err := s.parsed[i].finish(rows)
		if err != nil {
			releaseAll(arrs)
			return nil, fmt.Errorf("exec: csv scan of %s: column %q: %w", s.name, s.parsed[i].name, err)
		}
		arrs[i] = a
	}
	if s.nested {
		var err error
		if rows, err = s.castNested(arrs); err != nil {
			releaseAll(arrs)
			return nil, err
		}
		if rows == 0 {
			releaseAll(arrs)
			return s.Next(ctx) // every row of the batch skipped
		}
	}
	defer releaseAll(arrs)
	cols := make([]arrow.Array, len(s.outCol))
	for i, pc := range s.outCol {
		arrs[pc].Retain()
		cols[i] = arrs[pc]
	}
	out, err := conformRecord(s.opts.Mem, s.schema, cols, rows)
	if err != nil {
		return nil, fmt.Errorf("exec: csv scan of %s: %w", s.name, err)
	}
	return out, nil
}

func (s *CSVScan) value(f csvField) []byte {
	if f.esc {
		return s.scratch[f.lo:f.hi]
	}
	return s.buf[f.lo:f.hi]
}

// fill reads more input, keeping the bytes from s.start on (moved to the
// front of the buffer, which grows when the record does not fit). It
// reports how far the kept bytes moved.
func (s *CSVScan) fill() (int, error) {
	shift := s.start
	if shift > 0 {
		copy(s.buf, s.buf[s.start:s.end])
		s.end -= shift
		s.start = 0
	}
	if s.end == len(s.buf) {
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	for {
		k, err := s.r.Read(s.buf[s.end:])
		s.end += k
		if err == io.EOF {
			s.eof = true
			return shift, nil
		}
		if err != nil {
			return shift, fmt.Errorf("exec: csv scan of %s: read: %w", s.name, err)
		}
		if k > 0 {
			return shift, nil
		}
	}
}

// errRefill restarts the parse of a record after more input was read.
var errRefill = errors.New("refill")

// record parses the next record into s.fields; false at the end of input.
func (s *CSVScan) record() (bool, error) {
	for {
		ok, err := s.parseRecord()
		if err != errRefill {
			return ok, err
		}
		if _, err := s.fill(); err != nil {
			return false, err
		}
	}
}

// parseRecord parses one record from buf[start:end]. It returns errRefill
// when the record may continue past the buffered bytes (the caller reads
// more and calls it again: nothing was consumed).
func (s *CSVScan) parseRecord() (bool, error) {
	if !s.bomDone {
		if s.end-s.start < 3 && !s.eof {
			return false, errRefill
		}
		s.bomDone = true
		if bytes.HasPrefix(s.buf[s.start:s.end], []byte("\xef\xbb\xbf")) {
			s.start += 3
		}
	}
	s.fields = s.fields[:0]
	s.scratch = s.scratch[:0]
	buf, end, delim := s.buf, s.end, s.delim
	p := s.start
	if p >= end {
		if !s.eof {
			return false, errRefill
		}
		return false, nil
	}
	lines := int64(0)
	for {
		// one field starting at p
		f := csvField{lo: p}
		if p < end && buf[p] == s.quote {
			f.quoted = true
			q := p + 1
			f.lo = q
			for {
				i := s.quoteOrEscape(buf[q:end])
				if i < 0 {
					if !s.eof {
						return false, errRefill
					}
					return false, plan.Errorf(plan.CodeBadInput, "csv scan of %s: line %d: quoted field not terminated", s.name, s.recLine1(lines))
				}
				lines += int64(bytes.Count(buf[q:q+i], []byte{'\n'}))
				if f.esc {
					s.scratch = append(s.scratch, buf[q:q+i]...)
				}
				q += i + 1
				if s.escape != s.quote && buf[q-1] == s.escape { // escape: the next byte is literal
					if q >= end {
						if !s.eof {
							return false, errRefill
						}
						return false, plan.Errorf(plan.CodeBadInput, "csv scan of %s: line %d: quoted field not terminated", s.name, s.recLine1(lines))
					}
					if !f.esc {
						f.esc = true
						lo := len(s.scratch)
						s.scratch = append(s.scratch, buf[f.lo:q-1]...)
						f.lo = lo
					}
					if buf[q] == '\n' {
						lines++
					}
					s.scratch = append(s.scratch, buf[q])
					q++
					continue
				}
				if q < end && buf[q] == s.quote && s.escape == s.quote { // doubled quote
					if !f.esc {
						f.esc = true
						lo := len(s.scratch)
						s.scratch = append(s.scratch, buf[f.lo:q-1]...)
						f.lo = lo
					}
					s.scratch = append(s.scratch, s.quote)
					q++
					continue
				}
				if q >= end && !s.eof {
					return false, errRefill // a quote may follow
				}
				if f.esc {
					f.hi = len(s.scratch)
				} else {
					f.hi = q - 1
				}
				p = q
				break
			}
			if p < end && buf[p] != delim && buf[p] != '\n' && buf[p] != '\r' {
				return false, plan.Errorf(plan.CodeBadInput, "csv scan of %s: line %d: unexpected %q after a quoted field", s.name, s.recLine1(lines), buf[p])
			}
		} else {
			for p < end {
				c := buf[p]
				if c == delim || c == '\n' || c == '\r' {
					break
				}
				p++
			}
			f.hi = p
		}
		if p >= end {
			if !s.eof {
				return false, errRefill
			}
			s.fields = append(s.fields, f)
			s.finishRecord(end, lines)
			return true, nil
		}
		c := buf[p]
		if c == '\r' {
			if p+1 >= end && !s.eof {
				return false, errRefill
			}
			if p+1 < end && buf[p+1] == '\n' {
				s.fields = append(s.fields, f)
				s.finishRecord(p+2, lines+1)
				return true, nil
			}
			// a lone CR ends the record too
			s.fields = append(s.fields, f)
			s.finishRecord(p+1, lines+1)
			return true, nil
		}
		s.fields = append(s.fields, f)
		if c == '\n' {
			s.finishRecord(p+1, lines+1)
			return true, nil
		}
		p++ // delimiter
		if p >= end && !s.eof {
			return false, errRefill
		}
	}
}

// quoteOrEscape is the index of the first quote or escape byte in b, -1
// when none.
func (s *CSVScan) quoteOrEscape(b []byte) int {
	i := bytes.IndexByte(b, s.quote)
	if s.escape == s.quote {
		return i
	}
	if j := bytes.IndexByte(b, s.escape); j >= 0 && (i < 0 || j < i) {
		return j
	}
	return i
}

func (s *CSVScan) recLine1(lines int64) int64 { return s.line + lines }

func (s *CSVScan) finishRecord(next int, lines int64) {
	s.recLine = s.line
	s.line += lines
	s.start = next
}

// ---- column builders ----------------------------------------------------------

func (c *csvCol) release() {
	if c.vbuf != nil {
		c.vbuf.Release()
		c.vbuf = nil
	}
	if c.valid != nil {
		c.valid.Release()
		c.valid = nil
	}
	if c.sb != nil {
		c.sb.release()
		c.sb = nil
	}
}

// reset starts a batch of up to rows values.
func (c *csvCol) reset(mem memory.Allocator, rows int) {
	c.release()
	c.n, c.mem = 0, mem
	switch c.k {
	case kInt64:
		c.vbuf, c.i64 = newFixed[int64](mem, rows)
	case kFloat64:
		c.vbuf, c.f64 = newFixed[float64](mem, rows)
	case kDate:
		c.vbuf, c.i32 = newFixed[int32](mem, rows)
	case kBool:
		c.vbuf, c.bits = newBitmap(mem, rows)
	case kString:
		c.sb = newStrBuilder(mem, rows, c.sbHint)
	}
}

func (c *csvCol) appendNull(mem memory.Allocator) {
	if c.valid == nil {
		rows := c.capacity()
		c.valid, c.vbits = newOnes(mem, rows)
	}
	clearBit(c.vbits, c.n)
	switch c.k {
	case kInt64:
		c.i64[c.n] = 0
	case kFloat64:
		c.f64[c.n] = 0
	case kDate:
		c.i32[c.n] = 0
	case kString:
		c.sb.appendEmpty()
	}
	c.n++
}

// pop takes back the last value appended (a line ignore_errors skips).
func (c *csvCol) pop() {
	c.n--
	if c.valid != nil {
		setBit(c.vbits, c.n)
	}
	switch c.k {
	case kBool:
		clearBit(c.bits, c.n)
	case kString:
		c.sb.n--
		c.sb.used = int(c.sb.offs[c.sb.n])
	}
}

func (c *csvCol) capacity() int {
	switch c.k {
	case kInt64:
		return len(c.i64)
	case kFloat64:
		return len(c.f64)
	case kDate:
		return len(c.i32)
	case kBool:
		return len(c.bits) * 8
	case kString:
		return len(c.sb.offs) - 1
	}
	return 0
}

func (c *csvCol) bad(v []byte) error {
	return fmt.Errorf("cannot parse %q as %s", v, c.t)
}

func (c *csvCol) appendValue(v []byte) error {
	switch c.k {
	case kInt64:
		if c.t.ID == plan.Decimal {
			x, ok := parseDecimal(v, c.t.Scale)
			if !ok {
				return c.bad(v)
			}
			if x >= c.lim || x <= -c.lim {
				return fmt.Errorf("%q does not fit %s", v, c.t)
			}
			c.i64[c.n] = x
		} else if c.t.ID == plan.Timestamp {
			x, err := plan.ParseTimestamp(string(v))
			if err != nil {
				return c.bad(v)
			}
			c.i64[c.n] = x
		} else {
			x, err := strconv.ParseInt(bstr(trimSpace(v)), 10, 64)
			if err != nil {
				return c.bad(v)
			}
			c.i64[c.n] = x
		}
	case kFloat64:
		x, err := strconv.ParseFloat(bstr(trimSpace(v)), 64)
		if err != nil {
			return c.bad(v)
		}
		c.f64[c.n] = x
	case kDate:
		var d int32
		var ok bool
		if c.dateOrder != 0 {
			d, ok = parseDMY(trimSpace(v), c.dateOrder == 'd')
		} else {
			d, ok = parseDate(v)
		}
		if !ok {
			return c.bad(v)
		}
		c.i32[c.n] = d
	case kBool:
		b, ok := parseBool(v)
		if !ok {
			return c.bad(v)
		}
		if b {
			setBit(c.bits, c.n)
		}
	case kString:
		if !utf8.Valid(v) {
			return fmt.Errorf("value %q is not valid UTF-8", v)
		}
		c.sb.append(v)
	}
	c.n++
	return nil
}

// finish returns the batch's array (n rows) and hands its buffers over.
func (c *csvCol) finish(n int) (arrow.Array, error) {
	valid := c.valid
	c.valid = nil
	if c.k == kString {
		sb := c.sb
		c.sb = nil
		c.sbHint = max(64, sb.used+sb.used/8)
		return sb.finish(valid) // a nested column's text: castNested
	}
	b := c.vbuf
	c.vbuf = nil
	return makeArray(c.at, n, valid, b), nil
}

// parseDMY parses D/M/YYYY (dayFirst) or M/D/YYYY, with '/', '-' or '.'
// (the same one twice) between the parts and one or two digits for the day
// and month. ok is false for anything else or an impossible date.
func parseDMY(b []byte, dayFirst bool) (int32, bool) {
	var parts [3]int64
	var sep byte
	p := 0
	for i := range parts {
		start := p
		for p < len(b) && b[p] >= '0' && b[p] <= '9' && p-start < 4 {
			parts[i] = parts[i]*10 + int64(b[p]-'0')
			p++
		}
		n := p - start
		if n == 0 || (i < 2 && n > 2) || (i == 2 && n != 4) {
			return 0, false
		}
		if i < 2 {
			if p >= len(b) || (b[p] != '/' && b[p] != '-' && b[p] != '.') || (sep != 0 && b[p] != sep) {
				return 0, false
			}
			sep = b[p]
			p++
		}
	}
	if p != len(b) {
		return 0, false
	}
	d, m, y := parts[0], parts[1], parts[2]
	if !dayFirst {
		d, m = m, d
	}
	if m < 1 || m > 12 || d < 1 || d > int64(daysInMonth(y, int(m))) {
		return 0, false
	}
	return int32(daysFromCivil(y, int(m), int(d))), true
}

// castNested casts the text of the batch's nested columns (arrs, as
// finish made them) to their types, in place. A value that does not
// cast fails the scan naming its line and column, or, with
// ignore_errors, skips its row as a scalar that does not parse does:
// the rows whose value fails alone are taken out of every column and the
// rest cast again. It returns the rows left.
func (s *CSVScan) castNested(arrs []arrow.Array) (int, error) {
	n := arrs[0].Len()
	var bad []bool // rows skipped
	nbad := 0
	for i := range s.parsed {
		c := &s.parsed[i]
		if c.nested.ID == "" {
			continue
		}
		out, err := castArray(c.mem, arrs[i], c.nested)
		if err == nil {
			arrs[i].Release()
			arrs[i] = out
			continue
		}
		// The rows whose value fails alone.
		found := false
		for r := 0; r < n; r++ {
			if arrs[i].IsNull(r) || bad != nil && bad[r] {
				continue
			}
			one := array.NewSlice(arrs[i], int64(r), int64(r+1))
			o, e := castArray(c.mem, one, c.nested)
			one.Release()
			if e == nil {
				o.Release()
				continue
			}
			found = true
			if !s.ignore {
				return 0, plan.Errorf(plan.CodeBadInput, "csv scan of %s: line %d, column %q: %w", s.name, s.rowLine[r], c.name, e)
			}
			if bad == nil {
				bad = make([]bool, n)
			}
			bad[r] = true
			nbad++
		}
		if !found && nbad == 0 {
			return 0, plan.Errorf(plan.CodeBadInput, "csv scan of %s: column %q: %w", s.name, c.name, err)
		}
	}
	if nbad == 0 {
		return n, nil
	}
	idx := make([]int32, 0, n-nbad)
	for r := 0; r < n; r++ {
		if !bad[r] {
			idx = append(idx, int32(r))
		}
	}
	s.rows -= int64(nbad)
	for i, a := range arrs {
		t, err := takeNullable(s.opts.Mem, a, idx)
		if err != nil {
			return 0, err
		}
		a.Release()
		arrs[i] = t
	}
	for i := range s.parsed {
		c := &s.parsed[i]
		if c.nested.ID == "" || arrs[i].DataType().ID() != arrow.STRING {
			continue // cast already
		}
		out, err := castArray(c.mem, arrs[i], c.nested)
		if err != nil {
			return 0, plan.Errorf(plan.CodeBadInput, "csv scan of %s: column %q: %w", s.name, c.name, err)
		}
		arrs[i].Release()
		arrs[i] = out
	}
	return len(idx), nil
}
