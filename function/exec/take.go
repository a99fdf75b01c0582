package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/shuffle/kernel"
)

// The typed take/gather is kernel.Take, shared with the shuffle writer;
// these wrappers admit engine types only.

// take gathers rows idx of a into a new array (typed per layout).
func take(mem memory.Allocator, a arrow.Array, idx []int32) (arrow.Array, error) {
	if d, ok := a.(*array.Dictionary); ok {
		// a dictionary key on its way to an aggregation (hashagg_dict.go):
		// the indices are gathered, the dictionary kept
		ix, err := kernel.Take(mem, d.Indices(), idx)
		if err != nil {
			return nil, err
		}
		defer ix.Release()
		return array.NewDictionaryArray(d.DataType(), ix, d.Dictionary()), nil
	}
	if _, err := kindOf(a.DataType()); err != nil {
		return nil, err
	}
	return kernel.Take(mem, a, idx)
}

// takeNullable is take where a negative index yields NULL.
func takeNullable(mem memory.Allocator, a arrow.Array, idx []int32) (arrow.Array, error) {
	if _, err := kindOf(a.DataType()); err != nil {
		return nil, err
	}
	return kernel.TakeNullable(mem, a, idx)
}

// takeRecord gathers rows idx of every column of rec.
func takeRecord(mem memory.Allocator, rec arrow.RecordBatch, idx []int32) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		t, err := take(mem, c, idx)
		if err != nil {
			releaseAll(cols)
			return nil, fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
		}
		cols[i] = t
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(len(idx)))
	releaseAll(cols)
	return out, nil
}

// takeMulti gathers rows (src[bi[i]], ri[i]) from several arrays of the same
// type into one array.
func takeMulti(mem memory.Allocator, t arrow.DataType, srcs []arrow.Array, bi, ri []int32) (arrow.Array, error) {
	return takeMultiNullable(mem, t, srcs, bi, ri)
}

// takeMultiNullable is takeMulti where a negative bi[i] yields NULL (srcs
// may then be empty).
func takeMultiNullable(mem memory.Allocator, t arrow.DataType, srcs []arrow.Array, bi, ri []int32) (arrow.Array, error) {
	k, err := kindOf(t)
	if err != nil {
		return nil, err
	}
	if k == kNull {
		return array.NewNull(len(bi)), nil
	}
	for _, a := range srcs {
		if a.DataType().ID() == arrow.NULL {
			return nil, fmt.Errorf("take: mixed null and %s sources", t)
		}
	}
	return kernel.TakeMulti(mem, t, srcs, bi, ri)
}
