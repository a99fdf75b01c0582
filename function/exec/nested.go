package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Nested columns (LIST, MAP, STRUCT) as read from a file are converted to
// the engine layout of their type at every level: the children go through
// toEngine as top-level columns do (integers widen to int64, decimals to
// their engine width, strings to 32-bit offsets, ...), lists get 32-bit
// offsets from 0, and the Arrow type becomes exactly plan.DataType.Arrow,
// so kernels and the shuffle see one layout per engine type.

// nestedToEngine converts a to nested engine type t.
func nestedToEngine(mem memory.Allocator, a arrow.Array, t plan.DataType) (arrow.Array, error) {
	return nestedToEngineOpt(mem, a, t, false)
}

// toEngineSparse is toEngine for a nested value read with only some of
// its leaves (plan.Scan.Fields): a struct field the array lacks is NULL.
func toEngineSparse(mem memory.Allocator, a arrow.Array, t plan.DataType) (arrow.Array, error) {
	if t.IsNested() {
		return nestedToEngineOpt(mem, a, t, true)
	}
	return toEngine(mem, a, t)
}

func nestedToEngineOpt(mem memory.Allocator, a arrow.Array, t plan.DataType, sparse bool) (arrow.Array, error) {
	conv := toEngine
	if sparse {
		conv = toEngineSparse
	}
	at := t.Arrow()
	n := a.Len()
	d := a.Data()
	switch t.ID {
	case plan.List, plan.Map:
		var lo, hi int64
		obuf, offs := newFixed[int32](mem, n+1)
		switch a.DataType().ID() {
		case arrow.LIST, arrow.MAP:
			src := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+n+1]
			lo, hi = int64(src[0]), int64(src[n])
			for i, o := range src {
				offs[i] = o - src[0]
			}
		case arrow.LARGE_LIST:
			src := arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+n+1]
			lo, hi = src[0], src[n]
			if hi-lo > 1<<31-1 {
				obuf.Release()
				return nil, fmt.Errorf("list column has more than 2^31 elements in one batch")
			}
			for i, o := range src {
				offs[i] = int32(o - lo)
			}
		default:
			obuf.Release()
			return nil, fmt.Errorf("column of type %s where %s is expected", a.DataType(), t)
		}
		vd := array.NewSliceData(d.Children()[0], lo, hi)
		vals := array.MakeFromData(vd)
		vd.Release()
		var elems arrow.Array
		var err error
		if t.ID == plan.List {
			elems, err = conv(mem, vals, t.Elem())
		} else {
			elems, err = mapEntriesToEngine(mem, vals, t, at.(*arrow.MapType), sparse)
		}
		vals.Release()
		if err != nil {
			obuf.Release()
			return nil, err
		}
		defer elems.Release()
		return makeNested(at, n, copyValidity(mem, a), []*memory.Buffer{obuf}, []arrow.Array{elems}), nil
	case plan.Struct:
		st, ok := a.DataType().(*arrow.StructType)
		if !ok {
			return nil, fmt.Errorf("column of type %s where %s is expected", a.DataType(), t)
		}
		fs := t.Children()
		if st.NumFields() != len(fs) && !sparse {
			return nil, fmt.Errorf("struct of %d fields where %s is expected", st.NumFields(), t)
		}
		kids := make([]arrow.Array, len(fs))
		defer releaseAll(kids)
		for i, f := range fs {
			k := i
			if sparse {
				// The fields read, by name; the others NULL.
				if k = structFieldFold(st, f.Name); k < 0 {
					kids[i] = array.MakeArrayOfNull(mem, f.Type.Arrow(), n)
					continue
				}
			}
			cd := array.NewSliceData(d.Children()[k], int64(d.Offset()), int64(d.Offset()+n))
			ca := array.MakeFromData(cd)
			cd.Release()
			c, err := conv(mem, ca, f.Type)
			ca.Release()
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			kids[i] = c
		}
		return makeNested(at, n, copyValidity(mem, a), nil, kids), nil
	}
	return nil, fmt.Errorf("%s is not a nested type", t)
}

// mapEntriesToEngine converts the key/value struct array of a map. A
// map read with its keys only (sparse, pruneMaps) gets NULL values.
func mapEntriesToEngine(mem memory.Allocator, entries arrow.Array, t plan.DataType, at *arrow.MapType, sparse bool) (arrow.Array, error) {
	d := entries.Data()
	if len(d.Children()) != 2 && !(sparse && len(d.Children()) == 1) {
		return nil, fmt.Errorf("map entries of type %s", entries.DataType())
	}
	kids := make([]arrow.Array, 2)
	defer releaseAll(kids)
	for i, ct := range []plan.DataType{t.Key(), t.Value()} {
		if i >= len(d.Children()) {
			kids[i] = makeNulls(mem, ct.Arrow(), entries.Len())
			continue
		}
		cd := array.NewSliceData(d.Children()[i], int64(d.Offset()), int64(d.Offset()+entries.Len()))
		ca := array.MakeFromData(cd)
		cd.Release()
		c, err := toEngine(mem, ca, ct)
		ca.Release()
		if err != nil {
			return nil, err
		}
		kids[i] = c
	}
	return makeNested(at.Elem(), entries.Len(), nil, nil, kids), nil
}

// makeNested assembles a nested array of type t from its validity and
// other buffers (taken over) and child arrays (retained).
func makeNested(t arrow.DataType, n int, valid *memory.Buffer, bufs []*memory.Buffer, kids []arrow.Array) arrow.Array {
	nulls := 0
	if valid != nil {
		nulls = array.UnknownNullCount
	}
	all := append([]*memory.Buffer{valid}, bufs...)
	cd := make([]arrow.ArrayData, len(kids))
	for i, k := range kids {
		cd[i] = k.Data()
	}
	d := array.NewData(t, n, all, cd, nulls, 0)
	out := array.MakeFromData(d)
	d.Release()
	for _, b := range all {
		if b != nil {
			b.Release()
		}
	}
	return out
}
