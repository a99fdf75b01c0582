package planner

import (
	"fmt"

	"github.com/sluicedb/sluice/planner/plan"
)

// lowerWindow lowers a windowNode. Every window partition must be whole in
// one task: a single fragment already is, and so is one hash-partitioned
// on some of the PARTITION BY keys; otherwise the open stage is closed with
// a hash exchange on the keys (a single partition without keys) and the
// window runs in the stage that reads it. The window sorts its rows
// itself, so the exchange needs no order.
func (l *lowerer) lowerWindow(n *windowNode) (*fragment, error) {
	f, err := l.lower(n.input)
	if err != nil {
		return nil, err
	}
	switch {
	case len(n.partition) == 0:
		f = l.gather(f)
	case f.single:
	default:
		if _, ok := partitionedOn(f, n.partition); !ok {
			out := plan.Partitioning{Kind: plan.PartitionHash, Count: l.opts.Partitions}
			for _, p := range n.partition {
				at := -1
				for i, id := range f.cols {
					if id == p.Col {
						at = i
						break
					}
				}
				if at < 0 {
					return nil, fmt.Errorf("planner: internal error: window partition key %s is not an input column", p.Name)
				}
				out.Keys = append(out.Keys, at)
			}
			id := l.closeStage(f, out)
			f = l.exchange(id, f.root.Schema, f.cols, false)
		}
	}
	w := &plan.Window{}
	for _, p := range n.partition {
		e, err := l.phys(p, f.cols)
		if err != nil {
			return nil, err
		}
		w.PartitionBy = append(w.PartitionBy, e)
	}
	for _, k := range n.order {
		e, err := l.phys(k.expr, f.cols)
		if err != nil {
			return nil, err
		}
		w.OrderBy = append(w.OrderBy, plan.SortKey{Expr: e, Desc: k.desc, NullsFirst: k.nullsFirst})
	}
	for i, c := range n.calls {
		call := plan.WindowCall{Func: c.fn, Type: c.typ, Frame: c.frame, Name: l.md.col(n.cols[i]).name, Distinct: c.distinct}
		for _, a := range c.args {
			e, err := l.phys(a, f.cols)
			if err != nil {
				return nil, err
			}
			call.Args = append(call.Args, e)
		}
		w.Calls = append(w.Calls, call)
	}
	cols := n.output()
	f.root = &plan.Node{Kind: plan.KindWindow, Schema: l.schema(cols), Inputs: []*plan.Node{f.root}, Window: w}
	f.cols = cols
	return f, nil
}

// pruneWindow drops the window calls no operator above reads (the whole
// node when none is left: a window never changes its input's rows) and
// keeps the input columns its keys and arguments read.
func (r pruneColumns) pruneWindow(n *windowNode, need map[colID]bool, md *metadata) node {
	c := *n
	c.calls, c.cols = nil, nil
	child := copySet(need)
	for i, id := range n.cols {
		delete(child, id)
		if need[id] {
			c.calls = append(c.calls, n.calls[i])
			c.cols = append(c.cols, id)
			for _, a := range n.calls[i].args {
				exprCols(a, child)
			}
		}
	}
	if len(c.calls) == 0 {
		return r.prune(n.input, child, md)
	}
	for _, p := range n.partition {
		exprCols(p, child)
	}
	for _, k := range n.order {
		exprCols(k.expr, child)
	}
	c.input = r.prune(n.input, child, md)
	return &c
}
