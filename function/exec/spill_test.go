package exec

import (
	"math/rand"
	"os"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// spillPool returns a pool of limit bytes spilling into a fresh directory,
// and a check that the directory is empty afterwards.
func spillPool(t *testing.T, limit int64) (*MemoryPool, func()) {
	t.Helper()
	dir := t.TempDir()
	p := NewMemoryPool(limit, dir, 0)
	return p, func() {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) > 0 {
			t.Errorf("%d spill files left in %s", len(ents), dir)
		}
		if p.SpillDiskBytes() != 0 {
			t.Errorf("pool still accounts %d spill bytes on disk", p.SpillDiskBytes())
		}
	}
}

func recsOf(t *testing.T, batches [][]col) []arrow.RecordBatch {
	mem := checkedMem(t)
	var recs []arrow.RecordBatch
	for _, b := range batches {
		recs = append(recs, mkRec(mem, b...))
	}
	return recs
}

// An external sort under a tiny budget gives exactly the rows, in exactly
// the order (stable), of the in-memory sort.
func TestSortSpillEqualsInMemory(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	batches := randomSortInput(rng, 60000, 3000)
	schema := schemaOf(batches[0])
	for _, tc := range []struct {
		name string
		keys []plan.SortKey
	}{
		{"int", []plan.SortKey{{Expr: cref(0, i64T)}}},
		{"int desc nulls first", []plan.SortKey{{Expr: cref(0, i64T), Desc: true, NullsFirst: true}}},
		{"string, int", []plan.SortKey{{Expr: cref(1, strT)}, {Expr: cref(0, i64T), Desc: true}}},
		{"float expr", []plan.SortKey{{Expr: cast(cref(0, i64T), f64T), Desc: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, err := NewSort(newSource(schema.Arrow(), recsOf(t, batches)...), sortNode(schema, -1, tc.keys...), Options{})
			want := runOp(t, op, err)
			pool, check := spillPool(t, 256<<10)
			op, err = NewSort(newSource(schema.Arrow(), recsOf(t, batches)...), sortNode(schema, -1, tc.keys...),
				Options{Mem: checkedMem(t), Pool: pool, BatchRows: 1000})
			got := runOp(t, op, err)
			if len(got) != 60000 || !reflect.DeepEqual(got, want) {
				t.Fatalf("spilled sort differs from the in-memory sort (%d vs %d rows)", len(got), len(want))
			}
			if pool.SpillCount() < 2 || pool.SpillBytes() == 0 {
				t.Fatalf("expected several sorted runs, got %d files, %d bytes", pool.SpillCount(), pool.SpillBytes())
			}
			if pool.Peak() > pool.Limit() {
				t.Fatalf("peak %d over the budget %d", pool.Peak(), pool.Limit())
			}
			check()
		})
	}
}
