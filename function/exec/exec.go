// Package exec runs a plan fragment inside a function: vectorized,
// pull-based operators over Arrow record batches.
//
// Every operator pulls batches from its inputs with Next and returns batches
// the caller owns (and releases). Kernels are written once per engine type
// (bool, int64, float64, decimal as int64, string, date as int32): a type
// switch per batch and column, then tight loops over raw Arrow buffers.
package exec

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Operator is a pull-based operator. Next returns (nil, io.EOF) at the end.
// A batch returned by Next is owned by the caller (it calls Release).
type Operator interface {
	Schema() *arrow.Schema
	Next(ctx context.Context) (arrow.RecordBatch, error)
	Close() error
}

// Leaves supplies the leaf operators (the task runtime implements it: scans
// of the task's files, reads of shuffle inputs).
type Leaves interface {
	Scan(ctx context.Context, n *plan.Node) (Operator, error)
	Exchange(ctx context.Context, n *plan.Node) (Operator, error)
}

// DefaultBatchRows is the batch size used when Options.BatchRows is 0.
const DefaultBatchRows = 8192

// DefaultMemoryLimit is the limit used when Options.MemoryLimit is 0.
const DefaultMemoryLimit int64 = 1 << 30

// Options configures Build.
type Options struct {
	// Mem allocates every buffer the operators create (default: Go allocator).
	Mem memory.Allocator
	// NoJoinFilters: a hash join does not offer its probe scan the range
	// and a Bloom filter of its build keys (joinOp.offerBloom; for tests
	// and benchmarks comparing the two).
	NoJoinFilters bool
	// BatchRows is the target number of rows per output batch (default 8192).
	BatchRows int
	// MemoryLimit bounds the bytes held by hash tables and sort buffers of one
	// fragment (0 = DefaultMemoryLimit). Used when Pool is nil.
	MemoryLimit int64
	// Metrics, when set, collects per-operator metrics: every operator
	// Build makes is wrapped in one meter (a fresh Metrics per Build).
	Metrics *Metrics

	// SpillDir, when set, is the directory where sort, aggregate and hash
	// join spill to disk once the fragment's memory is used up (used when
	// Pool is nil). Empty: no spill; exceeding the limit fails with a
	// *MemoryLimitError (errors.Is(err, ErrMemoryLimit)).
	SpillDir string
	// SpillLimit bounds the bytes of spill files on disk at once (0: no
	// bound). Used when Pool is nil.
	SpillLimit int64
	// Pool is the task's memory pool (shared by every operator of the
	// fragment; it reports peak memory and spill bytes). Nil: Build makes
	// one from MemoryLimit, SpillDir and SpillLimit.
	Pool *MemoryPool
	// Sink is where a KindWrite node writes its file (nil: a fragment
	// with a write node fails to build).
	Sink FileSink
	// PartialAggProbeRows and PartialAggSkipRatio make a partial
	// aggregation adaptive (hashagg_skip.go): once it has seen
	// PartialAggProbeRows input rows (default 100,000), if its groups are
	// at least PartialAggSkipRatio of them (default 0.8), it stops
	// aggregating and passes rows on as one-row partial states. A ratio
	// above 1 turns it off.
	PartialAggProbeRows int64
	PartialAggSkipRatio float64
	// Late selects late materialization in Parquet scans with a pruning
	// filter (parquet_late.go): LateAuto (default) decodes the columns
	// the filter does not name only for the rows it keeps, until the
	// first lateProbeRows (16 Ki) rows show it keeps more than LateKeepRatio
	// (default 0.7) of them.
	Late          LateMode
	LateKeepRatio float64
	// PoisonFreed overwrites the column buffers a scan recycles when
	// their batch is released (see recycler): a debugging switch, on in
	// every test run (SLUICE_POISON_FREED), so that an operator reading a
	// batch after releasing it gives wrong answers instead of ones that
	// are right by luck.
	PoisonFreed bool
	lateGap     int  // tests: the late path's lateGap (0: the default)
	arrowPages  bool // tests: the late path decodes with arrow-go's column readers only (no pageDecoder)
}

func (o Options) withDefaults() Options {
	if o.Mem == nil {
		o.Mem = memory.DefaultAllocator
	}
	if o.BatchRows <= 0 {
		o.BatchRows = DefaultBatchRows
	}
	if o.MemoryLimit <= 0 {
		o.MemoryLimit = DefaultMemoryLimit
	}
	if o.Pool == nil {
		o.Pool = NewMemoryPool(o.MemoryLimit, o.SpillDir, o.SpillLimit)
	}
	if o.PartialAggProbeRows <= 0 {
		o.PartialAggProbeRows = 100_000
	}
	if o.PartialAggSkipRatio <= 0 {
		o.PartialAggSkipRatio = 0.8
	}
	return o
}

// ErrMemoryLimit is matched (errors.Is) by every *MemoryLimitError.
var ErrMemoryLimit error = &plan.CodedError{Code: plan.CodeMemoryLimit, Err: errors.New("memory limit exceeded")}

// ErrIntegerOverflow is wrapped by errors of int64 arithmetic and SUMs that
// do not fit in 64 bits.
var ErrIntegerOverflow error = &plan.CodedError{Code: plan.CodeIntegerOverflow, Err: errors.New("integer overflow")}

// Build turns a fragment into an operator tree. Scan and Exchange leaves
// come from leaves.
func Build(ctx context.Context, n *plan.Node, leaves Leaves, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	if opts.Metrics != nil {
		opts.Metrics.ids = NodeIDs(n)
	}
	return build(ctx, n, leaves, opts)
}

// build builds n and its inputs, each metered when opts.Metrics is set.
func build(ctx context.Context, n *plan.Node, leaves Leaves, opts Options) (Operator, error) {
	op, err := buildNode(ctx, n, leaves, opts)
	if err != nil || opts.Metrics == nil {
		return op, err
	}
	return opts.Metrics.wrap(n, op), nil
}

func buildNode(ctx context.Context, n *plan.Node, leaves Leaves, opts Options) (op Operator, err error) {
	if n == nil {
		return nil, errors.New("exec: build: nil plan node")
	}
	input := func(want int) ([]Operator, error) {
		if len(n.Inputs) != want {
			return nil, fmt.Errorf("exec: build %s: want %d input(s), have %d", n.Kind, want, len(n.Inputs))
		}
		ins := make([]Operator, 0, want)
		for _, c := range n.Inputs {
			in, err := build(ctx, c, leaves, opts)
			if err != nil {
				for _, o := range ins {
					o.Close()
				}
				return nil, err
			}
			ins = append(ins, in)
		}
		return ins, nil
	}
	switch n.Kind {
	case plan.KindScan:
		if leaves == nil {
			return nil, errors.New("exec: build scan: no leaf provider")
		}
		return leaves.Scan(ctx, n)
	case plan.KindExchange:
		if leaves == nil {
			return nil, errors.New("exec: build exchange: no leaf provider")
		}
		op, err := leaves.Exchange(ctx, n)
		if err != nil || n.Predicate == nil {
			return op, err
		}
		return newExchangeFilter(op, n, opts)
	case plan.KindEmpty:
		return NewEmpty(n), nil
	case plan.KindValues:
		return NewValues(n, opts)
	case plan.KindHashJoin, plan.KindCrossJoin, plan.KindUnion:
		want := 2
		if n.Kind == plan.KindUnion {
			if len(n.Inputs) == 0 {
				return nil, errors.New("exec: build union: no inputs")
			}
			want = len(n.Inputs)
		}
		ins, err := input(want)
		if err != nil {
			return nil, err
		}
		switch n.Kind {
		case plan.KindHashJoin:
			op, err = NewHashJoin(ins[0], ins[1], n, opts)
		case plan.KindCrossJoin:
			op, err = NewCrossJoin(ins[0], ins[1], n, opts)
		default:
			op, err = NewUnion(ins, n, opts)
		}
		if err != nil {
			for _, in := range ins {
				in.Close()
			}
			return nil, err
		}
		return op, nil
	}
	ins, err := input(1)
	if err != nil {
		return nil, err
	}
	in := ins[0]
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	switch n.Kind {
	case plan.KindFilter:
		if n.Bloom != nil {
			// The scan under the filter may test the Bloom filter itself,
			// before it decodes the other columns of the rows it drops.
			if bt, ok := unmetered(in).(BloomTaker); ok {
				bt.TakeBloom(n.Bloom)
			}
		}
		return NewFilter(in, n, opts)
	case plan.KindProject:
		skipUnread(in, n.Exprs)
		return NewProject(in, n, opts)
	case plan.KindLimit:
		return NewLimit(in, n, opts)
	case plan.KindAggregate:
		op, err := NewHashAggregate(in, n, opts)
		if err != nil {
			return nil, err
		}
		if f := newStatsFold(n, opts.Mem); f != nil {
			if fs, ok := scanUnder(in).(statsFolder); ok && fs.FoldStats(f) {
				op.(*hashAggOp).stats = f
			}
		}
		if cols := dictKeyColumns(n); cols != nil {
			if de, ok := unmetered(in).(DictionaryEmitter); ok {
				de.EmitDictionaries(cols)
			}
		}
		return op, nil
	case plan.KindSort:
		return NewSort(in, n, opts)
	case plan.KindWindow:
		return NewWindow(in, n, opts)
	case plan.KindExpand:
		return NewExpand(in, n, opts)
	case plan.KindUnnest:
		return NewUnnest(in, n, opts)
	case plan.KindSingleRow:
		return NewSingleRow(in, n, opts)
	case plan.KindWrite:
		return NewWrite(in, n, opts)
	}
	return nil, fmt.Errorf("exec: build: unsupported operator kind %q", n.Kind)
}

// Drain pulls every batch of op and returns them (the caller releases them).
// It does not close op.
func Drain(ctx context.Context, op Operator) ([]arrow.RecordBatch, error) {
	var out []arrow.RecordBatch
	for {
		rec, err := op.Next(ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			for _, r := range out {
				r.Release()
			}
			return nil, err
		}
		out = append(out, rec)
	}
}
