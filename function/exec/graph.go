package exec

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/sluicedb/sluice/planner/plan"
)

// RunGraph runs a whole stage graph in this process, each stage as one
// task over every row of the stages it reads, and returns the result
// stage's batches (the caller releases them) with the result's column
// names. It is for plans whose leaves are all constant (Values, Empty):
// the Postgres catalog that coordinator/pgwire serves as virtual tables,
// whose few thousand rows do not warrant a job. A scan leaf is an error.
//
// One task per stage gives the answer the partitioned stages would: every
// operator of a stage is correct over all of its input in one task (a
// hash-partitioned stage only splits that input among tasks).
func RunGraph(ctx context.Context, g *plan.Graph, opts Options) (*arrow.Schema, []arrow.RecordBatch, error) {
	opts = opts.withDefaults()
	outs := map[int][]arrow.RecordBatch{}
	defer func() {
		for _, recs := range outs {
			releaseRecords(recs)
		}
	}()
	var run func(id int, depth int) error
	run = func(id int, depth int) error {
		if _, done := outs[id]; done {
			return nil
		}
		if depth > len(g.Stages) {
			return fmt.Errorf("exec: run graph: stage %d is in a cycle", id)
		}
		s := g.Stage(id)
		if s == nil {
			return fmt.Errorf("exec: run graph: no stage %d", id)
		}
		for _, in := range s.Inputs {
			if err := run(in, depth+1); err != nil {
				return err
			}
		}
		op, err := Build(ctx, s.Root, memLeaves(outs), opts)
		if err != nil {
			return fmt.Errorf("exec: run graph: stage %d: %w", id, err)
		}
		recs, err := Drain(ctx, op)
		op.Close()
		if err != nil {
			return err
		}
		outs[id] = recs
		return nil
	}
	if err := run(g.Result, 0); err != nil {
		return nil, nil, err
	}
	recs := outs[g.Result]
	delete(outs, g.Result)
	schema := g.Stage(g.Result).Root.Schema.Arrow()
	if len(g.Columns) == len(schema.Fields()) {
		fs := schema.Fields()
		for i := range fs {
			fs[i].Name = g.Columns[i]
		}
		schema = arrow.NewSchema(fs, nil)
		for i, r := range recs {
			recs[i] = array.NewRecordBatch(schema, r.Columns(), r.NumRows())
			r.Release()
		}
	}
	return schema, recs, nil
}

// memLeaves reads the outputs of the stages that have run.
type memLeaves map[int][]arrow.RecordBatch

func (m memLeaves) Scan(context.Context, *plan.Node) (Operator, error) {
	return nil, errors.New("exec: run graph: a table scan in a plan of constants")
}

func (m memLeaves) Exchange(_ context.Context, n *plan.Node) (Operator, error) {
	recs, ok := m[n.Stage]
	if !ok {
		return nil, fmt.Errorf("exec: run graph: stage %d has not run", n.Stage)
	}
	for _, r := range recs {
		r.Retain()
	}
	return &batchesOp{schema: n.Schema.Arrow(), recs: append([]arrow.RecordBatch(nil), recs...)}, nil
}

// batchesOp returns batches held in memory.
type batchesOp struct {
	schema *arrow.Schema
	recs   []arrow.RecordBatch
}

func (b *batchesOp) Schema() *arrow.Schema { return b.schema }

func (b *batchesOp) Next(context.Context) (arrow.RecordBatch, error) {
	if len(b.recs) == 0 {
		return nil, io.EOF
	}
	r := b.recs[0]
	b.recs = b.recs[1:]
	return r, nil
}

func (b *batchesOp) Close() error {
	releaseRecords(b.recs)
	b.recs = nil
	return nil
}

func releaseRecords(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}
