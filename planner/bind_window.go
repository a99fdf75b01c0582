package planner

import (
	"fmt"
	"math"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// Window functions are bound where the select list and ORDER BY are: each
// call is replaced by a reference to a fresh column, and collected in the
// query's windowBuilder with its PARTITION BY, ORDER BY and frame bound
// over the (post-aggregation) rows. buildWindows then stacks one
// windowNode per distinct (PARTITION BY, ORDER BY) over the rows the
// select list is computed from, after GROUP BY and HAVING, as SQL defines.

// windowBuilder collects the window calls of one SELECT.
type windowBuilder struct {
	named map[string]*pg.WindowDef // the WINDOW clause
	calls []boundWindow
}

// boundWindow is one window call with its window, bound.
type boundWindow struct {
	partition []*plan.Expr
	order     []sortKey
	call      windowCall
	col       colID
}

// Postgres's frame option bits (parsenodes.h).
const (
	frameNonDefault        = 0x00001
	frameRange             = 0x00002
	frameRows              = 0x00004
	frameGroups            = 0x00008
	frameStartUnboundedPre = 0x00020
	frameEndUnboundedFol   = 0x00100
	frameStartCurrentRow   = 0x00200
	frameEndCurrentRow     = 0x00400
	frameStartOffsetPre    = 0x00800
	frameEndOffsetPre      = 0x01000
	frameStartOffsetFol    = 0x02000
	frameEndOffsetFol      = 0x04000
	frameExcludeCurrentRow = 0x08000
	frameExcludeGroup      = 0x10000
	frameExcludeTies       = 0x20000
)

// newWindowBuilder reads a SELECT's WINDOW clause.
func (b *binder) newWindowBuilder(sel *pg.SelectStmt) (*windowBuilder, error) {
	wb := &windowBuilder{named: map[string]*pg.WindowDef{}}
	for _, n := range sel.WindowClause {
		wd := n.GetWindowDef()
		if wd == nil {
			return nil, b.unsupported(exprLoc(n), "WINDOW clause item "+nodeName(n))
		}
		if _, dup := wb.named[wd.Name]; dup {
			return nil, b.errorf(CodeAmbiguous, wd.Location, "window %q is already defined", wd.Name)
		}
		wb.named[wd.Name] = wd
	}
	return wb, nil
}

// resolveWindow merges a call's OVER with the named window it refers to:
// OVER w, or OVER (w ORDER BY ...) which adds an order and a frame.
func (b *binder) resolveWindow(wb *windowBuilder, over *pg.WindowDef) (*pg.WindowDef, error) {
	ref := over.Refname
	if ref == "" && over.Name != "" && len(over.PartitionClause) == 0 && len(over.OrderClause) == 0 {
		ref = over.Name // OVER w
	}
	if ref == "" {
		return over, nil
	}
	base, ok := wb.named[ref]
	if !ok {
		return nil, b.errorf(CodeUnknownCol, over.Location, "window %q does not exist", ref)
	}
	base, err := b.resolveWindow(wb, base)
	if err != nil {
		return nil, err
	}
	out := &pg.WindowDef{PartitionClause: base.PartitionClause, OrderClause: base.OrderClause,
		FrameOptions: base.FrameOptions, StartOffset: base.StartOffset, EndOffset: base.EndOffset, Location: over.Location}
	if over.Refname != "" {
		if len(over.OrderClause) > 0 {
			out.OrderClause = over.OrderClause
		}
		if over.FrameOptions&frameNonDefault != 0 {
			out.FrameOptions, out.StartOffset, out.EndOffset = over.FrameOptions, over.StartOffset, over.EndOffset
		}
	}
	return out, nil
}

// bindWindowCall binds fn(...) OVER (...) and returns a reference to its
// result column.
func (b *binder) bindWindowCall(fc *pg.FuncCall, c *exprCtx) (*plan.Expr, error) {
	name, loc := funcName(fc), fc.Location
	switch {
	case c.windows == nil:
		return nil, b.errorf(CodeGrouping, loc, "window functions are not allowed in %s", c.clause)
	case c.inWindow:
		return nil, b.errorf(CodeGrouping, loc, "window function calls cannot be nested")
	case c.inAgg:
		return nil, b.errorf(CodeGrouping, loc, "aggregate function calls cannot contain window function calls")
	case len(fc.AggOrder) > 0 || fc.AggWithinGroup:
		return nil, b.unsupported(loc, "ORDER BY inside window function arguments")
	}
	wd, err := b.resolveWindow(c.windows, fc.Over)
	if err != nil {
		return nil, err
	}
	// Arguments, keys and offsets see the rows the window runs over: after
	// aggregation, aggregates of them allowed, as in the select list.
	inner := c.with(func(x *exprCtx) { x.inWindow = true })
	bindPost := func(n *pg.Node, clause string) (*plan.Expr, error) {
		e, err := b.bindExpr(n, inner)
		if err != nil {
			return nil, err
		}
		return b.grouped(e, c.aggs, clause)
	}
	var bw boundWindow
	for _, p := range wd.PartitionClause {
		e, err := bindPost(p, "PARTITION BY")
		if err != nil {
			return nil, err
		}
		if e.Type.ID == plan.Null {
			e = nullOf(plan.Int64Type)
		}
		bw.partition = append(bw.partition, e)
	}
	for _, o := range wd.OrderClause {
		sb := o.GetSortBy()
		if sb == nil || sb.SortbyDir == pg.SortByDir_SORTBY_USING {
			return nil, b.unsupported(exprLoc(o), "this window ORDER BY item")
		}
		e, err := bindPost(sb.Node, "window ORDER BY")
		if err != nil {
			return nil, err
		}
		if e.Type.ID == plan.Null {
			e = nullOf(plan.Int64Type)
		}
		bw.order = append(bw.order, sortKey{expr: e, desc: sb.SortbyDir == pg.SortByDir_SORTBY_DESC,
			nullsFirst: sb.SortbyNulls == pg.SortByNulls_SORTBY_NULLS_FIRST})
	}
	var args []*plan.Expr
	for _, a := range fc.Args {
		e, err := bindPost(a, name+"()")
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	// A window over a correlated column (its value fixed for the whole
	// subquery run) is refused: decorrelation cannot move a window, and
	// DuckDB refuses it too.
	for _, e := range append(append(append([]*plan.Expr(nil), bw.partition...), sortExprs(bw.order)...), args...) {
		if c.scope != nil && refersTo(e, c.scope.outer) {
			return nil, b.unsupported(loc, "a window function over a column of an enclosing query (a correlated reference in OVER or in its arguments)")
		}
	}
	call, err := b.windowFunction(fc, name, args)
	if err != nil {
		return nil, err
	}
	if fc.AggFilter != nil {
		// agg(x) FILTER (WHERE p) OVER w = agg(CASE WHEN p THEN x END) OVER w,
		// count(*) FILTER (WHERE p) = count(CASE WHEN p THEN 1 END).
		if !call.fn.IsAggregate() {
			return nil, b.errorf(CodeType, loc, "type mismatch: FILTER needs an aggregate, not %s()", name)
		}
		cond, err := bindPost(fc.AggFilter, "FILTER")
		if err != nil {
			return nil, err
		}
		if cond, err = b.requireBool(cond, "FILTER", exprLoc(fc.AggFilter)); err != nil {
			return nil, err
		}
		if call.fn == plan.WindowFunc(plan.AggCountStar) {
			call.fn, call.args = plan.WindowFunc(plan.AggCount), []*plan.Expr{intLit(1)}
		}
		x := call.args[0]
		call.args = []*plan.Expr{fold(plan.Call(plan.OpCase, x.Type, cond, x, nullOf(x.Type)))}
	}
	if call.frame, err = b.bindFrame(wd, bw.order, c); err != nil {
		return nil, err
	}
	if fc.AggDistinct {
		info := aggInfo(plan.AggFunc(call.fn))
		switch {
		case info.Frame == nil || call.fn == plan.WindowFunc(plan.AggCountStar):
			return nil, b.errorf(CodeType, loc, "type mismatch: DISTINCT needs an aggregate of a value, not %s()", name)
		case !wholePartition(call.frame, bw.order):
			return nil, b.unsupported(loc, "DISTINCT in window functions over a frame other than the whole partition")
		}
		// min and max ignore duplicates anyway.
		call.distinct = !info.DuplicateInsensitive
	}
	bw.call = call
	nullable := true
	switch call.fn {
	case plan.WinRowNumber, plan.WinRank, plan.WinDenseRank, plan.WinPercentRank, plan.WinCumeDist,
		plan.WindowFunc(plan.AggCount), plan.WindowFunc(plan.AggCountStar):
		nullable = false
	}
	bw.col = b.md.add(column{name: windowName(name, fc, call), typ: call.typ, nullable: nullable})
	c.windows.calls = append(c.windows.calls, bw)
	if c.aggs != nil {
		c.aggs.extra[bw.col] = true
	}
	return b.md.ref(bw.col), nil
}

func windowName(name string, fc *pg.FuncCall, call windowCall) string {
	if fc.AggStar {
		return name + "(*) OVER (...)"
	}
	return fmt.Sprintf("%s(%s) OVER (...)", name, joinExprs(call.args, ", "))
}

// windowFunction checks a window function's arguments and gives its type.
func (b *binder) windowFunction(fc *pg.FuncCall, name string, args []*plan.Expr) (windowCall, error) {
	loc := fc.Location
	nargs := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			if lo == hi {
				return b.errorf(CodeType, loc, "type mismatch: %s takes %d argument(s), got %d", name, lo, len(args))
			}
			return b.errorf(CodeType, loc, "type mismatch: %s takes %d to %d arguments, got %d", name, lo, hi, len(args))
		}
		return nil
	}
	intArg := func(i int) error {
		a := args[i]
		if a.Type.ID == plan.Null {
			args[i] = nullOf(plan.Int64Type)
			return nil
		}
		if a.Type.ID != plan.Int64 {
			return b.errorf(CodeType, loc, "type mismatch: argument %d of %s must be an integer, not %s", i+1, name, a.Type)
		}
		return nil
	}
	value := func() {
		if args[0].Type.ID == plan.Null {
			args[0] = nullOf(plan.Int64Type)
		}
	}
	c := windowCall{fn: plan.WindowFunc(name), typ: plan.Int64Type}
	switch name {
	case "row_number", "rank", "dense_rank":
		return c, nargs(0, 0)
	case "percent_rank", "cume_dist":
		c.typ = plan.Float64Type
		return c, nargs(0, 0)
	case "ntile":
		if err := nargs(1, 1); err != nil {
			return c, err
		}
		c.args = args
		return c, intArg(0)
	case "lag", "lead":
		if err := nargs(1, 3); err != nil {
			return c, err
		}
		value()
		c.typ = args[0].Type
		if len(args) >= 2 {
			if err := intArg(1); err != nil {
				return c, err
			}
		}
		if len(args) == 3 {
			t, ok := supertype(args[0], args[2])
			if !ok {
				return c, b.errorf(CodeType, loc, "type mismatch: %s default of type %s for a value of type %s", name, args[2].Type, args[0].Type)
			}
			var err error
			if args[0], err = b.cast(args[0], t, loc); err != nil {
				return c, err
			}
			if args[2], err = b.cast(args[2], t, loc); err != nil {
				return c, err
			}
			c.typ = t
		}
		c.args = args
		return c, nil
	case "first_value", "last_value":
		if err := nargs(1, 1); err != nil {
			return c, err
		}
		value()
		c.typ, c.args = args[0].Type, args
		return c, nil
	case "nth_value":
		if err := nargs(2, 2); err != nil {
			return c, err
		}
		value()
		if err := intArg(1); err != nil {
			return c, err
		}
		c.typ, c.args = args[0].Type, args
		return c, nil
	}
	f, ok := exec.LookupAggregate(name)
	if !ok || !f.Windowed() { // the frame aggregates the window operator evaluates
		return c, b.unsupported(loc, "window function "+name+"()")
	}
	if fc.AggStar {
		if f.Name != plan.AggCount {
			return c, b.errorf(CodeType, loc, "type mismatch: %s(*) is not defined", name)
		}
		c.fn = plan.WindowFunc(plan.AggCountStar)
		return c, nil
	}
	if err := nargs(1, 1); err != nil {
		return c, err
	}
	value()
	sig, ok := f.Signature(args[0].Type)
	if !ok {
		return c, b.errorf(CodeType, loc, "type mismatch: %s is not defined for %s", name, args[0].Type)
	}
	if sig.Cast.ID != "" {
		var err error
		if args[0], err = b.cast(args[0], sig.Cast, loc); err != nil {
			return c, err
		}
	}
	c.fn, c.args, c.typ = plan.WindowFunc(f.Planned()), args, sig.ReturnType(args[0].Type)
	return c, nil
}

// wholePartition reports whether every row's frame is its whole
// partition: UNBOUNDED on both sides, or the default frame without ORDER
// BY (all rows are peers), with nothing excluded.
func wholePartition(f plan.Frame, order []sortKey) bool {
	if f.Exclude != plan.ExcludeNoOthers || f.Start.Kind != plan.BoundUnboundedPreceding {
		return false
	}
	return f.End.Kind == plan.BoundUnboundedFollowing ||
		len(order) == 0 && f.Mode != plan.FrameRows && f.End.Kind == plan.BoundCurrentRow
}

// bindFrame reads a window's frame clause. Without one the frame is RANGE
// BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (the whole partition when
// there is no ORDER BY, as all rows are then peers).
func (b *binder) bindFrame(wd *pg.WindowDef, order []sortKey, c *exprCtx) (plan.Frame, error) {
	opts := wd.FrameOptions
	f := plan.Frame{Mode: plan.FrameRange, Start: plan.FrameBound{Kind: plan.BoundUnboundedPreceding},
		End: plan.FrameBound{Kind: plan.BoundCurrentRow}}
	if opts&frameNonDefault == 0 {
		return f, nil
	}
	switch {
	case opts&frameExcludeCurrentRow != 0:
		f.Exclude = plan.ExcludeCurrentRow
	case opts&frameExcludeGroup != 0:
		f.Exclude = plan.ExcludeGroup
	case opts&frameExcludeTies != 0:
		f.Exclude = plan.ExcludeTies
	}
	switch {
	case opts&frameGroups != 0:
		f.Mode = plan.FrameGroups
	case opts&frameRows != 0:
		f.Mode = plan.FrameRows
	case opts&frameRange != 0:
		f.Mode = plan.FrameRange
	}
	offset := func(n *pg.Node) (float64, error) {
		e, err := b.bindExpr(n, &exprCtx{clause: "window frame", scope: c.scope})
		if err != nil {
			return 0, err
		}
		e = fold(e)
		if !isLit(e) || e.Value.Null {
			return 0, b.unsupported(exprLoc(n), "window frame offsets other than non-NULL constants")
		}
		var v float64
		switch e.Type.ID {
		case plan.Int64:
			v = float64(e.Value.I)
		case plan.Float64:
			v = e.Value.F
		case plan.Decimal:
			v = float64(e.Value.I) / math.Pow10(int(e.Type.Scale))
		default:
			return 0, b.errorf(CodeType, exprLoc(n), "type mismatch: window frame offset of type %s", e.Type)
		}
		if v < 0 {
			return 0, b.errorf(CodeValue, exprLoc(n), "window frame offset must not be negative")
		}
		if (f.Mode == plan.FrameRows || f.Mode == plan.FrameGroups) && v != math.Trunc(v) {
			return 0, b.errorf(CodeType, exprLoc(n), "type mismatch: %s frame offset must be an integer", strings.ToUpper(string(f.Mode)))
		}
		return v, nil
	}
	var err error
	switch {
	case opts&frameStartUnboundedPre != 0:
		f.Start = plan.FrameBound{Kind: plan.BoundUnboundedPreceding}
	case opts&frameStartCurrentRow != 0:
		f.Start = plan.FrameBound{Kind: plan.BoundCurrentRow}
	case opts&frameStartOffsetPre != 0:
		f.Start.Kind = plan.BoundPreceding
		f.Start.Offset, err = offset(wd.StartOffset)
	case opts&frameStartOffsetFol != 0:
		f.Start.Kind = plan.BoundFollowing
		f.Start.Offset, err = offset(wd.StartOffset)
	default:
		return f, b.unsupported(wd.Location, "this window frame start")
	}
	if err != nil {
		return f, err
	}
	switch {
	case opts&frameEndUnboundedFol != 0:
		f.End = plan.FrameBound{Kind: plan.BoundUnboundedFollowing}
	case opts&frameEndCurrentRow != 0:
		f.End = plan.FrameBound{Kind: plan.BoundCurrentRow}
	case opts&frameEndOffsetPre != 0:
		f.End.Kind = plan.BoundPreceding
		f.End.Offset, err = offset(wd.EndOffset)
	case opts&frameEndOffsetFol != 0:
		f.End.Kind = plan.BoundFollowing
		f.End.Offset, err = offset(wd.EndOffset)
	default:
		return f, b.unsupported(wd.Location, "this window frame end")
	}
	if err != nil {
		return f, err
	}
	if f.Mode == plan.FrameRange {
		offsets := f.Start.Kind == plan.BoundPreceding || f.Start.Kind == plan.BoundFollowing ||
			f.End.Kind == plan.BoundPreceding || f.End.Kind == plan.BoundFollowing
		if offsets {
			if len(order) != 1 {
				return f, b.errorf(CodeType, wd.Location, "type mismatch: RANGE with an offset needs exactly one ORDER BY key")
			}
			if t := order[0].expr.Type; !t.IsNumeric() && t.ID != plan.Date {
				return f, b.errorf(CodeType, wd.Location, "type mismatch: RANGE with an offset needs a numeric or date ORDER BY key, not %s", t)
			}
		}
	}
	return f, nil
}

// buildWindows stacks the collected window calls over root: one
// windowNode per distinct (PARTITION BY, ORDER BY), in order of first use.
// Computed partition keys are projected below first, so the lowering can
// hash on columns.
func (b *binder) buildWindows(root node, wb *windowBuilder) node {
	type group struct {
		key string
		n   *windowNode
	}
	var groups []*group
	for _, bw := range wb.calls {
		var k strings.Builder
		for _, p := range bw.partition {
			k.WriteString(exprKey(p) + ";")
		}
		k.WriteString("|")
		for _, o := range bw.order {
			fmt.Fprintf(&k, "%s %v %v;", exprKey(o.expr), o.desc, o.nullsFirst)
		}
		var g *group
		for _, x := range groups {
			if x.key == k.String() {
				g = x
			}
		}
		if g == nil {
			g = &group{key: k.String(), n: &windowNode{partition: bw.partition, order: bw.order}}
			groups = append(groups, g)
		}
		g.n.calls = append(g.n.calls, bw.call)
		g.n.cols = append(g.n.cols, bw.col)
	}
	for _, g := range groups {
		w := g.n
		var computed []int
		for i, p := range w.partition {
			if p.Op != plan.OpColumn {
				computed = append(computed, i)
			}
		}
		if len(computed) > 0 {
			p := &projectNode{input: root}
			for _, id := range root.output() {
				p.exprs = append(p.exprs, b.md.ref(id))
				p.cols = append(p.cols, id)
			}
			part := append([]*plan.Expr(nil), w.partition...)
			for _, i := range computed {
				e := w.partition[i]
				id := b.md.add(column{name: exprName(e), typ: e.Type, nullable: b.nullable(e)})
				p.exprs = append(p.exprs, e)
				p.cols = append(p.cols, id)
				part[i] = b.md.ref(id)
			}
			w.partition = part
			root = p
		}
		w.input = root
		root = w
	}
	return root
}

func sortExprs(keys []sortKey) []*plan.Expr {
	out := make([]*plan.Expr, len(keys))
	for i, k := range keys {
		out[i] = k.expr
	}
	return out
}

// refersTo reports whether e reads any of cols.
func refersTo(e *plan.Expr, cols map[colID]bool) bool {
	if e == nil || len(cols) == 0 {
		return false
	}
	if e.Op == plan.OpColumn && cols[e.Col] {
		return true
	}
	for _, a := range e.Args {
		if refersTo(a, cols) {
			return true
		}
	}
	return false
}
