package exec

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// Adaptive partial aggregation (DataFusion's skip_partial_aggregation,
// Trino's adaptive partial aggregation). A partial aggregation pays for a
// hash table to shrink what it sends to the final one; when its groups
// come close to its input rows (group keys nearly unique per task), it
// shrinks nothing and the table only costs CPU and memory. After
// Options.PartialAggProbeRows input rows, if it holds at least
// PartialAggSkipRatio groups per row, it emits the groups it has and then
// passes every further row on as a one-row partial state: the same keys
// and state columns a group of one row has, so the final aggregation needs
// no change. Rows skipped this way show in EXPLAIN ANALYZE
// (PartialSkipper, partial_skipped_rows).

// PartialSkipper is implemented by an aggregation that can pass rows on
// unaggregated; the metrics report how many it did.
type PartialSkipper interface {
	PartialSkippedRows() int64
}

// PartialSkippedRows is the input rows passed on as one-row states.
func (h *hashAggOp) PartialSkippedRows() int64 { return h.skipped }

// shouldSkip makes the skip decision once, after enough rows.
func (h *hashAggOp) shouldSkip() bool {
	if h.probed || h.agg.Mode != plan.AggPartial || h.table == nil || h.seenRows < h.opts.PartialAggProbeRows {
		return false
	}
	h.probed = true
	for _, a := range h.accs {
		if a.fn.LargeState {
			return false // a one-row state is a whole sketch
		}
	}
	return float64(h.ngroups) >= h.opts.PartialAggSkipRatio*float64(h.seenRows)
}

// nextPassThrough turns the next input batch into one-row partial states:
// the group keys evaluated as they are, each aggregate's state for a group
// holding just that row.
func (h *hashAggOp) nextPassThrough(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec, err := h.in.Next(ctx)
		if err != nil {
			return nil, err // io.EOF included
		}
		n := int(rec.NumRows())
		if n == 0 {
			rec.Release()
			continue
		}
		out, err := h.onePerRow(rec, n)
		rec.Release()
		if err != nil {
			return nil, err
		}
		h.skipped += int64(n)
		return out, nil
	}
}

func (h *hashAggOp) onePerRow(rec arrow.RecordBatch, n int) (arrow.RecordBatch, error) {
	mem := h.opts.Mem
	cols := make([]arrow.Array, 0, h.schema.NumFields())
	fail := func(err error) (arrow.RecordBatch, error) {
		releaseAll(cols)
		return nil, err
	}
	for i, g := range h.agg.GroupBy {
		if d, err := dictKey(mem, g, rec); d != nil || err != nil {
			if err != nil {
				return fail(fmt.Errorf("exec: aggregate: group key %d: %w", i, err))
			}
			k, err := plainKey(mem, d)
			d.Release()
			if err != nil {
				return fail(fmt.Errorf("exec: aggregate: group key %d: %w", i, err))
			}
			cols = append(cols, k)
			continue
		}
		k, err := Eval(g, rec, mem)
		if err != nil {
			return fail(fmt.Errorf("exec: aggregate: group key %d: %w", i, err))
		}
		cols = append(cols, k)
	}
	gids := make([]uint32, n)
	for i := range gids {
		gids[i] = uint32(i)
	}
	col := len(h.agg.GroupBy)
	for i, c := range h.agg.Aggs {
		acc, fn, err := newAccumulator(c, h.agg.Mode, h.node.Schema, col, mem)
		if err != nil {
			return fail(fmt.Errorf("exec: aggregate %s: %w", aggLabel(c, i), err))
		}
		s := aggSlot{acc: acc, fn: fn, col: col, ns: AggNumStates(c)}
		acc.Grow(n)
		if err := s.update(c, h.agg.Mode, rec, gids, n, mem); err != nil {
			return fail(fmt.Errorf("exec: aggregate %s: %w", aggLabel(c, i), err))
		}
		arrs, err := s.states(mem, h.schema, 0, n)
		if err != nil {
			return fail(fmt.Errorf("exec: aggregate %s: %w", aggLabel(c, i), err))
		}
		cols = append(cols, arrs...)
		col += len(arrs)
	}
	return conformRecord(mem, h.schema, cols, n)
}
