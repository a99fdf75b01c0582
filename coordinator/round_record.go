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
