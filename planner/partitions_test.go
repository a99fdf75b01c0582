package planner

import (
	"context"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

func TestPartitionsFor(t *testing.T) {
	const gib = 1 << 30
	cases := []struct {
		name  string
		bytes float64
		opts  Options
		want  int
	}{
		{"small data: the floor", 1e6, Options{}, DefaultMinPartitions},
		{"1 GiB function, 20 GiB", 20 * gib, Options{TaskBytes: TaskBytesFor(gib)}, 80},
		{"512 MiB function, 20 GiB", 20 * gib, Options{TaskBytes: TaskBytesFor(gib / 2)}, 160},
		{"partial partition rounds up", 2.5 * gib, Options{TaskBytes: gib / 4}, 10},
		{"capped", 1e15, Options{}, DefaultMaxPartitions},
		{"own bounds", 100 * gib, Options{TaskBytes: gib, MinPartitions: 2, MaxPartitions: 50}, 50},
		{"own floor", 1, Options{MinPartitions: 2}, 2},
		{"override", 1e15, Options{Partitions: 3}, 3},
	}
	for _, c := range cases {
		if got := PartitionsFor(c.bytes, c.opts); got != c.want {
			t.Errorf("%s: PartitionsFor(%g) = %d, want %d", c.name, c.bytes, got, c.want)
		}
	}
	if TaskBytesFor(0) != DefaultTaskBytes {
		t.Errorf("TaskBytesFor(0) = %d", TaskBytesFor(0))
	}
}

// The count of a query's hash exchanges follows its data: the same query
// over 100 times the rows gets more partitions, every hash exchange of a
// query has the same count (co-partitioned sides stay colocated), and
// --partitions still overrides.
func TestPlanPartitionsFromData(t *testing.T) {
	big := fakeCatalog{}
	for name, ti := range testCatalog {
		c := *ti
		c.Rows *= 100
		c.Bytes *= 100
		big[name] = &c
	}
	const q = `SELECT o_orderpriority, count(*) FROM orders JOIN lineitem ON l_orderkey = o_orderkey
		WHERE l_commitdate < l_receiptdate GROUP BY o_orderpriority`
	counts := func(cat Catalog, opts Options) map[int]bool {
		t.Helper()
		p, err := Plan(context.Background(), q, cat, opts)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int]bool{}
		for _, st := range p.Graph.Stages {
			if st.Output.Kind == plan.PartitionHash {
				out[st.Output.Count] = true
			}
		}
		if len(out) != 1 {
			t.Fatalf("hash exchanges with different counts: %v", out)
		}
		return out
	}
	one := func(m map[int]bool) int {
		for k := range m {
			return k
		}
		return 0
	}
	opts := Options{TaskBytes: TaskBytesFor(512 << 20)}
	sf1, sf100 := one(counts(testCatalog, opts)), one(counts(big, opts))
	if sf1 < DefaultMinPartitions || sf100 <= sf1 || sf100 < 50*sf1/8 {
		t.Fatalf("partitions at SF 1: %d, at SF 100: %d (want growth with the data)", sf1, sf100)
	}
	if got := one(counts(big, Options{Partitions: 8, TaskBytes: opts.TaskBytes})); got != 8 {
		t.Fatalf("override: %d partitions", got)
	}
	t.Logf("512 MiB functions: %d partitions at SF 1, %d at SF 100", sf1, sf100)
}
