package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// valuesOp produces the constant rows of a KindValues leaf (VALUES lists,
// SELECT without FROM) as one batch.
type valuesOp struct {
	n      *plan.Node
	schema *arrow.Schema
	mem    memory.Allocator
	done   bool
}

// NewValues returns the operator of a KindValues leaf.
func NewValues(n *plan.Node, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	for i, r := range n.Rows {
		if len(r) != len(n.Schema) {
			return nil, fmt.Errorf("exec: values: row %d has %d values, schema %d columns", i+1, len(r), len(n.Schema))
		}
	}
	return &valuesOp{n: n, schema: n.Schema.Arrow(), mem: opts.Mem}, nil
}

func (v *valuesOp) Schema() *arrow.Schema { return v.schema }
func (v *valuesOp) Close() error          { return nil }

func (v *valuesOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if v.done || len(v.n.Rows) == 0 {
		return nil, io.EOF
	}
	v.done = true
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	defer one.Release()
	cols := make([]arrow.Array, len(v.n.Schema))
	for c, f := range v.n.Schema {
		parts := make([]arrow.Array, 0, len(v.n.Rows))
		for _, r := range v.n.Rows {
			a, err := Eval(r[c], one, v.mem)
			if err != nil {
				releaseAll(parts)
				releaseAll(cols)
				return nil, fmt.Errorf("exec: values: %w", err)
			}
			ca, err := conform(v.mem, a, f.Type.Arrow())
			a.Release()
			if err != nil {
				releaseAll(parts)
				releaseAll(cols)
				return nil, fmt.Errorf("exec: values: column %s: %w", f.Name, err)
			}
			parts = append(parts, ca)
		}
		col, err := array.Concatenate(parts, v.mem)
		releaseAll(parts)
		if err != nil {
			releaseAll(cols)
			return nil, fmt.Errorf("exec: values: %w", err)
		}
		cols[c] = col
	}
	return conformRecord(v.mem, v.schema, cols, len(v.n.Rows)) // takes cols
}
