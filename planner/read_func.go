package planner

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// bindReadFunction binds read_parquet(path, ...), read_csv(path, ...),
// read_json(path, ...) and their DuckDB aliases in FROM: the catalog
// lists and inspects the files (FileReader) and the call binds as a scan
// of a registered table would, named by the call's text. Named arguments
// are written name=value (DuckDB) or name => value (Postgres), with
// constant values.
func (b *binder) bindReadFunction(fc *pg.FuncCall, format string, alias *pg.Alias) (node, []*relation, error) {
	name := funcName(fc)
	if len(fc.Args) == 0 {
		return nil, nil, b.errorf(CodeType, fc.Location, "%s takes a path: %s('s3://BUCKET/PREFIX/'[, option=value ...])", name, name)
	}
	call := &ReadCall{Func: name, Format: format, Options: map[string]string{}}
	for i, a := range fc.Args {
		if i == 0 {
			if row := a.GetRowExpr(); row != nil { // a list of paths (maskReadLists)
				for _, e := range row.Args {
					s, ok := constText(e)
					if !ok || e.GetAConst().GetSval() == nil {
						return nil, nil, b.errorf(CodeType, exprLoc(e), "%s: a list of paths holds string constants only", name)
					}
					call.Paths = append(call.Paths, s)
				}
				call.Path = call.Paths[0]
				continue
			}
			if a.GetAArrayExpr() != nil {
				return nil, nil, b.unsupported(exprLoc(a), name+"() of an ARRAY: write the list of paths ['s3://...', ...]")
			}
			s, ok := constText(a)
			if !ok || a.GetAConst().GetSval() == nil {
				return nil, nil, b.errorf(CodeType, exprLoc(a), "%s: the path must be a string constant 's3://BUCKET/PREFIX/'", name)
			}
			call.Path = s
			continue
		}
		key, val := namedArg(a)
		if key == "" {
			return nil, nil, b.errorf(CodeType, exprLoc(a), "%s: argument %d: want option=value (a constant)", name, i+1)
		}
		v, ok := constText(val)
		if row := val.GetRowExpr(); row != nil { // {'k': 'v', ...} (maskStructArgs)
			v, ok = structText(row)
		}
		if !ok {
			return nil, nil, b.errorf(CodeBadOption, exprLoc(a), "%s: option %s: the value must be a constant", name, key)
		}
		if _, dup := call.Options[key]; dup {
			return nil, nil, b.errorf(CodeBadOption, exprLoc(a), "%s: option %s given twice", name, key)
		}
		call.Options[key] = v
	}
	n, rel, err := b.readFiles(call, alias, name, fc.Location)
	if err != nil {
		return nil, nil, err
	}
	return n, []*relation{rel}, nil
}

// readFiles binds a read call as a scan, the relation named alias (or
// defAlias without one).
func (b *binder) readFiles(call *ReadCall, alias *pg.Alias, defAlias string, loc int32) (node, *relation, error) {
	fr, ok := b.cat.(FileReader)
	if !ok {
		return nil, nil, b.unsupported(loc, call.Text()+": this catalog reads no files by path (register them first)")
	}
	info, err := fr.ReadFiles(b.ctx, call)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			return nil, nil, err
		}
		if code := plan.CodeOf(err); code != "" {
			return nil, nil, b.errorf(code, loc, "%v", err)
		}
		return nil, nil, fmt.Errorf("planner: %s: %w", call.Text(), err)
	}
	rv := &pg.RangeVar{Relname: info.Name, Alias: alias, Location: loc}
	return b.bindTableInfoAs(rv, info, defAlias)
}

// bindPath binds a bare path in FROM ('s3://b/x.parquet', given to the
// parser as a quoted name by sqlparse), read by the format its extension
// names; the relation is named after the file (DuckDB: 'x.parquet' is x).
func (b *binder) bindPath(rv *pg.RangeVar) (node, *relation, error) {
	// The parser cuts names at 63 bytes: the path is read from the text
	// (maskFromPaths kept its offsets).
	p := rv.Relname
	if l := int(rv.Location); l >= 0 && l < len(b.sql) && (b.sql[l] == '\'' || b.sql[l] == '"') {
		if end := strings.IndexByte(b.sql[l+1:], b.sql[l]); end >= 0 {
			p = b.sql[l+1 : l+1+end]
		}
	}
	rv = &pg.RangeVar{Relname: p, Alias: rv.Alias, Location: rv.Location}
	format := FormatOfPath(rv.Relname)
	if format == "" {
		return nil, nil, b.errorf(CodeBadLocation, rv.Location, "path %q: its extension names no format (.parquet, .csv, .json, .ndjson, .jsonl, compressed .gz/.zst): use read_parquet, read_csv or read_json", rv.Relname)
	}
	base := path.Base(rv.Relname)
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return b.readFiles(&ReadCall{Format: format, Path: rv.Relname}, rv.Alias, base, rv.Location)
}

// isPath reports whether a table name is a path read in place (FROM
// 's3://...').
func isPath(name string) bool { return strings.Contains(name, "://") }

// namedArg returns the option name and value node of name=value,
// name => value or name := value; "" when a is neither.
func namedArg(a *pg.Node) (string, *pg.Node) {
	if na := a.GetNamedArgExpr(); na != nil {
		return strings.ToLower(na.Name), na.Arg
	}
	ae := a.GetAExpr()
	if ae == nil || ae.Kind != pg.A_Expr_Kind_AEXPR_OP || len(ae.Name) != 1 || ae.Name[0].GetString_().GetSval() != "=" {
		return "", nil
	}
	cr := ae.Lexpr.GetColumnRef()
	if cr == nil || len(cr.Fields) != 1 || cr.Fields[0].GetString_() == nil {
		return "", nil
	}
	return strings.ToLower(cr.Fields[0].GetString_().GetSval()), ae.Rexpr
}

// structText renders a row of key, value string pairs back as DuckDB's
// struct literal text: {'a': 'VARCHAR', 'b': 'DATE'}.
func structText(row *pg.RowExpr) (string, bool) {
	if len(row.Args)%2 != 0 {
		return "", false
	}
	parts := make([]string, 0, len(row.Args)/2)
	for i := 0; i < len(row.Args); i += 2 {
		k, ok1 := constText(row.Args[i])
		v, ok2 := constText(row.Args[i+1])
		if !ok1 || !ok2 {
			return "", false
		}
		parts = append(parts, quoteString(k)+": "+quoteString(v))
	}
	return "{" + strings.Join(parts, ", ") + "}", true
}

// constText is a constant argument as text: a string as it is, a number
// as written, a boolean as true or false.
func constText(n *pg.Node) (string, bool) {
	if n == nil {
		return "", false
	}
	if tc := n.GetTypeCast(); tc != nil {
		return constText(tc.Arg)
	}
	c := n.GetAConst()
	if c == nil || c.Isnull {
		return "", false
	}
	switch {
	case c.GetSval() != nil:
		return c.GetSval().GetSval(), true
	case c.GetIval() != nil:
		return strconv.FormatInt(int64(c.GetIval().GetIval()), 10), true
	case c.GetFval() != nil:
		return c.GetFval().GetFval(), true
	case c.GetBoolval() != nil:
		return strconv.FormatBool(c.GetBoolval().GetBoolval()), true
	}
	return "", false
}
