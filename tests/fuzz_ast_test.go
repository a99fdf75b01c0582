package tests

import (
	"fmt"
	"strings"
)

// The fuzzer's query tree: small enough to render, clone and shrink.
// Expressions are nodes of a format string with one %s per child (and a
// last %s for a subquery); a node without children is literal text, so
// LIKE patterns and strftime formats (which hold %) are always leaves.

type node struct {
	f    string
	kids []*node
	sub  *selectQ
	typ  ftype
	// col is the column domain of a plain column reference (for literals).
	col *fcol
}

func (n *node) sql() string {
	if len(n.kids) == 0 && n.sub == nil {
		return n.f
	}
	args := make([]any, 0, len(n.kids)+1)
	for _, k := range n.kids {
		args = append(args, k.sql())
	}
	if n.sub != nil {
		args = append(args, n.sub.sql())
	}
	return fmt.Sprintf(n.f, args...)
}

func (n *node) clone() *node {
	if n == nil {
		return nil
	}
	c := *n
	c.kids = make([]*node, len(n.kids))
	for i, k := range n.kids {
		c.kids[i] = k.clone()
	}
	c.sub = n.sub.clone()
	return &c
}

// selectQ is a query: a SELECT, possibly the first branch of set
// operations, with its WITH, ORDER BY and LIMIT.
type selectQ struct {
	with     []*cte
	distinct bool
	items    []*node // rendered as expr AS c<i>
	from     []*fromItem
	where    []*node // conjuncts
	group    *grouping
	having   []*node // conjuncts
	qualify  []*node // conjuncts
	setops   []*setop
	order    []orderKey
	limit    int // 0: none
	offset   int
}

type cte struct {
	name string
	q    *selectQ
}

// fromItem is one FROM entry: a table, a derived table, a CTE reference
// or a parenthesized join, with the join that attaches it (join is ""
// for the first).
type fromItem struct {
	join   string // "", "JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN"
	table  string // a table or CTE name
	sub    *selectQ
	nested []*fromItem
	alias  string
	on     []*node
}

type grouping struct {
	plain []*node // plain keys, before the grouping-sets part
	mode  string  // "", "ROLLUP", "CUBE", "GROUPING SETS"
	keys  []*node // the keys of the ROLLUP/CUBE/GROUPING SETS part
	sets  [][]int // GROUPING SETS: indexes into keys
}

type setop struct {
	op string // UNION [ALL], INTERSECT [ALL], EXCEPT [ALL]
	q  *selectQ
}

type orderKey struct {
	pos   int   // 1-based output column
	e     *node // or an expression (pos 0)
	desc  bool
	nulls string // "", "NULLS FIRST", "NULLS LAST"
}

func conj(ns []*node) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = n.sql()
	}
	return strings.Join(parts, " AND ")
}

func (q *selectQ) sql() string {
	if q == nil {
		return ""
	}
	var b strings.Builder
	if len(q.with) > 0 {
		b.WriteString("WITH ")
		for i, c := range q.with {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s AS (%s)", c.name, c.q.sql())
		}
		b.WriteString(" ")
	}
	b.WriteString(q.body())
	for _, s := range q.setops {
		b.WriteString(" " + s.op + " " + s.q.body())
	}
	if len(q.order) > 0 {
		b.WriteString(" ORDER BY ")
		for i, o := range q.order {
			if i > 0 {
				b.WriteString(", ")
			}
			if o.e != nil {
				b.WriteString(o.e.sql())
			} else {
				fmt.Fprintf(&b, "%d", o.pos)
			}
			if o.desc {
				b.WriteString(" DESC")
			}
			if o.nulls != "" {
				b.WriteString(" " + o.nulls)
			}
		}
	}
	if q.limit > 0 {
		fmt.Fprintf(&b, " LIMIT %d", q.limit)
		if q.offset > 0 {
			fmt.Fprintf(&b, " OFFSET %d", q.offset)
		}
	}
	return b.String()
}

// body renders SELECT ... HAVING.
func (q *selectQ) body() string {
	var b strings.Builder
	b.WriteString("SELECT ")
	if q.distinct {
		b.WriteString("DISTINCT ")
	}
	for i, it := range q.items {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s AS c%d", it.sql(), i)
	}
	if len(q.from) > 0 {
		b.WriteString(" FROM " + renderFrom(q.from))
	}
	if len(q.where) > 0 {
		b.WriteString(" WHERE " + conj(q.where))
	}
	if g := q.group; g != nil {
		var parts []string
		for _, k := range g.plain {
			parts = append(parts, k.sql())
		}
		switch g.mode {
		case "":
			for _, k := range g.keys {
				parts = append(parts, k.sql())
			}
		case "GROUPING SETS":
			var sets []string
			for _, s := range g.sets {
				var ks []string
				for _, i := range s {
					ks = append(ks, g.keys[i].sql())
				}
				sets = append(sets, "("+strings.Join(ks, ", ")+")")
			}
			parts = append(parts, "GROUPING SETS ("+strings.Join(sets, ", ")+")")
		default:
			var ks []string
			for _, k := range g.keys {
				ks = append(ks, k.sql())
			}
			parts = append(parts, g.mode+" ("+strings.Join(ks, ", ")+")")
		}
		if len(parts) > 0 {
			b.WriteString(" GROUP BY " + strings.Join(parts, ", "))
		}
	}
	if len(q.having) > 0 {
		b.WriteString(" HAVING " + conj(q.having))
	}
	if len(q.qualify) > 0 {
		b.WriteString(" QUALIFY " + conj(q.qualify))
	}
	return b.String()
}

func renderFrom(items []*fromItem) string {
	var b strings.Builder
	for i, f := range items {
		if i > 0 {
			b.WriteString(" " + f.join + " ")
		}
		switch {
		case f.nested != nil:
			b.WriteString("(" + renderFrom(f.nested) + ")")
		case f.sub != nil:
			fmt.Fprintf(&b, "(%s) AS %s", f.sub.sql(), f.alias)
		default:
			fmt.Fprintf(&b, "%s AS %s", f.table, f.alias)
		}
		if i > 0 && f.join != "CROSS JOIN" {
			if len(f.on) == 0 {
				b.WriteString(" ON TRUE")
			} else {
				b.WriteString(" ON " + conj(f.on))
			}
		}
	}
	return b.String()
}

func cloneNodes(ns []*node) []*node {
	if ns == nil {
		return nil
	}
	out := make([]*node, len(ns))
	for i, n := range ns {
		out[i] = n.clone()
	}
	return out
}

func cloneFrom(fs []*fromItem) []*fromItem {
	if fs == nil {
		return nil
	}
	out := make([]*fromItem, len(fs))
	for i, f := range fs {
		c := *f
		c.sub = f.sub.clone()
		c.nested = cloneFrom(f.nested)
		c.on = cloneNodes(f.on)
		out[i] = &c
	}
	return out
}

func (q *selectQ) clone() *selectQ {
	if q == nil {
		return nil
	}
	c := *q
	c.with = nil
	for _, w := range q.with {
		c.with = append(c.with, &cte{name: w.name, q: w.q.clone()})
	}
	c.items = cloneNodes(q.items)
	c.from = cloneFrom(q.from)
	c.where = cloneNodes(q.where)
	if q.group != nil {
		g := *q.group
		g.plain = cloneNodes(q.group.plain)
		g.keys = cloneNodes(q.group.keys)
		g.sets = nil
		for _, s := range q.group.sets {
			g.sets = append(g.sets, append([]int(nil), s...))
		}
		c.group = &g
	}
	c.having = cloneNodes(q.having)
	c.qualify = cloneNodes(q.qualify)
	c.setops = nil
	for _, s := range q.setops {
		c.setops = append(c.setops, &setop{op: s.op, q: s.q.clone()})
	}
	c.order = nil
	for _, o := range q.order {
		o.e = o.e.clone()
		c.order = append(c.order, o)
	}
	return &c
}

// totalOrder reports whether the ORDER BY names every output column, so
// rows that tie are identical and the result's order is determined.
func (q *selectQ) totalOrder() bool {
	if len(q.order) == 0 {
		return false
	}
	seen := map[int]bool{}
	for _, o := range q.order {
		seen[o.pos] = true
	}
	for i := range q.items {
		if !seen[i+1] {
			return false
		}
	}
	return true
}

// ---- shrinking ----

// editor applies the k-th edit of a deterministic walk over a query:
// dropping a set-operation branch, a FROM item, a join condition, a WHERE
// or HAVING conjunct, the GROUP BY, a select item, DISTINCT, or replacing
// an expression by one of its children of the same type. A walk over a
// clone visits the same sites in the same order, so k names one edit.
type editor struct {
	k     int
	done  bool
	fixed bool // the select items may not change (oracle cases)
}

func (e *editor) site() bool {
	if e.done {
		return false
	}
	if e.k == 0 {
		e.done = true
		return true
	}
	e.k--
	return false
}

func (e *editor) query(q *selectQ, top bool) {
	if q == nil || e.done {
		return
	}
	// Whole branches and clauses first: the largest reductions. A
	// differential query may become one of its CTEs or derived tables.
	if !e.fixed || !top {
		for i, w := range q.with {
			if e.site() {
				with := q.with[:i:i]
				*q = *w.q
				q.with = append(with, q.with...)
				return
			}
		}
		for _, f := range q.from {
			if f.sub != nil && e.site() {
				with := q.with
				*q = *f.sub
				q.with = append(with, q.with...)
				return
			}
		}
	}
	for i := range q.with {
		if e.site() {
			q.with = append(q.with[:i:i], q.with[i+1:]...)
			return
		}
	}
	for i := range q.setops {
		if e.site() {
			q.setops = append(q.setops[:i:i], q.setops[i+1:]...)
			return
		}
	}
	if len(q.setops) > 0 && e.site() {
		b := q.setops[0].q
		q.distinct, q.items, q.from, q.where, q.group, q.having, q.qualify = b.distinct, b.items, b.from, b.where, b.group, b.having, b.qualify
		q.setops = q.setops[1:]
		return
	}
	if len(q.from) > 1 {
		for i := range q.from {
			if e.site() {
				q.from = append(q.from[:i:i], q.from[i+1:]...)
				q.from[0].join, q.from[0].on = "", nil
				return
			}
		}
	}
	e.joins(q.from)
	if e.done {
		return
	}
	for i := range q.where {
		if e.site() {
			q.where = append(q.where[:i:i], q.where[i+1:]...)
			return
		}
	}
	for i := range q.having {
		if e.site() {
			q.having = append(q.having[:i:i], q.having[i+1:]...)
			return
		}
	}
	for i := range q.qualify {
		if e.site() {
			q.qualify = append(q.qualify[:i:i], q.qualify[i+1:]...)
			return
		}
	}
	if g := q.group; g != nil {
		if g.mode != "" && e.site() {
			g.mode, g.sets = "", nil
			return
		}
		if (!e.fixed || !top) && e.site() {
			q.group, q.having = nil, nil
			return
		}
	}
	if !e.fixed || !top {
		if len(q.items) > 1 && len(q.setops) == 0 {
			for i := range q.items {
				if e.site() {
					q.items = append(q.items[:i:i], q.items[i+1:]...)
					var order []orderKey
					for _, o := range q.order {
						switch {
						case o.e != nil:
						case o.pos == i+1:
							continue
						case o.pos > i+1:
							o.pos--
						}
						order = append(order, o)
					}
					q.order = order
					return
				}
			}
		}
	}
	if q.distinct && e.site() {
		q.distinct = false
		return
	}
	if q.offset > 0 && e.site() {
		q.offset = 0
		return
	}
	for i, o := range q.order {
		if o.e != nil && e.site() {
			q.order = append(q.order[:i:i], q.order[i+1:]...)
			return
		}
	}
	// Then within expressions and subqueries.
	for _, w := range q.with {
		e.query(w.q, false)
	}
	e.nodes(q.items)
	e.fromNodes(q.from)
	e.nodes(q.where)
	e.nodes(q.having)
	e.nodes(q.qualify)
	for _, s := range q.setops {
		e.query(s.q, false)
	}
}

func (e *editor) joins(fs []*fromItem) {
	for _, f := range fs {
		if e.done {
			return
		}
		if f.join != "" && f.join != "JOIN" && f.join != "CROSS JOIN" && e.site() {
			f.join = "JOIN"
			return
		}
		for i := range f.on {
			if e.site() {
				f.on = append(f.on[:i:i], f.on[i+1:]...)
				return
			}
		}
		if len(f.nested) > 1 {
			for i := range f.nested {
				if e.site() {
					f.nested = append(f.nested[:i:i], f.nested[i+1:]...)
					f.nested[0].join, f.nested[0].on = "", nil
					return
				}
			}
		}
		e.joins(f.nested)
	}
}

func (e *editor) fromNodes(fs []*fromItem) {
	for _, f := range fs {
		e.nodes(f.on)
		e.query(f.sub, false)
		e.fromNodes(f.nested)
	}
}

func (e *editor) nodes(ns []*node) {
	for i := range ns {
		if e.done {
			return
		}
		e.node(&ns[i])
	}
}

// node offers replacing *p by each child of its type, then edits inside.
func (e *editor) node(p **node) {
	n := *p
	for _, k := range n.kids {
		if k.typ == n.typ && e.site() {
			*p = k
			return
		}
	}
	for i := range n.kids {
		if e.done {
			return
		}
		e.node(&n.kids[i])
	}
	e.query(n.sub, false)
}
