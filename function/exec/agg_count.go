package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// The counts: count(x) (non-NULL values), count(*) (rows) and
// count(DISTINCT x). The partial state of count and count(*) is the count
// (int64), merged by adding; count(DISTINCT x) runs in single mode only
// (the planner groups by the argument first when it splits the work).

func countAggregates() []*AggregateFunction {
	count := func(plan.AggCall) []plan.DataType { return []plan.DataType{plan.Int64Type} }
	return []*AggregateFunction{
		{Name: plan.AggCount, Doc: "the number of non-NULL values (count(*): of rows); count(DISTINCT x) of distinct ones",
			Signatures: []AggSignature{{Arg: AnyType, Returns: plan.Int64Type}, {Returns: plan.Int64Type}},
			NumStates:  1, StateTypes: count, ZeroOnEmpty: true, Frame: countFrames(false),
			FromStats: func(mem memory.Allocator, st *ColumnStats) ([]arrow.Array, bool) {
				if st.Nulls < 0 {
					return nil, false
				}
				return []arrow.Array{countArray(mem, []int64{st.Rows - st.Nulls})}, true
			},
			New: func(s AggSpec) (Accumulator, error) { return &countAcc{}, nil }},
		{Name: plan.AggCountStar, Internal: true, Signatures: []AggSignature{{Returns: plan.Int64Type}},
			NumStates: 1, StateTypes: count, ZeroOnEmpty: true, Frame: countFrames(true),
			FromStats: func(mem memory.Allocator, st *ColumnStats) ([]arrow.Array, bool) {
				return []arrow.Array{countArray(mem, []int64{st.Rows})}, true
			},
			New: func(s AggSpec) (Accumulator, error) { return &countAcc{star: true}, nil }},
		{Name: plan.AggCountDistinct, Internal: true, Signatures: []AggSignature{{Arg: AnyType, Returns: plan.Int64Type}},
			NumStates: 1, StateTypes: count, ZeroOnEmpty: true, New: newCountDistinct},
	}
}

// countAcc counts non-NULL values (count) or rows (count(*)).
type countAcc struct {
	star bool
	cnt  []int64
}

func (a *countAcc) Grow(n int)   { a.cnt = growTo(a.cnt, n) }
func (a *countAcc) Bytes() int64 { return int64(cap(a.cnt) * 8) }

func (a *countAcc) Update(arg arrow.Array, gids []uint32, n int) error {
	if a.star {
		countAll(a.cnt, gids, n)
	} else {
		countValid(a.cnt, gids, arg)
	}
	return nil
}

func (a *countAcc) Merge(st []arrow.Array, gids []uint32) error { return addCounts(a.cnt, gids, st[0]) }

func (a *countAcc) States(mem memory.Allocator, _ []arrow.DataType, lo, hi int) ([]arrow.Array, error) {
	return []arrow.Array{countArray(mem, a.cnt[lo:hi])}, nil
}

func (a *countAcc) Result(mem memory.Allocator, _ arrow.DataType, lo, hi int) (arrow.Array, error) {
	return countArray(mem, a.cnt[lo:hi]), nil
}

func countAll(cnt []int64, gids []uint32, n int) {
	if gids == nil {
		cnt[0] += int64(n)
		return
	}
	for _, g := range gids {
		cnt[g]++
	}
}

func countValid(cnt []int64, gids []uint32, arg arrow.Array) {
	vb, voff := validityOf(arg)
	n := arg.Len()
	if gids == nil {
		cnt[0] += int64(n - arg.NullN())
		return
	}
	if vb == nil {
		for _, g := range gids {
			cnt[g]++
		}
		return
	}
	for i, g := range gids {
		if bit(vb, voff+i) {
			cnt[g]++
		}
	}
}

func addCounts(cnt []int64, gids []uint32, st arrow.Array) error {
	if st.DataType().ID() != arrow.INT64 {
		return fmt.Errorf("count state of type %s, want int64", st.DataType())
	}
	x := values[int64](st)
	vb, voff := validityOf(st)
	if gids == nil {
		var s int64
		for i, v := range x {
			if isValid(vb, voff, i) {
				s += v
			}
		}
		cnt[0] += s
		return nil
	}
	for i, g := range gids {
		if isValid(vb, voff, i) {
			cnt[g] += x[i]
		}
	}
	return nil
}

// countDistinctAcc holds the distinct (group id, value) pairs seen, each a
// group of its own table; cnt counts the pairs with a non-NULL value.
type countDistinctAcc struct {
	argType  plan.DataType
	mem      memory.Allocator
	cnt      []int64
	distinct *groupTable // nil for a NULL-typed argument
	dkind    kind
	dseen    []bool // scratch: pairs first seen in the current batch
}

func newCountDistinct(s AggSpec) (Accumulator, error) {
	if s.Mode != plan.AggSingle {
		return nil, fmt.Errorf("count(distinct) is only supported in single mode, not %s", s.Mode)
	}
	a := &countDistinctAcc{argType: s.Call.Arg.Type, mem: s.Mem, dkind: kindOfType(s.Call.Arg.Type)}
	if a.dkind != kNull {
		a.distinct = newGroupTable([]kind{kInt64, a.dkind})
	}
	return a, nil
}

func (a *countDistinctAcc) Grow(n int) { a.cnt = growTo(a.cnt, n) }

func (a *countDistinctAcc) Bytes() int64 {
	n := int64(cap(a.cnt)*8 + cap(a.dseen))
	if a.distinct != nil {
		n += a.distinct.bytes()
	}
	return n
}

// Update inserts the (group, value) pairs of a batch into the distinct
// table and counts, per group, the new pairs whose value is not NULL.
func (a *countDistinctAcc) Update(arg arrow.Array, gids []uint32, _ int) error {
	if a.distinct == nil {
		return nil // NULL-typed argument: nothing to count
	}
	if k := layoutOf(arg); k != a.dkind {
		return fmt.Errorf("input of type %s, plan says %s", arg.DataType(), a.argType)
	}
	n := arg.Len()
	buf, g := newFixed[int64](a.mem, n)
	if gids == nil {
		clear(g)
	} else {
		for i, x := range gids {
			g[i] = int64(x)
		}
	}
	garr := makeArray(arrow.PrimitiveTypes.Int64, n, nil, buf)
	defer garr.Release()
	prev := a.distinct.ngroups
	pids, err := a.distinct.insert([]arrow.Array{garr, arg}, n)
	if err != nil {
		return err
	}
	fresh := a.distinct.ngroups - prev
	if fresh == 0 {
		return nil
	}
	a.dseen = growTo(a.dseen[:0], fresh)
	clear(a.dseen)
	vb, voff := validityOf(arg)
	for i, p := range pids {
		if int(p) < prev || a.dseen[int(p)-prev] {
			continue
		}
		a.dseen[int(p)-prev] = true
		if isValid(vb, voff, i) {
			a.cnt[g[i]]++
		}
	}
	return nil
}

func (a *countDistinctAcc) Merge([]arrow.Array, []uint32) error {
	return fmt.Errorf("count(distinct) has no partial states")
}

func (a *countDistinctAcc) States(memory.Allocator, []arrow.DataType, int, int) ([]arrow.Array, error) {
	return nil, fmt.Errorf("count(distinct) has no partial states")
}

func (a *countDistinctAcc) Result(mem memory.Allocator, _ arrow.DataType, lo, hi int) (arrow.Array, error) {
	return countArray(mem, a.cnt[lo:hi]), nil
}

// countFrames is count(x) or count(*) over each row's frame (window.go).
func countFrames(star bool) func(in *frameInput) (arrow.Array, error) {
	return func(in *frameInput) (arrow.Array, error) {
		buf, v := newFixed[int64](in.mem, in.p.n)
		for i := range v {
			if star {
				v[i] = int64(in.rows(i).size())
			} else {
				v[i] = in.count(in.rows(i))
			}
		}
		return makeArray(in.t, in.p.n, nil, buf), nil
	}
}
