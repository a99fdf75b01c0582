package planner

import (
	"slices"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// nestedPaths makes a Parquet scan read only the struct fields a query
// uses. A scan column s of a struct type whose every use is a field of it
// (s.a, s.c.x: struct_extract chains over the column, at any depth) is
// replaced by one scan column per field used (plan.Scan.Paths), and each
// use by a reference to its field's column (s.c.x over a used s.c by a
// field of that column). The scan then fetches and decodes only the
// leaves under those fields, and a pushed filter on a primitive field is a
// filter on a plain column: it prunes row groups from the leaf's
// statistics and may decode late.
//
// Safe because a field column is, row for row, what struct_extract gives
// (NULL where the struct or a struct on the way is NULL); a column used
// whole anywhere (selected, compared, grouped, passed through a union or
// as a subquery's value, or in the plan's output) is left alone. Only
// Parquet tables: the other formats read whole values anyway, and Iceberg
// scans find their columns by field id.
type nestedPaths struct{}

func (nestedPaths) name() string { return "nested_paths" }

func (r nestedPaths) apply(root node, rc *ruleCtx) (node, error) {
	cand := map[colID]bool{}
	var scans func(n node)
	scans = func(n node) {
		if s, ok := n.(*scanNode); ok && s.table.Format == "parquet" {
			for _, id := range s.cols {
				if c := rc.md.col(id); c.typ.ID == plan.Struct && c.path == nil {
					cand[id] = true
				}
			}
		}
		for _, c := range n.children() {
			scans(c)
		}
	}
	scans(root)
	if len(cand) == 0 {
		return root, nil
	}

	// The expressions of projections that pass a column on under its own
	// id: its uses are above.
	passing := map[*plan.Expr]bool{}
	var passes func(n node)
	passes = func(n node) {
		if p, ok := n.(*projectNode); ok {
			for i, e := range p.exprs {
				if e.Op == plan.OpColumn && e.Col == p.cols[i] {
					passing[e] = true
				}
			}
		}
		for _, c := range n.children() {
			passes(c)
		}
	}
	passes(root)

	// Every use of a candidate: the field paths, or a use of it whole.
	bare := map[colID]bool{}
	paths := map[colID][][]string{}
	var visit func(e *plan.Expr)
	visit = func(e *plan.Expr) {
		if e == nil {
			return
		}
		if c, p, ok := fieldChain(e); ok && cand[c] {
			if !slices.ContainsFunc(paths[c], func(q []string) bool { return slices.Equal(p, q) }) {
				paths[c] = append(paths[c], p)
			}
			return
		}
		if e.Op == plan.OpColumn {
			bare[e.Col] = true
			return
		}
		for _, a := range e.Args {
			visit(a)
		}
	}
	if _, ok := mapPlanExprs(root, func(e *plan.Expr) *plan.Expr {
		if e.Op == plan.OpColumn && passing[e] {
			return e // a projection passing the column on is no use of it
		}
		visit(e)
		return e
	}); !ok {
		return root, nil // an operator this rule does not know
	}
	for _, id := range root.output() {
		bare[id] = true
	}
	var other func(n node)
	other = func(n node) { // uses outside expressions
		switch x := n.(type) {
		case *unionNode:
			for _, ids := range x.inCols {
				for _, id := range ids {
					bare[id] = true
				}
			}
		case *joinNode:
			if x.scalar {
				bare[x.scalarCol] = true
			}
		}
		for _, c := range n.children() {
			other(c)
		}
	}
	other(root)

	// The field columns: the used paths that no other used path is a
	// prefix of.
	fields := map[colID][]colID{} // struct column -> its field columns
	for id, ps := range paths {
		if bare[id] {
			continue
		}
		slices.SortFunc(ps, func(a, b []string) int { return len(a) - len(b) })
		base := rc.md.col(id)
		for _, p := range ps {
			if slices.ContainsFunc(fields[id], func(f colID) bool { return hasPrefix(p, rc.md.col(f).path) }) {
				continue
			}
			c := column{name: base.name + "." + strings.Join(p, "."), typ: fieldType(base.typ, p), nullable: true, table: base.table, path: p}
			if base.display != "" {
				c.display = base.display + "." + strings.Join(p, ".")
			}
			fields[id] = append(fields[id], rc.md.add(c))
		}
	}
	if len(fields) == 0 {
		return root, nil
	}

	// Uses become references to the field columns.
	subst := func(e *plan.Expr) *plan.Expr {
		return substTopDown(e, func(x *plan.Expr) *plan.Expr {
			c, p, ok := fieldChain(x)
			if !ok || fields[c] == nil {
				return nil
			}
			for _, f := range fields[c] {
				fp := rc.md.col(f).path
				if !hasPrefix(p, fp) {
					continue
				}
				// Keep the steps below the field: x's chain minus its
				// len(fp) innermost steps, over the field's column.
				return rebase(x, len(p)-len(fp), rc.md.ref(f))
			}
			return nil
		})
	}
	out, _ := mapPlanExprs(root, subst)
	// The scans read the field columns instead of the struct columns, and
	// projections that passed a struct column on pass its fields.
	var scanCols func(n node) node
	scanCols = func(n node) node {
		if p, ok := n.(*projectNode); ok {
			c := *p
			c.exprs, c.cols = nil, nil
			for i, e := range p.exprs {
				fs, ok := fields[p.cols[i]]
				if !ok || e.Op != plan.OpColumn || e.Col != p.cols[i] {
					c.exprs, c.cols = append(c.exprs, e), append(c.cols, p.cols[i])
					continue
				}
				for _, f := range fs {
					c.exprs, c.cols = append(c.exprs, rc.md.ref(f)), append(c.cols, f)
				}
			}
			c.input = scanCols(p.input)
			return &c
		}
		if s, ok := n.(*scanNode); ok {
			c := *s
			c.cols, c.ords = nil, nil
			for i, id := range s.cols {
				fs, ok := fields[id]
				if !ok {
					c.cols, c.ords = append(c.cols, id), append(c.ords, s.ords[i])
					continue
				}
				for _, f := range fs {
					c.cols, c.ords = append(c.cols, f), append(c.ords, s.ords[i])
				}
			}
			if s.out != nil {
				c.out = nil
				for _, id := range s.out {
					if fs, ok := fields[id]; ok {
						c.out = append(c.out, fs...)
					} else {
						c.out = append(c.out, id)
					}
				}
			}
			return &c
		}
		ch := n.children()
		nc := make([]node, len(ch))
		for i, x := range ch {
			nc[i] = scanCols(x)
		}
		return n.withChildren(nc)
	}
	return scanCols(out), nil
}

// fieldChain reports whether e is a struct field of a column,
// struct_extract(...struct_extract(column, 'f1')..., 'fn'), and returns
// the column and f1..fn.
func fieldChain(e *plan.Expr) (colID, []string, bool) {
	var rev []string
	for e.Op == plan.OpFunc && e.Func == "struct_extract" && len(e.Args) == 2 {
		l := e.Args[1]
		if l.Op != plan.OpLiteral || l.Value == nil || l.Value.Null || l.Type.ID != plan.String {
			return 0, nil, false
		}
		rev = append(rev, l.Value.S)
		e = e.Args[0]
	}
	if len(rev) == 0 || e.Op != plan.OpColumn {
		return 0, nil, false
	}
	slices.Reverse(rev)
	return e.Col, rev, true
}

// rebase keeps the outer keep steps of the field chain e over base.
func rebase(e *plan.Expr, keep int, base *plan.Expr) *plan.Expr {
	if keep == 0 {
		return base
	}
	c := *e
	c.Args = []*plan.Expr{rebase(e.Args[0], keep-1, base), e.Args[1]}
	return &c
}

func hasPrefix(p, prefix []string) bool {
	return len(prefix) <= len(p) && slices.Equal(p[:len(prefix)], prefix)
}

// fieldType is the type of field path p of struct type t.
func fieldType(t plan.DataType, p []string) plan.DataType {
	for _, name := range p {
		f, _ := t.Field(name)
		t = f.Type
	}
	return t
}

// mapPlanExprs returns a copy of the plan n with f applied to every
// expression of every operator (f may return its argument); false for an
// operator it does not know.
func mapPlanExprs(n node, f func(*plan.Expr) *plan.Expr) (node, bool) {
	ch := n.children()
	nc := make([]node, len(ch))
	for i, c := range ch {
		var ok bool
		if nc[i], ok = mapPlanExprs(c, f); !ok {
			return nil, false
		}
	}
	n = n.withChildren(nc)
	xs := func(es []*plan.Expr) []*plan.Expr {
		if es == nil {
			return nil
		}
		out := make([]*plan.Expr, len(es))
		for i, e := range es {
			out[i] = f(e)
		}
		return out
	}
	keys := func(ks []sortKey) []sortKey {
		if ks == nil {
			return nil
		}
		out := slices.Clone(ks)
		for i := range out {
			out[i].expr = f(out[i].expr)
		}
		return out
	}
	switch x := n.(type) {
	case *scanNode:
		x.filters = xs(x.filters)
	case *filterNode:
		x.conds = xs(x.conds)
	case *projectNode:
		x.exprs = xs(x.exprs)
	case *aggregateNode:
		x.groups = xs(x.groups)
		x.aggs = slices.Clone(x.aggs)
		for i := range x.aggs {
			a := &x.aggs[i]
			if a.arg != nil {
				a.arg = f(a.arg)
			}
			a.more, a.order = xs(a.more), keys(a.order)
		}
	case *sortNode:
		x.keys = keys(x.keys)
	case *joinNode:
		x.conds = xs(x.conds)
	case *windowNode:
		x.partition, x.order = xs(x.partition), keys(x.order)
		x.calls = slices.Clone(x.calls)
		for i := range x.calls {
			x.calls[i].args = xs(x.calls[i].args)
		}
	case *expandNode:
		x.projs = slices.Clone(x.projs)
		for i := range x.projs {
			x.projs[i] = xs(x.projs[i])
		}
	case *unnestNode:
		x.list = f(x.list)
	case *valuesNode:
		x.rows = slices.Clone(x.rows)
		for i := range x.rows {
			x.rows[i] = xs(x.rows[i])
		}
	case *singleRowNode:
		x.keys = xs(x.keys)
	case *limitNode, *unionNode:
	default:
		return nil, false
	}
	return n, true
}
