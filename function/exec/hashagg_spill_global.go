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

// Global single-mode aggregate spill. Without GROUP BY a single-mode
// aggregate has one group, which grace partitioning (hashagg_spill_single.go)
// cannot split. Over its budget it does what DuckDB and Spark do for one
// huge group: the calls that hold every value (median and the quantiles,
// count(DISTINCT), string_agg, list) write the values they hold, and from
// then on every batch's values, to one spill file each (Arrow IPC), and
// the other calls of the node (sum, count, min, ...: one small state each)
// stay in memory. At the end each file is read back through the external
// sort (sort.go, sort_spill.go) where the call needs an order, one call at
// a time, and streamed:
//
//   - quantiles: the values sorted (NaN after every number, as DuckDB); the
//     count is known, so the positions the in-memory quantile picks are
//     picked from the stream;
//   - count(DISTINCT): the values sorted, counting the rows that differ
//     from the one before;
//   - string_agg, list: the values in arrival order (the order of the
//     input, already sorted when the call has ORDER BY), read back as
//     written; with DISTINCT each value carries its arrival number, the
//     pairs are sorted by value then number, the first of equal values
//     kept, and the survivors sorted by number again, so the first
//     occurrences keep their order as in memory (firstOccurrences).
//
// The result of string_agg or list is built in memory, as DuckDB does:
// when it alone passes the budget the task fails with SL104 saying so.

// globalCall is one call of a global aggregate whose values go to disk.
type globalCall struct {
	slot   int
	call   plan.AggCall
	label  string
	kind   globalKind
	dedupe bool // string_agg/list DISTINCT: the first of equal values
	vtype  plan.DataType
	schema plan.Schema // v, then seq when dedupe
	file   *spillFile
	n      int64 // values written (non-NULL ones but for list)
	seq    int64
	extra  []*spillFile // files of the DISTINCT pass
}

type globalKind int

const (
	gQuantile globalKind = iota
	gCountDistinct
	gStringAgg
	gList
)

// canSpillGlobal reports whether a single-mode aggregate without GROUP BY
// may move its calls' values to disk (once: then they are there).
func (h *hashAggOp) canSpillGlobal() bool {
	if h.agg.Mode != plan.AggSingle || len(h.agg.GroupBy) > 0 || h.mergeStates || h.global != nil {
		return false
	}
	for i := range h.accs {
		if _, ok := h.globalKindOf(i); ok {
			return true
		}
	}
	return false
}

// globalKindOf is how slot i's values spill; false for a call that keeps
// its state in memory (a small one-group state).
func (h *hashAggOp) globalKindOf(i int) (globalKind, bool) {
	switch a := h.accs[i].acc.(type) {
	case *quantileAcc:
		return gQuantile, true
	case *countDistinctAcc:
		return gCountDistinct, a.distinct != nil
	case *stringAggAcc:
		return gStringAgg, true
	case *listAggAcc:
		return gList, true
	}
	return 0, false
}

// spillGlobal moves the values of the calls that hold them to one spill
// file each, gives those calls fresh (empty, unused) accumulators and
// lowers the reservation to what the others hold.
func (h *hashAggOp) spillGlobal() error {
	mem := h.opts.Mem
	nkeys := len(h.agg.GroupBy)
	global := make([]*globalCall, len(h.accs))
	h.global = global // Close removes the files, whatever happens next
	for i := range h.accs {
		k, ok := h.globalKindOf(i)
		if !ok {
			continue
		}
		c := h.agg.Aggs[i]
		g := &globalCall{slot: i, call: c, label: aggLabel(c, i), kind: k}
		switch k {
		case gQuantile:
			g.vtype = plan.Float64Type
		case gCountDistinct:
			g.vtype = c.Arg.Type
		case gStringAgg:
			g.vtype, g.dedupe = plan.StringType, c.Distinct
		case gList:
			g.vtype, g.dedupe = c.Type.Elem(), c.Distinct
			if g.vtype.ID == plan.Null || c.Type.ID != plan.List {
				return fmt.Errorf("exec: aggregate %s: spill: result type %s, want a list", g.label, c.Type)
			}
		}
		g.schema = plan.Schema{{Name: "v", Type: g.vtype, Nullable: true}}
		if g.dedupe {
			g.schema = append(g.schema, plan.Field{Name: "seq", Type: plan.Int64Type})
		}
		f, err := h.opts.Pool.newSpill("aggregate", g.schema.Arrow(), mem)
		if err != nil {
			return err
		}
		g.file = f
		global[i] = g
		held, err := h.heldValues(i, g, h.schema.Field(nkeys+i).Type)
		if err != nil {
			return fmt.Errorf("spill: %w", err)
		}
		if held != nil {
			// in batches of BatchRows, so the sort reading them back
			// holds one batch at a time as it would the input's
			for lo := 0; lo < held.Len() && err == nil; lo += h.opts.BatchRows {
				part := array.NewSlice(held, int64(lo), int64(min(held.Len(), lo+h.opts.BatchRows)))
				err = g.write(mem, part)
				part.Release()
			}
			held.Release()
			if err != nil {
				return fmt.Errorf("exec: aggregate %s: %w", g.label, err)
			}
		}
		acc, fn, err := newAccumulator(c, h.agg.Mode, h.node.Schema, h.accs[i].col, mem)
		if err != nil {
			return fmt.Errorf("exec: aggregate %s: %w", g.label, err)
		}
		acc.Grow(h.ngroups)
		h.accs[i].acc, h.accs[i].fn = acc, fn
	}
	return h.res.set(h.bytes())
}

// heldValues is the values slot i holds, in arrival order (the distinct
// ones for count(DISTINCT) and a DISTINCT list), as one array; nil for none.
func (h *hashAggOp) heldValues(i int, g *globalCall, resType arrow.DataType) (arrow.Array, error) {
	mem := h.opts.Mem
	if h.ngroups == 0 {
		return nil, nil
	}
	switch a := h.accs[i].acc.(type) {
	case *quantileAcc:
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		b.AppendValues(a.hvals[0], nil)
		return b.NewArray(), nil
	case *stringAggAcc:
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.AppendValues(a.hstrs[0], nil)
		return b.NewArray(), nil
	case *countDistinctAcc:
		l, err := a.SpillStates(mem, 0, 1)
		if err != nil {
			return nil, err
		}
		defer l.Release()
		vals := l.(*array.List).ListValues()
		vals.Retain()
		return vals, nil
	case *listAggAcc:
		r, err := a.Result(mem, resType, 0, 1)
		if err != nil {
			return nil, err
		}
		defer r.Release()
		l, ok := r.(*array.List)
		if !ok {
			return nil, fmt.Errorf("list result of type %s", r.DataType())
		}
		lo, hi := l.ValueOffsets(0)
		return array.NewSlice(l.ListValues(), lo, hi), nil
	}
	return nil, fmt.Errorf("%s does not spill its values", g.call.Func)
}

// add writes the values of slot g's call in rec (its argument evaluated).
func (g *globalCall) add(mem memory.Allocator, rec arrow.RecordBatch) error {
	arg, err := Eval(g.call.Arg, rec, mem)
	if err != nil {
		return err
	}
	defer arg.Release()
	if arg.DataType().ID() == arrow.NULL {
		if g.kind != gList {
			return nil // every value NULL: nothing to keep
		}
		return g.write(mem, arg)
	}
	if g.call.Func == plan.AggListWrapped {
		// one-element lists, NULLs skipped: their elements
		l, ok := arg.(*array.List)
		if !ok {
			return fmt.Errorf("over %s, want a list", arg.DataType())
		}
		idx := make([]int32, 0, l.Len())
		for r := 0; r < l.Len(); r++ {
			if !l.IsNull(r) {
				lo, _ := l.ValueOffsets(r)
				idx = append(idx, int32(lo))
			}
		}
		vals, err := take(mem, l.ListValues(), idx)
		if err != nil {
			return err
		}
		defer vals.Release()
		return g.write(mem, vals)
	}
	return g.write(mem, arg)
}

// write appends values to the call's file: NULLs dropped but for list,
// an arrival number beside each value under DISTINCT.
func (g *globalCall) write(mem memory.Allocator, vals arrow.Array) error {
	if g.kind != gList && vals.NullN() > 0 {
		idx := make([]int32, 0, vals.Len()-vals.NullN())
		for r := 0; r < vals.Len(); r++ {
			if vals.IsValid(r) {
				idx = append(idx, int32(r))
			}
		}
		if vals.DataType().ID() == arrow.NULL {
			idx = idx[:0]
		}
		v, err := take(mem, vals, idx)
		if err != nil {
			return fmt.Errorf("spill: %w", err)
		}
		defer v.Release()
		vals = v
	}
	n := vals.Len()
	if n == 0 {
		return nil
	}
	vals.Retain()
	cols := []arrow.Array{vals}
	if g.dedupe {
		buf, seq := newFixed[int64](mem, n)
		for i := range seq {
			seq[i] = g.seq + int64(i)
		}
		cols = append(cols, makeArray(arrow.PrimitiveTypes.Int64, n, nil, buf))
	}
	g.seq += int64(n)
	g.n += int64(n)
	rec, err := conformRecord(mem, g.file.schema, cols, n)
	if err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	defer rec.Release()
	return g.file.write(rec)
}

func (g *globalCall) remove() {
	if g == nil {
		return
	}
	g.file.remove()
	for _, f := range g.extra {
		f.remove()
	}
}

// globalOutput is the one row of a global aggregate whose calls spilled:
// the in-memory calls' results and the spilled calls' results, computed
// from their files one at a time.
func (h *hashAggOp) globalOutput(ctx context.Context) (arrow.RecordBatch, error) {
	mem := h.opts.Mem
	if h.ngroups == 0 {
		h.grow(1)
	}
	cols := make([]arrow.Array, 0, h.schema.NumFields())
	for i := range h.accs {
		t := h.schema.Field(i).Type
		var arr arrow.Array
		var err error
		if g := h.global[i]; g != nil {
			arr, err = h.globalResult(ctx, g, t)
			g.remove()
			if err == nil {
				h.globalHeld += arrayBytes(arr) // the results built so far stay held
			}
		} else {
			arr, err = h.accs[i].acc.Result(mem, t, 0, 1)
		}
		if err != nil {
			releaseAll(cols)
			var mle *MemoryLimitError
			if errors.As(err, &mle) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil, err
			}
			return nil, fmt.Errorf("exec: aggregate %s: %w", aggLabel(h.agg.Aggs[i], i), err)
		}
		cols = append(cols, arr)
	}
	return conformRecord(mem, h.schema, cols, 1)
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

// globalResult computes call g's result (of type t, one row) from its file.
func (h *hashAggOp) globalResult(ctx context.Context, g *globalCall, t arrow.DataType) (arrow.Array, error) {
	mem := h.opts.Mem
	switch g.kind {
	case gQuantile:
		return h.globalQuantile(ctx, g)
	case gCountDistinct:
		op, err := h.sortedFile(g.file, g.schema, 0)
		if err != nil {
			return nil, err
		}
		defer op.Close()
		var n int64
		err = streamDistinct(ctx, op, g.schema, mem, false,
			func(rec arrow.RecordBatch, first []int32) error { n += int64(len(first)); return nil })
		if err != nil {
			return nil, err
		}
		return countArray(mem, []int64{n}), nil
	}
	// string_agg, list: the values in arrival order (first occurrences
	// under DISTINCT)
	var in Operator
	if g.dedupe {
		op, err := h.firstOccurrences(ctx, g)
		if err != nil {
			return nil, err
		}
		in = op
	} else {
		r, err := g.file.open(mem)
		if err != nil {
			return nil, err
		}
		in = r
	}
	defer in.Close()
	if g.kind == gStringAgg {
		return h.globalStringAgg(ctx, g, in)
	}
	return h.globalList(ctx, g, in, t)
}

// globalQuantile streams the sorted values and picks the positions the
// in-memory quantile reads (quantile).
func (h *hashAggOp) globalQuantile(ctx context.Context, g *globalCall) (arrow.Array, error) {
	mem := h.opts.Mem
	n := g.n
	if n == 0 {
		return array.MakeArrayOfNull(mem, arrow.PrimitiveTypes.Float64, 1), nil
	}
	f := g.call.Fraction
	if g.call.Func == plan.AggMedian {
		f = 0.5
	}
	// the positions read and the weight of the second
	var lo, hi int64
	var w float64
	if g.call.Func == plan.AggPercentileDisc {
		lo = min(max(int64(math.Ceil(f*float64(n)))-1, 0), n-1)
		hi = lo
	} else {
		pos := f * float64(n-1)
		lo, hi = int64(math.Floor(pos)), int64(math.Ceil(pos))
		w = pos - float64(lo)
	}
	op, err := h.sortedFile(g.file, g.schema, 0)
	if err != nil {
		return nil, err
	}
	defer op.Close()
	var vlo, vhi float64
	var at int64
	for at <= hi {
		rec, err := op.Next(ctx)
		if err == io.EOF {
			return nil, fmt.Errorf("%d sorted values read back, %d written", at, n)
		}
		if err != nil {
			return nil, err
		}
		vs, ok := rec.Column(0).(*array.Float64)
		if !ok {
			rec.Release()
			return nil, fmt.Errorf("sorted values of type %s, want float64", rec.Column(0).DataType())
		}
		m := int64(vs.Len())
		if lo >= at && lo < at+m {
			vlo = vs.Value(int(lo - at))
		}
		if hi >= at && hi < at+m {
			vhi = vs.Value(int(hi - at))
		}
		at += m
		rec.Release()
	}
	v := vlo
	if hi != lo {
		v = vlo + w*(vhi-vlo)
	}
	buf, out := newFixed[float64](mem, 1)
	out[0] = v
	return makeArray(arrow.PrimitiveTypes.Float64, 1, nil, buf), nil
}

// firstOccurrences is g's values (with their arrival numbers) reduced to
// the first of equal values, in arrival order: sorted by value then
// number, the first of each run kept (to a second file), sorted by number.
func (h *hashAggOp) firstOccurrences(ctx context.Context, g *globalCall) (Operator, error) {
	mem := h.opts.Mem
	op, err := h.sortedFile(g.file, g.schema, 0, 1)
	if err != nil {
		return nil, err
	}
	defer op.Close()
	f, err := h.opts.Pool.newSpill("aggregate", g.schema.Arrow(), mem)
	if err != nil {
		return nil, err
	}
	g.extra = append(g.extra, f)
	err = streamDistinct(ctx, op, g.schema, mem, g.kind == gList,
		func(rec arrow.RecordBatch, first []int32) error {
			if len(first) == 0 {
				return nil
			}
			part, err := takeRecord(mem, rec, first)
			if err != nil {
				return err
			}
			defer part.Release()
			return f.write(part)
		})
	if err != nil {
		return nil, err
	}
	return h.sortedFile(f, g.schema, 1)
}

// streamDistinct reads op (sorted by its column 0, NULLs last) and calls
// first with each batch and its rows whose column 0 differs from the row
// before: NULLs are skipped, or with keepNull one NULL is a value too (a
// DISTINCT list keeps one). Equality is the sort's (-0 = +0, NaN = NaN,
// nested values by their key encoding), as the hash table's.
func streamDistinct(ctx context.Context, op Operator, schema plan.Schema, mem memory.Allocator, keepNull bool,
	first func(arrow.RecordBatch, []int32) error) error {
	key := &sortOp{keys: []plan.SortKey{{Expr: plan.Column(0, schema[0].Name, schema[0].Type)}}}
	var prevKey arrow.Array
	var prevFlat *flatKey
	prevRow := int32(-1)
	defer func() {
		if prevKey != nil {
			prevKey.Release()
		}
	}()
	var rows []int32
	for {
		rec, err := op.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		k, err := evalSortKey(key.keys[0].Expr, rec, mem)
		if err != nil {
			rec.Release()
			return err
		}
		fl, err := key.flatten([][]arrow.Array{{k}})
		if err != nil {
			k.Release()
			rec.Release()
			return err
		}
		f := fl[0]
		rows = rows[:0]
		for r := int32(0); r < int32(rec.NumRows()); r++ {
			if f.isNull(r) && !keepNull {
				break // NULLs sort last
			}
			if prevFlat == nil || prevFlat.cmpWith(prevRow, f, r) != 0 {
				rows = append(rows, r)
			}
			prevFlat, prevRow = f, r
		}
		err = first(rec, rows)
		rec.Release()
		if prevKey != nil {
			prevKey.Release()
		}
		prevKey = k // prevFlat's strings point into it
		if err != nil {
			return err
		}
	}
}

// resultTooLarge is the error of a string_agg or list whose result alone
// does not fit the budget (it is built in memory, as DuckDB builds it).
func (h *hashAggOp) resultTooLarge(g *globalCall, err error) error {
	var mle *MemoryLimitError
	if errors.As(err, &mle) && mle.Reason == "" {
		mle.Reason = fmt.Sprintf("the result of %s %s", g.label, resultAloneReason)
	}
	return err
}

// resultAloneReason ends the reason of a result that alone does not fit.
const resultAloneReason = "alone does not fit: it is built in memory"

// globalStringAgg joins the strings of in (column 0, in order).
func (h *hashAggOp) globalStringAgg(ctx context.Context, g *globalCall, in Operator) (arrow.Array, error) {
	mem := h.opts.Mem
	base := h.bytes() + h.globalHeld
	var sb strings.Builder
	some := false
	for {
		rec, err := in.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		s, ok := rec.Column(0).(*array.String)
		if !ok {
			rec.Release()
			return nil, fmt.Errorf("spilled strings of type %s", rec.Column(0).DataType())
		}
		for r := 0; r < s.Len(); r++ {
			if s.IsNull(r) {
				continue
			}
			if some {
				sb.WriteString(g.call.Sep)
			}
			sb.WriteString(s.Value(r))
			some = true
		}
		rec.Release()
		if err := h.res.set(base + int64(sb.Cap())); err != nil {
			return nil, h.resultTooLarge(g, err)
		}
	}
	b := array.NewStringBuilder(mem)
	defer b.Release()
	if some {
		b.Append(sb.String())
	} else {
		b.AppendNull()
	}
	return b.NewArray(), nil
}

// globalList builds the one-row list of the values of in (column 0, in
// order, NULLs kept).
func (h *hashAggOp) globalList(ctx context.Context, g *globalCall, in Operator, t arrow.DataType) (arrow.Array, error) {
	mem := h.opts.Mem
	lt, ok := t.(*arrow.ListType)
	if !ok {
		return nil, fmt.Errorf("list gives %s, want a list type", t)
	}
	b, err := kernel.NewBuilder(memory.DefaultAllocator, lt.Elem())
	if err != nil {
		return nil, err
	}
	base := h.bytes() + h.globalHeld
	var held int64
	var idx []int32
	for {
		rec, err := in.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		c := rec.Column(0)
		idx = idx[:0]
		for r := 0; r < c.Len(); r++ {
			idx = append(idx, int32(r))
		}
		if err := b.Append(c, idx); err != nil {
			rec.Release()
			return nil, err
		}
		held += arrayBytes(c)
		rec.Release()
		if err := h.res.set(base + held); err != nil {
			return nil, h.resultTooLarge(g, err)
		}
	}
	n := b.Len()
	vals := b.Finish()
	defer vals.Release()
	if n == 0 {
		return array.MakeArrayOfNull(mem, t, 1), nil
	}
	obuf, offs := newFixed[int32](mem, 2)
	offs[0], offs[1] = 0, int32(n)
	vbuf, valid := newBitmap(mem, 1)
	setBit(valid, 0)
	return makeNested(t, 1, vbuf, []*memory.Buffer{obuf}, []arrow.Array{vals}), nil
}
