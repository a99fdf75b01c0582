package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/planner/sqlparse"
)

// distinctOn binds SELECT DISTINCT ON (e1, ..., ek) ... ORDER BY o1, ...,
// on as what it means: the first row of each group of equal e1..ek in the
// ORDER BY order, that is
//
//	QUALIFY row_number() OVER (PARTITION BY e1..ek ORDER BY o1..on) = 1
//
// (evaluated after WHERE, GROUP BY and HAVING, before the final ORDER BY
// and LIMIT, as Postgres and DuckDB apply DISTINCT ON). Without an ORDER
// BY the row kept of a group is any of them, as there. Items that name a
// select-list alias or position refer to that select-list expression, as
// in ORDER BY. It returns nil for a SELECT without DISTINCT ON.
func (b *binder) distinctOn(sel *pg.SelectStmt) (*qualifyClause, error) {
	if len(sel.DistinctClause) == 0 || sel.DistinctClause[0] == nil || sel.DistinctClause[0].Node == nil {
		return nil, nil
	}
	loc := exprLoc(sel.DistinctClause[0])
	// The window and the comparison come from the parser, so they carry
	// its defaults (the frame options of an OVER clause).
	tree, err := sqlparse.Parse("select row_number() over (partition by 1 order by 1) = 1")
	if err != nil {
		return nil, b.errorf(plan.CodeInternal, loc, "DISTINCT ON: %v", err)
	}
	cond := tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val
	win := cond.GetAExpr().Lexpr.GetFuncCall()
	win.Location = loc
	resolve := func(n *pg.Node) (*pg.Node, error) {
		if c := n.GetAConst(); c != nil && c.GetIval() != nil {
			k := int(c.GetIval().Ival)
			if k < 1 || k > len(sel.TargetList) {
				return nil, b.errorf(CodeValue, exprLoc(n), "DISTINCT ON/ORDER BY position %d is not in the select list", k)
			}
			t := sel.TargetList[k-1].GetResTarget()
			if cr := t.GetVal().GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
				return nil, b.unsupported(exprLoc(n), "DISTINCT ON with a position into SELECT *")
			}
			return t.Val, nil
		}
		if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
			if s := cr.Fields[0].GetString_(); s != nil {
				for _, t := range sel.TargetList {
					if rt := t.GetResTarget(); rt.Name != "" && strings.EqualFold(rt.Name, s.Sval) {
						return rt.Val, nil
					}
				}
			}
		}
		return n, nil
	}
	win.Over.PartitionClause = nil
	for _, d := range sel.DistinctClause {
		e, err := resolve(d)
		if err != nil {
			return nil, err
		}
		win.Over.PartitionClause = append(win.Over.PartitionClause, e)
	}
	win.Over.OrderClause = nil
	for _, s := range sel.SortClause {
		sb := s.GetSortBy()
		e, err := resolve(sb.Node)
		if err != nil {
			return nil, err
		}
		win.Over.OrderClause = append(win.Over.OrderClause, &pg.Node{Node: &pg.Node_SortBy{SortBy: &pg.SortBy{
			Node: e, SortbyDir: sb.SortbyDir, SortbyNulls: sb.SortbyNulls, UseOp: sb.UseOp, Location: sb.Location}}})
	}
	return &qualifyClause{pos: loc, cond: cond}, nil
}
