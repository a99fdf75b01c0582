package function

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluicedb/sluice/function/exec"
)

// WriterNode is the node id of the shuffle writer in TaskResult.Operators:
// it sits above the fragment's root (node 0) and is no plan node.
const WriterNode = -1

// WriterKind is the kind the shuffle writer's metrics carry.
const WriterKind = "shuffle_write"

// Phases break one attempt's time into where it went, in seconds. Startup,
// read, compute, write and commit are measured by the function; queue by
// the coordinator (which knows when it dispatched the task).
type Phases struct {
	// Queue is the time from the task being ready to its function
	// starting: the wait for a dispatch slot plus the invocation's round
	// trip not spent running (network, cold start).
	Queue float64 `json:"queue"`
	// Startup is from the function starting to the pipeline's first
	// batch being asked for: spec checks, the plan fragment's download,
	// building the operators.
	Startup float64 `json:"startup"`
	// Read is the time inside the leaf operators (scans of table files,
	// reads of shuffle inputs): I/O and decoding.
	Read float64 `json:"read"`
	// Compute is the time inside the other operators, their inputs' time
	// taken out.
	Compute float64 `json:"compute"`
	// Write is the time handing batches to the shuffle writer
	// (partitioning, encoding and the uploads it does on the way).
	Write float64 `json:"write"`
	// Commit is the shuffle writer's close: the last uploads and the
	// manifest.
	Commit float64 `json:"commit"`
}

func (p *Phases) add(q Phases) {
	p.Queue += q.Queue
	p.Startup += q.Startup
	p.Read += q.Read
	p.Compute += q.Compute
	p.Write += q.Write
	p.Commit += q.Commit
}

func (p *Phases) maxOf(q Phases) {
	p.Queue = max(p.Queue, q.Queue)
	p.Startup = max(p.Startup, q.Startup)
	p.Read = max(p.Read, q.Read)
	p.Compute = max(p.Compute, q.Compute)
	p.Write = max(p.Write, q.Write)
	p.Commit = max(p.Commit, q.Commit)
}

// StageMetrics are the metrics of a stage's committed tasks, aggregated:
// per operator (by node id) and per phase, summed over the tasks, with
// the largest task's value beside the sums.
type StageMetrics struct {
	// Tasks counts the results that carried metrics.
	Tasks     int             `json:"tasks"`
	Operators []StageOperator `json:"operators,omitempty"`
	PhaseSum  Phases          `json:"phase_sum"`
	PhaseMax  Phases          `json:"phase_max"`
}

// StageOperator is one operator's metrics summed over a stage's tasks.
type StageOperator struct {
	exec.OpMetrics
	// Tasks counts the tasks that ran the operator.
	Tasks int `json:"tasks"`
	// MaxComputeNanos and MaxWallNanos are the largest single task's.
	MaxComputeNanos int64 `json:"max_compute_ns"`
	MaxWallNanos    int64 `json:"max_wall_ns"`
}

// AggregateMetrics sums the metrics of a stage's task results (nil
// entries and results without metrics are skipped). It returns nil when no
// result carried any.
func AggregateMetrics(results []*TaskResult) *StageMetrics {
	sm := &StageMetrics{}
	byNode := map[int]int{}
	for _, r := range results {
		if r == nil || (r.Phases == nil && len(r.Operators) == 0) {
			continue
		}
		sm.Tasks++
		if r.Phases != nil {
			sm.PhaseSum.add(*r.Phases)
			sm.PhaseMax.maxOf(*r.Phases)
		}
		for _, o := range r.Operators {
			i, ok := byNode[o.Node]
			if !ok {
				i = len(sm.Operators)
				byNode[o.Node] = i
				sm.Operators = append(sm.Operators, StageOperator{OpMetrics: exec.OpMetrics{Node: o.Node, Kind: o.Kind, Leaf: o.Leaf}})
			}
			a := &sm.Operators[i]
			a.Tasks++
			a.Rows += o.Rows
			a.Batches += o.Batches
			a.ComputeNanos += o.ComputeNanos
			a.WallNanos += o.WallNanos
			a.Bytes += o.Bytes
			a.CachedBytes += o.CachedBytes
			a.PartialSkippedRows += o.PartialSkippedRows
			a.LateRowsDecoded += o.LateRowsDecoded
			a.LateRowsSkipped += o.LateRowsSkipped
			a.JoinPrunedRowGroups += o.JoinPrunedRowGroups
			a.FilteredRows += o.FilteredRows
			a.MaxComputeNanos = max(a.MaxComputeNanos, o.ComputeNanos)
			a.MaxWallNanos = max(a.MaxWallNanos, o.WallNanos)
		}
	}
	if sm.Tasks == 0 {
		return nil
	}
	for i := 1; i < len(sm.Operators); i++ {
		for j := i; j > 0 && sm.Operators[j].Node < sm.Operators[j-1].Node; j-- {
			sm.Operators[j], sm.Operators[j-1] = sm.Operators[j-1], sm.Operators[j]
		}
	}
	return sm
}

// Operator returns the aggregated metrics of node id, or nil.
func (sm *StageMetrics) Operator(node int) *StageOperator {
	if sm == nil {
		return nil
	}
	for i := range sm.Operators {
		if sm.Operators[i].Node == node {
			return &sm.Operators[i]
		}
	}
	return nil
}

// Format renders the metrics the way DataFusion's EXPLAIN ANALYZE does:
// "output_rows=…, output_batches=…, elapsed_compute=…, …". Times are sums
// over the stage's tasks; wall_max is the slowest task's wall time.
func (o *StageOperator) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "output_rows=%d, output_batches=%d, elapsed_compute=%s, wall_max=%s",
		o.Rows, o.Batches, FormatNanos(o.ComputeNanos), FormatNanos(o.MaxWallNanos))
	switch {
	case o.Kind == WriterKind:
		fmt.Fprintf(&b, ", bytes_written=%d", o.Bytes)
	case o.Leaf:
		fmt.Fprintf(&b, ", bytes_read=%d", o.Bytes)
		if o.CachedBytes > 0 {
			fmt.Fprintf(&b, ", bytes_cached=%d", o.CachedBytes)
		}
	}
	if o.PartialSkippedRows > 0 {
		fmt.Fprintf(&b, ", partial_skipped_rows=%d", o.PartialSkippedRows)
	}
	if o.LateRowsDecoded > 0 || o.LateRowsSkipped > 0 {
		fmt.Fprintf(&b, ", late_rows_decoded=%d, late_rows_skipped=%d", o.LateRowsDecoded, o.LateRowsSkipped)
	}
	if o.JoinPrunedRowGroups > 0 {
		fmt.Fprintf(&b, ", row_groups_pruned_by_join=%d", o.JoinPrunedRowGroups)
	}
	if o.FilteredRows > 0 {
		fmt.Fprintf(&b, ", rows_dropped_by_runtime_filter=%d", o.FilteredRows)
	}
	fmt.Fprintf(&b, ", tasks=%d", o.Tasks)
	return b.String()
}

// FormatNanos renders a duration with a unit (ns, µs, ms, s) the way
// DataFusion prints times.
func FormatNanos(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", ns)
	case d < time.Millisecond:
		return fmt.Sprintf("%.2fµs", float64(ns)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.3fs", d.Seconds())
}
