package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// listFields makes a Parquet scan of a list of structs read only the
// struct fields a query uses of its elements. A scan column l of a LIST
// type with a STRUCT inside (list<struct<a, b>>, list<list<struct<...>>>,
// or the field s.l that nested_paths made of a struct column) whose every
// use reaches only some fields of its elements (l[1].a, l[2:3][1].b, or
// u.a over the u of unnest(l)) is marked with those fields (scanNode.fields,
// plan.Scan.Fields): the scan fetches and decodes only the leaves under
// them and hands over the other fields as NULL. A use of only a value's
// shape (len(l), l IS NULL, l[1].c IS NULL: its NULLs and list lengths,
// which every leaf under it carries in its levels) needs one leaf under
// it: one read anyway, else the cheapest (cheapestLeaf).
//
// Safe because no use reads a field left out: a column used in any other
// way (whole, through len, comparison, grouping, a union, a subquery's
// value, the plan's output, or under an operator this rule does not know)
// keeps every field. The expressions are left as they are (the column's
// type does not change), so the rule only decides what is fetched. Runs
// after nested_paths, whose field columns it also marks (structs in
// lists in structs). Only Parquet tables, as nested_paths.
type listFields struct{}

func (listFields) name() string { return "list_fields" }

func (r listFields) apply(root node, rc *ruleCtx) (node, error) {
	cand := map[colID]bool{}
	var scans func(n node)
	scans = func(n node) {
		if s, ok := n.(*scanNode); ok && s.table.Format == "parquet" {
			for _, id := range s.cols {
				if t := rc.md.col(id).typ; t.ID == plan.List && structUnderList(t) && s.fields[id] == nil {
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

	// The elements of unnest(chain over a candidate): uses of the element
	// column are uses of the candidate under the chain's fields.
	derived := map[colID]derivedCol{}
	var unnests func(n node)
	unnests = func(n node) {
		for _, c := range n.children() {
			unnests(c)
		}
		if u, ok := n.(*unnestNode); ok {
			if c, p, ok := elemChain(u.list); ok {
				if d, ok := derived[c]; ok {
					derived[u.elem] = derivedCol{col: d.col, path: append(slices.Clone(d.path), p...)}
				} else if cand[c] {
					derived[u.elem] = derivedCol{col: c, path: p}
				}
			}
		}
	}
	unnests(root)
	unnestList := map[*plan.Expr]bool{}
	var lists func(n node)
	lists = func(n node) {
		if u, ok := n.(*unnestNode); ok {
			if _, ok := derived[u.elem]; ok {
				unnestList[u.list] = true
			}
		}
		for _, c := range n.children() {
			lists(c)
		}
	}
	lists(root)

	// Projections passing a column on under its own id: no use of it.
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

	bare := map[colID]bool{}
	paths := map[colID][][]string{}
	use := func(c colID, p []string) {
		if d, ok := derived[c]; ok {
			c, p = d.col, append(slices.Clone(d.path), p...)
		}
		if !cand[c] {
			return
		}
		if len(p) == 0 {
			bare[c] = true
			return
		}
		if !slices.ContainsFunc(paths[c], func(q []string) bool { return slices.Equal(p, q) }) {
			paths[c] = append(paths[c], p)
		}
	}
	// shapes: uses that need only the shape of a value (its NULLs and
	// list lengths: len(l), l IS NULL), which any one leaf under it has.
	shapes := map[colID][][]string{}
	shape := func(c colID, p []string) {
		if d, ok := derived[c]; ok {
			c, p = d.col, append(slices.Clone(d.path), p...)
		}
		if cand[c] {
			shapes[c] = append(shapes[c], p)
		}
	}
	var visit func(e *plan.Expr)
	visit = func(e *plan.Expr) {
		if e == nil {
			return
		}
		if a, ok := shapeArg(e); ok {
			if c, p, side, ok := accessChain(a); ok {
				shape(c, p)
				for _, s := range append(side, e.Args[1:]...) {
					visit(s)
				}
				return
			}
		}
		if c, p, side, ok := accessChain(e); ok {
			use(c, p)
			for _, s := range side {
				visit(s)
			}
			return
		}
		for _, a := range e.Args {
			visit(a)
		}
	}
	if _, ok := mapPlanExprs(root, func(e *plan.Expr) *plan.Expr {
		switch {
		case e.Op == plan.OpColumn && passing[e]:
		case unnestList[e]:
			// unnest's list: its uses are its element column's. The
			// indexes on the way are expressions of their own.
			_, _, side, _ := accessChain(e)
			for _, s := range side {
				visit(s)
			}
		default:
			visit(e)
		}
		return e
	}); !ok {
		return root, nil // an operator this rule does not know
	}
	whole := func(id colID) { use(id, nil) }
	for _, id := range root.output() {
		whole(id)
	}
	var other func(n node)
	other = func(n node) {
		switch x := n.(type) {
		case *unionNode:
			for _, ids := range x.inCols {
				for _, id := range ids {
					whole(id)
				}
			}
		case *joinNode:
			if x.scalar {
				whole(x.scalarCol)
			}
		}
		for _, c := range n.children() {
			other(c)
		}
	}
	other(root)

	fields := map[colID][][]string{}
	ids := map[colID]bool{}
	for id := range paths {
		ids[id] = true
	}
	for id := range shapes {
		ids[id] = true
	}
	for id := range ids {
		ps := paths[id]
		if bare[id] {
			continue
		}
		t := rc.md.col(id).typ
		var keep [][]string
		slices.SortFunc(ps, func(a, b []string) int { return len(a) - len(b) })
		ok := true
		for _, p := range ps {
			cp, good := canonicalElemPath(t, p)
			if !good {
				ok = false
				break
			}
			if slices.ContainsFunc(keep, func(k []string) bool { return hasPrefix(cp, k) }) {
				continue
			}
			keep = append(keep, cp)
		}
		// A shape use is met by any leaf under its value: one read
		// anyway, else the cheapest one.
		for _, p := range shapes[id] {
			cp, good := canonicalElemPath(t, p)
			if !good {
				ok = false
				break
			}
			if slices.ContainsFunc(keep, func(k []string) bool { return hasPrefix(cp, k) || hasPrefix(k, cp) }) {
				continue
			}
			keep = append(keep, append(cp, cheapestLeaf(elemPathType(t, cp))...))
		}
		if !ok || len(keep) == 0 || coversAll(t, keep) {
			continue
		}
		slices.SortFunc(keep, func(a, b []string) int { return strings.Compare(strings.Join(a, "\x00"), strings.Join(b, "\x00")) })
		fields[id] = keep
	}
	if len(fields) == 0 {
		return root, nil
	}
	var mark func(n node) node
	mark = func(n node) node {
		if s, ok := n.(*scanNode); ok {
			c := *s
			c.fields = map[colID][][]string{}
			for k, v := range s.fields {
				c.fields[k] = v
			}
			for _, id := range s.cols {
				if f, ok := fields[id]; ok {
					c.fields[id] = f
				}
			}
			return &c
		}
		ch := n.children()
		nc := make([]node, len(ch))
		for i, x := range ch {
			nc[i] = mark(x)
		}
		return n.withChildren(nc)
	}
	return mark(root), nil
}

type derivedCol struct {
	col  colID
	path []string
}

// structUnderList reports whether list type t has a struct among its
// elements (through lists, not maps).
func structUnderList(t plan.DataType) bool {
	for t.ID == plan.List {
		t = t.Elem()
	}
	return t.ID == plan.Struct
}

// elemChain is accessChain for unnest's list argument.
func elemChain(e *plan.Expr) (colID, []string, bool) {
	c, p, _, ok := accessChain(e)
	return c, p, ok
}

// accessChain reports whether e reaches into a column only by struct
// fields (struct_extract with a constant name) and list elements
// (list_extract, list_slice), and returns the column, the struct fields
// on the way (list levels are implicit), and the other arguments of the
// chain (indexes and bounds), which are expressions of their own.
func accessChain(e *plan.Expr) (colID, []string, []*plan.Expr, bool) {
	var rev []string
	var side []*plan.Expr
	for {
		if e.Op == plan.OpColumn {
			slices.Reverse(rev)
			return e.Col, rev, side, true
		}
		if e.Op != plan.OpFunc || len(e.Args) == 0 {
			return 0, nil, nil, false
		}
		in := e.Args[0]
		switch {
		case e.Func == "struct_extract" && len(e.Args) == 2 && in.Type.ID == plan.Struct:
			l := e.Args[1]
			if l.Op != plan.OpLiteral || l.Value == nil || l.Value.Null || l.Type.ID != plan.String {
				return 0, nil, nil, false
			}
			rev = append(rev, l.Value.S)
		case (e.Func == "list_extract" || e.Func == "list_slice") && in.Type.ID == plan.List:
			side = append(side, e.Args[1:]...)
		default:
			return 0, nil, nil, false
		}
		e = in
	}
}

// shapeArg reports whether e needs only the shape of its argument (its
// NULLs, and a list's length): len/array_length/cardinality of a list,
// IS [NOT] NULL.
func shapeArg(e *plan.Expr) (*plan.Expr, bool) {
	if len(e.Args) == 0 || e.Args[0] == nil {
		return nil, false
	}
	switch {
	case e.Op == plan.OpIsNull || e.Op == plan.OpIsNotNull:
		return e.Args[0], len(e.Args) == 1
	case e.Op == plan.OpFunc && len(e.Args) == 1 && e.Args[0].Type.ID == plan.List:
		switch e.Func {
		case "array_length", "length", "len", "cardinality":
			return e.Args[0], true
		}
	}
	return nil, false
}

// elemPathType is the type at struct field path p under t, lists on the
// way passed through (p as canonicalElemPath made it).
func elemPathType(t plan.DataType, p []string) plan.DataType {
	for _, name := range p {
		for t.ID == plan.List {
			t = t.Elem()
		}
		f, _ := t.Field(name)
		t = f.Type
	}
	return t
}

// cheapestLeaf is a field path under t to one leaf, preferring fixed
// width ones (a number before a string, a flat field before a nested
// one); nil when t has no struct to go into.
func cheapestLeaf(t plan.DataType) []string {
	for t.ID == plan.List {
		t = t.Elem()
	}
	if t.ID != plan.Struct {
		return nil
	}
	fs := t.Children()
	for _, f := range fs {
		if !f.Type.IsNested() && f.Type.ID != plan.String {
			return []string{f.Name}
		}
	}
	for _, f := range fs {
		if !f.Type.IsNested() {
			return []string{f.Name}
		}
	}
	for _, f := range fs {
		if f.Type.ID != plan.Map {
			return append([]string{f.Name}, cheapestLeaf(f.Type)...)
		}
	}
	return []string{fs[0].Name}
}

// canonicalElemPath resolves struct field path p under type t, lists
// being passed through: the fields as the type names them, false when
// one is not there.
func canonicalElemPath(t plan.DataType, p []string) ([]string, bool) {
	out := make([]string, 0, len(p))
	for _, name := range p {
		for t.ID == plan.List {
			t = t.Elem()
		}
		if t.ID != plan.Struct {
			return nil, false
		}
		f, i := t.Field(name)
		if i < 0 {
			return nil, false
		}
		out = append(out, f.Name)
		t = f.Type
	}
	return out, true
}

// coversAll reports whether the field paths keep cover every field of
// the structs under t (nothing to leave out).
func coversAll(t plan.DataType, keep [][]string) bool {
	for _, k := range keep {
		if len(k) == 0 {
			return true
		}
	}
	for t.ID == plan.List {
		t = t.Elem()
	}
	if t.ID != plan.Struct {
		return false
	}
	for _, f := range t.Children() {
		var sub [][]string
		for _, k := range keep {
			if k[0] == f.Name {
				sub = append(sub, k[1:])
			}
		}
		if len(sub) == 0 || !coversAll(f.Type, sub) {
			return false
		}
	}
	return true
}

// describeFields writes a scan column's kept fields as {a, c.x}.
func describeFields(fs [][]string) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = strings.Join(f, ".")
	}
	return fmt.Sprintf("{%s}", strings.Join(parts, ", "))
}
