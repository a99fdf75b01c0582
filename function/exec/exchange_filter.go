package exec

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// RuntimeFilterer is implemented by exchange leaves whose read drops the
// rows a runtime filter rejects (plan.Node.Predicate on a KindExchange):
// FilteredRows are the rows read and dropped.
type RuntimeFilterer interface {
	FilteredRows() int64
}

// exchangeFilter is an exchange leaf with runtime filters: the shuffle
// rows are read as the reader gives them and the filter drops, batch by
// batch, the rows whose key none of the build side's keys can match,
// before the operators above see them.
type exchangeFilter struct {
	in     *rowCounter // the exchange reader, its rows counted
	filter Operator    // the filter over in
	out    int64
}

// newExchangeFilter wraps read, the reader of exchange leaf n, in n's
// runtime filters.
func newExchangeFilter(read Operator, n *plan.Node, opts Options) (Operator, error) {
	in := &rowCounter{Operator: read}
	f, err := NewFilter(in, &plan.Node{Kind: plan.KindFilter, Schema: n.Schema, Predicate: n.Predicate, Bloom: n.Bloom, Limit: -1}, opts)
	if err != nil {
		read.Close()
		return nil, fmt.Errorf("exec: exchange of stage %d: runtime filter: %w", n.Stage, err)
	}
	return &exchangeFilter{in: in, filter: f}, nil
}

func (e *exchangeFilter) Schema() *arrow.Schema { return e.filter.Schema() }

func (e *exchangeFilter) Next(ctx context.Context) (arrow.RecordBatch, error) {
	rec, err := e.filter.Next(ctx)
	if rec != nil {
		e.out += rec.NumRows()
	}
	return rec, err
}

func (e *exchangeFilter) Close() error { return e.filter.Close() }

// FilteredRows are the rows read that the runtime filters dropped.
func (e *exchangeFilter) FilteredRows() int64 { return e.in.rows - e.out }

// BytesRead are the shuffle bytes the reader read.
func (e *exchangeFilter) BytesRead() int64 {
	if br, ok := e.in.Operator.(BytesReader); ok {
		return br.BytesRead()
	}
	return 0
}

// SkipColumns passes the columns no consumer reads on to the filter,
// which keeps those its predicate reads.
func (e *exchangeFilter) SkipColumns(unread []bool) {
	if cs, ok := e.filter.(columnSkipper); ok {
		cs.SkipColumns(unread)
	}
}

// rowCounter counts the rows its input returns.
type rowCounter struct {
	Operator
	rows int64
}

func (c *rowCounter) Next(ctx context.Context) (arrow.RecordBatch, error) {
	rec, err := c.Operator.Next(ctx)
	if rec != nil {
		c.rows += rec.NumRows()
	}
	return rec, err
}
