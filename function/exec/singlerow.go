package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// ErrScalarSubqueryRows is the error of a scalar subquery that returned
// more than one row (as DuckDB and Postgres report it): the query's error
// on its data (SL100), so the job fails on the first attempt, never
// retried.
var ErrScalarSubqueryRows = plan.Errorf(plan.CodeRuntime, "more than one row returned by a subquery used as an expression")

// singleRowOp passes its input on and fails past the first row.
type singleRowOp struct {
	in   Operator
	rows int64
}

// NewSingleRow checks that in yields at most one row (plan.KindSingleRow).
func NewSingleRow(in Operator, _ *plan.Node, _ Options) (Operator, error) {
	return &singleRowOp{in: in}, nil
}

func (s *singleRowOp) Schema() *arrow.Schema { return s.in.Schema() }
func (s *singleRowOp) Close() error          { return s.in.Close() }

func (s *singleRowOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	rec, err := s.in.Next(ctx)
	if err != nil {
		return nil, err
	}
	s.rows += rec.NumRows()
	if s.rows > 1 {
		rec.Release()
		return nil, ErrScalarSubqueryRows
	}
	return rec, nil
}
