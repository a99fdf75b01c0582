package function

import (
	"testing"

	"github.com/sluicedb/sluice/function/exec"
)

func TestAggregateMetrics(t *testing.T) {
	if AggregateMetrics([]*TaskResult{nil, {NotInvoked: true}}) != nil {
		t.Fatal("results without metrics aggregate to metrics")
	}
	a := &TaskResult{Phases: &Phases{Queue: 1, Startup: 0.5, Read: 2, Compute: 3, Write: 0.25, Commit: 0.5},
		Operators: []exec.OpMetrics{
			{Node: WriterNode, Kind: WriterKind, Rows: 10, Batches: 1, ComputeNanos: 100, WallNanos: 400, Bytes: 64},
			{Node: 0, Kind: "filter", Rows: 10, Batches: 2, ComputeNanos: 300, WallNanos: 900},
			{Node: 1, Kind: "scan", Rows: 40, Batches: 2, ComputeNanos: 500, WallNanos: 800, Bytes: 1000, Leaf: true},
		}}
	b := &TaskResult{Phases: &Phases{Queue: 2, Startup: 0.25, Read: 1, Compute: 4, Write: 0.5, Commit: 0.25},
		Operators: []exec.OpMetrics{
			{Node: 1, Kind: "scan", Rows: 60, Batches: 3, ComputeNanos: 700, WallNanos: 600, Bytes: 3000, Leaf: true},
			{Node: 0, Kind: "filter", Rows: 5, Batches: 3, ComputeNanos: 200, WallNanos: 1200},
			{Node: WriterNode, Kind: WriterKind, Rows: 5, Batches: 3, ComputeNanos: 50, WallNanos: 300, Bytes: 32},
		}}
	sm := AggregateMetrics([]*TaskResult{a, nil, b, {NotInvoked: true}})
	if sm.Tasks != 2 {
		t.Fatalf("tasks %d, want 2", sm.Tasks)
	}
	if want := (Phases{Queue: 3, Startup: 0.75, Read: 3, Compute: 7, Write: 0.75, Commit: 0.75}); sm.PhaseSum != want {
		t.Errorf("phase sum %+v, want %+v", sm.PhaseSum, want)
	}
	if want := (Phases{Queue: 2, Startup: 0.5, Read: 2, Compute: 4, Write: 0.5, Commit: 0.5}); sm.PhaseMax != want {
		t.Errorf("phase max %+v, want %+v", sm.PhaseMax, want)
	}
	if len(sm.Operators) != 3 || sm.Operators[0].Node != WriterNode || sm.Operators[1].Node != 0 || sm.Operators[2].Node != 1 {
		t.Fatalf("operators not in node order: %+v", sm.Operators)
	}
	scan := sm.Operator(1)
	want := StageOperator{OpMetrics: exec.OpMetrics{Node: 1, Kind: "scan", Rows: 100, Batches: 5, ComputeNanos: 1200, WallNanos: 1400, Bytes: 4000, Leaf: true},
		Tasks: 2, MaxComputeNanos: 700, MaxWallNanos: 800}
	if *scan != want {
		t.Errorf("scan %+v, want %+v", *scan, want)
	}
	if got, want := scan.Format(), "output_rows=100, output_batches=5, elapsed_compute=1.20µs, wall_max=800ns, bytes_read=4000, tasks=2"; got != want {
		t.Errorf("format %q, want %q", got, want)
	}
	if got := sm.Operator(WriterNode).Format(); got != "output_rows=15, output_batches=4, elapsed_compute=150ns, wall_max=400ns, bytes_written=96, tasks=2" {
		t.Errorf("writer format %q", got)
	}
	if sm.Operator(7) != nil {
		t.Error("unknown node has metrics")
	}
}

func TestFormatNanos(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want string
	}{{0, "0ns"}, {999, "999ns"}, {1500, "1.50µs"}, {2_345_678, "2.35ms"}, {999_999_999, "1000.00ms"}, {12_345_000_000, "12.345s"}} {
		if got := FormatNanos(c.ns); got != c.want {
			t.Errorf("FormatNanos(%d) = %q, want %q", c.ns, got, c.want)
		}
	}
}
