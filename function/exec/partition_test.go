package exec

import (
	"fmt"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// hiveScanNode scans a, y (a partition), b, s (a partition) of a table
// partitioned by y and s.
func hiveScanNode(filter *plan.Expr) *plan.Node {
	return &plan.Node{Kind: plan.KindScan,
		Schema: plan.Schema{{Name: "a", Type: plan.Int64Type}, {Name: "y", Type: plan.Int64Type, Nullable: true},
			{Name: "b", Type: plan.StringType}, {Name: "s", Type: plan.StringType, Nullable: true}},
		Scan: &plan.Scan{Table: "t", Columns: []string{"a", "y", "b", "s"}, Filter: filter,
			Partitions: []plan.Field{{Name: "s", Type: plan.StringType}, {Name: "y", Type: plan.Int64Type}}}}
}

// TestPartitionFilter: a file is kept unless the conjuncts of the scan
// filter over partition columns alone are FALSE or NULL for its values.
func TestPartitionFilter(t *testing.T) {
	y, s, a := cref(1, plan.Int64Type), cref(3, plan.StringType), cref(0, plan.Int64Type)
	null := plan.Value{Null: true}
	for _, tc := range []struct {
		name   string
		filter *plan.Expr
		values []plan.Value // s, y
		keep   bool
	}{
		{"eq match", call(plan.OpEq, plan.BoolType, y, litI(2024)), []plan.Value{{S: "x"}, {I: 2024}}, true},
		{"eq miss", call(plan.OpEq, plan.BoolType, y, litI(2024)), []plan.Value{{S: "x"}, {I: 2025}}, false},
		{"null value", call(plan.OpEq, plan.BoolType, y, litI(2024)), []plan.Value{{S: "x"}, null}, false},
		{"is null", call(plan.OpIsNull, plan.BoolType, s), []plan.Value{null, {I: 1}}, true},
		{"and with file column", call(plan.OpAnd, plan.BoolType, call(plan.OpGt, plan.BoolType, a, litI(5)),
			call(plan.OpEq, plan.BoolType, s, litS("k"))), []plan.Value{{S: "j"}, {I: 1}}, false},
		{"or with file column", call(plan.OpOr, plan.BoolType, call(plan.OpGt, plan.BoolType, a, litI(5)),
			call(plan.OpEq, plan.BoolType, s, litS("k"))), []plan.Value{{S: "j"}, {I: 1}}, true},
		{"or of partitions", call(plan.OpOr, plan.BoolType, call(plan.OpLt, plan.BoolType, y, litI(2000)),
			call(plan.OpEq, plan.BoolType, s, litS("k"))), []plan.Value{{S: "j"}, {I: 2024}}, false},
		{"no filter", nil, []plan.Value{{S: "j"}, {I: 2024}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PartitionFilter(hiveScanNode(tc.filter), tc.values); got != tc.keep {
				t.Fatalf("keep %v, want %v", got, tc.keep)
			}
		})
	}
}

// TestPartitionScan: the file scan reads a and b only, with the filter's
// file-column conjuncts renumbered, and the partition values come back as
// constants in their places.
func TestPartitionScan(t *testing.T) {
	mem := checkedMem(t)
	filter := call(plan.OpAnd, plan.BoolType, call(plan.OpEq, plan.BoolType, cref(1, plan.Int64Type), litI(1)),
		call(plan.OpEq, plan.BoolType, cref(2, plan.StringType), litS("q")))
	n := hiveScanNode(filter)
	fn := FileScan(n)
	f := fn.Scan.Filter
	if got := fmt.Sprint(fn.Scan.Columns, len(fn.Schema)); got != "[a b] 2" || f == nil || f.Op != plan.OpEq || f.Args[0].Col != 1 {
		t.Fatalf("file scan %s, filter %v", got, f)
	}
	src := newSource(fn.Schema.Arrow(), mkRec(mem, ints("a", 1, 2), strs("b", "u", "v")))
	ps, err := NewPartitionScan(src, n, []plan.Value{{Null: true}, {I: 2024}}, mem)
	if err != nil {
		t.Fatal(err)
	}
	recs := drainAll(t, ps)
	defer releaseRecs(recs)
	if got, want := fmt.Sprint(rows(recs)), "[[1 2024 u <nil>] [2 2024 v <nil>]]"; got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
	if _, err := NewPartitionScan(src, n, []plan.Value{{I: 1}}, mem); err == nil {
		t.Fatal("wrong value count accepted")
	}
	if FileScan(&plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Columns: []string{"a"}}}) == nil {
		t.Fatal("nil file scan")
	}
}
