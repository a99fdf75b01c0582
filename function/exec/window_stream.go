package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Window partitions larger than the budget (DataFusion's
// BoundedWindowAggExec, Spark's and DuckDB's streaming window). The
// sorted rows of such a partition go through a winStream in chunks (the
// sorted input's batches): each chunk is computed with the rows the calls
// need around it, and a carry from the chunks before.
//
//   - one pass: row_number, rank and dense_rank carry the peer group's
//     start and the dense counter; lag/lead with a constant offset and
//     frames of ROWS offsets (k PRECEDING .. m FOLLOWING, CURRENT ROW)
//     are computed over the chunk with k rows kept from the chunk before
//     and m rows of look-ahead held back; aggregates (count, sum, avg,
//     min, max) and first/nth_value over frames from UNBOUNDED PRECEDING
//     carry a running state (runAgg); RANGE/GROUPS frames ending at the
//     CURRENT ROW hold the open peer group back until it is complete.
//   - two passes: ntile, percent_rank, cume_dist, and aggregates and
//     first/last/nth_value over the whole partition (last_value over any
//     frame to UNBOUNDED FOLLOWING), and count/sum/avg from a row to
//     UNBOUNDED FOLLOWING (the total less the prefix before the frame)
//     need the partition's size or totals: the partition is written to a
//     spill file of the pool while they are counted, then read back and
//     streamed. min/max from a row to UNBOUNDED FOLLOWING keep the min/max
//     of each block of the first pass (a batch of the spill file, read
//     back whole in the second) and combine the rows held with the suffix
//     of the blocks after them; count/sum/avg(DISTINCT x) over the whole
//     partition fold the distinct values of x, sorted by the sort
//     operator (which spills) over the spill file read once more.
//   - frames found among the rows held (dyn): RANGE and GROUPS offsets and
//     EXCLUDE GROUP/TIES compute each row's frame over the rows held as
//     in memory, once it ends before the last row held; the rows held go
//     back to the first pending row's frame start (a sliding window as
//     wide as the frame, SL104 when that is more than the budget).
//   - EXCLUDE CURRENT ROW/GROUP/TIES with an UNBOUNDED bound (skExclude,
//     window_exclude.go): count/sum/avg, min/max, first/last_value over
//     the frame less the excluded rows, at most three ranges of rows held
//     and two carries: the rows before the ones held folded into one (a
//     running state, the first or last row), the rows after them into
//     another (two passes: the totals less the rows before, the min/max
//     suffix of the spill file's blocks, the last row).
//   - lag/lead of an offset that is not a constant (skLagSort,
//     window_lag.go): two passes, the values fetched as a self-join
//     through the sort operator (pairs sorted by target, one read of the
//     spill file, sorted back by row) and read in step.
//   - peer groups of ties larger than the budget (window_peers.go): in a
//     two-pass stream the first pass finds the groups that go on past a
//     batch with their ends and the running aggregates there, so
//     cume_dist, count/sum/avg/min/max and first_value from UNBOUNDED
//     PRECEDING to the peers' end do not hold a group back; a one-pass stream held back by
//     such a group switches to two passes for the rest of the partition.
//
// What is left is SL104 naming the call and frame: nth_value of an n that
// is not constant or with EXCLUDE and an UNBOUNDED bound; a frame larger
// than the budget (RANGE/GROUPS offsets); a peer group larger than the
// budget that a call needs whole (nth/last_value to the peers' end,
// frames from CURRENT ROW in RANGE/GROUPS, EXCLUDE GROUP/TIES; and
// cume_dist and the running aggregates when one of these is in the same
// node).

// streamKind is how a call is computed over a streamed partition.
type streamKind int

const (
	skContext      streamKind = iota // evaluated over the chunk with rows around it
	skRowNumber                      // partition row number + 1
	skRank                           // the peer group's start + 1
	skDenseRank                      // peer groups so far
	skPercentRank                    // two passes: the partition's size
	skCumeDist                       // two passes, and the whole peer group
	skNtile                          // two passes: the partition's size
	skPrefix                         // a frame from UNBOUNDED PRECEDING: a running state
	skWhole                          // two passes: the whole partition's value
	skLastToEnd                      // two passes: last_value up to UNBOUNDED FOLLOWING
	skSuffix                         // two passes: count/sum/avg to UNBOUNDED FOLLOWING, total less a prefix
	skSuffixMinMax                   // two passes: min/max to UNBOUNDED FOLLOWING, from the blocks' summaries
	skExclude                        // EXCLUDE with an UNBOUNDED bound: carries before and after the rows held
	skLagSort                        // two passes: lag/lead of an offset not constant, values sorted by row (window_lag.go)
)

// streamCall is the plan of one call over a streamed partition.
type streamCall struct {
	kind        streamKind
	back, ahead int  // rows the call reads before and after a row
	peers       bool // a row needs its whole peer group in the chunk
	twoPass     bool
	// skPrefix: the frame ends with the row's peer group (peerEnd) or at
	// the row plus endOff (ROWS); skLastToEnd: it starts at the row plus
	// startOff (ROWS; 0 for a peer group's start, never empty).
	peerEnd  bool
	endOff   int
	startOff int
	nth      int64 // first_value 1, nth_value n
	// dyn: the frame's bounds (fr, EXCLUDE included) are found among the
	// rows held, as in memory: a row is computed once its frame ends
	// before the last row held (a frame to UNBOUNDED FOLLOWING: once it
	// starts need rows before it); the rows held go back to the frame
	// start of the first row not computed (from UNBOUNDED PRECEDING: to
	// its frame's last row and the rows not folded yet). RANGE and GROUPS
	// offsets, EXCLUDE GROUP and TIES.
	dyn  bool
	fr   plan.Frame
	need int
	// distinct: skWhole of count/sum/avg(DISTINCT x), folded from the
	// partition's values sorted (the sort operator over the spill file).
	distinct bool
	// blocks: the first pass keeps each block's min/max (skSuffixMinMax,
	// skExclude of min/max to UNBOUNDED FOLLOWING).
	blocks bool
	// bigPeers: a call that needs whole peer groups (peers) but can do
	// with the big groups' ends and values found in a first pass
	// (cume_dist, aggregates from UNBOUNDED PRECEDING to the peer group's
	// end): window_peers.go.
	bigPeers bool
}

// errNoStream is why a call cannot be streamed (wrapped with the call).
var errNoStream = errors.New("cannot be computed in chunks")

// streamPlan says how call is computed over a partition larger than the
// budget, or why it cannot be.
func (o *windowOp) streamPlan(call plan.WindowCall) (streamCall, error) {
	no := func(why string) (streamCall, error) {
		if why != "" {
			return streamCall{}, fmt.Errorf("%w (%s)", errNoStream, why)
		}
		return streamCall{}, errNoStream
	}
	switch call.Func {
	case plan.WinRowNumber:
		return streamCall{kind: skRowNumber}, nil
	case plan.WinRank:
		return streamCall{kind: skRank}, nil
	case plan.WinDenseRank:
		return streamCall{kind: skDenseRank}, nil
	case plan.WinPercentRank:
		return streamCall{kind: skPercentRank, twoPass: true}, nil
	case plan.WinCumeDist:
		return streamCall{kind: skCumeDist, twoPass: true, peers: true, bigPeers: true}, nil
	case plan.WinNtile:
		return streamCall{kind: skNtile, twoPass: true}, nil
	case plan.WinLag, plan.WinLead:
		off := int64(1)
		if len(call.Args) >= 2 {
			v, ok := literalInt(call.Args[1])
			if !ok {
				return streamCall{kind: skLagSort, twoPass: true}, nil
			}
			off = v
		}
		if call.Func == plan.WinLead {
			off = -off
		}
		if off >= 0 {
			return streamCall{kind: skContext, back: int(off)}, nil
		}
		return streamCall{kind: skContext, ahead: int(-off)}, nil
	}
	fn := call.Func
	switch fn {
	case plan.WinFirstValue, plan.WinLastValue, plan.WinNthValue:
	case plan.WindowFunc(plan.AggCountStar), plan.WindowFunc(plan.AggCount), plan.WindowFunc(plan.AggSum),
		plan.WindowFunc(plan.AggAvg), plan.WindowFunc(plan.AggMin), plan.WindowFunc(plan.AggMax):
	default:
		return no("")
	}
	nth := int64(1)
	if fn == plan.WinNthValue {
		v, ok := literalInt(call.Args[1])
		if !ok || v <= 0 {
			return no("n is not a positive constant")
		}
		nth = v
	}
	minMax := fn == plan.WindowFunc(plan.AggMin) || fn == plan.WindowFunc(plan.AggMax)
	fr := call.Frame
	if len(o.w.OrderBy) == 0 && fr.Mode != plan.FrameRows {
		// Without ORDER BY every row is a peer of every other: CURRENT
		// ROW is the partition's edge.
		if fr.Start.Kind == plan.BoundCurrentRow {
			fr.Start.Kind = plan.BoundUnboundedPreceding
		}
		if fr.End.Kind == plan.BoundCurrentRow {
			fr.End.Kind = plan.BoundUnboundedFollowing
		}
	}
	rowsOff := func(b plan.FrameBound) (int, bool) {
		if fr.Mode != plan.FrameRows {
			return 0, false
		}
		switch b.Kind {
		case plan.BoundCurrentRow:
			return 0, true
		case plan.BoundPreceding:
			return -int(b.Offset), true
		case plan.BoundFollowing:
			return int(b.Offset), true
		}
		return 0, false
	}
	peerBound := func(b plan.FrameBound) bool { return fr.Mode != plan.FrameRows && b.Kind == plan.BoundCurrentRow }
	up := fr.Start.Kind == plan.BoundUnboundedPreceding
	uf := fr.End.Kind == plan.BoundUnboundedFollowing
	if call.Distinct && !minMax {
		if up && uf && fr.Exclude == plan.ExcludeNoOthers && call.Func.IsAggregate() && len(call.Args) == 1 {
			return streamCall{kind: skWhole, twoPass: true, distinct: true}, nil
		}
		return no("DISTINCT")
	}
	so, sok := rowsOff(fr.Start)
	eo, eok := rowsOff(fr.End)
	switch {
	case fr.Exclude != plan.ExcludeNoOthers:
		if fr.Exclude == plan.ExcludeCurrentRow && sok && eok {
			return streamCall{kind: skContext, back: max(0, -so, -eo), ahead: max(0, so, eo)}, nil
		}
		if up || uf {
			// The frame less the excluded rows is [start, a) (the row for
			// TIES) [b, end): the rows before the ones held and after them
			// are each one carry (skExclude).
			if fn == plan.WinNthValue {
				return no("nth_value with EXCLUDE and an UNBOUNDED bound")
			}
			sc := streamCall{kind: skExclude, dyn: true, fr: fr, twoPass: uf, peers: fr.Exclude != plan.ExcludeCurrentRow, blocks: uf && minMax}
			if fn == plan.WinFirstValue && uf && fr.Exclude == plan.ExcludeCurrentRow {
				sc.ahead = 1 // the first row after the current one is held
			}
			return sc, nil
		}
	case up && uf:
		return streamCall{kind: skWhole, twoPass: true, nth: nth}, nil
	case up:
		if fn == plan.WinLastValue { // only the frame's end matters
			if eok {
				return streamCall{kind: skContext, back: max(0, -eo), ahead: max(0, eo)}, nil
			}
			if peerBound(fr.End) {
				return streamCall{kind: skContext, peers: true}, nil
			}
			break
		}
		if eok {
			return streamCall{kind: skPrefix, endOff: eo, back: max(0, -eo), ahead: max(0, eo), nth: nth}, nil
		}
		if peerBound(fr.End) {
			// first_value needs no more of the group than its first row.
			return streamCall{kind: skPrefix, peerEnd: true, peers: true, nth: nth, bigPeers: call.Func.IsAggregate() || nth == 1}, nil
		}
	case uf:
		switch fn {
		case plan.WindowFunc(plan.AggCountStar), plan.WindowFunc(plan.AggCount), plan.WindowFunc(plan.AggSum), plan.WindowFunc(plan.AggAvg):
			if sok {
				return streamCall{kind: skSuffix, twoPass: true, startOff: so, back: max(0, 1-so), ahead: max(0, so)}, nil
			}
			if peerBound(fr.Start) {
				return streamCall{kind: skSuffix, twoPass: true, peers: true, peerEnd: true}, nil
			}
		case plan.WinLastValue:
			if sok {
				return streamCall{kind: skLastToEnd, twoPass: true, startOff: so}, nil
			}
			if peerBound(fr.Start) {
				return streamCall{kind: skLastToEnd, twoPass: true}, nil
			}
		case plan.WinFirstValue, plan.WinNthValue:
			if sok {
				return streamCall{kind: skContext, back: max(0, -so), ahead: max(0, so) + int(nth) - 1}, nil
			}
		}
	default:
		if sok && eok {
			return streamCall{kind: skContext, back: max(0, -so, -eo), ahead: max(0, so, eo)}, nil
		}
		if peerBound(fr.Start) && peerBound(fr.End) {
			return streamCall{kind: skContext, peers: true}, nil
		}
	}
	// The frame's bounds among the rows held (RANGE and GROUPS offsets,
	// EXCLUDE): a sliding window as wide as the frame.
	dyn := streamCall{dyn: true, fr: fr}
	switch {
	case !up && !uf:
		dyn.kind = skContext
		return dyn, nil
	case up:
		switch {
		case fn == plan.WinLastValue:
			dyn.kind = skContext
		default:
			dyn.kind, dyn.nth = skPrefix, nth
		}
		return dyn, nil
	case uf:
		dyn.twoPass = true
		switch fn {
		case plan.WindowFunc(plan.AggCountStar), plan.WindowFunc(plan.AggCount), plan.WindowFunc(plan.AggSum), plan.WindowFunc(plan.AggAvg):
			dyn.kind = skSuffix
		case plan.WindowFunc(plan.AggMin), plan.WindowFunc(plan.AggMax):
			dyn.kind, dyn.blocks = skSuffixMinMax, true
		case plan.WinLastValue:
			dyn.kind = skLastToEnd
		default: // first_value, nth_value: the frame's nth row
			dyn.kind, dyn.twoPass, dyn.need = skContext, false, int(nth-1)
		}
		return dyn, nil
	}
	return no("")
}

// literalInt is the value of a constant int64 argument (0 for NULL: lag
// and lead then give NULL, nth_value is refused).
func literalInt(e *plan.Expr) (int64, bool) {
	if e == nil || e.Op != plan.OpLiteral || e.Value == nil {
		return 0, false
	}
	if e.Value.Null {
		return 0, true
	}
	if e.Type.ID != plan.Int64 {
		return 0, false
	}
	return e.Value.I, true
}

// streamError is SL104 for a window partition larger than the budget whose
// calls cannot all be streamed: it names the call and its frame.
func (o *windowOp) streamError(call plan.WindowCall, err error) error {
	what := string(call.Func)
	if call.Func.UsesFrame() {
		what += " OVER (" + call.Frame.String() + ")"
	}
	used := int64(0)
	limit := int64(0)
	if o.res != nil && o.res.p != nil {
		used, limit = o.res.p.used.Load(), o.res.p.limit
	}
	return &MemoryLimitError{Operator: "window", Limit: limit, Used: used,
		Reason: fmt.Sprintf("%s: a window partition larger than the budget, and %s %v", windowPartitionReason, what, err)}
}

// windowPartitionReason starts the reason of a window partition that does
// not fit (MemoryLimitError.Hint says to split it).
const windowPartitionReason = "window partition"

// winStream computes the calls over one window partition fed in sorted
// chunks (feed, then finish at the partition's end).
type winStream struct {
	o           *windowOp
	calls       []streamCall
	back, ahead int // the most any call needs (back at least 1: the row before)
	peers       bool
	twoPass     bool

	ctx  arrow.RecordBatch   // the last rows emitted (up to back)
	pend []arrow.RecordBatch // rows not emitted yet
	base int64               // partition row number of the first pending row

	total     int64 // two passes: the partition's rows
	peerStart int64 // partition row number where the current peer group starts
	dense     int64
	aggs      []*runAgg     // per call: skPrefix, skWhole, skSuffix aggregates
	tots      []*runAgg     // per call: skSuffix, the whole partition's
	folded    []int64       // per call: skPrefix, rows folded into aggs
	capt      []arrow.Array // per call: a value kept (1 row): first/nth/last row, whole aggregate
	c0        []arrow.Array // per call: skExclude of first/last_value, the value of the rows folded (1 row)
	lag       []*lagStream  // per call: skLagSort, the values sorted by row
	streamed  int64         // rows emitted
	// skSuffixMinMax: the first pass's blocks (the spill file's batches,
	// read back as they were written) start at these partition rows; per
	// call, each block's min/max (1 row each), then after the first pass
	// sfx: the min/max of blocks k.. at k (len(blocks)+1 rows, the last
	// NULL).
	blocks []int64
	bvals  [][]arrow.Array
	sfx    []arrow.Array
	// bigGroups: a two-pass stream whose calls that need whole peer
	// groups all do with the big groups of the first pass (window_peers.go).
	bigGroups *peerGroups
	// holder is the dyn call whose frame holds the most rows (the earliest
	// row kept or the earliest row not computed), -1 when none: the call
	// SL104 names.
	holder int
}

func (o *windowOp) newStream() (*winStream, error) {
	s := &winStream{o: o, back: 1, holder: -1, aggs: make([]*runAgg, len(o.w.Calls)), tots: make([]*runAgg, len(o.w.Calls)), folded: make([]int64, len(o.w.Calls)),
		capt: make([]arrow.Array, len(o.w.Calls)), c0: make([]arrow.Array, len(o.w.Calls)), lag: make([]*lagStream, len(o.w.Calls)), bvals: make([][]arrow.Array, len(o.w.Calls)), sfx: make([]arrow.Array, len(o.w.Calls))}
	nin := o.in.Schema().NumFields()
	peersWhole := false // a call needs whole peer groups held
	for i, call := range o.w.Calls {
		sc, err := o.streamPlan(call)
		if err != nil {
			return nil, o.streamError(call, err)
		}
		s.calls = append(s.calls, sc)
		s.back, s.ahead = max(s.back, sc.back), max(s.ahead, sc.ahead)
		s.peers = s.peers || sc.peers
		s.twoPass = s.twoPass || sc.twoPass
		peersWhole = peersWhole || sc.peers && !sc.bigPeers
		if call.Func.IsAggregate() && (sc.kind == skPrefix || sc.kind == skWhole || sc.kind == skSuffix || sc.kind == skSuffixMinMax || sc.kind == skExclude) {
			s.aggs[i] = newRunAgg(plan.AggFunc(call.Func), o.schema.Field(nin+i).Type)
		}
		if sc.kind == skSuffix || sc.kind == skExclude && sc.twoPass && call.Func.IsAggregate() && !sc.blocks {
			s.tots[i] = newRunAgg(plan.AggFunc(call.Func), o.schema.Field(nin+i).Type)
		}
	}
	if s.twoPass && s.peers && !peersWhole {
		s.bigGroups = s.newPeerGroups()
	}
	return s, nil
}

// heldBytes is what the stream holds between chunks.
func (s *winStream) heldBytes() int64 {
	n := int64(0)
	if s.ctx != nil {
		n += bytesOf(s.ctx)
	}
	for _, b := range s.pend {
		n += bytesOf(b)
	}
	for _, a := range append(s.capt, s.c0...) {
		if a != nil {
			n += arrayBytes(a)
		}
	}
	for i, a := range s.sfx {
		if a != nil {
			n += arrayBytes(a)
		}
		for _, b := range s.bvals[i] {
			n += arrayBytes(b)
		}
	}
	if s.bigGroups != nil {
		n += s.bigGroups.bytes()
	}
	return n + 8*int64(len(s.blocks))
}

func (s *winStream) release() {
	if s.ctx != nil {
		s.ctx.Release()
		s.ctx = nil
	}
	for _, b := range s.pend {
		b.Release()
	}
	s.pend = nil
	releaseAll(s.capt)
	releaseAll(s.c0)
	for _, l := range s.lag {
		if l != nil {
			l.release()
		}
	}
	releaseAll(s.sfx)
	for _, bs := range s.bvals {
		releaseAll(bs)
	}
	s.bvals = nil
	if s.bigGroups != nil {
		s.bigGroups.release()
	}
	for _, a := range s.aggs {
		if a != nil {
			a.release()
		}
	}
}

// keep replaces the value kept for call i by row r of x (copied).
func (s *winStream) keep(i int, x arrow.Array, r int) error {
	sl := array.NewSlice(x, int64(r), int64(r+1))
	defer sl.Release()
	c, err := array.Concatenate([]arrow.Array{sl}, s.o.opts.Mem)
	if err != nil {
		return err
	}
	if s.capt[i] != nil {
		s.capt[i].Release()
	}
	s.capt[i] = c
	return nil
}

// tally counts one chunk into the partition's totals (the first pass of
// two): its size, whole-partition aggregates, the first/nth and last rows.
func (s *winStream) tally(rec arrow.RecordBatch) error {
	o := s.o
	mem := o.opts.Mem
	n := int(rec.NumRows())
	for i, call := range o.w.Calls {
		sc := s.calls[i]
		if sc.kind != skWhole && sc.kind != skLastToEnd && sc.kind != skSuffix && sc.kind != skSuffixMinMax && sc.kind != skExclude ||
			sc.distinct || sc.kind == skExclude && (!sc.twoPass || call.Func == plan.WinFirstValue) {
			continue
		}
		var x arrow.Array
		if len(call.Args) > 0 {
			a, err := Eval(call.Args[0], rec, mem)
			if err != nil {
				return err
			}
			x = a
		}
		err := func() error {
			if x != nil {
				defer x.Release()
			}
			switch {
			case sc.blocks:
				b := newRunAgg(plan.AggFunc(call.Func), s.aggs[i].t)
				defer b.release()
				v, err := b.stepMinMax(mem, x, 0, []int{n})
				if err != nil {
					return err
				}
				s.bvals[i] = append(s.bvals[i], v)
			case s.tots[i] != nil:
				v, err := s.tots[i].step(mem, x, 0, []int{n}, nil)
				if err == nil {
					v.Release()
				}
				return err
			case sc.kind == skExclude && call.Func != plan.WinLastValue:
				// count(*): the partition's size
			case s.aggs[i] != nil:
				v, err := s.aggs[i].step(mem, x, 0, []int{n}, nil)
				if err != nil {
					return err
				}
				if s.capt[i] != nil {
					s.capt[i].Release()
				}
				s.capt[i] = v
			case call.Func == plan.WinLastValue:
				return s.keep(i, x, n-1)
			default: // first_value, nth_value
				if r := sc.nth - 1 - s.total; r >= 0 && r < int64(n) {
					return s.keep(i, x, int(r))
				}
			}
			return nil
		}()
		if err != nil {
			return fmt.Errorf("exec: window: %s: %w", call.Func, err)
		}
	}
	if s.bigGroups != nil {
		if err := s.tallyPeers(rec); err != nil {
			return fmt.Errorf("exec: window: %w", err)
		}
	}
	s.blocks = append(s.blocks, s.total)
	s.total += int64(n)
	return nil
}

// endTally ends the first pass: the suffixes of the blocks' min/max, and
// the DISTINCT aggregates, from the partition's values sorted (the sort
// operator, which spills as it must, over the spill file read once more).
func (s *winStream) endTally(ctx context.Context, spill *spillFile) error {
	o := s.o
	if s.bigGroups != nil {
		s.bigGroups.finish(s.total)
	}
	for i, call := range o.w.Calls {
		sc := s.calls[i]
		switch {
		case sc.blocks:
			if err := s.suffixBlocks(i); err != nil {
				return fmt.Errorf("exec: window: %s: %w", call.Func, err)
			}
		case sc.distinct:
			if err := s.distinctWhole(ctx, i, call, spill); err != nil {
				return fmt.Errorf("exec: window: %s(DISTINCT): %w", call.Func, err)
			}
		case sc.kind == skLagSort:
			if err := s.lagSort(ctx, i, call, spill); err != nil {
				return fmt.Errorf("exec: window: %s: %w", call.Func, err)
			}
		}
	}
	return nil
}

// suffixBlocks turns call i's blocks' min/max into their suffixes.
func (s *winStream) suffixBlocks(i int) error {
	mem := s.o.opts.Mem
	bs := s.bvals[i]
	s.bvals[i] = nil
	defer releaseAll(bs)
	t := s.aggs[i].t
	if len(bs) == 0 || layoutOf(bs[0]) == kNull {
		s.sfx[i] = makeNulls(mem, t, len(bs)+1)
		return nil
	}
	arr, err := array.Concatenate(bs, mem)
	if err != nil {
		return err
	}
	defer arr.Release()
	less, err := lessAt(arr)
	if err != nil {
		return err
	}
	vb, voff := validityOf(arr)
	isMax := plan.AggFunc(s.o.w.Calls[i].Func) == plan.AggMax
	idx := make([]int32, len(bs)+1)
	idx[len(bs)] = -1
	for k := len(bs) - 1; k >= 0; k-- {
		b, r := idx[k+1], int32(k)
		if isValid(vb, voff, k) && (b < 0 || !isMax && less(r, b) || isMax && less(b, r)) {
			b = r
		}
		idx[k] = b
	}
	s.sfx[i], err = takeNullable(mem, arr, idx)
	return err
}

// distinctWhole folds the distinct values of call i's argument over the
// whole partition (the spill file's rows) into its value kept.
func (s *winStream) distinctWhole(ctx context.Context, i int, call plan.WindowCall, spill *spillFile) error {
	o := s.o
	mem := o.opts.Mem
	src, err := spill.reread(mem)
	if err != nil {
		return err
	}
	x := call.Args[0]
	one := plan.Schema{{Name: "x", Type: x.Type, Nullable: true}}
	proj, err := NewProject(src, &plan.Node{Kind: plan.KindProject, Exprs: []*plan.Expr{x}, Schema: one}, o.opts)
	if err != nil {
		src.Close()
		return err
	}
	sorted, err := NewSort(proj, &plan.Node{Kind: plan.KindSort, Schema: one, SortKeys: []plan.SortKey{{Expr: plan.Column(0, "x", x.Type)}}, Limit: -1}, o.opts)
	if err != nil {
		proj.Close()
		return err
	}
	defer sorted.Close()
	agg := s.aggs[i]
	var prev arrow.Array // the last value of the batch before (1 row)
	defer func() {
		if prev != nil {
			prev.Release()
		}
	}()
	for {
		rec, err := sorted.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		n := int(rec.NumRows())
		if n == 0 {
			rec.Release()
			continue
		}
		err = func() error {
			defer rec.Release()
			col := rec.Column(0)
			var v arrow.Array
			if layoutOf(col) == kNull {
				v = col
				v.Retain()
			} else {
				// Each value once: NULL where a row equals the row before.
				arr, off := col, 0
				if prev != nil {
					c, err := array.Concatenate([]arrow.Array{prev, col}, mem)
					if err != nil {
						return err
					}
					defer c.Release()
					arr, off = c, 1
				}
				less, err := lessAt(arr)
				if err != nil {
					return err
				}
				vb, voff := validityOf(arr)
				idx := make([]int32, n)
				for j := range idx {
					r := int32(j + off)
					idx[j] = r
					if !isValid(vb, voff, int(r)) || r > 0 && isValid(vb, voff, int(r-1)) && !less(r-1, r) {
						idx[j] = -1
					}
				}
				if v, err = takeNullable(mem, arr, idx); err != nil {
					return err
				}
				if prev != nil {
					prev.Release()
				}
				prev = array.NewSlice(col, int64(n-1), int64(n))
				if c, err := array.Concatenate([]arrow.Array{prev}, mem); err == nil {
					prev.Release()
					prev = c
				} else {
					v.Release()
					return err
				}
			}
			defer v.Release()
			res, err := agg.step(mem, v, 0, []int{n}, nil)
			if err != nil {
				return err
			}
			if s.capt[i] != nil {
				s.capt[i].Release()
			}
			s.capt[i] = res
			return nil
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// process computes the pending rows it can (all of them at the end of
// the partition, eof) and returns them with the calls' columns, or nil.
func (s *winStream) process(ctx context.Context, eof bool) (arrow.RecordBatch, error) {
	o := s.o
	mem := o.opts.Mem
	if len(s.pend) == 0 {
		return nil, nil
	}
	parts := make([]arrow.RecordBatch, 0, len(s.pend)+1)
	if s.ctx != nil {
		parts = append(parts, s.ctx)
	}
	parts = append(parts, s.pend...)
	r, err := o.concat(parts)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	kc := 0
	if s.ctx != nil {
		kc = int(s.ctx.NumRows())
	}
	n := int(r.NumRows())
	f, err := o.frames(r)
	if err != nil {
		return nil, fmt.Errorf("exec: window: %w", err)
	}
	cut := n
	if !eof {
		cut = n - s.ahead
		if s.peers && s.bigGroups == nil && cut > 0 {
			// Whole peer groups only: cut at the start of the group the
			// first row held back is in (the last group may go on).
			cut = int(f.qs[min(cut, n-1)])
		}
		// A frame found among the rows held must end before the last of
		// them (or, to UNBOUNDED FOLLOWING, start before it).
		for ci, sc := range s.calls {
			if !sc.dyn {
				continue
			}
			for i := kc; i < cut; i++ {
				lo, hi := f.frame(sc.fr, i)
				if sc.fr.End.Kind != plan.BoundUnboundedFollowing && hi >= n ||
					sc.fr.End.Kind == plan.BoundUnboundedFollowing && lo+sc.need >= n {
					cut, s.holder = i, ci
					break
				}
			}
		}
		if s.peers && s.bigGroups == nil && cut > 0 && cut < n {
			cut = int(f.qs[cut])
		}
	}
	if cut <= kc {
		return nil, nil // wait for more rows
	}
	s.holder = -1
	m := cut - kc
	rstart := s.base - int64(kc) // partition row number of r's first row
	// Peer groups: each emitted row's group start and dense rank.
	pstart := make([]int64, m)
	dense := make([]int64, m)
	for i := kc; i < cut; i++ {
		g := rstart + int64(i)
		if g == 0 || f.qs[i] == int32(i) {
			if g == 0 {
				s.dense = 0
			}
			s.dense++
			s.peerStart = g
		}
		pstart[i-kc], dense[i-kc] = s.peerStart, s.dense
	}
	nin := int(r.NumCols())
	out := make([]arrow.Array, 0, o.schema.NumFields())
	for c := 0; c < nin; c++ {
		out = append(out, array.NewSlice(r.Column(c), int64(kc), int64(cut)))
	}
	for i, call := range o.w.Calls {
		a, err := s.column(ctx, i, call, r, f, kc, cut, rstart, pstart, dense)
		if err != nil {
			releaseAll(out)
			return nil, fmt.Errorf("exec: window: %s: %w", call.Func, err)
		}
		out = append(out, a)
	}
	res, err := conformRecord(mem, o.schema, out, m)
	if err != nil {
		return nil, fmt.Errorf("exec: window: %w", err)
	}
	// Keep the rows the next chunk looks back on, and those not emitted:
	// the rows before, and from the first row not emitted (the last one
	// emitted when none is left) back to its frame's start.
	keep := max(0, cut-s.back)
	for i, sc := range s.calls {
		if !sc.dyn {
			continue
		}
		lo, hi := f.frame(sc.fr, min(cut, n-1))
		k := keep
		switch {
		case sc.fr.Start.Kind != plan.BoundUnboundedPreceding:
			k = min(k, lo)
		case sc.fr.End.Kind != plan.BoundUnboundedFollowing:
			k = min(k, max(0, hi-1))
		}
		if s.aggs[i] != nil && (sc.kind == skPrefix || sc.kind == skSuffix) || sc.kind == skExclude {
			k = min(k, max(0, int(s.folded[i]-rstart)))
		}
		if k < keep || s.holder < 0 {
			keep, s.holder = k, i
		}
	}
	keep = min(keep, cut)
	if s.ctx != nil {
		s.ctx.Release()
		s.ctx = nil
	}
	for _, b := range s.pend {
		b.Release()
	}
	s.pend = nil
	if s.ctx, err = copyRows(mem, r, keep, cut); err != nil {
		res.Release()
		return nil, err
	}
	if cut < n {
		rest, err := copyRows(mem, r, cut, n)
		if err != nil {
			res.Release()
			return nil, err
		}
		s.pend = []arrow.RecordBatch{rest}
	}
	s.base += int64(m)
	s.streamed += int64(m)
	return res, nil
}

// column computes call i for rows [kc, cut) of r.
func (s *winStream) column(ctx context.Context, i int, call plan.WindowCall, r arrow.RecordBatch, f *partitions, kc, cut int, rstart int64,
	pstart, dense []int64) (arrow.Array, error) {
	o := s.o
	mem := o.opts.Mem
	sc := s.calls[i]
	t := o.schema.Field(int(r.NumCols()) + i).Type
	m := cut - kc
	ints := func(v func(j int) int64) arrow.Array {
		buf, out := newFixed[int64](mem, m)
		for j := range out {
			out[j] = v(j)
		}
		return makeArray(t, m, nil, buf)
	}
	floats := func(v func(j int) float64) arrow.Array {
		buf, out := newFixed[float64](mem, m)
		for j := range out {
			out[j] = v(j)
		}
		return makeArray(t, m, nil, buf)
	}
	// kept repeats the value kept for the call where ok, else NULL.
	kept := func(ok func(j int) bool) (arrow.Array, error) {
		if s.capt[i] == nil {
			return makeNulls(mem, t, m), nil
		}
		idx := make([]int32, m)
		for j := range idx {
			if !ok(j) {
				idx[j] = -1
			}
		}
		return takeNullable(mem, s.capt[i], idx)
	}
	switch sc.kind {
	case skContext:
		a, err := o.eval(call, r, f, t)
		if err != nil {
			return nil, err
		}
		defer a.Release()
		return array.NewSlice(a, int64(kc), int64(cut)), nil
	case skRowNumber:
		return ints(func(j int) int64 { return s.base + int64(j) + 1 }), nil
	case skRank:
		return ints(func(j int) int64 { return pstart[j] + 1 }), nil
	case skDenseRank:
		return ints(func(j int) int64 { return dense[j] }), nil
	case skPercentRank:
		return floats(func(j int) float64 {
			if s.total <= 1 {
				return 0
			}
			return float64(pstart[j]) / float64(s.total-1)
		}), nil
	case skCumeDist:
		return floats(func(j int) float64 { return float64(s.peerEnd(rstart, f, kc+j)) / float64(s.total) }), nil
	case skNtile:
		k, err := Eval(call.Args[0], r, mem)
		if err != nil {
			return nil, err
		}
		defer k.Release()
		buf, v := newFixed[int64](mem, m)
		valid, vb := newOnes(mem, m)
		for j := range v {
			kk, ok, err := constInt(k, kc+j)
			if err == nil && ok && kk <= 0 {
				err = fmt.Errorf("ntile: the number of buckets must be positive, got %d", kk)
			}
			if err != nil {
				buf.Release()
				valid.Release()
				return nil, err
			}
			if !ok {
				clearBit(vb, j)
				continue
			}
			size, row := s.total, s.base+int64(j)
			per, extra := size/kk, size%kk
			switch {
			case per == 0:
				v[j] = row + 1
			case row < extra*(per+1):
				v[j] = row/(per+1) + 1
			default:
				v[j] = (row-extra*(per+1))/per + extra + 1
			}
		}
		return makeArray(t, m, valid, buf), nil
	case skWhole:
		if s.aggs[i] != nil {
			return kept(func(int) bool { return true })
		}
		return kept(func(int) bool { return true }) // nothing kept: nth_value past the partition
	case skLastToEnd:
		if sc.dyn {
			return kept(func(j int) bool { lo, _ := f.frame(sc.fr, kc+j); return rstart+int64(lo) <= s.total-1 })
		}
		return kept(func(j int) bool { return s.base+int64(j)+int64(sc.startOff) <= s.total-1 })
	case skSuffixMinMax:
		return s.suffixMinMax(i, call, r, f, kc, cut, rstart)
	case skExclude:
		return s.excludeColumn(i, call, r, f, kc, cut, rstart)
	case skLagSort:
		return s.lagColumn(ctx, i, call, r, kc, cut, t)
	case skPrefix, skSuffix:
		n := int(r.NumRows())
		ends := make([]int, m) // each row's frame end in r (skSuffix: its start)
		for j := range ends {
			switch {
			case sc.dyn && sc.kind == skSuffix:
				ends[j], _ = f.frame(sc.fr, kc+j)
			case sc.dyn:
				_, ends[j] = f.frame(sc.fr, kc+j)
			case sc.kind == skSuffix && sc.peerEnd:
				ends[j] = int(f.qs[kc+j])
			case sc.kind == skSuffix:
				ends[j] = min(max(kc+j+sc.startOff, 0), n)
			case sc.peerEnd:
				ends[j] = int(f.qe[kc+j])
			default:
				ends[j] = min(max(kc+j+sc.endOff+1, 0), n)
			}
		}
		var x arrow.Array
		if len(call.Args) > 0 {
			a, err := Eval(call.Args[0], r, mem)
			if err != nil {
				return nil, err
			}
			defer a.Release()
			x = a
		}
		if s.aggs[i] == nil { // first_value, nth_value: the partition's nth row
			if s.capt[i] == nil {
				if row := sc.nth - 1 - rstart; row >= 0 && row < int64(n) {
					if err := s.keep(i, x, int(row)); err != nil {
						return nil, err
					}
				}
			}
			return kept(func(j int) bool { return rstart+int64(ends[j]) >= sc.nth })
		}
		if s.folded[i] < rstart {
			return nil, fmt.Errorf("internal: rows %d to %d are gone before they were folded", s.folded[i], rstart)
		}
		from := max(0, int(s.folded[i]-rstart))
		for j := range ends {
			ends[j] = max(ends[j], from)
			from = ends[j]
		}
		if sc.kind == skSuffix && sc.peerEnd {
			// Fold the emitted groups whole: the next chunk starts with a
			// group, and its rows' prefix ends there.
			ends = append(ends, cut)
		}
		// A suffix is the partition's total less the prefix before it.
		a, err := s.aggs[i].step(mem, x, max(0, int(s.folded[i]-rstart)), ends, s.tots[i])
		if err != nil {
			return nil, err
		}
		if len(ends) > m {
			s.folded[i] = rstart + int64(cut)
			defer a.Release()
			return array.NewSlice(a, 0, int64(m)), nil
		}
		s.folded[i] = rstart + int64(ends[m-1])
		if sc.bigPeers && s.bigGroups != nil {
			return s.bigGroups.substitute(mem, i, a, s.base)
		}
		return a, nil
	}
	return nil, fmt.Errorf("unknown stream kind %d", sc.kind)
}

// suffixMinMax is min/max from each row's frame start to the partition's
// end: over the rows held from the start to their end (a block boundary:
// the batches of the second pass are the first pass's blocks), then the
// blocks after, from their suffix kept.
func (s *winStream) suffixMinMax(i int, call plan.WindowCall, r arrow.RecordBatch, f *partitions, kc, cut int, rstart int64) (arrow.Array, error) {
	mem := s.o.opts.Mem
	sc := s.calls[i]
	n := int(r.NumRows())
	m := cut - kc
	end := rstart + int64(n)
	k := sort.Search(len(s.blocks), func(k int) bool { return s.blocks[k] >= end })
	if k < len(s.blocks) && s.blocks[k] != end || k == len(s.blocks) && end != s.total {
		return nil, fmt.Errorf("internal: rows held end at %d, not at a block's start", end)
	}
	x, err := Eval(call.Args[0], r, mem)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	sfx := array.NewSlice(s.sfx[i], int64(k), int64(k+1))
	defer sfx.Release()
	if layoutOf(x) == kNull {
		return takeNullable(mem, sfx, make([]int32, m))
	}
	arr, err := array.Concatenate([]arrow.Array{sfx, x}, mem)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	less, err := lessAt(arr)
	if err != nil {
		return nil, err
	}
	vb, voff := validityOf(arr)
	isMax := plan.AggFunc(call.Func) == plan.AggMax
	// best[p]: the best of rows p.. of r and the blocks after (arr's rows
	// p+1.. and 0), -1 when all are NULL.
	best := make([]int32, n+1)
	best[n] = -1
	if isValid(vb, voff, 0) {
		best[n] = 0
	}
	for p := n - 1; p >= 0; p-- {
		b, q := best[p+1], int32(p+1)
		if isValid(vb, voff, int(q)) && (b < 0 || !isMax && less(q, b) || isMax && less(b, q)) {
			b = q
		}
		best[p] = b
	}
	idx := make([]int32, m)
	for j := range idx {
		lo, _ := f.frame(sc.fr, kc+j)
		idx[j] = best[min(max(lo, 0), n)]
	}
	return takeNullable(mem, arr, idx)
}

// concat concatenates record batches of the input's schema into one.
func (o *windowOp) concat(parts []arrow.RecordBatch) (arrow.RecordBatch, error) {
	nin := o.in.Schema().NumFields()
	inSchema := arrow.NewSchema(o.schema.Fields()[:nin], nil)
	n := 0
	for _, b := range parts {
		n += int(b.NumRows())
	}
	cols := make([]arrow.Array, nin)
	for c := range cols {
		cs := make([]arrow.Array, 0, len(parts))
		for _, b := range parts {
			cs = append(cs, b.Column(c))
		}
		var err error
		if len(cs) == 1 {
			cs[0].Retain()
			cols[c] = cs[0]
		} else if cols[c], err = array.Concatenate(cs, o.opts.Mem); err != nil {
			releaseAll(cols)
			return nil, fmt.Errorf("exec: window: %w", err)
		}
	}
	rec, err := conformRecord(o.opts.Mem, inSchema, cols, n)
	if err != nil {
		return nil, fmt.Errorf("exec: window: %w", err)
	}
	return rec, nil
}

// runAgg is a running aggregate (count, sum, avg, min, max) folded row by
// row across chunks: the carry of frames from UNBOUNDED PRECEDING, and
// the first pass's whole-partition value.
type runAgg struct {
	fn    plan.AggFunc
	t     arrow.DataType
	cnt   int64 // rows (count(*)) or non-NULL values folded
	init  bool
	wide  bool // sum/avg in 128 bits (integers, decimals)
	scale int
	s     num
	over  bool
	f     float64
	best  arrow.Array // min/max so far (1 row), nil before any
}

func newRunAgg(fn plan.AggFunc, t arrow.DataType) *runAgg { return &runAgg{fn: fn, t: t} }

func (a *runAgg) release() {
	if a.best != nil {
		a.best.Release()
		a.best = nil
	}
}

// step folds rows of x from from up to each ends[j] in turn (ends never
// decrease) and returns the value after each: len(ends) values; with tot
// (count, sum, avg), the value of tot's rows less those folded.
func (a *runAgg) step(mem memory.Allocator, x arrow.Array, from int, ends []int, tot *runAgg) (arrow.Array, error) {
	n := len(ends)
	var vb []byte
	voff := 0
	isNull := false
	if x != nil {
		vb, voff = validityOf(x)
		isNull = layoutOf(x) == kNull
	}
	switch a.fn {
	case plan.AggCountStar, plan.AggCount:
		buf, v := newFixed[int64](mem, n)
		pos := from
		for j, e := range ends {
			for ; pos < e; pos++ {
				if a.fn == plan.AggCountStar || !isNull && isValid(vb, voff, pos) {
					a.cnt++
				}
			}
			v[j] = a.cnt
			if tot != nil {
				v[j] = tot.cnt - a.cnt
			}
		}
		return makeArray(a.t, n, nil, buf), nil
	case plan.AggMin, plan.AggMax:
		if tot != nil {
			return nil, fmt.Errorf("%s of a suffix", a.fn)
		}
		return a.stepMinMax(mem, x, from, ends)
	case plan.AggSum, plan.AggAvg:
	default:
		return nil, fmt.Errorf("unsupported running aggregate %s", a.fn)
	}
	if isNull {
		return makeNulls(mem, a.t, n), nil
	}
	if !a.init {
		a.init = true
		wt, ok := a.t.(*arrow.Decimal128Type)
		a.wide = ok || layoutOf(x) == kDec128 || layoutOf(x) == kInt64
		switch xt := x.DataType().(type) {
		case *arrow.Decimal128Type:
			a.scale = int(xt.Scale)
		case *arrow.Decimal64Type:
			a.scale = int(xt.Scale)
		}
		if ok {
			a.scale = int(wt.Scale)
		}
		if !a.wide && layoutOf(x) != kFloat64 {
			return nil, fmt.Errorf("%s of %s", a.fn, x.DataType())
		}
	}
	valid, outBits := newOnes(mem, n)
	fail := func(err error) (arrow.Array, error) {
		valid.Release()
		return nil, err
	}
	avg := a.fn == plan.AggAvg
	if a.wide {
		xs, err := toWide(x, a.scale)
		if err != nil {
			return fail(err)
		}
		var buf *memory.Buffer
		var sums []num
		var avgs []float64
		if avg {
			buf, avgs = newFixed[float64](mem, n)
		} else {
			if _, ok := a.t.(*arrow.Decimal128Type); !ok {
				return fail(fmt.Errorf("sum of %s as %s: want decimal(38, s)", x.DataType(), a.t))
			}
			buf, sums = newFixed[num](mem, n)
		}
		pos := from
		for j, e := range ends {
			for ; pos < e; pos++ {
				if isValid(vb, voff, pos) {
					s, over := add128(a.s, xs[pos])
					a.s, a.cnt = s, a.cnt+1
					a.over = a.over || over || !fitsDigits(s, 38)
				}
			}
			sum, cnt, over := a.s, a.cnt, a.over
			if tot != nil {
				var o bool
				sum, o = sub128(tot.s, a.s)
				cnt, over = tot.cnt-a.cnt, tot.over || o
			}
			if cnt == 0 {
				clearBit(outBits, j)
				continue
			}
			if over {
				buf.Release()
				if avg {
					return fail(fmt.Errorf("%w: window avg", plan.ErrDecimalOverflow))
				}
				return fail(fmt.Errorf("%w: window sum does not fit decimal(38,%d)", plan.ErrDecimalOverflow, a.scale))
			}
			if avg {
				avgs[j] = avgWide(sum, cnt, a.scale)
			} else {
				sums[j] = sum
			}
		}
		return makeArray(a.t, n, valid, buf), nil
	}
	xs := values[float64](x)
	buf, v := newFixed[float64](mem, n)
	pos := from
	for j, e := range ends {
		for ; pos < e; pos++ {
			if isValid(vb, voff, pos) {
				a.f += xs[pos]
				a.cnt++
			}
		}
		sum, cnt := a.f, a.cnt
		if tot != nil {
			sum, cnt = tot.f-a.f, tot.cnt-a.cnt
		}
		if cnt == 0 {
			clearBit(outBits, j)
			continue
		}
		v[j] = sum
		if avg {
			v[j] /= float64(cnt)
		}
	}
	return makeArray(a.t, n, valid, buf), nil
}

// stepMinMax is step for min and max: the best value so far is kept as
// one row, put before x so that rows of both compare.
func (a *runAgg) stepMinMax(mem memory.Allocator, x arrow.Array, from int, ends []int) (arrow.Array, error) {
	n := len(ends)
	if x == nil || layoutOf(x) == kNull {
		return makeNulls(mem, a.t, n), nil
	}
	arr, off := x, 0
	if a.best != nil {
		c, err := array.Concatenate([]arrow.Array{a.best, x}, mem)
		if err != nil {
			return nil, err
		}
		arr, off = c, 1
		defer c.Release()
	}
	less, err := lessAt(arr)
	if err != nil {
		return nil, err
	}
	vb, voff := validityOf(arr)
	isMax := a.fn == plan.AggMax
	b := int32(-1)
	if a.best != nil {
		b = 0
	}
	start := b
	idx := make([]int32, n)
	pos := from
	for j, e := range ends {
		for ; pos < e; pos++ {
			r := int32(pos + off)
			if !isValid(vb, voff, int(r)) {
				continue
			}
			if b < 0 || !isMax && less(r, b) || isMax && less(b, r) {
				b = r
			}
		}
		idx[j] = b
	}
	res, err := takeNullable(mem, arr, idx)
	if err != nil {
		return nil, err
	}
	if b >= 0 && b != start {
		sl := array.NewSlice(arr, int64(b), int64(b+1))
		c, err := array.Concatenate([]arrow.Array{sl}, mem)
		sl.Release()
		if err != nil {
			res.Release()
			return nil, err
		}
		a.release()
		a.best = c
	}
	return res, nil
}

// bigPartition is a window partition larger than the budget, streamed
// through a winStream: directly (one pass), or written to a spill file
// while its totals are counted and then read back (two passes).
type bigPartition struct {
	st     *winStream
	last   arrow.RecordBatch // the partition's last row read (where it ends)
	spill  *spillFile        // two passes: the partition's rows
	replay Operator          // two passes: reading them back
}

// startBig streams the partition whose first rows are rec (owned).
func (o *windowOp) startBig(ctx context.Context, rec arrow.RecordBatch) error {
	st, err := o.newStream()
	if err != nil {
		rec.Release()
		return err
	}
	o.big = &bigPartition{st: st}
	if st.twoPass {
		f, err := o.opts.Pool.newSpill("window", o.in.Schema(), o.opts.Mem)
		if err != nil {
			rec.Release()
			return err
		}
		o.big.spill = f
	}
	return o.bigAdd(ctx, rec)
}

// bigAdd feeds rows of the streamed partition (rec, owned).
func (o *windowOp) bigAdd(ctx context.Context, rec arrow.RecordBatch) error {
	big := o.big
	n := int(rec.NumRows())
	last, err := copyRows(o.opts.Mem, rec, n-1, n)
	if err != nil {
		rec.Release()
		return err
	}
	if big.last != nil {
		big.last.Release()
	}
	big.last = last
	if big.spill != nil {
		err := big.spill.write(rec)
		if err == nil {
			err = big.st.tally(rec)
		}
		rec.Release()
		if err != nil {
			return err
		}
		return o.bigHold()
	}
	big.st.pend = append(big.st.pend, rec)
	out, err := big.st.process(ctx, false)
	o.emit(out)
	if err != nil {
		return err
	}
	return o.bigHold()
}

// bigHold accounts what the stream holds between chunks: a few rows, or
// an open peer group of ties that a call needs whole.
func (o *windowOp) bigHold() error {
	held := 2 * (o.big.st.heldBytes() + o.held)
	if !o.res.fits(held) && o.big.spill == nil && o.big.replay == nil && o.big.st.canSwitch() {
		// A peer group larger than the budget in one pass: the rest of
		// the partition goes two passes (window_peers.go).
		if err := o.bigSwitch(); err != nil {
			return err
		}
		held = 2 * (o.big.st.heldBytes() + o.held)
	}
	if !o.res.fits(held) {
		if h := o.big.st.holder; h >= 0 {
			return o.streamError(o.w.Calls[h], errors.New("needs the rows of a frame larger than the budget at once"))
		}
		for i, c := range o.w.Calls {
			switch sc := o.big.st.calls[i]; {
			case sc.peers:
				return o.streamError(c, errors.New("needs a peer group of ORDER BY ties larger than the budget whole"))
			case sc.dyn:
				return o.streamError(c, errors.New("needs the rows of a frame larger than the budget at once"))
			}
		}
	}
	return o.res.set(held)
}

// stepBig reads on in the streamed partition (or in its spill file, the
// second pass) and computes what it can.
func (o *windowOp) stepBig(ctx context.Context) error {
	big := o.big
	if big.replay != nil {
		rec, err := big.replay.Next(ctx)
		if err == io.EOF {
			out, err := big.st.process(ctx, true)
			o.emit(out)
			o.closeBig()
			return err
		}
		if err != nil {
			return err
		}
		if rec.NumRows() == 0 {
			rec.Release()
			return nil
		}
		big.st.pend = append(big.st.pend, rec)
		out, err := big.st.process(ctx, false)
		o.emit(out)
		if err != nil {
			return err
		}
		return o.bigHold()
	}
	b, err := o.in.Next(ctx)
	if err == io.EOF {
		o.inDone = true
		return o.endBig(ctx)
	}
	if err != nil {
		return err
	}
	n := int(b.NumRows())
	if n == 0 {
		b.Release()
		return nil
	}
	j, err := o.bigSplit(b)
	if err != nil {
		b.Release()
		return err
	}
	if j == n {
		return o.bigAdd(ctx, b)
	}
	// The partition ends in b: the rest waits as the next rows held.
	tail := b.NewSlice(int64(j), int64(n))
	o.buf, o.held = append(o.buf, tail), o.held+bytesOf(tail)
	if j > 0 {
		head := b.NewSlice(0, int64(j))
		b.Release()
		if err := o.bigAdd(ctx, head); err != nil {
			return err
		}
	} else {
		b.Release()
	}
	return o.endBig(ctx)
}

// endBig ends the streamed partition: computes its last rows, or starts
// its second pass.
func (o *windowOp) endBig(ctx context.Context) error {
	big := o.big
	if big.spill != nil {
		if err := big.st.endTally(ctx, big.spill); err != nil {
			return err
		}
		op, err := big.spill.open(o.opts.Mem)
		if err != nil {
			return err
		}
		big.replay, big.spill = op, nil
		return nil
	}
	out, err := big.st.process(ctx, true)
	o.emit(out)
	o.closeBig()
	return err
}

func (o *windowOp) closeBig() {
	big := o.big
	if big == nil {
		return
	}
	o.big = nil
	o.streamed += big.st.streamed
	big.st.release()
	if big.last != nil {
		big.last.Release()
	}
	if big.spill != nil {
		big.spill.remove()
	}
	if big.replay != nil {
		big.replay.Close()
	}
}

// bigSplit is the first row of b past the streamed partition (b's rows
// when it goes on).
func (o *windowOp) bigSplit(b arrow.RecordBatch) (int, error) {
	n := int(b.NumRows())
	if len(o.w.PartitionBy) == 0 {
		return n, nil
	}
	lf, err := o.partKeys(o.big.last)
	if err != nil {
		return 0, err
	}
	bf, err := o.partKeys(b)
	if err != nil {
		return 0, err
	}
	return sort.Search(n, func(j int) bool { return compareAcross(lf, 0, bf, int32(j)) != 0 }), nil
}

// partKeys are the PARTITION BY keys of rec, flattened.
func (o *windowOp) partKeys(rec arrow.RecordBatch) ([]*flatKey, error) {
	keys := make([]plan.SortKey, len(o.w.PartitionBy))
	arrs := make([]arrow.Array, len(keys))
	defer releaseAll(arrs)
	for i, p := range o.w.PartitionBy {
		keys[i] = plan.SortKey{Expr: p}
		a, err := evalSortKey(p, rec, o.opts.Mem)
		if err != nil {
			return nil, fmt.Errorf("exec: window: %w", err)
		}
		arrs[i] = a
	}
	return (&sortOp{keys: keys}).flatten([][]arrow.Array{arrs})
}
