package exec

import (
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// OpMetrics is what one operator instance of a task did (DataFusion's
// BaselineMetrics): the batches and rows it returned, the time spent in
// its own Next calls with its inputs' time taken out (elapsed_compute),
// the wall time from its first Next call to its last, and the bytes a
// leaf read.
type OpMetrics struct {
	// Node is the plan node's id in its stage fragment: its index in a
	// pre-order walk from the root (0), the order NodeIDs gives.
	Node    int    `json:"node"`
	Kind    string `json:"kind"`
	Rows    int64  `json:"rows"`
	Batches int64  `json:"batches"`
	// ComputeNanos is elapsed_compute: the time inside this operator's
	// Next calls minus the time inside its inputs' Next calls.
	ComputeNanos int64 `json:"compute_ns"`
	// WallNanos is the time from the first Next call's start to the last
	// one's end.
	WallNanos int64 `json:"wall_ns"`
	// Bytes is what a leaf read: file bytes of a scan, shuffle object
	// bytes of an exchange (0 for the others).
	Bytes int64 `json:"bytes,omitempty"`
	// CachedBytes are the bytes of Bytes a scan found in its function's
	// range cache instead of fetching them (CacheReader).
	CachedBytes int64 `json:"cached_bytes,omitempty"`
	// Leaf says the operator reads the task's inputs (scan or exchange).
	Leaf bool `json:"leaf,omitempty"`
	// PartialSkippedRows are the input rows a partial aggregation passed
	// on unaggregated (PartialSkipper).
	PartialSkippedRows int64 `json:"partial_skipped_rows,omitempty"`
	// LateRowsDecoded and LateRowsSkipped are, for a Parquet scan that
	// decodes late (LateMaterializer), the rows whose other columns it
	// decoded and the rows its filter dropped before they were.
	LateRowsDecoded int64 `json:"late_rows_decoded,omitempty"`
	LateRowsSkipped int64 `json:"late_rows_skipped,omitempty"`
	// JoinPrunedRowGroups are, for a Parquet scan under a hash join, the
	// row groups it left unread because their statistics lie outside the
	// range of the join's build keys (JoinRangePruner).
	JoinPrunedRowGroups int64 `json:"join_pruned_row_groups,omitempty"`
	// FilteredRows are, for an exchange with runtime filters
	// (RuntimeFilterer), the rows read that they dropped.
	FilteredRows int64 `json:"filtered_rows,omitempty"`
}

// JoinRangePruner is implemented by scans that count the row groups a
// join's range of build keys left unread (RangeTaker).
type JoinRangePruner interface {
	JoinRangePruned() int64
}

// LateMaterializer is implemented by scans that decode the columns a
// filter does not name only for the rows it keeps (parquet_late.go).
type LateMaterializer interface {
	LateRows() (decoded, skipped int64)
}

// BytesReader is implemented by leaf operators that count the bytes they
// read; the metrics of the leaf report them.
type BytesReader interface {
	BytesRead() int64
}

// CacheReader is implemented by scans whose reads may come from a range
// cache of file bytes: BytesCached is the part of BytesRead that did.
type CacheReader interface {
	BytesCached() int64
}

// NodeIDs numbers the nodes of a fragment in pre-order from root (0), the
// ids OpMetrics.Node uses.
func NodeIDs(root *plan.Node) map[*plan.Node]int {
	ids := map[*plan.Node]int{}
	var walk func(n *plan.Node)
	walk = func(n *plan.Node) {
		if n == nil {
			return
		}
		if _, seen := ids[n]; seen {
			return
		}
		ids[n] = len(ids)
		for _, c := range n.Inputs {
			walk(c)
		}
	}
	walk(root)
	return ids
}

// Metrics collects the metrics of every operator of one Build call. Set
// Options.Metrics to a fresh one per task (it is not shared between
// fragments); nil turns metering off.
type Metrics struct {
	ids    map[*plan.Node]int
	meters []*opMeter
	byNode map[*plan.Node]*opMeter
}

// NewMetrics returns an empty collector.
func NewMetrics() *Metrics { return &Metrics{byNode: map[*plan.Node]*opMeter{}} }

// Snapshot returns the metrics of every operator built so far, in node id
// order. It is meant for after the pipeline ran (no Next is in flight).
func (m *Metrics) Snapshot() []OpMetrics {
	if m == nil {
		return nil
	}
	out := make([]OpMetrics, 0, len(m.meters))
	for _, om := range m.meters {
		out = append(out, om.snapshot())
	}
	for i := 1; i < len(out); i++ { // insertion sort: fragments are small
		for j := i; j > 0 && out[j].Node < out[j-1].Node; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// wrap meters op, the operator built for n, whose inputs were built (and
// metered) before it.
func (m *Metrics) wrap(n *plan.Node, op Operator) Operator {
	om := &opMeter{op: op, node: m.ids[n], kind: string(n.Kind),
		leaf: n.Kind == plan.KindScan || n.Kind == plan.KindExchange}
	for _, c := range n.Inputs {
		if cm := m.byNode[c]; cm != nil {
			om.children = append(om.children, cm)
		}
	}
	m.byNode[n] = om
	m.meters = append(m.meters, om)
	return om
}

// opMeter is the one wrapper every operator gets: two clock reads per
// Next call, no per-row work.
type opMeter struct {
	op          Operator
	node        int
	kind        string
	leaf        bool
	children    []*opMeter
	rows        int64
	batches     int64
	inside      time.Duration // in Next, inputs included
	first, last time.Time
}

func (o *opMeter) Schema() *arrow.Schema { return o.op.Schema() }

func (o *opMeter) Next(ctx context.Context) (arrow.RecordBatch, error) {
	t0 := time.Now()
	if o.first.IsZero() {
		o.first = t0
	}
	rec, err := o.op.Next(ctx)
	o.last = time.Now()
	o.inside += o.last.Sub(t0)
	if rec != nil {
		o.batches++
		o.rows += rec.NumRows()
	}
	return rec, err
}

func (o *opMeter) Close() error { return o.op.Close() }

func (o *opMeter) snapshot() OpMetrics {
	own := o.inside
	for _, c := range o.children {
		own -= c.inside
	}
	// An operator that pulls an input on another goroutine can see its
	// input's time exceed its own: it did not wait for that work.
	own = max(own, 0)
	m := OpMetrics{Node: o.node, Kind: o.kind, Rows: o.rows, Batches: o.batches, ComputeNanos: int64(own), Leaf: o.leaf}
	if !o.first.IsZero() {
		m.WallNanos = int64(o.last.Sub(o.first))
	}
	if br, ok := o.op.(BytesReader); ok {
		m.Bytes = br.BytesRead()
	}
	if cr, ok := o.op.(CacheReader); ok {
		m.CachedBytes = cr.BytesCached()
	}
	if ps, ok := o.op.(PartialSkipper); ok {
		m.PartialSkippedRows = ps.PartialSkippedRows()
	}
	if lm, ok := o.op.(LateMaterializer); ok {
		m.LateRowsDecoded, m.LateRowsSkipped = lm.LateRows()
	}
	if rf, ok := o.op.(RuntimeFilterer); ok {
		m.FilteredRows = rf.FilteredRows()
	}
	if jp, ok := o.op.(JoinRangePruner); ok {
		m.JoinPrunedRowGroups = jp.JoinRangePruned()
	}
	return m
}
