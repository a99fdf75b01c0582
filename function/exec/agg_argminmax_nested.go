package exec

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// nestedArgAcc is arg_min's or arg_max's state when the value or the key
// is nested (LIST, STRUCT, MAP): keys compare in DuckDB's order, the order
// of their key encoding (kernel.AppendKey), as min and max of nested
// values do (agg_minmax_nested.go). Per group it holds the winning key's
// encoding and where the winning row's value and key are (a row of one of
// the chunks: compact copies of each batch's winners). The partial state
// is the value and the key as columns, as for other types; ties keep the
// first row seen.
type nestedArgAcc struct {
	isMax, keepNull bool
	vt, kt          arrow.DataType

	keys       [][]byte
	has        []bool
	chunk, row []int32 // per group: the chunk and row of its winner
	vchunks    []arrow.Array
	kchunks    []arrow.Array
	rows, live int
	bytes      int64
	scratch    []byte
}

var _ MultiAccumulator = (*nestedArgAcc)(nil)

func newNestedArgAcc(vt, kt plan.DataType, isMax, keepNull bool) *nestedArgAcc {
	return &nestedArgAcc{isMax: isMax, keepNull: keepNull, vt: vt.Arrow(), kt: kt.Arrow()}
}

func (a *nestedArgAcc) Grow(n int) {
	a.keys, a.has = growTo(a.keys, n), growTo(a.has, n)
	a.chunk, a.row = growTo(a.chunk, n), growTo(a.row, n)
}

func (a *nestedArgAcc) Bytes() int64 { return a.bytes + int64(cap(a.keys))*(24+10) }

func (a *nestedArgAcc) Update(arrow.Array, []uint32, int) error {
	return fmt.Errorf("takes two arguments")
}

func (a *nestedArgAcc) UpdateArgs(args []arrow.Array, gids []uint32, n int) error {
	if len(args) != 2 {
		return fmt.Errorf("takes two arguments, not %d", len(args))
	}
	return a.fold(args[0], args[1], gids)
}

func (a *nestedArgAcc) Merge(st []arrow.Array, gids []uint32) error {
	return a.fold(st[0], st[1], gids)
}

func (a *nestedArgAcc) fold(val, key arrow.Array, gids []uint32) error {
	valNull := isNullArray(val)
	if isNullArray(key) || valNull && !a.keepNull {
		return nil
	}
	var pending map[uint32]int32 // group -> its new winner's row
	for i := 0; i < key.Len(); i++ {
		if key.IsNull(i) || !a.keepNull && val.IsNull(i) {
			continue
		}
		g := uint32(0)
		if gids != nil {
			g = gids[i]
		}
		var err error
		if a.scratch, err = kernel.AppendKey(a.scratch[:0], key, i); err != nil {
			return err
		}
		if a.has[g] {
			c := bytes.Compare(a.scratch, a.keys[g])
			if a.isMax && c <= 0 || !a.isMax && c >= 0 {
				continue // not better; a tie keeps the first row seen
			}
		} else {
			a.has[g] = true
			a.live++
		}
		a.bytes += int64(len(a.scratch) - len(a.keys[g]))
		a.keys[g] = append(a.keys[g][:0], a.scratch...)
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
		a.chunk[g], a.row[g] = int32(len(a.vchunks)), int32(len(ri))
		bi, ri = append(bi, 0), append(ri, r)
	}
	var vc arrow.Array
	if valNull {
		vc = array.MakeArrayOfNull(memory.DefaultAllocator, a.vt, len(ri))
	} else {
		var err error
		if vc, err = kernel.TakeMulti(memory.DefaultAllocator, a.vt, []arrow.Array{val}, bi, ri); err != nil {
			return err
		}
	}
	kc, err := kernel.TakeMulti(memory.DefaultAllocator, a.kt, []arrow.Array{key}, bi, ri)
	if err != nil {
		vc.Release()
		return err
	}
	a.add(vc, kc)
	if a.rows > 2*a.live+4096 {
		return a.compact()
	}
	return nil
}

func (a *nestedArgAcc) add(v, k arrow.Array) {
	a.vchunks, a.kchunks = append(a.vchunks, v), append(a.kchunks, k)
	a.rows += v.Len()
	a.bytes += chunkBytes(v) + chunkBytes(k)
}

// compact copies the live winners into one chunk each, dropping the rows
// that lost since.
func (a *nestedArgAcc) compact() error {
	bi, ri := make([]int32, 0, a.live), make([]int32, 0, a.live)
	for g, h := range a.has {
		if h {
			bi, ri = append(bi, a.chunk[g]), append(ri, a.row[g])
		}
	}
	v, err := kernel.TakeMulti(memory.DefaultAllocator, a.vt, a.vchunks, bi, ri)
	if err != nil {
		return err
	}
	k, err := kernel.TakeMulti(memory.DefaultAllocator, a.kt, a.kchunks, bi, ri)
	if err != nil {
		v.Release()
		return err
	}
	for _, cs := range [][]arrow.Array{a.vchunks, a.kchunks} {
		for _, c := range cs {
			a.bytes -= chunkBytes(c)
			c.Release()
		}
	}
	a.vchunks, a.kchunks, a.rows = nil, nil, 0
	n := int32(0)
	for g, h := range a.has {
		if h {
			a.chunk[g], a.row[g] = 0, n
			n++
		}
	}
	a.add(v, k)
	return nil
}

// take gathers each group's winning row of chunks (NULL for a group
// without one).
func (a *nestedArgAcc) take(mem memory.Allocator, t arrow.DataType, chunks []arrow.Array, lo, hi int) (arrow.Array, error) {
	if len(chunks) == 0 {
		return array.MakeArrayOfNull(mem, t, hi-lo), nil
	}
	bi, ri := make([]int32, hi-lo), make([]int32, hi-lo)
	for i := range bi {
		g := lo + i
		bi[i], ri[i] = -1, 0
		if a.has[g] {
			bi[i], ri[i] = a.chunk[g], a.row[g]
		}
	}
	return kernel.TakeMulti(mem, t, chunks, bi, ri)
}

func (a *nestedArgAcc) States(mem memory.Allocator, ts []arrow.DataType, lo, hi int) ([]arrow.Array, error) {
	v, err := a.take(mem, ts[0], a.vchunks, lo, hi)
	if err != nil {
		return nil, err
	}
	k, err := a.take(mem, ts[1], a.kchunks, lo, hi)
	if err != nil {
		v.Release()
		return nil, err
	}
	return []arrow.Array{v, k}, nil
}

func (a *nestedArgAcc) Result(mem memory.Allocator, t arrow.DataType, lo, hi int) (arrow.Array, error) {
	return a.take(mem, t, a.vchunks, lo, hi)
}
