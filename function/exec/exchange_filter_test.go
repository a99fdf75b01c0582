package exec

import (
	"context"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/kernel"
)

// bytesLeaves hands out in-memory exchange readers that report a byte
// count, as the function's shuffle readers do.
type bytesLeaves struct {
	memLeaves
	bytes int64
}

type bytesOp struct {
	Operator
	bytes int64
}

func (b bytesOp) BytesRead() int64 { return b.bytes }

func (l bytesLeaves) Exchange(ctx context.Context, n *plan.Node) (Operator, error) {
	op, err := l.memLeaves.Exchange(ctx, n)
	if err != nil {
		return nil, err
	}
	return bytesOp{op, l.bytes}, nil
}

// TestExchangeRuntimeFilter: an exchange leaf with a runtime filter
// (plan.Node.Predicate on a KindExchange) returns only the rows its
// predicate keeps (a NULL key never passes), the operators above see no
// other, and the leaf's metrics count the rows dropped beside the bytes
// its reader read.
func TestExchangeRuntimeFilter(t *testing.T) {
	key := plan.Column(0, "k", plan.Int64Type)
	in := func(vals ...int64) *plan.Expr {
		args := []*plan.Expr{key}
		for _, v := range vals {
			args = append(args, litI(v))
		}
		return plan.Call(plan.OpIn, plan.BoolType, args...)
	}
	between := func(lo, hi int64) *plan.Expr {
		return plan.Call(plan.OpAnd, plan.BoolType, plan.Call(plan.OpGe, plan.BoolType, key, litI(lo)), plan.Call(plan.OpLe, plan.BoolType, key, litI(hi)))
	}
	cases := []struct {
		name    string
		pred    *plan.Expr
		bloom   []int64 // keys of a Bloom filter on k, with pred
		want    [][]any
		dropped int64
	}{
		{"none", nil, nil, [][]any{{int64(1), "a"}, {int64(2), "b"}, {nil, "c"}, {int64(4), "d"}, {int64(2), "e"}, {int64(9), "f"}}, 0},
		{"set", in(2, 9), nil, [][]any{{int64(2), "b"}, {int64(2), "e"}, {int64(9), "f"}}, 3},
		{"range and bloom", between(2, 9), []int64{2, 9}, [][]any{{int64(2), "b"}, {int64(2), "e"}, {int64(9), "f"}}, 3},
		{"one batch dropped whole", in(4), nil, [][]any{{int64(4), "d"}}, 5},
		{"nothing matches", litB(false), nil, nil, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := checkedMem(t)
			b1 := mkRec(mem, ints("k", 1, 2, nil), strs("v", "a", "b", "c"))
			b2 := mkRec(mem, ints("k", 4, 2, 9), strs("v", "d", "e", "f"))
			defer releaseRecs([]arrow.RecordBatch{b1, b2})
			x := &plan.Node{Kind: plan.KindExchange, Stage: 0, Schema: schemaOf([]col{ints("k"), strs("v")}), Limit: -1, Predicate: c.pred}
			if c.pred != nil {
				x.RuntimeFilters = []plan.RuntimeFilter{{Stage: 1, Column: 0, Kind: "set"}}
			}
			if c.bloom != nil {
				f, err := kernel.NewBloom(1 << 10)
				if err != nil {
					t.Fatal(err)
				}
				var vals []plan.Value
				for _, k := range c.bloom {
					vals = append(vals, plan.Value{I: k})
				}
				if err := BloomAddValues(f, plan.Int64Type, vals); err != nil {
					t.Fatal(err)
				}
				x.Bloom = &plan.BloomProbe{Column: 0, Bits: f.Bytes()}
				x.RuntimeFilters[0].Kind = "bloom"
			}
			// A projection above, as a join's input would be.
			root := &plan.Node{Kind: plan.KindProject, Schema: schemaOf([]col{strs("v"), ints("k")}), Inputs: []*plan.Node{x},
				Exprs: []*plan.Expr{plan.Column(1, "v", plan.StringType), key}, Limit: -1}
			m := NewMetrics()
			op, err := Build(context.Background(), root, bytesLeaves{memLeaves{0: {b1, b2}}, 1234}, Options{Mem: mem, Metrics: m})
			if err != nil {
				t.Fatal(err)
			}
			recs := drainAll(t, op)
			got := rows(recs)
			releaseRecs(recs)
			var want [][]any
			for _, r := range c.want {
				want = append(want, []any{r[1], r[0]})
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("rows %v, want %v", got, want)
			}
			snap := m.Snapshot()
			if len(snap) != 2 || snap[1].Kind != string(plan.KindExchange) {
				t.Fatalf("metrics %+v", snap)
			}
			if leaf := snap[1]; leaf.FilteredRows != c.dropped || leaf.Bytes != 1234 || leaf.Rows != int64(len(c.want)) {
				t.Errorf("exchange metrics: rows %d, dropped %d, bytes %d; want %d, %d, 1234", leaf.Rows, leaf.FilteredRows, leaf.Bytes, len(c.want), c.dropped)
			}
		})
	}
}
