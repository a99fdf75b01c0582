package planner

import (
	"fmt"
	"strings"
)

// StatementKind says what a statement does.
type StatementKind string

// Statement kinds. StmtQuery is a plain query (SELECT, WITH, VALUES, ...),
// planned by Plan and run as a job; the others are recognized by
// ParseStatement and carried out by the coordinator.
const (
	StmtQuery          StatementKind = "query"
	StmtCreateExternal StatementKind = "create_external_table"
	StmtCreateTableAs  StatementKind = "create_table_as"
	StmtDropTable      StatementKind = "drop_table"
	StmtShowTables     StatementKind = "show_tables"
	StmtDescribe       StatementKind = "describe"
	StmtCopy           StatementKind = "copy"
	StmtExplain        StatementKind = "explain"
	StmtInsert         StatementKind = "insert"
	StmtCreateView     StatementKind = "create_view"
	StmtDropView       StatementKind = "drop_view"
)

// Statement is one parsed SQL statement. Statements the Postgres grammar
// has no form for (CREATE EXTERNAL TABLE, SHOW TABLES, DESCRIBE) or whose
// Postgres form means something else (COPY to a server file) are
// recognized here by their head; the query inside them (CTAS, COPY,
// EXPLAIN) is left to Plan, and QueryOffset maps its error positions back
// onto the whole statement (QueryError).
type Statement struct {
	Kind        StatementKind
	SQL         string // the whole statement text
	Name        string // the table of CREATE, DROP, DESCRIBE, INSERT (as written)
	NamePos     int    // 1-based character position of Name
	IfExists    bool   // DROP TABLE IF EXISTS
	IfNotExists bool   // CREATE ... IF NOT EXISTS
	OrReplace   bool   // CREATE OR REPLACE VIEW
	// Schema is the column list of CREATE EXTERNAL TABLE name (col type,
	// ...) as written (without the parentheses), "" when none; SchemaPos
	// is its position.
	Schema    string
	SchemaPos int
	Format    string // "parquet", "csv", "json" or "iceberg" (STORED AS; COPY ... (FORMAT f): parquet or csv)
	Location  string // s3://bucket/prefix/ of CREATE EXTERNAL TABLE and COPY
	// LocationPos is the position of the location literal.
	LocationPos int
	// Options are OPTIONS(key 'value', ...) of CREATE EXTERNAL TABLE and
	// the options of COPY other than FORMAT, keys lower case.
	Options map[string]string
	// Query is the query of CTAS, CREATE VIEW, INSERT, COPY and EXPLAIN, or the whole text of a
	// plain query; QueryOffset is its byte offset in SQL.
	Query       string
	QueryOffset int
	Analyze     bool // EXPLAIN ANALYZE
}

// QueryError shifts the position of a planning error of s.Query so that it
// points into the whole statement.
func (s *Statement) QueryError(err error) error {
	pe, ok := err.(*Error)
	if !ok || pe.Pos == 0 || s.QueryOffset == 0 {
		return err
	}
	c := *pe
	c.Pos += charPos(s.SQL, int32(s.QueryOffset)) - 1
	return &c
}

// token is one lexical token of a statement head.
type token struct {
	kind byte   // 'w' word, 'q' quoted identifier, 's' string, 'n' number, 'p' punctuation, 0 end
	text string // words lower case; strings unquoted
	off  int    // byte offset in the SQL
	end  int    // byte offset just past it
}

// lexer splits SQL into tokens, skipping white space and comments.
type lexer struct {
	sql string
	off int
}

func (l *lexer) next() (token, error) {
	s := l.sql
	for l.off < len(s) {
		switch {
		case s[l.off] == ' ' || s[l.off] == '\t' || s[l.off] == '\n' || s[l.off] == '\r':
			l.off++
		case strings.HasPrefix(s[l.off:], "--"):
			if i := strings.IndexByte(s[l.off:], '\n'); i >= 0 {
				l.off += i + 1
			} else {
				l.off = len(s)
			}
		case strings.HasPrefix(s[l.off:], "/*"):
			i := strings.Index(s[l.off+2:], "*/")
			if i < 0 {
				return token{}, l.errorf(l.off, "unterminated /* comment")
			}
			l.off += i + 4
		default:
			return l.token()
		}
	}
	return token{off: len(s), end: len(s)}, nil
}

func (l *lexer) token() (token, error) {
	s, start := l.sql, l.off
	c := s[start]
	switch {
	case c == '\'' || c == '"':
		var b strings.Builder
		i := start + 1
		for {
			if i >= len(s) {
				what := "string"
				if c == '"' {
					what = "quoted identifier"
				}
				return token{}, l.errorf(start, "unterminated %s", what)
			}
			if s[i] == c {
				if i+1 < len(s) && s[i+1] == c {
					b.WriteByte(c)
					i += 2
					continue
				}
				break
			}
			b.WriteByte(s[i])
			i++
		}
		l.off = i + 1
		kind := byte('s')
		if c == '"' {
			kind = 'q'
		}
		return token{kind: kind, text: b.String(), off: start, end: l.off}, nil
	case isWordByte(c) && !(c >= '0' && c <= '9'):
		i := start
		for i < len(s) && isWordByte(s[i]) {
			i++
		}
		l.off = i
		return token{kind: 'w', text: strings.ToLower(s[start:i]), off: start, end: i}, nil
	case c >= '0' && c <= '9':
		i := start
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		l.off = i
		return token{kind: 'n', text: s[start:i], off: start, end: i}, nil
	default:
		l.off++
		return token{kind: 'p', text: string(c), off: start, end: l.off}, nil
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func (l *lexer) errorf(off int, format string, args ...any) *Error {
	return &Error{Code: CodeSyntax, Pos: charPos(l.sql, int32(off)), Msg: "syntax error: " + fmt.Sprintf(format, args...)}
}

// stmtParser reads a statement head token by token.
type stmtParser struct {
	lex lexer
	tok token // current token
}

func (p *stmtParser) advance() error {
	t, err := p.lex.next()
	p.tok = t
	return err
}

// is reports whether the current token is the keyword kw.
func (p *stmtParser) is(kw string) bool { return p.tok.kind == 'w' && p.tok.text == kw }

func (p *stmtParser) isPunct(c string) bool { return p.tok.kind == 'p' && p.tok.text == c }

// expect consumes the keyword or punctuation want.
func (p *stmtParser) expect(want string) error {
	if p.is(want) || p.isPunct(want) {
		return p.advance()
	}
	return p.unexpected(strings.ToUpper(want))
}

// unexpected is the syntax error at the current token.
func (p *stmtParser) unexpected(want string) *Error {
	got := "end of input"
	if p.tok.kind != 0 {
		got = fmt.Sprintf("%q", p.lex.sql[p.tok.off:p.tok.end])
	}
	return p.lex.errorf(p.tok.off, "expected %s, got %s", want, got)
}

// name consumes a table name (a word or quoted identifier, optionally
// qualified by a schema, which is dropped: sluice has one namespace).
func (p *stmtParser) name() (string, int, error) {
	for {
		if p.tok.kind != 'w' && p.tok.kind != 'q' {
			return "", 0, p.unexpected("a table name")
		}
		n, pos := p.tok.text, charPos(p.lex.sql, int32(p.tok.off))
		if p.tok.kind == 'w' {
			n = p.lex.sql[p.tok.off:p.tok.end] // as written: names keep their case for display
		}
		if err := p.advance(); err != nil {
			return "", 0, err
		}
		if !p.isPunct(".") {
			return n, pos, nil
		}
		if err := p.advance(); err != nil {
			return "", 0, err
		}
	}
}

// end checks that nothing but a ';' is left.
func (p *stmtParser) end() error {
	if p.isPunct(";") {
		if err := p.advance(); err != nil {
			return err
		}
	}
	if p.tok.kind != 0 {
		return p.unexpected("end of statement")
	}
	return nil
}

// rest returns the text from the current token to the end, without a
// trailing ';', and its byte offset.
func (p *stmtParser) rest() (string, int) {
	q := strings.TrimRight(p.lex.sql[p.tok.off:], " \t\r\n")
	q = strings.TrimRight(strings.TrimSuffix(q, ";"), " \t\r\n")
	return q, p.tok.off
}

// ParseStatement recognizes the statement sql. A plain query is returned
// as StmtQuery with Query = sql (Plan parses it); errors are *Error with
// a code and the position of the offending token.
func ParseStatement(sql string) (*Statement, error) {
	p := &stmtParser{lex: lexer{sql: sql}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	st := &Statement{SQL: sql}
	var err error
	switch {
	case p.is("create"):
		err = p.create(st)
	case p.is("drop"):
		err = p.drop(st)
	case p.is("show"):
		err = p.show(st)
	case p.is("describe") || p.is("desc"):
		err = p.describe(st)
	case p.is("copy"):
		err = p.copyTo(st)
	case p.is("explain"):
		err = p.explain(st)
	case p.is("insert"):
		err = p.insert(st)
	default:
		st.Kind, st.Query = StmtQuery, sql
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (p *stmtParser) create(st *Statement) error {
	start := p.tok.off
	if err := p.advance(); err != nil {
		return err
	}
	orReplace := p.is("or")
	if orReplace {
		if err := p.advance(); err != nil {
			return err
		}
		if err := p.expect("replace"); err != nil {
			return err
		}
		if !p.is("view") {
			return p.unexpected("VIEW (CREATE OR REPLACE is only for views)")
		}
	}
	if p.is("view") {
		st.OrReplace = orReplace
		return p.createView(st)
	}
	external := p.is("external")
	if external {
		if err := p.advance(); err != nil {
			return err
		}
	}
	if !p.is("table") {
		return &Error{Code: CodeUnsupported, Pos: charPos(p.lex.sql, int32(start)),
			Msg: "unsupported: CREATE other than CREATE EXTERNAL TABLE, CREATE TABLE ... AS query and CREATE VIEW"}
	}
	if err := p.advance(); err != nil {
		return err
	}
	if err := p.ifNotExists(st); err != nil {
		return err
	}
	var err error
	if st.Name, st.NamePos, err = p.name(); err != nil {
		return err
	}
	if !external {
		if !p.is("as") {
			if p.isPunct("(") {
				return &Error{Code: CodeUnsupported, Pos: charPos(p.lex.sql, int32(p.tok.off)),
					Msg: "unsupported: CREATE TABLE with columns and no query (sluice tables are files: use CREATE EXTERNAL TABLE ... LOCATION, or CREATE TABLE name AS query)"}
			}
			return p.unexpected("AS")
		}
		if err := p.advance(); err != nil {
			return err
		}
		if p.tok.kind == 0 {
			return p.unexpected("a query")
		}
		st.Kind = StmtCreateTableAs
		st.Query, st.QueryOffset = p.rest()
		return nil
	}
	st.Kind = StmtCreateExternal
	if err := p.columnList(st); err != nil {
		return err
	}
	for p.tok.kind != 0 && !p.isPunct(";") {
		switch {
		case p.is("stored"):
			if err := p.advance(); err != nil {
				return err
			}
			if err := p.expect("as"); err != nil {
				return err
			}
			if !p.is("parquet") && !p.is("csv") && !p.is("json") && !p.is("iceberg") {
				return &Error{Code: CodeBadOption, Pos: charPos(p.lex.sql, int32(p.tok.off)),
					Msg: fmt.Sprintf("STORED AS %s: want PARQUET, CSV, JSON or ICEBERG", p.lex.sql[p.tok.off:p.tok.end])}
			}
			st.Format = p.tok.text
			if err := p.advance(); err != nil {
				return err
			}
		case p.is("location"):
			if err := p.advance(); err != nil {
				return err
			}
			if p.tok.kind != 's' {
				return p.unexpected("a location string 's3://bucket/prefix/'")
			}
			st.Location, st.LocationPos = p.tok.text, charPos(p.lex.sql, int32(p.tok.off))
			if err := p.advance(); err != nil {
				return err
			}
		case p.is("options"):
			if err := p.advance(); err != nil {
				return err
			}
			opts, err := p.options(nil)
			if err != nil {
				return err
			}
			st.Options = opts
		default:
			return p.unexpected("STORED AS, LOCATION or OPTIONS")
		}
	}
	if st.Format == "" {
		return p.lex.errorf(p.tok.off, "CREATE EXTERNAL TABLE needs STORED AS PARQUET or STORED AS CSV")
	}
	if st.Location == "" {
		return p.lex.errorf(p.tok.off, "CREATE EXTERNAL TABLE needs LOCATION 's3://bucket/prefix/'")
	}
	return p.end()
}

// options reads ( key value [, key value ...] ) where value is a string,
// word or number and an '=' between them is allowed; a key alone is a
// flag, "true". format, when not
// nil, receives the FORMAT option instead of the map.
func (p *stmtParser) options(format *string) (map[string]string, error) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for {
		if p.tok.kind != 'w' && p.tok.kind != 'q' {
			return nil, p.unexpected("an option name")
		}
		key := strings.ToLower(p.tok.text)
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.isPunct("=") {
			if err := p.advance(); err != nil {
				return nil, err
			}
		} else if p.isPunct(",") || p.isPunct(")") {
			// A bare flag (COPY ... (OVERWRITE)): true.
			out[key] = "true"
			if p.isPunct(")") {
				return out, p.advance()
			}
			if err := p.advance(); err != nil {
				return nil, err
			}
			continue
		}
		if key == "partition_by" && p.isPunct("(") {
			// PARTITION_BY (col[, col ...]): the names, comma-separated.
			cols, err := p.nameList()
			if err != nil {
				return nil, err
			}
			out[key] = cols
			if p.isPunct(")") {
				return out, p.advance()
			}
			if err := p.expect(","); err != nil {
				return nil, err
			}
			continue
		}
		if p.tok.kind != 's' && p.tok.kind != 'w' && p.tok.kind != 'n' && p.tok.kind != 'q' {
			return nil, p.unexpected("a value of option " + key)
		}
		val, valOff := p.tok.text, p.tok.off
		if err := p.advance(); err != nil {
			return nil, err
		}
		if key == "format" && format != nil {
			v := strings.ToLower(val)
			if v != "parquet" && v != "csv" && v != "json" {
				return nil, &Error{Code: CodeBadOption, Pos: charPos(p.lex.sql, int32(valOff)),
					Msg: fmt.Sprintf("FORMAT %s: want parquet, csv or json", val)}
			}
			*format = v
			out[key] = v // given, not defaulted (a COPY target file's extension names the format otherwise)
		} else {
			out[key] = val
		}
		if p.isPunct(")") {
			return out, p.advance()
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
}

// nameList reads ( name [, name ...] ), names plain or quoted, and
// returns them joined by commas (a name holding a comma is refused).
func (p *stmtParser) nameList() (string, error) {
	if err := p.expect("("); err != nil {
		return "", err
	}
	var names []string
	for {
		if p.tok.kind != 'w' && p.tok.kind != 'q' {
			return "", p.unexpected("a column name")
		}
		if strings.Contains(p.tok.text, ",") {
			return "", &Error{Code: CodeBadOption, Pos: charPos(p.lex.sql, int32(p.tok.off)),
				Msg: fmt.Sprintf("column name %q: a PARTITION_BY column may not hold a comma", p.tok.text)}
		}
		names = append(names, p.tok.text)
		if err := p.advance(); err != nil {
			return "", err
		}
		if p.isPunct(")") {
			return strings.Join(names, ","), p.advance()
		}
		if err := p.expect(","); err != nil {
			return "", err
		}
	}
}

func (p *stmtParser) drop(st *Statement) error {
	if err := p.advance(); err != nil {
		return err
	}
	view := p.is("view")
	if !p.is("table") && !view {
		return &Error{Code: CodeUnsupported, Pos: charPos(p.lex.sql, int32(p.tok.off)), Msg: "unsupported: DROP other than DROP TABLE and DROP VIEW"}
	}
	if err := p.advance(); err != nil {
		return err
	}
	if p.is("if") {
		if err := p.advance(); err != nil {
			return err
		}
		if err := p.expect("exists"); err != nil {
			return err
		}
		st.IfExists = true
	}
	var err error
	if st.Name, st.NamePos, err = p.name(); err != nil {
		return err
	}
	st.Kind = StmtDropTable
	if view {
		st.Kind = StmtDropView
	}
	return p.end()
}

// ifNotExists consumes an optional IF NOT EXISTS.
func (p *stmtParser) ifNotExists(st *Statement) error {
	if !p.is("if") {
		return nil
	}
	if err := p.advance(); err != nil {
		return err
	}
	if err := p.expect("not"); err != nil {
		return err
	}
	if err := p.expect("exists"); err != nil {
		return err
	}
	st.IfNotExists = true
	return nil
}

// skipParens moves from the ( at the current token to its matching ),
// nested parentheses included, and returns the opening token; what is
// unclosed is an error naming it.
func (p *stmtParser) skipParens(what string) (token, error) {
	open := p.tok
	depth := 0
	for {
		if p.tok.kind == 0 {
			return open, p.lex.errorf(open.off, "unclosed ( of the %s", what)
		}
		if p.isPunct("(") {
			depth++
		} else if p.isPunct(")") {
			depth--
			if depth == 0 {
				return open, nil
			}
		}
		if err := p.advance(); err != nil {
			return open, err
		}
	}
}

// columnList consumes an optional parenthesized column list (nested
// parentheses included, as in decimal(15,2)), keeping its text, without
// the outer parentheses, in st.Schema and its position in st.SchemaPos.
func (p *stmtParser) columnList(st *Statement) error {
	if !p.isPunct("(") {
		return nil
	}
	open, err := p.skipParens("column list")
	if err != nil {
		return err
	}
	st.Schema = strings.TrimSpace(p.lex.sql[open.end:p.tok.off])
	st.SchemaPos = charPos(p.lex.sql, int32(open.end))
	return p.advance()
}

// createView reads CREATE [OR REPLACE] VIEW [IF NOT EXISTS] name [(col,
// ...)] AS query; the column list, when given, is kept in Schema as
// written.
func (p *stmtParser) createView(st *Statement) error {
	if err := p.advance(); err != nil {
		return err
	}
	if err := p.ifNotExists(st); err != nil {
		return err
	}
	var err error
	if st.Name, st.NamePos, err = p.name(); err != nil {
		return err
	}
	if err := p.columnList(st); err != nil {
		return err
	}
	if err := p.expect("as"); err != nil {
		return err
	}
	if p.tok.kind == 0 || !(p.is("select") || p.is("with") || p.is("values") || p.is("table") || p.isPunct("(")) {
		return p.unexpected("a query (SELECT, WITH or VALUES)")
	}
	st.Kind = StmtCreateView
	st.Query, st.QueryOffset = p.rest()
	return nil
}

// insert reads INSERT INTO name query. A column list is refused: the
// query gives every column of the table, in order.
func (p *stmtParser) insert(st *Statement) error {
	if err := p.advance(); err != nil {
		return err
	}
	if err := p.expect("into"); err != nil {
		return err
	}
	var err error
	if st.Name, st.NamePos, err = p.name(); err != nil {
		return err
	}
	if p.isPunct("(") {
		// A column list, or a parenthesized query: look past the "(".
		peek := *p
		if err := peek.advance(); err != nil {
			return err
		}
		if !peek.is("select") && !peek.is("with") && !peek.is("values") && !peek.isPunct("(") {
			return &Error{Code: CodeUnsupported, Pos: charPos(p.lex.sql, int32(p.tok.off)),
				Msg: "unsupported: INSERT with a column list: select every column of the table, in order"}
		}
	}
	if p.tok.kind == 0 || !(p.is("select") || p.is("with") || p.is("values") || p.is("table") || p.isPunct("(")) {
		return p.unexpected("a query (SELECT, WITH or VALUES)")
	}
	st.Kind = StmtInsert
	st.Query, st.QueryOffset = p.rest()
	return nil
}

func (p *stmtParser) show(st *Statement) error {
	if err := p.advance(); err != nil {
		return err
	}
	if !p.is("tables") {
		return &Error{Code: CodeUnsupported, Pos: charPos(p.lex.sql, int32(p.tok.off)), Msg: "unsupported: SHOW other than SHOW TABLES"}
	}
	if err := p.advance(); err != nil {
		return err
	}
	st.Kind = StmtShowTables
	return p.end()
}

func (p *stmtParser) describe(st *Statement) error {
	if err := p.advance(); err != nil {
		return err
	}
	if p.is("table") {
		if err := p.advance(); err != nil {
			return err
		}
	}
	var err error
	if st.Name, st.NamePos, err = p.name(); err != nil {
		return err
	}
	st.Kind = StmtDescribe
	return p.end()
}

func (p *stmtParser) copyTo(st *Statement) error {
	if err := p.advance(); err != nil {
		return err
	}
	if !p.isPunct("(") {
		return &Error{Code: CodeUnsupported, Pos: charPos(p.lex.sql, int32(p.tok.off)),
			Msg: "unsupported: COPY of a table or FROM a file: write COPY (query) TO 's3://bucket/prefix/' (FORMAT parquet|csv)"}
	}
	open, err := p.skipParens("COPY query")
	if err != nil {
		return err
	}
	q := p.lex.sql[open.end:p.tok.off]
	lead := len(q) - len(strings.TrimLeft(q, " \t\r\n"))
	st.Query, st.QueryOffset = strings.TrimSpace(q), open.end+lead
	if st.Query == "" {
		return p.lex.errorf(p.tok.off, "COPY () has no query")
	}
	if err := p.advance(); err != nil {
		return err
	}
	if err := p.expect("to"); err != nil {
		return err
	}
	if p.tok.kind != 's' {
		return p.unexpected("a location string 's3://bucket/prefix/'")
	}
	st.Location, st.LocationPos = p.tok.text, charPos(p.lex.sql, int32(p.tok.off))
	if err := p.advance(); err != nil {
		return err
	}
	st.Format = "parquet"
	if p.is("with") {
		if err := p.advance(); err != nil {
			return err
		}
	}
	if p.isPunct("(") {
		opts, err := p.options(&st.Format)
		if err != nil {
			return err
		}
		st.Options = opts
	}
	st.Kind = StmtCopy
	return p.end()
}

func (p *stmtParser) explain(st *Statement) error {
	if err := p.advance(); err != nil {
		return err
	}
	if p.is("analyze") || p.is("analyse") {
		st.Analyze = true
		if err := p.advance(); err != nil {
			return err
		}
	}
	if p.tok.kind == 0 {
		return p.unexpected("a query")
	}
	st.Kind = StmtExplain
	st.Query, st.QueryOffset = p.rest()
	return nil
}
