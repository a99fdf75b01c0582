package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// GROUP BY ALL (DuckDB: group by every select-list item that has no
// aggregate) means something else to the Postgres grammar, where ALL is
// a set quantifier before a list of grouping items, and alone it does not
// parse. Before parsing, maskGroupByAll writes the ALL of a GROUP BY ALL
// that ends its clause as "() " (the empty grouping set, same length, so
// parser locations stay those of sql); the binder recognizes an empty
// grouping set whose text is "all" (groupByAll).

// groupByAllEnds are the words that may follow GROUP BY ALL.
var groupByAllEnds = map[string]bool{"having": true, "window": true, "qualify": true, "order": true, "limit": true,
	"offset": true, "fetch": true, "union": true, "intersect": true, "except": true, ";": true, ")": true}

func maskGroupByAll(sql string) string {
	if !strings.Contains(strings.ToLower(sql), "all") {
		return sql
	}
	type word struct {
		pos int
		w   string
	}
	var ws []word
	sqlWords(sql, func(pos int, w string) { ws = append(ws, word{pos, w}) })
	out := []byte(sql)
	for i := 2; i < len(ws); i++ {
		if ws[i].w != "all" || ws[i-1].w != "by" || ws[i-2].w != "group" {
			continue
		}
		if i+1 < len(ws) && !groupByAllEnds[ws[i+1].w] {
			continue
		}
		// Anything but blanks up to the next word is an expression (a
		// number, an operator): not DuckDB's GROUP BY ALL.
		end := len(sql)
		if i+1 < len(ws) {
			end = ws[i+1].pos
		}
		if strings.TrimSpace(sql[ws[i].pos+3:end]) != "" {
			continue
		}
		copy(out[ws[i].pos:], "() ")
	}
	return string(out)
}

// groupByAll reports whether sel's GROUP BY is DuckDB's GROUP BY ALL.
func (b *binder) groupByAll(sel *pg.SelectStmt) bool {
	if len(sel.GroupClause) != 1 {
		return false
	}
	gs := sel.GroupClause[0].GetGroupingSet()
	if gs == nil || gs.Kind != pg.GroupingSetKind_GROUPING_SET_EMPTY {
		return false
	}
	i := int(gs.Location)
	return i >= 0 && i+3 <= len(b.sql) && strings.EqualFold(b.sql[i:i+3], "all")
}

// expandGroupByAll replaces GROUP BY ALL with the select-list items that
// contain no aggregate (none: a global aggregation).
func (b *binder) expandGroupByAll(sel *pg.SelectStmt) {
	var keys []*pg.Node
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil || rt.Val == nil || containsAgg(rt.Val) || containsWindow(rt.Val) || rt.Val.GetColumnRef() != nil && isStar(rt.Val.GetColumnRef()) {
			continue
		}
		keys = append(keys, rt.Val)
	}
	sel.GroupClause = keys
}

// containsWindow reports whether n calls a window function.
func containsWindow(n *pg.Node) bool {
	found := false
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if fc, ok := m.Interface().(*pg.FuncCall); ok && fc.Over != nil {
			found = true
		}
		if _, ok := m.Interface().(*pg.SubLink); ok || found {
			return
		}
		eachChild(m, func(c protoreflect.Message) bool {
			walk(c)
			return found
		})
	}
	walk(n.ProtoReflect())
	return found
}

func isStar(cr *pg.ColumnRef) bool {
	f := cr.GetFields()
	return len(f) > 0 && f[len(f)-1].GetAStar() != nil
}

// ORDER BY ALL (DuckDB: order by every select-list column, left to
// right, all ASC or all DESC) does not parse either. maskOrderByAll
// writes the ALL of an ORDER BY ALL that ends its clause (or is followed
// by ASC, DESC or NULLS) as "'' " (an empty string, same length); the
// binder recognizes that constant where its text is "all" (orderByAll).
// Anywhere else (a window's or an aggregate's ORDER BY) it is refused
// (bindConst), never taken as a constant sort key.

var orderByAllEnds = map[string]bool{"asc": true, "desc": true, "nulls": true, "limit": true, "offset": true,
	"fetch": true, ";": true, ")": true}

func maskOrderByAll(sql string) string {
	if !strings.Contains(strings.ToLower(sql), "all") {
		return sql
	}
	type word struct {
		pos int
		w   string
	}
	var ws []word
	sqlWords(sql, func(pos int, w string) { ws = append(ws, word{pos, w}) })
	out := []byte(sql)
	for i := 2; i < len(ws); i++ {
		if ws[i].w != "all" || ws[i-1].w != "by" || ws[i-2].w != "order" {
			continue
		}
		if i+1 < len(ws) && !orderByAllEnds[ws[i+1].w] {
			continue
		}
		end := len(sql)
		if i+1 < len(ws) {
			end = ws[i+1].pos
		}
		if strings.TrimSpace(sql[ws[i].pos+3:end]) != "" {
			continue
		}
		copy(out[ws[i].pos:], "'' ")
	}
	return string(out)
}

// maskedAll reports whether ac is the constant maskOrderByAll wrote.
func (b *binder) maskedAll(ac *pg.A_Const) bool {
	if ac == nil || ac.GetSval() == nil || ac.GetSval().Sval != "" {
		return false
	}
	i := int(ac.Location)
	return i >= 0 && i+3 <= len(b.sql) && strings.EqualFold(b.sql[i:i+3], "all")
}

// orderByAll reports whether sel's ORDER BY is DuckDB's ORDER BY ALL, and
// returns its one sort item.
func (b *binder) orderByAll(sel *pg.SelectStmt) (*pg.SortBy, bool) {
	if len(sel.SortClause) != 1 {
		return nil, false
	}
	sb := sel.SortClause[0].GetSortBy()
	if sb == nil || !b.maskedAll(sb.Node.GetAConst()) {
		return nil, false
	}
	return sb, true
}
