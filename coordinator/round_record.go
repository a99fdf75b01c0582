package coordinator

import (
	"github.com/sluicedb/sluice/planner/adaptive"
	"github.com/sluicedb/sluice/planner/plan"
)

// roundRecord is what a re-planning round stores in the job's history: the
// round as EXPLAIN ANALYZE reads it, plus the plan's shape after it (the
// graph, the stages skipped and the tasks planned per stage) so the web UI
// can draw the stage graph round by round. Readers that decode an
// adaptive.Round ignore the extra fields.
type roundRecord struct {
	adaptive.Round
	Graph   *plan.Graph    `json:"graph,omitempty"`
	Skipped map[int]string `json:"skipped,omitempty"`
	Tasks   map[int]int    `json:"tasks,omitempty"`
}

// plannedTasks returns the task count of every stage whose tasks the
// re-planner assigns (the stages reading exchanges; a combining stage's
// count is at most that, one task per object at most; a scan stage
// size-scans sized).
func plannedTasks(s *adaptive.State) map[int]int {
	out := make(map[int]int, len(s.Groups))
	for id, g := range s.Groups {
		out[id] = len(g) + len(s.Skew[id])
	}
	for id, n := range s.Combine {
		out[id] = n
	}
	for id, n := range s.ScanTasks {
		out[id] = n // size-scans: at most n (fewer row groups make fewer)
	}
	return out
}
