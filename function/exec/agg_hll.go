package exec

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// approx_count_distinct: a HyperLogLog sketch of plan.HLLRegisters
// registers per group over the engine's value hash (hashColumn). The
// partial state is the sketch's register bytes in a string column; sketches
// merge by the larger register, so partial and final stages give the same
// estimate however the rows were split.

const hllBits = 12 // log2(plan.HLLRegisters)

func hllAggregates() []*AggregateFunction {
	return []*AggregateFunction{{Name: plan.AggApproxCountDistinct,
		Doc:        "an estimate of the number of distinct non-NULL values (HyperLogLog, 2^12 registers, about 1.6% error)",
		Signatures: []AggSignature{{Arg: AnyType, Returns: plan.Int64Type}},
		NumStates:  1, StateTypes: func(plan.AggCall) []plan.DataType { return []plan.DataType{plan.StringType} },
		DistinctDropped: true, ZeroOnEmpty: true, LargeState: true,
		New: func(AggSpec) (Accumulator, error) { return &hllAcc{}, nil }}}
}

// hllAcc holds one sketch per group (nil until a value is seen).
type hllAcc struct{ hll [][]byte }

func (a *hllAcc) Grow(n int) { a.hll = growTo(a.hll, n) }

func (a *hllAcc) Bytes() int64 {
	n := int64(cap(a.hll) * 24)
	for _, r := range a.hll {
		n += int64(len(r))
	}
	return n
}

func (a *hllAcc) sketch(g int) []byte {
	if a.hll[g] == nil {
		a.hll[g] = make([]byte, plan.HLLRegisters)
	}
	return a.hll[g]
}

func (a *hllAcc) Update(arg arrow.Array, gids []uint32, _ int) error {
	h := make([]uint64, arg.Len())
	if err := hashColumn(arg, h); err != nil {
		return err
	}
	for i, x := range h {
		if arg.IsNull(i) {
			continue
		}
		g := 0
		if gids != nil {
			g = int(gids[i])
		}
		x = kernel.Mix(x)
		reg := x >> (64 - hllBits)
		rank := byte(bits.LeadingZeros64(x<<hllBits|1<<(hllBits-1)) + 1)
		if s := a.sketch(g); rank > s[reg] {
			s[reg] = rank
		}
	}
	return nil
}

func (a *hllAcc) Merge(sts []arrow.Array, gids []uint32) error {
	st, ok := sts[0].(*array.String)
	if !ok {
		return fmt.Errorf("approx_count_distinct: partial state is %s, want string", sts[0].DataType())
	}
	for i := 0; i < st.Len(); i++ {
		if st.IsNull(i) {
			continue
		}
		v := st.Value(i)
		if len(v) != plan.HLLRegisters {
			return fmt.Errorf("approx_count_distinct: sketch of %d bytes, want %d", len(v), plan.HLLRegisters)
		}
		g := 0
		if gids != nil {
			g = int(gids[i])
		}
		s := a.sketch(g)
		for r := range s {
			if v[r] > s[r] {
				s[r] = v[r]
			}
		}
	}
	return nil
}

func (a *hllAcc) States(mem memory.Allocator, _ []arrow.DataType, lo, hi int) ([]arrow.Array, error) {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for g := lo; g < hi; g++ {
		if a.hll[g] == nil {
			b.AppendNull()
		} else {
			b.Append(string(a.hll[g]))
		}
	}
	return []arrow.Array{b.NewArray()}, nil
}

// hllEstimate is the HyperLogLog estimate with linear counting for small
// cardinalities.
func hllEstimate(s []byte) int64 {
	if s == nil {
		return 0
	}
	m := float64(len(s))
	sum, zeros := 0.0, 0
	for _, r := range s {
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	alpha := 0.7213 / (1 + 1.079/m)
	e := alpha * m * m / sum
	if e <= 2.5*m && zeros > 0 {
		e = m * math.Log(m/float64(zeros))
	}
	return int64(math.Round(e))
}

func (a *hllAcc) Result(mem memory.Allocator, _ arrow.DataType, lo, hi int) (arrow.Array, error) {
	buf, out := newFixed[int64](mem, hi-lo)
	for i := range out {
		out[i] = hllEstimate(a.hll[lo+i])
	}
	return makeArray(arrow.PrimitiveTypes.Int64, hi-lo, nil, buf), nil
}
