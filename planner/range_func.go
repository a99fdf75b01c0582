package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// MaxGeneratedRows is the most rows range() and generate_series() may
// make: their rows are constants of the plan (a Values leaf).
const MaxGeneratedRows = 100_000

// bindRangeFunction binds DuckDB's series table functions in FROM:
//
//	range(stop) | range(start, stop[, step])                 stop excluded
//	generate_series(stop) | generate_series(start, stop[, step])  stop included
//
// over integers (step default 1, from 0 when only stop is given), or over
// timestamps (dates read as midnight) with an interval step, each value
// the previous plus the step (months first, clamped to the month's end,
// as DuckDB adds an interval). The one column is named after the function
// unless the alias names it. The arguments must be constants; the rows
// become a Values leaf of at most MaxGeneratedRows.
func (b *binder) bindRangeFunction(f *pg.RangeFunction, at *pg.Node, parent *scope) (node, []*relation, error) {
	loc := exprLoc(at)
	switch {
	case f.Lateral:
		return nil, nil, b.unsupported(loc, "LATERAL")
	case f.Ordinality:
		return nil, nil, b.unsupported(loc, "WITH ORDINALITY")
	case f.IsRowsfrom || len(f.Functions) != 1 || len(f.Coldeflist) > 0:
		return nil, nil, b.unsupported(loc, "ROWS FROM and column definition lists")
	}
	items := f.Functions[0].GetList().GetItems()
	var fc *pg.FuncCall
	if len(items) > 0 {
		fc = items[0].GetFuncCall()
	}
	if fc == nil {
		return nil, nil, b.unsupported(loc, "this table function")
	}
	name := funcName(fc)
	if format, ok := readFormats[name]; ok {
		return b.bindReadFunction(fc, format, f.Alias) // read_func.go
	}
	if n, rels, ok, err := b.tableFunction(fc, f.Alias, parent); ok {
		return n, rels, err // a catalog's table function (virtual.go)
	}
	if name == "unnest" && b.postgres {
		return b.unnestArray(fc, f.Alias, parent)
	}
	if name != "range" && name != "generate_series" {
		return nil, nil, b.unsupported(fc.Location, "table function "+name+"()")
	}
	if len(fc.Args) < 1 || len(fc.Args) > 3 {
		return nil, nil, b.errorf(CodeType, fc.Location, "type mismatch: %s takes (stop), (start, stop) or (start, stop, step)", name)
	}
	c := &exprCtx{clause: "FROM", scope: newScope(parent)}
	args := make([]*plan.Expr, len(fc.Args))
	for i, a := range fc.Args {
		if iv, ok, err := b.intervalOf(a); ok {
			if err != nil {
				return nil, nil, err
			}
			args[i] = intervalValue(iv)
			continue
		}
		e, err := b.bindExpr(a, c)
		if plan.CodeOf(err) == CodeUnknownCol {
			// A FROM item sees no sibling's columns (DuckDB's implicit
			// LATERAL would).
			return nil, nil, b.unsupported(exprLoc(a), name+"() over columns of other FROM items (LATERAL)")
		}
		if err != nil {
			return nil, nil, err
		}
		if !isLit(e) {
			return nil, nil, b.unsupported(exprLoc(a), name+"() with non-constant arguments")
		}
		args[i] = e
	}
	inclusive := name == "generate_series"
	for _, a := range args {
		if a.Value.Null {
			return b.seriesNode(name, f.Alias, plan.Int64Type, nil)
		}
	}
	var vals []int64
	typ := plan.Int64Type
	if args[0].Type.ID == plan.Timestamp || args[0].Type.ID == plan.Date || args[0].Type.ID == plan.String && len(args) > 1 {
		if len(args) != 3 || args[2].Type.ID != plan.Interval {
			return nil, nil, b.errorf(CodeType, fc.Location, "type mismatch: %s over timestamps takes (start, stop, interval step)", name)
		}
		var ts [2]int64
		for i := 0; i < 2; i++ {
			e, err := b.cast(args[i], plan.TimestampType, exprLoc(fc.Args[i]))
			if err != nil {
				return nil, nil, err
			}
			if e = fold(e); !isLit(e) {
				return nil, nil, b.errorf(CodeType, exprLoc(fc.Args[i]), "type mismatch: %s bound is not a timestamp", name)
			}
			ts[i] = e.Value.I
		}
		step := args[2].Value
		forward := step.Months > 0 || step.Months == 0 && (step.Days > 0 || step.Days == 0 && step.I > 0)
		backward := step.Months < 0 || step.Months == 0 && (step.Days < 0 || step.Days == 0 && step.I < 0)
		if !forward && !backward {
			return nil, nil, b.errorf(CodeValue, exprLoc(fc.Args[2]), "%s: the step must not be zero", name)
		}
		for v := ts[0]; forward && (v < ts[1] || inclusive && v == ts[1]) || backward && (v > ts[1] || inclusive && v == ts[1]); v = exec.AddInterval(v, step.Months, step.Days, step.I) {
			if len(vals) == MaxGeneratedRows {
				return nil, nil, b.unsupported(fc.Location, name+"() of more than 100000 rows")
			}
			vals = append(vals, v)
		}
		typ = plan.TimestampType
	} else {
		var ns [3]int64
		ns[2] = 1
		for i, a := range args {
			if !a.Type.IsNumeric() || a.Type.ID == plan.Float64 || a.Type.ID == plan.Decimal && a.Type.Scale > 0 {
				return nil, nil, b.errorf(CodeType, exprLoc(fc.Args[i]), "type mismatch: %s takes integers or timestamps, not %s", name, a.Type)
			}
			e, err := b.cast(a, plan.Int64Type, exprLoc(fc.Args[i]))
			if err != nil {
				return nil, nil, err
			}
			ns[i] = fold(e).Value.I
		}
		start, stop, step := int64(0), ns[0], ns[2]
		if len(args) > 1 {
			start, stop = ns[0], ns[1]
		}
		if step == 0 {
			return nil, nil, b.errorf(CodeValue, exprLoc(fc.Args[2]), "%s: the step must not be zero", name)
		}
		if inclusive {
			if step > 0 && stop < 1<<62 {
				stop++
			} else if step < 0 && stop > -(1<<62) {
				stop--
			}
		}
		for v := start; step > 0 && v < stop || step < 0 && v > stop; v += step {
			if len(vals) == MaxGeneratedRows {
				return nil, nil, b.unsupported(fc.Location, name+"() of more than 100000 rows")
			}
			vals = append(vals, v)
		}
	}
	return b.seriesNode(name, f.Alias, typ, vals)
}

// seriesNode is the Values leaf of one column holding vals, named after
// the function (or the alias).
func (b *binder) seriesNode(name string, alias *pg.Alias, typ plan.DataType, vals []int64) (node, []*relation, error) {
	col, rel := name, name
	if alias != nil {
		rel = alias.Aliasname
		if len(alias.Colnames) > 1 {
			return nil, nil, b.errorf(CodeValue, -1, "%s has one column, the alias names %d", name, len(alias.Colnames))
		}
		if len(alias.Colnames) == 1 {
			col = alias.Colnames[0].GetString_().GetSval()
		} else if b.postgres {
			col = alias.Aliasname // Postgres names a scalar function's column after its alias
		}
	}
	n := &valuesNode{}
	for _, v := range vals {
		n.rows = append(n.rows, []*plan.Expr{lit(plan.Value{I: v}, typ)})
	}
	n.cols = []colID{b.md.add(column{name: col, typ: typ})}
	return n, []*relation{{alias: rel, table: name, cols: n.cols, names: []string{col}}}, nil
}

// unnestArray binds unnest(a) in FROM over a bind-time array (a Postgres
// catalog's, arrays_pg.go): a constant array's elements are its rows, a
// NULL array (a Null column, of this query or the one around it) has
// none.
func (b *binder) unnestArray(fc *pg.FuncCall, alias *pg.Alias, parent *scope) (node, []*relation, error) {
	if len(fc.Args) != 1 {
		return nil, nil, b.unsupported(fc.Location, "unnest() of several arrays")
	}
	c := &exprCtx{clause: "FROM", scope: newScope(parent)}
	a, ok, err := b.array(fc.Args[0], c)
	if err != nil || !ok {
		return nil, nil, orUnsupported(err, b.unsupported(fc.Location, "unnest() of an array of values"))
	}
	typ := a.elem
	for _, e := range a.elems {
		if typ.ID == plan.Null {
			typ = e.Type
		}
	}
	n, rels, err := b.seriesNode("unnest", alias, typ, nil)
	if err != nil || a.null {
		return n, rels, err
	}
	v := n.(*valuesNode)
	for _, e := range a.elems {
		if e.Type.ID != typ.ID && e.Type.ID != plan.Null {
			if e, err = b.cast(e, typ, fc.Location); err != nil {
				return nil, nil, err
			}
			e = fold(e)
		} else if e.Type.ID == plan.Null {
			e = nullOf(typ)
		}
		if e.Value.Null {
			b.md.cols[v.cols[0]].nullable = true
		}
		v.rows = append(v.rows, []*plan.Expr{e})
	}
	return n, rels, nil
}
