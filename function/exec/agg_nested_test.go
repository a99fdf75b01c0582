package exec

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// nestedCol is a column of type typ from the DuckDB text of its values
// (nil: NULL).
func nestedCol(t *testing.T, mem memory.Allocator, typ string, vals ...any) arrow.Array {
	t.Helper()
	in := buildArray(mem, plan.StringType, vals)
	defer in.Release()
	a, err := castArray(mem, in, mustType(t, typ))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// twoPhase runs aggregate call c over batches (each with its group ids)
// in two partial accumulators (the batches alternate) merged by a final
// one, and returns the text of each of n groups' results.
func twoPhase(t *testing.T, mem memory.Allocator, c plan.AggCall, n int, batches []arrow.Array, gids [][]uint32) []any {
	t.Helper()
	ts := AggStateTypes(c)
	var out plan.Schema
	var ats []arrow.DataType
	for _, st := range ts {
		out = append(out, plan.Field{Name: "s", Type: st})
		ats = append(ats, st.Arrow())
	}
	final, _, err := newAccumulator(c, plan.AggFinal, out, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	final.Grow(n)
	for p := 0; p < 2; p++ {
		part, _, err := newAccumulator(c, plan.AggPartial, out, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		part.Grow(n)
		for i := p; i < len(batches); i += 2 {
			if err := part.Update(batches[i], gids[i], batches[i].Len()); err != nil {
				t.Fatal(err)
			}
		}
		st, err := part.States(mem, ats, 0, n)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]uint32, n)
		for g := range ids {
			ids[g] = uint32(g)
		}
		if err := final.Merge(st, ids); err != nil {
			t.Fatal(err)
		}
		releaseAll(st)
	}
	r, err := final.Result(mem, c.Type.Arrow(), 0, n)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	return textOf(t, mem, r)
}

// TestNestedMinMax: min and max of lists and structs in DuckDB's order
// (a NULL element is greater than any value, a prefix less than the
// longer list), through partial states and a final merge; with many
// batches of new winners the held values are compacted.
func TestNestedMinMax(t *testing.T) {
	mem := memory.DefaultAllocator
	lt := mustType(t, "BIGINT[]")
	b1 := nestedCol(t, mem, "BIGINT[]", "[1, NULL]", "[5]", nil)
	b2 := nestedCol(t, mem, "BIGINT[]", "[1, 2]", "[1]", "[4, 9]")
	defer b1.Release()
	defer b2.Release()
	gids := [][]uint32{{0, 1, 1}, {0, 0, 1}}
	// DuckDB: min/max over ([1, NULL]), ([1, 2]), (NULL), ([1]) is [1] / [1, NULL].
	for fn, want := range map[plan.AggFunc][]any{plan.AggMin: {"[1]", "[4, 9]"}, plan.AggMax: {"[1, NULL]", "[5]"}} {
		c := plan.AggCall{Func: fn, Arg: plan.Column(0, "x", lt), Type: lt}
		if got := twoPhase(t, mem, c, 2, []arrow.Array{b1, b2}, gids); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", fn, got, want)
		}
	}
	// many batches, each a new maximum of every group: compaction
	st := mustType(t, "STRUCT(a BIGINT, b VARCHAR)")
	var batches []arrow.Array
	var ids [][]uint32
	for i := 0; i < 200; i++ { // 100 batches of 60 winners a partial: past 2*60+4096 held rows
		var vals []any
		var g []uint32
		for k := 0; k < 60; k++ {
			vals = append(vals, fmt.Sprintf("{a: %d, b: x%d}", i, k))
			g = append(g, uint32(k))
		}
		batches = append(batches, nestedCol(t, mem, "STRUCT(a BIGINT, b VARCHAR)", vals...))
		ids = append(ids, g)
	}
	defer releaseAll(batches)
	c := plan.AggCall{Func: plan.AggMax, Arg: plan.Column(0, "x", st), Type: st}
	got := twoPhase(t, mem, c, 60, batches, ids)
	for k, v := range got {
		if want := fmt.Sprintf("{'a': 199, 'b': x%d}", k); v != want {
			t.Fatalf("group %d: %v, want %v", k, v, want)
		}
	}
}

// TestListUnorderedStates: list without ORDER BY in two phases, the
// partial lists concatenated (NULL values kept, as list keeps them).
func TestListUnorderedStates(t *testing.T) {
	mem := memory.DefaultAllocator
	b1 := buildArray(mem, plan.Int64Type, []any{int64(1), int64(2), int64(7)})
	b2 := buildArray(mem, plan.Int64Type, []any{nil, int64(4)})
	defer b1.Release()
	defer b2.Release()
	lt := plan.ListOf(plan.Int64Type)
	c := plan.AggCall{Func: plan.AggListUnordered, Arg: plan.Column(0, "x", plan.Int64Type), Type: lt}
	got := twoPhase(t, mem, c, 3, []arrow.Array{b1, b2}, [][]uint32{{0, 0, 1}, {0, 1}})
	if fmt.Sprint(got) != "[[1, 2, NULL] [7, 4] <nil>]" {
		t.Errorf("list_unordered: %v", got)
	}
}
