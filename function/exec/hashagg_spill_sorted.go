package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// Sort-based aggregation fallback. Grace partitioning (hashagg_spill.go,
// hashagg_spill_single.go) splits groups but never one group: a
// single-mode aggregate without GROUP BY (one group), or a spilled
// partition holding a few groups each larger than the budget, cannot get
// under it that way. Such an aggregate does what DuckDB and DataFusion do
// for huge groups and aggregates by sorting: the calls that hold every
// value of a group (median and the quantiles, count(DISTINCT), string_agg,
// list) write the values they hold, and from then on every batch's values,
// to one spill file each (Arrow IPC) as (group id, value[, arrival
// number]); the group table and the other calls of the node (sum, count,
// min, ...: one small state per group) stay in memory. At the end each
// file goes through the external sort (sort.go, sort_spill.go), one call
// at a time, sorted by group id first, so each group's values arrive
// together and are folded in a stream, group after group:
//
//   - quantiles: the values sorted (NaN after every number, as DuckDB); a
//     group's count is known, so the positions the in-memory quantile
//     picks are picked from the stream;
//   - count(DISTINCT): the values sorted, counting the rows that differ
//     from the one before;
//   - string_agg, list: the values in arrival order (the order of the
//     input, already sorted when the call has ORDER BY), sorted by group
//     then arrival number (read back as written when the groups arrived in
//     order, as with one group); with DISTINCT the rows are sorted by
//     group, value and arrival, the first of equal values kept, and the
//     survivors sorted by group and arrival again, so the first
//     occurrences keep their order as in memory (firstOccurrences).
//
// Each call's results go, in group order, to a result file that the
// output reads back beside the group keys. A group's string_agg or list
// result is built in memory, as DuckDB builds it: when one alone passes
// the budget the task fails with SL104 saying so.
//
// When: without GROUP BY at the first overflow; with GROUP BY when grace
// partitioning cannot go on (the last spill level, or a call without a
// spill layout), or in a spilled partition (level 1 and deeper) whose
// groups and small states take at most a quarter of the room, so that
// it is the values of a few groups that do not fit (canSpillSorted).

// sortedCall is one call of an aggregate whose values go to disk.
type sortedCall struct {
	slot    int
	grouped bool // with GROUP BY: a group id column first
	call    plan.AggCall
	label   string
	kind    sortedKind
	dedupe  bool // string_agg/list DISTINCT: the first of equal values
	vtype   plan.DataType
	schema  plan.Schema // g (group id), v, then seq for string_agg/list
	file    *spillFile
	batch   int     // rows per batch written
	counts  []int64 // quantiles: values written per group
	last    int64   // group of the last value written
	inOrder bool    // groups written in ascending order
	seq     int64   // arrival number of the next value
	extra   []*spillFile
	res     *spillFile // the results, one row per group in group order
	out     resultCursor
}

type sortedKind int

const (
	sQuantile sortedKind = iota
	sCountDistinct
	sStringAgg
	sList
)

// columns returns the positions of the group id (-1: none, one group),
// the value and the arrival number (-1: none) in the call's file, and the
// key columns that sort it: by group then value (withValue), then
// arrival (withSeq).
func (g *sortedCall) columns() (gcol, vcol, scol int) {
	gcol, vcol, scol = -1, 0, -1
	if g.grouped {
		gcol, vcol = 0, 1
	}
	if (g.kind == sStringAgg || g.kind == sList) && (g.grouped || g.dedupe) {
		scol = vcol + 1 // one group without DISTINCT is read back as written
	}
	return gcol, vcol, scol
}

func (g *sortedCall) sortKeys(withValue, withSeq bool) []int {
	gcol, vcol, scol := g.columns()
	var keys []int
	if gcol >= 0 {
		keys = append(keys, gcol)
	}
	if withValue {
		keys = append(keys, vcol)
	}
	if withSeq {
		keys = append(keys, scol)
	}
	return keys
}

// canSpillSorted reports whether a single-mode aggregate should move its
// calls' values to disk and aggregate them by sorting (once: then they
// are there).
func (h *hashAggOp) canSpillSorted() bool {
	if h.agg.Mode != plan.AggSingle || h.sorted != nil || h.parts != nil {
		return false
	}
	movable := false
	for i := range h.accs {
		if _, ok := h.sortedKindOf(i); ok {
			movable = true
		}
	}
	switch {
	case !movable:
		return false
	case h.table == nil || !h.canSpillSingle():
		return true // one group, or grace partitioning cannot go on
	}
	return h.level > 0 && 4*h.groupBytes() <= h.res.room()
}

// groupBytes is what stays in memory once the values are on disk: the
// group table and the calls that keep their states.
func (h *hashAggOp) groupBytes() int64 {
	var n int64
	if h.table != nil {
		n += h.table.bytes()
	}
	for i, a := range h.accs {
		if _, ok := h.sortedKindOf(i); !ok {
			n += a.acc.Bytes()
		}
	}
	return n
}

// sortedKindOf is how slot i's values spill; false for a call that keeps
// its state in memory (small per group).
func (h *hashAggOp) sortedKindOf(i int) (sortedKind, bool) {
	switch a := h.accs[i].acc.(type) {
	case *quantileAcc:
		return sQuantile, true
	case *countDistinctAcc:
		return sCountDistinct, a.distinct != nil
	case *stringAggAcc:
		return sStringAgg, true
	case *listAggAcc:
		return sList, true
	}
	return 0, false
}

// spillSorted moves the values of the calls that hold them to one spill
// file each, gives those calls fresh (empty, unused: the old ones' memory
// goes) accumulators and lowers the reservation to what the others hold.
func (h *hashAggOp) spillSorted() error {
	mem := h.opts.Mem
	nkeys := len(h.agg.GroupBy)
	calls := make([]*sortedCall, len(h.accs))
	h.sorted = calls // Close removes the files, whatever happens next
	for i := range h.accs {
		k, ok := h.sortedKindOf(i)
		if !ok {
			continue
		}
		c := h.agg.Aggs[i]
		g := &sortedCall{slot: i, grouped: h.table != nil, call: c, label: aggLabel(c, i), kind: k, batch: h.opts.BatchRows, inOrder: true}
		switch k {
		case sQuantile:
			g.vtype = plan.Float64Type
		case sCountDistinct:
			g.vtype = c.Arg.Type
		case sStringAgg:
			g.vtype, g.dedupe = plan.StringType, c.Distinct
		case sList:
			g.vtype, g.dedupe = c.Type.Elem(), c.Distinct
			if g.vtype.ID == plan.Null || c.Type.ID != plan.List {
				return fmt.Errorf("exec: aggregate %s: spill: result type %s, want a list", g.label, c.Type)
			}
		}
		g.schema = plan.Schema{{Name: "v", Type: g.vtype, Nullable: true}}
		if g.grouped {
			g.schema = append(plan.Schema{{Name: "g", Type: plan.Int64Type}}, g.schema...)
		}
		if _, _, scol := g.columns(); scol >= 0 {
			g.schema = append(g.schema, plan.Field{Name: "seq", Type: plan.Int64Type})
		}
		f, err := h.opts.Pool.newSpill("aggregate", g.schema.Arrow(), mem)
		if err != nil {
			return err
		}
		g.file = f
		calls[i] = g
		held, err := h.heldLists(i, h.schema.Field(nkeys+i).Type)
		if err != nil {
			return fmt.Errorf("exec: aggregate %s: spill: %w", g.label, err)
		}
		if held != nil {
			ids := make([]uint32, held.Len()) // row r is group r
			for r := range ids {
				ids[r] = uint32(r)
			}
			err = g.addLists(mem, held, ids)
			held.Release()
			if err != nil {
				return fmt.Errorf("exec: aggregate %s: %w", g.label, err)
			}
		}
		acc, fn, err := newAccumulator(c, h.agg.Mode, h.node.Schema, h.accs[i].col, mem)
		if err != nil {
			return fmt.Errorf("exec: aggregate %s: %w", g.label, err)
		}
		h.accs[i].acc, h.accs[i].fn = acc, fn // empty, never grown: it holds nothing
	}
	return h.res.set(h.bytes())
}

// heldLists is the values slot i holds as a list per group (groups
// [0, ngroups), in arrival order: the distinct ones for count(DISTINCT)
// and a DISTINCT list); nil for no groups.
func (h *hashAggOp) heldLists(i int, resType arrow.DataType) (*array.List, error) {
	if h.ngroups == 0 {
		return nil, nil
	}
	var arr arrow.Array
	var err error
	switch a := h.accs[i].acc.(type) {
	case spillStater: // quantiles, string_agg, count(DISTINCT)
		arr, err = a.SpillStates(h.opts.Mem, 0, h.ngroups)
	case *listAggAcc:
		arr, err = a.Result(h.opts.Mem, resType, 0, h.ngroups)
	default:
		return nil, fmt.Errorf("%s does not spill its values", h.agg.Aggs[i].Func)
	}
	if err != nil {
		return nil, err
	}
	l, ok := arr.(*array.List)
	if !ok {
		arr.Release()
		return nil, fmt.Errorf("held values of type %s, want a list", arr.DataType())
	}
	return l, nil
}

// add writes the values of the call in rec: its argument evaluated over
// rows of groups gids (nil: one group), or with states the call's spilled
// state column col (a list of values per row: a spilled partition being
// merged).
func (g *sortedCall) add(mem memory.Allocator, rec arrow.RecordBatch, gids []uint32, states bool, col int) error {
	if states {
		if col >= int(rec.NumCols()) {
			return fmt.Errorf("spilled states have %d columns, state column %d missing", rec.NumCols(), col)
		}
		c := rec.Column(col)
		if isNullArray(c) {
			return nil
		}
		l, ok := c.(*array.List)
		if !ok {
			return fmt.Errorf("spilled state of type %s, want a list", c.DataType())
		}
		return g.addLists(mem, l, gids)
	}
	arg, err := Eval(g.call.Arg, rec, mem)
	if err != nil {
		return err
	}
	defer arg.Release()
	if arg.DataType().ID() == arrow.NULL {
		if g.kind != sList {
			return nil // every value NULL: nothing to keep
		}
		return g.write(mem, gids, arg)
	}
	if g.call.Func == plan.AggListWrapped {
		// one-element lists, NULLs skipped: their elements
		l, ok := arg.(*array.List)
		if !ok {
			return fmt.Errorf("over %s, want a list", arg.DataType())
		}
		return g.addLists(mem, l, gids)
	}
	return g.write(mem, gids, arg)
}

// addLists writes the elements of the non-NULL rows of l, row r's in
// group gids[r] (nil: group 0).
func (g *sortedCall) addLists(mem memory.Allocator, l *array.List, gids []uint32) error {
	var idx []int32
	var eg []uint32
	for r := 0; r < l.Len(); r++ {
		if l.IsNull(r) {
			continue
		}
		var gr uint32
		if gids != nil {
			gr = gids[r]
		}
		lo, hi := l.ValueOffsets(r)
		for j := lo; j < hi; j++ {
			idx = append(idx, int32(j))
			eg = append(eg, gr)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	vals, err := take(mem, l.ListValues(), idx)
	if err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	defer vals.Release()
	return g.write(mem, eg, vals)
}

// write appends values, value i in group gids[i] (nil: group 0), to the
// call's file in batches: NULLs dropped but for list, an arrival number
// beside each string_agg/list value.
func (g *sortedCall) write(mem memory.Allocator, gids []uint32, vals arrow.Array) error {
	if g.kind != sList && vals.NullN() > 0 {
		idx := make([]int32, 0, vals.Len()-vals.NullN())
		var kept []uint32
		if vals.DataType().ID() != arrow.NULL {
			for r := 0; r < vals.Len(); r++ {
				if vals.IsValid(r) {
					idx = append(idx, int32(r))
					if gids != nil {
						kept = append(kept, gids[r])
					}
				}
			}
		}
		v, err := take(mem, vals, idx)
		if err != nil {
			return fmt.Errorf("spill: %w", err)
		}
		defer v.Release()
		vals, gids = v, kept
	}
	for lo := 0; lo < vals.Len(); lo += g.batch {
		hi := min(vals.Len(), lo+g.batch)
		part := array.NewSlice(vals, int64(lo), int64(hi))
		var gs []uint32
		if gids != nil {
			gs = gids[lo:hi]
		}
		err := g.writeBatch(mem, gs, part, hi-lo)
		part.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func (g *sortedCall) writeBatch(mem memory.Allocator, gids []uint32, vals arrow.Array, n int) error {
	gbuf, gs := newFixed[int64](mem, n)
	for i := range gs {
		if gids != nil {
			gs[i] = int64(gids[i])
		}
		if gs[i] < g.last {
			g.inOrder = false
		}
		g.last = gs[i]
		if g.kind == sQuantile {
			if int(gs[i]) >= len(g.counts) {
				g.counts = growTo(g.counts, int(gs[i])+1)
			}
			g.counts[gs[i]]++
		}
	}
	vals.Retain()
	cols := []arrow.Array{vals}
	if g.grouped {
		cols = append([]arrow.Array{makeArray(arrow.PrimitiveTypes.Int64, n, nil, gbuf)}, cols...)
	} else {
		gbuf.Release()
	}
	if _, _, scol := g.columns(); scol >= 0 {
		buf, seq := newFixed[int64](mem, n)
		for i := range seq {
			seq[i] = g.seq + int64(i)
		}
		cols = append(cols, makeArray(arrow.PrimitiveTypes.Int64, n, nil, buf))
	}
	g.seq += int64(n)
	rec, err := conformRecord(mem, g.file.schema, cols, n)
	if err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	defer rec.Release()
	return g.file.write(rec)
}

func (g *sortedCall) bytes() int64 {
	if g == nil {
		return 0
	}
	return int64(cap(g.counts)) * 8
}

func (g *sortedCall) remove() {
	if g == nil {
		return
	}
	g.file.remove()
	for _, f := range g.extra {
		f.remove()
	}
	g.out.close()
	if g.res != nil {
		g.res.remove()
	}
}

// sortedResults computes the results of the calls whose values went to
// disk, one call at a time, into their result files, and opens them for
// the output (hashAggOp.output reads them beside the keys).
func (h *hashAggOp) sortedResults(ctx context.Context) error {
	nkeys := len(h.agg.GroupBy)
	if h.ngroups == 0 && h.table == nil {
		h.grow(1)
	}
	for _, g := range h.sorted {
		if g == nil {
			continue
		}
		err := h.sortedResult(ctx, g, h.schema.Field(nkeys+g.slot).Type)
		g.file.remove()
		for _, f := range g.extra {
			f.remove()
		}
		if err != nil {
			var mle *MemoryLimitError
			if errors.As(err, &mle) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return fmt.Errorf("exec: aggregate %s: %w", g.label, err)
		}
		rd, err := g.res.open(h.opts.Mem)
		if err != nil {
			return err
		}
		g.out = resultCursor{rd: rd}
	}
	return h.res.set(h.bytes())
}

// sortedFile is the rows of f sorted by the columns keys (ascending,
// NULLs last), through the external sort.
func (h *hashAggOp) sortedFile(f *spillFile, schema plan.Schema, keys ...int) (Operator, error) {
	r, err := f.open(h.opts.Mem)
	if err != nil {
		return nil, err
	}
	n := &plan.Node{Kind: plan.KindSort, Schema: schema, Limit: -1}
	for _, k := range keys {
		n.SortKeys = append(n.SortKeys, plan.SortKey{Expr: plan.Column(k, schema[k].Name, schema[k].Type)})
	}
	op, err := NewSort(r, n, h.opts)
	if err != nil {
		r.Close()
		return nil, err
	}
	return op, nil
}

// sortedResult writes call g's results (of type t, one per group in group
// order) to its result file, from its values file.
func (h *hashAggOp) sortedResult(ctx context.Context, g *sortedCall, t arrow.DataType) error {
	mem := h.opts.Mem
	// Room is kept for the results being built, so that the sorts below
	// (an in-memory sort holds its rows while they are read) leave it:
	// half of it for string_agg and list, whose results may be large, two
	// batches of numbers for the others.
	base := h.bytes()
	headroom := max(h.res.room()-base, 0) / 2
	if g.kind == sQuantile || g.kind == sCountDistinct {
		headroom = min(headroom, int64(16*h.opts.BatchRows))
	}
	if err := h.res.set(base + headroom); err != nil {
		return err
	}
	f, err := h.opts.Pool.newSpill("aggregate", arrow.NewSchema([]arrow.Field{{Name: "r", Type: t, Nullable: true}}, nil), mem)
	if err != nil {
		return err
	}
	g.res = f
	var in Operator
	var fold groupFold
	distinct := 0
	_, vcol, _ := g.columns()
	switch g.kind {
	case sQuantile:
		in, err = h.sortedFile(g.file, g.schema, g.sortKeys(true, false)...)
		fold = newQuantileFold(mem, g)
	case sCountDistinct:
		in, err = h.sortedFile(g.file, g.schema, g.sortKeys(true, false)...)
		fold, distinct = &countFold{}, len(g.sortKeys(true, false))
	default:
		// string_agg, list: the values in arrival order (first
		// occurrences under DISTINCT)
		switch {
		case g.dedupe:
			in, err = h.firstOccurrences(ctx, g)
		case g.inOrder:
			in, err = g.file.open(mem)
		default:
			in, err = h.sortedFile(g.file, g.schema, g.sortKeys(false, true)...)
		}
		if g.kind == sStringAgg {
			fold = &stringFold{sep: g.call.Sep, v: vcol}
		} else {
			fold, err = newListFold(t, vcol, err)
		}
	}
	if err != nil {
		if in != nil {
			in.Close()
		}
		return err
	}
	defer in.Close()
	return h.foldGroups(ctx, in, g, distinct, fold, base, headroom)
}

// groupFold computes one call's result per group from the group's rows
// (of its values file, in the order the call needs), appending the
// results of consecutive groups to a batch.
type groupFold interface {
	start(g int64)
	// add folds rows (of rec, all in the current group) in.
	add(rec arrow.RecordBatch, rows []int32) error
	// finish appends the current group's result; empty that of a group
	// without values.
	finish() error
	empty()
	// held is the bytes of the results appended and of the current group.
	held() int64
	// flush is the results appended since the last flush.
	flush(mem memory.Allocator) arrow.Array
	release()
}

// foldGroups reads in (sorted by group id, column 0) and folds each
// group's rows with f, writing the results, one row per group [0,
// ngroups), to g.res. With distinct > 0 only the rows that differ from
// the row before in their first distinct columns are folded. The results
// held are counted on top of base, within headroom when they can be (the
// results so far are written out past half of it).
func (h *hashAggOp) foldGroups(ctx context.Context, in Operator, g *sortedCall, distinct int, f groupFold, base, headroom int64) error {
	defer f.release()
	flushAt := headroom / 2
	gcol, _, _ := g.columns()
	var starts *runStarts
	if distinct > 0 {
		starts = newRunStarts(g.schema, distinct, h.opts.Mem)
		defer starts.release()
	}
	cur, next, pending := int64(-1), int64(0), 0
	flush := func(force bool) error {
		if pending == 0 || (!force && pending < h.opts.BatchRows && f.held() < flushAt) {
			return nil
		}
		arr := f.flush(h.opts.Mem)
		rec, err := conformRecord(h.opts.Mem, g.res.schema, []arrow.Array{arr}, pending)
		if err != nil {
			return err
		}
		pending = 0
		defer rec.Release()
		return g.res.write(rec)
	}
	// upTo appends the results of the groups from next to end: the
	// current one's, then empty ones
	upTo := func(end int64) error {
		for ; next < end; next++ {
			if next == cur {
				if err := f.finish(); err != nil {
					return err
				}
			} else {
				f.empty()
			}
			pending++
			if err := flush(false); err != nil {
				return err
			}
		}
		return nil
	}
	var all, rows []int32
	for {
		rec, err := in.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		var gs []int64 // nil: every row in group 0
		if gcol >= 0 {
			gc, ok := rec.Column(gcol).(*array.Int64)
			if !ok {
				rec.Release()
				return fmt.Errorf("spilled group ids of type %s", rec.Column(gcol).DataType())
			}
			gs = gc.Int64Values()
		}
		groupOf := func(r int32) int64 {
			if gs == nil {
				return 0
			}
			return gs[r]
		}
		n := int(rec.NumRows())
		if starts != nil {
			rows, err = starts.rows(rec, rows[:0])
			if err != nil {
				rec.Release()
				return err
			}
		} else {
			for len(all) < n {
				all = append(all, int32(len(all)))
			}
			rows = all[:n]
		}
		for i := 0; i < len(rows); {
			gid := groupOf(rows[i])
			j := i + 1
			for j < len(rows) && groupOf(rows[j]) == gid {
				j++
			}
			if gid != cur {
				if gid < cur || gid >= int64(h.ngroups) {
					rec.Release()
					return fmt.Errorf("spilled group id %d after %d, of %d groups", gid, cur, h.ngroups)
				}
				if err := upTo(gid); err != nil {
					rec.Release()
					return err
				}
				cur = gid
				f.start(gid)
			}
			if err := f.add(rec, rows[i:j]); err != nil {
				rec.Release()
				return err
			}
			if err := h.res.set(base + max(headroom, f.held())); err != nil {
				rec.Release()
				return h.resultTooLarge(g, err)
			}
			i = j
		}
		rec.Release()
	}
	if err := upTo(int64(h.ngroups)); err != nil {
		return err
	}
	if err := flush(true); err != nil {
		return err
	}
	return g.res.finish()
}

// runStarts finds, batch after batch of rows sorted by their first n
// columns, the rows that differ in them from the row before. Equality is
// the sort's (-0 = +0, NaN = NaN, NULL = NULL, nested values by their key
// encoding), as the hash table's.
type runStarts struct {
	key      *sortOp
	mem      memory.Allocator
	prev     []arrow.Array
	prevFlat []*flatKey
	prevRow  int32
}

func newRunStarts(schema plan.Schema, n int, mem memory.Allocator) *runStarts {
	key := &sortOp{}
	for c := 0; c < n; c++ {
		key.keys = append(key.keys, plan.SortKey{Expr: plan.Column(c, schema[c].Name, schema[c].Type)})
	}
	return &runStarts{key: key, mem: mem, prevRow: -1}
}

// rows appends to out the rows of rec that start a run.
func (d *runStarts) rows(rec arrow.RecordBatch, out []int32) ([]int32, error) {
	ks := make([]arrow.Array, 0, len(d.key.keys))
	for _, k := range d.key.keys {
		a, err := evalSortKey(k.Expr, rec, d.mem)
		if err != nil {
			releaseAll(ks)
			return nil, err
		}
		ks = append(ks, a)
	}
	fl, err := d.key.flatten([][]arrow.Array{ks})
	if err != nil {
		releaseAll(ks)
		return nil, err
	}
	for r := int32(0); r < int32(rec.NumRows()); r++ {
		if d.prevFlat == nil || compareAcross(d.prevFlat, d.prevRow, fl, r) != 0 {
			out = append(out, r)
		}
		d.prevFlat, d.prevRow = fl, r
	}
	releaseAll(d.prev)
	d.prev = ks // prevFlat's strings point into them
	return out, nil
}

func (d *runStarts) release() {
	releaseAll(d.prev)
	d.prev = nil
}

// firstOccurrences is g's values (with their arrival numbers) reduced to
// the first of equal values of each group, in group and arrival order:
// sorted by group, value and number, the first of each run kept (to a
// second file), sorted by group and number.
func (h *hashAggOp) firstOccurrences(ctx context.Context, g *sortedCall) (Operator, error) {
	mem := h.opts.Mem
	op, err := h.sortedFile(g.file, g.schema, g.sortKeys(true, true)...)
	if err != nil {
		return nil, err
	}
	defer op.Close()
	f, err := h.opts.Pool.newSpill("aggregate", g.schema.Arrow(), mem)
	if err != nil {
		return nil, err
	}
	g.extra = append(g.extra, f)
	starts := newRunStarts(g.schema, len(g.sortKeys(true, false)), mem)
	defer starts.release()
	var rows []int32
	for {
		rec, err := op.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		rows, err = starts.rows(rec, rows[:0])
		if err == nil && len(rows) > 0 {
			var part arrow.RecordBatch
			part, err = takeRecord(mem, rec, rows)
			if err == nil {
				err = f.write(part)
				part.Release()
			}
		}
		rec.Release()
		if err != nil {
			return nil, err
		}
	}
	return h.sortedFile(f, g.schema, g.sortKeys(false, true)...)
}

// resultTooLarge is the error of a string_agg or list whose result for
// one group alone does not fit the budget (it is built in memory, as
// DuckDB builds it).
func (h *hashAggOp) resultTooLarge(g *sortedCall, err error) error {
	var mle *MemoryLimitError
	if errors.As(err, &mle) && mle.Reason == "" {
		mle.Reason = fmt.Sprintf("the result of %s %s", g.label, resultAloneReason)
	}
	return err
}

// resultAloneReason ends the reason of a result that alone does not fit.
const resultAloneReason = "alone does not fit: it is built in memory"

// resultCursor reads a result file back n rows at a time.
type resultCursor struct {
	rd  Operator
	cur arrow.RecordBatch
	off int
}

// take is the next n rows.
func (c *resultCursor) take(ctx context.Context, mem memory.Allocator, n int) (arrow.Array, error) {
	var parts []arrow.Array
	for n > 0 {
		if c.cur == nil || c.off >= int(c.cur.NumRows()) {
			if c.cur != nil {
				c.cur.Release()
				c.cur = nil
			}
			if c.rd == nil {
				releaseAll(parts)
				return nil, fmt.Errorf("results read before they are computed")
			}
			rec, err := c.rd.Next(ctx)
			if err != nil {
				releaseAll(parts)
				if err == io.EOF {
					return nil, fmt.Errorf("fewer results than groups")
				}
				return nil, err
			}
			c.cur, c.off = rec, 0
			continue
		}
		m := min(n, int(c.cur.NumRows())-c.off)
		parts = append(parts, array.NewSlice(c.cur.Column(0), int64(c.off), int64(c.off+m)))
		c.off += m
		n -= m
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	defer releaseAll(parts)
	return array.Concatenate(parts, mem)
}

func (c *resultCursor) close() {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	if c.rd != nil {
		c.rd.Close()
		c.rd = nil
	}
}

// ---- folds -------------------------------------------------------------------

// quantileFold picks the positions the in-memory quantile reads from a
// group's sorted values.
type quantileFold struct {
	v        int // the value column
	f        float64
	disc     bool
	counts   []int64
	n        int64 // the group's values
	at       int64 // values of the group seen
	lo, hi   int64
	w        float64
	vlo, vhi float64
	b        *array.Float64Builder
}

func newQuantileFold(mem memory.Allocator, g *sortedCall) *quantileFold {
	f := g.call.Fraction
	if g.call.Func == plan.AggMedian {
		f = 0.5
	}
	_, v, _ := g.columns()
	return &quantileFold{v: v, f: f, disc: g.call.Func == plan.AggPercentileDisc, counts: g.counts, b: array.NewFloat64Builder(mem)}
}

func (q *quantileFold) start(g int64) {
	q.n, q.at = 0, 0
	if int(g) < len(q.counts) {
		q.n = q.counts[g]
	}
	n := q.n
	if q.disc {
		q.lo = min(max(int64(math.Ceil(q.f*float64(n)))-1, 0), n-1)
		q.hi, q.w = q.lo, 0
	} else {
		pos := q.f * float64(n-1)
		q.lo, q.hi = int64(math.Floor(pos)), int64(math.Ceil(pos))
		q.w = pos - float64(q.lo)
	}
}

func (q *quantileFold) add(rec arrow.RecordBatch, rows []int32) error {
	vs, ok := rec.Column(q.v).(*array.Float64)
	if !ok {
		return fmt.Errorf("sorted values of type %s, want float64", rec.Column(q.v).DataType())
	}
	for _, r := range rows {
		if q.at == q.lo {
			q.vlo = vs.Value(int(r))
		}
		if q.at == q.hi {
			q.vhi = vs.Value(int(r))
		}
		q.at++
	}
	return nil
}

func (q *quantileFold) finish() error {
	if q.at != q.n {
		return fmt.Errorf("%d sorted values of a group read back, %d written", q.at, q.n)
	}
	v := q.vlo
	if q.hi != q.lo {
		v = q.vlo + q.w*(q.vhi-q.vlo)
	}
	q.b.Append(v)
	return nil
}

func (q *quantileFold) empty()                             { q.b.AppendNull() }
func (q *quantileFold) held() int64                        { return int64(q.b.Len()) * 8 }
func (q *quantileFold) flush(memory.Allocator) arrow.Array { return q.b.NewArray() }
func (q *quantileFold) release()                           { q.b.Release() }

// countFold counts a group's rows (its distinct values: foldGroups
// passes the first of each run only).
type countFold struct {
	n      int64
	counts []int64
}

func (c *countFold) start(int64) { c.n = 0 }
func (c *countFold) add(_ arrow.RecordBatch, rows []int32) error {
	c.n += int64(len(rows))
	return nil
}
func (c *countFold) finish() error { c.counts = append(c.counts, c.n); return nil }
func (c *countFold) empty()        { c.counts = append(c.counts, 0) }
func (c *countFold) held() int64   { return int64(cap(c.counts)) * 8 }
func (c *countFold) release()      {}
func (c *countFold) flush(mem memory.Allocator) arrow.Array {
	out := countArray(mem, c.counts)
	c.counts = c.counts[:0]
	return out
}

// stringFold joins a group's strings (column 1, in order).
type stringFold struct {
	v     int // the value column
	sep   string
	sb    strings.Builder
	some  bool
	strs  []string
	valid []bool
	bytes int64
}

func (s *stringFold) start(int64) { s.sb.Reset(); s.some = false }

func (s *stringFold) add(rec arrow.RecordBatch, rows []int32) error {
	c, ok := rec.Column(s.v).(*array.String)
	if !ok {
		return fmt.Errorf("spilled strings of type %s", rec.Column(s.v).DataType())
	}
	for _, r := range rows {
		if c.IsNull(int(r)) {
			continue
		}
		if s.some {
			s.sb.WriteString(s.sep)
		}
		s.sb.WriteString(c.Value(int(r)))
		s.some = true
	}
	return nil
}

func (s *stringFold) finish() error {
	if !s.some {
		s.empty()
		return nil
	}
	v := s.sb.String()
	s.strs, s.valid = append(s.strs, v), append(s.valid, true)
	s.bytes += int64(len(v)) + 16
	s.sb = strings.Builder{} // v keeps the old buffer
	return nil
}

func (s *stringFold) empty()      { s.strs, s.valid = append(s.strs, ""), append(s.valid, false) }
func (s *stringFold) held() int64 { return s.bytes + int64(s.sb.Cap()) }
func (s *stringFold) release()    {}
func (s *stringFold) flush(mem memory.Allocator) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.AppendValues(s.strs, s.valid)
	s.strs, s.valid, s.bytes = s.strs[:0], s.valid[:0], 0
	return b.NewArray()
}

// listFold gathers a group's values (column 1, in order, NULLs kept)
// into its list.
type listFold struct {
	v     int // the value column
	t     *arrow.ListType
	b     *kernel.Builder
	offs  []int32
	valid []bool
	bytes int64
}

func newListFold(t arrow.DataType, v int, err error) (groupFold, error) {
	if err != nil {
		return nil, err
	}
	lt, ok := t.(*arrow.ListType)
	if !ok {
		return nil, fmt.Errorf("list gives %s, want a list type", t)
	}
	b, err := kernel.NewBuilder(memory.DefaultAllocator, lt.Elem())
	if err != nil {
		return nil, err
	}
	return &listFold{v: v, t: lt, b: b, offs: []int32{0}}, nil
}

func (l *listFold) start(int64) {}

func (l *listFold) add(rec arrow.RecordBatch, rows []int32) error {
	c := rec.Column(l.v)
	if err := l.b.Append(c, rows); err != nil {
		return err
	}
	if n := c.Len(); n > 0 {
		l.bytes += arrayBytes(c) * int64(len(rows)) / int64(n)
	}
	return nil
}

func (l *listFold) finish() error {
	n := int32(l.b.Len())
	l.valid = append(l.valid, n > l.offs[len(l.offs)-1])
	l.offs = append(l.offs, n)
	return nil
}

func (l *listFold) empty() {
	l.valid, l.offs = append(l.valid, false), append(l.offs, l.offs[len(l.offs)-1])
}
func (l *listFold) held() int64 { return l.bytes + int64(cap(l.offs))*5 }
func (l *listFold) release()    {}
func (l *listFold) flush(mem memory.Allocator) arrow.Array {
	n := len(l.valid)
	vals := l.b.Finish()
	defer vals.Release()
	obuf, offs := newFixed[int32](mem, n+1)
	copy(offs, l.offs)
	vbuf, valid := newBitmap(mem, n)
	for i, ok := range l.valid {
		if ok {
			setBit(valid, i)
		}
	}
	l.offs, l.valid, l.bytes = l.offs[:1], l.valid[:0], 0
	return makeNested(l.t, n, vbuf, []*memory.Buffer{obuf}, []arrow.Array{vals})
}
