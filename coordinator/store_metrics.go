package coordinator

import (
	"strings"
	"time"

	"github.com/sluicedb/sluice/coordinator/webui"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/plan"
)

// committedResultOf decodes the committed result of a task record (nil when
// the task has none).
func committedResultOf(m *TaskRecord) *function.TaskResult {
	if m.Committed == 0 {
		return nil
	}
	res, err := m.Result()
	if err != nil {
		return nil
	}
	return res
}

// metricsView fills a stage row of the job page with its phase breakdown
// and per-operator metrics, aggregated from the committed task results
// (so a running stage shows what its finished tasks did).
func metricsView(row *webui.Stage, root *plan.Node, results []*function.TaskResult) {
	sm := function.AggregateMetrics(results)
	if sm == nil {
		return
	}
	ph := func(p function.Phases) *webui.Phases {
		return &webui.Phases{Queue: p.Queue, Startup: p.Startup, Read: p.Read, Compute: p.Compute, Write: p.Write, Commit: p.Commit}
	}
	row.PhaseSum, row.PhaseMax = ph(sm.PhaseSum), ph(sm.PhaseMax)
	secs := func(ns int64) float64 { return time.Duration(ns).Seconds() }
	op := func(o *function.StageOperator, depth int, text string) webui.Operator {
		return webui.Operator{Node: o.Node, Depth: depth, Kind: o.Kind, Text: text, Tasks: o.Tasks, Rows: o.Rows,
			Batches: o.Batches, Bytes: o.Bytes, Compute: secs(o.ComputeNanos), ComputeMax: secs(o.MaxComputeNanos), WallMax: secs(o.MaxWallNanos)}
	}
	if w := sm.Operator(function.WriterNode); w != nil {
		row.Operators = append(row.Operators, op(w, 0, "ShuffleWriter: "+row.Output))
	}
	if root == nil {
		return
	}
	// One line per node in pre-order: the ids the metrics use.
	lines := strings.Split(strings.TrimRight(plan.FormatFragment(root, 0, nil, nil), "\n"), "\n")
	for id, line := range lines {
		o := sm.Operator(id)
		if o == nil {
			continue
		}
		text := strings.TrimLeft(line, " ")
		depth := (len(line)-len(text))/2 + 1
		if r := []rune(text); len(r) > 140 {
			text = string(r[:139]) + "…"
		}
		row.Operators = append(row.Operators, op(o, depth, text))
	}
}
