package plan

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// TestValueJSON: every Value survives the wire, infinities and NaN
// included (JSON numbers have neither).
func TestValueJSON(t *testing.T) {
	cases := []Value{
		{},
		{Null: true},
		{I: -42, H: 7},
		{Months: 1, Days: -2, I: 3},
		{F: 1.5},
		{F: math.Inf(1)},
		{F: math.Inf(-1)},
		{F: math.NaN()},
		{S: "x", B: true},
	}
	for _, v := range cases {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%+v: %v", v, err)
		}
		var got Value
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if math.IsNaN(v.F) {
			if !math.IsNaN(got.F) {
				t.Fatalf("%s: read back %v, want NaN", b, got.F)
			}
			got.F, v.F = 0, 0
		}
		if !reflect.DeepEqual(got, v) {
			t.Fatalf("%s: read back %+v, want %+v", b, got, v)
		}
	}
	// A pointer field (Expr.Value) takes the same path.
	e := Literal(Value{F: math.Inf(1)}, Float64Type)
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back Expr
	if err := json.Unmarshal(b, &back); err != nil || !math.IsInf(back.Value.F, 1) {
		t.Fatalf("%s: %+v, %v", b, back.Value, err)
	}
	if err := json.Unmarshal([]byte(`{"fx":"huge"}`), new(Value)); err == nil {
		t.Fatal("an unknown fx was accepted")
	}
}
