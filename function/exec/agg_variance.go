package exec

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// The variance family (plan.AggVarSamp ...): per group the count (a.cnt),
// the running mean (a.vmean) and the sum of squared deviations (a.vm2),
// updated with Welford's method and merged with Chan's formula, so the
// result does not depend on how rows were split into partial states. The
// partial state is [count int64, mean float64, m2 float64].

func varianceAggregates() []*AggregateFunction {
	states := func(plan.AggCall) []plan.DataType {
		return []plan.DataType{plan.Int64Type, plan.Float64Type, plan.Float64Type}
	}
	sig := []AggSignature{{Arg: NumericType, Cast: plan.Float64Type, Returns: plan.Float64Type}}
	entry := func(fn plan.AggFunc, aliases []string, doc string) *AggregateFunction {
		return &AggregateFunction{Name: fn, Aliases: aliases, Doc: doc, Signatures: sig, NumStates: 3, StateTypes: states,
			StateNames: []string{"[count]", "[mean]", "[m2]"},
			New:        func(s AggSpec) (Accumulator, error) { return &varianceAcc{fn: fn}, nil }}
	}
	return []*AggregateFunction{
		entry(plan.AggVarSamp, []string{"variance"}, "the sample variance (NULL for fewer than two values)"),
		entry(plan.AggVarPop, nil, "the population variance"),
		entry(plan.AggStddevSamp, []string{"stddev"}, "the sample standard deviation (NULL for fewer than two values)"),
		entry(plan.AggStddevPop, nil, "the population standard deviation"),
	}
}

// varianceAcc holds the running moments of each group.
type varianceAcc struct {
	fn         plan.AggFunc
	cnt        []int64
	vmean, vm2 []float64
}

func (a *varianceAcc) Bytes() int64 { return int64(cap(a.cnt)*8 + cap(a.vmean)*8 + cap(a.vm2)*8) }

func (a *varianceAcc) Grow(n int) {
	a.cnt = growTo(a.cnt, n)
	a.vmean = growTo(a.vmean, n)
	a.vm2 = growTo(a.vm2, n)
}

// addMoments merges (n2, mean2, m22) into group g.
func (a *varianceAcc) addMoments(g int, n2 int64, mean2, m22 float64) {
	n1 := a.cnt[g]
	if n2 == 0 {
		return
	}
	if n1 == 0 {
		a.cnt[g], a.vmean[g], a.vm2[g] = n2, mean2, m22
		return
	}
	n := n1 + n2
	d := mean2 - a.vmean[g]
	a.vmean[g] += d * float64(n2) / float64(n)
	a.vm2[g] += m22 + d*d*float64(n1)*float64(n2)/float64(n)
	a.cnt[g] = n
}

func (a *varianceAcc) Update(arg arrow.Array, gids []uint32, _ int) error {
	x, ok := arg.(*array.Float64)
	if !ok {
		return fmt.Errorf("%s over %s, want float64", a.fn, arg.DataType())
	}
	for i := 0; i < x.Len(); i++ {
		if x.IsNull(i) {
			continue
		}
		g := 0
		if gids != nil {
			g = int(gids[i])
		}
		v := x.Value(i)
		a.cnt[g]++
		d := v - a.vmean[g]
		a.vmean[g] += d / float64(a.cnt[g])
		a.vm2[g] += d * (v - a.vmean[g])
	}
	return nil
}

func (a *varianceAcc) Merge(st []arrow.Array, gids []uint32) error {
	cnt, ok1 := st[0].(*array.Int64)
	mean, ok2 := st[1].(*array.Float64)
	m2, ok3 := st[2].(*array.Float64)
	if !ok1 || !ok2 || !ok3 {
		return fmt.Errorf("%s: partial state columns are not [int64, float64, float64]", a.fn)
	}
	for i := 0; i < cnt.Len(); i++ {
		g := 0
		if gids != nil {
			g = int(gids[i])
		}
		a.addMoments(g, cnt.Value(i), mean.Value(i), m2.Value(i))
	}
	return nil
}

func (a *varianceAcc) States(mem memory.Allocator, _ []arrow.DataType, lo, hi int) ([]arrow.Array, error) {
	mb, mean := newFixed[float64](mem, hi-lo)
	copy(mean, a.vmean[lo:hi])
	qb, m2 := newFixed[float64](mem, hi-lo)
	copy(m2, a.vm2[lo:hi])
	return []arrow.Array{
		countArray(mem, a.cnt[lo:hi]),
		makeArray(arrow.PrimitiveTypes.Float64, hi-lo, nil, mb),
		makeArray(arrow.PrimitiveTypes.Float64, hi-lo, nil, qb),
	}, nil
}

// varianceResult: NULL for no rows, and for one row in the sample forms
// (as DuckDB).
func (a *varianceAcc) Result(mem memory.Allocator, _ arrow.DataType, lo, hi int) (arrow.Array, error) {
	n := hi - lo
	vbuf, valid := newBitmap(mem, n)
	buf, out := newFixed[float64](mem, n)
	samp := a.fn == plan.AggVarSamp || a.fn == plan.AggStddevSamp
	for i := 0; i < n; i++ {
		c := a.cnt[lo+i]
		div := float64(c)
		if samp {
			div--
		}
		if div <= 0 {
			continue
		}
		v := a.vm2[lo+i] / div
		if v < 0 {
			v = 0
		}
		if a.fn == plan.AggStddevSamp || a.fn == plan.AggStddevPop {
			v = math.Sqrt(v)
		}
		out[i] = v
		setBit(valid, i)
	}
	return makeArray(arrow.PrimitiveTypes.Float64, n, vbuf, buf), nil
}
