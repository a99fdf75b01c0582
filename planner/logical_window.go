package planner

import (
	"fmt"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// windowNode evaluates window functions that share one PARTITION BY and
// ORDER BY: its output is its input's columns followed by one column per
// call (cols). partition keys are plain column references (the binder
// projects computed keys below), so the lowering can hash on them.
type windowNode struct {
	input     node
	partition []*plan.Expr
	order     []sortKey
	calls     []windowCall
	cols      []colID
}

// windowCall is one window function call.
type windowCall struct {
	fn    plan.WindowFunc
	args  []*plan.Expr
	typ   plan.DataType
	frame plan.Frame
	// distinct: fn(DISTINCT x) over a whole-partition frame.
	distinct bool
}

func (n *windowNode) children() []node { return []node{n.input} }

func (n *windowNode) withChildren(ch []node) node {
	c := *n
	c.input = ch[0]
	return &c
}

func (n *windowNode) output() []colID {
	return append(append([]colID{}, n.input.output()...), n.cols...)
}

func (n *windowNode) describe(m *metadata) string {
	calls := make([]string, len(n.calls))
	for i, c := range n.calls {
		calls[i] = c.String() + " AS " + m.col(n.cols[i]).name
	}
	keys := make([]string, len(n.order))
	for i, k := range n.order {
		keys[i] = k.String()
	}
	return fmt.Sprintf("Window: partition_by=[%s], order_by=[%s], calls=[%s]",
		joinExprs(n.partition, ", "), strings.Join(keys, ", "), strings.Join(calls, ", "))
}

func (c windowCall) String() string {
	s := fmt.Sprintf("%s(%s)", c.fn, joinExprs(c.args, ", "))
	if c.distinct {
		s = fmt.Sprintf("%s(DISTINCT %s)", c.fn, joinExprs(c.args, ", "))
	}
	if c.fn == plan.WindowFunc(plan.AggCountStar) {
		s = "count(*)"
	}
	if c.fn.UsesFrame() {
		s += " " + frameString(c.frame)
	}
	return s
}

func frameString(f plan.Frame) string { return f.String() }
