package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// bit_and, bit_or and bit_xor of integers (DuckDB's): the bitwise fold
// of the non-NULL values, NULL for none. The partial state is the fold so
// far (NULL when a task saw no value), merged with the same operation.

func bitAggregates() []*AggregateFunction {
	ints := []AggSignature{{Arg: plan.Int64, Returns: plan.Int64Type}}
	value := func(c plan.AggCall) []plan.DataType { return []plan.DataType{plan.Int64Type} }
	entry := func(name plan.AggFunc, doc string, op func(a, b int64) int64, dupInsensitive bool) *AggregateFunction {
		return &AggregateFunction{Name: name, Doc: doc, Signatures: ints, NumStates: 1, StateTypes: value,
			DuplicateInsensitive: dupInsensitive,
			New: func(s AggSpec) (Accumulator, error) {
				a := &bitAcc{op: op}
				a.setType(plan.Int64Type)
				return a, nil
			}}
	}
	return []*AggregateFunction{
		entry("bit_and", "the bitwise AND of the non-NULL values", func(a, b int64) int64 { return a & b }, true),
		entry("bit_or", "the bitwise OR of the non-NULL values", func(a, b int64) int64 { return a | b }, true),
		entry("bit_xor", "the bitwise XOR of the non-NULL values", func(a, b int64) int64 { return a ^ b }, false),
	}
}

// bitAcc folds int64 values per group with op.
type bitAcc struct {
	valueState
	op func(a, b int64) int64
}

func (a *bitAcc) Grow(n int)   { a.grow(n) }
func (a *bitAcc) Bytes() int64 { return a.bytes() }

func (a *bitAcc) Update(arg arrow.Array, gids []uint32, _ int) error { return a.fold(arg, gids) }

func (a *bitAcc) Merge(st []arrow.Array, gids []uint32) error {
	if isNullArray(st[0]) {
		return nil
	}
	return a.fold(st[0], gids)
}

func (a *bitAcc) Result(mem memory.Allocator, t arrow.DataType, lo, hi int) (arrow.Array, error) {
	return a.array(mem, t, lo, hi)
}

func (a *bitAcc) fold(arg arrow.Array, gids []uint32) error {
	if layoutOf(arg) != kInt64 {
		return fmt.Errorf("bitwise aggregate over %s", arg.DataType())
	}
	x := values[int64](arg)
	vb, voff := validityOf(arg)
	for i, v := range x {
		if !isValid(vb, voff, i) {
			continue
		}
		g := uint32(0)
		if gids != nil {
			g = gids[i]
		}
		if a.has[g] {
			a.i64[g] = a.op(a.i64[g], v)
		} else {
			a.i64[g], a.has[g] = v, true
		}
	}
	return nil
}
