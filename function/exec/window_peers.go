package exec

import (
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Peer groups of ORDER BY ties larger than the budget in a two-pass
// stream. A call that needs a row's whole peer group (cume_dist: its end;
// count/sum/avg/min/max from UNBOUNDED PRECEDING to the group's end: the
// aggregate there) holds the open group back until it is complete, which
// a group larger than the budget never is. In a two-pass stream the first
// pass finds the big groups, those that go on from one batch of the spill
// file to the next (at most one per batch), with their ends and each
// call's running aggregate at their ends; the second pass reads the same
// batches back, so every other group is whole in the rows held, and the
// rows of a big group take its end and values from the first pass
// without holding it.

// peerGroups is what the first pass found of the big groups.
type peerGroups struct {
	ext      [][2]int64        // big groups: [start, end) partition rows, in order
	open     int64             // start of the group open at the end of the batches tallied
	lastBase int64             // partition row of the last batch tallied
	last     arrow.RecordBatch // the last row tallied
	runs     []*runAgg         // per call: the aggregates, folded over the first pass
	vals     [][]arrow.Array   // per call: the aggregate at each big group's end (1 row)
	end      []arrow.Array     // per call: the aggregate at the last batch's end (1 row)
}

func (s *winStream) newPeerGroups() *peerGroups {
	o := s.o
	nin := o.in.Schema().NumFields()
	k := len(o.w.Calls)
	g := &peerGroups{runs: make([]*runAgg, k), vals: make([][]arrow.Array, k), end: make([]arrow.Array, k)}
	for i, call := range o.w.Calls {
		if s.calls[i].bigPeers && call.Func.IsAggregate() {
			g.runs[i] = newRunAgg(plan.AggFunc(call.Func), o.schema.Field(nin+i).Type)
		}
	}
	return g
}

func (g *peerGroups) bytes() int64 {
	n := 16 * int64(len(g.ext))
	if g.last != nil {
		n += bytesOf(g.last)
	}
	for i, vs := range g.vals {
		for _, v := range vs {
			n += arrayBytes(v)
		}
		if g.end[i] != nil {
			n += arrayBytes(g.end[i])
		}
	}
	return n
}

func (g *peerGroups) release() {
	if g.last != nil {
		g.last.Release()
		g.last = nil
	}
	for i, vs := range g.vals {
		releaseAll(vs)
		g.vals[i] = nil
	}
	releaseAll(g.end)
	for _, r := range g.runs {
		if r != nil {
			r.release()
		}
	}
}

// tallyPeers finds the peer groups that end in rec (the first pass's
// batch at partition row s.total) and keeps the big ones.
func (s *winStream) tallyPeers(rec arrow.RecordBatch) error {
	g := s.bigGroups
	o := s.o
	mem := o.opts.Mem
	n := int(rec.NumRows())
	base := s.total
	cat, off := rec, 0
	if g.last != nil {
		c, err := o.concat([]arrow.RecordBatch{g.last, rec})
		if err != nil {
			return err
		}
		defer c.Release()
		cat, off = c, 1
	}
	f, err := o.frames(cat)
	if err != nil {
		return err
	}
	var closed []int // rec's rows where a big group ends
	for k := range n {
		if r := k + off; r > 0 && int(f.qs[r]) == r {
			if g.open < base {
				g.ext = append(g.ext, [2]int64{g.open, base + int64(k)})
				closed = append(closed, k)
			}
			g.open = base + int64(k)
		}
	}
	for i, call := range o.w.Calls {
		run := g.runs[i]
		if run == nil {
			continue
		}
		err := func() error {
			var x arrow.Array
			if len(call.Args) > 0 {
				a, err := Eval(call.Args[0], rec, mem)
				if err != nil {
					return err
				}
				defer a.Release()
				x = a
			}
			v, err := run.step(mem, x, 0, append(append([]int{}, closed...), n), nil)
			if err != nil {
				return err
			}
			defer v.Release()
			for c := range closed {
				one, err := copyOne(mem, v, c)
				if err != nil {
					return err
				}
				g.vals[i] = append(g.vals[i], one)
			}
			one, err := copyOne(mem, v, len(closed))
			if err != nil {
				return err
			}
			if g.end[i] != nil {
				g.end[i].Release()
			}
			g.end[i] = one
			return nil
		}()
		if err != nil {
			return fmt.Errorf("%s: %w", call.Func, err)
		}
	}
	last, err := copyRows(mem, rec, n-1, n)
	if err != nil {
		return err
	}
	if g.last != nil {
		g.last.Release()
	}
	g.last, g.lastBase = last, base
	return nil
}

// finish ends the first pass of a partition of total rows: the group
// still open is big when it began before the last batch.
func (g *peerGroups) finish(total int64) {
	if g.last != nil && g.open < g.lastBase {
		g.ext = append(g.ext, [2]int64{g.open, total})
		for i, e := range g.end {
			if e != nil {
				g.vals[i] = append(g.vals[i], e)
				g.end[i] = nil
			}
		}
	}
	releaseAll(g.end)
	clear(g.end)
	if g.last != nil {
		g.last.Release()
		g.last = nil
	}
}

// find is the big group of partition row r, -1 when r's group is not big.
func (g *peerGroups) find(r int64) int {
	k := sort.Search(len(g.ext), func(k int) bool { return g.ext[k][1] > r })
	if k < len(g.ext) && g.ext[k][0] <= r {
		return k
	}
	return -1
}

// peerEnd is the partition row where the peer group of r's row li ends.
func (s *winStream) peerEnd(rstart int64, f *partitions, li int) int64 {
	if g := s.bigGroups; g != nil {
		if k := g.find(rstart + int64(li)); k >= 0 {
			return g.ext[k][1]
		}
	}
	return rstart + int64(f.qe[li])
}

// substitute puts call i's aggregate at its big group's end in a (owned:
// the rows from partition row base) for the rows of big groups.
func (g *peerGroups) substitute(mem memory.Allocator, i int, a arrow.Array, base int64) (arrow.Array, error) {
	m := a.Len()
	bi, ri := make([]int32, m), make([]int32, m)
	srcs := []arrow.Array{a}
	at := map[int]int32{}
	for j := range m {
		ri[j] = int32(j)
		k := g.find(base + int64(j))
		if k < 0 {
			continue
		}
		if k >= len(g.vals[i]) {
			a.Release()
			return nil, fmt.Errorf("internal: no value at the end of big peer group %d", k)
		}
		src, ok := at[k]
		if !ok {
			src = int32(len(srcs))
			srcs = append(srcs, g.vals[i][k])
			at[k] = src
		}
		bi[j], ri[j] = src, 0
	}
	if len(srcs) == 1 {
		return a, nil
	}
	defer a.Release()
	return takeMultiNullable(mem, a.DataType(), srcs, bi, ri)
}

// canSwitch says whether a one-pass stream held back by an open peer group
// can go on in two passes: its calls that need whole peer groups all do
// with big groups, and their running aggregates are folded up to the
// first pending row.
func (s *winStream) canSwitch() bool {
	if s.twoPass || !s.peers || s.holder >= 0 || len(s.pend) == 0 {
		return false
	}
	for i, sc := range s.calls {
		switch {
		case sc.peers && !sc.bigPeers:
			return false
		case sc.bigPeers && s.aggs[i] != nil && s.folded[i] != s.base:
			return false
		}
	}
	return true
}

// bigSwitch turns the streamed partition into two passes from its first
// pending row on: the rows pending and the rest go to a spill file while
// the big peer groups are found (the running aggregates go on from the
// stream's), then are read back and streamed with the rows kept before.
func (o *windowOp) bigSwitch() error {
	big, st := o.big, o.big.st
	f, err := o.opts.Pool.newSpill("window", o.in.Schema(), o.opts.Mem)
	if err != nil {
		return err
	}
	g := st.newPeerGroups()
	for i, r := range g.runs {
		if r != nil {
			r.release()
			c := *st.aggs[i]
			if c.best != nil {
				c.best.Retain()
			}
			g.runs[i] = &c
		}
	}
	g.open = st.base
	st.bigGroups, st.twoPass, st.total = g, true, st.base
	big.spill = f
	pend := st.pend
	st.pend = nil
	defer func() {
		for _, b := range pend {
			b.Release()
		}
	}()
	for _, b := range pend {
		if err := f.write(b); err != nil {
			return err
		}
		if err := st.tally(b); err != nil {
			return err
		}
	}
	return nil
}
