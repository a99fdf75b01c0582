package planner

import (
	"context"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// FileReader is a catalog that reads files a query names itself, as
// DuckDB does: read_parquet('s3://...'), read_csv(...), read_json(...)
// and FROM 's3://...'. The table it returns is planned exactly as a
// registered external table is (its Name is what the scan refers to, and
// what the coordinator's layout lookup resolves), so pruning, scan splits
// and the adaptive rules apply unchanged.
type FileReader interface {
	ReadFiles(ctx context.Context, r *ReadCall) (*TableInfo, error)
}

// ReadCall is a read function in FROM, or a bare path.
type ReadCall struct {
	// Func is the function as written, lower-case (read_parquet,
	// read_csv_auto, ...), "" for a bare path.
	Func string
	// Format is parquet, csv or json.
	Format string
	// Path is the s3://BUCKET/KEY location: a prefix (a folder), one
	// file, or a glob ('*', '**', '?', '[...]'). Paths, when set, are
	// the locations of a list (Path is then the first).
	Path  string
	Paths []string
	// Options are the named arguments, names lower-case, values as text.
	Options map[string]string
}

// Text is the call as plans and errors name it: the function, the path
// and the options in name order ("read_csv('s3://b/x.csv', delim='|')";
// a bare path is read as its format's function).
func (r *ReadCall) Text() string {
	var b strings.Builder
	fn := r.Func
	if fn == "" {
		fn = "read_" + r.Format
	}
	b.WriteString(fn)
	b.WriteString("(")
	if len(r.Paths) > 0 {
		q := make([]string, len(r.Paths))
		for i, p := range r.Paths {
			q[i] = quoteString(p)
		}
		b.WriteString("[" + strings.Join(q, ", ") + "]")
	} else {
		b.WriteString(quoteString(r.Path))
	}
	keys := make([]string, 0, len(r.Options))
	for k := range r.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(", ")
		b.WriteString(k)
		b.WriteString("=")
		b.WriteString(quoteString(r.Options[k]))
	}
	b.WriteString(")")
	return b.String()
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// readFormats are the read functions in FROM and the format each reads.
var readFormats = map[string]string{
	"read_parquet": "parquet", "parquet_scan": "parquet",
	"read_csv": "csv", "read_csv_auto": "csv",
	"read_json": "json", "read_json_auto": "json", "read_ndjson": "json", "read_ndjson_auto": "json",
}

// FormatOfPath is the format a bare path in FROM is read as, from its
// extension as DuckDB's replacement scans take it (a codec extension
// after it allowed for text: x.csv.gz); "" when it names none.
func FormatOfPath(p string) string {
	p = strings.ToLower(p)
	for _, c := range []string{".gz", ".gzip", ".zst", ".zstd"} {
		p = strings.TrimSuffix(p, c)
	}
	switch {
	case strings.HasSuffix(p, ".parquet"):
		return "parquet"
	case strings.HasSuffix(p, ".csv"):
		return "csv"
	case strings.HasSuffix(p, ".json"), strings.HasSuffix(p, ".ndjson"), strings.HasSuffix(p, ".jsonl"):
		return "json"
	}
	return ""
}

// maskFromPaths turns a string where FROM or JOIN expects a table
// ('s3://b/x.parquet', which the Postgres grammar refuses) into a quoted
// name at the same byte offsets, "s3://b/x.parquet", which binds as a path
// read in place (bindPath). Strings holding a quote of either kind are
// left as they are (the parser reports them).
func maskFromPaths(sql string) string {
	if !strings.Contains(sql, "'") {
		return sql
	}
	res, err := pg.Scan(sql)
	if err != nil || len(res.Tokens) == 0 || res.Tokens[0].Token == pg.Token_COPY {
		return sql
	}
	out := []byte(sql)
	maskReadLists(sql, res.Tokens, out)
	// clause is, per parenthesis depth, the last clause keyword seen: a
	// comma continues a FROM list only in FROM. A FROM is a query's only
	// at a depth where SELECT was seen (not extract(year FROM x),
	// substring(s FROM 2), trim(... FROM s)), and not after IS [NOT]
	// DISTINCT.
	clause := []pg.Token{0}
	selects := []bool{false}
	for i, t := range res.Tokens {
		switch t.Token {
		case pg.Token_ASCII_40: // (
			clause, selects = append(clause, 0), append(selects, false)
		case pg.Token_ASCII_41: // )
			if len(clause) > 1 {
				clause, selects = clause[:len(clause)-1], selects[:len(selects)-1]
			}
		case pg.Token_SELECT:
			clause[len(clause)-1], selects[len(selects)-1] = t.Token, true
		case pg.Token_FROM, pg.Token_WHERE, pg.Token_GROUP_P, pg.Token_HAVING, pg.Token_ORDER, pg.Token_LIMIT,
			pg.Token_ON, pg.Token_USING, pg.Token_WINDOW, pg.Token_UNION, pg.Token_INTERSECT, pg.Token_EXCEPT:
			clause[len(clause)-1] = t.Token
		case pg.Token_SCONST:
			if i == 0 {
				continue
			}
			prev := res.Tokens[i-1].Token
			distinct := i >= 2 && res.Tokens[i-2].Token == pg.Token_DISTINCT
			inFrom := selects[len(selects)-1] && (prev == pg.Token_FROM && !distinct || prev == pg.Token_JOIN ||
				prev == pg.Token_ASCII_44 && clause[len(clause)-1] == pg.Token_FROM) // ,
			s := sql[t.Start:t.End]
			if !inFrom || len(s) < 2 || s[0] != '\'' || strings.ContainsAny(s[1:len(s)-1], `'"`) {
				continue
			}
			out[t.Start], out[t.End-1] = '"', '"'
		}
	}
	return string(out)
}

// maskReadLists turns DuckDB's list of paths as a read function's first
// argument, read_parquet(['s3://b/x/', 's3://b/y/']), which the Postgres
// grammar refuses, into a row of the same length, read_parquet(('...',
// '...')), in out.
func maskReadLists(sql string, ts []*pg.ScanToken, out []byte) {
	for i := 0; i+2 < len(ts); i++ {
		if _, ok := readFormats[strings.ToLower(sql[ts[i].Start:ts[i].End])]; !ok ||
			ts[i+1].Token != pg.Token_ASCII_40 || ts[i+2].Token != pg.Token_ASCII_91 { // ( [
			continue
		}
		for j := i + 3; j < len(ts); j++ {
			if ts[j].Token == pg.Token_ASCII_93 { // ]
				out[ts[i+2].Start], out[ts[j].Start] = '(', ')'
				break
			}
			if ts[j].Token != pg.Token_SCONST && ts[j].Token != pg.Token_ASCII_44 {
				break // not a list of strings: the parser reports it
			}
		}
	}
}

// maskStructArgs turns DuckDB's struct literal as a named argument's value,
// types={'a': 'VARCHAR', 'b': 'DATE'}, which the Postgres scanner refuses,
// into a row of the same length, types=('a', 'VARCHAR', 'b', 'DATE')
// (bindReadFunction renders it back). Only braces right after '=' or '=>'
// are touched; strings, quoted names and comments are skipped.
func maskStructArgs(sql string) string {
	if !strings.Contains(sql, "{") || !strings.Contains(strings.ToLower(sql), "read_csv") {
		return sql // only read_csv takes struct arguments
	}
	out := []byte(sql)
	depth := 0
	for i := 0; i < len(out); i++ {
		switch c := out[i]; {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(out) && (out[j] != c || j+1 < len(out) && out[j+1] == c) {
				if out[j] == c {
					j++ // a doubled quote
				}
				j++
			}
			i = j
		case c == '-' && i+1 < len(out) && out[i+1] == '-':
			for i < len(out) && out[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			if end := strings.Index(sql[i+2:], "*/"); end >= 0 {
				i += end + 3
			} else {
				i = len(out)
			}
		case c == '{' && depth == 0:
			k := i - 1
			for k >= 0 && (out[k] == ' ' || out[k] == '\t' || out[k] == '\n' || out[k] == '\r') {
				k--
			}
			if k >= 0 && (out[k] == '=' || out[k] == '>') {
				out[i], depth = '(', 1
			}
		case c == '{' && depth > 0:
			return sql // nested: not a flat struct of strings
		case c == '}' && depth > 0:
			out[i], depth = ')', 0
		case c == ':' && depth > 0:
			out[i] = ','
		}
	}
	return string(out)
}
