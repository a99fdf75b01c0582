package planner

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// valuesNode is a relation of constant rows: a VALUES list, or the single
// row SELECT without FROM reads (one dummy column, as DuckDB's dummy scan,
// since an operator without columns cannot carry its row count). Each row
// has one constant expression per column, cast to the column's type.
type valuesNode struct {
	rows [][]*plan.Expr
	cols []colID
}

func (n *valuesNode) children() []node            { return nil }
func (n *valuesNode) withChildren([]node) node    { c := *n; return &c }
func (n *valuesNode) output() []colID             { return n.cols }
func (n *valuesNode) describe(m *metadata) string { return fmt.Sprintf("Values: rows=%d", len(n.rows)) }

// oneRow is the input of a SELECT without FROM.
func (b *binder) oneRow() *valuesNode {
	id := b.md.add(column{name: "dummy", typ: plan.Int64Type})
	return &valuesNode{rows: [][]*plan.Expr{{intLit(0)}}, cols: []colID{id}}
}

// bindValues binds VALUES (...), (...): every row has the same number of
// columns, the types of a column meet in their common type (as UNION's),
// columns are named col0, col1, ... (as DuckDB). ORDER BY and LIMIT apply
// to the rows.
func (b *binder) bindValues(sel *pg.SelectStmt, parent *scope) (node, error) {
	c := &exprCtx{clause: "VALUES", scope: newScope(parent)}
	var rows [][]*plan.Expr
	for _, l := range sel.ValuesLists {
		items := l.GetList().GetItems()
		if len(rows) > 0 && len(items) != len(rows[0]) {
			return nil, b.errorf(CodeValue, exprLoc(l), "VALUES lists must all be the same length (%d and %d)", len(rows[0]), len(items))
		}
		var row []*plan.Expr
		for _, it := range items {
			e, err := b.bindExpr(it, c)
			if err != nil {
				return nil, err
			}
			if len(refs(e)) > 0 {
				return nil, b.unsupported(exprLoc(it), "column references in VALUES")
			}
			row = append(row, e)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 || len(rows[0]) == 0 {
		return nil, b.errorf(CodeValue, -1, "VALUES needs at least one column")
	}
	n := &valuesNode{}
	names := make([]string, len(rows[0]))
	for k := range rows[0] {
		acc := rows[0][k]
		for _, r := range rows[1:] {
			t, ok := supertype(acc, r[k])
			if !ok {
				return nil, b.errorf(CodeType, -1, "type mismatch: VALUES column %d has types %s and %s", k+1, acc.Type, r[k].Type)
			}
			acc = &plan.Expr{Op: plan.OpColumn, Type: t}
		}
		t := acc.Type
		if t.ID == plan.Null {
			t = plan.Int64Type
		}
		nullable := false
		for _, r := range rows {
			e, err := b.cast(r[k], t, -1)
			if err != nil {
				return nil, err
			}
			if e.Op == plan.OpLiteral && e.Type.ID == plan.Null {
				e = nullOf(t)
			}
			r[k] = e
			nullable = nullable || b.nullable(e)
		}
		names[k] = fmt.Sprintf("col%d", k)
		n.cols = append(n.cols, b.md.add(column{name: names[k], typ: t, nullable: nullable}))
	}
	n.rows = rows
	if len(sel.SortClause) == 0 && sel.LimitCount == nil && sel.LimitOffset == nil {
		return n, nil
	}
	sc := newScope(parent)
	sc.rels = []*relation{{alias: "", table: "values", cols: n.cols, names: names}}
	star := &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Location: -1, Val: &pg.Node{Node: &pg.Node_ColumnRef{
		ColumnRef: &pg.ColumnRef{Location: -1, Fields: []*pg.Node{{Node: &pg.Node_AStar{AStar: &pg.A_Star{}}}}}}}}}}
	wrapper := &pg.SelectStmt{TargetList: []*pg.Node{star}, SortClause: sel.SortClause,
		LimitCount: sel.LimitCount, LimitOffset: sel.LimitOffset, LimitOption: sel.LimitOption}
	return b.bindSelectBody(wrapper, n, sc)
}

// lowerValues lowers constant rows to a KindValues leaf in a single task.
func (l *lowerer) lowerValues(n *valuesNode) (*fragment, error) {
	var rows [][]*plan.Expr // nil for no rows, as JSON decodes it
	if len(n.rows) > 0 {
		rows = make([][]*plan.Expr, len(n.rows))
	}
	for i, r := range n.rows {
		rows[i] = make([]*plan.Expr, len(r))
		for k, e := range r {
			p, err := l.phys(e, nil)
			if err != nil {
				return nil, err
			}
			rows[i][k] = p
		}
	}
	return &fragment{
		root:   &plan.Node{Kind: plan.KindValues, Schema: l.schema(n.cols), Rows: rows, Limit: -1},
		cols:   n.cols,
		single: true,
	}, nil
}

// estimateValues: the row count is known exactly.
func (es *estimator) estimateValues(n *valuesNode) *estimate {
	rows := float64(len(n.rows))
	e := &estimate{rows: rows, cols: map[colID]colStat{}}
	for _, id := range n.cols {
		e.cols[id] = colStat{ndv: rows, base: rows, width: typeWidth(es.md.col(id).typ)}
	}
	return e
}
