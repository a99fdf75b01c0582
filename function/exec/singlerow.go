package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// ErrScalarSubqueryRows is the error of a scalar subquery that returned
// more than one row (as DuckDB and Postgres report it): the query's error
// on its data (SL100), so the job fails on the first attempt, never
// retried.
var ErrScalarSubqueryRows = plan.Errorf(plan.CodeRuntime, "more than one row returned by a subquery used as an expression")

// singleRowOp passes its input on and fails past the first row, or, with
// keys, past the first row of any non-NULL key.
type singleRowOp struct {
	in   Operator
	rows int64
	keys []*plan.Expr
	mem  memory.Allocator
	seen *groupTable // with keys: the keys seen
	once []bool      // by group id: a row of that key passed
}

// NewSingleRow checks that in yields at most one row, or at most one per
// value of the keys n.Exprs (plan.KindSingleRow).
func NewSingleRow(in Operator, n *plan.Node, opts Options) (Operator, error) {
	op := &singleRowOp{in: in, keys: n.Exprs, mem: opts.Mem}
	if len(op.keys) > 0 {
		kinds := make([]kind, len(op.keys))
		for i, k := range op.keys {
			kinds[i] = kindOfType(k.Type)
		}
		op.seen = newGroupTable(kinds)
	}
	return op, nil
}

func (s *singleRowOp) Schema() *arrow.Schema { return s.in.Schema() }
func (s *singleRowOp) Close() error          { return s.in.Close() }

func (s *singleRowOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	rec, err := s.in.Next(ctx)
	if err != nil {
		return nil, err
	}
	if s.seen == nil {
		s.rows += rec.NumRows()
		if s.rows > 1 {
			rec.Release()
			return nil, ErrScalarSubqueryRows
		}
		return rec, nil
	}
	if err := s.check(rec); err != nil {
		rec.Release()
		return nil, err
	}
	return rec, nil
}

// check fails when rec holds a second row of a key.
func (s *singleRowOp) check(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	cols := make([]arrow.Array, len(s.keys))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, k := range s.keys {
		c, err := Eval(k, rec, s.mem)
		if err != nil {
			return err
		}
		cols[i] = c
	}
	gids, err := s.seen.insert(cols, n)
	if err != nil {
		return err
	}
rows:
	for i, g := range gids {
		for _, c := range cols {
			if c.IsNull(i) {
				continue rows // matches no outer row
			}
		}
		for int(g) >= len(s.once) {
			s.once = append(s.once, false)
		}
		if s.once[g] {
			return ErrScalarSubqueryRows
		}
		s.once[g] = true
	}
	return nil
}
