package plan

import (
	"fmt"
	"testing"
)

func ints(vs ...int64) []Value {
	out := make([]Value, len(vs))
	for i, v := range vs {
		out[i] = Value{I: v}
	}
	return out
}

func TestColumnSummaryMerge(t *testing.T) {
	exact := func(rows, nulls int64, vs ...int64) ColumnSummary {
		s := ColumnSummary{Column: 2, Type: Int64Type, Rows: rows, Nulls: nulls, Exact: true, Values: ints(vs...)}
		if len(vs) > 0 {
			s.HasRange, s.Min, s.Max = true, Value{I: vs[0]}, Value{I: vs[len(vs)-1]}
		}
		return s
	}
	many := func(lo, n int64) ColumnSummary {
		vs := make([]int64, n)
		for i := range vs {
			vs[i] = lo + int64(i)
		}
		return exact(n, 0, vs...)
	}
	rangeOnly := ColumnSummary{Column: 2, Type: Int64Type, Rows: 5000, HasRange: true, Min: Value{I: -7}, Max: Value{I: 3}}
	for _, tc := range []struct {
		name       string
		a, b       ColumnSummary
		rows, null int64
		min, max   int64
		hasRange   bool
		exact      bool
		values     int
	}{
		{"union of sets", exact(3, 1, 1, 5, 9), exact(2, 0, 5, 12), 5, 1, 1, 12, true, true, 4},
		{"empty side", EmptySummary(2, Int64Type), exact(2, 0, 4, 8), 2, 0, 4, 8, true, true, 2},
		{"all NULL side", exact(4, 4), exact(1, 0, 6), 5, 4, 6, 6, true, true, 1},
		{"range side drops the set", exact(3, 0, 1, 2, 3), rangeOnly, 5003, 0, -7, 3, true, false, 0},
		{"union over the bound", many(0, 1000), many(500, 600), 1600, 0, 0, 1099, true, false, 0},
		{"union at the bound", many(0, 1000), many(1000, 24), 1024, 0, 0, 1023, true, true, 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, order := range [][2]ColumnSummary{{tc.a, tc.b}, {tc.b, tc.a}} {
				m, err := order[0].Merge(order[1])
				if err != nil {
					t.Fatal(err)
				}
				if err := m.Validate(); err != nil {
					t.Fatalf("merged summary invalid: %v", err)
				}
				got := fmt.Sprint(m.Rows, m.Nulls, m.HasRange, m.Exact, len(m.Values))
				want := fmt.Sprint(tc.rows, tc.null, tc.hasRange, tc.exact, tc.values)
				if got != want || m.HasRange && (m.Min.I != tc.min || m.Max.I != tc.max) {
					t.Fatalf("merged %+v, want rows/nulls/range/exact/values %s min %d max %d", m, want, tc.min, tc.max)
				}
			}
		})
	}
	if _, err := exact(1, 0, 1).Merge(ColumnSummary{Column: 3, Type: Int64Type}); err == nil {
		t.Fatal("merged summaries of different columns")
	}
}

func TestColumnSummaryStrings(t *testing.T) {
	a := ColumnSummary{Type: StringType, Rows: 2, HasRange: true, Min: Value{S: "b"}, Max: Value{S: "d"}, Exact: true, Values: []Value{{S: "b"}, {S: "d"}}}
	b := ColumnSummary{Type: StringType, Rows: 1, HasRange: true, Min: Value{S: "a"}, Max: Value{S: "a"}, Exact: true, Values: []Value{{S: "a"}}}
	m, err := a.Merge(b)
	if err != nil || m.Validate() != nil {
		t.Fatalf("merge: %v %v", err, m.Validate())
	}
	if m.Min.S != "a" || m.Max.S != "d" || len(m.Values) != 3 || m.Values[0].S != "a" {
		t.Fatalf("merged %+v", m)
	}
}

func TestColumnSummaryValidate(t *testing.T) {
	for _, s := range []ColumnSummary{
		{Type: Int64Type, Rows: 1, Nulls: 2},
		{Type: Float64Type, Rows: 1, HasRange: true},
		{Type: Int64Type, Rows: 1, HasRange: true, Min: Value{I: 3}, Max: Value{I: 1}},
		{Type: Int64Type, Rows: 2, HasRange: true, Min: Value{I: 1}, Max: Value{I: 5}, Exact: true, Values: ints(5, 1)},
		{Type: Int64Type, Rows: 2, HasRange: true, Min: Value{I: 1}, Max: Value{I: 5}, Exact: true, Values: ints(1, 9)},
		{Type: Int64Type, Rows: 2, Values: ints(1)},
	} {
		if s.Validate() == nil {
			t.Errorf("%+v: valid, want an error", s)
		}
	}
}
