package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// DuckDB's nested type names in casts, STRUCT(a BIGINT, b VARCHAR) and
// MAP(VARCHAR, BIGINT), are no Postgres type syntax: before parsing,
// maskNestedTypes blanks the parenthesized part of such a name after
// "::" or AS (same length, so positions stay those of the SQL), and the
// binder reads the whole type back from the SQL at the type's position
// (nestedTypeAt). BIGINT[] is Postgres's array syntax: a list.

// maskNestedTypes returns sql with the fields of each STRUCT(...),
// ROW(...) and MAP(...) type after "::" or AS blanked (ROW written as
// STRUCT).
func maskNestedTypes(sql string) string {
	low := strings.ToLower(sql)
	if !strings.Contains(low, "struct") && !strings.Contains(low, "map") && !strings.Contains(low, "row") {
		return sql
	}
	var out []byte
	sqlWords(sql, func(pos int, w string) {
		if w != "struct" && w != "map" && w != "row" {
			return
		}
		before := strings.TrimRight(sql[:pos], " \t\n\r")
		lb := strings.ToLower(before)
		if !strings.HasSuffix(before, "::") && !(strings.HasSuffix(lb, "as") && (len(lb) == 2 || !identByte(lb[len(lb)-3]))) {
			return
		}
		open := pos + len(w)
		for open < len(sql) && isSpaceByte(sql[open]) {
			open++
		}
		if open >= len(sql) || sql[open] != '(' {
			return
		}
		end := typeParenEnd(sql, open)
		if end < 0 {
			return
		}
		if out == nil {
			out = []byte(sql)
		}
		for i := open; i <= end; i++ {
			if out[i] != '\n' {
				out[i] = ' '
			}
		}
		if w == "row" {
			// ROW(...) is DuckDB's other name of STRUCT(...), and ROW a
			// Postgres keyword: the parser sees STRUCT (the SQL keeps
			// ROW(...) for nestedTypeAt).
			if end-pos+1 < len("struct") || strings.Contains(sql[pos:end+1], "\n") {
				return
			}
			copy(out[pos:], "struct")
		}
	})
	if out == nil {
		return sql
	}
	return string(out)
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// typeParenEnd is the offset of the ')' closing the '(' at open (double
// quoted names skipped), -1 when there is none.
func typeParenEnd(sql string, open int) int {
	depth := 0
	for i := open; i < len(sql); i++ {
		switch sql[i] {
		case '"':
			j := strings.IndexByte(sql[i+1:], '"')
			if j < 0 {
				return -1
			}
			i += j + 1
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		case '\'', ';':
			return -1
		}
	}
	return -1
}

// nestedTypeAt resolves a STRUCT or MAP type name masked by
// maskNestedTypes, reading the type from the SQL at its position.
func (b *binder) nestedTypeAt(tn *pg.TypeName) (plan.DataType, error) {
	loc := int(tn.Location)
	if loc < 0 || loc >= len(b.sql) {
		return plan.DataType{}, b.unsupported(tn.Location, "type "+typeNameOf(tn)+" here")
	}
	t, _, err := plan.ParseNestedType(b.sql[loc:])
	if err != nil {
		return plan.DataType{}, b.errorf(CodeType, tn.Location, "%v", err)
	}
	return t, nil
}

// nestedCastAllowed reports whether a nested cast is one DuckDB does:
// lists to lists and maps to maps of castable children, structs to
// structs of at least one common field (or of as many fields, from an
// unnamed struct), each castable.
func nestedCastAllowed(from, to plan.DataType) bool {
	switch {
	case from.ID == plan.List && to.ID == plan.List:
		return castAllowed(from.Elem(), to.Elem())
	case from.ID == plan.Map && to.ID == plan.Map:
		return castAllowed(from.Key(), to.Key()) && castAllowed(from.Value(), to.Value())
	case from.ID == plan.Struct && to.ID == plan.Struct:
		idx, err := exec.StructCastFields(from, to)
		if err != nil {
			return false
		}
		fs, ts := from.Children(), to.Children()
		for i, j := range idx {
			if j >= 0 && !castAllowed(fs[j].Type, ts[i].Type) {
				return false
			}
		}
		return true
	}
	return false
}
