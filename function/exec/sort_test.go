package exec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

func sortNode(schema plan.Schema, limit int64, keys ...plan.SortKey) *plan.Node {
	return &plan.Node{Kind: plan.KindSort, Schema: schema, SortKeys: keys, Limit: limit}
}

func TestSortNullsAndTies(t *testing.T) {
	in := []col{
		ints("k", 3, nil, 1, 3, nil, 2, 1),
		strs("id", "a", "b", "c", "d", "e", "f", "g"),
	}
	schema := schemaOf(in)
	k := cref(0, i64T)
	ids := func(r [][]any) string {
		s := ""
		for _, row := range r {
			s += row[1].(string)
		}
		return s
	}
	for _, tc := range []struct {
		key  plan.SortKey
		want string
	}{
		{plan.SortKey{Expr: k}, "cgfadbe"},
		{plan.SortKey{Expr: k, NullsFirst: true}, "becgfad"},
		{plan.SortKey{Expr: k, Desc: true}, "adfcgbe"},
		{plan.SortKey{Expr: k, Desc: true, NullsFirst: true}, "beadfcg"},
		{plan.SortKey{Expr: cast(k, strT), Desc: true}, "adfcgbe"},       // general path, string key
		{plan.SortKey{Expr: cast(k, f64T), NullsFirst: true}, "becgfad"}, // general path, float key
	} {
		mem := checkedMem(t)
		src := newSource(schema.Arrow(), mkRec(mem, sliceCols(in, 0, 3)...), mkRec(mem, sliceCols(in, 3, 7)...))
		op, err := NewSort(src, sortNode(schema, -1, tc.key), Options{Mem: mem, BatchRows: 3})
		if got := ids(runOp(t, op, err)); got != tc.want {
			t.Errorf("desc=%v nullsFirst=%v %s: got %s want %s", tc.key.Desc, tc.key.NullsFirst, tc.key.Expr, got, tc.want)
		}
	}
}

func TestSortMultiKey(t *testing.T) {
	mem := checkedMem(t)
	in := []col{
		strs("s", "b", "a", "b", nil, "a", "b"),
		decs("d", 10, 2, "1.00", "2.00", nil, "1.00", "2.00", "3.00"),
		floats("f", math.NaN(), 1.0, -1.0, 2.0, math.Inf(1), 0.5),
		ints("id", 0, 1, 2, 3, 4, 5),
	}
	schema := schemaOf(in)
	src := newSource(schema.Arrow(), mkRec(mem, in...))
	op, err := NewSort(src, sortNode(schema, -1,
		plan.SortKey{Expr: cref(0, strT)},
		plan.SortKey{Expr: cref(1, d102), Desc: true, NullsFirst: true},
		plan.SortKey{Expr: cref(2, f64T)}), Options{Mem: mem})
	var got []int64
	for _, r := range runOp(t, op, err) {
		got = append(got, r[3].(int64))
	}
	// a: (2.00,1.0)=1, (2.00,+inf)=4 ; b: NULL d first=2, 3.00=5, 1.00=0 ; NULL s last=3
	if want := []int64{1, 4, 2, 5, 0, 3}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	// NaN sorts after every number
	mem2 := checkedMem(t)
	src = newSource(schema.Arrow(), mkRec(mem2, in...))
	op, err = NewSort(src, sortNode(schema, -1, plan.SortKey{Expr: cref(2, f64T)}), Options{Mem: mem2})
	got = nil
	for _, r := range runOp(t, op, err) {
		got = append(got, r[3].(int64))
	}
	if want := []int64{2, 5, 1, 3, 4, 0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("floats: got %v want %v", got, want)
	}
}

func randomSortInput(rng *rand.Rand, nrows, batch int) [][]col {
	var out [][]col
	id := 0
	for lo := 0; lo < nrows; lo += batch {
		n := min(batch, nrows-lo)
		var a, b, ids []any
		for i := 0; i < n; i++ {
			if rng.Intn(20) == 0 {
				a = append(a, nil)
			} else {
				a = append(a, int64(rng.Intn(50)))
			}
			b = append(b, fmt.Sprintf("s%02d", rng.Intn(30)))
			ids = append(ids, int64(id))
			id++
		}
		out = append(out, []col{ints("a", a...), strs("b", b...), ints("id", ids...)})
	}
	return out
}

func TestTopKEqualsSortLimit(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	batches := randomSortInput(rng, 5000, 400)
	schema := schemaOf(batches[0])
	keySets := [][]plan.SortKey{
		{{Expr: cref(0, i64T), Desc: true}},
		{{Expr: cref(1, strT)}, {Expr: cref(0, i64T), NullsFirst: true}},
		{{Expr: cref(0, i64T)}},
	}
	for ki, keys := range keySets {
		for _, k := range []int64{0, 1, 7, 100, 600, 2500, 5000, 6000} {
			mem := checkedMem(t)
			mk := func() Operator {
				var recs []arrow.RecordBatch
				for _, b := range batches {
					recs = append(recs, mkRec(mem, b...))
				}
				return newSource(schema.Arrow(), recs...)
			}
			full, err := NewSort(mk(), sortNode(schema, -1, keys...), Options{Mem: mem, BatchRows: 1000})
			all := runOp(t, full, err)
			topk, err := NewSort(mk(), sortNode(schema, k, keys...), Options{Mem: mem, BatchRows: 1000})
			got := runOp(t, topk, err)
			want := all[:min(int(k), len(all))]
			if len(want) == 0 {
				want = nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("keys %d, k=%d: top-k differs from sort+limit (%d vs %d rows)", ki, k, len(got), len(want))
			}
		}
	}
}

func TestSortMemoryLimit(t *testing.T) {
	mem := checkedMem(t)
	rng := rand.New(rand.NewSource(4))
	batches := randomSortInput(rng, 50000, 5000)
	var recs []arrow.RecordBatch
	for _, b := range batches {
		recs = append(recs, mkRec(mem, b...))
	}
	schema := schemaOf(batches[0])
	op, err := NewSort(newSource(schema.Arrow(), recs...), sortNode(schema, -1, plan.SortKey{Expr: cref(0, i64T)}),
		Options{Mem: mem, MemoryLimit: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	_, err = op.Next(context.Background())
	var mle *MemoryLimitError
	if !errors.Is(err, ErrMemoryLimit) || !errors.As(err, &mle) || mle.Operator != "sort" {
		t.Fatalf("want a sort memory limit error, got %v", err)
	}
}

// sortPerm (radix + tie runs) against a plain stable comparison sort.
func TestSortPermMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	const n = 3000
	floatsPool := []float64{-1.5, -0.0, 0.0, 2.25, math.NaN(), math.Inf(-1), math.Inf(1), 1e300, -1e-300}
	mk := func(k kind, desc, nullsFirst bool) *flatKey {
		f := &flatKey{k: k, desc: desc, nullsFirst: nullsFirst, null: make([]bool, n)}
		for i := 0; i < n; i++ {
			f.null[i] = rng.Intn(15) == 0
			switch k {
			case kInt64:
				f.i64 = append(f.i64, []int64{math.MinInt64, -1, 0, 1, math.MaxInt64, int64(rng.Intn(100) - 50), rng.Int63() - rng.Int63()}[rng.Intn(7)])
			case kDate:
				f.i32 = append(f.i32, int32(rng.Intn(40)-20))
			case kFloat64:
				f.f64 = append(f.f64, floatsPool[rng.Intn(len(floatsPool))])
			case kBool:
				f.bl = append(f.bl, rng.Intn(2) == 0)
			case kString:
				pool := []string{"", "a", "ab", "abcdefgh", "abcdefghi", "abcdefgh\x00", "b", "zz\x00", "zz",
					"common-prefix-of-many-bytes-1", "common-prefix-of-many-bytes-2", "common-prefix-of-many-bytes",
					"common-prefix-of-many-bytes-1-and-more", "common-prefix-of-many-bytes-1\x00", "common-prefix-of-many"}
				f.str = append(f.str, pool[rng.Intn(len(pool))])
			}
		}
		return f
	}
	for trial := 0; trial < 40; trial++ {
		var keys []*flatKey
		for k := 0; k < 1+rng.Intn(3); k++ {
			keys = append(keys, mk([]kind{kInt64, kDate, kFloat64, kBool, kString}[rng.Intn(5)], rng.Intn(2) == 0, rng.Intn(2) == 0))
		}
		got := sortPerm(keys, n)
		want := make([]int32, n)
		for i := range want {
			want[i] = int32(i)
		}
		sort.SliceStable(want, func(i, j int) bool { return compareRows(keys, want[i], want[j]) < 0 })
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: radix sort order differs from the reference", trial)
		}
	}
}
