package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// min and max of any ordered type (NaN is the greatest float, as in
// DuckDB), and the aggregates planned as them: bool_and/every (min of a
// bool), bool_or (max of a bool) and any_value (the least value). The
// partial state is the value.

func minMaxAggregates() []*AggregateFunction {
	value := func(c plan.AggCall) []plan.DataType { return []plan.DataType{c.Type} }
	same := []AggSignature{{Arg: AnyType, Return: func(t plan.DataType) plan.DataType { return t }}}
	boolean := []AggSignature{{Arg: plan.Bool, Returns: plan.BoolType}}
	return []*AggregateFunction{
		{Name: plan.AggMin, Doc: "the least non-NULL value", Signatures: same, NumStates: 1, StateTypes: value,
			DuplicateInsensitive: true, Selects: true, Frame: minMaxFrames(false), FromStats: minMaxFromStats(false),
			New: func(s AggSpec) (Accumulator, error) { return newMinMaxAcc(s, false) }},
		{Name: plan.AggMax, Doc: "the greatest non-NULL value", Signatures: same, NumStates: 1, StateTypes: value,
			DuplicateInsensitive: true, Selects: true, Frame: minMaxFrames(true), FromStats: minMaxFromStats(true),
			New: func(s AggSpec) (Accumulator, error) { return newMinMaxAcc(s, true) }},
		{Name: "bool_and", Aliases: []string{"every"}, PlanAs: plan.AggMin, Doc: "whether every non-NULL value is true (min of a bool)",
			Signatures: boolean, DuplicateInsensitive: true},
		{Name: "bool_or", PlanAs: plan.AggMax, Doc: "whether any non-NULL value is true (max of a bool)",
			Signatures: boolean, DuplicateInsensitive: true},
		{Name: "any_value", PlanAs: plan.AggMin, Doc: "any non-NULL value of the group (the least)",
			Signatures: same, DuplicateInsensitive: true},
	}
}

// minMaxFromStats is min's or max's state over a row group: the bound
// its statistics give, NULL when every value is NULL.
func minMaxFromStats(isMax bool) func(memory.Allocator, *ColumnStats) ([]arrow.Array, bool) {
	return func(mem memory.Allocator, st *ColumnStats) ([]arrow.Array, bool) {
		v := st.Min
		if isMax {
			v = st.Max
		}
		if v == nil || kernel.IsNested(v.DataType()) {
			return nil, false
		}
		v.Retain()
		return []arrow.Array{v}, true
	}
}

// minMaxAcc is min's or max's state: one value per group.
type minMaxAcc struct {
	valueState
	isMax bool
}

func newMinMaxAcc(s AggSpec, isMax bool) (Accumulator, error) {
	t := s.Call.Type
	if s.Mode == plan.AggPartial {
		t = s.States[0]
	}
	if t.IsNested() {
		return &nestedMinMaxAcc{isMax: isMax}, nil // agg_minmax_nested.go
	}
	a := &minMaxAcc{isMax: isMax}
	a.setType(t)
	return a, nil
}

func (a *minMaxAcc) Grow(n int)   { a.grow(n) }
func (a *minMaxAcc) Bytes() int64 { return a.bytes() }

func (a *minMaxAcc) Update(arg arrow.Array, gids []uint32, _ int) error {
	return a.minMax(arg, gids, a.isMax)
}

func (a *minMaxAcc) Merge(st []arrow.Array, gids []uint32) error {
	if isNullArray(st[0]) {
		return nil
	}
	return a.minMax(st[0], gids, a.isMax)
}

func (a *minMaxAcc) Result(mem memory.Allocator, t arrow.DataType, lo, hi int) (arrow.Array, error) {
	return a.array(mem, t, lo, hi)
}

func (a *valueState) minMax(arg arrow.Array, gids []uint32, isMax bool) error {
	if err := a.checkKind(arg, false); err != nil {
		return err
	}
	vb, voff := validityOf(arg)
	switch a.k {
	case kInt64:
		minMaxFixed(a.i64, a.has, gids, values[int64](arg), vb, voff, isMax)
	case kFloat64:
		minMaxFixed(a.f64, a.has, gids, values[float64](arg), vb, voff, isMax)
	case kDate:
		minMaxFixed(a.i32, a.has, gids, values[int32](arg), vb, voff, isMax)
	case kDec128:
		minMaxWide(a.w, a.has, gids, values[decimal128.Num](arg), vb, voff, isMax)
	case kBool:
		bs, off := bitsOf(arg)
		for i := 0; i < arg.Len(); i++ {
			if !isValid(vb, voff, i) {
				continue
			}
			g := uint32(0)
			if gids != nil {
				g = gids[i]
			}
			v := bit(bs, off+i)
			if !a.has[g] || (isMax && v && !a.bl[g]) || (!isMax && !v && a.bl[g]) {
				a.bl[g], a.has[g] = v, true
			}
		}
	case kString:
		offs, data := strOffsets(arg)
		for i := 0; i < arg.Len(); i++ {
			if !isValid(vb, voff, i) {
				continue
			}
			g := uint32(0)
			if gids != nil {
				g = gids[i]
			}
			s := data[offs[i]:offs[i+1]]
			if !a.has[g] || (isMax && string(s) > a.str[g]) || (!isMax && string(s) < a.str[g]) {
				a.strBytes += int64(len(s) - len(a.str[g]))
				a.str[g], a.has[g] = string(s), true
			}
		}
	default:
		return fmt.Errorf("MIN/MAX over %s", arg.DataType())
	}
	return nil
}

// above reports v > s in DuckDB's total order of floats, where NaN is the
// greatest value (v != v only for a NaN; never for integers).
func above[T int64 | float64 | int32](v, s T) bool { return v > s || (v != v && s == s) }

func minMaxFixed[T int64 | float64 | int32](st []T, has []bool, gids []uint32, x []T, vb []byte, voff int, isMax bool) {
	if gids == nil {
		g := 0
		for i, v := range x {
			if !isValid(vb, voff, i) {
				continue
			}
			if !has[g] || (isMax && above(v, st[g])) || (!isMax && above(st[g], v)) {
				st[g], has[g] = v, true
			}
		}
		return
	}
	if isMax {
		for i, g := range gids {
			v := x[i]
			if (!has[g] || above(v, st[g])) && isValid(vb, voff, i) {
				st[g], has[g] = v, true
			}
		}
		return
	}
	for i, g := range gids {
		v := x[i]
		if (!has[g] || above(st[g], v)) && isValid(vb, voff, i) {
			st[g], has[g] = v, true
		}
	}
}

// minMaxFrames is min or max over each row's frame (window.go): a segment
// tree of row ids, the better row of two at each node.
func minMaxFrames(isMax bool) func(in *frameInput) (arrow.Array, error) {
	return func(in *frameInput) (arrow.Array, error) {
		n := in.p.n
		if in.isNull {
			return makeNulls(in.mem, in.t, n), nil
		}
		less, err := lessAt(in.x)
		if err != nil {
			return nil, err
		}
		better := func(a, b int32) int32 { // the min (max) of two row ids, -1 for none
			switch {
			case a < 0:
				return b
			case b < 0:
				return a
			case !isMax && less(b, a), isMax && less(a, b):
				return b
			}
			return a
		}
		leaf := func(i int) int32 {
			if !isValid(in.vb, in.voff, i) {
				return -1
			}
			return int32(i)
		}
		tree := newSegTree(n, int32(-1), leaf, better)
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = queryFrame(tree, in.rows(i))
		}
		return takeNullable(in.mem, in.x, idx)
	}
}
