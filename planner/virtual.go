package planner

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// Virtual tables and SQL functions: what a catalog may define beyond its
// tables, so that a front end can put relations and functions of its own
// (the Postgres catalog of coordinator/pgwire) in front of the ordinary
// planner and executor.
//
//   - A table whose TableInfo.Constant is set has its rows in the plan: it
//     binds as a Values leaf of TableInfo.Values (no files, no scan), and
//     everything above it (joins, subqueries, windows, LIKE, CASE ...) is
//     planned as for any table.
//   - A FunctionCatalog defines SQL functions (macros, as DuckDB's CREATE
//     MACRO and its pg_catalog functions): a call binds as the function's
//     body, an expression in which $1 ... $n stand for the arguments. A
//     cast to a type the engine lacks (x::regclass) binds as the function
//     "::regclass" of one argument, when the catalog has one. A table
//     function in FROM (pg_get_keywords()) binds as the constant table the
//     catalog returns for it.

// FunctionCatalog is a Catalog that also defines SQL functions and table
// functions.
type FunctionCatalog interface {
	Catalog
	// Function returns the body of the SQL function name over the bound
	// arguments args (their types, and their values where they are
	// constants): one SQL expression over $1 ... $n. name is lower case,
	// without its schema; a cast to type T asks for "::T", and x::R::T
	// first for "::R::T". With nil args it says whether it has the name
	// at all. An error is the call's (a constant argument naming nothing).
	Function(name string, args []*plan.Expr) (body string, ok bool, err error)
	// TableFunction returns the relation the table function name (lower
	// case, no schema) of constant arguments args gives; it should be
	// Constant.
	TableFunction(name string, args []plan.Value) (*TableInfo, bool)
}

// maxMacroDepth bounds SQL functions calling SQL functions.
const maxMacroDepth = 16

// constantTable binds a Constant table as a Values leaf with the columns
// of rel.
func (b *binder) constantTable(info *TableInfo, rel *relation) (node, error) {
	n := &valuesNode{cols: rel.cols}
	for i, row := range info.Values {
		if len(row) != len(info.Columns) {
			return nil, fmt.Errorf("planner: constant table %q: row %d has %d values for %d columns", info.Name, i, len(row), len(info.Columns))
		}
		r := make([]*plan.Expr, len(row))
		for k, v := range row {
			r[k] = lit(v, info.Columns[k].Type)
		}
		n.rows = append(n.rows, r)
	}
	return n, nil
}

// macro binds a call of a catalog SQL function: the arguments are bound
// (once), then the function's body, each $k standing for a copy of
// argument k. ok false: the catalog has no such function.
func (b *binder) macro(name string, args []*pg.Node, loc int32, c *exprCtx) (e *plan.Expr, ok bool, err error) {
	fc, isFC := b.cat.(FunctionCatalog)
	if !isFC {
		return nil, false, nil
	}
	if _, known, _ := fc.Function(name, nil); !known {
		return nil, false, nil
	}
	bound := make([]*plan.Expr, len(args))
	for i, a := range args {
		if bound[i], err = b.bindExpr(a, c); err != nil {
			return nil, true, err
		}
		bound[i] = fold(bound[i])
	}
	body, found, err := fc.Function(name, bound)
	if err != nil {
		code := plan.CodeOf(err)
		return nil, true, &Error{Code: code, Pos: charPos(b.sql, loc), Msg: strings.TrimPrefix(err.Error(), code+": "), err: err}
	}
	if !found {
		return nil, true, b.unsupported(loc, fmt.Sprintf("function %s() of %d argument(s) of these types", name, len(args)))
	}
	if len(b.macroArgs) >= maxMacroDepth {
		return nil, true, b.unsupported(loc, "SQL functions nested more than 16 deep ("+name+")")
	}
	tree, _, err := parse("SELECT " + body)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, true, fmt.Errorf("planner: the body of SQL function %s does not parse: %v", name, err)
	}
	expr := tree.Stmts[0].Stmt.GetSelectStmt().GetTargetList()[0].GetResTarget().GetVal()
	b.macroArgs = append(b.macroArgs, bound)
	defer func() { b.macroArgs = b.macroArgs[:len(b.macroArgs)-1] }()
	e, err = b.bindExpr(expr, c)
	return e, true, err
}

// macroArg is $k inside the body of a catalog SQL function: a copy of the
// bound argument.
func (b *binder) macroArg(p *pg.ParamRef) (*plan.Expr, bool) {
	if len(b.macroArgs) == 0 {
		return nil, false
	}
	args := b.macroArgs[len(b.macroArgs)-1]
	if p.Number < 1 || int(p.Number) > len(args) {
		return nil, false
	}
	return copyExpr(args[p.Number-1]), true
}

func copyExpr(e *plan.Expr) *plan.Expr {
	c := *e
	if e.Value != nil {
		v := *e.Value
		c.Value = &v
	}
	if e.Args != nil {
		c.Args = make([]*plan.Expr, len(e.Args))
		for i, a := range e.Args {
			c.Args[i] = copyExpr(a)
		}
	}
	return &c
}

// tableFunction binds a catalog table function in FROM (constant
// arguments only). ok false: the catalog has none of that name.
func (b *binder) tableFunction(fc *pg.FuncCall, alias *pg.Alias, parent *scope) (node, []*relation, bool, error) {
	cat, isFC := b.cat.(FunctionCatalog)
	if !isFC {
		return nil, nil, false, nil
	}
	c := &exprCtx{clause: "FROM", scope: newScope(parent)}
	var args []plan.Value
	for _, a := range fc.Args {
		e, err := b.bindExpr(a, c)
		if err != nil {
			return nil, nil, false, nil
		}
		if e = fold(e); !isLit(e) {
			return nil, nil, false, nil
		}
		args = append(args, *e.Value)
	}
	info, ok := cat.TableFunction(funcName(fc), args)
	if !ok {
		return nil, nil, false, nil
	}
	rv := &pg.RangeVar{Relname: info.Name, Alias: alias, Location: fc.Location}
	n, rel, err := b.bindTableInfo(rv, info)
	if err != nil {
		return nil, nil, true, err
	}
	if alias == nil && len(info.Columns) == 1 {
		rel.alias = strings.ToLower(funcName(fc))
	}
	return n, []*relation{rel}, true, nil
}
