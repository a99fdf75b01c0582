package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// lag/lead of an offset that is not a constant over a streamed partition
// (skLagSort): a row's target may be anywhere in the partition, so the
// values are fetched as a self-join through the sort operator, which
// spills. Once the partition is in its spill file, the pairs (target row,
// row) of the rows whose target is in the partition are sorted by target;
// one sequential read of the spill file beside them gives (row, value),
// sorted back by row; the second pass reads these in step with its rows
// (a row whose target is outside the partition gets the default, a NULL
// offset NULL).

// lagStream is the (row, value) pairs of one call, sorted by row, being
// read in the second pass.
type lagStream struct {
	op  Operator          // the sort (its memory is its own reservation's)
	cur arrow.RecordBatch // the batch being read, nil before the first and at the end
	pos int
	eof bool
}

func (l *lagStream) release() {
	if l.cur != nil {
		l.cur.Release()
		l.cur = nil
	}
	if l.op != nil {
		l.op.Close()
		l.op = nil
	}
}

// lagDelta is how a row's offset moves to its target: lag looks back.
func lagDelta(fn plan.WindowFunc, off int64) int64 {
	if fn == plan.WinLead {
		return off
	}
	return -off
}

// lagSort sorts call i's values by the rows that read them (the end of
// the first pass, over the partition's spill file).
func (s *winStream) lagSort(ctx context.Context, i int, call plan.WindowCall, spill *spillFile) error {
	o := s.o
	mem := o.opts.Mem
	i64 := plan.Int64Type
	src, err := spill.reread(mem)
	if err != nil {
		return err
	}
	pairs := &lagTargets{src: src, call: call, total: s.total, o: o,
		schema: plan.Schema{{Name: "t", Type: i64}, {Name: "i", Type: i64}}.Arrow()}
	byT, err := NewSort(pairs, &plan.Node{Kind: plan.KindSort, Schema: plan.Schema{{Name: "t", Type: i64}, {Name: "i", Type: i64}},
		SortKeys: []plan.SortKey{{Expr: plan.Column(0, "t", i64)}}, Limit: -1}, o.opts)
	if err != nil {
		pairs.Close()
		return err
	}
	vals, err := spill.reread(mem)
	if err != nil {
		byT.Close()
		return err
	}
	vs := plan.Schema{{Name: "i", Type: i64}, {Name: "v", Type: call.Args[0].Type, Nullable: true}}
	fetch := &lagFetch{pairs: byT, vals: vals, x: call.Args[0], o: o, schema: vs.Arrow()}
	byI, err := NewSort(fetch, &plan.Node{Kind: plan.KindSort, Schema: vs,
		SortKeys: []plan.SortKey{{Expr: plan.Column(0, "i", i64)}}, Limit: -1}, o.opts)
	if err != nil {
		fetch.Close()
		return err
	}
	l := &lagStream{op: byI}
	s.lag[i] = l
	return l.advance(ctx) // sorts everything, while the spill file is there
}

// advance reads the next batch of pairs (eof at the end).
func (l *lagStream) advance(ctx context.Context) error {
	if l.cur != nil {
		l.cur.Release()
		l.cur = nil
	}
	for !l.eof {
		rec, err := l.op.Next(ctx)
		if err == io.EOF {
			l.eof = true
			break
		}
		if err != nil {
			return err
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		l.cur, l.pos = rec, 0
		break
	}
	return nil
}

// lagColumn is call i (skLagSort) for rows [kc, cut) of r: each row's
// value from the pairs sorted by row, its default, or NULL.
func (s *winStream) lagColumn(ctx context.Context, i int, call plan.WindowCall, r arrow.RecordBatch, kc, cut int, t arrow.DataType) (arrow.Array, error) {
	mem := s.o.opts.Mem
	m := cut - kc
	l := s.lag[i]
	off, err := Eval(call.Args[1], r, mem)
	if err != nil {
		return nil, err
	}
	defer off.Release()
	// srcs: the pairs' value columns read, then the default.
	var srcs []arrow.Array
	var held []arrow.RecordBatch
	defer func() {
		for _, b := range held {
			b.Release()
		}
	}()
	bi, ri := make([]int32, m), make([]int32, m)
	var defRows []int // rows taking the default
	for j := range m {
		g := s.base + int64(j)
		k, ok, err := constInt(off, kc+j)
		if err != nil {
			return nil, err
		}
		if !ok {
			bi[j] = -1 // a NULL offset: NULL
			continue
		}
		tg := g + lagDelta(call.Func, k)
		if tg < 0 || tg >= s.total {
			defRows = append(defRows, j)
			continue
		}
		if l.cur == nil {
			return nil, fmt.Errorf("internal: lag pairs end before row %d", g)
		}
		rows := l.cur.Column(0).(interface{ Value(int) int64 })
		if got := rows.Value(l.pos); got != g {
			return nil, fmt.Errorf("internal: lag pair of row %d where row %d was expected", got, g)
		}
		if len(held) == 0 || held[len(held)-1] != l.cur {
			l.cur.Retain()
			held = append(held, l.cur)
			srcs = append(srcs, l.cur.Column(1))
		}
		bi[j], ri[j] = int32(len(srcs)-1), int32(l.pos)
		l.pos++
		if l.pos == int(l.cur.NumRows()) {
			if err := l.advance(ctx); err != nil {
				return nil, err
			}
		}
	}
	if len(defRows) > 0 && len(call.Args) >= 3 {
		def, err := Eval(call.Args[2], r, mem)
		if err != nil {
			return nil, err
		}
		defer def.Release()
		if layoutOf(def) != kNull {
			srcs = append(srcs, def)
			for _, j := range defRows {
				bi[j], ri[j] = int32(len(srcs)-1), int32(kc+j)
			}
			defRows = nil
		}
	}
	for _, j := range defRows {
		bi[j] = -1
	}
	if len(srcs) == 0 {
		return makeNulls(mem, t, m), nil
	}
	return takeMultiNullable(mem, t, srcs, bi, ri)
}

// lagTargets reads the partition's spill file and yields (target row,
// row) for each row whose offset is not NULL and whose target is in the
// partition.
type lagTargets struct {
	o      *windowOp
	src    Operator
	call   plan.WindowCall
	total  int64
	base   int64 // partition row of the next batch's first row
	schema *arrow.Schema
}

func (p *lagTargets) Schema() *arrow.Schema { return p.schema }

func (p *lagTargets) Close() error { return p.src.Close() }

func (p *lagTargets) Next(ctx context.Context) (arrow.RecordBatch, error) {
	mem := p.o.opts.Mem
	for {
		rec, err := p.src.Next(ctx)
		if err != nil {
			return nil, err
		}
		n := int(rec.NumRows())
		off, err := Eval(p.call.Args[1], rec, mem)
		rec.Release()
		if err != nil {
			return nil, err
		}
		var ts, is []int64
		for k := range n {
			v, ok, err := constInt(off, k)
			if err != nil {
				off.Release()
				return nil, err
			}
			g := p.base + int64(k)
			if tg := g + lagDelta(p.call.Func, v); ok && tg >= 0 && tg < p.total {
				ts, is = append(ts, tg), append(is, g)
			}
		}
		off.Release()
		p.base += int64(n)
		if len(ts) == 0 {
			continue
		}
		tb, tv := newFixed[int64](mem, len(ts))
		ib, iv := newFixed[int64](mem, len(is))
		copy(tv, ts)
		copy(iv, is)
		cols := []arrow.Array{makeArray(arrow.PrimitiveTypes.Int64, len(ts), nil, tb), makeArray(arrow.PrimitiveTypes.Int64, len(is), nil, ib)}
		return conformRecord(mem, p.schema, cols, len(ts))
	}
}

// lagFetch joins the pairs sorted by target with the partition's rows (its
// spill file read once, in step): (row, value of its target).
type lagFetch struct {
	o      *windowOp
	pairs  Operator // (target, row) by target
	vals   Operator // the spill file
	x      *plan.Expr
	schema *arrow.Schema

	p     arrow.RecordBatch // pairs being joined
	pp    int
	v     arrow.Array // x of the spill file's batch read
	vbase int64       // its first row
}

func (f *lagFetch) Schema() *arrow.Schema { return f.schema }

func (f *lagFetch) Close() error {
	if f.p != nil {
		f.p.Release()
		f.p = nil
	}
	if f.v != nil {
		f.v.Release()
		f.v = nil
	}
	err := f.pairs.Close()
	if e := f.vals.Close(); err == nil {
		err = e
	}
	return err
}

func (f *lagFetch) Next(ctx context.Context) (arrow.RecordBatch, error) {
	mem := f.o.opts.Mem
	for {
		if f.p == nil || f.pp == int(f.p.NumRows()) {
			if f.p != nil {
				f.p.Release()
				f.p = nil
			}
			rec, err := f.pairs.Next(ctx)
			if err != nil {
				return nil, err
			}
			f.p, f.pp = rec, 0
			continue
		}
		ts := f.p.Column(0).(interface{ Value(int) int64 })
		is := f.p.Column(1).(interface{ Value(int) int64 })
		// The spill file's batch that holds the next target.
		for f.v == nil || ts.Value(f.pp) >= f.vbase+int64(f.v.Len()) {
			if f.v != nil {
				f.vbase += int64(f.v.Len())
				f.v.Release()
				f.v = nil
			}
			rec, err := f.vals.Next(ctx)
			if err == io.EOF {
				return nil, fmt.Errorf("internal: lag target %d past the partition's %d rows", ts.Value(f.pp), f.vbase)
			}
			if err != nil {
				return nil, err
			}
			v, err := Eval(f.x, rec, mem)
			rec.Release()
			if err != nil {
				return nil, err
			}
			f.v = v
		}
		// The pairs whose targets are in it.
		end := f.vbase + int64(f.v.Len())
		var idx []int32
		var rows []int64
		for ; f.pp < int(f.p.NumRows()) && ts.Value(f.pp) < end; f.pp++ {
			idx = append(idx, int32(ts.Value(f.pp)-f.vbase))
			rows = append(rows, is.Value(f.pp))
		}
		v, err := takeNullable(mem, f.v, idx)
		if err != nil {
			return nil, err
		}
		ib, iv := newFixed[int64](mem, len(rows))
		copy(iv, rows)
		return conformRecord(mem, f.schema, []arrow.Array{makeArray(arrow.PrimitiveTypes.Int64, len(rows), nil, ib), v}, len(rows))
	}
}
