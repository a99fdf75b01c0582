package exec

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Frame aggregates of the window operator: an aggregate of the library
// (aggregates.go) with a Frame evaluator computed over each row's frame.
// The shared part is here: DISTINCT over whole partitions, the prefix
// counts of non-NULL values, the row comparison of min/max and the
// segment tree the evaluators query (O(log n) per frame, DuckDB's
// segment-tree window aggregates).

// frameAggregate computes an aggregate of the library over each row's
// frame: its entry's Frame evaluator (agg_*.go) over the argument, with
// DISTINCT and the prefix counts of non-NULL values done here for all.
func frameAggregate(mem memory.Allocator, t arrow.DataType, call plan.WindowCall, p *partitions, args []arrow.Array) (arrow.Array, error) {
	fn := plan.AggFunc(call.Func)
	f, ok := PlannedAggregate(fn)
	if !ok || f.Frame == nil {
		return nil, fmt.Errorf("unsupported window aggregate %s", fn)
	}
	in := &frameInput{mem: mem, t: t, call: call, p: p}
	if f.Signatures[0].Arg == "" { // count(*)
		return f.Frame(in)
	}
	if len(args) != 1 {
		return nil, fmt.Errorf("%s takes one argument", fn)
	}
	x := args[0]
	if call.Distinct && layoutOf(x) != kNull {
		// Over a whole-partition frame (the planner's rule), an aggregate of
		// the distinct values is the aggregate of each value's first row.
		d, err := firstInPartitions(mem, x, p)
		if err != nil {
			return nil, err
		}
		defer d.Release()
		x = d
	}
	in.x = x
	in.vb, in.voff = validityOf(x)
	in.isNull = layoutOf(x) == kNull
	// Prefix counts of non-NULL values.
	n := p.n
	in.cnt = make([]int64, n+1)
	for i := 0; i < n; i++ {
		c := int64(1)
		if in.isNull || !isValid(in.vb, in.voff, i) {
			c = 0
		}
		in.cnt[i+1] = in.cnt[i] + c
	}
	return f.Frame(in)
}

// frameInput is what a Frame evaluator works on: the rows of a task's
// window partitions (p), the argument x (nil for count(*)) with its
// validity, and the prefix counts of its non-NULL values.
type frameInput struct {
	mem    memory.Allocator
	t      arrow.DataType // the result type
	call   plan.WindowCall
	p      *partitions
	x      arrow.Array
	vb     []byte
	voff   int
	isNull bool    // x is of the NULL type
	cnt    []int64 // cnt[i]: non-NULL values among rows [0, i)
}

// rows is row i's frame.
func (in *frameInput) rows(i int) frameSet { return in.p.rows(in.call.Frame, i) }

// count is the number of non-NULL values in a frame.
func (in *frameInput) count(f frameSet) int64 {
	c := int64(0)
	for _, r := range f.r[:f.k] {
		c += in.cnt[r[1]] - in.cnt[r[0]]
	}
	return c
}

func addChecked(a, b int64) (int64, bool) {
	s := a + b
	return s, (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0)
}

// lessAt compares two rows of a (both non-NULL).
func lessAt(a arrow.Array) (func(i, j int32) bool, error) {
	switch layoutOf(a) {
	case kInt64:
		v := values[int64](a)
		return func(i, j int32) bool { return v[i] < v[j] }, nil
	case kFloat64:
		v := values[float64](a)
		return func(i, j int32) bool { return cmpFloat(v[i], v[j]) < 0 }, nil
	case kDate:
		v := values[int32](a)
		return func(i, j int32) bool { return v[i] < v[j] }, nil
	case kBool:
		bs, off := bitsOf(a)
		return func(i, j int32) bool { return !bit(bs, off+int(i)) && bit(bs, off+int(j)) }, nil
	case kString:
		s := a.(*array.String)
		return func(i, j int32) bool { return s.Value(int(i)) < s.Value(int(j)) }, nil
	case kDec128:
		v := values[num](a)
		return func(i, j int32) bool { return v[i].Less(v[j]) }, nil
	}
	return nil, fmt.Errorf("min/max of %s", a.DataType())
}

// segTree is a bottom-up segment tree over n leaves with an associative
// (and here commutative) combine.
type segTree[T any] struct {
	n    int
	zero T
	t    []T
	comb func(a, b T) T
}

func newSegTree[T any](n int, zero T, leaf func(i int) T, comb func(a, b T) T) *segTree[T] {
	s := &segTree[T]{n: n, zero: zero, t: make([]T, 2*n), comb: comb}
	for i := 0; i < n; i++ {
		s.t[n+i] = leaf(i)
	}
	for i := n - 1; i >= 1; i-- {
		s.t[i] = comb(s.t[2*i], s.t[2*i+1])
	}
	return s
}

// query combines leaves [lo, hi).
func (s *segTree[T]) query(lo, hi int) T {
	res := s.zero
	for lo, hi = lo+s.n, hi+s.n; lo < hi; lo, hi = lo>>1, hi>>1 {
		if lo&1 == 1 {
			res = s.comb(res, s.t[lo])
			lo++
		}
		if hi&1 == 1 {
			hi--
			res = s.comb(res, s.t[hi])
		}
	}
	return res
}

// firstInPartitions is x with every value NULL but at one row of each
// distinct value of each partition.
func firstInPartitions(mem memory.Allocator, x arrow.Array, p *partitions) (arrow.Array, error) {
	n := p.n
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = -1
	}
	less, err := lessAt(x)
	if err != nil {
		return nil, err
	}
	vb, voff := validityOf(x)
	var rows []int32
	for ps := 0; ps < n; ps = int(p.pe[ps]) {
		rows = rows[:0]
		for i := ps; i < int(p.pe[ps]); i++ {
			if isValid(vb, voff, i) {
				rows = append(rows, int32(i))
			}
		}
		slices.SortFunc(rows, func(a, b int32) int {
			switch {
			case less(a, b):
				return -1
			case less(b, a):
				return 1
			}
			return 0
		})
		for k, r := range rows {
			if k == 0 || less(rows[k-1], r) {
				idx[r] = r
			}
		}
	}
	return takeNullable(mem, x, idx)
}
