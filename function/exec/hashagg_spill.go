package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// Aggregate spill. A partial aggregate over its budget emits the groups it
// holds and starts afresh (the final aggregate merges the pieces; no disk
// needed). A final aggregate over its budget writes its groups as partial
// states, in the layout of its own input, to spillFanout partition files
// by a hash of the group keys, and starts afresh; at the end of the input
// it spills what it holds too and then aggregates the files partition by
// partition, each with a final aggregate of the same plan (which may spill
// again, hashed with another seed, up to maxSpillLevel). A group's states
// all land in one partition, so every group is merged completely once.
// Single-mode aggregates spill their groups' states in a layout of their
// own (hashagg_spill_single.go) and merge them with the same machinery.

// canSpill reports whether the aggregate may spill its states to disk.
func (h *hashAggOp) canSpill() bool {
	if h.agg.Mode != plan.AggFinal || h.table == nil || h.level >= maxSpillLevel {
		return false
	}
	in := h.in.Schema()
	for i, g := range h.agg.GroupBy {
		if g.Op != plan.OpColumn || g.Col != i || i >= in.NumFields() {
			return false // the states' layout must be the input's
		}
	}
	return true
}

// spillStates writes the groups held as partial states and starts afresh.
func (h *hashAggOp) spillStates() error {
	mem := h.opts.Mem
	in := h.in.Schema()
	if h.parts == nil {
		sp, err := h.opts.Pool.newSpillPartitions("aggregate", in, mem, spillFanout)
		if err != nil {
			return err
		}
		h.parts = sp
	}
	nkeys := len(h.keyKinds)
	for lo := 0; lo < h.ngroups; lo += h.opts.BatchRows {
		hi := min(h.ngroups, lo+h.opts.BatchRows)
		cols := make([]arrow.Array, 0, in.NumFields())
		fail := func(err error) error {
			releaseAll(cols)
			return fmt.Errorf("exec: aggregate: spill: %w", err)
		}
		for i := 0; i < nkeys; i++ {
			arr, err := h.table.keys[i].build(mem, in.Field(i).Type, lo, hi)
			if err != nil {
				return fail(err)
			}
			cols = append(cols, arr)
		}
		for i := range h.accs {
			arrs, err := h.accs[i].states(mem, in, lo, hi)
			if err != nil {
				return fail(err)
			}
			cols = append(cols, arrs...)
		}
		rec, err := conformRecord(mem, in, cols, hi-lo)
		if err != nil {
			return fmt.Errorf("exec: aggregate: spill: %w", err)
		}
		cs := rec.Columns()[:nkeys]
		err = h.parts.write(mem, rec, cs, h.level)
		rec.Release()
		if err != nil {
			return err
		}
	}
	if err := h.initState(); err != nil {
		return err
	}
	return h.res.set(h.bytes())
}

// aggMerge aggregates the spilled partitions one at a time.
type aggMerge struct {
	h   *hashAggOp
	pos int
	cur Operator
}

func (h *hashAggOp) startMerge() error {
	if h.ngroups > 0 {
		spill := h.spillStates
		if h.spillSchema != nil {
			spill = h.spillSingle
		}
		if err := spill(); err != nil {
			return err
		}
	}
	h.table, h.accs = nil, nil
	h.res.release()
	for _, f := range h.parts.files {
		if err := f.finish(); err != nil {
			return err
		}
	}
	h.merge = &aggMerge{h: h}
	return nil
}

func (m *aggMerge) next(ctx context.Context) (arrow.RecordBatch, error) {
	h := m.h
	for {
		if m.cur == nil {
			if m.pos >= len(h.parts.files) {
				return nil, io.EOF
			}
			f := h.parts.files[m.pos]
			m.pos++
			if f.rows == 0 {
				f.remove()
				continue
			}
			r, err := f.open(h.opts.Mem)
			if err != nil {
				return nil, err
			}
			node := h.node
			if h.spillSchema != nil {
				node = h.mergeNode()
			}
			op, err := NewHashAggregate(r, node, h.opts)
			if err != nil {
				r.Close()
				return nil, err
			}
			sub := op.(*hashAggOp)
			sub.level = h.level + 1
			if h.spillSchema != nil {
				sub.mergeStates, sub.spillSchema = true, h.spillSchema
			}
			m.cur = op
		}
		rec, err := m.cur.Next(ctx)
		if err == io.EOF {
			err = m.cur.Close()
			m.cur = nil
			if err != nil {
				return nil, err
			}
			continue
		}
		return rec, err
	}
}

func (m *aggMerge) close() {
	if m.cur != nil {
		m.cur.Close()
		m.cur = nil
	}
}
