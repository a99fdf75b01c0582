package coordinator

import (
	"encoding/json"
	"fmt"

	"github.com/sluicedb/sluice/planner/adaptive"
)

// fieldTasks is the job hash field holding every stage's task plan
// (adaptive.TaskPlans, JSON).
const fieldTasks = "tasks"

// legacyTaskFields are the job hash fields that held the task plans, one
// map per decision, before fieldTasks: a job written by an older
// coordinator has them (and no fieldTasks), and resumes from them.
var legacyTaskFields = []string{"groups", "skew", "combine", "scan_tasks", "skipped"}

// decodeTaskPlans decodes the task plans of a job record: fieldTasks, or,
// for a job an older coordinator wrote, the per-decision legacy fields.
func decodeTaskPlans(m map[string]string) (adaptive.TaskPlans, error) {
	if tj, ok := m[fieldTasks]; ok {
		tasks := adaptive.TaskPlans{}
		if err := json.Unmarshal([]byte(tj), &tasks); err != nil {
			return nil, fmt.Errorf("decode task plans: %w", err)
		}
		if tasks == nil {
			tasks = adaptive.TaskPlans{}
		}
		return tasks, nil
	}
	var (
		groups    map[int][][]int
		skew      map[int][]adaptive.SkewTask
		combine   map[int]int
		scanTasks map[int]int
		skipped   map[int]string
	)
	for i, dst := range []any{&groups, &skew, &combine, &scanTasks, &skipped} {
		f := legacyTaskFields[i]
		v, ok := m[f]
		if !ok || (v == "" && f != "groups" && f != "skipped") {
			continue // written only once the rule that sets it existed
		}
		if err := json.Unmarshal([]byte(v), dst); err != nil {
			return nil, fmt.Errorf("decode %s (a job record from before task plans): %w", f, err)
		}
	}
	return adaptive.LegacyTaskPlans(groups, skew, combine, scanTasks, skipped), nil
}
