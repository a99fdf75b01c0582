package exec

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// expandOp emits every input batch once per projection (plan.KindExpand).
type expandOp struct {
	in     Operator
	projs  [][]*plan.Expr
	schema *arrow.Schema
	opts   Options
	cur    arrow.RecordBatch
	next   int // the projection to apply to cur
}

// NewExpand projects each batch of in with each of n.Expand in turn.
func NewExpand(in Operator, n *plan.Node, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	if len(n.Expand) == 0 {
		return nil, fmt.Errorf("exec: expand: no projections")
	}
	for i, p := range n.Expand {
		if len(p) != len(n.Schema) {
			return nil, fmt.Errorf("exec: expand: projection %d has %d expressions, schema %d", i, len(p), len(n.Schema))
		}
	}
	return &expandOp{in: in, projs: n.Expand, schema: n.Schema.Arrow(), opts: opts}, nil
}

func (e *expandOp) Schema() *arrow.Schema { return e.schema }

func (e *expandOp) Close() error {
	if e.cur != nil {
		e.cur.Release()
		e.cur = nil
	}
	return e.in.Close()
}

func (e *expandOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if e.cur == nil || e.next == len(e.projs) {
		if e.cur != nil {
			e.cur.Release()
			e.cur = nil
		}
		rec, err := e.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		e.cur, e.next = rec, 0
	}
	p := e.projs[e.next]
	e.next++
	cols := make([]arrow.Array, len(p))
	for i, x := range p {
		a, err := Eval(x, e.cur, e.opts.Mem)
		if err != nil {
			releaseAll(cols)
			return nil, fmt.Errorf("exec: expand: %w", err)
		}
		cols[i] = a
	}
	rec, err := conformRecord(e.opts.Mem, e.schema, cols, int(e.cur.NumRows()))
	if err != nil {
		return nil, fmt.Errorf("exec: expand: %w", err)
	}
	return rec, nil
}
