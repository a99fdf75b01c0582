package planner

import (
	"fmt"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// The logical plan is a tree of relational operators whose expressions are
// plan.Expr trees in which an OpColumn's Col is a colID: a query-wide column
// identity, not a position. Every operator that computes a value gives it a
// fresh colID; operators that pass rows through keep the ids of their input.
// Because ids never change meaning, rules can move predicates and drop
// columns without renumbering anything; positions are assigned once, when
// the physical plan is built (lower.go).
//
// Joins, unions and subqueries plug in as further node types: a join's
// output is the concatenation of its inputs' ids, so expressions above it
// need no rewriting, and the binder's scope already holds several relations.

// colID identifies a column of the logical plan.
type colID = int

// column is the metadata of one colID.
type column struct {
	name     string
	typ      plan.DataType
	nullable bool
	table    string // the qualifier (table alias) of a scan column; "" for computed columns
	// display, when set, is how expressions show the column: alias.name
	// for a table read under an alias (so n1.n_name and n2.n_name differ
	// in EXPLAIN).
	display string
	// path, for a scan column, is the struct field path it reads under
	// the table column (rule_nested_paths.go); nil for the column itself.
	path []string
}

// metadata holds the columns of one query, indexed by colID.
type metadata struct {
	cols []column
}

func (m *metadata) add(c column) colID {
	m.cols = append(m.cols, c)
	return len(m.cols) - 1
}

func (m *metadata) col(id colID) column { return m.cols[id] }

// ref returns a column reference expression to id.
func (m *metadata) ref(id colID) *plan.Expr {
	c := m.cols[id]
	if c.display != "" {
		return plan.Column(id, c.display, c.typ)
	}
	return plan.Column(id, c.name, c.typ)
}

// node is a logical operator.
type node interface {
	// children returns the inputs, left to right.
	children() []node
	// withChildren returns a shallow copy with the inputs replaced.
	withChildren(ch []node) node
	// output returns the ids of the output columns, in order.
	output() []colID
	// describe renders the operator (without its inputs) for EXPLAIN.
	describe(m *metadata) string
}

// scanNode reads a table. filters are predicates (over cols) that the scan
// must apply; the physical plan applies them in a Filter right above the
// scan and gives the prunable ones to the scan for row-group pruning.
// out, when set, is the part of cols the scan passes on: the columns only
// its filters read are dropped right after them (prune_columns sets it),
// so they are neither shuffled nor held in a join's build side.
type scanNode struct {
	table   *TableInfo
	alias   string
	cols    []colID
	ords    []int // table column ordinal of each of cols
	filters []*plan.Expr
	out     []colID // nil: all of cols
	// fields: per list column, the struct fields of its elements read
	// (rule_list_fields.go); a column not in it is read whole.
	fields map[colID][][]string
}

// filterNode keeps rows for which all conds are true.
type filterNode struct {
	input node
	conds []*plan.Expr
}

// projectNode computes exprs over its input, one output column each.
type projectNode struct {
	input node
	exprs []*plan.Expr
	cols  []colID
}

// aggregateNode groups its input by groups and computes aggs per group.
// Output: groupCols then aggCols.
type aggregateNode struct {
	input     node
	groups    []*plan.Expr
	groupCols []colID
	aggs      []aggExpr
	aggCols   []colID
}

// aggExpr is one aggregate call; arg is nil for count(*). distinct marks
// fn(DISTINCT arg) until the binder plans it (buildAggregate).
type aggExpr struct {
	fn  plan.AggFunc
	arg *plan.Expr
	// more are the arguments after arg of an aggregate of several
	// (arg_min(value, key)).
	more     []*plan.Expr
	typ      plan.DataType
	distinct bool
	fraction float64 // percentile_cont/percentile_disc (aggregates.go)
	sep      string  // string_agg
	// dedupe is string_agg(DISTINCT ...): each value once per group.
	dedupe bool
	// order is string_agg's ORDER BY: the rows of each group reach the
	// aggregation sorted by it (a sort in the task, lower.go aggSingle).
	order []sortKey
}

// sortNode orders its input by keys.
type sortNode struct {
	input node
	keys  []sortKey
}

type sortKey struct {
	expr       *plan.Expr
	desc       bool
	nullsFirst bool
}

// limitNode skips offset rows and passes at most limit rows (-1: all).
type limitNode struct {
	input  node
	limit  int64
	offset int64
}

func (n *scanNode) children() []node      { return nil }
func (n *filterNode) children() []node    { return []node{n.input} }
func (n *projectNode) children() []node   { return []node{n.input} }
func (n *aggregateNode) children() []node { return []node{n.input} }
func (n *sortNode) children() []node      { return []node{n.input} }
func (n *limitNode) children() []node     { return []node{n.input} }

func (n *scanNode) withChildren([]node) node { c := *n; return &c }
func (n *filterNode) withChildren(ch []node) node {
	c := *n
	c.input = ch[0]
	return &c
}
func (n *projectNode) withChildren(ch []node) node {
	c := *n
	c.input = ch[0]
	return &c
}
func (n *aggregateNode) withChildren(ch []node) node {
	c := *n
	c.input = ch[0]
	return &c
}
func (n *sortNode) withChildren(ch []node) node {
	c := *n
	c.input = ch[0]
	return &c
}
func (n *limitNode) withChildren(ch []node) node {
	c := *n
	c.input = ch[0]
	return &c
}

func (n *scanNode) output() []colID {
	if n.out != nil {
		return n.out
	}
	return n.cols
}
func (n *filterNode) output() []colID  { return n.input.output() }
func (n *projectNode) output() []colID { return n.cols }
func (n *aggregateNode) output() []colID {
	return append(append([]colID{}, n.groupCols...), n.aggCols...)
}
func (n *sortNode) output() []colID  { return n.input.output() }
func (n *limitNode) output() []colID { return n.input.output() }

func (n *scanNode) describe(m *metadata) string {
	var b strings.Builder
	b.WriteString("Scan: ")
	b.WriteString(n.table.Name)
	if n.alias != "" && n.alias != n.table.Name {
		b.WriteString(" AS " + n.alias)
	}
	names := make([]string, len(n.cols))
	for i, id := range n.cols {
		names[i] = m.col(id).name
		if f := n.fields[id]; f != nil {
			names[i] += describeFields(f)
		}
	}
	fmt.Fprintf(&b, " projection=[%s]", strings.Join(names, ", "))
	if len(n.filters) > 0 {
		fmt.Fprintf(&b, " filters=[%s]", joinExprs(n.filters, ", "))
	}
	if n.out != nil {
		names := make([]string, len(n.out))
		for i, id := range n.out {
			names[i] = m.col(id).name
		}
		fmt.Fprintf(&b, " output=[%s]", strings.Join(names, ", "))
	}
	return b.String()
}

func (n *filterNode) describe(*metadata) string {
	return "Filter: " + joinExprs(n.conds, " AND ")
}

func (n *projectNode) describe(m *metadata) string {
	parts := make([]string, len(n.exprs))
	for i, e := range n.exprs {
		parts[i] = exprWithAlias(e, m.col(n.cols[i]).name)
	}
	return "Project: " + strings.Join(parts, ", ")
}

func (n *aggregateNode) describe(m *metadata) string {
	groups := make([]string, len(n.groups))
	for i, g := range n.groups {
		groups[i] = exprWithAlias(g, m.col(n.groupCols[i]).name)
	}
	aggs := make([]string, len(n.aggs))
	for i, a := range n.aggs {
		aggs[i] = a.String()
	}
	return fmt.Sprintf("Aggregate: group_by=[%s], aggs=[%s]", strings.Join(groups, ", "), strings.Join(aggs, ", "))
}

func (n *sortNode) describe(*metadata) string {
	parts := make([]string, len(n.keys))
	for i, k := range n.keys {
		parts[i] = k.String()
	}
	return "Sort: " + strings.Join(parts, ", ")
}

func (n *limitNode) describe(*metadata) string {
	if n.limit < 0 {
		return fmt.Sprintf("Limit: offset=%d, limit=none", n.offset)
	}
	return fmt.Sprintf("Limit: offset=%d, limit=%d", n.offset, n.limit)
}

func (a aggExpr) String() string {
	if a.fn == plan.AggCountStar {
		return "count(*)"
	}
	if a.distinct {
		return fmt.Sprintf("%s(DISTINCT %s)", a.fn, unparen(exprString(a.arg)))
	}
	if a.fn == plan.AggPercentileCont || a.fn == plan.AggPercentileDisc {
		return fmt.Sprintf("%s(%g ORDER BY %s)", a.fn, a.fraction, unparen(exprString(a.arg)))
	}
	if a.dedupe || len(a.order) > 0 {
		s := unparen(exprString(a.arg))
		if a.dedupe {
			s = "DISTINCT " + s
		}
		if len(a.order) > 0 {
			s += " ORDER BY " + sortKeysString(a.order)
		}
		return fmt.Sprintf("%s(%s)", a.fn, s)
	}
	s := unparen(exprString(a.arg))
	for _, m := range a.more {
		s += ", " + unparen(exprString(m))
	}
	return fmt.Sprintf("%s(%s)", a.fn, s)
}

// args are the call's arguments (none for count(*)).
func (a aggExpr) args() []*plan.Expr {
	if a.arg == nil {
		return a.more
	}
	return append([]*plan.Expr{a.arg}, a.more...)
}

// sortKeysString renders sort keys as an ORDER BY list.
func sortKeysString(keys []sortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = unparen(exprString(k.expr))
		if k.desc {
			parts[i] += " DESC"
		}
		if k.nullsFirst {
			parts[i] += " NULLS FIRST"
		}
	}
	return strings.Join(parts, ", ")
}

// unparen drops the parentheses around a whole rendered binary expression.
func unparen(s string) string {
	if len(s) < 2 || s[0] != '(' || s[len(s)-1] != ')' {
		return s
	}
	depth := 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 && i != len(s)-1 {
				return s // the first '(' closes early: "(a) + (b)"
			}
		case '\'':
			return s // do not reason about quotes
		}
	}
	return s[1 : len(s)-1]
}

func (k sortKey) String() string {
	s := exprString(k.expr)
	if k.desc {
		s += " DESC"
	} else {
		s += " ASC"
	}
	if k.nullsFirst {
		s += " NULLS FIRST"
	} else {
		s += " NULLS LAST"
	}
	return s
}

// formatLogical renders a logical plan as indented text, one operator a line.
func formatLogical(n node, m *metadata) string {
	var b strings.Builder
	var walk func(n node, depth int)
	walk = func(n node, depth int) {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(n.describe(m))
		b.WriteByte('\n')
		for _, c := range n.children() {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// formatEstimates is formatLogical with each operator's estimated rows and
// bytes.
func formatEstimates(n node, m *metadata, es *estimator) string {
	var b strings.Builder
	var walk func(n node, depth int)
	walk = func(n node, depth int) {
		fmt.Fprintf(&b, "%s%s  [rows≈%.4g bytes≈%.4g]\n", strings.Repeat("  ", depth), n.describe(m), es.rows(n), es.bytes(n))
		for _, c := range n.children() {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// exprWithAlias renders e, followed by "AS name" when the name differs.
func exprWithAlias(e *plan.Expr, name string) string {
	s := exprString(e)
	if s != name {
		s += " AS " + name
	}
	return s
}

func joinExprs(es []*plan.Expr, sep string) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = exprString(e)
	}
	return strings.Join(parts, sep)
}

// exprString renders a logical expression with columns by name. It is also
// how an unaliased select-list expression gets its output name.
func exprString(e *plan.Expr) string {
	if e == nil {
		return "<nil>"
	}
	switch e.Op {
	case plan.OpColumn:
		return e.Name
	case plan.OpLiteral:
		return e.Value.Format(e.Type)
	case plan.OpAdd, plan.OpSub, plan.OpMul, plan.OpDiv, plan.OpMod,
		plan.OpEq, plan.OpNe, plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe, plan.OpAnd, plan.OpOr:
		return fmt.Sprintf("(%s %s %s)", exprString(e.Args[0]), strings.ToUpper(string(e.Op)), exprString(e.Args[1]))
	case plan.OpNeg:
		return "(-" + exprString(e.Args[0]) + ")"
	case plan.OpNot:
		return "(NOT " + exprString(e.Args[0]) + ")"
	case plan.OpIsNull:
		return "(" + exprString(e.Args[0]) + " IS NULL)"
	case plan.OpIsNotNull:
		return "(" + exprString(e.Args[0]) + " IS NOT NULL)"
	case plan.OpCast:
		return fmt.Sprintf("CAST(%s AS %s)", exprString(e.Args[0]), e.Type)
	case plan.OpTryCast:
		return fmt.Sprintf("TRY_CAST(%s AS %s)", exprString(e.Args[0]), e.Type)
	case plan.OpLike:
		not := ""
		if e.Negated {
			not = "NOT "
		}
		return fmt.Sprintf("(%s %sLIKE %s)", exprString(e.Args[0]), not, exprString(e.Args[1]))
	case plan.OpIn:
		not := ""
		if e.Negated {
			not = "NOT "
		}
		return fmt.Sprintf("(%s %sIN (%s))", exprString(e.Args[0]), not, joinExprs(e.Args[1:], ", "))
	case plan.OpExtract:
		return fmt.Sprintf("EXTRACT(%s FROM %s)", strings.ToUpper(e.Field), exprString(e.Args[0]))
	case plan.OpSubstring:
		return "SUBSTRING(" + joinExprs(e.Args, ", ") + ")"
	case plan.OpFunc:
		if e.Func == "||" {
			return "(" + joinExprs(e.Args, " || ") + ")"
		}
		return e.Func + "(" + joinExprs(e.Args, ", ") + ")"
	case plan.OpCase:
		var b strings.Builder
		b.WriteString("CASE")
		n := len(e.Args) - 1
		for i := 0; i+1 < len(e.Args); i += 2 {
			fmt.Fprintf(&b, " WHEN %s THEN %s", exprString(e.Args[i]), exprString(e.Args[i+1]))
		}
		fmt.Fprintf(&b, " ELSE %s END", exprString(e.Args[n]))
		return b.String()
	}
	return fmt.Sprintf("%s(%s)", strings.ToUpper(string(e.Op)), joinExprs(e.Args, ", "))
}

// walkExpr calls f on e and every expression below it, parents first.
func walkExpr(e *plan.Expr, f func(*plan.Expr)) {
	if e == nil {
		return
	}
	f(e)
	for _, a := range e.Args {
		walkExpr(a, f)
	}
}

// rewriteExpr rebuilds e bottom-up, replacing each node x with f(x) when f
// returns non-nil (f sees the node with its arguments already rewritten).
// Unchanged subtrees keep their pointers.
func rewriteExpr(e *plan.Expr, f func(*plan.Expr) *plan.Expr) *plan.Expr {
	if e == nil {
		return nil
	}
	out := e
	for i, a := range e.Args {
		na := rewriteExpr(a, f)
		if na != a {
			if out == e {
				c := *e
				c.Args = append([]*plan.Expr(nil), e.Args...)
				out = &c
			}
			out.Args[i] = na
		}
	}
	if r := f(out); r != nil {
		return r
	}
	return out
}

// exprCols returns the set of colIDs e refers to.
func exprCols(e *plan.Expr, into map[colID]bool) {
	walkExpr(e, func(x *plan.Expr) {
		if x.Op == plan.OpColumn {
			into[x.Col] = true
		}
	})
}
