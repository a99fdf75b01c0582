package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Functions over LIST, STRUCT and MAP values, with DuckDB's semantics:
// list indexes are 1-based, negative from the end, NULL out of range;
// struct fields match by name regardless of case; m['k'] is the value
// (map_extract_value) while map_extract and element_at give a list of it,
// as DuckDB 1.5 does. Element results are gathered with the typed take,
// so elements of any type (nested too) come out in the engine's layout.

// ElemType is a parameter that takes the element type of the first
// argument (a list's element, a map's key): the argument is cast to it.
const ElemType plan.TypeID = "the element or key type"

func nestedFunctions() []*ScalarFunction {
	i64 := plan.Int64Type
	elem := func(args []plan.DataType) plan.DataType { return args[0].Elem() }
	value := func(args []plan.DataType) plan.DataType { return args[0].Value() }
	return []*ScalarFunction{
		{Name: "list_extract", Aliases: []string{"list_element", "array_extract"}, Nested: true,
			Doc:        "the element at a 1-based index (negative: from the end); NULL out of range. Also l[i]",
			Signatures: []Signature{{Params: []plan.TypeID{plan.List, plan.Int64}, Return: elem, ReturnDoc: "the element type"}},
			Kernel:     listExtractKernel},
		{Name: "array_length", Nested: true, Doc: "the number of elements of a list (length and len too)",
			Signatures: []Signature{{Params: []plan.TypeID{plan.List}, Returns: i64}}, Kernel: listLengthKernel},
		{Name: "list_contains", Aliases: []string{"array_contains", "list_has", "array_has"}, Nested: true, Nulls: NullCustom,
			Doc:        "whether the list holds the value (NULL elements never match; a NULL list or value gives NULL)",
			Signatures: []Signature{{Params: []plan.TypeID{plan.List, ElemType}, Returns: plan.BoolType}}, Kernel: listContainsKernel},
		{Name: "map_extract_value", Nested: true, Doc: "the value of a key in a map, NULL when it has none. Also m[k]",
			Signatures: []Signature{{Params: []plan.TypeID{plan.Map, ElemType}, Return: value, ReturnDoc: "the value type"}},
			Kernel:     mapExtractKernel(false)},
		{Name: "map_extract", Aliases: []string{"element_at"}, Nested: true,
			Doc:        "a list of the value of a key in a map: [v], or [] when it has none (DuckDB 1.5)",
			Signatures: []Signature{{Params: []plan.TypeID{plan.Map, ElemType}, Return: func(a []plan.DataType) plan.DataType { return plan.ListOf(a[0].Value()) }, ReturnDoc: "a list of the value type"}},
			Kernel:     mapExtractKernel(true)},
		{Name: "map_keys", Nested: true, Doc: "the keys of a map, as a list",
			Signatures: []Signature{{Params: []plan.TypeID{plan.Map}, Return: func(a []plan.DataType) plan.DataType { return plan.ListOf(a[0].Key()) }, ReturnDoc: "a list of the key type"}},
			Kernel:     mapPartKernel(0)},
		{Name: "map_values", Nested: true, Doc: "the values of a map, as a list",
			Signatures: []Signature{{Params: []plan.TypeID{plan.Map}, Return: func(a []plan.DataType) plan.DataType { return plan.ListOf(a[0].Value()) }, ReturnDoc: "a list of the value type"}},
			Kernel:     mapPartKernel(1)},
		{Name: "cardinality", Nested: true, Doc: "the number of entries of a map",
			Signatures: []Signature{{Params: []plan.TypeID{plan.Map}, Returns: i64}}, Kernel: listLengthKernel},
		{Name: "struct_extract", Nested: true, Doc: "the field of a struct named by a constant (regardless of case). Also s.f and s['f']",
			Signatures: []Signature{{Params: []plan.TypeID{plan.Struct, plan.String}, Return: func([]plan.DataType) plan.DataType { return plan.NullType }, ReturnDoc: "the field's type"}},
			Kernel:     structExtractKernel},
	}
}

// listOf returns a's list-like view: offsets and values (ok false: a is a
// NULL literal).
func listOf(d Datum) (offs func(i int) (int64, int64), vals arrow.Array, ok bool) {
	switch a := d.arr.(type) {
	case *array.List:
		return a.ValueOffsets, a.ListValues(), true
	case *array.Map:
		return a.ValueOffsets, a.ListValues(), true
	}
	return nil, nil, false
}

func listExtractKernel(c *Call) (arrow.Array, error) {
	offs, vals, ok := listOf(c.Args[0])
	if !ok {
		return makeNulls(c.Mem, c.Type.Arrow(), c.N), nil
	}
	idx := make([]int32, c.N)
	for i := range idx {
		idx[i] = -1
		if c.Args[0].Null(i) || c.Args[1].Null(i) {
			continue
		}
		lo, hi := offs(i)
		k, n := c.Args[1].Int(i), hi-lo
		switch {
		case k > 0 && k <= n:
			idx[i] = int32(lo + k - 1)
		case k < 0 && -k <= n:
			idx[i] = int32(hi + k)
		}
	}
	return takeNullable(c.Mem, vals, idx)
}

func listLengthKernel(c *Call) (arrow.Array, error) {
	offs, _, ok := listOf(c.Args[0])
	if !ok {
		return makeNulls(c.Mem, c.Type.Arrow(), c.N), nil
	}
	return eachRow(c, func(i int, o *out) error {
		lo, hi := offs(i)
		o.i64(hi - lo)
		return nil
	})
}

// valueAt is row i of d as a Value.
func valueAt(d Datum, i int) plan.Value {
	if d.arr == nil {
		return d.lit
	}
	return scalarAt(d.arr, i)
}

// findIn returns the position in vals[lo:hi) of the first element equal
// to v (of type t), or -1.
func findIn(vals arrow.Array, lo, hi int64, t plan.DataType, v plan.Value) int64 {
	for j := lo; j < hi; j++ {
		if !vals.IsNull(int(j)) && plan.CompareValues(t, scalarAt(vals, int(j)), v) == 0 {
			return j
		}
	}
	return -1
}

func listContainsKernel(c *Call) (arrow.Array, error) {
	offs, vals, ok := listOf(c.Args[0])
	if !ok {
		return makeNulls(c.Mem, c.Type.Arrow(), c.N), nil
	}
	if vals.DataType().ID() != arrow.NULL {
		if _, err := kindOf(vals.DataType()); err != nil || layoutOf(vals) == kNested {
			return nil, fmt.Errorf("list_contains over a list of %s", vals.DataType())
		}
	}
	t := c.Args[1].t
	return eachRow(c, func(i int, o *out) error {
		lo, hi := offs(i)
		o.boolean(findIn(vals, lo, hi, t, valueAt(c.Args[1], i)) >= 0)
		return nil
	})
}

// mapExtractKernel looks a key up: its value (asList false) or a list of
// it, empty when the key is absent (asList).
func mapExtractKernel(asList bool) Kernel {
	return func(c *Call) (arrow.Array, error) {
		m, ok := c.Args[0].arr.(*array.Map)
		if !ok {
			return makeNulls(c.Mem, c.Type.Arrow(), c.N), nil
		}
		t := c.Args[1].t
		idx := make([]int32, 0, c.N)
		var listOffs []int32
		if asList {
			listOffs = append(listOffs, 0)
		}
		for i := 0; i < c.N; i++ {
			found := int64(-1)
			if !m.IsNull(i) && !c.Args[1].Null(i) {
				lo, hi := m.ValueOffsets(i)
				found = findIn(m.Keys(), lo, hi, t, valueAt(c.Args[1], i))
			}
			switch {
			case !asList:
				idx = append(idx, int32(found))
			case found >= 0:
				idx = append(idx, int32(found))
				listOffs = append(listOffs, int32(len(idx)))
			default:
				listOffs = append(listOffs, int32(len(idx)))
			}
		}
		vals, err := takeNullable(c.Mem, m.Items(), idx)
		if err != nil || !asList {
			return vals, err
		}
		defer vals.Release()
		obuf, o := newFixed[int32](c.Mem, c.N+1)
		copy(o, listOffs)
		return makeNested(c.Type.Arrow(), c.N, nullsOf(c.Mem, m, c.Args[1]), []*memory.Buffer{obuf}, []arrow.Array{vals}), nil
	}
}

// nullsOf is the validity of rows where neither the map nor the key is
// NULL (nil: none is).
func nullsOf(mem memory.Allocator, m arrow.Array, key Datum) *memory.Buffer {
	if key.arr == nil {
		if key.lit.Null {
			b, _ := newBitmap(mem, m.Len())
			return b
		}
		return copyValidity(mem, m)
	}
	return andValidity(mem, m.Len(), m, key.arr)
}

// mapPartKernel gives a map's keys (part 0), values (part 1) or entries
// (part 2) as a list.
func mapPartKernel(part int) Kernel {
	return func(c *Call) (arrow.Array, error) {
		m, ok := c.Args[0].arr.(*array.Map)
		if !ok {
			return makeNulls(c.Mem, c.Type.Arrow(), c.N), nil
		}
		src := m.Keys()
		switch part {
		case 1:
			src = m.Items()
		case 2:
			// map_entries: the entries as {key, value} structs (whose
			// key field is nullable, unlike a map's).
			st := c.Type.Arrow().(*arrow.ListType).Elem()
			src = makeNested(st, m.Keys().Len(), nil, nil, []arrow.Array{m.Keys(), m.Items()})
			defer src.Release()
		}
		obuf, o := newFixed[int32](c.Mem, c.N+1)
		var idx []int32
		for i := 0; i < c.N; i++ {
			if !m.IsNull(i) {
				lo, hi := m.ValueOffsets(i)
				for j := lo; j < hi; j++ {
					idx = append(idx, int32(j))
				}
			}
			o[i+1] = int32(len(idx))
		}
		vals, err := takeNullable(c.Mem, src, idx)
		if err != nil {
			obuf.Release()
			return nil, err
		}
		defer vals.Release()
		return makeNested(c.Type.Arrow(), c.N, copyValidity(c.Mem, m), []*memory.Buffer{obuf}, []arrow.Array{vals}), nil
	}
}

// structExtractKernel returns a struct's field named by the constant
// second argument: the child array, with the struct's NULLs.
func structExtractKernel(c *Call) (arrow.Array, error) {
	s, ok := c.Args[0].arr.(*array.Struct)
	if !ok || !c.Args[1].Const() {
		return makeNulls(c.Mem, c.Type.Arrow(), c.N), nil
	}
	st := s.DataType().(*arrow.StructType)
	name, k := c.Args[1].lit.S, -1
	for j, f := range st.Fields() {
		if f.Name == name {
			k = j
			break
		}
	}
	for j, f := range st.Fields() {
		if k < 0 && strings.EqualFold(f.Name, name) {
			k = j
		}
	}
	if k < 0 {
		return nil, fmt.Errorf("struct has no field %q", name)
	}
	field := s.Field(k)
	if s.NullN() == 0 {
		field.Retain()
		return field, nil
	}
	// A NULL struct's fields are NULL: gather with the struct's NULLs.
	idx := make([]int32, c.N)
	for i := range idx {
		idx[i] = int32(i)
		if s.IsNull(i) {
			idx[i] = -1
		}
	}
	return takeNullable(c.Mem, field, idx)
}
