package exec

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// Constructors and list functions, with DuckDB's semantics: list_value
// ([a, b] literals) and struct_pack ({'k': v} literals) are never NULL;
// list_sort orders elements as ORDER BY does (NULLs last by default);
// list_distinct drops NULLs and keeps first occurrences in order (DuckDB's
// order is unspecified); slices are 1-based and inclusive, negative bounds
// count from the end; array_to_string skips NULL elements. Elements are
// compared by their key encoding (kernel.AppendKey), so any element type
// works, nested ones too.

func listFunctions() []*ScalarFunction {
	listOfFirst := func(args []plan.DataType) plan.DataType {
		if len(args) == 0 {
			return plan.ListOf(plan.NullType)
		}
		return plan.ListOf(args[0])
	}
	first := func(args []plan.DataType) plan.DataType { return args[0] }
	return []*ScalarFunction{
		{Name: "list_value", Aliases: []string{"list_pack"}, Nested: true, Nulls: NullCustom,
			Doc:        "a list of the arguments (NULLs kept), cast to their common type. Also [a, b, ...]",
			Signatures: []Signature{{Params: []plan.TypeID{SameType}, Variadic: true, Return: listOfFirst, ReturnDoc: "a list of the arguments' type"}},
			Kernel:     listValueKernel},
		{Name: "struct_pack", Nested: true, Nulls: NullCustom,
			Doc:        "a struct of the named arguments: struct_pack(a := 1, b := 'x'). Also {'a': 1, 'b': 'x'}",
			Signatures: []Signature{{Params: []plan.TypeID{AnyType}, Variadic: true, Return: func([]plan.DataType) plan.DataType { return plan.NullType }, ReturnDoc: "a struct of the arguments"}},
			Kernel:     structPackKernel},
		{Name: "list_slice", Aliases: []string{"array_slice"}, Nested: true,
			Doc:        "the elements from begin to end, 1-based and inclusive, negative from the end. Also l[begin:end]",
			Signatures: []Signature{{Params: []plan.TypeID{plan.List, plan.Int64, plan.Int64}, Return: first, ReturnDoc: "the list's type"}},
			Kernel:     listSliceKernel},
		{Name: "list_sort", Aliases: []string{"array_sort"}, Nested: true,
			Doc: "the list sorted: list_sort(l [, 'ASC'|'DESC' [, 'NULLS FIRST'|'NULLS LAST']]); NULLs last by default",
			Signatures: []Signature{{Params: []plan.TypeID{plan.List}, Return: first, ReturnDoc: "the list's type"},
				{Params: []plan.TypeID{plan.List, plan.String}, Return: first, ReturnDoc: "the list's type"},
				{Params: []plan.TypeID{plan.List, plan.String, plan.String}, Return: first, ReturnDoc: "the list's type"}},
			Kernel: listSortKernel(false)},
		{Name: "list_reverse_sort", Aliases: []string{"array_reverse_sort"}, Nested: true,
			Doc: "the list sorted descending, NULLs last: list_reverse_sort(l [, 'NULLS FIRST'|'NULLS LAST'])",
			Signatures: []Signature{{Params: []plan.TypeID{plan.List}, Return: first, ReturnDoc: "the list's type"},
				{Params: []plan.TypeID{plan.List, plan.String}, Return: first, ReturnDoc: "the list's type"}},
			Kernel: listSortKernel(true)},
		{Name: "list_distinct", Aliases: []string{"array_distinct"}, Nested: true,
			Doc:        "the distinct non-NULL elements, in order of first occurrence",
			Signatures: []Signature{{Params: []plan.TypeID{plan.List}, Return: first, ReturnDoc: "the list's type"}},
			Kernel:     listDistinctKernel},
		{Name: "list_has_any", Aliases: []string{"array_has_any"}, Nested: true,
			Doc:        "whether the two lists share a non-NULL element (NULL when either is NULL)",
			Signatures: []Signature{{Params: []plan.TypeID{SameType, SameType}, Returns: plan.BoolType}},
			Kernel:     listHasAnyKernel},
		{Name: "array_to_string", Aliases: []string{"list_to_string", "array_join"}, Nested: true,
			Doc:        "the elements as text joined by the separator, NULL elements skipped",
			Signatures: []Signature{{Params: []plan.TypeID{plan.List, plan.String}, Returns: plan.StringType}},
			Kernel:     arrayToStringKernel},
		{Name: "list_concat", Aliases: []string{"list_cat", "array_concat", "array_cat"}, Nested: true, Nulls: NullCustom,
			Doc: "the elements of the first list then of the second (a NULL list counts as empty). l1 || l2 is list_concat(l1, l2, true): NULL when either is NULL",
			Signatures: []Signature{{Params: []plan.TypeID{SameType, SameType}, Return: first, ReturnDoc: "the lists' type"},
				{Params: []plan.TypeID{SameType, SameType, plan.Bool}, Return: first, ReturnDoc: "the lists' type"}},
			Kernel: listConcatKernel},
		{Name: "generate_series", Nested: true,
			Doc: "the list [start, start+1, ..., stop] (generate_series(stop): from 0); in FROM it is the table function",
			Signatures: []Signature{{Params: []plan.TypeID{plan.Int64}, Returns: plan.ListOf(plan.Int64Type)},
				{Params: []plan.TypeID{plan.Int64, plan.Int64}, Returns: plan.ListOf(plan.Int64Type)}},
			Kernel: seriesKernel(true)},
		{Name: "range", Nested: true,
			Doc: "the list [start, start+1, ..., stop-1] (range(stop): from 0); in FROM it is the table function",
			Signatures: []Signature{{Params: []plan.TypeID{plan.Int64}, Returns: plan.ListOf(plan.Int64Type)},
				{Params: []plan.TypeID{plan.Int64, plan.Int64}, Returns: plan.ListOf(plan.Int64Type)}},
			Kernel: seriesKernel(false)},
		{Name: "flatten", Nested: true,
			Doc:        "a list of lists concatenated into one list (NULL inner lists skipped)",
			Signatures: []Signature{{Params: []plan.TypeID{plan.List}, Return: func(a []plan.DataType) plan.DataType { return a[0].Elem() }, ReturnDoc: "the inner list type"}},
			Kernel:     flattenKernel},
	}
}

// datumArray is d as an array of c.N rows (a literal broadcast).
func datumArray(c *Call, d Datum) (arrow.Array, error) {
	if d.arr != nil {
		d.arr.Retain()
		return d.arr, nil
	}
	return broadcast(c.Mem, d.t, d.lit, c.N)
}

func listValueKernel(c *Call) (arrow.Array, error) {
	k := len(c.Args)
	et := c.Type.Arrow().(*arrow.ListType).Elem()
	srcs := make([]arrow.Array, k)
	defer releaseAll(srcs)
	for j, d := range c.Args {
		a, err := datumArray(c, d)
		if err != nil {
			return nil, err
		}
		srcs[j] = a
	}
	bi, ri := make([]int32, c.N*k), make([]int32, c.N*k)
	for i := 0; i < c.N; i++ {
		for j := range srcs {
			bi[i*k+j], ri[i*k+j] = int32(j), int32(i)
			if !arrow.TypeEqual(srcs[j].DataType(), et) {
				bi[i*k+j] = -1 // a NULL-typed argument
			}
		}
	}
	vals, err := kernel.TakeMulti(c.Mem, et, srcs, bi, ri)
	if err != nil {
		return nil, err
	}
	defer vals.Release()
	obuf, o := newFixed[int32](c.Mem, c.N+1)
	for i := range o {
		o[i] = int32(i * k)
	}
	return makeNested(c.Type.Arrow(), c.N, nil, []*memory.Buffer{obuf}, []arrow.Array{vals}), nil
}

func structPackKernel(c *Call) (arrow.Array, error) {
	fs := c.Type.Children()
	if len(fs) != len(c.Args) {
		return nil, fmt.Errorf("struct_pack of %d arguments into %s", len(c.Args), c.Type)
	}
	kids := make([]arrow.Array, len(fs))
	defer releaseAll(kids)
	for j, d := range c.Args {
		a, err := datumArray(c, d)
		if err != nil {
			return nil, err
		}
		kids[j] = a
	}
	return makeNested(c.Type.Arrow(), c.N, nil, nil, kids), nil
}

// buildList makes a list array of c's type from per-row element indexes
// into vals (rows[i] nil and null[i]: a NULL row).
func buildList(c *Call, vals arrow.Array, rows [][]int32, null []bool) (arrow.Array, error) {
	obuf, o := newFixed[int32](c.Mem, c.N+1)
	var idx []int32
	var valid *memory.Buffer
	var vb []byte
	for i := 0; i < c.N; i++ {
		if null[i] {
			if valid == nil {
				valid, vb = newBitmap(c.Mem, c.N)
				for j := 0; j < i; j++ {
					setBit(vb, j)
				}
			}
		} else {
			idx = append(idx, rows[i]...)
			if vb != nil {
				setBit(vb, i)
			}
		}
		o[i+1] = int32(len(idx))
	}
	out, err := kernel.TakeNullable(c.Mem, vals, idx)
	if err != nil {
		obuf.Release()
		if valid != nil {
			valid.Release()
		}
		return nil, err
	}
	defer out.Release()
	return makeNested(c.Type.Arrow(), c.N, valid, []*memory.Buffer{obuf}, []arrow.Array{out}), nil
}

// eachList calls f for every row with its list's element range (a NULL
// list, or a NULL in any other argument: a NULL row) and builds the
// result list from the element indexes f returns.
func eachList(c *Call, f func(i int, lo, hi int64, vals arrow.Array) ([]int32, error)) (arrow.Array, error) {
	offs, vals, ok := listOf(c.Args[0])
	if !ok {
		return makeNulls(c.Mem, c.Type.Arrow(), c.N), nil
	}
	rows := make([][]int32, c.N)
	null := make([]bool, c.N)
	for i := 0; i < c.N; i++ {
		for _, a := range c.Args {
			null[i] = null[i] || a.Null(i)
		}
		if null[i] {
			continue
		}
		lo, hi := offs(i)
		r, err := f(i, lo, hi, vals)
		if err != nil {
			return nil, err
		}
		rows[i] = r
	}
	return buildList(c, vals, rows, null)
}

func span(lo, hi int64) []int32 {
	out := make([]int32, 0, hi-lo)
	for j := lo; j < hi; j++ {
		out = append(out, int32(j))
	}
	return out
}

func listSliceKernel(c *Call) (arrow.Array, error) {
	return eachList(c, func(i int, lo, hi int64, _ arrow.Array) ([]int32, error) {
		n := hi - lo
		b, e := c.Args[1].Int(i), c.Args[2].Int(i)
		if b < 0 {
			b = n + b + 1
		}
		b = max(b, 1)
		if e < 0 {
			e = n + e + 1
		}
		e = min(e, n)
		if e < b {
			return nil, nil
		}
		return span(lo+b-1, lo+e), nil
	})
}

// elemKeys are the key encodings of vals[lo:hi) (nil for NULL elements).
func elemKeys(vals arrow.Array, lo, hi int64) ([][]byte, error) {
	keys := make([][]byte, hi-lo)
	for j := lo; j < hi; j++ {
		if vals.IsNull(int(j)) {
			continue
		}
		k, err := kernel.AppendKey([]byte{}, vals, int(j))
		if err != nil {
			return nil, err
		}
		keys[j-lo] = k
	}
	return keys, nil
}

func listSortKernel(reverse bool) Kernel {
	return func(c *Call) (arrow.Array, error) {
		desc, nullsFirst := reverse, false
		for _, d := range c.Args[1:] {
			if !d.Const() {
				return nil, fmt.Errorf("list_sort: the order must be a constant")
			}
			switch strings.ToUpper(strings.TrimSpace(d.lit.S)) {
			case "ASC":
				desc = false
			case "DESC":
				desc = true
			case "NULLS FIRST":
				nullsFirst = true
			case "NULLS LAST":
				nullsFirst = false
			default:
				return nil, fmt.Errorf("list_sort: unknown order %q (ASC, DESC, NULLS FIRST or NULLS LAST)", d.lit.S)
			}
		}
		return eachList(c, func(i int, lo, hi int64, vals arrow.Array) ([]int32, error) {
			keys, err := elemKeys(vals, lo, hi)
			if err != nil {
				return nil, err
			}
			r := span(lo, hi)
			slices.SortStableFunc(r, func(a, b int32) int {
				ka, kb := keys[int64(a)-lo], keys[int64(b)-lo]
				switch {
				case ka == nil && kb == nil:
					return 0
				case ka == nil || kb == nil:
					if (ka == nil) == nullsFirst {
						return -1
					}
					return 1
				case desc:
					return bytes.Compare(kb, ka)
				}
				return bytes.Compare(ka, kb)
			})
			return r, nil
		})
	}
}

func listDistinctKernel(c *Call) (arrow.Array, error) {
	return eachList(c, func(i int, lo, hi int64, vals arrow.Array) ([]int32, error) {
		keys, err := elemKeys(vals, lo, hi)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		var r []int32
		for j, k := range keys {
			if k != nil && !seen[string(k)] {
				seen[string(k)] = true
				r = append(r, int32(lo)+int32(j))
			}
		}
		return r, nil
	})
}

func listHasAnyKernel(c *Call) (arrow.Array, error) {
	ao, av, ok1 := listOf(c.Args[0])
	bo, bv, ok2 := listOf(c.Args[1])
	if !ok1 || !ok2 {
		return makeNulls(c.Mem, c.Type.Arrow(), c.N), nil
	}
	return eachRow(c, func(i int, o *out) error {
		alo, ahi := ao(i)
		blo, bhi := bo(i)
		ak, err := elemKeys(av, alo, ahi)
		if err != nil {
			return err
		}
		bk, err := elemKeys(bv, blo, bhi)
		if err != nil {
			return err
		}
		set := map[string]bool{}
		for _, k := range ak {
			if k != nil {
				set[string(k)] = true
			}
		}
		found := false
		for _, k := range bk {
			if k != nil && set[string(k)] {
				found = true
				break
			}
		}
		o.boolean(found)
		return nil
	})
}

func arrayToStringKernel(c *Call) (arrow.Array, error) {
	offs, vals, ok := listOf(c.Args[0])
	if !ok {
		return makeNulls(c.Mem, c.Type.Arrow(), c.N), nil
	}
	strs, err := castArray(c.Mem, vals, plan.StringType)
	if err != nil {
		return nil, fmt.Errorf("array_to_string: %w", err)
	}
	defer strs.Release()
	s := strs.(*array.String)
	var sb strings.Builder
	return eachRow(c, func(i int, o *out) error {
		lo, hi := offs(i)
		sep := c.Args[1].Str(i)
		sb.Reset()
		first := true
		for j := lo; j < hi; j++ {
			if s.IsNull(int(j)) {
				continue
			}
			if !first {
				sb.WriteString(sep)
			}
			first = false
			sb.WriteString(s.Value(int(j)))
		}
		o.str(sb.String())
		return nil
	})
}

func flattenKernel(c *Call) (arrow.Array, error) {
	offs, vals, ok := listOf(c.Args[0])
	if !ok {
		return makeNulls(c.Mem, c.Type.Arrow(), c.N), nil
	}
	inner, ok := vals.(*array.List)
	if !ok {
		return nil, fmt.Errorf("flatten of a list of %s", vals.DataType())
	}
	rows := make([][]int32, c.N)
	null := make([]bool, c.N)
	for i := 0; i < c.N; i++ {
		if c.Args[0].Null(i) {
			null[i] = true
			continue
		}
		lo, hi := offs(i)
		for j := lo; j < hi; j++ {
			if inner.IsNull(int(j)) {
				continue
			}
			ilo, ihi := inner.ValueOffsets(int(j))
			rows[i] = append(rows[i], span(ilo, ihi)...)
		}
	}
	return buildList(c, inner.ListValues(), rows, null)
}

func listConcatKernel(c *Call) (arrow.Array, error) {
	if c.Type.ID != plan.List {
		return nil, fmt.Errorf("list_concat of %s", c.Type)
	}
	strict := len(c.Args) == 3 && c.Args[2].Const() && c.Args[2].lit.B
	srcs := make([]arrow.Array, 2)
	defer releaseAll(srcs)
	for j, d := range c.Args[:2] {
		if d.t.ID != plan.List {
			continue // a NULL literal: an empty list
		}
		a, err := datumArray(c, d)
		if err != nil {
			return nil, err
		}
		srcs[j] = a
	}
	et := c.Type.Arrow().(*arrow.ListType).Elem()
	obuf, o := newFixed[int32](c.Mem, c.N+1)
	var valid *memory.Buffer
	var vb []byte
	var bi, ri []int32
	for i := 0; i < c.N; i++ {
		null := false
		for _, a := range srcs {
			null = null || strict && (a == nil || a.IsNull(i))
		}
		for j, a := range srcs {
			if null || a == nil || a.IsNull(i) {
				continue
			}
			lo, hi := a.(*array.List).ValueOffsets(i)
			for k := lo; k < hi; k++ {
				bi, ri = append(bi, int32(j)), append(ri, int32(k))
			}
		}
		if null && valid == nil {
			valid, vb = newBitmap(c.Mem, c.N)
			for k := 0; k < i; k++ {
				setBit(vb, k)
			}
		} else if !null && vb != nil {
			setBit(vb, i)
		}
		o[i+1] = int32(len(bi))
	}
	kids := make([]arrow.Array, 2)
	for j, a := range srcs {
		if a != nil {
			kids[j] = a.(*array.List).ListValues()
		} else {
			kids[j] = array.MakeArrayOfNull(memory.DefaultAllocator, et, 0)
			defer kids[j].Release()
		}
	}
	vals, err := kernel.TakeMulti(c.Mem, et, kids, bi, ri)
	if err != nil {
		obuf.Release()
		if valid != nil {
			valid.Release()
		}
		return nil, err
	}
	defer vals.Release()
	return makeNested(c.Type.Arrow(), c.N, valid, []*memory.Buffer{obuf}, []arrow.Array{vals}), nil
}

// maxSeries bounds the elements of one generate_series or range list.
const maxSeries = 1 << 24

func seriesKernel(inclusive bool) Kernel {
	return func(c *Call) (arrow.Array, error) {
		obuf, o := newFixed[int32](c.Mem, c.N+1)
		var vals []int64
		var valid *memory.Buffer
		var vb []byte
		for i := 0; i < c.N; i++ {
			null := false
			for _, a := range c.Args {
				null = null || a.Null(i)
			}
			if null {
				if valid == nil {
					valid, vb = newBitmap(c.Mem, c.N)
					for k := 0; k < i; k++ {
						setBit(vb, k)
					}
				}
				o[i+1] = int32(len(vals))
				continue
			}
			if vb != nil {
				setBit(vb, i)
			}
			lo, hi := int64(0), c.Args[0].Int(i)
			if len(c.Args) == 2 {
				lo, hi = hi, c.Args[1].Int(i)
			}
			if !inclusive {
				hi--
			}
			if hi >= lo && hi-lo >= maxSeries || len(vals) > maxSeries {
				obuf.Release()
				if valid != nil {
					valid.Release()
				}
				return nil, fmt.Errorf("a list of more than %d elements", maxSeries)
			}
			for v := lo; v <= hi; v++ {
				vals = append(vals, v)
			}
			o[i+1] = int32(len(vals))
		}
		vbuf, v := newFixed[int64](c.Mem, len(vals))
		copy(v, vals)
		elems := makeArray(arrow.PrimitiveTypes.Int64, len(vals), nil, vbuf)
		defer elems.Release()
		return makeNested(c.Type.Arrow(), c.N, valid, []*memory.Buffer{obuf}, []arrow.Array{elems}), nil
	}
}
