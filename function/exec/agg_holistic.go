package exec

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// The holistic aggregates (median, percentile_cont, percentile_disc,
// string_agg) keep every non-NULL value of a group (counted against the
// memory limit through Bytes) and compute the exact answer at the end.
// They run only in single mode: the planner brings each group's rows to
// one task.

func holisticAggregates() []*AggregateFunction {
	quantile := []AggSignature{{Arg: NumericType, Cast: plan.Float64Type, Returns: plan.Float64Type}}
	newQ := func(s AggSpec) (Accumulator, error) { return &quantileAcc{call: s.Call}, nil }
	return []*AggregateFunction{
		{Name: plan.AggMedian, Doc: "the middle value (interpolated); of DECIMAL values a DECIMAL of their type, the interpolation truncated at its scale as DuckDB's", Signatures: quantile,
			Holistic: true, DistinctDropped: true, New: newQ},
		{Name: plan.AggPercentileCont, Doc: "percentile_cont(f) WITHIN GROUP (ORDER BY x): the quantile f, interpolated (of DECIMAL values a DECIMAL of their type, as median); quantile_cont(x, f) is DuckDB's form",
			Signatures: quantile, Holistic: true, New: newQ},
		{Name: plan.AggPercentileDisc, Doc: "percentile_disc(f) WITHIN GROUP (ORDER BY x): the first value at or past the quantile f (of DECIMAL values a DECIMAL of their type); quantile_disc(x, f) and quantile(x, f) are DuckDB's forms",
			Signatures: quantile, Holistic: true, New: newQ},
		{Name: plan.AggStringAgg, Doc: "string_agg(x[, sep] [ORDER BY y]): the non-NULL values as strings joined by sep (default ',')",
			Signatures: []AggSignature{{Arg: ToString, Returns: plan.StringType}}, Holistic: true, OrderSensitive: true,
			New: func(s AggSpec) (Accumulator, error) { return &stringAggAcc{call: s.Call}, nil }},
		{Name: plan.AggList, Aliases: []string{"array_agg"}, Doc: "list(x [ORDER BY y]): the values of the group, NULLs too, as a list (in the order of ORDER BY, else as the rows arrive); DISTINCT keeps the first of equal values",
			Signatures: []AggSignature{{Arg: AnyType, Return: plan.ListOf, ReturnDoc: "a list of the argument's type"}}, Holistic: true, OrderSensitive: true,
			New: func(s AggSpec) (Accumulator, error) { return &listAggAcc{call: s.Call}, nil }},
		{Name: plan.AggListUnordered, Internal: true, Doc: "list(x) without ORDER BY or DISTINCT: the partial state is the group's list so far, merged by concatenation",
			Signatures: []AggSignature{{Arg: AnyType, Return: plan.ListOf, ReturnDoc: "a list of the argument's type"}}, NumStates: 1, OrderSensitive: true,
			StateTypes: func(c plan.AggCall) []plan.DataType { return []plan.DataType{c.Type} },
			New:        func(s AggSpec) (Accumulator, error) { return &listAggAcc{call: s.Call, mergeable: true}, nil }},
		{Name: plan.AggListWrapped, Internal: true, Doc: "list over one-element lists, skipping NULLs (ordered aggregates of several orders)",
			Signatures: []AggSignature{{Arg: plan.List, Return: func(t plan.DataType) plan.DataType { return t }}}, Holistic: true, OrderSensitive: true,
			New: func(s AggSpec) (Accumulator, error) { return &listAggAcc{call: s.Call, wrapped: true}, nil }},
	}
}

// listAggAcc holds the values of each group (list, array_agg): every value
// is appended to one builder (Go heap) in arrival order, and each group
// keeps the positions of its values.
type listAggAcc struct {
	call    plan.AggCall
	wrapped bool // AggListWrapped: the values are one-element lists, NULLs skipped
	// mergeable: AggListUnordered, whose partial state is the list so far
	mergeable bool
	b         *kernel.Builder
	chunks    []arrow.Array // the builder's finished rows
	starts    []int32       // first position of each chunk
	pos       [][]int32     // per group, positions of its values
	seen      []map[string]bool
	n         int32 // positions handed out
	bytes     int64
}

func (a *listAggAcc) Grow(n int) {
	a.pos = growTo(a.pos, n)
	if a.call.Distinct {
		a.seen = growTo(a.seen, n)
	}
}

func (a *listAggAcc) Bytes() int64 { return int64(cap(a.pos)*24) + a.bytes }

// Merge appends the elements of partial lists to their groups' (the
// unordered list only).
func (a *listAggAcc) Merge(st []arrow.Array, gids []uint32) error {
	if !a.mergeable {
		return fmt.Errorf("list has no partial states")
	}
	if isNullArray(st[0]) {
		return nil
	}
	l, ok := st[0].(*array.List)
	if !ok {
		return fmt.Errorf("list state of type %s, want a list", st[0].DataType())
	}
	src := l.ListValues()
	if a.b == nil {
		b, err := kernel.NewBuilder(memory.DefaultAllocator, src.DataType())
		if err != nil {
			return fmt.Errorf("list over %s: %w", src.DataType(), err)
		}
		a.b = b
	}
	var rows []int32
	for r := 0; r < l.Len(); r++ {
		if l.IsNull(r) {
			continue
		}
		g := 0
		if gids != nil {
			g = int(gids[r])
		}
		lo, hi := l.ValueOffsets(r)
		for i := lo; i < hi; i++ {
			a.pos[g] = append(a.pos[g], a.n)
			a.n++
			rows = append(rows, int32(i))
		}
	}
	a.bytes += int64(len(rows)) * 16
	return a.b.Append(src, rows)
}

// States is the groups' lists so far (the unordered list only).
func (a *listAggAcc) States(mem memory.Allocator, ts []arrow.DataType, lo, hi int) ([]arrow.Array, error) {
	if !a.mergeable {
		return nil, fmt.Errorf("list has no partial states")
	}
	r, err := a.Result(mem, ts[0], lo, hi)
	if err != nil {
		return nil, err
	}
	return []arrow.Array{r}, nil
}

func (a *listAggAcc) Update(arg arrow.Array, gids []uint32, n int) error {
	src := arg
	at := func(i int) int { return i }
	if a.wrapped {
		l, ok := arg.(*array.List)
		if !ok {
			return fmt.Errorf("list_wrapped over %s, want a list", arg.DataType())
		}
		src = l.ListValues()
		at = func(i int) int {
			if l.IsNull(i) {
				return -1
			}
			lo, _ := l.ValueOffsets(i)
			return int(lo)
		}
	}
	if a.b == nil {
		b, err := kernel.NewBuilder(memory.DefaultAllocator, src.DataType())
		if err != nil {
			return fmt.Errorf("list over %s: %w", src.DataType(), err)
		}
		a.b = b
	}
	rows := make([]int32, 0, arg.Len())
	var key []byte
	for r := 0; r < arg.Len(); r++ {
		i := at(r)
		if i < 0 {
			continue
		}
		g := 0
		if gids != nil {
			g = int(gids[r])
		}
		if a.call.Distinct {
			k := "\x00null"
			if !src.IsNull(i) {
				var err error
				if key, err = kernel.AppendKey(key[:0], src, i); err != nil {
					return err
				}
				k = string(key)
			}
			if a.seen[g] == nil {
				a.seen[g] = map[string]bool{}
			}
			if a.seen[g][k] {
				continue
			}
			a.seen[g][k] = true
			a.bytes += int64(len(k)) + 16
		}
		a.pos[g] = append(a.pos[g], a.n)
		a.n++
		rows = append(rows, int32(i))
	}
	a.bytes += int64(len(rows)) * 16
	return a.b.Append(src, rows)
}

func (a *listAggAcc) Result(mem memory.Allocator, t arrow.DataType, lo, hi int) (arrow.Array, error) {
	lt, ok := t.(*arrow.ListType)
	if !ok {
		return nil, fmt.Errorf("list gives %s, want a list type", t)
	}
	if a.b != nil && a.b.Len() > 0 {
		a.starts = append(a.starts, a.n-int32(a.b.Len()))
		a.chunks = append(a.chunks, a.b.Finish())
	}
	n := hi - lo
	obuf, offs := newFixed[int32](mem, n+1)
	vbuf, valid := newBitmap(mem, n)
	var bi, ri []int32
	for i := 0; i < n; i++ {
		ps := a.pos[lo+i]
		if len(ps) > 0 {
			setBit(valid, i)
		}
		for _, p := range ps {
			k, _ := slices.BinarySearch(a.starts, p+1)
			k--
			bi, ri = append(bi, int32(k)), append(ri, p-a.starts[k])
		}
		offs[i+1] = int32(len(bi))
	}
	vals, err := kernel.TakeMulti(mem, lt.Elem(), a.chunks, bi, ri)
	if err != nil {
		obuf.Release()
		vbuf.Release()
		return nil, err
	}
	defer vals.Release()
	return makeNested(t, n, vbuf, []*memory.Buffer{obuf}, []arrow.Array{vals}), nil
}

// quantileAcc holds the values of each group (median, percentiles).
type quantileAcc struct {
	call   plan.AggCall
	hvals  [][]float64
	hbytes int64
}

func (a *quantileAcc) Grow(n int)   { a.hvals = growTo(a.hvals, n) }
func (a *quantileAcc) Bytes() int64 { return int64(cap(a.hvals)*24) + a.hbytes }

func (a *quantileAcc) Merge([]arrow.Array, []uint32) error {
	return fmt.Errorf("%s has no partial states", a.call.Func)
}

func (a *quantileAcc) States(memory.Allocator, []arrow.DataType, int, int) ([]arrow.Array, error) {
	return nil, fmt.Errorf("%s has no partial states", a.call.Func)
}

func (a *quantileAcc) Update(arg arrow.Array, gids []uint32, _ int) error {
	x, ok := arg.(*array.Float64)
	if !ok {
		return fmt.Errorf("%s over %s, want float64", a.call.Func, arg.DataType())
	}
	for i := 0; i < x.Len(); i++ {
		if x.IsNull(i) {
			continue
		}
		g := 0
		if gids != nil {
			g = int(gids[i])
		}
		a.hvals[g] = append(a.hvals[g], x.Value(i))
		a.hbytes += 8
	}
	return nil
}

// quantile is the exact quantile f of sorted values: interpolated
// (percentile_cont, median) or the first value at or past f (percentile_disc).
func quantile(v []float64, f float64, discrete bool) float64 {
	n := len(v)
	if discrete {
		k := int(math.Ceil(f*float64(n))) - 1
		return v[min(max(k, 0), n-1)]
	}
	pos := f * float64(n-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	if lo == hi {
		return v[lo]
	}
	return v[lo] + (pos-float64(lo))*(v[hi]-v[lo])
}

// sortFloats sorts v ascending with NaN after every number, as DuckDB
// orders doubles (slices.Sort puts NaN first).
func sortFloats(v []float64) {
	slices.Sort(v)
	k := 0
	for k < len(v) && v[k] != v[k] {
		k++
	}
	if k > 0 {
		nans := slices.Clone(v[:k])
		copy(v, v[k:])
		copy(v[len(v)-k:], nans)
	}
}

func (a *quantileAcc) Result(mem memory.Allocator, _ arrow.DataType, lo, hi int) (arrow.Array, error) {
	n := hi - lo
	vbuf, valid := newBitmap(mem, n)
	buf, out := newFixed[float64](mem, n)
	f := a.call.Fraction
	if a.call.Func == plan.AggMedian {
		f = 0.5
	}
	for i := 0; i < n; i++ {
		v := a.hvals[lo+i]
		if len(v) == 0 {
			continue
		}
		sortFloats(v)
		out[i] = quantile(v, f, a.call.Func == plan.AggPercentileDisc)
		setBit(valid, i)
	}
	return makeArray(arrow.PrimitiveTypes.Float64, n, vbuf, buf), nil
}

// stringAggAcc holds the strings of each group (string_agg).
type stringAggAcc struct {
	call   plan.AggCall
	hstrs  [][]string
	hbytes int64
}

func (a *stringAggAcc) Grow(n int)   { a.hstrs = growTo(a.hstrs, n) }
func (a *stringAggAcc) Bytes() int64 { return int64(cap(a.hstrs)*24) + a.hbytes }

func (a *stringAggAcc) Merge([]arrow.Array, []uint32) error {
	return fmt.Errorf("string_agg has no partial states")
}

func (a *stringAggAcc) States(memory.Allocator, []arrow.DataType, int, int) ([]arrow.Array, error) {
	return nil, fmt.Errorf("string_agg has no partial states")
}

func (a *stringAggAcc) Result(mem memory.Allocator, _ arrow.DataType, lo, hi int) (arrow.Array, error) {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for i := 0; i < hi-lo; i++ {
		if v := a.hstrs[lo+i]; len(v) > 0 {
			if a.call.Distinct {
				v = firstOccurrences(v)
			}
			b.Append(strings.Join(v, a.call.Sep))
		} else {
			b.AppendNull()
		}
	}
	return b.NewArray(), nil
}

// firstOccurrences is v with each value kept at its first position only.
func firstOccurrences(v []string) []string {
	seen := make(map[string]bool, len(v))
	out := v[:0:0]
	for _, s := range v {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (a *stringAggAcc) Update(arg arrow.Array, gids []uint32, _ int) error {
	x, ok := arg.(*array.String)
	if !ok {
		return fmt.Errorf("string_agg over %s, want string", arg.DataType())
	}
	for i := 0; i < x.Len(); i++ {
		if x.IsNull(i) {
			continue
		}
		g := 0
		if gids != nil {
			g = int(gids[i])
		}
		v := strings.Clone(x.Value(i)) // the batch is released after update
		a.hstrs[g] = append(a.hstrs[g], v)
		a.hbytes += int64(len(v)) + 16
	}
	return nil
}
