package pgwire

import (
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Postgres names an unaliased output column after its expression
// (FigureColname in parse_target.c): a column reference is the column's
// name, a function call the function's name (count(*) is count,
// extract(year from d) is extract), a cast the name of its argument (or of
// the type when the argument has none: cast(1 as int) is int4), a CASE the
// name of its ELSE branch (or case), a scalar subquery the name of its one
// column, and anything else ?column?. sluice names such columns after
// their text (count(*), (x + 1)); only the names the Postgres front end
// reports are changed, from the statement's parse tree, so that clients
// that look columns up by name (ORMs, psycopg2's DictCursor, BI tools)
// find the names they know. The HTTP API, Flight SQL and the CLI keep
// sluice's.

// unnamedColumn is Postgres's name for a column it cannot name.
const unnamedColumn = "?column?"

// outputNames returns the Postgres names of the output columns of a query
// (a SELECT, VALUES, or a set operation: its leftmost branch names the
// columns). A target that expands (*, t.*) is "" with star set: how many
// columns it becomes is the engine's to say. ok is false when n is not a
// query.
func outputNames(n *pg_query.Node) (names []string, stars []bool, ok bool) {
	sel := n.GetSelectStmt()
	if sel == nil {
		return nil, nil, false
	}
	for sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Larg != nil {
		sel = sel.Larg
	}
	if len(sel.TargetList) == 0 && len(sel.ValuesLists) > 0 {
		for i := range sel.ValuesLists[0].GetList().GetItems() {
			names = append(names, "column"+strconv.Itoa(i+1))
			stars = append(stars, false)
		}
		return names, stars, true
	}
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			return nil, nil, false
		}
		if isStar(rt.Val) {
			names, stars = append(names, ""), append(stars, true)
			continue
		}
		names, stars = append(names, targetName(rt)), append(stars, false)
	}
	return names, stars, true
}

// isStar reports whether n is * or qualifier.*.
func isStar(n *pg_query.Node) bool {
	cr := n.GetColumnRef()
	return cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil
}

// targetName is the name Postgres gives a SELECT target: its alias, else
// the name of its expression.
func targetName(rt *pg_query.ResTarget) string {
	if rt.Name != "" {
		return rt.Name
	}
	name, _ := figureColname(rt.Val)
	return name
}

// figureColname names an expression as Postgres does and returns how sure
// the name is (FigureColnameInternal's strength): 2 for a name of the
// expression itself, 1 for a type or CASE name that a stronger one may
// replace, 0 for ?column?.
func figureColname(n *pg_query.Node) (string, int) {
	if n == nil {
		return unnamedColumn, 0
	}
	switch {
	case n.GetColumnRef() != nil:
		fs := n.GetColumnRef().Fields
		for i := len(fs) - 1; i >= 0; i-- {
			if s := fs[i].GetString_(); s != nil {
				return s.Sval, 2
			}
		}
	case n.GetAIndirection() != nil:
		ind := n.GetAIndirection()
		// A field selection ((x).f) names the column after the field; a
		// subscript (x[1]) after what it subscripts.
		for i := len(ind.Indirection) - 1; i >= 0; i-- {
			if s := ind.Indirection[i].GetString_(); s != nil {
				return s.Sval, 2
			}
		}
		return figureColname(ind.Arg)
	case n.GetFuncCall() != nil:
		if name := funcNameCase(n.GetFuncCall()); name != "" {
			return name, 2
		}
	case n.GetAExpr() != nil:
		if n.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif", 2
		}
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		name, strength := figureColname(tc.Arg)
		if strength <= 1 && tc.TypeName != nil && len(tc.TypeName.Names) > 0 {
			return strVal(tc.TypeName.Names[len(tc.TypeName.Names)-1]), 1
		}
		return name, strength
	case n.GetCollateClause() != nil:
		return figureColname(n.GetCollateClause().Arg)
	case n.GetGroupingFunc() != nil:
		return "grouping", 2
	case n.GetSubLink() != nil:
		sl := n.GetSubLink()
		switch sl.SubLinkType {
		case pg_query.SubLinkType_EXISTS_SUBLINK:
			return "exists", 2
		case pg_query.SubLinkType_ARRAY_SUBLINK:
			return "array", 2
		case pg_query.SubLinkType_EXPR_SUBLINK:
			// The name of the subquery's one column, whatever it is.
			if names, stars, ok := outputNames(sl.Subselect); ok && len(names) > 0 && !stars[0] {
				return names[0], 2
			}
		}
	case n.GetCaseExpr() != nil:
		name, strength := figureColname(n.GetCaseExpr().Defresult)
		if strength <= 1 {
			return "case", 1
		}
		return name, strength
	case n.GetAArrayExpr() != nil:
		return "array", 2
	case n.GetRowExpr() != nil:
		return "row", 2
	case n.GetCoalesceExpr() != nil:
		return "coalesce", 2
	case n.GetMinMaxExpr() != nil:
		if n.GetMinMaxExpr().Op == pg_query.MinMaxOp_IS_LEAST {
			return "least", 2
		}
		return "greatest", 2
	case n.GetSqlvalueFunction() != nil:
		if name := sqlValueFuncNames[n.GetSqlvalueFunction().Op]; name != "" {
			return name, 2
		}
	case n.GetXmlExpr() != nil:
		if name := xmlFuncNames[n.GetXmlExpr().Op]; name != "" {
			return name, 2
		}
	case n.GetXmlSerialize() != nil:
		return "xmlserialize", 2
	}
	return unnamedColumn, 0
}

// funcNameCase is the last part of a function's name, as written (the
// parser has folded an unquoted name to lower case already).
func funcNameCase(fc *pg_query.FuncCall) string {
	if len(fc.Funcname) == 0 {
		return ""
	}
	return strVal(fc.Funcname[len(fc.Funcname)-1])
}

var sqlValueFuncNames = map[pg_query.SQLValueFunctionOp]string{
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:        "current_date",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIME:        "current_time",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:      "current_time",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP:   "current_timestamp",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N: "current_timestamp",
	pg_query.SQLValueFunctionOp_SVFOP_LOCALTIME:           "localtime",
	pg_query.SQLValueFunctionOp_SVFOP_LOCALTIME_N:         "localtime",
	pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP:      "localtimestamp",
	pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:    "localtimestamp",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:        "current_role",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER:        "current_user",
	pg_query.SQLValueFunctionOp_SVFOP_USER:                "user",
	pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER:        "session_user",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:     "current_catalog",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:      "current_schema",
}

var xmlFuncNames = map[pg_query.XmlExprOp]string{
	pg_query.XmlExprOp_IS_XMLCONCAT: "xmlconcat", pg_query.XmlExprOp_IS_XMLELEMENT: "xmlelement",
	pg_query.XmlExprOp_IS_XMLFOREST: "xmlforest", pg_query.XmlExprOp_IS_XMLPARSE: "xmlparse",
	pg_query.XmlExprOp_IS_XMLPI: "xmlpi", pg_query.XmlExprOp_IS_XMLROOT: "xmlroot",
}

// pgNames renames the fields of an engine result schema to the names
// Postgres gives the output columns of query n. Columns that a * expands
// to keep the engine's names (a table's column names, as in Postgres). When
// the targets and the fields cannot be lined up (several stars, a count
// that differs) the fields that cannot be placed keep theirs.
func pgNames(n *pg_query.Node, schema *arrow.Schema) *arrow.Schema {
	if n == nil || schema == nil {
		return schema
	}
	names, stars, ok := outputNames(n)
	if !ok || len(names) == 0 {
		return schema
	}
	fs := schema.Fields()
	out := make([]arrow.Field, len(fs))
	copy(out, fs)
	nstars := 0
	for _, s := range stars {
		if s {
			nstars++
		}
	}
	if nstars == 0 && len(names) != len(fs) {
		return schema
	}
	if nstars > 0 && len(names)-nstars > len(fs) {
		return schema
	}
	// The targets before the first star line up with the first fields,
	// those after the last star with the last ones.
	for i := 0; i < len(names) && !stars[i]; i++ {
		out[i].Name = names[i]
	}
	for i, j := len(names)-1, len(fs)-1; i >= 0 && !stars[i] && j >= 0; i, j = i-1, j-1 {
		out[j].Name = names[i]
	}
	md := schema.Metadata()
	return arrow.NewSchema(out, &md)
}

// queryText returns the text of the query inside a statement that wraps
// one: COPY (query) TO ..., DECLARE name CURSOR ... FOR query. It reads
// the statement's tokens, not its parse tree, so the engine gets the query
// as the client wrote it.
func queryText(sql string, wrapper pg_query.Token) (string, bool) {
	sr, err := pg_query.Scan(sql)
	if err != nil {
		return "", false
	}
	toks := sr.Tokens
	switch wrapper {
	case pg_query.Token_COPY:
		// The parenthesized query after COPY.
		for i, t := range toks {
			if t.Token != pg_query.Token_ASCII_40 {
				continue
			}
			depth := 0
			for j := i; j < len(toks); j++ {
				switch toks[j].Token {
				case pg_query.Token_ASCII_40:
					depth++
				case pg_query.Token_ASCII_41:
					depth--
					if depth == 0 {
						return strings.TrimSpace(sql[t.End:toks[j].Start]), true
					}
				}
			}
			return "", false
		}
	case pg_query.Token_CURSOR:
		// Everything after the first FOR that follows CURSOR.
		cursor := false
		for _, t := range toks {
			switch {
			case t.Token == pg_query.Token_CURSOR:
				cursor = true
			case cursor && t.Token == pg_query.Token_FOR:
				q := strings.TrimSpace(sql[t.End:])
				return strings.TrimSpace(strings.TrimSuffix(q, ";")), true
			}
		}
	}
	return "", false
}
