package plan

import (
	"encoding/json"
	"testing"
)

// TestExprKey checks that Key tells expressions apart exactly when their
// JSON encodings (every field) differ.
func TestExprKey(t *testing.T) {
	i64 := Int64Type
	exprs := []*Expr{
		nil,
		Column(0, "a", i64),
		Column(1, "a", i64),
		Column(0, "b", i64),
		Column(0, "a", DecimalType(10, 2)),
		Column(0, "a", DecimalType(10, 3)),
		Literal(Value{I: 1}, i64),
		Literal(Value{I: 1, Null: true}, i64),
		Literal(Value{S: "1"}, StringType),
		Literal(Value{S: "1\x00"}, StringType),
		Literal(Value{F: 0.5}, Float64Type),
		Literal(Value{F: -0.5}, Float64Type),
		Literal(Value{Months: 1}, IntervalType),
		Literal(Value{Days: 1}, IntervalType),
		Literal(Value{H: 1}, DecimalType(38, 0)),
		Literal(Value{B: true}, BoolType),
		Call(OpAdd, i64, Column(0, "a", i64), Literal(Value{I: 1}, i64)),
		Call(OpAdd, i64, Literal(Value{I: 1}, i64), Column(0, "a", i64)),
		Call(OpSub, i64, Column(0, "a", i64), Literal(Value{I: 1}, i64)),
		Call(OpAdd, i64, Call(OpAdd, i64, Column(0, "a", i64)), Literal(Value{I: 1}, i64)),
		{Op: OpIn, Type: BoolType, Args: []*Expr{Column(0, "a", i64)}, Negated: true},
		{Op: OpIn, Type: BoolType, Args: []*Expr{Column(0, "a", i64)}},
		{Op: OpFunc, Func: "f", Type: i64},
		{Op: OpFunc, Func: "g", Type: i64},
		{Op: OpExtract, Field: "year", Type: i64},
		{Op: OpExtract, Field: "month", Type: i64},
	}
	for i, a := range exprs {
		for j, b := range exprs {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if same := a.Key() == b.Key(); same != (string(ja) == string(jb)) {
				t.Errorf("%d %s vs %d %s: keys equal %v, JSON equal %v", i, ja, j, jb, same, !same)
			}
		}
	}
}
