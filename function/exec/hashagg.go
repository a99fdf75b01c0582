package exec

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
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
	accs     []*aggAcc
	ngroups  int // == table.ngroups when grouping

	consumed bool
	emitted  int
	closed   bool

	// spill (hashagg_spill.go)
	flush bool             // partial mode: emit the groups so far, then go on
	parts *spillPartitions // final mode: spilled partial states by key hash
	level int
	merge *aggMerge

	// adaptive partial aggregation (hashagg_skip.go)
	seenRows    int64 // input rows consumed
	probed      bool  // the skip decision is made
	passThrough bool  // rows pass on as one-row partial states
	skipped     int64 // rows passed on so
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
			want += c.NumStates()
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
		acc, err := newAggAcc(c, a.Mode, n.Schema, col, i)
		if err != nil {
			return fmt.Errorf("exec: aggregate %s: %w", aggLabel(c, i), err)
		}
		op.accs = append(op.accs, acc)
		col += c.NumStates()
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
	rec, err := h.output(lo, hi)
	if err != nil {
		return nil, err
	}
	h.emitted = hi
	return rec, nil
}

func (h *hashAggOp) grow(n int) {
	h.ngroups = n
	for _, a := range h.accs {
		a.grow(n)
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
		for i, a := range h.accs {
			if err := a.update(rec, gids, n, mem); err != nil {
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
		}
		if err := h.res.set(need); err != nil {
			return err
		}
	}
}

func (h *hashAggOp) bytes() int64 {
	var n int64
	if h.table != nil {
		n += h.table.bytes()
	}
	for _, a := range h.accs {
		n += a.bytes()
	}
	return n
}

func (h *hashAggOp) output(lo, hi int) (arrow.RecordBatch, error) {
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
	for i, a := range h.accs {
		var arrs []arrow.Array
		var err error
		if h.agg.Mode == plan.AggPartial {
			arrs, err = a.states(mem, h.schema, col, lo, hi)
		} else {
			var arr arrow.Array
			arr, err = a.result(mem, h.schema.Field(col).Type, lo, hi)
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

// ---- aggregate states -------------------------------------------------------

// aggAcc holds the per-group state of one aggregate.
type aggAcc struct {
	call  plan.AggCall
	mode  plan.AggMode
	k     kind // layout of the value state (sum/min/max; avg's sum)
	scale int  // decimal scale of the value state
	dec   bool

	i64 []int64
	f64 []float64
	i32 []int32
	w   []decimal128.Num // wide decimal sums (any decimal input) and min/max
	bl  []bool
	str []string
	has []bool  // a non-NULL value was seen (sum/min/max/avg)
	cnt []int64 // count, count_star, avg, the variance family

	vmean, vm2 []float64   // the variance family (agg_variance.go)
	hvals      [][]float64 // median, percentiles (agg_holistic.go)
	hstrs      [][]string  // string_agg
	hll        [][]byte    // approx_count_distinct (agg_hll.go)
	hbytes     int64

	strBytes int64
	inCol    int // final mode: first state column in the input

	// count(distinct): the distinct (group id, value) pairs seen, each a
	// group of its own table; cnt counts the pairs with a non-NULL value.
	distinct *groupTable
	dkind    kind
	dseen    []bool // scratch: pairs first seen in the current batch
}

func newAggAcc(c plan.AggCall, mode plan.AggMode, out plan.Schema, col, i int) (*aggAcc, error) {
	a := &aggAcc{call: c, mode: mode, inCol: col}
	if c.Func == plan.AggApproxCountDistinct {
		if mode != plan.AggFinal && c.Arg == nil {
			return nil, fmt.Errorf("missing argument")
		}
		return a, nil
	}
	if c.Func.Holistic() {
		if mode != plan.AggSingle || c.Arg == nil {
			return nil, fmt.Errorf("%s is only supported in single mode with an argument", c.Func)
		}
		return a, nil
	}
	if c.Func.IsVariance() {
		if mode != plan.AggFinal && c.Arg == nil {
			return nil, fmt.Errorf("missing argument")
		}
		return a, nil
	}
	switch c.Func {
	case plan.AggCount, plan.AggCountStar:
		return a, nil
	case plan.AggCountDistinct:
		if c.Arg == nil {
			return nil, fmt.Errorf("missing argument")
		}
		if mode != plan.AggSingle {
			return nil, fmt.Errorf("count(distinct) is only supported in single mode, not %s", mode)
		}
		a.dkind = kindOfType(c.Arg.Type)
		if a.dkind != kNull {
			a.distinct = newGroupTable([]kind{kInt64, a.dkind})
		}
		return a, nil
	case plan.AggSum, plan.AggMin, plan.AggMax:
		t := c.Type
		if mode == plan.AggPartial {
			t = out[col].Type
		}
		a.k = kindOfType(t)
		a.dec, a.scale = t.ID == plan.Decimal, t.Scale
	case plan.AggAvg:
		var t plan.DataType
		switch {
		case mode == plan.AggPartial:
			t = out[col].Type
		case c.Arg != nil:
			t = plan.SumType(c.Arg.Type)
		default:
			t = plan.NullType // known from the first state batch
		}
		a.k = kindOfType(t)
		a.dec, a.scale = t.ID == plan.Decimal, t.Scale
	default:
		return nil, fmt.Errorf("unsupported aggregate function %q", c.Func)
	}
	if mode != plan.AggFinal && c.Func != plan.AggCountStar && c.Arg == nil {
		return nil, fmt.Errorf("missing argument")
	}
	if a.k == kString && c.Func != plan.AggMin && c.Func != plan.AggMax {
		return nil, fmt.Errorf("%s over strings", c.Func)
	}
	return a, nil
}

func (a *aggAcc) bytes() int64 {
	n := int64(cap(a.i64)*8+cap(a.f64)*8+cap(a.i32)*4+cap(a.w)*16+cap(a.bl)+cap(a.str)*16+cap(a.has)+cap(a.cnt)*8+cap(a.dseen)+cap(a.vmean)*8+cap(a.vm2)*8+cap(a.hvals)*24+cap(a.hstrs)*24+cap(a.hll)*24) + a.hllBytes() + a.hbytes + a.strBytes
	if a.distinct != nil {
		n += a.distinct.bytes()
	}
	return n
}

func growTo[T any](s []T, n int) []T {
	if n <= len(s) {
		return s
	}
	if n <= cap(s) {
		return s[:n]
	}
	c := max(2*cap(s), n, 16)
	ns := make([]T, n, c)
	copy(ns, s)
	return ns
}

func (a *aggAcc) grow(n int) {
	if a.call.Func.IsVariance() {
		a.growVariance(n)
		return
	}
	if a.call.Func == plan.AggApproxCountDistinct {
		a.hll = growTo(a.hll, n)
		return
	}
	if a.call.Func.Holistic() {
		a.hvals = growTo(a.hvals, n)
		a.hstrs = growTo(a.hstrs, n)
		return
	}
	switch a.call.Func {
	case plan.AggCount, plan.AggCountStar, plan.AggCountDistinct:
		a.cnt = growTo(a.cnt, n)
		return
	case plan.AggAvg:
		a.cnt = growTo(a.cnt, n)
	}
	a.has = growTo(a.has, n)
	switch a.k {
	case kInt64:
		a.i64 = growTo(a.i64, n)
	case kFloat64:
		a.f64 = growTo(a.f64, n)
	case kDate:
		a.i32 = growTo(a.i32, n)
	case kDec128:
		a.w = growTo(a.w, n)
	case kBool:
		a.bl = growTo(a.bl, n)
	case kString:
		a.str = growTo(a.str, n)
	}
}

// update folds one input batch into the states (gids nil: all rows are
// group 0).
func (a *aggAcc) update(rec arrow.RecordBatch, gids []uint32, n int, mem memory.Allocator) error {
	if a.mode == plan.AggFinal {
		return a.merge(rec, gids, n)
	}
	if a.call.Func == plan.AggCountStar {
		countAll(a.cnt, gids, n)
		return nil
	}
	arg, err := Eval(a.call.Arg, rec, mem)
	if err != nil {
		return err
	}
	defer arg.Release()
	if arg.DataType().ID() == arrow.NULL {
		return nil // every value NULL: nothing to fold
	}
	if a.call.Func.IsVariance() {
		return a.updateVariance(arg, gids)
	}
	if a.call.Func.Holistic() {
		return a.updateHolistic(arg, gids)
	}
	if a.call.Func == plan.AggApproxCountDistinct {
		return a.updateHLL(arg, gids)
	}
	switch a.call.Func {
	case plan.AggCount:
		countValid(a.cnt, gids, arg)
		return nil
	case plan.AggCountDistinct:
		return a.countDistinct(arg, gids, mem)
	case plan.AggAvg:
		countValid(a.cnt, gids, arg)
		return a.sum(arg, gids)
	case plan.AggSum:
		return a.sum(arg, gids)
	case plan.AggMin, plan.AggMax:
		return a.minMax(arg, gids, a.call.Func == plan.AggMax)
	}
	return fmt.Errorf("unsupported aggregate function %q", a.call.Func)
}

// merge folds partial states (final mode).
func (a *aggAcc) merge(rec arrow.RecordBatch, gids []uint32, n int) error {
	ns := a.call.NumStates()
	if a.inCol+ns > int(rec.NumCols()) {
		return fmt.Errorf("input has %d columns, state column %d missing", rec.NumCols(), a.inCol+ns-1)
	}
	if a.call.Func.IsVariance() {
		return a.mergeVariance(rec, gids)
	}
	if a.call.Func == plan.AggApproxCountDistinct {
		return a.mergeHLL(rec, gids)
	}
	st := rec.Column(a.inCol)
	switch a.call.Func {
	case plan.AggCount, plan.AggCountStar:
		return addCounts(a.cnt, gids, st)
	case plan.AggAvg:
		if a.k == kNull && st.DataType().ID() != arrow.NULL {
			t := typeOfArrow(st.DataType())
			a.k, a.dec, a.scale = kindOfType(t), t.ID == plan.Decimal, t.Scale
			a.grow(len(a.cnt))
		}
		if err := addCounts(a.cnt, gids, rec.Column(a.inCol+1)); err != nil {
			return err
		}
		if st.DataType().ID() == arrow.NULL {
			return nil
		}
		return a.sum(st, gids)
	case plan.AggSum:
		if st.DataType().ID() == arrow.NULL {
			return nil
		}
		return a.sum(st, gids)
	case plan.AggMin, plan.AggMax:
		if st.DataType().ID() == arrow.NULL {
			return nil
		}
		return a.minMax(st, gids, a.call.Func == plan.AggMax)
	}
	return fmt.Errorf("unsupported aggregate function %q", a.call.Func)
}

func countAll(cnt []int64, gids []uint32, n int) {
	if gids == nil {
		cnt[0] += int64(n)
		return
	}
	for _, g := range gids {
		cnt[g]++
	}
}

func countValid(cnt []int64, gids []uint32, arg arrow.Array) {
	vb, voff := validityOf(arg)
	n := arg.Len()
	if gids == nil {
		cnt[0] += int64(n - arg.NullN())
		return
	}
	if vb == nil {
		for _, g := range gids {
			cnt[g]++
		}
		return
	}
	for i, g := range gids {
		if bit(vb, voff+i) {
			cnt[g]++
		}
	}
}

func addCounts(cnt []int64, gids []uint32, st arrow.Array) error {
	if st.DataType().ID() != arrow.INT64 {
		return fmt.Errorf("count state of type %s, want int64", st.DataType())
	}
	x := values[int64](st)
	vb, voff := validityOf(st)
	if gids == nil {
		var s int64
		for i, v := range x {
			if isValid(vb, voff, i) {
				s += v
			}
		}
		cnt[0] += s
		return nil
	}
	for i, g := range gids {
		if isValid(vb, voff, i) {
			cnt[g] += x[i]
		}
	}
	return nil
}

func (a *aggAcc) checkKind(arg arrow.Array) error {
	if k := layoutOf(arg); k != a.k && !(a.k == kDec128 && k == kInt64 && a.call.Func != plan.AggMin && a.call.Func != plan.AggMax) {
		return fmt.Errorf("input of type %s, state is %s", arg.DataType(), a.k)
	}
	if a.dec {
		if dt, ok := arg.DataType().(*arrow.Decimal64Type); ok && int(dt.Scale) != a.scale {
			return fmt.Errorf("input of type %s, state scale is %d", arg.DataType(), a.scale)
		}
		if dt, ok := arg.DataType().(*arrow.Decimal128Type); ok && int(dt.Scale) != a.scale {
			return fmt.Errorf("input of type %s, state scale is %d", arg.DataType(), a.scale)
		}
	}
	return nil
}

func (a *aggAcc) sum(arg arrow.Array, gids []uint32) error {
	if err := a.checkKind(arg); err != nil {
		return err
	}
	vb, voff := validityOf(arg)
	switch a.k {
	case kInt64:
		if sumI64(a.i64, a.has, gids, values[int64](arg), vb, voff) {
			if a.dec {
				return fmt.Errorf("%w: SUM exceeds the 64-bit decimal range", plan.ErrDecimalOverflow)
			}
			return fmt.Errorf("%w: SUM exceeds int64", ErrIntegerOverflow)
		}
	case kFloat64:
		sumF64(a.f64, a.has, gids, values[float64](arg), vb, voff)
	case kDec128:
		if layoutOf(arg) == kInt64 {
			sumNarrowWide(a.w, a.has, gids, values[int64](arg), vb, voff)
		} else if sumWide(a.w, a.has, gids, values[decimal128.Num](arg), vb, voff) {
			return fmt.Errorf("%w: SUM exceeds the 128-bit decimal range", plan.ErrDecimalOverflow)
		}
	default:
		return fmt.Errorf("SUM over %s", arg.DataType())
	}
	return nil
}

// sumI64 adds x into sums by group; it reports int64 overflow.
func sumI64(sums []int64, has []bool, gids []uint32, x []int64, vb []byte, voff int) bool {
	var ovf int64
	if gids == nil {
		var s int64
		any := false
		if vb == nil {
			for _, v := range x {
				t := s + v
				ovf |= (s ^ t) & (v ^ t)
				s = t
			}
			any = len(x) > 0
		} else {
			for i, v := range x {
				if bit(vb, voff+i) {
					t := s + v
					ovf |= (s ^ t) & (v ^ t)
					s = t
					any = true
				}
			}
		}
		o := sums[0]
		t := o + s
		ovf |= (o ^ t) & (s ^ t)
		sums[0] = t
		has[0] = has[0] || any
		return ovf < 0
	}
	if vb == nil {
		for i, g := range gids {
			v := x[i]
			o := sums[g]
			t := o + v
			ovf |= (o ^ t) & (v ^ t)
			sums[g] = t
			has[g] = true
		}
		return ovf < 0
	}
	for i, g := range gids {
		if bit(vb, voff+i) {
			v := x[i]
			o := sums[g]
			t := o + v
			ovf |= (o ^ t) & (v ^ t)
			sums[g] = t
			has[g] = true
		}
	}
	return ovf < 0
}

func sumF64(sums []float64, has []bool, gids []uint32, x []float64, vb []byte, voff int) {
	if gids == nil {
		var s float64
		any := false
		for i, v := range x {
			if isValid(vb, voff, i) {
				s += v
				any = true
			}
		}
		sums[0] += s
		has[0] = has[0] || any
		return
	}
	for i, g := range gids {
		if isValid(vb, voff, i) {
			sums[g] += x[i]
			has[g] = true
		}
	}
}

func (a *aggAcc) minMax(arg arrow.Array, gids []uint32, isMax bool) error {
	if err := a.checkKind(arg); err != nil {
		return err
	}
	vb, voff := validityOf(arg)
	switch a.k {
	case kInt64:
		minMaxFixed(a.i64, a.has, gids, values[int64](arg), vb, voff, isMax)
	case kFloat64:
		minMaxFixed(a.f64, a.has, gids, values[float64](arg), vb, voff, isMax)
	case kDate:
		minMaxFixed(a.i32, a.has, gids, values[int32](arg), vb, voff, isMax)
	case kDec128:
		minMaxWide(a.w, a.has, gids, values[decimal128.Num](arg), vb, voff, isMax)
	case kBool:
		bs, off := bitsOf(arg)
		for i := 0; i < arg.Len(); i++ {
			if !isValid(vb, voff, i) {
				continue
			}
			g := uint32(0)
			if gids != nil {
				g = gids[i]
			}
			v := bit(bs, off+i)
			if !a.has[g] || (isMax && v && !a.bl[g]) || (!isMax && !v && a.bl[g]) {
				a.bl[g], a.has[g] = v, true
			}
		}
	case kString:
		offs, data := strOffsets(arg)
		for i := 0; i < arg.Len(); i++ {
			if !isValid(vb, voff, i) {
				continue
			}
			g := uint32(0)
			if gids != nil {
				g = gids[i]
			}
			s := data[offs[i]:offs[i+1]]
			if !a.has[g] || (isMax && string(s) > a.str[g]) || (!isMax && string(s) < a.str[g]) {
				a.strBytes += int64(len(s) - len(a.str[g]))
				a.str[g], a.has[g] = string(s), true
			}
		}
	default:
		return fmt.Errorf("MIN/MAX over %s", arg.DataType())
	}
	return nil
}

// above reports v > s in DuckDB's total order of floats, where NaN is the
// greatest value (v != v only for a NaN; never for integers).
func above[T int64 | float64 | int32](v, s T) bool { return v > s || (v != v && s == s) }

func minMaxFixed[T int64 | float64 | int32](st []T, has []bool, gids []uint32, x []T, vb []byte, voff int, isMax bool) {
	if gids == nil {
		g := 0
		for i, v := range x {
			if !isValid(vb, voff, i) {
				continue
			}
			if !has[g] || (isMax && above(v, st[g])) || (!isMax && above(st[g], v)) {
				st[g], has[g] = v, true
			}
		}
		return
	}
	if isMax {
		for i, g := range gids {
			v := x[i]
			if (!has[g] || above(v, st[g])) && isValid(vb, voff, i) {
				st[g], has[g] = v, true
			}
		}
		return
	}
	for i, g := range gids {
		v := x[i]
		if (!has[g] || above(st[g], v)) && isValid(vb, voff, i) {
			st[g], has[g] = v, true
		}
	}
}

// ---- output -----------------------------------------------------------------

// valueArray builds the value state of groups [lo, hi) with NULL where no
// value was seen.
func (a *aggAcc) valueArray(mem memory.Allocator, t arrow.DataType, lo, hi int) (arrow.Array, error) {
	n := hi - lo
	if a.k == kNull {
		return makeNulls(mem, t, n), nil
	}
	var valid *memory.Buffer
	allHave := true
	for _, h := range a.has[lo:hi] {
		if !h {
			allHave = false
			break
		}
	}
	if !allHave {
		var vb []byte
		valid, vb = newBitmap(mem, n)
		for i, h := range a.has[lo:hi] {
			if h {
				setBit(vb, i)
			}
		}
	}
	switch a.k {
	case kInt64:
		buf, out := newFixed[int64](mem, n)
		copy(out, a.i64[lo:hi])
		return makeArray(t, n, valid, buf), nil
	case kFloat64:
		buf, out := newFixed[float64](mem, n)
		copy(out, a.f64[lo:hi])
		return makeArray(t, n, valid, buf), nil
	case kDate:
		buf, out := newFixed[int32](mem, n)
		copy(out, a.i32[lo:hi])
		return makeArray(t, n, valid, buf), nil
	case kDec128:
		buf, out := newFixed[decimal128.Num](mem, n)
		copy(out, a.w[lo:hi])
		return makeArray(t, n, valid, buf), nil
	case kBool:
		buf, out := newBitmap(mem, n)
		for i, b := range a.bl[lo:hi] {
			if b {
				setBit(out, i)
			}
		}
		return makeArray(t, n, valid, buf), nil
	case kString:
		total := 0
		for _, s := range a.str[lo:hi] {
			total += len(s)
		}
		sb := newStrBuilder(mem, n, total)
		for _, s := range a.str[lo:hi] {
			sb.appendString(s)
		}
		return sb.finish(valid)
	}
	if valid != nil {
		valid.Release()
	}
	return nil, fmt.Errorf("unsupported state layout %s", a.k)
}

func countArray(mem memory.Allocator, cnt []int64) arrow.Array {
	buf, out := newFixed[int64](mem, len(cnt))
	copy(out, cnt)
	return makeArray(arrow.PrimitiveTypes.Int64, len(cnt), nil, buf)
}

// states builds the partial state columns of groups [lo, hi).
func (a *aggAcc) states(mem memory.Allocator, schema *arrow.Schema, col, lo, hi int) ([]arrow.Array, error) {
	if a.call.Func.IsVariance() {
		return a.varianceStates(mem, lo, hi), nil
	}
	if a.call.Func == plan.AggApproxCountDistinct {
		return []arrow.Array{a.hllStates(mem, lo, hi)}, nil
	}
	switch a.call.Func {
	case plan.AggCount, plan.AggCountStar:
		return []arrow.Array{countArray(mem, a.cnt[lo:hi])}, nil
	case plan.AggAvg:
		s, err := a.valueArray(mem, schema.Field(col).Type, lo, hi)
		if err != nil {
			return nil, err
		}
		return []arrow.Array{s, countArray(mem, a.cnt[lo:hi])}, nil
	}
	s, err := a.valueArray(mem, schema.Field(col).Type, lo, hi)
	if err != nil {
		return nil, err
	}
	return []arrow.Array{s}, nil
}

// result builds the final values of groups [lo, hi).
func (a *aggAcc) result(mem memory.Allocator, t arrow.DataType, lo, hi int) (arrow.Array, error) {
	n := hi - lo
	if a.call.Func.IsVariance() {
		return a.varianceResult(mem, lo, hi), nil
	}
	if a.call.Func.Holistic() {
		return a.holisticResult(mem, lo, hi), nil
	}
	if a.call.Func == plan.AggApproxCountDistinct {
		return a.hllResult(mem, lo, hi), nil
	}
	switch a.call.Func {
	case plan.AggCount, plan.AggCountStar, plan.AggCountDistinct:
		return countArray(mem, a.cnt[lo:hi]), nil
	case plan.AggSum:
		if a.k == kDec128 {
			for g := lo; g < hi; g++ {
				if v := a.w[g]; a.has[g] && !fitsDigits(v, plan.MaxDecimalPrecision) {
					return nil, fmt.Errorf("%w: SUM %s does not fit %s", plan.ErrDecimalOverflow, formatDec128(v, a.scale), t)
				}
			}
		} else if a.dec {
			for g := lo; g < hi; g++ {
				if v := a.i64[g]; a.has[g] && (v > maxDecimal || v < -maxDecimal) {
					return nil, fmt.Errorf("%w: SUM %s does not fit %s", plan.ErrDecimalOverflow, plan.FormatDecimal(v, a.scale), t)
				}
			}
		}
		return a.valueArray(mem, t, lo, hi)
	case plan.AggMin, plan.AggMax:
		return a.valueArray(mem, t, lo, hi)
	case plan.AggAvg:
		vbuf, valid := newBitmap(mem, n)
		buf, out := newFixed[float64](mem, n)
		div := 1.0
		if a.dec {
			div = float64(plan.Pow10[a.scale])
		}
		for i := 0; i < n; i++ {
			g := lo + i
			c := a.cnt[g]
			if c == 0 || a.k == kNull {
				continue
			}
			setBit(valid, i)
			switch a.k {
			case kInt64:
				out[i] = avgInt(a.i64[g], c, div)
			case kFloat64:
				out[i] = a.f64[g] / float64(c)
			case kDec128:
				out[i] = avgWide(a.w[g], c, a.scale)
			}
		}
		return makeArray(arrow.PrimitiveTypes.Float64, n, vbuf, buf), nil
	}
	return nil, fmt.Errorf("unsupported aggregate function %q", a.call.Func)
}

// avgInt divides an exact integer sum (unscaled by div) by a count with one
// rounding where possible: the integral quotient and the remainder are
// converted separately, so large sums keep their precision.
func avgInt(sum, cnt int64, div float64) float64 {
	q, r := sum/cnt, sum%cnt
	v := float64(q) + float64(r)/float64(cnt)
	if div != 1 {
		v /= div
	}
	if math.IsInf(v, 0) {
		return float64(sum) / float64(cnt) / div
	}
	return v
}

// countDistinct inserts the (group, value) pairs of a batch into the
// distinct table and counts, per group, the new pairs whose value is not
// NULL (gids nil: all rows are group 0).
func (a *aggAcc) countDistinct(arg arrow.Array, gids []uint32, mem memory.Allocator) error {
	if a.distinct == nil {
		return nil // NULL-typed argument: nothing to count
	}
	if k := layoutOf(arg); k != a.dkind {
		return fmt.Errorf("input of type %s, plan says %s", arg.DataType(), a.call.Arg.Type)
	}
	n := arg.Len()
	buf, g := newFixed[int64](mem, n)
	if gids == nil {
		clear(g)
	} else {
		for i, x := range gids {
			g[i] = int64(x)
		}
	}
	garr := makeArray(arrow.PrimitiveTypes.Int64, n, nil, buf)
	defer garr.Release()
	prev := a.distinct.ngroups
	pids, err := a.distinct.insert([]arrow.Array{garr, arg}, n)
	if err != nil {
		return err
	}
	fresh := a.distinct.ngroups - prev
	if fresh == 0 {
		return nil
	}
	a.dseen = growTo(a.dseen[:0], fresh)
	clear(a.dseen)
	vb, voff := validityOf(arg)
	for i, p := range pids {
		if int(p) < prev || a.dseen[int(p)-prev] {
			continue
		}
		a.dseen[int(p)-prev] = true
		if isValid(vb, voff, i) {
			a.cnt[g[i]]++
		}
	}
	return nil
}
