package pgwire

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// The fallback for catalog SELECTs the planner cannot plan (see
// catalog_engine.go; every other one runs on sluice's own planner and
// executor). It evaluates a SELECT over the emulated catalog
// relations as a small relational engine over rows in memory: FROM with
// comma joins, [LEFT|RIGHT|FULL|CROSS] JOIN ... ON/USING, subqueries and
// set-returning functions (LATERAL too), WHERE, GROUP BY with aggregates,
// HAVING, window functions (row_number, rank, dense_rank), DISTINCT,
// UNION/INTERSECT/EXCEPT, WITH, ORDER BY and LIMIT/OFFSET; expressions
// with SQL's three-valued logic, correlated subqueries (scalar, EXISTS,
// IN/ANY/ALL), LIKE/ILIKE, regular expressions, casts (regclass and the
// other reg types, arrays), CASE, COALESCE and the functions clients call.
//
// What it cannot evaluate it refuses with SL005 (SQLSTATE 0A000) naming
// the construct, rather than answering wrongly: a function, operator or
// node it does not know fails when it is evaluated. An expression over
// the rows of an empty relation is never evaluated, as in Postgres, so a
// query over pg_index (sluice has no indexes) that calls a function the
// emulation lacks still answers: no rows.

// column is one column of a relation being evaluated.
type column struct {
	qual string // the FROM item's alias or relation name; "" for an output column
	name string
}

// relation is an intermediate result: columns and rows of values (nil,
// int64, float64, string, bool, []any arrays, regValue).
type relation struct {
	cols []column
	rows [][]any
	// open are FROM items whose columns are not modelled (catalog
	// relations that sluice has nothing in): any column of theirs reads
	// as NULL.
	open []string
}

// regValue is a value of a reg* type (regclass, regtype, ...): compared
// as its oid, printed as its name.
type regValue struct {
	oid  int64
	name string
}

// scope is a row an expression is evaluated over, and the scopes of the
// queries around it (for correlated subqueries).
type scope struct {
	rel    *relation
	row    []any
	parent *scope
	group  [][]any // the rows of the group under aggregation; nil outside
}

// evaluator evaluates one statement.
type evaluator struct {
	m      *emulation
	ctes   []map[string]*relation
	winCol map[*pg_query.FuncCall]int // a window function's hidden column
	now    time.Time
}

func unsupported(format string, args ...any) error {
	return plan.Errorf(plan.CodeUnsupported, "unsupported in the catalog emulation: "+format, args...)
}

// selectStmt evaluates a SELECT (with set operations, VALUES, WITH).
func (ev *evaluator) selectStmt(sel *pg_query.SelectStmt, parent *scope) (*relation, error) {
	if sel.WithClause != nil {
		if sel.WithClause.Recursive {
			return nil, unsupported("WITH RECURSIVE")
		}
		frame := map[string]*relation{}
		ev.ctes = append(ev.ctes, frame)
		defer func() { ev.ctes = ev.ctes[:len(ev.ctes)-1] }()
		for _, c := range sel.WithClause.Ctes {
			ce := c.GetCommonTableExpr()
			q := ce.Ctequery.GetSelectStmt()
			if q == nil {
				return nil, unsupported("a WITH query that is not a SELECT")
			}
			r, err := ev.selectStmt(q, parent)
			if err != nil {
				return nil, err
			}
			r = renameCols(r, ce.Aliascolnames)
			frame[lower(ce.Ctename)] = r
		}
	}
	var out *relation
	var err error
	switch {
	case sel.Op != pg_query.SetOperation_SETOP_NONE:
		out, err = ev.setOp(sel, parent)
	case len(sel.ValuesLists) > 0:
		out, err = ev.values(sel, parent)
	default:
		return ev.query(sel, parent)
	}
	if err != nil {
		return nil, err
	}
	// ORDER BY and LIMIT of a set operation or VALUES: over its output.
	keep := make([][]any, len(out.rows))
	copy(keep, out.rows)
	return ev.orderLimit(sel, out, out, keep, parent)
}

func renameCols(r *relation, names []*pg_query.Node) *relation {
	if len(names) == 0 {
		return r
	}
	cols := append([]column(nil), r.cols...)
	for i, n := range names {
		if i < len(cols) {
			cols[i].name = strVal(n)
		}
	}
	return &relation{cols: cols, rows: r.rows, open: r.open}
}

func (ev *evaluator) values(sel *pg_query.SelectStmt, parent *scope) (*relation, error) {
	out := &relation{}
	for i, l := range sel.ValuesLists {
		items := l.GetList().GetItems()
		if i == 0 {
			for j := range items {
				out.cols = append(out.cols, column{name: fmt.Sprintf("column%d", j+1)})
			}
		}
		if len(items) != len(out.cols) {
			return nil, plan.Errorf(plan.CodeSyntax, "VALUES lists must all be the same length")
		}
		row := make([]any, len(items))
		for j, it := range items {
			v, err := ev.eval(it, &scope{rel: &relation{}, parent: parent})
			if err != nil {
				return nil, err
			}
			row[j] = v
		}
		out.rows = append(out.rows, row)
	}
	return out, nil
}

func (ev *evaluator) setOp(sel *pg_query.SelectStmt, parent *scope) (*relation, error) {
	l, err := ev.selectStmt(sel.Larg, parent)
	if err != nil {
		return nil, err
	}
	r, err := ev.selectStmt(sel.Rarg, parent)
	if err != nil {
		return nil, err
	}
	if len(l.cols) != len(r.cols) {
		return nil, plan.Errorf(plan.CodeSyntax, "each %s query must have the same number of columns", setOpName(sel.Op))
	}
	out := &relation{cols: l.cols}
	count := func(rows [][]any) map[string]int {
		m := map[string]int{}
		for _, row := range rows {
			m[rowKey(row)]++
		}
		return m
	}
	switch sel.Op {
	case pg_query.SetOperation_SETOP_UNION:
		out.rows = append(append(out.rows, l.rows...), r.rows...)
		if !sel.All {
			out.rows = distinctRows(out.rows)
		}
	case pg_query.SetOperation_SETOP_INTERSECT:
		rc := count(r.rows)
		for _, row := range l.rows {
			if k := rowKey(row); rc[k] > 0 {
				rc[k]--
				out.rows = append(out.rows, row)
			}
		}
		if !sel.All {
			out.rows = distinctRows(out.rows)
		}
	case pg_query.SetOperation_SETOP_EXCEPT:
		rc := count(r.rows)
		for _, row := range l.rows {
			k := rowKey(row)
			if sel.All && rc[k] > 0 {
				rc[k]--
				continue
			}
			if !sel.All && rc[k] > 0 {
				continue
			}
			out.rows = append(out.rows, row)
		}
		if !sel.All {
			out.rows = distinctRows(out.rows)
		}
	}
	return out, nil
}

func setOpName(op pg_query.SetOperation) string {
	return strings.TrimPrefix(op.String(), "SETOP_")
}

// rowKey is a row's identity for DISTINCT, GROUP BY and set operations.
func rowKey(row []any) string {
	var b strings.Builder
	for _, v := range row {
		b.WriteString(keyText(v))
		b.WriteByte(0)
	}
	return b.String()
}

// keyText is a value's identity: numbers by value, reg values by oid.
func keyText(v any) string {
	switch x := v.(type) {
	case nil:
		return "\x01null"
	case regValue:
		return strconv.FormatInt(x.oid, 10)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
	}
	return text(v)
}

func distinctRows(rows [][]any) [][]any {
	seen := map[string]bool{}
	var out [][]any
	for _, r := range rows {
		k := rowKey(r)
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// query evaluates a plain SELECT: FROM, WHERE, GROUP BY, HAVING, window
// functions, the target list, DISTINCT, ORDER BY, LIMIT.
func (ev *evaluator) query(sel *pg_query.SelectStmt, parent *scope) (*relation, error) {
	if sel.IntoClause != nil {
		return nil, unsupported("SELECT INTO")
	}
	if len(sel.LockingClause) > 0 {
		return nil, unsupported("FOR UPDATE/SHARE")
	}
	in, err := ev.from(sel.FromClause, sel.WhereClause, parent)
	if err != nil {
		return nil, err
	}
	// WHERE.
	if sel.WhereClause != nil {
		var kept [][]any
		for _, row := range in.rows {
			v, err := ev.eval(sel.WhereClause, &scope{rel: in, row: row, parent: parent})
			if err != nil {
				return nil, err
			}
			if v == true {
				kept = append(kept, row)
			}
		}
		in = &relation{cols: in.cols, rows: kept, open: in.open}
	}
	// Aggregation: one scope per group (its first row, and its rows).
	aggregated := len(sel.GroupClause) > 0 || sel.HavingClause != nil || hasAggregate(sel.TargetList) || hasAggregateSort(sel.SortClause)
	var scopes []*scope
	if aggregated {
		if sel.GroupClause != nil && hasGroupingSets(sel.GroupClause) {
			return nil, unsupported("GROUPING SETS, ROLLUP and CUBE")
		}
		groups := map[string]int{}
		for _, row := range in.rows {
			sc := &scope{rel: in, row: row, parent: parent}
			var key []any
			for _, g := range sel.GroupClause {
				v, err := ev.groupKey(g, sel.TargetList, sc)
				if err != nil {
					return nil, err
				}
				key = append(key, v)
			}
			k := rowKey(key)
			i, ok := groups[k]
			if !ok {
				i = len(scopes)
				groups[k] = i
				scopes = append(scopes, &scope{rel: in, row: row, parent: parent, group: [][]any{}})
			}
			scopes[i].group = append(scopes[i].group, row)
		}
		if len(sel.GroupClause) == 0 && len(scopes) == 0 {
			// Aggregates over no rows: one row (count 0, others NULL).
			scopes = append(scopes, &scope{rel: in, row: make([]any, len(in.cols)), parent: parent, group: [][]any{}})
		}
		if sel.HavingClause != nil {
			var kept []*scope
			for _, sc := range scopes {
				v, err := ev.eval(sel.HavingClause, sc)
				if err != nil {
					return nil, err
				}
				if v == true {
					kept = append(kept, sc)
				}
			}
			scopes = kept
		}
	} else {
		// Window functions: a hidden column each, computed over the rows.
		if wins := windowCalls(sel.TargetList, sel.SortClause); len(wins) > 0 {
			if in, err = ev.windows(in, wins, parent); err != nil {
				return nil, err
			}
		}
		for _, row := range in.rows {
			scopes = append(scopes, &scope{rel: in, row: row, parent: parent})
		}
	}
	// The target list.
	out := &relation{}
	type target struct {
		expr *pg_query.Node
		col  int // a column of in (from *), or -1
	}
	var targets []target
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			continue
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			qual := ""
			if len(cr.Fields) >= 2 {
				qual = strVal(cr.Fields[len(cr.Fields)-2])
			}
			found := false
			for i, c := range in.cols {
				if strings.HasPrefix(c.name, "\x00") || (qual != "" && c.qual != qual) {
					continue
				}
				found = true
				out.cols = append(out.cols, column{name: c.name})
				targets = append(targets, target{col: i})
			}
			if !found && qual != "" && !contains(in.open, qual) {
				if _, ok := ev.qualKnown(in, qual); !ok {
					return nil, plan.Errorf(plan.CodeUnknownTbl, "missing FROM-clause entry for table %q", qual)
				}
			}
			if !found && qual != "" && contains(in.open, qual) {
				return nil, unsupported("%s.* of a catalog relation whose columns are not emulated", qual)
			}
			continue
		}
		out.cols = append(out.cols, column{name: targetName(rt)})
		targets = append(targets, target{expr: rt.Val, col: -1})
	}
	rows := make([][]any, 0, len(scopes))
	for _, sc := range scopes {
		row := make([]any, len(targets))
		for j, t := range targets {
			if t.col >= 0 {
				row[j] = sc.row[t.col]
				continue
			}
			v, err := ev.eval(t.expr, sc)
			if err != nil {
				return nil, err
			}
			row[j] = v
		}
		rows = append(rows, row)
	}
	out.rows = rows
	if len(sel.DistinctClause) > 0 {
		if len(sel.DistinctClause) > 1 || sel.DistinctClause[0] != nil && sel.DistinctClause[0].Node != nil {
			return nil, unsupported("DISTINCT ON")
		}
		var keptRows [][]any
		var keptScopes []*scope
		seen := map[string]bool{}
		for i, r := range out.rows {
			if k := rowKey(r); !seen[k] {
				seen[k] = true
				keptRows = append(keptRows, r)
				keptScopes = append(keptScopes, scopes[i])
			}
		}
		out.rows, scopes = keptRows, keptScopes
	}
	return ev.orderLimitScopes(sel, out, scopes, parent)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (ev *evaluator) qualKnown(in *relation, qual string) (int, bool) {
	for i, c := range in.cols {
		if c.qual == qual {
			return i, true
		}
	}
	return -1, false
}

// groupKey evaluates a GROUP BY item: an output position, an output
// column's name, or an expression over the input.
func (ev *evaluator) groupKey(g *pg_query.Node, targets []*pg_query.Node, sc *scope) (any, error) {
	if v, ok := constValue(g); ok {
		if p, ok := v.(int64); ok {
			if p < 1 || int(p) > len(targets) {
				return nil, plan.Errorf(plan.CodeUnknownCol, "GROUP BY position %d is not in select list", p)
			}
			return ev.eval(targets[p-1].GetResTarget().Val, sc)
		}
	}
	return ev.eval(g, sc)
}

func hasGroupingSets(gs []*pg_query.Node) bool {
	for _, g := range gs {
		if g.GetGroupingSet() != nil {
			return true
		}
	}
	return false
}

// aggregates are the aggregate functions the emulation evaluates.
var aggregates = map[string]bool{
	"count": true, "min": true, "max": true, "sum": true, "avg": true, "string_agg": true, "array_agg": true,
	"bool_and": true, "bool_or": true, "every": true,
}

func hasAggregate(nodes []*pg_query.Node) bool {
	found := false
	for _, n := range nodes {
		walkExpr(n, func(m *pg_query.Node) {
			if fc := m.GetFuncCall(); fc != nil && fc.Over == nil && aggregates[funcName(fc)] {
				found = true
			}
		})
	}
	return found
}

func hasAggregateSort(sorts []*pg_query.Node) bool {
	var nodes []*pg_query.Node
	for _, s := range sorts {
		if sb := s.GetSortBy(); sb != nil {
			nodes = append(nodes, sb.Node)
		}
	}
	return hasAggregate(nodes)
}

// walkExpr calls fn on the nodes of an expression, not descending into
// subqueries (their aggregates and window functions are theirs).
func walkExpr(n *pg_query.Node, fn func(*pg_query.Node)) {
	walkUntil(n, func(m *pg_query.Node) bool {
		fn(m)
		return m.GetSubLink() == nil
	})
}

func windowCalls(targets, sorts []*pg_query.Node) []*pg_query.FuncCall {
	var out []*pg_query.FuncCall
	for _, n := range append(append([]*pg_query.Node(nil), targets...), sorts...) {
		walkExpr(n, func(m *pg_query.Node) {
			if fc := m.GetFuncCall(); fc != nil && fc.Over != nil {
				out = append(out, fc)
			}
		})
	}
	return out
}

// windows adds a hidden column per window function call.
func (ev *evaluator) windows(in *relation, calls []*pg_query.FuncCall, parent *scope) (*relation, error) {
	out := &relation{cols: append([]column(nil), in.cols...), open: in.open}
	rows := make([][]any, len(in.rows))
	for i, r := range in.rows {
		rows[i] = append([]any(nil), r...)
	}
	if ev.winCol == nil {
		ev.winCol = map[*pg_query.FuncCall]int{}
	}
	for _, fc := range calls {
		name := funcName(fc)
		switch name {
		case "row_number", "rank", "dense_rank":
		default:
			return nil, unsupported("window function %s()", name)
		}
		w := fc.Over
		if w.Refname != "" || w.Name != "" {
			return nil, unsupported("named windows")
		}
		type item struct {
			i    int
			part string
			keys []any
		}
		items := make([]item, len(in.rows))
		for i, r := range in.rows {
			sc := &scope{rel: in, row: r, parent: parent}
			var part []any
			for _, p := range w.PartitionClause {
				v, err := ev.eval(p, sc)
				if err != nil {
					return nil, err
				}
				part = append(part, v)
			}
			var keys []any
			for _, o := range w.OrderClause {
				v, err := ev.eval(o.GetSortBy().Node, sc)
				if err != nil {
					return nil, err
				}
				keys = append(keys, v)
			}
			items[i] = item{i: i, part: rowKey(part), keys: keys}
		}
		sorts := make([]*pg_query.SortBy, len(w.OrderClause))
		for i, o := range w.OrderClause {
			sorts[i] = o.GetSortBy()
		}
		sort.SliceStable(items, func(a, b int) bool {
			if items[a].part != items[b].part {
				return items[a].part < items[b].part
			}
			return compareKeys(items[a].keys, items[b].keys, sorts) < 0
		})
		vals := make([]any, len(in.rows))
		var n, rank, dense int64
		for k, it := range items {
			if k == 0 || it.part != items[k-1].part {
				n, rank, dense = 0, 0, 0
			}
			n++
			if k == 0 || it.part != items[k-1].part || compareKeys(it.keys, items[k-1].keys, sorts) != 0 {
				rank, dense = n, dense+1
			}
			switch name {
			case "row_number":
				vals[it.i] = n
			case "rank":
				vals[it.i] = rank
			case "dense_rank":
				vals[it.i] = dense
			}
		}
		ev.winCol[fc] = len(out.cols)
		out.cols = append(out.cols, column{name: "\x00window"})
		for i := range rows {
			rows[i] = append(rows[i], vals[i])
		}
	}
	out.rows = rows
	return out, nil
}

// compareKeys orders two sort keys as ORDER BY does: ascending with NULLs
// last unless told otherwise, descending with NULLs first.
func compareKeys(a, b []any, sorts []*pg_query.SortBy) int {
	for i := range a {
		desc := sorts[i].SortbyDir == pg_query.SortByDir_SORTBY_DESC
		nullsFirst := desc
		switch sorts[i].SortbyNulls {
		case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
			nullsFirst = true
		case pg_query.SortByNulls_SORTBY_NULLS_LAST:
			nullsFirst = false
		}
		x, y := a[i], b[i]
		var c int
		switch {
		case x == nil && y == nil:
			c = 0
		case x == nil:
			c = 1
			if nullsFirst {
				c = -1
			}
		case y == nil:
			c = -1
			if nullsFirst {
				c = 1
			}
		default:
			c = compare(x, y)
			if desc {
				c = -c
			}
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// orderLimitScopes sorts the output rows by ORDER BY (output positions,
// output names, or expressions over each row's input scope) and applies
// OFFSET and LIMIT.
func (ev *evaluator) orderLimitScopes(sel *pg_query.SelectStmt, out *relation, scopes []*scope, parent *scope) (*relation, error) {
	if len(sel.SortClause) > 0 {
		sorts := make([]*pg_query.SortBy, len(sel.SortClause))
		keys := make([][]any, len(out.rows))
		for j, s := range sel.SortClause {
			sb := s.GetSortBy()
			if sb == nil || len(sb.UseOp) > 0 {
				return nil, unsupported("ORDER BY ... USING")
			}
			sorts[j] = sb
			col := -1
			if v, ok := constValue(sb.Node); ok {
				p, isInt := v.(int64)
				if !isInt || p < 1 || int(p) > len(out.cols) {
					return nil, plan.Errorf(plan.CodeUnknownCol, "ORDER BY position %v is not in select list", v)
				}
				col = int(p - 1)
			} else if cr := sb.Node.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
				name := strVal(cr.Fields[0])
				for i, c := range out.cols {
					if c.name == name {
						if col >= 0 {
							return nil, plan.Errorf(plan.CodeAmbiguous, "ORDER BY %q is ambiguous", name)
						}
						col = i
					}
				}
			}
			for i := range out.rows {
				if col >= 0 {
					keys[i] = append(keys[i], out.rows[i][col])
					continue
				}
				sc := scopes[i]
				if sc == nil {
					return nil, unsupported("ORDER BY an expression of a set operation's output")
				}
				v, err := ev.eval(sb.Node, sc)
				if err != nil {
					return nil, err
				}
				keys[i] = append(keys[i], v)
			}
		}
		idx := make([]int, len(out.rows))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return compareKeys(keys[idx[a]], keys[idx[b]], sorts) < 0 })
		sorted := make([][]any, len(idx))
		for i, j := range idx {
			sorted[i] = out.rows[j]
		}
		out.rows = sorted
	}
	bound := func(n *pg_query.Node, what string) (int, bool, error) {
		if n == nil {
			return 0, false, nil
		}
		v, err := ev.eval(n, &scope{rel: &relation{}, parent: parent})
		if err != nil {
			return 0, false, err
		}
		if v == nil {
			return 0, false, nil
		}
		i, ok := toInt(v)
		if !ok || i < 0 {
			return 0, false, plan.Errorf(plan.CodeValue, "%s must be a non-negative integer, got %v", what, v)
		}
		return int(i), true, nil
	}
	if sel.LimitOption == pg_query.LimitOption_LIMIT_OPTION_WITH_TIES {
		return nil, unsupported("FETCH ... WITH TIES")
	}
	off, ok, err := bound(sel.LimitOffset, "OFFSET")
	if err != nil {
		return nil, err
	}
	if ok {
		out.rows = out.rows[min(off, len(out.rows)):]
	}
	n, ok, err := bound(sel.LimitCount, "LIMIT")
	if err != nil {
		return nil, err
	}
	if ok && n < len(out.rows) {
		out.rows = out.rows[:n]
	}
	return out, nil
}

// orderLimit is orderLimitScopes for an output that is its own input (a
// set operation or VALUES): ORDER BY names its columns.
func (ev *evaluator) orderLimit(sel *pg_query.SelectStmt, out, in *relation, _ [][]any, parent *scope) (*relation, error) {
	scopes := make([]*scope, len(out.rows))
	for i, r := range out.rows {
		scopes[i] = &scope{rel: in, row: r, parent: parent}
	}
	return ev.orderLimitScopes(sel, out, scopes, parent)
}

// from evaluates the FROM list: its items joined left to right. A comma
// join takes the WHERE conjuncts that its columns can answer as its join
// condition (the rows WHERE keeps are the same; the product is smaller).
func (ev *evaluator) from(items []*pg_query.Node, where *pg_query.Node, parent *scope) (*relation, error) {
	cur := &relation{rows: [][]any{{}}}
	conjuncts := splitAnd(where)
	// Each item on its own first: an empty one makes the whole product
	// empty (pgjdbc's getImportedKeys joins nine relations, one of them
	// pg_constraint, by commas).
	rels := make([]*relation, len(items))
	lateral := make([]bool, len(items))
	empty := false
	for i, it := range items {
		var err error
		if rels[i], lateral[i], err = ev.fromItemRel(it, parent); err != nil {
			return nil, err
		}
		empty = empty || (!lateral[i] && len(rels[i].rows) == 0)
	}
	if empty && !slices.Contains(lateral, true) {
		out := &relation{}
		for _, r := range rels {
			out.cols = append(out.cols, r.cols...)
			out.open = append(out.open, r.open...)
		}
		return out, nil
	}
	for i, it := range items {
		var err error
		if i == 0 {
			if lateral[0] {
				cur, err = ev.lateralJoin(cur, it, pg_query.JoinType_JOIN_INNER, nil, parent)
			} else {
				cur, err = ev.join(cur, rels[0], pg_query.JoinType_JOIN_INNER, nil, parent)
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		right, lateral := rels[i], lateral[i]
		if lateral {
			cur, err = ev.lateralJoin(cur, it, pg_query.JoinType_JOIN_INNER, nil, parent)
		} else {
			joined := &relation{cols: append(append([]column(nil), cur.cols...), right.cols...), open: append(append([]string(nil), cur.open...), right.open...)}
			var on []*pg_query.Node
			for _, c := range conjuncts {
				if ev.answerable(c, joined, parent) {
					on = append(on, c)
				}
			}
			cur, err = ev.join(cur, right, pg_query.JoinType_JOIN_INNER, on, parent)
		}
		if err != nil {
			return nil, err
		}
	}
	return cur, nil
}

func splitAnd(n *pg_query.Node) []*pg_query.Node {
	if n == nil {
		return nil
	}
	if b := n.GetBoolExpr(); b != nil && b.Boolop == pg_query.BoolExprType_AND_EXPR {
		var out []*pg_query.Node
		for _, a := range b.Args {
			out = append(out, splitAnd(a)...)
		}
		return out
	}
	return []*pg_query.Node{n}
}

// answerable reports whether every column an expression names (outside
// its subqueries) resolves in rel or the scopes around it, and it has no
// subquery: then it can be a join condition over rel.
func (ev *evaluator) answerable(n *pg_query.Node, rel *relation, parent *scope) bool {
	ok := true
	walk(n, func(m *pg_query.Node) {
		switch {
		case m.GetSubLink() != nil, m.GetFuncCall() != nil && m.GetFuncCall().Over != nil:
			ok = false
		case m.GetColumnRef() != nil:
			qual, name, star := refParts(m.GetColumnRef())
			if star {
				ok = false
				return
			}
			sc := &scope{rel: rel, row: make([]any, len(rel.cols)), parent: parent}
			if _, err := sc.lookup(qual, name); err != nil {
				ok = false
			}
		}
	})
	return ok
}

// fromItemRel evaluates a FROM item on its own; lateral says it must be
// evaluated per row of what precedes it instead.
func (ev *evaluator) fromItemRel(it *pg_query.Node, parent *scope) (*relation, bool, error) {
	switch {
	case it.GetRangeVar() != nil:
		r, err := ev.rangeVar(it.GetRangeVar())
		return r, false, err
	case it.GetRangeSubselect() != nil:
		rs := it.GetRangeSubselect()
		if rs.Lateral {
			return nil, true, nil
		}
		r, err := ev.subselect(rs, parent)
		return r, false, err
	case it.GetRangeFunction() != nil:
		rf := it.GetRangeFunction()
		if rf.Lateral || refersOutside(rf) {
			return nil, true, nil
		}
		r, err := ev.rangeFunction(rf, &scope{rel: &relation{}, parent: parent})
		return r, false, err
	case it.GetJoinExpr() != nil:
		r, err := ev.joinExpr(it.GetJoinExpr(), parent)
		return r, false, err
	}
	return nil, false, unsupported("FROM item %s", nodeKind(it))
}

// refersOutside reports whether a function in FROM names columns (then it
// is lateral to the items before it, as Postgres takes it).
func refersOutside(rf *pg_query.RangeFunction) bool {
	found := false
	for _, f := range rf.Functions {
		walk(f, func(m *pg_query.Node) {
			if m.GetColumnRef() != nil {
				found = true
			}
		})
	}
	return found
}

func (ev *evaluator) subselect(rs *pg_query.RangeSubselect, parent *scope) (*relation, error) {
	q := rs.Subquery.GetSelectStmt()
	if q == nil {
		return nil, unsupported("a subquery in FROM that is not a SELECT")
	}
	r, err := ev.selectStmt(q, parent)
	if err != nil {
		return nil, err
	}
	qual := ""
	if rs.Alias != nil {
		qual = rs.Alias.Aliasname
		r = renameCols(r, rs.Alias.Colnames)
	}
	return requalify(r, qual), nil
}

func requalify(r *relation, qual string) *relation {
	cols := make([]column, len(r.cols))
	for i, c := range r.cols {
		cols[i] = column{qual: qual, name: c.name}
	}
	return &relation{cols: cols, rows: r.rows}
}

// lateralJoin evaluates the FROM item it once per row of left, with that
// row in scope, and joins the results.
func (ev *evaluator) lateralJoin(left *relation, it *pg_query.Node, kind pg_query.JoinType, on []*pg_query.Node, parent *scope) (*relation, error) {
	var out *relation
	for _, lrow := range left.rows {
		sc := &scope{rel: left, row: lrow, parent: parent}
		var right *relation
		var err error
		switch {
		case it.GetRangeSubselect() != nil:
			right, err = ev.subselect(it.GetRangeSubselect(), sc)
		case it.GetRangeFunction() != nil:
			right, err = ev.rangeFunction(it.GetRangeFunction(), sc)
		default:
			err = unsupported("LATERAL %s", nodeKind(it))
		}
		if err != nil {
			return nil, err
		}
		one := &relation{cols: left.cols, rows: [][]any{lrow}, open: left.open}
		j, err := ev.join(one, right, kind, on, parent)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = j
		} else {
			out.rows = append(out.rows, j.rows...)
		}
	}
	if out == nil {
		// No rows on the left: the columns of the right side still
		// resolve (a lateral subquery's columns need a row to evaluate).
		right := &relation{}
		switch {
		case it.GetRangeSubselect() != nil:
			rs := it.GetRangeSubselect()
			q := rs.Subquery.GetSelectStmt()
			qual := ""
			if rs.Alias != nil {
				qual = rs.Alias.Aliasname
			}
			for _, t := range q.GetTargetList() {
				if rt := t.GetResTarget(); rt != nil {
					right.cols = append(right.cols, column{qual: qual, name: targetName(rt)})
				}
			}
			if rs.Alias != nil {
				right = renameCols(right, rs.Alias.Colnames)
			}
		case it.GetRangeFunction() != nil:
			cols, qual := functionColumns(it.GetRangeFunction())
			for _, c := range cols {
				right.cols = append(right.cols, column{qual: qual, name: c})
			}
		}
		out = &relation{cols: append(append([]column(nil), left.cols...), right.cols...), open: left.open}
	}
	return out, nil
}

func (ev *evaluator) joinExpr(j *pg_query.JoinExpr, parent *scope) (*relation, error) {
	if j.IsNatural {
		return nil, unsupported("NATURAL JOIN")
	}
	left, lateralL, err := ev.fromItemRel(j.Larg, parent)
	if err != nil {
		return nil, err
	}
	if lateralL {
		left, err = ev.lateralJoin(&relation{rows: [][]any{{}}}, j.Larg, pg_query.JoinType_JOIN_INNER, nil, parent)
		if err != nil {
			return nil, err
		}
	}
	on := splitAnd(j.Quals)
	var out *relation
	if j.Rarg.GetRangeFunction() != nil || j.Rarg.GetRangeSubselect() != nil {
		right, lateral, err := ev.fromItemRel(j.Rarg, parent)
		if err != nil {
			return nil, err
		}
		if lateral {
			if len(j.UsingClause) > 0 {
				return nil, unsupported("JOIN LATERAL ... USING")
			}
			if j.Jointype != pg_query.JoinType_JOIN_INNER && j.Jointype != pg_query.JoinType_JOIN_LEFT {
				return nil, unsupported("%s JOIN LATERAL", j.Jointype)
			}
			out, err = ev.lateralJoin(left, j.Rarg, j.Jointype, on, parent)
		} else {
			out, err = ev.joinUsing(left, right, j, on, parent)
		}
		if err != nil {
			return nil, err
		}
	} else {
		right, _, err := ev.fromItemRel(j.Rarg, parent)
		if err != nil {
			return nil, err
		}
		if out, err = ev.joinUsing(left, right, j, on, parent); err != nil {
			return nil, err
		}
	}
	if j.Alias != nil {
		out = renameCols(requalify(out, j.Alias.Aliasname), j.Alias.Colnames)
	}
	return out, nil
}

// joinUsing joins with ON conjuncts, or USING columns (equalities).
func (ev *evaluator) joinUsing(left, right *relation, j *pg_query.JoinExpr, on []*pg_query.Node, parent *scope) (*relation, error) {
	if len(j.UsingClause) == 0 {
		return ev.join(left, right, j.Jointype, on, parent)
	}
	if j.Jointype != pg_query.JoinType_JOIN_INNER && j.Jointype != pg_query.JoinType_JOIN_LEFT {
		return nil, unsupported("%s JOIN ... USING", j.Jointype)
	}
	type pair struct{ l, r int }
	var pairs []pair
	for _, u := range j.UsingClause {
		name := strVal(u)
		l, r := -1, -1
		for i, c := range left.cols {
			if c.name == name {
				l = i
			}
		}
		for i, c := range right.cols {
			if c.name == name {
				r = i
			}
		}
		if l < 0 || r < 0 {
			return nil, plan.Errorf(plan.CodeUnknownCol, "column %q specified in USING clause does not exist", name)
		}
		pairs = append(pairs, pair{l, r})
	}
	out := &relation{cols: append(append([]column(nil), left.cols...), right.cols...), open: append(append([]string(nil), left.open...), right.open...)}
	for _, lr := range left.rows {
		matched := false
		for _, rr := range right.rows {
			ok := true
			for _, p := range pairs {
				if eq, _ := compareOp("=", lr[p.l], rr[p.r]); eq != true {
					ok = false
					break
				}
			}
			if ok {
				matched = true
				out.rows = append(out.rows, append(append([]any(nil), lr...), rr...))
			}
		}
		if !matched && j.Jointype == pg_query.JoinType_JOIN_LEFT {
			out.rows = append(out.rows, append(append([]any(nil), lr...), make([]any, len(right.cols))...))
		}
	}
	return out, nil
}

// join joins two relations on the conjuncts on (none: a cross join):
// a hash join on their column equalities, the rest evaluated per pair.
func (ev *evaluator) join(left, right *relation, kind pg_query.JoinType, on []*pg_query.Node, parent *scope) (*relation, error) {
	out := &relation{
		cols: append(append([]column(nil), left.cols...), right.cols...),
		open: append(append([]string(nil), left.open...), right.open...),
	}
	// Equalities of a left column and a right column: hash keys.
	var lkeys, rkeys []int
	var rest []*pg_query.Node
	for _, c := range on {
		if l, r, ok := equiColumns(c, left, right); ok {
			lkeys, rkeys = append(lkeys, l), append(rkeys, r)
			continue
		}
		rest = append(rest, c)
	}
	index := map[string][]int{}
	for i, rr := range right.rows {
		if k, ok := hashKey(rr, rkeys); ok {
			index[k] = append(index[k], i)
		}
	}
	matchedRight := make([]bool, len(right.rows))
	test := func(row []any) (bool, error) {
		sc := &scope{rel: out, row: row, parent: parent}
		for _, c := range rest {
			v, err := ev.eval(c, sc)
			if err != nil {
				return false, err
			}
			if v != true {
				return false, nil
			}
		}
		return true, nil
	}
	for _, lr := range left.rows {
		var cands []int
		if len(lkeys) > 0 {
			if k, ok := hashKey(lr, lkeys); ok {
				cands = index[k]
			}
		} else {
			cands = make([]int, len(right.rows))
			for i := range cands {
				cands[i] = i
			}
		}
		matched := false
		for _, ri := range cands {
			row := append(append(make([]any, 0, len(out.cols)), lr...), right.rows[ri]...)
			ok, err := test(row)
			if err != nil {
				return nil, err
			}
			if ok {
				matched = true
				matchedRight[ri] = true
				out.rows = append(out.rows, row)
			}
		}
		if !matched && (kind == pg_query.JoinType_JOIN_LEFT || kind == pg_query.JoinType_JOIN_FULL) {
			out.rows = append(out.rows, append(append([]any(nil), lr...), make([]any, len(right.cols))...))
		}
	}
	if kind == pg_query.JoinType_JOIN_RIGHT || kind == pg_query.JoinType_JOIN_FULL {
		for i, rr := range right.rows {
			if !matchedRight[i] {
				out.rows = append(out.rows, append(make([]any, len(left.cols)), rr...))
			}
		}
	}
	return out, nil
}

// equiColumns recognizes l = r over a column of each side.
func equiColumns(n *pg_query.Node, left, right *relation) (int, int, bool) {
	x := n.GetAExpr()
	if x == nil || x.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(x.Name) != 1 || strVal(x.Name[0]) != "=" {
		return 0, 0, false
	}
	a, b := x.Lexpr.GetColumnRef(), x.Rexpr.GetColumnRef()
	if a == nil || b == nil {
		return 0, 0, false
	}
	find := func(cr *pg_query.ColumnRef, rel, other *relation) int {
		qual, name, star := refParts(cr)
		if star {
			return -1
		}
		idx := -1
		for i, c := range rel.cols {
			if c.name == name && (qual == "" || c.qual == qual) {
				if idx >= 0 {
					return -1
				}
				idx = i
			}
		}
		if idx < 0 {
			return -1
		}
		for _, c := range other.cols { // it must be unambiguous across both sides
			if c.name == name && (qual == "" || c.qual == qual) {
				return -1
			}
		}
		return idx
	}
	if l, r := find(a, left, right), find(b, right, left); l >= 0 && r >= 0 {
		return l, r, true
	}
	if l, r := find(b, left, right), find(a, right, left); l >= 0 && r >= 0 {
		return l, r, true
	}
	return 0, 0, false
}

// hashKey is the join key of a row (false when a key is NULL: = is never
// true then).
func hashKey(row []any, cols []int) (string, bool) {
	var b strings.Builder
	for _, c := range cols {
		if row[c] == nil {
			return "", false
		}
		b.WriteString(keyText(row[c]))
		b.WriteByte(0)
	}
	return b.String(), true
}

// rangeVar is a named relation: a WITH query or a catalog relation.
func (ev *evaluator) rangeVar(rv *pg_query.RangeVar) (*relation, error) {
	name := lower(rv.Relname)
	qual := name
	if rv.Alias != nil {
		qual = rv.Alias.Aliasname
	}
	if rv.Schemaname == "" {
		for i := len(ev.ctes) - 1; i >= 0; i-- {
			if r, ok := ev.ctes[i][name]; ok {
				r = requalify(r, qual)
				if rv.Alias != nil {
					r = renameCols(r, rv.Alias.Colnames)
				}
				return r, nil
			}
		}
	}
	cols, rows, open, err := ev.m.relation(lower(rv.Schemaname), name)
	if err != nil {
		return nil, err
	}
	r := &relation{rows: rows}
	if open {
		r.open = []string{qual}
		return r, nil
	}
	for _, c := range cols {
		r.cols = append(r.cols, column{qual: qual, name: c})
	}
	if rv.Alias != nil {
		r = renameCols(r, rv.Alias.Colnames)
	}
	return r, nil
}

// functionColumns are the columns of a function in FROM, and its
// qualifier.
func functionColumns(rf *pg_query.RangeFunction) ([]string, string) {
	var name string
	if len(rf.Functions) > 0 {
		if l := rf.Functions[0].GetList(); l != nil && len(l.Items) > 0 {
			if fc := l.Items[0].GetFuncCall(); fc != nil {
				name = funcName(fc)
			}
		}
	}
	var cols []string
	switch name {
	case "pg_get_keywords":
		cols = []string{"word", "catcode", "barelabel", "catdesc", "baredesc"}
	case "_pg_expandarray":
		cols = []string{"x", "n"}
	default:
		cols = []string{name}
	}
	qual := name
	if rf.Alias != nil {
		qual = rf.Alias.Aliasname
		for i, c := range rf.Alias.Colnames {
			if i < len(cols) {
				cols[i] = strVal(c)
			}
		}
		if len(rf.Alias.Colnames) == 0 && len(cols) == 1 {
			cols[0] = qual // a one-column function takes its alias as the column name
		}
	}
	if rf.Ordinality {
		cols = append(cols, "ordinality")
	}
	return cols, qual
}

// rangeFunction evaluates a set-returning function in FROM.
func (ev *evaluator) rangeFunction(rf *pg_query.RangeFunction, sc *scope) (*relation, error) {
	if rf.IsRowsfrom || len(rf.Functions) != 1 || len(rf.Coldeflist) > 0 {
		return nil, unsupported("ROWS FROM and column definition lists")
	}
	l := rf.Functions[0].GetList()
	fc := l.GetItems()[0].GetFuncCall()
	if fc == nil {
		return nil, unsupported("FROM item %s", nodeKind(l.GetItems()[0]))
	}
	cols, qual := functionColumns(rf)
	args := make([]any, len(fc.Args))
	for i, a := range fc.Args {
		v, err := ev.eval(a, sc)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	var rows [][]any
	switch name := funcName(fc); name {
	case "pg_get_keywords":
		desc := map[byte]string{'U': "unreserved", 'C': "unreserved (cannot be function or type name)",
			'T': "reserved (can be function or type name)", 'R': "reserved"}
		for _, k := range keywords {
			bare := "requires AS"
			if k.barelabel {
				bare = "can be bare label"
			}
			rows = append(rows, []any{k.word, string(k.catcode), k.barelabel, desc[k.catcode], bare})
		}
	case "generate_series":
		if len(args) < 2 || len(args) > 3 {
			return nil, unsupported("generate_series with %d arguments", len(args))
		}
		if args[0] == nil || args[1] == nil {
			break
		}
		a, ok1 := toInt(args[0])
		b, ok2 := toInt(args[1])
		step := int64(1)
		ok3 := true
		if len(args) == 3 {
			step, ok3 = toInt(args[2])
		}
		if !ok1 || !ok2 || !ok3 || step == 0 {
			return nil, unsupported("generate_series over these arguments")
		}
		for v := a; (step > 0 && v <= b) || (step < 0 && v >= b); v += step {
			rows = append(rows, []any{v})
			if len(rows) > 100000 {
				return nil, unsupported("generate_series of more than 100000 rows")
			}
		}
	case "unnest":
		if len(args) != 1 {
			return nil, unsupported("unnest of %d arrays", len(args))
		}
		arr, err := arrayArg(args[0], name)
		if err != nil {
			return nil, err
		}
		for _, v := range arr {
			rows = append(rows, []any{v})
		}
	case "_pg_expandarray":
		arr, err := arrayArg(arg0(args), name)
		if err != nil {
			return nil, err
		}
		for i, v := range arr {
			rows = append(rows, []any{v, int64(i + 1)})
		}
	default:
		return nil, unsupported("function %s() in FROM", name)
	}
	if rf.Ordinality {
		for i := range rows {
			rows[i] = append(rows[i], int64(i+1))
		}
	}
	r := &relation{rows: rows}
	for _, c := range cols {
		r.cols = append(r.cols, column{qual: qual, name: c})
	}
	return r, nil
}

func arg0(args []any) any {
	if len(args) == 0 {
		return nil
	}
	return args[0]
}

func arrayArg(v any, fn string) ([]any, error) {
	switch a := v.(type) {
	case nil:
		return nil, nil
	case []any:
		return a, nil
	}
	return nil, unsupported("%s() of a %T", fn, v)
}

func nodeKind(n *pg_query.Node) string {
	if n == nil || n.Node == nil {
		return "nothing"
	}
	s := fmt.Sprintf("%T", n.Node)
	return strings.TrimPrefix(s, "*pg_query.Node_")
}

// refParts splits a column reference into its qualifier and name.
func refParts(cr *pg_query.ColumnRef) (qual, name string, star bool) {
	f := cr.Fields
	if f[len(f)-1].GetAStar() != nil {
		star = true
	} else {
		name = strVal(f[len(f)-1])
	}
	if len(f) >= 2 {
		qual = strVal(f[len(f)-2])
	}
	return qual, name, star
}

// lookup resolves a column in the scope or the ones around it.
func (sc *scope) lookup(qual, name string) (any, error) {
	for s := sc; s != nil; s = s.parent {
		if s.rel == nil {
			continue
		}
		idx := -1
		for i, c := range s.rel.cols {
			if c.name == name && (qual == "" || c.qual == qual) {
				if idx >= 0 {
					return nil, plan.Errorf(plan.CodeAmbiguous, "column reference %q is ambiguous", name)
				}
				idx = i
			}
		}
		if idx >= 0 {
			return s.row[idx], nil
		}
		// A relation whose columns are not modelled has no rows; its
		// columns are NULL (on the padded side of an outer join).
		if (qual != "" && contains(s.rel.open, qual)) || (qual == "" && len(s.rel.open) > 0) {
			return nil, nil
		}
	}
	if qual != "" {
		return nil, plan.Errorf(plan.CodeUnknownCol, "column %s.%s does not exist", qual, name)
	}
	return nil, plan.Errorf(plan.CodeUnknownCol, "column %q does not exist", name)
}

// eval evaluates an expression over a scope.
func (ev *evaluator) eval(n *pg_query.Node, sc *scope) (any, error) {
	if n == nil {
		return nil, nil
	}
	if v, ok := constValue(n); ok {
		if s, isFloat := n.GetAConst().GetVal().(*pg_query.A_Const_Fval); isFloat {
			f, err := strconv.ParseFloat(s.Fval.Fval, 64)
			if err != nil {
				return nil, plan.Errorf(plan.CodeInvalidCast, "invalid number %q", s.Fval.Fval)
			}
			return f, nil
		}
		return v, nil
	}
	switch {
	case n.GetColumnRef() != nil:
		qual, name, star := refParts(n.GetColumnRef())
		if star {
			return nil, unsupported("* in an expression")
		}
		return sc.lookup(qual, name)
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		v, err := ev.eval(tc.Arg, sc)
		if err != nil {
			return nil, err
		}
		return ev.cast(v, tc.TypeName)
	case n.GetCollateClause() != nil:
		return ev.eval(n.GetCollateClause().Arg, sc)
	case n.GetBoolExpr() != nil:
		return ev.boolExpr(n.GetBoolExpr(), sc)
	case n.GetNullTest() != nil:
		t := n.GetNullTest()
		v, err := ev.eval(t.Arg, sc)
		if err != nil {
			return nil, err
		}
		return (v == nil) == (t.Nulltesttype == pg_query.NullTestType_IS_NULL), nil
	case n.GetBooleanTest() != nil:
		t := n.GetBooleanTest()
		v, err := ev.eval(t.Arg, sc)
		if err != nil {
			return nil, err
		}
		b, _ := v.(bool)
		switch t.Booltesttype {
		case pg_query.BoolTestType_IS_TRUE:
			return v != nil && b, nil
		case pg_query.BoolTestType_IS_NOT_TRUE:
			return v == nil || !b, nil
		case pg_query.BoolTestType_IS_FALSE:
			return v != nil && !b, nil
		case pg_query.BoolTestType_IS_NOT_FALSE:
			return v == nil || b, nil
		case pg_query.BoolTestType_IS_UNKNOWN:
			return v == nil, nil
		case pg_query.BoolTestType_IS_NOT_UNKNOWN:
			return v != nil, nil
		}
	case n.GetAExpr() != nil:
		return ev.aExpr(n.GetAExpr(), sc)
	case n.GetCaseExpr() != nil:
		return ev.caseExpr(n.GetCaseExpr(), sc)
	case n.GetCoalesceExpr() != nil:
		for _, a := range n.GetCoalesceExpr().Args {
			v, err := ev.eval(a, sc)
			if err != nil || v != nil {
				return v, err
			}
		}
		return nil, nil
	case n.GetMinMaxExpr() != nil:
		mm := n.GetMinMaxExpr()
		var best any
		for _, a := range mm.Args {
			v, err := ev.eval(a, sc)
			if err != nil {
				return nil, err
			}
			if v == nil {
				continue
			}
			c := 0
			if best != nil {
				c = compare(v, best)
			}
			if best == nil || (mm.Op == pg_query.MinMaxOp_IS_GREATEST && c > 0) || (mm.Op == pg_query.MinMaxOp_IS_LEAST && c < 0) {
				best = v
			}
		}
		return best, nil
	case n.GetSqlvalueFunction() != nil:
		return ev.valueFunc(n.GetSqlvalueFunction())
	case n.GetFuncCall() != nil:
		return ev.call(n.GetFuncCall(), sc)
	case n.GetSubLink() != nil:
		return ev.subLink(n.GetSubLink(), sc)
	case n.GetAArrayExpr() != nil:
		var out []any
		for _, e := range n.GetAArrayExpr().Elements {
			v, err := ev.eval(e, sc)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	case n.GetAIndirection() != nil:
		ind := n.GetAIndirection()
		v, err := ev.eval(ind.Arg, sc)
		if err != nil {
			return nil, err
		}
		for _, i := range ind.Indirection {
			idx := i.GetAIndices()
			if idx == nil || idx.IsSlice {
				return nil, unsupported("%s indirection", nodeKind(i))
			}
			if v == nil {
				return nil, nil
			}
			arr, ok := v.([]any)
			if !ok {
				return nil, unsupported("a subscript of a %T", v)
			}
			k, err := ev.eval(idx.Uidx, sc)
			if err != nil {
				return nil, err
			}
			p, ok := toInt(k)
			if !ok {
				return nil, nil
			}
			if p < 1 || int(p) > len(arr) {
				v = nil
				continue
			}
			v = arr[p-1]
		}
		return v, nil
	case n.GetParamRef() != nil:
		return nil, plan.Errorf(plan.CodeValue, "there is no parameter $%d", n.GetParamRef().Number)
	}
	return nil, unsupported("expression %s", nodeKind(n))
}

func (ev *evaluator) boolExpr(b *pg_query.BoolExpr, sc *scope) (any, error) {
	switch b.Boolop {
	case pg_query.BoolExprType_AND_EXPR:
		out := any(true)
		for _, a := range b.Args {
			v, err := ev.eval(a, sc)
			if err != nil {
				return nil, err
			}
			switch v {
			case false:
				return false, nil
			case nil:
				out = nil
			case true:
			default:
				return nil, unsupported("AND of a %T", v)
			}
		}
		return out, nil
	case pg_query.BoolExprType_OR_EXPR:
		out := any(false)
		for _, a := range b.Args {
			v, err := ev.eval(a, sc)
			if err != nil {
				return nil, err
			}
			switch v {
			case true:
				return true, nil
			case nil:
				out = nil
			case false:
			default:
				return nil, unsupported("OR of a %T", v)
			}
		}
		return out, nil
	default:
		v, err := ev.eval(b.Args[0], sc)
		if err != nil || v == nil {
			return nil, err
		}
		x, ok := v.(bool)
		if !ok {
			return nil, unsupported("NOT of a %T", v)
		}
		return !x, nil
	}
}

func (ev *evaluator) caseExpr(ce *pg_query.CaseExpr, sc *scope) (any, error) {
	var arg any
	if ce.Arg != nil {
		v, err := ev.eval(ce.Arg, sc)
		if err != nil {
			return nil, err
		}
		arg = v
	}
	for _, w := range ce.Args {
		cw := w.GetCaseWhen()
		v, err := ev.eval(cw.Expr, sc)
		if err != nil {
			return nil, err
		}
		hit := v
		if ce.Arg != nil {
			if hit, err = compareOp("=", arg, v); err != nil {
				return nil, err
			}
		}
		if hit == true {
			return ev.eval(cw.Result, sc)
		}
	}
	return ev.eval(ce.Defresult, sc)
}

func (ev *evaluator) aExpr(x *pg_query.A_Expr, sc *scope) (any, error) {
	op := ""
	if len(x.Name) > 0 {
		op = strVal(x.Name[len(x.Name)-1])
	}
	evalBoth := func() (any, any, error) {
		l, err := ev.eval(x.Lexpr, sc)
		if err != nil {
			return nil, nil, err
		}
		r, err := ev.eval(x.Rexpr, sc)
		return l, r, err
	}
	switch x.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP, pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE:
		if x.Lexpr == nil { // a prefix operator
			r, err := ev.eval(x.Rexpr, sc)
			if err != nil {
				return nil, err
			}
			return unaryOp(op, r)
		}
		l, r, err := evalBoth()
		if err != nil {
			return nil, err
		}
		return compareOp(op, l, r)
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		l, r, err := evalBoth()
		if err != nil {
			return nil, err
		}
		arr, ok := r.([]any)
		if r != nil && !ok {
			if s, isText := r.(string); isText {
				if arr, err = parseArray(s); err != nil {
					return nil, err
				}
			} else {
				return nil, unsupported("%s ANY/ALL of a %T", op, r)
			}
		}
		if r == nil {
			return nil, nil
		}
		return quantified(op, l, arr, x.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ALL)
	case pg_query.A_Expr_Kind_AEXPR_IN:
		l, err := ev.eval(x.Lexpr, sc)
		if err != nil {
			return nil, err
		}
		var items []any
		for _, it := range x.Rexpr.GetList().GetItems() {
			v, err := ev.eval(it, sc)
			if err != nil {
				return nil, err
			}
			items = append(items, v)
		}
		if op == "<>" {
			return quantified("<>", l, items, true)
		}
		return quantified("=", l, items, false)
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		l, r, err := evalBoth()
		if err != nil {
			return nil, err
		}
		if eq, err := compareOp("=", l, r); err != nil {
			return nil, err
		} else if eq == true {
			return nil, nil
		}
		return l, nil
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		l, r, err := evalBoth()
		if err != nil {
			return nil, err
		}
		same := false
		switch {
		case l == nil || r == nil:
			same = l == nil && r == nil
		default:
			same = compare(l, r) == 0
		}
		return same == (x.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT), nil
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		l, err := ev.eval(x.Lexpr, sc)
		if err != nil {
			return nil, err
		}
		bounds := x.Rexpr.GetList().GetItems()
		lo, err := ev.eval(bounds[0], sc)
		if err != nil {
			return nil, err
		}
		hi, err := ev.eval(bounds[1], sc)
		if err != nil {
			return nil, err
		}
		a, err := compareOp(">=", l, lo)
		if err != nil {
			return nil, err
		}
		b, err := compareOp("<=", l, hi)
		if err != nil {
			return nil, err
		}
		v := and3(a, b)
		if x.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN && v != nil {
			return !v.(bool), nil
		}
		return v, nil
	}
	return nil, unsupported("operator %s (%s)", op, strings.TrimPrefix(x.Kind.String(), "AEXPR_"))
}

func and3(a, b any) any {
	if a == false || b == false {
		return false
	}
	if a == nil || b == nil {
		return nil
	}
	return true
}

// quantified is l op ANY (items) or, with all, l op ALL (items).
func quantified(op string, l any, items []any, all bool) (any, error) {
	out := any(all)
	for _, it := range items {
		v, err := compareOp(op, l, it)
		if err != nil {
			return nil, err
		}
		switch {
		case v == nil:
			out = nil
		case v.(bool) != all:
			return !all, nil
		}
	}
	return out, nil
}

func unaryOp(op string, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch op {
	case "-":
		switch x := v.(type) {
		case int64:
			return -x, nil
		case float64:
			return -x, nil
		}
	case "+":
		return v, nil
	}
	return nil, unsupported("prefix operator %s on a %T", op, v)
}

func (ev *evaluator) subLink(sl *pg_query.SubLink, sc *scope) (any, error) {
	q := sl.Subselect.GetSelectStmt()
	if q == nil {
		return nil, unsupported("a subquery that is not a SELECT")
	}
	r, err := ev.selectStmt(q, sc)
	if err != nil {
		return nil, err
	}
	switch sl.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK:
		return len(r.rows) > 0, nil
	case pg_query.SubLinkType_EXPR_SUBLINK:
		if len(r.cols) != 1 {
			return nil, plan.Errorf(plan.CodeSyntax, "subquery must return only one column")
		}
		switch len(r.rows) {
		case 0:
			return nil, nil
		case 1:
			return r.rows[0][0], nil
		}
		return nil, plan.Errorf(plan.CodeRuntime, "more than one row returned by a subquery used as an expression")
	case pg_query.SubLinkType_ARRAY_SUBLINK:
		out := []any{}
		for _, row := range r.rows {
			out = append(out, row[0])
		}
		return out, nil
	case pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK:
		if len(r.cols) != 1 {
			return nil, unsupported("a row comparison with a subquery")
		}
		l, err := ev.eval(sl.Testexpr, sc)
		if err != nil {
			return nil, err
		}
		op := "="
		if len(sl.OperName) > 0 {
			op = strVal(sl.OperName[len(sl.OperName)-1])
		}
		items := make([]any, len(r.rows))
		for i, row := range r.rows {
			items[i] = row[0]
		}
		return quantified(op, l, items, sl.SubLinkType == pg_query.SubLinkType_ALL_SUBLINK)
	}
	return nil, unsupported("subquery %s", sl.SubLinkType)
}

func (ev *evaluator) valueFunc(sv *pg_query.SQLValueFunction) (any, error) {
	switch sv.Op {
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		return ev.m.c.db, nil
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		return "public", nil
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE,
		pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER, pg_query.SQLValueFunctionOp_SVFOP_USER:
		return ev.m.c.user, nil
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return ev.now.Format("2006-01-02"), nil
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N,
		pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return ev.now.Format("2006-01-02 15:04:05.999999"), nil
	}
	return nil, unsupported("%s", strings.TrimPrefix(sv.Op.String(), "SVFOP_"))
}

// cast converts a value to a type.
func (ev *evaluator) cast(v any, tn *pg_query.TypeName) (any, error) {
	name := typeNameOf(tn)
	if len(tn.ArrayBounds) > 0 {
		if v == nil {
			return nil, nil
		}
		arr, ok := v.([]any)
		if !ok {
			s, isText := v.(string)
			if !isText {
				return nil, unsupported("a cast of a %T to %s[]", v, name)
			}
			var err error
			if arr, err = parseArray(s); err != nil {
				return nil, err
			}
		}
		out := make([]any, len(arr))
		for i, x := range arr {
			c, err := ev.castScalar(x, name)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return ev.castScalar(v, name)
}

func (ev *evaluator) castScalar(v any, name string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch name {
	case "text", "varchar", "name", "bpchar", "char", "character varying", "character":
		if arr, ok := v.([]any); ok {
			return formatArray(arr), nil
		}
		if b, ok := v.(bool); ok {
			return strconv.FormatBool(b), nil
		}
		return text(v), nil
	case "int2", "int4", "int8", "oid", "smallint", "integer", "bigint", "int", "xid", "cid":
		switch x := v.(type) {
		case regValue:
			return x.oid, nil
		case float64:
			return int64(math.RoundToEven(x)), nil
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		}
		if i, ok := toInt(v); ok {
			return i, nil
		}
		return nil, plan.Errorf(plan.CodeInvalidCast, "invalid input syntax for type %s: %q", name, text(v))
	case "float4", "float8", "numeric", "real", "decimal":
		switch x := v.(type) {
		case int64:
			return float64(x), nil
		case float64:
			return x, nil
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return nil, plan.Errorf(plan.CodeInvalidCast, "invalid input syntax for type %s: %q", name, x)
			}
			return f, nil
		}
	case "bool", "boolean":
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			return x != 0, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "t", "true", "y", "yes", "on", "1":
				return true, nil
			case "f", "false", "n", "no", "off", "0":
				return false, nil
			}
			return nil, plan.Errorf(plan.CodeInvalidCast, "invalid input syntax for type boolean: %q", x)
		}
	case "regclass", "regtype", "regproc", "regprocedure", "regnamespace", "regrole", "regoper", "regconfig":
		return ev.m.reg(name, v)
	case "date", "timestamp", "timestamptz":
		if s, ok := v.(string); ok {
			return s, nil
		}
	case "json", "jsonb", "unknown":
		if s, ok := v.(string); ok {
			return s, nil
		}
	}
	return nil, unsupported("a cast of a %T to %s", v, name)
}

// parseArray reads an array's text form: {a,b,"c d",NULL}.
func parseArray(s string) ([]any, error) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, plan.Errorf(plan.CodeInvalidCast, "malformed array literal: %q", s)
	}
	body := s[1 : len(s)-1]
	out := []any{}
	if strings.TrimSpace(body) == "" {
		return out, nil
	}
	var cur strings.Builder
	quoted, inQuote, escaped := false, false, false
	flush := func() {
		v := cur.String()
		if !quoted {
			v = strings.TrimSpace(v)
		}
		if !quoted && strings.EqualFold(v, "null") {
			out = append(out, nil)
		} else {
			out = append(out, v)
		}
		cur.Reset()
		quoted = false
	}
	for i := 0; i < len(body); i++ {
		ch := body[i]
		switch {
		case escaped:
			cur.WriteByte(ch)
			escaped = false
		case ch == '\\':
			escaped = true
		case ch == '"':
			inQuote = !inQuote
			quoted = true
		case ch == '{' && !inQuote:
			return nil, unsupported("multidimensional arrays")
		case ch == ',' && !inQuote:
			flush()
		default:
			cur.WriteByte(ch)
		}
	}
	if inQuote {
		return nil, plan.Errorf(plan.CodeInvalidCast, "malformed array literal: %q", s)
	}
	flush()
	return out, nil
}

// formatArray is an array's text form.
func formatArray(arr []any) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range arr {
		if i > 0 {
			b.WriteByte(',')
		}
		if v == nil {
			b.WriteString("NULL")
			continue
		}
		s := text(v)
		if s == "" || strings.ContainsAny(s, `{},"\ `) || strings.EqualFold(s, "null") {
			s = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
		}
		b.WriteString(s)
	}
	b.WriteByte('}')
	return b.String()
}

// compareOp applies a binary operator.
func compareOp(op string, l, r any) (any, error) {
	switch op {
	case "||":
		la, lok := l.([]any)
		ra, rok := r.([]any)
		switch {
		case l == nil && rok: // a NULL array concatenated: the other array
			return ra, nil
		case r == nil && lok:
			return la, nil
		case l == nil || r == nil:
			return nil, nil
		case lok && rok:
			return append(append([]any{}, la...), ra...), nil
		case lok:
			return append(append([]any{}, la...), r), nil
		case rok:
			return append([]any{l}, ra...), nil
		}
		return text(l) + text(r), nil
	case "+", "-", "*", "/", "%", "&", "|", "#", "<<", ">>":
		return arith(op, l, r)
	}
	if l == nil || r == nil {
		return nil, nil
	}
	switch op {
	case "~", "!~", "~*", "!~*":
		pat := text(r)
		if strings.HasSuffix(op, "*") {
			pat = "(?i)" + pat
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, unsupported("the regular expression %q (%v)", text(r), err)
		}
		return re.MatchString(text(l)) == !strings.HasPrefix(op, "!"), nil
	case "~~", "!~~", "~~*", "!~~*":
		re, err := likeRegexp(text(r), strings.HasSuffix(op, "*"))
		if err != nil {
			return nil, err
		}
		return re.MatchString(text(l)) == !strings.HasPrefix(op, "!"), nil
	}
	if _, ok := l.([]any); ok {
		return nil, unsupported("operator %s on arrays", op)
	}
	if _, ok := r.([]any); ok {
		return nil, unsupported("operator %s on arrays", op)
	}
	c := compare(l, r)
	switch op {
	case "=":
		return c == 0, nil
	case "<>", "!=":
		return c != 0, nil
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	case ">=":
		return c >= 0, nil
	}
	return nil, unsupported("operator %s", op)
}

// likeRegexp is a LIKE pattern (% _ and \ escapes) as a regular
// expression matching whole strings.
func likeRegexp(pat string, fold bool) (*regexp.Regexp, error) {
	var b strings.Builder
	if fold {
		b.WriteString("(?is)^")
	} else {
		b.WriteString("(?s)^")
	}
	for i := 0; i < len(pat); i++ {
		switch ch := pat[i]; ch {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		case '\\':
			if i+1 == len(pat) {
				return nil, plan.Errorf(plan.CodeValue, "LIKE pattern must not end with escape character")
			}
			i++
			b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(string(ch)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

func arith(op string, l, r any) (any, error) {
	if l == nil || r == nil {
		return nil, nil
	}
	li, lok := numInt(l)
	ri, rok := numInt(r)
	if lok && rok {
		switch op {
		case "+":
			return li + ri, nil
		case "-":
			return li - ri, nil
		case "*":
			return li * ri, nil
		case "/", "%":
			if ri == 0 {
				return nil, plan.Errorf(plan.CodeRuntime, "division by zero")
			}
			if op == "/" {
				return li / ri, nil
			}
			return li % ri, nil
		case "&":
			return li & ri, nil
		case "|":
			return li | ri, nil
		case "#":
			return li ^ ri, nil
		case "<<":
			return li << uint(ri), nil
		case ">>":
			return li >> uint(ri), nil
		}
	}
	lf, lok := numFloat(l)
	rf, rok := numFloat(r)
	if lok && rok {
		switch op {
		case "+":
			return lf + rf, nil
		case "-":
			return lf - rf, nil
		case "*":
			return lf * rf, nil
		case "/":
			if rf == 0 {
				return nil, plan.Errorf(plan.CodeRuntime, "division by zero")
			}
			return lf / rf, nil
		}
	}
	return nil, unsupported("operator %s on %T and %T", op, l, r)
}

func numInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case regValue:
		return x.oid, true
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return i, err == nil
	}
	return 0, false
}

func numFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// compare orders two non-NULL values: numerically when both are numbers
// (or one is and the other is a string constant that reads as one, as
// Postgres casts an untyped literal to the other side's type), reg values
// by oid (or by name against a string), booleans against booleans or
// their text, else as text.
func compare(l, r any) int {
	if lr, ok := l.(regValue); ok {
		if s, ok := r.(string); ok {
			if _, isNum := numInt(s); !isNum {
				return strings.Compare(lr.name, s)
			}
		}
	}
	if rr, ok := r.(regValue); ok {
		if s, ok := l.(string); ok {
			if _, isNum := numInt(s); !isNum {
				return strings.Compare(s, rr.name)
			}
		}
	}
	if lb, ok := l.(bool); ok {
		if rb, ok := toBool(r); ok {
			return boolInt(lb) - boolInt(rb)
		}
	}
	if rb, ok := r.(bool); ok {
		if lb, ok := toBool(l); ok {
			return boolInt(lb) - boolInt(rb)
		}
	}
	_, lstr := l.(string)
	_, rstr := r.(string)
	if !(lstr && rstr) {
		if li, ok := numInt(l); ok {
			if ri, ok := numInt(r); ok {
				return cmpOrdered(li, ri)
			}
		}
		if lf, ok := numFloat(l); ok {
			if rf, ok := numFloat(r); ok {
				return cmpOrdered(lf, rf)
			}
		}
	}
	return strings.Compare(text(l), text(r))
}

func cmpOrdered[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func toBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(x) {
		case "t", "true", "y", "yes", "on", "1":
			return true, true
		case "f", "false", "n", "no", "off", "0":
			return false, true
		}
	}
	return false, false
}

// text is a value's text form (as Postgres prints it).
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		if x {
			return "t"
		}
		return "f"
	case regValue:
		return x.name
	case []any:
		return formatArray(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case regValue:
		return x.oid, true
	case float64:
		if x == math.Trunc(x) {
			return int64(x), true
		}
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return i, err == nil
	}
	return 0, false
}
