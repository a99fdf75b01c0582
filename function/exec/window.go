package exec

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// windowOp evaluates window functions (plan.KindWindow). Its input holds
// every row of each window partition it sees (the planner hashes on the
// partition keys first). It sorts the input by the partition keys, then
// the ORDER BY keys (stably, with the sort operator), holds the sorted rows
// as one record, finds partition and peer boundaries, and computes each
// call over the whole record: ranks from the boundaries, offsets as
// gathers, and frame aggregates from each row's frame [lo, hi) with prefix
// counts and a segment tree (sum, min, max), so every frame costs
// O(log n) whatever its width. Over its memory budget it computes the
// complete partitions it holds and goes on (fill); a partition larger
// than the budget (the only one without PARTITION BY) is streamed in
// chunks with a carry, or in two passes over a spill file for the calls
// that need its size or its end (window_stream.go), so it holds about
// one budget of rows. Calls that can do neither are SL104 naming them.
type windowOp struct {
	in     Operator
	w      *plan.Window
	schema *arrow.Schema
	opts   Options
	res    *reservation

	buf     []arrow.RecordBatch // sorted input held, not yet computed
	held    int64               // its bytes
	out     arrow.RecordBatch   // computed, being emitted
	outq    []arrow.RecordBatch // computed, to emit after out
	emitted int
	inDone  bool // the input ended
	done    bool // everything is computed

	big      *bigPartition // the partition being streamed, nil when none
	streamed int64         // rows computed by streaming (tests)
	// forceStream streams every partition as if it were over the budget
	// (tests).
	forceStream bool
}

// NewWindow evaluates n.Window over in.
func NewWindow(in Operator, n *plan.Node, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	w := n.Window
	if w == nil {
		return nil, fmt.Errorf("exec: window: node has no window")
	}
	nin := len(n.Schema) - len(w.Calls)
	if nin < 0 || in.Schema().NumFields() != nin {
		return nil, fmt.Errorf("exec: window: input has %d columns, schema wants %d", in.Schema().NumFields(), nin)
	}
	for _, c := range w.Calls {
		lo, hi := windowArgs(c.Func)
		if len(c.Args) < lo || len(c.Args) > hi {
			return nil, fmt.Errorf("exec: window: %s has %d arguments, want %d to %d", c.Func, len(c.Args), lo, hi)
		}
	}
	var keys []plan.SortKey
	for _, p := range w.PartitionBy {
		keys = append(keys, plan.SortKey{Expr: p})
	}
	keys = append(keys, w.OrderBy...)
	if len(keys) > 0 {
		s, err := NewSort(in, &plan.Node{Kind: plan.KindSort, Schema: n.Schema[:nin], SortKeys: keys, Limit: -1}, opts)
		if err != nil {
			return nil, fmt.Errorf("exec: window: %w", err)
		}
		in = s
	}
	return &windowOp{in: in, w: w, schema: n.Schema.Arrow(), opts: opts, res: opts.Pool.reserve("window")}, nil
}

func (o *windowOp) Schema() *arrow.Schema { return o.schema }

func (o *windowOp) Close() error {
	if o.out != nil {
		o.out.Release()
		o.out = nil
	}
	for _, r := range o.outq {
		r.Release()
	}
	o.outq = nil
	o.closeBig()
	o.releaseBuf()
	o.res.release()
	return o.in.Close()
}

func (o *windowOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if o.out != nil && o.emitted < int(o.out.NumRows()) {
			lo := o.emitted
			hi := min(int(o.out.NumRows()), lo+o.opts.BatchRows)
			o.emitted = hi
			return o.out.NewSlice(int64(lo), int64(hi)), nil
		}
		if o.out != nil {
			o.out.Release()
			o.out, o.emitted = nil, 0
		}
		if len(o.outq) > 0 {
			o.out, o.outq = o.outq[0], o.outq[1:]
			continue
		}
		if o.done {
			o.res.release()
			return nil, io.EOF
		}
		if err := o.fill(ctx); err != nil {
			return nil, err
		}
	}
}

// fill reads the sorted input until it can compute a piece of the output
// (o.outq): at the end of the input, everything held; before, when what
// it holds outgrows the budget, the complete partitions held (every row
// but the last partition's, which may go on in the next batch). When the
// rows held are all of one partition (always so without PARTITION BY),
// that partition is streamed (bigPartition, window_stream.go): memory
// holds the rows of about one budget, never one whole partition.
func (o *windowOp) fill(ctx context.Context) error {
	mem := o.opts.Mem
	for len(o.outq) == 0 && !o.done {
		if err := ctx.Err(); err != nil {
			return err
		}
		if o.big != nil {
			if err := o.stepBig(ctx); err != nil {
				return err
			}
			continue
		}
		if o.inDone {
			o.done = true
			if o.held == 0 {
				o.releaseBuf()
				return nil
			}
			rec, err := o.takeBuf()
			if err != nil {
				return err
			}
			defer rec.Release()
			out, err := o.compute(rec)
			o.emit(out)
			return err
		}
		b, err := o.in.Next(ctx)
		if err == io.EOF {
			o.inDone = true
			continue
		}
		if err != nil {
			return err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		o.buf = append(o.buf, b)
		o.held += bytesOf(b)
		// Computing needs about twice the rows held (their copy into one
		// record, then the output beside it): past a quarter of what fits,
		// compute.
		if o.res.fits(4*o.held) && !o.forceStream {
			if err := o.res.set(2 * o.held); err != nil {
				return err
			}
			continue
		}
		// Over the budget: compute the complete partitions held.
		rec, err := o.takeBuf()
		if err != nil {
			return err
		}
		f, err := o.frames(rec)
		if err != nil {
			rec.Release()
			return fmt.Errorf("exec: window: %w", err)
		}
		n := int(rec.NumRows())
		cut := int(f.ps[n-1]) // where the last partition starts
		if cut == 0 {
			// One partition so far, larger than the budget: stream it.
			if err := o.startBig(ctx, rec); err != nil {
				return err
			}
			continue
		}
		head, err := copyRows(mem, rec, 0, cut)
		if err != nil {
			rec.Release()
			return err
		}
		tail, err := copyRows(mem, rec, cut, n)
		rec.Release()
		if err != nil {
			head.Release()
			return err
		}
		o.buf, o.held = []arrow.RecordBatch{tail}, bytesOf(tail)
		out, err := o.compute(head)
		head.Release()
		o.emit(out)
		if err != nil {
			return err
		}
		// The output holds the head's columns and the calls'.
		return o.res.set(o.held + bytesOf(out))
	}
	return nil
}

// emit queues a computed record (nil: nothing).
func (o *windowOp) emit(rec arrow.RecordBatch) {
	if rec != nil && rec.NumRows() > 0 {
		o.outq = append(o.outq, rec)
	} else if rec != nil {
		rec.Release()
	}
}

// takeBuf concatenates the batches held into one record and empties the
// buffer (the caller releases the record).
func (o *windowOp) takeBuf() (arrow.RecordBatch, error) {
	defer o.releaseBuf()
	return o.concat(o.buf)
}

func (o *windowOp) releaseBuf() {
	for _, b := range o.buf {
		b.Release()
	}
	o.buf, o.held = nil, 0
}

// copyRows copies rows [lo, hi) of rec into fresh arrays (a slice would
// keep, and count, the whole of rec's buffers).
func copyRows(mem memory.Allocator, rec arrow.RecordBatch, lo, hi int) (arrow.RecordBatch, error) {
	sl := rec.NewSlice(int64(lo), int64(hi))
	defer sl.Release()
	cols := make([]arrow.Array, sl.NumCols())
	for i, c := range sl.Columns() {
		cc, err := array.Concatenate([]arrow.Array{c}, mem)
		if err != nil {
			releaseAll(cols)
			return nil, fmt.Errorf("exec: window: %w", err)
		}
		cols[i] = cc
	}
	out := array.NewRecordBatch(sl.Schema(), cols, int64(hi-lo))
	releaseAll(cols)
	return out, nil
}

// compute evaluates the calls over rec, whole partitions sorted, and
// returns the output record (rec's columns and the calls').
func (o *windowOp) compute(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	mem := o.opts.Mem
	n := int(rec.NumRows())
	nin := int(rec.NumCols())
	f, err := o.frames(rec)
	if err != nil {
		return nil, fmt.Errorf("exec: window: %w", err)
	}
	out := make([]arrow.Array, 0, o.schema.NumFields())
	for c := 0; c < nin; c++ {
		a := rec.Column(c)
		a.Retain()
		out = append(out, a)
	}
	for i, call := range o.w.Calls {
		a, err := o.eval(call, rec, f, o.schema.Field(nin+i).Type)
		if err != nil {
			releaseAll(out)
			return nil, fmt.Errorf("exec: window: %s: %w", call.Func, err)
		}
		out = append(out, a)
	}
	res, err := conformRecord(mem, o.schema, out, n)
	if err != nil {
		return nil, fmt.Errorf("exec: window: %w", err)
	}
	return res, nil
}

// partitions are the boundaries of the sorted rows: for row i, its window
// partition is [ps[i], pe[i]) and its peers (equal ORDER BY keys) [qs[i],
// qe[i]). ord is the single ORDER BY key as float64 (negated when
// descending, so it never decreases within a partition) with its NULLs,
// for RANGE frames with offsets.
type partitions struct {
	n              int
	ps, pe, qs, qe []int32
	ord            []float64
	ordNull        []bool
	// gid is each row's peer group (numbered over all partitions), gs and
	// ge each group's first row and end: GROUPS frames count in them.
	gid    []int32
	gs, ge []int32
}

func (o *windowOp) frames(rec arrow.RecordBatch) (*partitions, error) {
	mem := o.opts.Mem
	n := int(rec.NumRows())
	flat := func(keys []plan.SortKey) ([]*flatKey, error) {
		if len(keys) == 0 {
			return nil, nil
		}
		arrs := make([]arrow.Array, len(keys))
		defer releaseAll(arrs)
		for i, k := range keys {
			a, err := evalSortKey(k.Expr, rec, mem)
			if err != nil {
				return nil, err
			}
			arrs[i] = a
		}
		return (&sortOp{keys: keys}).flatten([][]arrow.Array{arrs})
	}
	var pkeys []plan.SortKey
	for _, p := range o.w.PartitionBy {
		pkeys = append(pkeys, plan.SortKey{Expr: p})
	}
	pf, err := flat(pkeys)
	if err != nil {
		return nil, err
	}
	of, err := flat(o.w.OrderBy)
	if err != nil {
		return nil, err
	}
	p := &partitions{n: n, ps: make([]int32, n), pe: make([]int32, n), qs: make([]int32, n), qe: make([]int32, n)}
	for i := 0; i < n; i++ {
		newPart := i == 0 || compareRows(pf, int32(i-1), int32(i)) != 0
		switch {
		case newPart:
			p.ps[i], p.qs[i] = int32(i), int32(i)
		case compareRows(of, int32(i-1), int32(i)) != 0:
			p.ps[i], p.qs[i] = p.ps[i-1], int32(i)
		default:
			p.ps[i], p.qs[i] = p.ps[i-1], p.qs[i-1]
		}
	}
	p.gid = make([]int32, n)
	for i := 0; i < n; i++ {
		if i == int(p.qs[i]) {
			p.gs = append(p.gs, int32(i))
		}
		p.gid[i] = int32(len(p.gs) - 1)
	}
	for i := n - 1; i >= 0; i-- {
		if i == n-1 || p.ps[i+1] != p.ps[i] {
			p.pe[i] = int32(i + 1)
		} else {
			p.pe[i] = p.pe[i+1]
		}
		if i == n-1 || p.qs[i+1] != p.qs[i] {
			p.qe[i] = int32(i + 1)
		} else {
			p.qe[i] = p.qe[i+1]
		}
	}
	p.ge = make([]int32, len(p.gs))
	for g, s := range p.gs {
		p.ge[g] = p.qe[s]
	}
	if len(o.w.OrderBy) == 1 && len(of) == 1 {
		k := of[0]
		p.ord = make([]float64, n)
		p.ordNull = k.null
		scale := 1.0
		if t := o.w.OrderBy[0].Expr.Type; t.ID == plan.Decimal {
			scale = math.Pow10(int(t.Scale))
		}
		for i := 0; i < n; i++ {
			var v float64
			switch k.k {
			case kInt64:
				v = float64(k.i64[i]) / scale
			case kFloat64:
				v = k.f64[i]
			case kDate:
				v = float64(k.i32[i])
			}
			if k.desc {
				v = -v
			}
			p.ord[i] = v
		}
	}
	return p, nil
}

// frameSet is a frame's rows: up to three disjoint row ranges [lo, hi)
// in row order (a frame's bounds less what EXCLUDE leaves out).
type frameSet struct {
	r [3][2]int
	k int
}

func (f *frameSet) add(lo, hi int) {
	if hi > lo {
		f.r[f.k] = [2]int{lo, hi}
		f.k++
	}
}

// size is the number of rows in the frame.
func (f frameSet) size() int {
	n := 0
	for _, r := range f.r[:f.k] {
		n += r[1] - r[0]
	}
	return n
}

// at is the frame's k-th row (0-based), -1 past its end.
func (f frameSet) at(k int) int {
	for _, r := range f.r[:f.k] {
		if k < r[1]-r[0] {
			return r[0] + k
		}
		k -= r[1] - r[0]
	}
	return -1
}

// last is the frame's last row, -1 when it is empty.
func (f frameSet) last() int {
	if f.k == 0 {
		return -1
	}
	return f.r[f.k-1][1] - 1
}

// queryFrame combines the tree's leaves over the frame's ranges.
func queryFrame[T any](t *segTree[T], f frameSet) T {
	res := t.zero
	for _, r := range f.r[:f.k] {
		res = t.comb(res, t.query(r[0], r[1]))
	}
	return res
}

// rows returns row i's frame: its bounds' range less what fr.Exclude
// leaves out (the row, its peers, or its peers but itself).
func (p *partitions) rows(fr plan.Frame, i int) frameSet {
	lo, hi := p.frame(fr, i)
	var f frameSet
	cut := func(a, b int) { // [lo, hi) less [a, b), the row i between when TIES
		f.add(lo, min(hi, a))
		if fr.Exclude == plan.ExcludeTies && i >= lo && i < hi {
			f.add(i, i+1)
		}
		f.add(max(lo, b), hi)
	}
	switch fr.Exclude {
	case plan.ExcludeCurrentRow:
		cut(i, i+1)
	case plan.ExcludeGroup, plan.ExcludeTies:
		cut(int(p.qs[i]), int(p.qe[i]))
	default:
		f.add(lo, hi)
	}
	return f
}

// frame returns the range [lo, hi) row i's frame bounds span (hi <= lo:
// empty), before any EXCLUDE.
func (p *partitions) frame(fr plan.Frame, i int) (int, int) {
	ps, pe := int(p.ps[i]), int(p.pe[i])
	switch fr.Mode {
	case plan.FrameRange:
		return p.rangeBound(fr.Start, i, true), p.rangeBound(fr.End, i, false)
	case plan.FrameGroups:
		return p.groupBound(fr.Start, i, true), p.groupBound(fr.End, i, false)
	}
	bound := func(b plan.FrameBound, start bool) int {
		var at int
		switch b.Kind {
		case plan.BoundUnboundedPreceding:
			at = ps
		case plan.BoundUnboundedFollowing:
			at = pe
		case plan.BoundCurrentRow:
			at = i
		case plan.BoundPreceding:
			at = i - int(b.Offset)
		case plan.BoundFollowing:
			at = i + int(b.Offset)
		}
		if !start && b.Kind != plan.BoundUnboundedFollowing && b.Kind != plan.BoundUnboundedPreceding {
			at++ // the end bound's row is in the frame
		}
		return min(max(at, ps), pe)
	}
	return bound(fr.Start, true), bound(fr.End, false)
}

// fixedBound is the frame end b of row i when it does not depend on the
// frame mode: UNBOUNDED is the partition's edge, CURRENT ROW the edge of
// the row's peer group (GROUPS and RANGE frames); ok is false for an
// offset bound.
func (p *partitions) fixedBound(b plan.FrameBound, i int, start bool) (at int, ok bool) {
	switch b.Kind {
	case plan.BoundUnboundedPreceding:
		return int(p.ps[i]), true
	case plan.BoundUnboundedFollowing:
		return int(p.pe[i]), true
	case plan.BoundCurrentRow:
		if start {
			return int(p.qs[i]), true
		}
		return int(p.qe[i]), true
	}
	return 0, false
}

// groupBound is one end of a GROUPS frame: CURRENT ROW is the edge of the
// row's peer group, an offset counts peer groups within the partition.
func (p *partitions) groupBound(b plan.FrameBound, i int, start bool) int {
	if at, ok := p.fixedBound(b, i, start); ok {
		return at
	}
	ps, pe := int(p.ps[i]), int(p.pe[i])
	g, off := int(p.gid[i]), int(b.Offset)
	if b.Kind == plan.BoundPreceding {
		g -= off
	} else {
		g += off
	}
	switch {
	case g < int(p.gid[ps]):
		return ps
	case g > int(p.gid[pe-1]):
		return pe
	case start:
		return int(p.gs[g])
	}
	return int(p.ge[g])
}

// rangeBound is one end of a RANGE frame: CURRENT ROW is the edge of the
// row's peers; an offset is a distance in the ORDER BY key's value, found
// by binary search among the partition's non-NULL keys (a NULL key's frame
// offsets reach exactly its NULL peers).
func (p *partitions) rangeBound(b plan.FrameBound, i int, start bool) int {
	if at, ok := p.fixedBound(b, i, start); ok {
		return at
	}
	ps, pe := int(p.ps[i]), int(p.pe[i])
	if p.ord == nil || (p.ordNull != nil && p.ordNull[i]) {
		if start {
			return int(p.qs[i])
		}
		return int(p.qe[i])
	}
	// The non-NULL keys of the partition: NULLs sort at one end.
	lo, hi := ps, pe
	if p.ordNull != nil {
		for lo < hi && p.ordNull[lo] {
			lo++
		}
		for hi > lo && p.ordNull[hi-1] {
			hi--
		}
	}
	x := p.ord[i] - b.Offset
	if b.Kind == plan.BoundFollowing {
		x = p.ord[i] + b.Offset
	}
	// start: first key >= x; end: first key > x.
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p.ord[m] < x || !start && p.ord[m] == x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// eval computes one call over all rows.
func (o *windowOp) eval(call plan.WindowCall, rec arrow.RecordBatch, p *partitions, t arrow.DataType) (arrow.Array, error) {
	mem := o.opts.Mem
	n := p.n
	args := make([]arrow.Array, len(call.Args))
	defer releaseAll(args)
	for i, e := range call.Args {
		a, err := Eval(e, rec, mem)
		if err != nil {
			return nil, err
		}
		args[i] = a
	}
	ints := func(f func(i int) int64) arrow.Array {
		buf, v := newFixed[int64](mem, n)
		for i := range v {
			v[i] = f(i)
		}
		return makeArray(t, n, nil, buf)
	}
	floats := func(f func(i int) float64) arrow.Array {
		buf, v := newFixed[float64](mem, n)
		for i := range v {
			v[i] = f(i)
		}
		return makeArray(t, n, nil, buf)
	}
	switch call.Func {
	case plan.WinRowNumber:
		return ints(func(i int) int64 { return int64(i) - int64(p.ps[i]) + 1 }), nil
	case plan.WinRank:
		return ints(func(i int) int64 { return int64(p.qs[i]-p.ps[i]) + 1 }), nil
	case plan.WinDenseRank:
		var d int64
		return ints(func(i int) int64 {
			switch {
			case i == int(p.ps[i]):
				d = 1
			case i == int(p.qs[i]):
				d++
			}
			return d
		}), nil
	case plan.WinPercentRank:
		return floats(func(i int) float64 {
			size := p.pe[i] - p.ps[i]
			if size <= 1 {
				return 0
			}
			return float64(p.qs[i]-p.ps[i]) / float64(size-1)
		}), nil
	case plan.WinCumeDist:
		return floats(func(i int) float64 { return float64(p.qe[i]-p.ps[i]) / float64(p.pe[i]-p.ps[i]) }), nil
	case plan.WinNtile:
		return ntile(mem, t, p, args)
	case plan.WinLag, plan.WinLead:
		return lagLead(mem, t, call, p, args)
	case plan.WinFirstValue, plan.WinLastValue, plan.WinNthValue:
		idx := make([]int32, n)
		for i := range idx {
			f := p.rows(call.Frame, i)
			at := -1
			switch call.Func {
			case plan.WinFirstValue:
				at = f.at(0)
			case plan.WinLastValue:
				at = f.last()
			default:
				k, ok, err := constInt(args[1], i)
				if err != nil {
					return nil, err
				}
				if ok {
					if k <= 0 {
						return nil, fmt.Errorf("nth_value: n must be positive, got %d", k)
					}
					at = f.at(int(k) - 1)
				}
			}
			idx[i] = int32(at)
		}
		return takeNullable(mem, args[0], idx)
	}
	if call.Func.IsAggregate() {
		return frameAggregate(mem, t, call, p, args)
	}
	return nil, fmt.Errorf("unknown window function %q", call.Func)
}

// constInt reads an int64 argument at row i (ok false when NULL).
func constInt(a arrow.Array, i int) (int64, bool, error) {
	if layoutOf(a) != kInt64 || a.DataType().ID() != arrow.INT64 {
		if layoutOf(a) == kNull {
			return 0, false, nil
		}
		return 0, false, fmt.Errorf("argument of type %s, want int64", a.DataType())
	}
	if a.IsNull(i) {
		return 0, false, nil
	}
	return values[int64](a)[i], true, nil
}

func ntile(mem memory.Allocator, t arrow.DataType, p *partitions, args []arrow.Array) (arrow.Array, error) {
	n := p.n
	buf, v := newFixed[int64](mem, n)
	valid, vb := newOnes(mem, n)
	for i := 0; i < n; i++ {
		k, ok, err := constInt(args[0], i)
		if err != nil {
			buf.Release()
			valid.Release()
			return nil, err
		}
		if !ok {
			clearBit(vb, i)
			continue
		}
		if k <= 0 {
			buf.Release()
			valid.Release()
			return nil, fmt.Errorf("ntile: the number of buckets must be positive, got %d", k)
		}
		size := int64(p.pe[i] - p.ps[i])
		r := int64(i) - int64(p.ps[i])
		per, extra := size/k, size%k
		switch {
		case per == 0:
			v[i] = r + 1
		case r < extra*(per+1):
			v[i] = r/(per+1) + 1
		default:
			v[i] = (r-extra*(per+1))/per + extra + 1
		}
	}
	return makeArray(t, n, valid, buf), nil
}

// lagLead is lag(x, off, default) / lead(...): x of the row off rows
// before (after) in the partition, else default (NULL without one); off
// may differ from row to row (a negative one looks the other way, a NULL
// one gives NULL).
func lagLead(mem memory.Allocator, t arrow.DataType, call plan.WindowCall, p *partitions, args []arrow.Array) (arrow.Array, error) {
	n := p.n
	x := args[0]
	var def arrow.Array
	if len(args) >= 3 {
		def = args[2]
	} else {
		def = makeNulls(mem, x.DataType(), n)
		defer def.Release()
	}
	if !arrow.TypeEqual(def.DataType(), x.DataType()) {
		if layoutOf(def) != kNull {
			return nil, fmt.Errorf("default of type %s for a value of type %s", def.DataType(), x.DataType())
		}
		def = makeNulls(mem, x.DataType(), n)
		defer def.Release()
	}
	bi := make([]int32, n)
	ri := make([]int32, n)
	for i := 0; i < n; i++ {
		off := int64(1)
		if len(args) >= 2 {
			k, ok, err := constInt(args[1], i)
			if err != nil {
				return nil, err
			}
			if !ok {
				bi[i], ri[i] = -1, 0 // a NULL offset yields NULL (DuckDB)
				continue
			}
			off = k
		}
		if call.Func == plan.WinLead {
			off = -off
		}
		j := int64(i) - off
		if j >= int64(p.ps[i]) && j < int64(p.pe[i]) {
			bi[i], ri[i] = 0, int32(j)
		} else {
			bi[i], ri[i] = 1, int32(i)
		}
	}
	return takeMulti(mem, x.DataType(), []arrow.Array{x, def}, bi, ri)
}

// windowArgs is the range of argument counts of f.
func windowArgs(f plan.WindowFunc) (lo, hi int) {
	switch f {
	case plan.WinNtile, plan.WinFirstValue, plan.WinLastValue:
		return 1, 1
	case plan.WinNthValue:
		return 2, 2
	case plan.WinLag, plan.WinLead:
		return 1, 3
	case plan.WindowFunc(plan.AggCountStar):
		return 0, 0
	}
	if f.IsAggregate() {
		return 1, 1
	}
	return 0, 0
}
