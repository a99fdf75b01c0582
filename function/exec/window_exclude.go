package exec

import (
	"errors"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// EXCLUDE over a frame from UNBOUNDED PRECEDING or to UNBOUNDED FOLLOWING
// of a streamed partition (skExclude). Row i's frame less the rows EXCLUDE
// leaves out is [lo, a), the row itself (TIES), [b, hi), with [a, b) the
// excluded rows (the row, or its peer group) within the frame. a never
// decreases from row to row, so the rows before the first pending row's
// a are folded into one carry C0 (the frame's rows [0, P0): a running
// aggregate, the first or the last of them), and the rows after those
// held are another, C1 (rows [P1, N): the first pass's totals less what
// was folded, the min/max suffix of the spill file's blocks, the last
// row). Each row's frame is then at most three ranges over x' = C0, the
// rows held from P0, C1: prefix sums for count/sum/avg, a segment tree for
// min/max, the first or last row for first/last_value.

// errExcludeGap is a frame that starts or ends among the rows of a carry
// (the rows held must go back to it).
var errExcludeGap = errors.New("internal: an EXCLUDE frame bound among the rows folded")

// excludeColumn computes call i (skExclude) for rows [kc, cut) of r.
func (s *winStream) excludeColumn(i int, call plan.WindowCall, r arrow.RecordBatch, f *partitions, kc, cut int, rstart int64) (arrow.Array, error) {
	o := s.o
	mem := o.opts.Mem
	sc := s.calls[i]
	fr := sc.fr
	n, m := int(r.NumRows()), cut-kc
	t := o.schema.Field(int(r.NumCols()) + i).Type
	up, uf := fr.Start.Kind == plan.BoundUnboundedPreceding, fr.End.Kind == plan.BoundUnboundedFollowing
	fn := call.Func
	var x arrow.Array
	if len(call.Args) > 0 {
		a, err := Eval(call.Args[0], r, mem)
		if err != nil {
			return nil, err
		}
		defer a.Release()
		x = a
	}
	// r's first row not folded into C0 (without UNBOUNDED PRECEDING C0
	// is in no frame, but C1 is the partition's total less C0 and the
	// rows held).
	f0 := int(s.folded[i] - rstart)
	if f0 < 0 || f0 > n {
		return nil, fmt.Errorf("internal: rows %d to %d are gone before they were folded", s.folded[i], rstart)
	}
	p0, p1 := rstart+int64(f0), rstart+int64(n)
	total := p1 // without UNBOUNDED FOLLOWING nothing after the rows held is read
	if uf {
		total = s.total
	}
	L := n - f0 + 2 // x' rows: C0, r's rows [f0, n), C1
	sets := make([]frameSet, m)
	sizes := make([]int64, m) // the frames' rows (count(*))
	var fold int64            // the last row's a (its frame's start): where C0 ends next
	for j := range sets {
		li := kc + j
		lo, hi := f.frame(fr, li)
		plo, phi := rstart+int64(lo), rstart+int64(hi)
		if up {
			plo = 0
		}
		if uf {
			phi = total
		}
		es, ee := li, li+1
		if fr.Exclude != plan.ExcludeCurrentRow {
			es, ee = int(f.qs[li]), int(f.qe[li])
		}
		a := min(max(rstart+int64(es), plo), phi)
		b := min(max(rstart+int64(ee), plo), phi)
		if up && a < p0 || !up && plo < p0 {
			return nil, errExcludeGap
		}
		var fs frameSet
		add := func(u, v int64) error {
			if u >= v {
				return nil
			}
			sizes[j] += v - u
			var xl, xh int
			switch {
			case u < p0 && u != 0:
				return errExcludeGap
			case u < p0:
				xl = 0
			case u < p1:
				xl = 1 + int(u-p0)
			case v != total:
				return errExcludeGap
			default:
				xl = L - 1
			}
			switch {
			case v < p0:
				return errExcludeGap
			case v <= p1:
				xh = 1 + int(v-p0)
			case v != total:
				return errExcludeGap
			default:
				xh = L
			}
			fs.add(xl, xh)
			return nil
		}
		cur := rstart + int64(li)
		err := add(plo, a)
		if err == nil && fr.Exclude == plan.ExcludeTies && cur >= plo && cur < phi {
			err = add(cur, cur+1)
		}
		if err == nil {
			err = add(b, phi)
		}
		if err != nil {
			return nil, err
		}
		sets[j], fold = fs, a
		if !up {
			fold = plo
		}
	}
	var res arrow.Array
	var err error
	switch {
	case fn == plan.WindowFunc(plan.AggCountStar):
		buf, v := newFixed[int64](mem, m)
		copy(v, sizes)
		res = makeArray(t, m, nil, buf)
	case x != nil && layoutOf(x) == kNull && fn == plan.WindowFunc(plan.AggCount):
		buf, v := newFixed[int64](mem, m)
		clear(v)
		res = makeArray(t, m, nil, buf)
	case x != nil && layoutOf(x) == kNull:
		res = makeNulls(mem, t, m)
	case fn == plan.WindowFunc(plan.AggCount), fn == plan.WindowFunc(plan.AggSum), fn == plan.WindowFunc(plan.AggAvg):
		res, err = s.excludeSums(i, call, t, x, f0, sets, uf)
	default:
		res, err = s.excludeRows(i, call, x, f0, p1, total, sets, up, uf)
	}
	if err != nil {
		return nil, err
	}
	if err := s.excludeFold(i, call, x, rstart, fold, up); err != nil {
		res.Release()
		return nil, err
	}
	return res, nil
}

// excludeFold folds call i's rows held before fold (a partition row) into
// C0 (without UNBOUNDED PRECEDING only count/sum/avg need it, for C1).
func (s *winStream) excludeFold(i int, call plan.WindowCall, x arrow.Array, rstart, fold int64, up bool) error {
	p0 := s.folded[i]
	if fold <= p0 {
		return nil
	}
	mem := s.o.opts.Mem
	from, to := int(p0-rstart), int(fold-rstart)
	fn := call.Func
	switch {
	case fn == plan.WindowFunc(plan.AggCountStar):
	case !up && fn != plan.WindowFunc(plan.AggCount) && fn != plan.WindowFunc(plan.AggSum) && fn != plan.WindowFunc(plan.AggAvg):
	case fn == plan.WinFirstValue:
		if p0 == 0 {
			v, err := copyOne(mem, x, from)
			if err != nil {
				return err
			}
			s.c0[i] = v
		}
	case fn == plan.WinLastValue:
		v, err := copyOne(mem, x, to-1)
		if err != nil {
			return err
		}
		if s.c0[i] != nil {
			s.c0[i].Release()
		}
		s.c0[i] = v
	default:
		v, err := s.aggs[i].step(mem, x, from, []int{to}, nil)
		if err != nil {
			return err
		}
		v.Release()
	}
	s.folded[i] = fold
	return nil
}

// copyOne is row r of x, copied.
func copyOne(mem memory.Allocator, x arrow.Array, r int) (arrow.Array, error) {
	sl := array.NewSlice(x, int64(r), int64(r+1))
	defer sl.Release()
	return array.Concatenate([]arrow.Array{sl}, mem)
}

// excludeSums is count(x), sum or avg over each row's ranges of x':
// prefix counts and sums over C0, x's rows from f0 and C1.
func (s *winStream) excludeSums(i int, call plan.WindowCall, t arrow.DataType, x arrow.Array, f0 int, sets []frameSet, uf bool) (arrow.Array, error) {
	mem := s.o.opts.Mem
	m := len(sets)
	n := x.Len()
	L := n - f0 + 2
	fn := plan.AggFunc(call.Func)
	vb, voff := validityOf(x)
	// C0 and C1: counts and sums.
	var c1 runAgg
	c0 := *s.aggs[i]
	heldCnt := int64(0)
	for p := f0; p < n; p++ {
		if isValid(vb, voff, p) {
			heldCnt++
		}
	}
	cnt := make([]int64, L+1)
	wide, scale := false, 0
	if fn != plan.AggCount {
		wt, ok := t.(*arrow.Decimal128Type)
		wide = ok || layoutOf(x) == kDec128 || layoutOf(x) == kInt64
		switch xt := x.DataType().(type) {
		case *arrow.Decimal128Type:
			scale = int(xt.Scale)
		case *arrow.Decimal64Type:
			scale = int(xt.Scale)
		}
		if ok {
			scale = int(wt.Scale)
		}
		if !wide && layoutOf(x) != kFloat64 {
			return nil, fmt.Errorf("%s of %s", fn, x.DataType())
		}
	}
	var xs []num
	var xf []float64
	if wide {
		var err error
		if xs, err = toWide(x, scale); err != nil {
			return nil, err
		}
	} else if fn != plan.AggCount {
		xf = values[float64](x)
	}
	// The sums of x's rows held.
	var heldS num
	var heldF float64
	over := c0.over
	for p := f0; p < n; p++ {
		if !isValid(vb, voff, p) {
			continue
		}
		switch {
		case wide:
			var o bool
			heldS, o = add128(heldS, xs[p])
			over = over || o
		case xf != nil:
			heldF += xf[p]
		}
	}
	if uf {
		tot := s.tots[i]
		c1.cnt = tot.cnt - c0.cnt - heldCnt
		c1.f = tot.f - c0.f - heldF
		var o1, o2 bool
		c1.s, o1 = sub128(tot.s, c0.s)
		c1.s, o2 = sub128(c1.s, heldS)
		over = over || tot.over || o1 || o2
	}
	if over {
		if fn == plan.AggAvg {
			return nil, fmt.Errorf("%w: window avg", plan.ErrDecimalOverflow)
		}
		return nil, fmt.Errorf("%w: window sum does not fit decimal(38,%d)", plan.ErrDecimalOverflow, scale)
	}
	// Prefix counts and sums over x'.
	ps := make([]num, L+1)
	pf := make([]float64, L+1)
	step := func(k int, c int64, v num, fv float64) {
		cnt[k+1] = cnt[k] + c
		if wide {
			ps[k+1], _ = add128(ps[k], v)
		}
		pf[k+1] = pf[k] + fv
	}
	step(0, c0.cnt, c0.s, c0.f)
	for p := f0; p < n; p++ {
		k := 1 + p - f0
		if !isValid(vb, voff, p) {
			step(k, 0, num{}, 0)
			continue
		}
		var v num
		var fv float64
		if wide {
			v = xs[p]
		} else if xf != nil {
			fv = xf[p]
		}
		step(k, 1, v, fv)
	}
	step(L-1, c1.cnt, c1.s, c1.f)
	if fn == plan.AggCount {
		buf, v := newFixed[int64](mem, m)
		for j, fs := range sets {
			c := int64(0)
			for _, rg := range fs.r[:fs.k] {
				c += cnt[rg[1]] - cnt[rg[0]]
			}
			v[j] = c
		}
		return makeArray(t, m, nil, buf), nil
	}
	valid, outBits := newOnes(mem, m)
	avg := fn == plan.AggAvg
	if wide {
		if _, ok := t.(*arrow.Decimal128Type); !ok && !avg {
			valid.Release()
			return nil, fmt.Errorf("sum of %s as %s: want decimal(38, s)", x.DataType(), t)
		}
		var buf *memory.Buffer
		var sums []num
		var avgs []float64
		if avg {
			buf, avgs = newFixed[float64](mem, m)
		} else {
			buf, sums = newFixed[num](mem, m)
		}
		for j, fs := range sets {
			c, sum := int64(0), num{}
			for _, rg := range fs.r[:fs.k] {
				c += cnt[rg[1]] - cnt[rg[0]]
				d, _ := sub128(ps[rg[1]], ps[rg[0]])
				sum, _ = add128(sum, d)
			}
			if c == 0 {
				clearBit(outBits, j)
				continue
			}
			if !fitsDigits(sum, 38) {
				buf.Release()
				valid.Release()
				if avg {
					return nil, fmt.Errorf("%w: window avg", plan.ErrDecimalOverflow)
				}
				return nil, fmt.Errorf("%w: window sum does not fit decimal(38,%d)", plan.ErrDecimalOverflow, scale)
			}
			if avg {
				avgs[j] = avgWide(sum, c, scale)
			} else {
				sums[j] = sum
			}
		}
		return makeArray(t, m, valid, buf), nil
	}
	buf, v := newFixed[float64](mem, m)
	for j, fs := range sets {
		c, sum := int64(0), 0.0
		for _, rg := range fs.r[:fs.k] {
			c += cnt[rg[1]] - cnt[rg[0]]
			sum += pf[rg[1]] - pf[rg[0]]
		}
		if c == 0 {
			clearBit(outBits, j)
			continue
		}
		v[j] = sum
		if avg {
			v[j] /= float64(c)
		}
	}
	return makeArray(t, m, valid, buf), nil
}

// excludeRows is min, max, first_value or last_value over each row's
// ranges of x' (C0, x's rows from f0, C1).
func (s *winStream) excludeRows(i int, call plan.WindowCall, x arrow.Array, f0 int, p1, total int64, sets []frameSet, up, uf bool) (arrow.Array, error) {
	mem := s.o.opts.Mem
	n := x.Len()
	L := n - f0 + 2
	fn := call.Func
	var c0, c1 arrow.Array
	switch fn {
	case plan.WinFirstValue, plan.WinLastValue:
		c0 = s.c0[i]
		if fn == plan.WinLastValue && uf {
			c1 = s.capt[i]
		}
	default: // min, max
		if up {
			c0 = s.aggs[i].best
		}
		if uf {
			k := sort.Search(len(s.blocks), func(k int) bool { return s.blocks[k] >= p1 })
			if k < len(s.blocks) && s.blocks[k] != p1 || k == len(s.blocks) && p1 != s.total {
				return nil, fmt.Errorf("internal: rows held end at %d, not at a block's start", p1)
			}
			sl := array.NewSlice(s.sfx[i], int64(k), int64(k+1))
			defer sl.Release()
			c1 = sl
		}
	}
	parts := make([]arrow.Array, 0, 3)
	for _, c := range []arrow.Array{c0, nil, c1} {
		switch {
		case c == nil && len(parts) == 1:
			sl := array.NewSlice(x, int64(f0), int64(n))
			defer sl.Release()
			parts = append(parts, sl)
		case c == nil:
			nl := makeNulls(mem, x.DataType(), 1)
			defer nl.Release()
			parts = append(parts, nl)
		default:
			parts = append(parts, c)
		}
	}
	xp, err := array.Concatenate(parts, mem)
	if err != nil {
		return nil, err
	}
	defer xp.Release()
	idx := make([]int32, len(sets))
	switch fn {
	case plan.WinFirstValue, plan.WinLastValue:
		for j, fs := range sets {
			at := fs.at(0)
			if fn == plan.WinLastValue {
				at = fs.last()
			}
			if fn == plan.WinFirstValue && at == L-1 && p1 < total {
				return nil, errExcludeGap // the row after those held is not known
			}
			idx[j] = int32(at)
		}
		return takeNullable(mem, xp, idx)
	}
	less, err := lessAt(xp)
	if err != nil {
		return nil, err
	}
	vb, voff := validityOf(xp)
	isMax := plan.AggFunc(fn) == plan.AggMax
	better := func(a, b int32) int32 {
		switch {
		case a < 0:
			return b
		case b < 0:
			return a
		case !isMax && less(b, a), isMax && less(a, b):
			return b
		}
		return a
	}
	tree := newSegTree(L, int32(-1), func(k int) int32 {
		if !isValid(vb, voff, k) {
			return -1
		}
		return int32(k)
	}, better)
	for j, fs := range sets {
		idx[j] = queryFrame(tree, fs)
	}
	return takeNullable(mem, xp, idx)
}
