package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
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
