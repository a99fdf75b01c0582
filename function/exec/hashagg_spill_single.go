package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Single-mode aggregate spill. A single-mode aggregate (one that needs
// every row of a group in one task: count(distinct), median, quantiles,
// string_agg, and whatever shares their node) over its budget writes the
// groups it holds, as states, to spillFanout partition files by a hash of
// the group keys, and starts afresh; at the end of the input it spills
// what it holds too and aggregates the files partition by partition (the
// merge of hashagg_spill.go), each partition with an aggregate of the
// same calls that merges the states (mergeStates) and may spill again.
//
// The states of the aggregates without partial states are one list
// column each (spillStater): a group's values (median, quantiles), its
// strings in arrival order (string_agg: a group's chunks are written and
// read back in input order, so an ordered string_agg keeps its order), or
// its distinct values (count(distinct)). The other aggregates write their
// partial states (AggStateTypes). Without GROUP BY there is one group,
// which partitioning cannot split, and a spilled partition may hold a few
// groups each larger than the budget: their values go to disk and through
// the external sort instead (hashagg_spill_sorted.go).

// spillStater is an accumulator of an aggregate without partial states
// that can still write its groups' values as one list column and merge
// them back.
type spillStater interface {
	// SpillType is the type of the state column.
	SpillType() arrow.DataType
	// SpillStates builds the state column of groups [lo, hi).
	SpillStates(mem memory.Allocator, lo, hi int) (arrow.Array, error)
	// MergeSpilled folds the state column col (rows in gids' groups) in.
	MergeSpilled(col arrow.Array, gids []uint32) error
}

// singleSpillSchema is the layout of a single-mode aggregate's spilled
// states: the group keys, then each call's state columns; nil when a call
// has neither partial states nor list states.
func (h *hashAggOp) singleSpillSchema() *arrow.Schema {
	var fs []arrow.Field
	for i := range h.agg.GroupBy {
		fs = append(fs, arrow.Field{Name: fmt.Sprintf("k%d", i), Type: h.schema.Field(i).Type, Nullable: true})
	}
	for i, s := range h.accs {
		if ss, ok := s.acc.(spillStater); ok {
			fs = append(fs, arrow.Field{Name: fmt.Sprintf("s%d", i), Type: ss.SpillType(), Nullable: true})
			continue
		}
		ts := AggStateTypes(h.agg.Aggs[i])
		if ts == nil || s.fn == nil || s.fn.Holistic || len(ts) != s.ns {
			return nil
		}
		for j, t := range ts {
			fs = append(fs, arrow.Field{Name: fmt.Sprintf("s%d_%d", i, j), Type: t.Arrow(), Nullable: true})
		}
	}
	return arrow.NewSchema(fs, nil)
}

// canSpillSingle reports whether a single-mode aggregate may spill.
func (h *hashAggOp) canSpillSingle() bool {
	if h.agg.Mode != plan.AggSingle || h.table == nil || h.level >= maxSpillLevel || h.sorted != nil {
		return false
	}
	if h.spillSchema == nil {
		h.spillSchema = h.singleSpillSchema()
	}
	return h.spillSchema != nil
}

// spillSingle writes the groups held as states in spillSchema's layout
// and starts afresh.
func (h *hashAggOp) spillSingle() error {
	mem := h.opts.Mem
	sch := h.spillSchema
	if h.parts == nil {
		sp, err := h.opts.Pool.newSpillPartitions("aggregate", sch, mem, spillFanout)
		if err != nil {
			return err
		}
		h.parts = sp
	}
	nkeys := len(h.keyKinds)
	for lo := 0; lo < h.ngroups; lo += h.opts.BatchRows {
		hi := min(h.ngroups, lo+h.opts.BatchRows)
		cols := make([]arrow.Array, 0, sch.NumFields())
		fail := func(err error) error {
			releaseAll(cols)
			return fmt.Errorf("exec: aggregate: spill: %w", err)
		}
		for i := 0; i < nkeys; i++ {
			arr, err := h.table.keys[i].build(mem, sch.Field(i).Type, lo, hi)
			if err != nil {
				return fail(err)
			}
			cols = append(cols, arr)
		}
		for i := range h.accs {
			s := &h.accs[i]
			if ss, ok := s.acc.(spillStater); ok {
				arr, err := ss.SpillStates(mem, lo, hi)
				if err != nil {
					return fail(err)
				}
				cols = append(cols, arr)
				continue
			}
			ts := make([]arrow.DataType, s.ns)
			for j := range ts {
				ts[j] = sch.Field(len(cols) + j).Type
			}
			arrs, err := s.acc.States(mem, ts, lo, hi)
			if err != nil {
				return fail(err)
			}
			cols = append(cols, arrs...)
		}
		rec, err := conformRecord(mem, sch, cols, hi-lo)
		if err != nil {
			return fmt.Errorf("exec: aggregate: spill: %w", err)
		}
		err = h.parts.write(mem, rec, rec.Columns()[:nkeys], h.level)
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

// mergeNode is the node that aggregates one spilled partition of a
// single-mode aggregate: the same calls, grouped by the spill file's key
// columns, merging its state columns (hashAggOp.mergeStates).
func (h *hashAggOp) mergeNode() *plan.Node {
	n := *h.node
	a := *h.agg
	a.GroupBy = make([]*plan.Expr, len(h.agg.GroupBy))
	for i, g := range h.agg.GroupBy {
		a.GroupBy[i] = plan.Column(i, fmt.Sprintf("k%d", i), g.Type)
	}
	n.Aggregate = &a
	return &n
}

// mergeSlot folds a spilled partition's state columns of slot s (rec's
// columns from s.col) in.
func (s *aggSlot) mergeSpilled(rec arrow.RecordBatch, gids []uint32) error {
	if s.col+s.ns > int(rec.NumCols()) {
		return fmt.Errorf("spilled states have %d columns, state column %d missing", rec.NumCols(), s.col+s.ns-1)
	}
	if ss, ok := s.acc.(spillStater); ok {
		return ss.MergeSpilled(rec.Column(s.col), gids)
	}
	return s.acc.Merge(rec.Columns()[s.col:s.col+s.ns], gids)
}

// spillList builds a list column of n rows whose row i holds values[offs[i]:
// offs[i+1]] (values and offs are consumed).
func spillList(t arrow.DataType, values arrow.Array, offs []int32) arrow.Array {
	n := len(offs) - 1
	data := array.NewData(arrow.ListOf(t), n,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs))},
		[]arrow.ArrayData{values.Data()}, 0, 0)
	out := array.NewListData(data)
	data.Release()
	values.Release()
	return out
}

// ---- quantiles ---------------------------------------------------------------

func (a *quantileAcc) SpillType() arrow.DataType { return arrow.ListOf(arrow.PrimitiveTypes.Float64) }

func (a *quantileAcc) SpillStates(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	b := array.NewFloat64Builder(mem)
	defer b.Release()
	offs := make([]int32, 0, hi-lo+1)
	offs = append(offs, 0)
	for g := lo; g < hi; g++ {
		b.AppendValues(a.hvals[g], nil)
		offs = append(offs, int32(b.Len()))
	}
	return spillList(arrow.PrimitiveTypes.Float64, b.NewArray(), offs), nil
}

func (a *quantileAcc) MergeSpilled(col arrow.Array, gids []uint32) error {
	l, ok := col.(*array.List)
	if !ok {
		return fmt.Errorf("%s: spilled state of type %s, want a list", a.call.Func, col.DataType())
	}
	vals, ok := l.ListValues().(*array.Float64)
	if !ok {
		return fmt.Errorf("%s: spilled values of type %s, want float64", a.call.Func, l.ListValues().DataType())
	}
	for i := 0; i < l.Len(); i++ {
		s, e := l.ValueOffsets(i)
		g := gids[i]
		a.hvals[g] = append(a.hvals[g], vals.Float64Values()[s:e]...)
		a.hbytes += 8 * (e - s)
	}
	return nil
}

// ---- string_agg --------------------------------------------------------------

func (a *stringAggAcc) SpillType() arrow.DataType { return arrow.ListOf(arrow.BinaryTypes.String) }

func (a *stringAggAcc) SpillStates(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	offs := make([]int32, 0, hi-lo+1)
	offs = append(offs, 0)
	for g := lo; g < hi; g++ {
		b.AppendValues(a.hstrs[g], nil)
		offs = append(offs, int32(b.Len()))
	}
	return spillList(arrow.BinaryTypes.String, b.NewArray(), offs), nil
}

func (a *stringAggAcc) MergeSpilled(col arrow.Array, gids []uint32) error {
	l, ok := col.(*array.List)
	if !ok {
		return fmt.Errorf("string_agg: spilled state of type %s, want a list", col.DataType())
	}
	vals, ok := l.ListValues().(*array.String)
	if !ok {
		return fmt.Errorf("string_agg: spilled values of type %s, want string", l.ListValues().DataType())
	}
	for i := 0; i < l.Len(); i++ {
		s, e := l.ValueOffsets(i)
		g := gids[i]
		for j := s; j < e; j++ {
			v := strings.Clone(vals.Value(int(j)))
			a.hstrs[g] = append(a.hstrs[g], v)
			a.hbytes += int64(len(v)) + 16
		}
	}
	return nil
}

// ---- count(distinct) ---------------------------------------------------------

func (a *countDistinctAcc) SpillType() arrow.DataType { return arrow.ListOf(a.argType.Arrow()) }

// SpillStates lists each group's distinct values (NULL among them when
// seen: it is not counted, as in Update).
func (a *countDistinctAcc) SpillStates(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	t := a.argType.Arrow()
	offs := make([]int32, hi-lo+1)
	if a.distinct == nil || a.distinct.ngroups == 0 {
		return spillList(t, array.MakeArrayOfNull(mem, t, 0), offs), nil
	}
	n := a.distinct.ngroups
	garr, err := a.distinct.keys[0].build(mem, arrow.PrimitiveTypes.Int64, 0, n)
	if err != nil {
		return nil, err
	}
	defer garr.Release()
	gs := garr.(*array.Int64).Int64Values()
	byGroup := make([][]int32, hi-lo)
	for p, g := range gs {
		if int(g) >= lo && int(g) < hi {
			byGroup[int(g)-lo] = append(byGroup[int(g)-lo], int32(p))
		}
	}
	var idx []int32
	for i, ps := range byGroup {
		idx = append(idx, ps...)
		offs[i+1] = int32(len(idx))
	}
	all, err := a.distinct.keys[1].build(mem, t, 0, n)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	vals, err := take(mem, all, idx)
	if err != nil {
		return nil, err
	}
	return spillList(t, vals, offs), nil
}

func (a *countDistinctAcc) MergeSpilled(col arrow.Array, gids []uint32) error {
	l, ok := col.(*array.List)
	if !ok {
		return fmt.Errorf("count(distinct): spilled state of type %s, want a list", col.DataType())
	}
	if a.distinct == nil {
		return nil
	}
	lo, _ := l.ValueOffsets(0)
	_, hi := l.ValueOffsets(l.Len() - 1)
	if hi == lo {
		return nil
	}
	eg := make([]uint32, 0, hi-lo)
	for i := 0; i < l.Len(); i++ {
		s, e := l.ValueOffsets(i)
		for j := s; j < e; j++ {
			eg = append(eg, gids[i])
		}
	}
	vals := array.NewSlice(l.ListValues(), lo, hi)
	defer vals.Release()
	return a.Update(vals, eg, len(eg))
}
