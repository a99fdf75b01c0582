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
