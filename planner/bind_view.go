package planner

import (
	"errors"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/sluicedb/sluice/planner/plan"
)

// maxViewDepth bounds views over views; a deeper chain is almost surely a
// view that reaches itself through others.
const maxViewDepth = 32

// bindView binds a reference to a view (CREATE VIEW): its stored query,
// parsed and bound afresh as a derived table named by the view (or the
// reference's alias). The view's query sees no CTE of the referring
// query, as in Postgres and DuckDB, and shares the metadata, so its
// columns are ordinary columns of the plan. An error inside the view's
// text is reported at the reference, naming the view.
func (b *binder) bindView(rv *pg.RangeVar, info *TableInfo) (node, *relation, error) {
	for _, v := range b.views {
		if strings.EqualFold(v, info.Name) {
			return nil, nil, b.errorf(CodeValue, rv.Location, "view %q refers to itself (through %s)", info.Name, strings.Join(b.views, " -> "))
		}
	}
	if len(b.views) >= maxViewDepth {
		return nil, nil, b.errorf(CodeValue, rv.Location, "views nest deeper than %d levels at %q", maxViewDepth, info.Name)
	}
	text := rewriteNestedLiterals(info.View) // the text parsed: positions (TRY_CAST, STRUCT(...) types) are in it
	tree, quals, err := parse(text)
	if err != nil {
		return nil, nil, b.viewError(rv, info, err)
	}
	if len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
		return nil, nil, b.errorf(CodeValue, rv.Location, "view %q: its stored text is not one query", info.Name)
	}
	b.statementTime() // one statement time for the query and its views
	vb := *b
	vb.sql, vb.qualify, vb.ctes = text, quals, nil
	vb.pos = map[*plan.Expr]int32{}
	vb.views = append(append([]string(nil), b.views...), info.Name)
	sub, err := vb.bindQuery(tree.Stmts[0].Stmt.GetSelectStmt(), nil)
	if err == nil {
		err = vb.unusedQualify()
	}
	if err != nil {
		return nil, nil, b.viewError(rv, info, err)
	}
	if vb.srfNoRows {
		b.srfNoRows = true
	}
	alias := info.Name
	var aliases []*pg.Node
	if rv.Alias != nil {
		alias, aliases = rv.Alias.Aliasname, rv.Alias.Colnames
	}
	return b.derived(sub, alias, aliases, rv.Location)
}

// viewError places an error found in a view's text at the reference to
// the view: its code stays, its message names the view.
func (b *binder) viewError(rv *pg.RangeVar, info *TableInfo, err error) error {
	var pe *Error
	if !errors.As(err, &pe) {
		return err
	}
	e := b.errorf(pe.Code, rv.Location, "in view %q: %s", info.Name, pe.Msg)
	e.err = err
	return e
}
