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
)

// The holistic aggregates (median, percentile_cont, percentile_disc) keep
// every non-NULL value of a group (a.hvals, counted against the memory
// limit through bytes) and compute the exact answer at the end. They run
// only in single mode: the planner brings each group's rows to one task.

func (a *aggAcc) updateHolistic(arg arrow.Array, gids []uint32) error {
	if a.call.Func == plan.AggStringAgg {
		return a.updateStringAgg(arg, gids)
	}
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

func (a *aggAcc) holisticResult(mem memory.Allocator, lo, hi int) arrow.Array {
	n := hi - lo
	if a.call.Func == plan.AggStringAgg {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for i := 0; i < n; i++ {
			if v := a.hstrs[lo+i]; len(v) > 0 {
				if a.call.Distinct {
					v = firstOccurrences(v)
				}
				b.Append(strings.Join(v, a.call.Sep))
			} else {
				b.AppendNull()
			}
		}
		return b.NewArray()
	}
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
		slices.Sort(v)
		out[i] = quantile(v, f, a.call.Func == plan.AggPercentileDisc)
		setBit(valid, i)
	}
	return makeArray(arrow.PrimitiveTypes.Float64, n, vbuf, buf)
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

func (a *aggAcc) updateStringAgg(arg arrow.Array, gids []uint32) error {
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
