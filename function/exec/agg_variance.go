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
// result does not depend on how rows were split into partial states.

func (a *aggAcc) growVariance(n int) {
	a.cnt = growTo(a.cnt, n)
	a.vmean = growTo(a.vmean, n)
	a.vm2 = growTo(a.vm2, n)
}

// addMoments merges (n2, mean2, m22) into group g.
func (a *aggAcc) addMoments(g int, n2 int64, mean2, m22 float64) {
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

func (a *aggAcc) updateVariance(arg arrow.Array, gids []uint32) error {
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
		v := x.Value(i)
		a.cnt[g]++
		d := v - a.vmean[g]
		a.vmean[g] += d / float64(a.cnt[g])
		a.vm2[g] += d * (v - a.vmean[g])
	}
	return nil
}

func (a *aggAcc) mergeVariance(rec arrow.RecordBatch, gids []uint32) error {
	cnt, ok1 := rec.Column(a.inCol).(*array.Int64)
	mean, ok2 := rec.Column(a.inCol + 1).(*array.Float64)
	m2, ok3 := rec.Column(a.inCol + 2).(*array.Float64)
	if !ok1 || !ok2 || !ok3 {
		return fmt.Errorf("%s: partial state columns are not [int64, float64, float64]", a.call.Func)
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

func (a *aggAcc) varianceStates(mem memory.Allocator, lo, hi int) []arrow.Array {
	mb, mean := newFixed[float64](mem, hi-lo)
	copy(mean, a.vmean[lo:hi])
	qb, m2 := newFixed[float64](mem, hi-lo)
	copy(m2, a.vm2[lo:hi])
	return []arrow.Array{
		countArray(mem, a.cnt[lo:hi]),
		makeArray(arrow.PrimitiveTypes.Float64, hi-lo, nil, mb),
		makeArray(arrow.PrimitiveTypes.Float64, hi-lo, nil, qb),
	}
}

// varianceResult: NULL for no rows, and for one row in the sample forms
// (as DuckDB).
func (a *aggAcc) varianceResult(mem memory.Allocator, lo, hi int) arrow.Array {
	n := hi - lo
	vbuf, valid := newBitmap(mem, n)
	buf, out := newFixed[float64](mem, n)
	samp := a.call.Func == plan.AggVarSamp || a.call.Func == plan.AggStddevSamp
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
		if a.call.Func == plan.AggStddevSamp || a.call.Func == plan.AggStddevPop {
			v = math.Sqrt(v)
		}
		out[i] = v
		setBit(valid, i)
	}
	return makeArray(arrow.PrimitiveTypes.Float64, n, vbuf, buf)
}
