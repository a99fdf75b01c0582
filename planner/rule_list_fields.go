package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// listFields makes a Parquet scan of a nested column read only the leaves
// a query uses. A scan column l stored in several leaves (a struct, a map,
// a list of either: list<struct<a, b>>, list<list<struct<...>>>, a struct
// nested_paths left whole, or the field s.l it made of a struct column)
// whose every use reaches only some fields of its elements (s.a, l[1].a,
// l[2:3][1].b, u.a over the u of unnest(l), map_keys(m), which is the
// path "key" of the map) is marked with those fields (scanNode.fields,
// plan.Scan.Fields): the scan fetches and decodes only the leaves under
// them and hands over the other fields (a map's values) as NULL. A use of
// only a value's shape (len(l), l IS NULL, count(l), cardinality(m),
// l[1].c IS NULL: its NULLs and list lengths, which every leaf under it
// carries in its levels) needs one leaf under it: one read anyway, else
// the cheapest (cheapestLeaf; a map's key).
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
				if t := rc.md.col(id).typ; severalLeaves(t) && s.fields[id] == nil {
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

	// count(x) needs only x's NULLs: a shape use.
	counted := map[*plan.Expr]bool{}
	var counts func(n node)
	counts = func(n node) {
		if a, ok := n.(*aggregateNode); ok {
			for _, x := range a.aggs {
				if x.fn == plan.AggCount && !x.distinct && x.arg != nil && len(x.more) == 0 {
					counted[x.arg] = true
				}
			}
		}
		for _, c := range n.children() {
			counts(c)
		}
	}
	counts(root)

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
		if e.Op == plan.OpFunc && e.Func == "map_keys" && len(e.Args) == 1 && e.Args[0].Type.ID == plan.Map {
			// A map's keys: its key leaves only.
			if c, p, side, ok := accessChain(e.Args[0]); ok {
				use(c, append(p, "key"))
				for _, s := range side {
					visit(s)
				}
				return
			}
		}
		for _, a := range e.Args {
			visit(a)
		}
	}
	if _, ok := mapPlanExprs(root, func(e *plan.Expr) *plan.Expr {
		switch {
		case e.Op == plan.OpColumn && passing[e]:
		case counted[e]:
			if c, p, side, ok := accessChain(e); ok {
				shape(c, p)
				for _, s := range side {
					visit(s)
				}
			} else {
				visit(e)
			}
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

// severalLeaves reports whether a value of type t is stored in more than
// one Parquet leaf (a struct, a map, a list of either): only then can a
// use of some of it read less than all of it.
func severalLeaves(t plan.DataType) bool {
	for t.ID == plan.List {
		t = t.Elem()
	}
	switch t.ID {
	case plan.Map:
		return true
	case plan.Struct:
		fs := t.Children()
		return len(fs) > 1 || len(fs) == 1 && severalLeaves(fs[0].Type)
	}
	return false
}

// mapPart is the type of a map's part named "key" or "value" (the fields
// of its entries, as field paths name them); false for another name.
func mapPart(t plan.DataType, name string) (plan.DataType, bool) {
	switch name {
	case "key":
		return t.Key(), true
	case "value":
		return t.Value(), true
	}
	return plan.DataType{}, false
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
	case e.Op == plan.OpFunc && len(e.Args) == 1 && e.Args[0].Type.ID == plan.Map && e.Func == "cardinality":
		return e.Args[0], true
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
		if t.ID == plan.Map {
			t, _ = mapPart(t, name)
			continue
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
	if t.ID == plan.Map {
		return append([]string{"key"}, cheapestLeaf(t.Key())...)
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
		if t.ID == plan.Map {
			part, ok := mapPart(t, name)
			if !ok {
				return nil, false
			}
			out = append(out, name)
			t = part
			continue
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
	fs := t.Children()
	switch t.ID {
	case plan.Map:
		fs = []plan.Field{{Name: "key", Type: t.Key()}, {Name: "value", Type: t.Value()}}
	case plan.Struct:
	default:
		return false
	}
	for _, f := range fs {
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
