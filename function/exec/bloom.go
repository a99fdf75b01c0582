package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// BloomAddValues adds values of type t to the Bloom filter f, hashed as a
// column of t's engine layout is (kernel.HashKeys), so a probe of that
// layout finds them.
func BloomAddValues(f kernel.Bloom, t plan.DataType, vals []plan.Value) error {
	mem := memory.DefaultAllocator
	h := make([]uint64, 1)
	for _, v := range vals {
		a, err := broadcast(mem, t, v, 1)
		if err != nil {
			return fmt.Errorf("bloom filter of %s: %w", t, err)
		}
		err = kernel.HashKeys(a, h)
		a.Release()
		if err != nil {
			return fmt.Errorf("bloom filter of %s: %w", t, err)
		}
		f.Insert(h[0])
	}
	return nil
}

// bloomProbe is a filter node's Bloom filter test (plan.BloomProbe).
type bloomProbe struct {
	col    int
	filter kernel.Bloom
	hashes []uint64
}

func newBloomProbe(p *plan.BloomProbe) (*bloomProbe, error) {
	if p == nil {
		return nil, nil
	}
	f, err := kernel.BloomFromBytes(p.Bits)
	if err != nil {
		return nil, err
	}
	return &bloomProbe{col: p.Column, filter: f}, nil
}

// keep drops from sel the rows of rec whose column may not be a key of the
// filter (and its NULLs).
func (b *bloomProbe) keep(rec arrow.RecordBatch, sel []int32) ([]int32, error) {
	if b.col < 0 || b.col >= int(rec.NumCols()) {
		return nil, fmt.Errorf("bloom filter on column %d of %d", b.col, rec.NumCols())
	}
	return b.keepArray(rec.Column(b.col), sel)
}

// keepArray drops from sel the rows of col that may not be a key of the
// filter (and its NULLs).
func (b *bloomProbe) keepArray(col arrow.Array, sel []int32) ([]int32, error) {
	n := col.Len()
	if cap(b.hashes) < n {
		b.hashes = make([]uint64, n)
	}
	h := b.hashes[:n]
	if err := kernel.HashKeys(col, h); err != nil {
		return nil, err
	}
	vb, voff := validityOf(col)
	out := sel[:0]
	for _, r := range sel {
		if isValid(vb, voff, int(r)) && b.filter.MayContain(h[r]) {
			out = append(out, r)
		}
	}
	return out, nil
}

// BloomTaker is an operator that can test a runtime filter's Bloom filter
// on a column of its own output (the same index in its schema) before
// the Filter node above does: a Parquet scan drops the rows it fails
// before it decodes their other columns. TakeBloom is called before the
// first Next and reports whether the operator took it; the Filter above
// still tests it, so an operator may apply it to some rows only.
type BloomTaker interface {
	TakeBloom(p *plan.BloomProbe) bool
}

// TakeBloom passes the Bloom filter on to the filter's input, whose
// columns it keeps (BloomTaker).
func (f *filterOp) TakeBloom(p *plan.BloomProbe) bool {
	bt, ok := unmetered(f.in).(BloomTaker)
	return ok && bt.TakeBloom(p)
}

// RangeTaker is an operator that can leave unread the parts of its input
// whose statistics put a column of its output (the same index in its
// schema) outside a range: a Parquet scan skips those row groups. It is
// called before the first Next and reports whether the operator took the
// range; rows outside it may still come out (the caller drops them).
type RangeTaker interface {
	TakeRange(col int, lo, hi plan.Value) bool
}

// TakeRange passes the range on to the filter's input, whose columns it
// keeps (RangeTaker).
func (f *filterOp) TakeRange(col int, lo, hi plan.Value) bool {
	rt, ok := unmetered(f.in).(RangeTaker)
	return ok && rt.TakeRange(col, lo, hi)
}

// TakeRange passes the range on to the projection's input when output
// column col is a bare reference to one of its columns (RangeTaker).
func (p *projectOp) TakeRange(col int, lo, hi plan.Value) bool {
	if col < 0 || col >= len(p.exprs) || p.exprs[col].Op != plan.OpColumn {
		return false
	}
	rt, ok := unmetered(p.in).(RangeTaker)
	return ok && rt.TakeRange(p.exprs[col].Col, lo, hi)
}

// TakeRange passes the range on to the join's probe side when output
// column col is one of the probe side's columns (RangeTaker), before the
// join reads its probe side. Every output row that carries a probe
// column carries its probe row's value (or NULL, for a build row no probe
// row matched), so leaving out probe rows outside the range leaves out
// only output rows outside it, or turns a build row's match with them into
// a NULL one, which the caller drops alike: for every join type.
func (j *joinOp) TakeRange(col int, lo, hi plan.Value) bool {
	if j.buildOnly || col < 0 || col >= j.nProbeCols || j.cur != nil || j.probeDone {
		return false
	}
	rt, ok := unmetered(j.probe).(RangeTaker)
	return ok && rt.TakeRange(col, lo, hi)
}

// BloomHolder is a BloomTaker that reports whether it already tests a
// Bloom filter or a runtime filter on column col (the plan's, from a
// build stage's summary): a join then offers it no second one.
type BloomHolder interface {
	HasFilterOn(col int) bool
}

// HasFilterOn reports whether the filter tests a Bloom filter on col, or
// its input does (BloomHolder).
func (f *filterOp) HasFilterOn(col int) bool {
	if f.bloom != nil && f.bloom.col == col {
		return true
	}
	bh, ok := unmetered(f.in).(BloomHolder)
	return ok && bh.HasFilterOn(col)
}

// joinBloomMaxRows bounds the build sides a join offers a Bloom filter of
// to its probe scan (offerBloom): 16 bits a key, 2 MiB at most.
const joinBloomMaxRows = 1 << 20

// offerBloom hands the probe side's Parquet scan, when the probe side is
// one reached through filters only, the range of the build side's keys
// (the scan leaves unread the row groups whose statistics lie outside it)
// and a Bloom filter of them (the scan drops the rows no build key can
// match before it decodes their other columns): DuckDB's join filter
// pushdown, inside one task; across stages the runtime-filter rule does
// it. It is called once the build side is complete and before the first
// probe batch. Safe because the join drops every probe row whose key
// matches no build key (DropsUnmatchedProbe), a filter passes each row on
// by itself, no build key lies outside the range, and a Bloom filter never
// fails a key it holds; NULL keys, which the scan drops too, match
// nothing. Not offered from a part of the build side (a pass of a block
// nested-loop join, a grace partition), for a NOT IN join, or (the Bloom
// filter) where the scan already tests a filter on the key.
func (j *joinOp) offerBloom() {
	if !j.jt.DropsUnmatchedProbe() || j.nullAware || j.neverMatch || j.constKeys || j.blk != nil || j.level > 0 ||
		j.spilled != nil || j.buildRows == 0 || j.opts.NoJoinFilters {
		return
	}
	probe := unmetered(j.probe)
	for i := range min(len(j.lkeys), len(j.rkeys)) {
		lk, rk := j.lkeys[i], j.rkeys[i]
		if lk.Op != plan.OpColumn || rk.Op != plan.OpColumn || lk.Type != rk.Type || !plan.SummaryType(lk.Type) {
			continue
		}
		if rt, ok := probe.(RangeTaker); ok {
			if lo, hi, ok := keyRange(j.batches, rk.Col); ok && rt.TakeRange(lk.Col, lo, hi) {
				j.rangeOffered = true
			}
		}
		bt, ok := probe.(BloomTaker)
		if !ok || j.buildRows > joinBloomMaxRows {
			continue
		}
		if bh, ok := bt.(BloomHolder); ok && bh.HasFilterOn(lk.Col) {
			continue
		}
		if f, ok := keyBloom(j.batches, rk.Col, j.buildRows); ok && bt.TakeBloom(&plan.BloomProbe{Column: lk.Col, Bits: f.Bytes()}) {
			j.bloomOffered = true
		}
	}
}

// keyBloom is a Bloom filter of column col's non-NULL values in batches
// (rows of them), 16 bits a value; false for a layout it cannot hash.
func keyBloom(batches []arrow.RecordBatch, col, rows int) (kernel.Bloom, bool) {
	size := 32
	for size < 2*rows {
		size *= 2
	}
	f, err := kernel.NewBloom(size)
	if err != nil {
		return nil, false
	}
	var h []uint64
	for _, b := range batches {
		if col < 0 || col >= int(b.NumCols()) {
			return nil, false
		}
		c := b.Column(col)
		if cap(h) < c.Len() {
			h = make([]uint64, c.Len())
		}
		hh := h[:c.Len()]
		if err := kernel.HashKeys(c, hh); err != nil {
			return nil, false
		}
		for r, v := range hh {
			if c.IsValid(r) {
				f.Insert(v)
			}
		}
	}
	return f, true
}

// keyRange is the least and greatest non-NULL value of column col in
// batches, as values of its type (integers, dates, timestamps, decimals
// of up to 18 digits, strings); false when there is none or the layout
// is another.
func keyRange(batches []arrow.RecordBatch, col int) (lo, hi plan.Value, ok bool) {
	ints := func(n int, valid func(int) bool, v func(int) int64) {
		for r := range n {
			if !valid(r) {
				continue
			}
			x := v(r)
			if !ok {
				lo.I, hi.I, ok = x, x, true
			} else if x < lo.I {
				lo.I = x
			} else if x > hi.I {
				hi.I = x
			}
		}
	}
	for _, b := range batches {
		if col < 0 || col >= int(b.NumCols()) {
			return lo, hi, false
		}
		switch a := b.Column(col).(type) {
		case *array.Int64:
			ints(a.Len(), a.IsValid, a.Value)
		case *array.Date32:
			ints(a.Len(), a.IsValid, func(r int) int64 { return int64(a.Value(r)) })
		case *array.Timestamp:
			ints(a.Len(), a.IsValid, func(r int) int64 { return int64(a.Value(r)) })
		case *array.Decimal64:
			ints(a.Len(), a.IsValid, func(r int) int64 { return int64(a.Value(r)) })
		case *array.String:
			for r := range a.Len() {
				if !a.IsValid(r) {
					continue
				}
				x := a.Value(r)
				if !ok {
					lo.S, hi.S, ok = strings.Clone(x), strings.Clone(x), true
				} else if x < lo.S {
					lo.S = strings.Clone(x)
				} else if x > hi.S {
					hi.S = strings.Clone(x)
				}
			}
		default:
			return lo, hi, false
		}
	}
	return lo, hi, ok
}
