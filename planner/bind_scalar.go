package planner

import "github.com/sluicedb/sluice/planner/plan"

// singleRowNode passes its input on and fails the query at run time when
// it yields more than one row (see plan.KindSingleRow).
type singleRowNode struct {
	input node
}

func (n *singleRowNode) children() []node { return []node{n.input} }
func (n *singleRowNode) withChildren(ch []node) node {
	c := *n
	c.input = ch[0]
	return &c
}
func (n *singleRowNode) output() []colID           { return n.input.output() }
func (n *singleRowNode) describe(*metadata) string { return "SingleRow:" }

// scalarValue makes a scalar subquery that may yield any number of rows
// yield exactly one: its rows are checked to be at most one (a run-time
// error otherwise, as in DuckDB), and an aggregation without GROUP BY
// turns none into NULL (min of at most one value is that value). It
// returns the new plan and its value column.
func (b *binder) scalarValue(sub node, col colID) (node, colID) {
	c := b.md.col(col)
	agg := &aggregateNode{input: &singleRowNode{input: sub},
		aggs: []aggExpr{{fn: plan.AggMin, arg: b.md.ref(col), typ: c.typ}}}
	c.nullable = true
	agg.aggCols = []colID{b.md.add(c)}
	return agg, agg.aggCols[0]
}

// lowerSingleRow gathers the rows into one task and checks them there.
func (l *lowerer) lowerSingleRow(n *singleRowNode) (*fragment, error) {
	f, err := l.lower(n.input)
	if err != nil {
		return nil, err
	}
	f = l.gather(f)
	f.root = &plan.Node{Kind: plan.KindSingleRow, Schema: f.root.Schema, Inputs: []*plan.Node{f.root}}
	return f, nil
}
