package planner

import (
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/sqlparse"
)

// QUALIFY cond (DuckDB: a filter on the window functions' results, after
// WHERE, GROUP BY, HAVING and WINDOW, before ORDER BY and LIMIT) is
// syntax the Postgres grammar lacks. Before parsing, splitQualify blanks
// each QUALIFY clause (keyword and condition, outside string literals,
// quoted identifiers and comments) out of the statement, so the parser
// sees the rest at the same byte offsets, and parses the condition alone
// as "SELECT cond" written over the blanked statement: SELECT takes the
// place of the 7 bytes of "QUALIFY", so the condition's locations (and
// its syntax errors) are those of the original text. The binder puts
// each condition on the SELECT it belongs to, the last SELECT keyword
// before it at the same parenthesis depth, as a filter over the windows.

// qualifyClause is one QUALIFY clause of a statement.
type qualifyClause struct {
	selectPos int32    // byte offset of its SELECT keyword
	pos       int32    // byte offset of the QUALIFY keyword
	cond      *pg.Node // the parsed condition
	used      bool
}

// qualifies are a statement's QUALIFY clauses and SELECT keyword offsets.
type qualifies struct {
	clauses []*qualifyClause
	selects []int32 // sorted
}

// qualifyEnds are the words that end a QUALIFY condition at its depth.
var qualifyEnds = map[string]bool{"order": true, "limit": true, "offset": true, "fetch": true, "union": true,
	"intersect": true, "except": true, "window": true, ";": true, ")": true}

// splitQualify returns sql with its QUALIFY clauses blanked, and the
// clauses; a condition that does not parse is a syntax error.
func splitQualify(sql string) (string, *qualifies, error) {
	if !strings.Contains(strings.ToLower(sql), "qualify") {
		return sql, nil, nil
	}
	q := &qualifies{}
	var spans [][2]int // [qualify keyword, end)
	var owners []int
	depth := 0
	lastSelect := map[int]int{}
	cur := map[int]int{} // depth -> index in spans of the open QUALIFY clause
	closeAt := func(d, end int) {
		if k, ok := cur[d]; ok {
			spans[k][1] = end
			delete(cur, d)
		}
	}
	sqlWords(sql, func(pos int, w string) {
		if qualifyEnds[w] {
			closeAt(depth, pos)
		}
		switch w {
		case "(":
			depth++
		case ")":
			delete(lastSelect, depth)
			depth--
		case "select":
			lastSelect[depth] = pos
			q.selects = append(q.selects, int32(pos))
		case "qualify":
			if _, ok := cur[depth]; ok {
				return
			}
			sel, ok := lastSelect[depth]
			if !ok {
				sel = -1
			}
			cur[depth] = len(spans)
			spans = append(spans, [2]int{pos, len(sql)})
			owners = append(owners, sel)
		}
	})
	if len(spans) == 0 {
		return sql, nil, nil
	}
	masked := []byte(sql)
	for k, sp := range spans {
		blank := []byte(strings.Repeat(" ", len(sql)))
		copy(blank[sp[0]:], "SELECT ")
		copy(blank[sp[0]+7:sp[1]], sql[sp[0]+7:sp[1]])
		for i := sp[0]; i < sp[1]; i++ {
			masked[i] = ' '
		}
		condSQL := string(blank)
		tree, err := sqlparse.Parse(condSQL)
		if err != nil {
			return "", nil, syntaxError(sql, err)
		}
		var cond *pg.Node
		if len(tree.Stmts) == 1 {
			if sel := tree.Stmts[0].Stmt.GetSelectStmt(); sel != nil && len(sel.TargetList) == 1 && sel.FromClause == nil {
				cond = sel.TargetList[0].GetResTarget().GetVal()
			}
		}
		if cond == nil {
			return "", nil, &Error{Code: CodeSyntax, Pos: charPos(sql, int32(sp[0])), Msg: "syntax error: QUALIFY needs one condition"}
		}
		q.clauses = append(q.clauses, &qualifyClause{selectPos: int32(owners[k]), pos: int32(sp[0]), cond: cond})
	}
	sort.Slice(q.selects, func(i, j int) bool { return q.selects[i] < q.selects[j] })
	return string(masked), q, nil
}

// qualifyOf returns the QUALIFY condition of sel (nil if it has none):
// the clause whose SELECT keyword is the last one before sel's first
// select-list item.
func (b *binder) qualifyOf(sel *pg.SelectStmt) *qualifyClause {
	if b.qualify == nil || len(sel.TargetList) == 0 {
		return nil
	}
	first := sel.TargetList[0].GetResTarget().GetLocation()
	k := sort.Search(len(b.qualify.selects), func(i int) bool { return b.qualify.selects[i] >= first }) - 1
	if k < 0 {
		return nil
	}
	for _, c := range b.qualify.clauses {
		if c.selectPos == b.qualify.selects[k] {
			c.used = true
			return c
		}
	}
	return nil
}

// unusedQualify refuses a QUALIFY clause no SELECT took (one after a
// VALUES list, say).
func (b *binder) unusedQualify() error {
	if b.qualify == nil {
		return nil
	}
	for _, c := range b.qualify.clauses {
		if !c.used {
			return b.unsupported(c.pos, "QUALIFY here (only after a SELECT's FROM, WHERE, GROUP BY, HAVING or WINDOW)")
		}
	}
	return nil
}
