package exec

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
)

// External merge sort. When the sort's buffer does not fit the task's
// memory budget, the buffered rows are sorted and written as one sorted
// run (a spill file of batches); at the end of the input the remaining
// rows become the last run and the runs are merged with a heap of one
// cursor per run, each holding one batch and its flattened sort keys.
// Ties go to the earlier run, and each run is stably sorted, so the merge
// is as stable as the in-memory sort.

// spillRun sorts the buffered rows and writes them as a sorted run.
func (s *sortOp) spillRun() error {
	if s.rows == 0 {
		return nil
	}
	if err := s.sortAll(); err != nil {
		return fmt.Errorf("exec: sort: %w", err)
	}
	f, err := s.opts.Pool.newSpill("sort", s.schema, s.opts.Mem)
	if err != nil {
		return err
	}
	s.runs = append(s.runs, f)
	for lo := 0; lo < s.nout; lo += s.opts.BatchRows {
		hi := min(s.nout, lo+s.opts.BatchRows)
		rec, err := s.gather(s.perm[lo:hi])
		if err != nil {
			return fmt.Errorf("exec: sort: %w", err)
		}
		err = f.write(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	if err := f.finish(); err != nil {
		return err
	}
	s.releaseBuffered()
	s.perm, s.rowBatch, s.rowIdx, s.nout = nil, nil, nil, 0
	return s.res.set(0)
}

// runCursor is the read position in one sorted run.
type runCursor struct {
	idx  int // run number: ties go to the lower
	op   Operator
	rec  arrow.RecordBatch
	keys []arrow.Array
	flat []*flatKey
	pos  int
	n    int
	src  int // index of rec in the current output chunk, -1 if not in it
}

// sortMerge merges the sorted runs of a sortOp.
type sortMerge struct {
	s       *sortOp
	cursors cursorHeap
	all     []*runCursor
	srcs    []arrow.RecordBatch
	bi, ri  []int32
}

func (s *sortOp) startMerge(ctx context.Context) error {
	m := &sortMerge{s: s}
	s.merge = m
	for i, f := range s.runs {
		op, err := f.open(s.opts.Mem)
		if err != nil {
			return err
		}
		c := &runCursor{idx: i, op: op, src: -1}
		m.all = append(m.all, c)
		ok, err := m.load(ctx, c)
		if err != nil {
			return err
		}
		if ok {
			m.cursors = append(m.cursors, c)
		}
	}
	heap.Init(&m.cursors)
	return nil
}

// load reads the cursor's next non-empty batch; false at the end of its run.
func (m *sortMerge) load(ctx context.Context, c *runCursor) (bool, error) {
	c.drop()
	for {
		rec, err := c.op.Next(ctx)
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		keys := make([]arrow.Array, len(m.s.keys))
		for i, k := range m.s.keys {
			a, err := evalSortKey(k.Expr, rec, m.s.opts.Mem)
			if err != nil {
				releaseAll(keys)
				rec.Release()
				return false, fmt.Errorf("exec: sort key %d: %w", i, err)
			}
			keys[i] = a
		}
		flat, err := m.s.flatten([][]arrow.Array{keys})
		if err != nil {
			releaseAll(keys)
			rec.Release()
			return false, fmt.Errorf("exec: sort: %w", err)
		}
		c.rec, c.keys, c.flat, c.pos, c.n, c.src = rec, keys, flat, 0, int(rec.NumRows()), -1
		return true, nil
	}
}

func (c *runCursor) drop() {
	if c.rec != nil {
		c.rec.Release()
		releaseAll(c.keys)
		c.rec, c.keys, c.flat = nil, nil, nil
	}
}

func (m *sortMerge) next(ctx context.Context) (arrow.RecordBatch, error) {
	want := m.s.opts.BatchRows
	for len(m.bi) < want && len(m.cursors) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := m.cursors[0]
		if c.src < 0 {
			c.rec.Retain()
			c.src = len(m.srcs)
			m.srcs = append(m.srcs, c.rec)
		}
		m.bi = append(m.bi, int32(c.src))
		m.ri = append(m.ri, int32(c.pos))
		c.pos++
		if c.pos < c.n {
			heap.Fix(&m.cursors, 0)
			continue
		}
		ok, err := m.load(ctx, c)
		if err != nil {
			return nil, err
		}
		if ok {
			heap.Fix(&m.cursors, 0)
		} else {
			heap.Pop(&m.cursors)
		}
	}
	if len(m.bi) == 0 {
		return nil, io.EOF
	}
	rec, err := m.gather()
	for _, r := range m.srcs {
		r.Release()
	}
	m.srcs, m.bi, m.ri = m.srcs[:0], m.bi[:0], m.ri[:0]
	for _, c := range m.all {
		c.src = -1
	}
	return rec, err
}

func (m *sortMerge) gather() (arrow.RecordBatch, error) {
	schema := m.s.schema
	cols := make([]arrow.Array, schema.NumFields())
	srcs := make([]arrow.Array, len(m.srcs))
	for c := range cols {
		for b, rec := range m.srcs {
			srcs[b] = rec.Column(c)
		}
		a, err := takeMulti(m.s.opts.Mem, m.srcs[0].Column(c).DataType(), srcs, m.bi, m.ri)
		if err != nil {
			releaseAll(cols)
			return nil, fmt.Errorf("exec: sort: column %q: %w", schema.Field(c).Name, err)
		}
		cols[c] = a
	}
	return conformRecord(m.s.opts.Mem, schema, cols, len(m.bi))
}

func (m *sortMerge) close() {
	for _, r := range m.srcs {
		r.Release()
	}
	m.srcs = nil
	for _, c := range m.all {
		c.drop()
		c.op.Close()
	}
	m.all, m.cursors = nil, nil
}

// cursorHeap orders run cursors by their current row (then run number).
type cursorHeap []*runCursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if c := compareAcross(a.flat, int32(a.pos), b.flat, int32(b.pos)); c != 0 {
		return c < 0
	}
	return a.idx < b.idx
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*runCursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// compareAcross compares row i of flattened keys fa with row j of fb (the
// keys of two different batches).
func compareAcross(fa []*flatKey, i int32, fb []*flatKey, j int32) int {
	for k := range fa {
		if c := fa[k].cmpWith(i, fb[k], j); c != 0 {
			return c
		}
	}
	return 0
}

func (f *flatKey) isNull(r int32) bool { return f.k == kNull || (f.null != nil && f.null[r]) }

// cmpWith compares row a of f with row b of g (the same sort key).
func (f *flatKey) cmpWith(a int32, g *flatKey, b int32) int {
	na, nb := f.isNull(a), g.isNull(b)
	if na || nb {
		switch {
		case na && nb:
			return 0
		case na == f.nullsFirst:
			return -1
		default:
			return 1
		}
	}
	var c int
	switch f.k {
	case kInt64:
		c = cmp.Compare(f.i64[a], g.i64[b])
	case kFloat64:
		c = cmpFloat(f.f64[a], g.f64[b])
	case kDate:
		c = cmp.Compare(f.i32[a], g.i32[b])
	case kDec128:
		c = f.d128[a].Cmp(g.d128[b])
	case kBool:
		c = cmp.Compare(b2u(f.bl[a]), b2u(g.bl[b]))
	case kString:
		c = cmp.Compare(f.str[a], g.str[b])
	}
	if f.desc {
		return -c
	}
	return c
}
