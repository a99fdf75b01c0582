package pgwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5/pgproto3"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// COPY (query) TO STDOUT and COPY table [(columns)] TO STDOUT (as SELECT
// columns FROM table) run the query as a job and send its rows over the
// copy-out protocol: CopyOutResponse, a CopyData per row, CopyDone and
// CommandComplete "COPY n". The rows are read from the job's result
// objects as they go out (the reader that streams a query's result), never
// gathered in the coordinator. Formats: text (Postgres's COPY text: \N for
// NULL, backslash escapes for backslash, newline, carriage return, tab,
// backspace, form feed, vertical tab and the delimiter) and csv (fields
// quoted when they hold the delimiter, the quote, a newline or a carriage
// return, equal the NULL string, or are forced), each with HEADER,
// DELIMITER and NULL, csv with QUOTE, ESCAPE and FORCE_QUOTE, in the
// option list form (WITH (FORMAT csv, HEADER true)) and the old one (WITH
// CSV HEADER). Values are written as a query sends them in text. COPY
// FROM, COPY to a server file or program and FORMAT binary are refused
// (SL005, 0A000); sluice's own COPY (query) TO 's3://...' is a statement
// of the HTTP API (SL023), as it was before this front end knew COPY.

// copyFormat is how COPY TO writes rows.
type copyFormat struct {
	csv         bool
	header      bool
	delim       byte
	null        string
	quote       byte
	escape      byte
	forceAll    bool
	forceNames  []string
	force       []bool // by column, resolved against the result
	singleField bool
}

// copyOptionError is an invalid COPY option, with Postgres's SQLSTATE.
func copyOptionError(state, format string, args ...any) error {
	return &paramError{state: state, msg: fmt.Sprintf(format, args...)}
}

// parseCopyOptions reads the options of a COPY TO statement.
func parseCopyOptions(opts []*pg_query.Node) (*copyFormat, error) {
	f := &copyFormat{}
	var delim, null, quote, escape *string
	format := "text"
	seen := map[string]bool{}
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		name := lower(d.Defname)
		if seen[name] {
			return nil, copyOptionError("42601", "conflicting or redundant options")
		}
		seen[name] = true
		str := func() (string, error) {
			if s := d.Arg.GetString_(); s != nil {
				return s.Sval, nil
			}
			if v, ok := constValue(d.Arg); ok {
				return fmt.Sprint(v), nil
			}
			return "", copyOptionError("42601", "%s requires a string value", name)
		}
		switch name {
		case "format":
			s, err := str()
			if err != nil {
				return nil, err
			}
			format = lower(s)
		case "header":
			b, err := copyBool(name, d.Arg)
			if err != nil {
				return nil, err
			}
			f.header = b
		case "delimiter", "null", "quote", "escape":
			s, err := str()
			if err != nil {
				return nil, err
			}
			switch name {
			case "delimiter":
				delim = &s
			case "null":
				null = &s
			case "quote":
				quote = &s
			case "escape":
				escape = &s
			}
		case "force_quote":
			switch {
			case d.Arg.GetAStar() != nil:
				f.forceAll = true
			case d.Arg.GetList() != nil:
				for _, it := range d.Arg.GetList().Items {
					f.forceNames = append(f.forceNames, strVal(it))
				}
			default:
				return nil, copyOptionError("42601", "argument to option \"%s\" must be a list of column names", name)
			}
		case "encoding":
			s, err := str()
			if err != nil {
				return nil, err
			}
			if e := strings.ReplaceAll(strings.ReplaceAll(lower(s), "-", ""), "_", ""); e != "utf8" && e != "unicode" {
				return nil, plan.Errorf(plan.CodeUnsupported, "unsupported: COPY ENCODING %q: sluice writes UTF8 only", s)
			}
		case "force_not_null", "force_null", "freeze", "default", "on_error", "log_verbosity", "reject_limit":
			return nil, copyOptionError("0A000", "COPY %s cannot be used with COPY TO", strings.ToUpper(name))
		default:
			return nil, copyOptionError("42601", "option \"%s\" not recognized", name)
		}
	}
	switch format {
	case "text":
	case "csv":
		f.csv = true
	case "binary":
		return nil, plan.Errorf(plan.CodeUnsupported, "unsupported: COPY FORMAT binary; use text or csv")
	default:
		return nil, copyOptionError("22023", "COPY format \"%s\" not recognized", format)
	}
	// Defaults, then the checks Postgres makes (ProcessCopyOptions).
	f.delim, f.null = '\t', `\N`
	if f.csv {
		f.delim, f.null, f.quote = ',', "", '"'
	}
	if delim != nil {
		if len(*delim) != 1 {
			return nil, copyOptionError("0A000", "COPY delimiter must be a single one-byte character")
		}
		f.delim = (*delim)[0]
	}
	if null != nil {
		f.null = *null
	}
	if !f.csv {
		switch {
		case quote != nil:
			return nil, copyOptionError("0A000", "COPY QUOTE requires CSV mode")
		case escape != nil:
			return nil, copyOptionError("0A000", "COPY ESCAPE requires CSV mode")
		case f.forceAll || f.forceNames != nil:
			return nil, copyOptionError("0A000", "COPY FORCE_QUOTE requires CSV mode")
		}
	}
	if quote != nil {
		if len(*quote) != 1 {
			return nil, copyOptionError("0A000", "COPY quote must be a single one-byte character")
		}
		f.quote = (*quote)[0]
	}
	f.escape = f.quote
	if escape != nil {
		if len(*escape) != 1 {
			return nil, copyOptionError("0A000", "COPY escape must be a single one-byte character")
		}
		f.escape = (*escape)[0]
	}
	switch {
	case f.delim == '\n' || f.delim == '\r':
		return nil, copyOptionError("22023", "COPY delimiter cannot be newline or carriage return")
	case strings.ContainsAny(f.null, "\r\n"):
		return nil, copyOptionError("22023", "COPY null representation cannot use newline or carriage return")
	case !f.csv && strings.IndexByte(`\.abcdefghijklmnopqrstuvwxyz0123456789`, f.delim) >= 0:
		return nil, copyOptionError("22023", "COPY delimiter cannot be \"%c\"", f.delim)
	case f.csv && f.delim == f.quote:
		return nil, copyOptionError("22023", "COPY delimiter and quote must be different")
	case strings.IndexByte(f.null, f.delim) >= 0:
		return nil, copyOptionError("22023", "COPY delimiter character must not appear in the NULL specification")
	case f.csv && strings.IndexByte(f.null, f.quote) >= 0:
		return nil, copyOptionError("22023", "CSV quote character must not appear in the NULL specification")
	}
	return f, nil
}

// copyBool reads a boolean COPY option (HEADER): no argument is true.
func copyBool(name string, arg *pg_query.Node) (bool, error) {
	if arg == nil {
		return true, nil
	}
	if b := arg.GetBoolean(); b != nil {
		return b.Boolval, nil
	}
	var s string
	if v, ok := constValue(arg); ok {
		s = fmt.Sprint(v)
	} else {
		s = strVal(arg)
	}
	switch lower(s) {
	case "true", "on", "1", "t", "yes", "y":
		return true, nil
	case "false", "off", "0", "f", "no", "n":
		return false, nil
	case "match":
		return false, copyOptionError("0A000", "cannot use \"%s\" with %s in COPY TO", s, strings.ToUpper(name))
	}
	return false, copyOptionError("22023", "%s requires a Boolean value", name)
}

// resolve places FORCE_QUOTE's columns in the result's schema.
func (f *copyFormat) resolve(schema *arrow.Schema) error {
	f.force = make([]bool, schema.NumFields())
	f.singleField = schema.NumFields() == 1
	for i := range f.force {
		f.force[i] = f.forceAll
	}
	for _, name := range f.forceNames {
		found := false
		for i, fd := range schema.Fields() {
			if fd.Name == name {
				f.force[i], found = true, true
			}
		}
		if !found {
			return copyOptionError("42703", "FORCE_QUOTE column \"%s\" not referenced by COPY", name)
		}
	}
	return nil
}

// appendField writes one non-NULL value (its text) as a field.
func (f *copyFormat) appendField(buf []byte, v []byte, col int) []byte {
	if f.csv {
		return f.appendCSV(buf, v, f.force[col])
	}
	return f.appendText(buf, v)
}

// appendText escapes v as COPY's text format does (CopyAttributeOutText).
func (f *copyFormat) appendText(buf []byte, v []byte) []byte {
	for _, c := range v {
		switch {
		case c < 0x20:
			switch c {
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			case '\v':
				buf = append(buf, '\\', 'v')
			default:
				if c == f.delim {
					buf = append(buf, '\\')
				}
				buf = append(buf, c)
			}
		case c == '\\' || c == f.delim:
			buf = append(buf, '\\', c)
		default:
			buf = append(buf, c)
		}
	}
	return buf
}

// appendCSV writes v as a CSV field (CopyAttributeOutCSV): quoted when
// forced, when it equals the NULL string, when it holds the delimiter,
// the quote, a newline or a carriage return, or when it is \. alone on
// its line; inside quotes the quote and escape characters are escaped.
func (f *copyFormat) appendCSV(buf []byte, v []byte, force bool) []byte {
	quote := force || string(v) == f.null || (f.singleField && string(v) == `\.`)
	if !quote {
		for _, c := range v {
			if c == f.delim || c == f.quote || c == '\n' || c == '\r' {
				quote = true
				break
			}
		}
	}
	if !quote {
		return append(buf, v...)
	}
	buf = append(buf, f.quote)
	for _, c := range v {
		if c == f.quote || c == f.escape {
			buf = append(buf, f.escape)
		}
		buf = append(buf, c)
	}
	return append(buf, f.quote)
}

// appendHeader writes the header line: the column names as fields.
func (f *copyFormat) appendHeader(buf []byte, schema *arrow.Schema) []byte {
	for i, fd := range schema.Fields() {
		if i > 0 {
			buf = append(buf, f.delim)
		}
		if f.csv {
			buf = f.appendCSV(buf, []byte(fd.Name), false)
		} else {
			buf = f.appendText(buf, []byte(fd.Name))
		}
	}
	return append(buf, '\n')
}

// copyStmt runs COPY: a COPY TO STDOUT's result is the query's rows, sent
// by writeCopy.
func (c *conn) copyStmt(ctx context.Context, sql string, cs *pg_query.CopyStmt, describe bool) (*result, error) {
	switch {
	case cs.IsFrom:
		return nil, plan.Errorf(plan.CodeUnsupported,
			"unsupported: COPY ... FROM: sluice is read-only (register files as a table with CREATE EXTERNAL TABLE or `sluice tables add`)")
	case strings.HasPrefix(lower(cs.Filename), "s3://") && !cs.IsProgram:
		return nil, plan.Errorf(plan.CodeNotStatement,
			"COPY ... TO 's3://...' is a statement, not a query: run it through POST /v1/statements (sluice sql and sluice submit do)")
	case cs.Filename != "" || cs.IsProgram:
		return nil, plan.Errorf(plan.CodeUnsupported,
			"unsupported: COPY to a file or program on the server; use COPY ... TO STDOUT (psql's \\copy writes a client file)")
	case cs.WhereClause != nil:
		return nil, copyOptionError("0A000", "WHERE clause not allowed with COPY TO")
	}
	f, err := parseCopyOptions(cs.Options)
	if err != nil {
		return nil, err
	}
	var q string
	switch {
	case cs.Query != nil:
		if cs.Query.GetSelectStmt() == nil {
			return nil, plan.Errorf(plan.CodeUnsupported, "unsupported: COPY (statement) of a statement that is not a query")
		}
		var ok bool
		if q, ok = queryText(sql, pg_query.Token_COPY); !ok {
			return nil, plan.Errorf(plan.CodeSyntax, "syntax error: COPY (query) without a query")
		}
	case cs.Relation != nil:
		q = selectFrom(cs.Relation, cs.Attlist)
	default:
		return nil, plan.Errorf(plan.CodeSyntax, "syntax error: COPY of nothing")
	}
	if describe {
		return &result{tag: "COPY"}, nil
	}
	res, err := c.query(ctx, q)
	if err != nil {
		return nil, err
	}
	if res.schema == nil {
		res.release()
		return nil, plan.Errorf(plan.CodeUnsupported, "unsupported: COPY of a statement that returns no rows")
	}
	if err := f.resolve(res.schema); err != nil {
		res.release()
		return nil, err
	}
	res.copy = f
	return res, nil
}

// selectFrom is the query COPY table [(columns)] TO copies.
func selectFrom(rv *pg_query.RangeVar, cols []*pg_query.Node) string {
	list := "*"
	if len(cols) > 0 {
		names := make([]string, len(cols))
		for i, n := range cols {
			names[i] = quoteIdent(strVal(n))
		}
		list = strings.Join(names, ", ")
	}
	rel := quoteIdent(rv.Relname)
	if s := rv.Schemaname; s != "" && lower(s) != "public" {
		rel = quoteIdent(s) + "." + rel
	}
	return "SELECT " + list + " FROM " + rel
}

// writeCopy sends a COPY TO STDOUT result over the copy-out protocol, a
// CopyData per row, flushed after every record batch.
func (c *conn) writeCopy(ctx context.Context, res *result) error {
	f := res.copy
	ncols := res.schema.NumFields()
	c.be.Send(&pgproto3.CopyOutResponse{OverallFormat: 0, ColumnFormatCodes: make([]uint16, ncols)})
	msg := &pgproto3.CopyData{}
	var line, val []byte
	if f.header {
		msg.Data = f.appendHeader(line[:0], res.schema)
		c.be.Send(msg) // Send copies the message into its buffer
	}
	cur := c.openCursor(ctx, res)
	defer cur.close()
	var n int64
	for {
		rec, err := cur.next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		cols := rec.Columns()
		rows := int(rec.NumRows())
		for i := cur.off; i < rows; i++ {
			line = line[:0]
			for j, col := range cols {
				if j > 0 {
					line = append(line, f.delim)
				}
				if col.IsNull(i) {
					line = append(line, f.null...)
					continue
				}
				val = appendValue(val[:0], col, i, 0)
				line = f.appendField(line, val, j)
			}
			msg.Data = append(line, '\n')
			line = msg.Data
			c.be.Send(msg)
		}
		n += int64(rows - cur.off)
		cur.off = rows
		if err := c.be.Flush(); err != nil {
			return &writeError{err}
		}
	}
	c.be.Send(&pgproto3.CopyDone{})
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte("COPY " + strconv.FormatInt(n, 10))})
	return nil
}
