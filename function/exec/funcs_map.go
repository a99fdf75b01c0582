package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// Map constructors, with DuckDB's semantics: map(keys, values) pairs two
// lists element by element (MAP {k: v, ...} is map([k, ...], [v, ...]));
// map_from_entries takes a list of two-field structs (key, value by
// position, whatever their names). A NULL list gives a NULL map; lists of
// other lengths, a NULL key (or a NULL entry) and a repeated key fail, as
// in DuckDB. map_entries is the inverse: a list of {key, value} structs.

func mapFunctions() []*ScalarFunction {
	return []*ScalarFunction{
		{Name: "map", Nested: true,
			Doc: "a map of the keys to the values, pairing the two lists by position: map([k1, k2], [v1, v2]); map() is the empty map. Also MAP {k1: v1, k2: v2}",
			Signatures: []Signature{
				{Params: nil, Returns: plan.MapOf(plan.NullType, plan.NullType)},
				{Params: []plan.TypeID{plan.List, plan.List}, Return: func(a []plan.DataType) plan.DataType {
					return plan.MapOf(a[0].Elem(), a[1].Elem())
				}, ReturnDoc: "a map of the first list's element type to the second's"}},
			Kernel: mapKernel},
		{Name: "map_from_entries", Nested: true,
			Doc: "a map of a list of two-field structs (key, value): map_from_entries([{'k': 1, 'v': 'a'}])",
			Signatures: []Signature{{Params: []plan.TypeID{plan.List}, Return: func(a []plan.DataType) plan.DataType {
				if kv, ok := EntryStruct(a[0]); ok {
					return plan.MapOf(kv[0].Type, kv[1].Type)
				}
				return plan.NullType
			}, ReturnDoc: "a map of the struct's first field's type to its second's"}},
			Kernel: mapFromEntriesKernel},
		{Name: "map_entries", Nested: true, Doc: "the entries of a map, as a list of {key, value} structs",
			Signatures: []Signature{{Params: []plan.TypeID{plan.Map}, Return: func(a []plan.DataType) plan.DataType {
				return MapEntriesType(a[0])
			}, ReturnDoc: "a list of STRUCT(key, value)"}},
			Kernel: mapPartKernel(2)},
	}
}

// EntryStruct reports whether list type t has elements that are structs
// of two fields (map_from_entries' argument), and returns them.
func EntryStruct(t plan.DataType) ([]plan.Field, bool) {
	if t.ID != plan.List || t.Elem().ID != plan.Struct {
		return nil, false
	}
	fs := t.Elem().Children()
	return fs, len(fs) == 2
}

// MapEntriesType is the type of map_entries(m) for a map of type t.
func MapEntriesType(t plan.DataType) plan.DataType {
	return plan.ListOf(plan.StructOf([]plan.Field{{Name: "key", Type: t.Key()}, {Name: "value", Type: t.Value()}}))
}

// mapKernel builds map(keys, values).
func mapKernel(c *Call) (arrow.Array, error) {
	mt := c.Type.Arrow().(*arrow.MapType)
	if len(c.Args) == 0 {
		obuf, _ := newFixed[int32](c.Mem, c.N+1)
		k, v := makeNulls(c.Mem, mt.KeyType(), 0), makeNulls(c.Mem, mt.ItemType(), 0)
		defer k.Release()
		defer v.Release()
		return buildMap(c.Mem, mt, c.N, nil, obuf, k, v), nil
	}
	ka, err := datumArray(c, c.Args[0])
	if err != nil {
		return nil, err
	}
	defer ka.Release()
	va, err := datumArray(c, c.Args[1])
	if err != nil {
		return nil, err
	}
	defer va.Release()
	kl, ok1 := ka.(*array.List)
	vl, ok2 := va.(*array.List)
	if !ok1 || !ok2 {
		return makeNulls(c.Mem, mt, c.N), nil
	}
	obuf, offs := newFixed[int32](c.Mem, c.N+1)
	var kidx, vidx []int32
	for i := 0; i < c.N; i++ {
		offs[i+1] = offs[i]
		if kl.IsNull(i) || vl.IsNull(i) {
			continue
		}
		klo, khi := kl.ValueOffsets(i)
		vlo, vhi := vl.ValueOffsets(i)
		if khi-klo != vhi-vlo {
			obuf.Release()
			return nil, plan.Errorf(plan.CodeRuntime, "map: the key list does not align with the value list (%d keys, %d values)", khi-klo, vhi-vlo)
		}
		for j := klo; j < khi; j++ {
			kidx = append(kidx, int32(j))
		}
		for j := vlo; j < vhi; j++ {
			vidx = append(vidx, int32(j))
		}
		offs[i+1] = int32(len(kidx))
	}
	return assembleMap(c.Mem, mt, c.N, andValidity(c.Mem, c.N, kl, vl), obuf, kl.ListValues(), kidx, vl.ListValues(), vidx)
}

// mapFromEntriesKernel builds map_from_entries(list of {key, value}).
func mapFromEntriesKernel(c *Call) (arrow.Array, error) {
	mt := c.Type.Arrow().(*arrow.MapType)
	la, err := datumArray(c, c.Args[0])
	if err != nil {
		return nil, err
	}
	defer la.Release()
	l, ok := la.(*array.List)
	if !ok {
		return makeNulls(c.Mem, mt, c.N), nil
	}
	st, ok := l.ListValues().(*array.Struct)
	if !ok || st.NumField() != 2 {
		return nil, fmt.Errorf("map_from_entries of %s", la.DataType())
	}
	obuf, offs := newFixed[int32](c.Mem, c.N+1)
	var idx []int32
	for i := 0; i < c.N; i++ {
		offs[i+1] = offs[i]
		if l.IsNull(i) {
			continue
		}
		lo, hi := l.ValueOffsets(i)
		for j := lo; j < hi; j++ {
			if st.IsNull(int(j)) {
				obuf.Release()
				return nil, plan.Errorf(plan.CodeRuntime, "map_from_entries: an entry is NULL (map keys cannot be NULL)")
			}
			idx = append(idx, int32(j))
		}
		offs[i+1] = int32(len(idx))
	}
	return assembleMap(c.Mem, mt, c.N, copyValidity(c.Mem, l), obuf, st.Field(0), idx, st.Field(1), idx)
}

// assembleMap gathers the keys (keys[kidx]) and values (vals[vidx]) of
// a map of type mt whose row offsets are obuf, checking that no key is
// NULL and no map repeats one. valid and obuf are taken over.
func assembleMap(mem memory.Allocator, mt *arrow.MapType, n int, valid, obuf *memory.Buffer, keys arrow.Array, kidx []int32, vals arrow.Array, vidx []int32) (arrow.Array, error) {
	release := func() {
		obuf.Release()
		if valid != nil {
			valid.Release()
		}
	}
	gather := func(src arrow.Array, idx []int32, t arrow.DataType) (arrow.Array, error) {
		if len(idx) == 0 || src.DataType().ID() == arrow.NULL {
			return makeNulls(mem, t, len(idx)), nil
		}
		return takeNullable(mem, src, idx)
	}
	k, err := gather(keys, kidx, mt.KeyType())
	if err != nil {
		release()
		return nil, err
	}
	defer k.Release()
	if k.NullN() > 0 {
		release()
		return nil, plan.Errorf(plan.CodeRuntime, "map: a key is NULL (map keys cannot be NULL)")
	}
	v, err := gather(vals, vidx, mt.ItemType())
	if err != nil {
		release()
		return nil, err
	}
	defer v.Release()
	m := buildMap(mem, mt, n, valid, obuf, k, v).(*array.Map)
	if err := distinctKeys(m); err != nil {
		m.Release()
		return nil, err
	}
	return m, nil
}

// buildMap assembles a map array from its validity and offsets (taken
// over) and its keys and values (retained).
func buildMap(mem memory.Allocator, mt *arrow.MapType, n int, valid, obuf *memory.Buffer, k, v arrow.Array) arrow.Array {
	entries := makeNested(mt.Elem(), k.Len(), nil, nil, []arrow.Array{k, v})
	defer entries.Release()
	return makeNested(mt, n, valid, []*memory.Buffer{obuf}, []arrow.Array{entries})
}

// distinctKeys fails (SL100) when a map of m holds a key twice, as
// DuckDB's map constructors do.
func distinctKeys(m *array.Map) error {
	rep, err := repeatedKey(m)
	if err == nil && rep {
		err = plan.Errorf(plan.CodeRuntime, "map: map keys must be unique")
	}
	return err
}

// repeatedKey reports whether a map of m holds a key twice.
func repeatedKey(m *array.Map) (bool, error) {
	keys := m.Keys()
	var k []byte
	seen := map[string]bool{}
	for i := 0; i < m.Len(); i++ {
		if m.IsNull(i) {
			continue
		}
		lo, hi := m.ValueOffsets(i)
		if hi-lo < 2 {
			continue
		}
		clear(seen)
		for j := lo; j < hi; j++ {
			var err error
			if k, err = kernel.AppendKey(k[:0], keys, int(j)); err != nil {
				return false, err
			}
			if seen[string(k)] {
				return true, nil
			}
			seen[string(k)] = true
		}
	}
	return false, nil
}
