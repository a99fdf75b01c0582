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

// hashAggOp is a hash aggregation in partial, final or single mode.
//
// Group keys live in a groupTable (typed columnar storage, dense group ids
// in first-appearance order); each aggregate keeps typed per-group state
// slices indexed by group id and updated per batch in tight loops. Without
// GROUP BY there is one group and no hashing.
type hashAggOp struct {
	in     Operator
	node   *plan.Node
	agg    *plan.Aggregate
	schema *arrow.Schema
	opts   Options
	res    *reservation

	keyKinds []kind
	table    *groupTable
	accs     []aggSlot
	ngroups  int // == table.ngroups when grouping

	consumed bool
	emitted  int
	closed   bool

	// spill (hashagg_spill.go)
	flush bool             // partial mode: emit the groups so far, then go on
	parts *spillPartitions // final mode: spilled partial states by key hash
	level int
	merge *aggMerge
	// single mode (hashagg_spill_single.go): the layout of the spilled
	// states, and whether the input is such states (a spilled partition
	// being merged) rather than rows.
	spillSchema *arrow.Schema
	mergeStates bool
	// aggregation by sorting (hashagg_spill_sorted.go): per call, where
	// its values went on disk (nil: in memory); sortedDone once their
	// results are computed
	sorted     []*sortedCall
	sortedDone bool

	// adaptive partial aggregation (hashagg_skip.go)
	seenRows    int64 // input rows consumed
	probed      bool  // the skip decision is made
	passThrough bool  // rows pass on as one-row partial states
	skipped     int64 // rows passed on so

	// stats holds the states of row groups the scan answered from their
	// statistics (stats_fold.go), merged when the input ends.
	stats *StatsFold
}

// NewHashAggregate builds a hash aggregation of n.Aggregate over in.
func NewHashAggregate(in Operator, n *plan.Node, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	a := n.Aggregate
	if a == nil {
		return nil, fmt.Errorf("exec: aggregate: node has no aggregate description")
	}
	switch a.Mode {
	case plan.AggPartial, plan.AggFinal, plan.AggSingle:
	default:
		return nil, fmt.Errorf("exec: aggregate: unknown mode %q", a.Mode)
	}
	want := len(a.GroupBy)
	for _, c := range a.Aggs {
		if a.Mode == plan.AggPartial {
			want += AggNumStates(c)
		} else {
			want++
		}
	}
	if len(n.Schema) != want {
		return nil, fmt.Errorf("exec: aggregate (%s): output schema has %d columns, want %d", a.Mode, len(n.Schema), want)
	}
	op := &hashAggOp{in: in, node: n, agg: a, schema: n.Schema.Arrow(), opts: opts,
		res: opts.Pool.reserve("aggregate")}
	for _, g := range a.GroupBy {
		op.keyKinds = append(op.keyKinds, kindOfType(g.Type))
	}
	if err := op.initState(); err != nil {
		return nil, err
	}
	return op, nil
}

// aggSlot is one aggregate call of the node and its accumulator.
type aggSlot struct {
	acc Accumulator
	fn  *AggregateFunction
	// col is the call's first state column: in the output (partial
	// mode) or in the input (final mode); ns the number of them.
	col, ns int
}

// states builds the partial state columns of groups [lo, hi) as the
// columns [s.col, s.col+s.ns) of schema lay them out.
func (s *aggSlot) states(mem memory.Allocator, schema *arrow.Schema, lo, hi int) ([]arrow.Array, error) {
	ts := make([]arrow.DataType, s.ns)
	for j := range ts {
		ts[j] = schema.Field(s.col + j).Type
	}
	return s.acc.States(mem, ts, lo, hi)
}

// update folds one input batch into the slot's states: the argument
// evaluated (partial, single) or the state columns (final).
func (s *aggSlot) update(call plan.AggCall, mode plan.AggMode, rec arrow.RecordBatch, gids []uint32, n int, mem memory.Allocator) error {
	if mode == plan.AggFinal {
		if s.col+s.ns > int(rec.NumCols()) {
			return fmt.Errorf("input has %d columns, state column %d missing", rec.NumCols(), s.col+s.ns-1)
		}
		return s.acc.Merge(rec.Columns()[s.col:s.col+s.ns], gids)
	}
	if call.Arg == nil {
		return s.acc.Update(nil, gids, n)
	}
	arg, err := Eval(call.Arg, rec, mem)
	if err != nil {
		return err
	}
	defer arg.Release()
	if len(call.More) > 0 {
		multi, ok := s.acc.(MultiAccumulator)
		if !ok {
			return fmt.Errorf("takes one argument, not %d", 1+len(call.More))
		}
		args := []arrow.Array{arg}
		defer func() {
			for _, a := range args[1:] {
				a.Release()
			}
		}()
		for _, m := range call.More {
			a, err := Eval(m, rec, mem)
			if err != nil {
				return err
			}
			args = append(args, a)
		}
		return multi.UpdateArgs(args, gids, n)
	}
	if arg.DataType().ID() == arrow.NULL {
		return nil // every value NULL: nothing to fold
	}
	return s.acc.Update(arg, gids, n)
}

// initState starts an empty group table and empty aggregate states.
func (op *hashAggOp) initState() error {
	a, n := op.agg, op.node
	op.table, op.accs, op.ngroups, op.emitted = nil, nil, 0, 0
	if len(a.GroupBy) > 0 {
		op.table = newGroupTable(op.keyKinds)
	}
	col := len(a.GroupBy)
	for i, c := range a.Aggs {
		if c.Func == plan.AggCountDistinct && a.Mode != plan.AggSingle {
			return fmt.Errorf("exec: aggregate %s: count(distinct) is only supported in single mode, not %s (the planner groups by the argument first)", aggLabel(c, i), a.Mode)
		}
		acc, fn, err := newAccumulator(c, a.Mode, n.Schema, col, op.opts.Mem)
		if err != nil {
			return fmt.Errorf("exec: aggregate %s: %w", aggLabel(c, i), err)
		}
		ns := AggNumStates(c)
		op.accs = append(op.accs, aggSlot{acc: acc, fn: fn, col: col, ns: ns})
		col += ns
	}
	return nil
}

func aggLabel(c plan.AggCall, i int) string {
	if c.Name != "" {
		return fmt.Sprintf("%s (%s)", c.Name, c.Func)
	}
	return fmt.Sprintf("#%d (%s)", i, c.Func)
}

func (h *hashAggOp) Schema() *arrow.Schema { return h.schema }

func (h *hashAggOp) Close() error {
	if !h.closed {
		h.closed = true
		h.table = nil
		h.accs = nil
		h.res.release()
		if h.merge != nil {
			h.merge.close()
		}
		h.parts.remove()
		for _, g := range h.sorted {
			g.remove()
		}
	}
	return h.in.Close()
}

func (h *hashAggOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if h.merge != nil {
		return h.merge.next(ctx)
	}
	if !h.consumed {
		if err := h.consume(ctx); err != nil {
			return nil, err
		}
		h.consumed = true
		if h.parts != nil {
			if err := h.startMerge(); err != nil {
				return nil, err
			}
			return h.merge.next(ctx)
		}
	}
	if h.sorted != nil && !h.sortedDone {
		// the results of the calls whose values went to disk
		h.sortedDone = true
		if err := h.sortedResults(ctx); err != nil {
			return nil, err
		}
	}
	total := h.ngroups
	if h.emitted >= total && h.passThrough {
		h.table, h.accs = nil, nil
		h.res.release()
		return h.nextPassThrough(ctx)
	}
	if h.emitted >= total && h.flush {
		// partial mode over budget: the groups so far are out, start
		// afresh with the rest of the input
		h.flush, h.consumed = false, false
		if err := h.initState(); err != nil {
			return nil, err
		}
		if err := h.res.set(0); err != nil {
			return nil, err
		}
		return h.Next(ctx)
	}
	if h.emitted >= total {
		if h.emitted == 0 && total == 0 && h.table == nil && h.agg.Mode != plan.AggPartial {
			// no GROUP BY over no rows: one row of empty aggregates
			h.grow(1)
		} else {
			h.res.release()
			return nil, io.EOF
		}
		total = h.ngroups
	}
	lo := h.emitted
	hi := min(total, lo+h.opts.BatchRows)
	rec, err := h.output(ctx, lo, hi)
	if err != nil {
		return nil, err
	}
	h.emitted = hi
	return rec, nil
}

func (h *hashAggOp) grow(n int) {
	h.ngroups = n
	for i, a := range h.accs {
		if h.sorted == nil || h.sorted[i] == nil { // a call whose values are on disk holds nothing
			a.acc.Grow(n)
		}
	}
}

func (h *hashAggOp) consume(ctx context.Context) error {
	mem := h.opts.Mem
	nkeys := len(h.agg.GroupBy)
	keys := make([]arrow.Array, nkeys)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := h.in.Next(ctx)
		if err == io.EOF {
			if h.stats != nil && h.stats.folded() {
				if h.ngroups == 0 {
					h.grow(1)
				}
				if err := h.stats.merge(h.accs); err != nil {
					return fmt.Errorf("exec: aggregate from statistics: %w", err)
				}
			}
			return nil
		}
		if err != nil {
			return err
		}
		n := int(rec.NumRows())
		if n == 0 {
			rec.Release()
			continue
		}
		var gids []uint32
		if nkeys > 0 {
			for i, g := range h.agg.GroupBy {
				if d, err := dictKey(mem, g, rec); d != nil || err != nil {
					if err != nil {
						releaseAll(keys[:i])
						rec.Release()
						return fmt.Errorf("exec: aggregate: group key %d: %w", i, err)
					}
					if h.keyKinds[i] != kString {
						d.Release()
						releaseAll(keys[:i])
						rec.Release()
						return fmt.Errorf("exec: aggregate: group key %d is dictionary-encoded strings, plan says %s", i, g.Type)
					}
					keys[i] = d // grouped by index (hashagg_dict.go)
					continue
				}
				k, err := Eval(g, rec, mem)
				if err != nil {
					releaseAll(keys[:i])
					rec.Release()
					return fmt.Errorf("exec: aggregate: group key %d: %w", i, err)
				}
				if kk := layoutOf(k); kk != h.keyKinds[i] && kk != kNull {
					k.Release()
					releaseAll(keys[:i])
					rec.Release()
					return fmt.Errorf("exec: aggregate: group key %d has type %s, plan says %s", i, k.DataType(), g.Type)
				}
				keys[i] = k
			}
			gids, err = h.table.insert(keys, n)
			releaseAll(keys)
			if err != nil {
				rec.Release()
				return fmt.Errorf("exec: aggregate: %w", err)
			}
			if h.table.ngroups > h.ngroups {
				h.grow(h.table.ngroups)
			}
		} else if h.ngroups == 0 {
			h.grow(1)
		}
		for i := range h.accs {
			var err error
			if h.sorted != nil && h.sorted[i] != nil {
				err = h.sorted[i].add(mem, rec, gids, h.mergeStates, h.accs[i].col)
			} else if h.mergeStates {
				err = h.accs[i].mergeSpilled(rec, gids)
			} else {
				err = h.accs[i].update(h.agg.Aggs[i], h.agg.Mode, rec, gids, n, mem)
			}
			if err != nil {
				rec.Release()
				return fmt.Errorf("exec: aggregate %s: %w", aggLabel(h.agg.Aggs[i], i), err)
			}
		}
		rec.Release()
		h.seenRows += int64(n)
		if h.shouldSkip() {
			// Emit the groups so far, then pass the rest of the input on.
			h.passThrough, h.flush = true, true
			return nil
		}
		need := h.bytes()
		switch {
		case h.res.fits(need):
		case h.agg.Mode == plan.AggPartial && h.table != nil:
			// A partial aggregate need not hold every group: its groups
			// so far go out now (the final aggregate merges them).
			if err := h.res.set(need); err != nil && h.ngroups <= 1 {
				return err
			}
			h.flush = true
			return nil
		case h.canSpill() && h.res.spill(need):
			if err := h.spillStates(); err != nil {
				return err
			}
			continue
		case h.canSpillSorted() && h.res.spill(need):
			if err := h.spillSorted(); err != nil {
				return err
			}
			continue
		case h.canSpillSingle() && h.res.spill(need):
			if err := h.spillSingle(); err != nil {
				return err
			}
			continue
		}
		if err := h.res.set(need); err != nil {
			return h.tooDeep(err)
		}
	}
}

// tooDeep names the cause of a grouped aggregate's memory limit at the
// last spill level: partitioning by the keys no longer splits what it
// holds, a group (or a few) larger than the budget (hashagg_spill.go).
func (h *hashAggOp) tooDeep(err error) error {
	var mle *MemoryLimitError
	if h.table == nil || !errors.As(err, &mle) || mle.Reason != "" {
		return err
	}
	if h.sorted != nil {
		mle.Reason = fmt.Sprintf("its values went to disk to be aggregated by sorting, and its %d groups with their other states alone do not fit", h.ngroups)
		return err
	}
	if h.level < maxSpillLevel {
		return err
	}
	mle.Reason = fmt.Sprintf("%s %d levels deep still does not fit, holding %d group(s): a group larger than the budget", tooDeepReason, h.level, h.ngroups)
	return err
}

// tooDeepReason starts the reason of an aggregate partition that spilling
// again does not split.
const tooDeepReason = "a partition spilled"

func (h *hashAggOp) bytes() int64 {
	var n int64
	if h.table != nil {
		n += h.table.bytes()
	}
	for i, a := range h.accs {
		if h.sorted != nil && h.sorted[i] != nil {
			n += h.sorted[i].bytes()
		} else {
			n += a.acc.Bytes()
		}
	}
	return n
}

func (h *hashAggOp) output(ctx context.Context, lo, hi int) (arrow.RecordBatch, error) {
	mem := h.opts.Mem
	cols := make([]arrow.Array, 0, h.schema.NumFields())
	fail := func(err error) (arrow.RecordBatch, error) {
		releaseAll(cols)
		return nil, err
	}
	for i := range h.keyKinds {
		arr, err := h.table.keys[i].build(mem, h.schema.Field(i).Type, lo, hi)
		if err != nil {
			return fail(fmt.Errorf("exec: aggregate: group key %d: %w", i, err))
		}
		cols = append(cols, arr)
	}
	col := len(h.keyKinds)
	for i := range h.accs {
		a := &h.accs[i]
		var arrs []arrow.Array
		var err error
		if h.agg.Mode == plan.AggPartial {
			arrs, err = a.states(mem, h.schema, lo, hi)
		} else if h.sorted != nil && h.sorted[i] != nil {
			var arr arrow.Array
			arr, err = h.sorted[i].out.take(ctx, mem, hi-lo)
			arrs = []arrow.Array{arr}
		} else {
			var arr arrow.Array
			arr, err = a.acc.Result(mem, h.schema.Field(col).Type, lo, hi)
			arrs = []arrow.Array{arr}
		}
		if err != nil {
			return fail(fmt.Errorf("exec: aggregate %s: %w", aggLabel(h.agg.Aggs[i], i), err))
		}
		cols = append(cols, arrs...)
		col += len(arrs)
	}
	return conformRecord(mem, h.schema, cols, hi-lo)
}
