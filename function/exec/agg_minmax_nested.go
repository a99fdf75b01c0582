package exec

import (
	"bytes"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/shuffle/kernel"
)

// nestedMinMaxAcc is min's or max's state over nested values (LIST,
// STRUCT, MAP) in DuckDB's order, the order of their key encoding
// (kernel.AppendKey): per group the winning value's key and where the
// value is (a row of one of the chunks, compact copies of the winners of
// each batch). The partial state is the value itself, as for min and max
// of other types, so partial and final aggregation and the shuffle carry
// it as any nested column.
type nestedMinMaxAcc struct {
	isMax  bool
	keys   [][]byte
	has    []bool
	chunk  []int32 // per group: the chunk of its value
	row    []int32 // per group: the row of its value in the chunk
	chunks []arrow.Array
	rows   int // rows held by chunks
	bytes  int64
	live   int // groups with a value
}

func (a *nestedMinMaxAcc) Grow(n int) {
	a.keys, a.has = growTo(a.keys, n), growTo(a.has, n)
	a.chunk, a.row = growTo(a.chunk, n), growTo(a.row, n)
}

func (a *nestedMinMaxAcc) Bytes() int64 { return a.bytes + int64(cap(a.keys))*(24+10) }

func (a *nestedMinMaxAcc) Update(arg arrow.Array, gids []uint32, _ int) error {
	var pending map[uint32]int32 // group -> its new winner's row of arg
	var key []byte
	for i := 0; i < arg.Len(); i++ {
		if arg.IsNull(i) {
			continue
		}
		g := uint32(0)
		if gids != nil {
			g = gids[i]
		}
		var err error
		if key, err = kernel.AppendKey(key[:0], arg, i); err != nil {
			return err
		}
		if a.has[g] {
			c := bytes.Compare(key, a.keys[g])
			if a.isMax && c <= 0 || !a.isMax && c >= 0 {
				continue
			}
		} else {
			a.has[g] = true
			a.live++
		}
		a.bytes += int64(len(key) - len(a.keys[g]))
		a.keys[g] = append(a.keys[g][:0], key...)
		if pending == nil {
			pending = map[uint32]int32{}
		}
		pending[g] = int32(i)
	}
	if len(pending) == 0 {
		return nil
	}
	bi, ri := make([]int32, 0, len(pending)), make([]int32, 0, len(pending))
	for g, r := range pending {
		a.chunk[g], a.row[g] = int32(len(a.chunks)), int32(len(ri))
		bi, ri = append(bi, 0), append(ri, r)
	}
	c, err := kernel.TakeMulti(memory.DefaultAllocator, arg.DataType(), []arrow.Array{arg}, bi, ri)
	if err != nil {
		return err
	}
	a.add(c)
	if a.rows > 2*a.live+4096 {
		return a.compact()
	}
	return nil
}

func (a *nestedMinMaxAcc) add(c arrow.Array) {
	a.chunks = append(a.chunks, c)
	a.rows += c.Len()
	a.bytes += chunkBytes(c)
}

// compact copies the live values into one chunk, dropping the values
// that lost since.
func (a *nestedMinMaxAcc) compact() error {
	bi, ri := make([]int32, 0, a.live), make([]int32, 0, a.live)
	for g, h := range a.has {
		if h {
			bi, ri = append(bi, a.chunk[g]), append(ri, a.row[g])
		}
	}
	c, err := kernel.TakeMulti(memory.DefaultAllocator, a.chunks[0].DataType(), a.chunks, bi, ri)
	if err != nil {
		return err
	}
	for _, old := range a.chunks {
		a.bytes -= chunkBytes(old)
		old.Release()
	}
	a.chunks, a.rows = nil, 0
	k := int32(0)
	for g, h := range a.has {
		if h {
			a.chunk[g], a.row[g] = 0, k
			k++
		}
	}
	a.add(c)
	return nil
}

func chunkBytes(c arrow.Array) int64 {
	var n int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
		for _, k := range d.Children() {
			walk(k)
		}
	}
	walk(c.Data())
	return n
}

func (a *nestedMinMaxAcc) Merge(st []arrow.Array, gids []uint32) error {
	if isNullArray(st[0]) {
		return nil
	}
	return a.Update(st[0], gids, st[0].Len())
}

func (a *nestedMinMaxAcc) States(mem memory.Allocator, ts []arrow.DataType, lo, hi int) ([]arrow.Array, error) {
	r, err := a.Result(mem, ts[0], lo, hi)
	if err != nil {
		return nil, err
	}
	return []arrow.Array{r}, nil
}

func (a *nestedMinMaxAcc) Result(mem memory.Allocator, t arrow.DataType, lo, hi int) (arrow.Array, error) {
	bi, ri := make([]int32, hi-lo), make([]int32, hi-lo)
	for i := range bi {
		g := lo + i
		bi[i], ri[i] = -1, 0
		if a.has[g] {
			bi[i], ri[i] = a.chunk[g], a.row[g]
		}
	}
	return kernel.TakeMulti(mem, t, a.chunks, bi, ri)
}
