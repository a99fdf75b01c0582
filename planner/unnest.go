package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sluicedb/sluice/planner/plan"
)

// UNNEST of a list, in a select list or in FROM after the list's table
// (fromUnnest), as DuckDB: each row of the FROM
// clause (after WHERE) is repeated once per element of the list, the
// element taking the place of the unnest call; a NULL or empty list gives
// no rows. It is one unnestNode between the FROM/WHERE and the select
// list: row by row, so it runs in place in any stage (a distributed plan
// needs nothing more). One list per select list for now, and not with
// GROUP BY, aggregates, DISTINCT or window functions (SL005); several
// unnest calls of the same list are one.

// unnestNode emits its input's columns and one element column, a row per
// element of list.
type unnestNode struct {
	input node
	list  *plan.Expr
	elem  colID
}

func (n *unnestNode) children() []node { return []node{n.input} }
func (n *unnestNode) withChildren(ch []node) node {
	c := *n
	c.input = ch[0]
	return &c
}
func (n *unnestNode) output() []colID {
	in := n.input.output()
	return append(append(make([]colID, 0, len(in)+1), in...), n.elem)
}
func (n *unnestNode) describe(m *metadata) string { return "Unnest: " + n.list.String() }

// unnestCalls returns the unnest(...) calls of a select list item (not
// inside subqueries), and, with subscripts, generate_subscripts(l, 1),
// which is unnest(generate_series(1, len(l))).
func unnestCalls(n *pg.Node, subscripts bool) []*pg.FuncCall {
	var out []*pg.FuncCall
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		switch x := m.Interface().(type) {
		case *pg.FuncCall:
			if (funcName(x) == "unnest" || subscripts && funcName(x) == "generate_subscripts") && x.Over == nil {
				out = append(out, x)
				return
			}
		case *pg.SubLink:
			return
		}
		eachChild(m, func(c protoreflect.Message) bool {
			walk(c)
			return false
		})
	}
	if n != nil {
		walk(n.ProtoReflect())
	}
	return out
}

// bindSelectUnnest puts an unnestNode over root for an unnest of a list in
// the select list, and has the call bind to its element column.
func (b *binder) bindSelectUnnest(sel *pg.SelectStmt, targets []*target, root node, sc *scope) (node, error) {
	var calls []*pg.FuncCall
	for _, t := range targets {
		if t.ast != nil {
			calls = append(calls, unnestCalls(t.ast, !b.postgres)...)
		}
	}
	if len(calls) == 0 {
		return root, nil
	}
	fc := calls[0]
	if len(fc.Args) != 1 && funcName(fc) == "unnest" || fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
		if b.postgres {
			return root, nil
		}
		return nil, b.unsupported(fc.Location, "unnest() of other than one list")
	}
	if b.postgres && len(fc.Args) > 0 {
		if _, ok, err := b.array(fc.Args[0], &exprCtx{clause: "SELECT", scope: newScope(sc)}); ok && err == nil {
			return root, nil // a Postgres array known at binding (arrays_pg.go), not a list
		}
	}
	list, err := b.unnestList(fc, sc)
	if err != nil || list.Type.ID != plan.List {
		if b.postgres {
			return root, nil // the Postgres array forms (arrays_pg.go)
		}
		if err != nil {
			return nil, err
		}
		return nil, b.errorf(CodeType, fc.Location, "type mismatch: unnest() takes a list, not %s", list.Type)
	}
	// Calls of the same list are the same element (DuckDB zips unnests of
	// lists of equal length); other lists are not supported yet.
	for _, other := range calls[1:] {
		if len(other.Args) != 1 && funcName(other) == "unnest" {
			return nil, b.unsupported(other.Location, "unnest() of other than one list")
		}
		e, err := b.unnestList(other, sc)
		if err != nil || e.String() != list.String() {
			return nil, b.unsupported(other.Location, "unnest() of several lists in one select list")
		}
	}
	grouped := len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.DistinctClause) > 0 || len(sel.WindowClause) > 0
	for _, t := range targets {
		grouped = grouped || t.ast != nil && (containsAgg(t.ast) || containsWindow(t.ast))
	}
	if grouped {
		return nil, b.unsupported(fc.Location, "unnest() with GROUP BY, aggregates, DISTINCT or window functions")
	}
	id := b.md.add(column{name: "unnest", typ: list.Type.Elem(), nullable: true})
	if b.unnested == nil {
		b.unnested = map[*pg.FuncCall]*plan.Expr{}
	}
	for _, c := range calls {
		b.unnested[c] = b.md.ref(id)
	}
	return &unnestNode{input: root, list: list, elem: id}, nil
}

// unnestList binds the list an unnest call walks: its argument, or for
// generate_subscripts(l, 1) the list [1, ..., len(l)].
func (b *binder) unnestList(fc *pg.FuncCall, sc *scope) (*plan.Expr, error) {
	ctx := &exprCtx{clause: "SELECT", scope: sc}
	if funcName(fc) == "unnest" {
		return b.bindExpr(fc.Args[0], ctx)
	}
	if len(fc.Args) != 2 {
		return nil, b.errorf(CodeType, fc.Location, "type mismatch: generate_subscripts takes a list and the dimension 1")
	}
	l, err := b.bindExpr(fc.Args[0], ctx)
	if err != nil {
		return nil, err
	}
	if l.Type.ID != plan.List {
		return nil, b.errorf(CodeType, fc.Location, "type mismatch: generate_subscripts takes a list, not %s", l.Type)
	}
	d, err := b.bindExpr(fc.Args[1], ctx)
	if err != nil {
		return nil, err
	}
	if d = fold(d); !isLit(d) || d.Type.ID != plan.Int64 || d.Value.Null || d.Value.I != 1 {
		return nil, b.unsupported(fc.Location, "generate_subscripts of a dimension other than 1")
	}
	n, err := b.callByName("array_length", []*plan.Expr{l}, fc.Location)
	if err != nil {
		return nil, err
	}
	return b.callByName("generate_series", []*plan.Expr{intLit(1), n}, fc.Location)
}

// fromUnnest binds "FROM t, UNNEST(t.l) AS u(x)" (LATERAL or not, as
// DuckDB): an unnest of a list over the FROM items before it is an
// unnestNode over them, its element the one column of u. ok is false when
// item is not such an unnest (the Postgres array forms stay as they were).
func (b *binder) fromUnnest(item *pg.Node, root node, sc *scope) (node, bool, error) {
	f := item.GetRangeFunction()
	if f == nil || f.Ordinality || f.IsRowsfrom || len(f.Functions) != 1 || len(f.Coldeflist) > 0 {
		return nil, false, nil
	}
	items := f.Functions[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil || funcName(items[0].GetFuncCall()) != "unnest" {
		return nil, false, nil
	}
	fc := items[0].GetFuncCall()
	if len(fc.Args) != 1 {
		return nil, false, nil
	}
	if b.postgres {
		// A Postgres array known at binding ('{a,b}'::text[], ARRAY[...],
		// a NULL array) is unnested by its own rule (unnestArray): its
		// text is Postgres's array form, not a list's.
		if _, ok, err := b.array(fc.Args[0], &exprCtx{clause: "FROM", scope: newScope(sc)}); ok && err == nil {
			return nil, false, nil
		}
	}
	list, err := b.bindExpr(fc.Args[0], &exprCtx{clause: "FROM", scope: sc})
	if err != nil || list.Type.ID != plan.List {
		return nil, false, nil // not a list of the FROM items: bound as before
	}
	name := "unnest"
	rel := &relation{table: "unnest"}
	if f.Alias != nil {
		rel.alias, rel.table, name = f.Alias.Aliasname, f.Alias.Aliasname, f.Alias.Aliasname
		switch cs := f.Alias.Colnames; {
		case len(cs) == 1:
			name = cs[0].GetString_().GetSval()
		case len(cs) > 1:
			return nil, true, b.errorf(CodeValue, fc.Location, "unnest of a list has 1 column but %d names were given", len(cs))
		}
	}
	id := b.md.add(column{name: name, typ: list.Type.Elem(), nullable: true, table: rel.alias})
	rel.cols, rel.names = []colID{id}, []string{name}
	if err := b.addRelations(sc, []*relation{rel}, item); err != nil {
		return nil, true, err
	}
	return &unnestNode{input: root, list: list, elem: id}, true, nil
}

// lowerUnnest lowers an unnestNode in place: it is row by row, and the
// columns it passes on keep their partitioning.
func (l *lowerer) lowerUnnest(n *unnestNode) (*fragment, error) {
	f, err := l.lower(n.input)
	if err != nil {
		return nil, err
	}
	list, err := l.phys(n.list, f.cols)
	if err != nil {
		return nil, err
	}
	cols := append(append([]colID{}, f.cols...), n.elem)
	f.root = &plan.Node{Kind: plan.KindUnnest, Schema: l.schema(cols), Inputs: []*plan.Node{f.root}, Exprs: []*plan.Expr{list}}
	f.cols = cols
	return f, nil
}

// pruneUnnest keeps of the input the columns read above and those of the
// list.
func (r pruneColumns) pruneUnnest(n *unnestNode, need map[colID]bool, md *metadata) node {
	child := copySet(need)
	delete(child, n.elem)
	exprCols(n.list, child)
	c := *n
	c.input = r.prune(n.input, child, md)
	return &c
}
