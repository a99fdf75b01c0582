package exec

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

func TestCountDistinct(t *testing.T) {
	mem := checkedMem(t)
	N := any(nil)
	in := []col{
		strs("k", "a", "a", "b", "a", nil, "b", "a", "c"),
		ints("x", 1, 1, 2, nil, 5, 2, 3, nil),
		strs("s", "p", "q", "p", "p", nil, nil, "q", nil),
		decs("d", 10, 2, "1.00", "1.0", "2.00", "3.00", nil, "2.00", "1.00", nil),
		bools("b", true, true, false, false, nil, true, nil, nil),
	}
	schema := schemaOf(in)
	cd := func(c int, t plan.DataType) plan.AggCall {
		return plan.AggCall{Func: plan.AggCountDistinct, Arg: cref(c, t), Type: i64T}
	}
	aggs := []plan.AggCall{cd(1, i64T), cd(2, strT), cd(3, d102), cd(4, boolT), {Func: plan.AggCountStar, Type: i64T}}
	out := plan.Schema{{Name: "k", Type: strT}, {Name: "cx", Type: i64T}, {Name: "cs", Type: i64T}, {Name: "cd", Type: i64T}, {Name: "cb", Type: i64T}, {Name: "n", Type: i64T}}
	defer func() { testHashMask = 0 }()
	for _, mask := range []uint64{0, 3} {
		testHashMask = mask
		src := newSource(schema.Arrow(), mkRec(mem, sliceCols(in, 0, 3)...), mkRec(mem, sliceCols(in, 3, 8)...))
		op, err := NewHashAggregate(src, aggNode(plan.AggSingle, out, []*plan.Expr{cref(0, strT)}, aggs...), Options{Mem: mem})
		got := runOp(t, op, err)
		sortRows(got)
		want := [][]any{
			{"a", int64(2), int64(2), int64(2), int64(2), int64(4)},
			{"b", int64(1), int64(1), int64(1), int64(2), int64(2)},
			{N, int64(1), int64(0), int64(0), int64(0), int64(1)},
			{"c", int64(0), int64(0), int64(0), int64(0), int64(1)},
		}
		sortRows(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("mask %d: got %v, want %v", mask, got, want)
		}
	}
	testHashMask = 0

	// no GROUP BY; over no rows it is 0
	src := newSource(schema.Arrow(), mkRec(mem, in...))
	out1 := plan.Schema{{Name: "cx", Type: i64T}, {Name: "cs", Type: i64T}}
	op, err := NewHashAggregate(src, aggNode(plan.AggSingle, out1, nil, cd(1, i64T), cd(2, strT)), Options{Mem: mem})
	if got := runOp(t, op, err); !reflect.DeepEqual(got, [][]any{{int64(4), int64(2)}}) {
		t.Fatalf("got %v", got)
	}
	op, err = NewHashAggregate(newSource(schema.Arrow()), aggNode(plan.AggSingle, out1, nil, cd(1, i64T), cd(2, strT)), Options{Mem: mem})
	if got := runOp(t, op, err); !reflect.DeepEqual(got, [][]any{{int64(0), int64(0)}}) {
		t.Fatalf("got %v", got)
	}
}

func TestCountDistinctModes(t *testing.T) {
	c := plan.AggCall{Func: plan.AggCountDistinct, Arg: cref(0, i64T), Type: i64T}
	for _, mode := range []plan.AggMode{plan.AggPartial, plan.AggFinal} {
		s := plan.Schema{{Name: "c", Type: i64T}}
		_, err := NewHashAggregate(newSource(s.Arrow()), aggNode(mode, s, nil, c), Options{})
		if err == nil || !strings.Contains(err.Error(), "only supported in single mode") {
			t.Fatalf("%s: got %v", mode, err)
		}
	}
}
