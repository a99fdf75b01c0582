package exec

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/sluicedb/sluice/planner/plan"
)

// unnestOp emits one row per element of a list for each input row
// (plan.KindUnnest): the input columns gathered once per element, and the
// elements themselves. NULL and empty lists give no rows.
type unnestOp struct {
	in     Operator
	list   *plan.Expr
	schema *arrow.Schema
	opts   Options
}

// NewUnnest unnests n.Exprs[0] over the batches of in.
func NewUnnest(in Operator, n *plan.Node, opts Options) (Operator, error) {
	if len(n.Exprs) != 1 {
		return nil, fmt.Errorf("exec: unnest: %d list expressions, want 1", len(n.Exprs))
	}
	return &unnestOp{in: in, list: n.Exprs[0], schema: n.Schema.Arrow(), opts: opts.withDefaults()}, nil
}

func (u *unnestOp) Schema() *arrow.Schema { return u.schema }

func (u *unnestOp) Close() error { return u.in.Close() }

func (u *unnestOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		rec, err := u.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		out, err := u.unnest(rec)
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("exec: unnest: %w", err)
		}
		if out.NumRows() > 0 {
			return out, nil
		}
		out.Release()
	}
}

func (u *unnestOp) unnest(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	la, err := Eval(u.list, rec, u.opts.Mem)
	if err != nil {
		return nil, err
	}
	defer la.Release()
	var rows, elems []int32
	if l, ok := la.(*array.List); ok {
		for i := 0; i < l.Len(); i++ {
			if l.IsNull(i) {
				continue
			}
			lo, hi := l.ValueOffsets(i)
			for j := lo; j < hi; j++ {
				rows = append(rows, int32(i))
				elems = append(elems, int32(j))
			}
		}
	} else if la.DataType().ID() != arrow.NULL {
		return nil, fmt.Errorf("unnest of %s, not a list", la.DataType())
	}
	cols := make([]arrow.Array, 0, rec.NumCols()+1)
	for _, c := range rec.Columns() {
		t, err := take(u.opts.Mem, c, rows)
		if err != nil {
			releaseAll(cols)
			return nil, err
		}
		cols = append(cols, t)
	}
	var e arrow.Array
	if l, ok := la.(*array.List); ok {
		e, err = take(u.opts.Mem, l.ListValues(), elems)
	} else {
		e = makeNulls(u.opts.Mem, u.schema.Field(len(cols)).Type, 0)
	}
	if err != nil {
		releaseAll(cols)
		return nil, err
	}
	return conformRecord(u.opts.Mem, u.schema, append(cols, e), len(rows))
}
