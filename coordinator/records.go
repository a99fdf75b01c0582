package coordinator

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/adaptive"
	"github.com/sluicedb/sluice/planner/plan"
)

// The typed records of a job in Redis. The Store decodes every hash it
// reads here, once, and the rest of the coordinator reads fields, not
// string keys. The fields written by the Lua scripts and by SetJob /
// SetStage keep their names (the hash layout is unchanged); the JSON
// fields (a job's plan and task plans, a stage's output and metrics, a
// task's result) are decoded by methods, which say when a field does
// not decode.

// JobRecord is a job's record (sluice:{J}:job).
type JobRecord struct {
	State     JobState
	SQL       string
	Explain   string // EXPLAIN of the plan as submitted
	Created   string // RFC 3339
	Admitted  string // when admission control let a queued job in ("" if never queued)
	Finished  string
	Owner     string // the coordinator driving it
	Adaptive  bool
	Round     int // re-planning rounds so far
	Error     string
	Code      string // a failed job's error code (plan.Codes)
	Class     string // and its class
	Waiting   string // what a running job waits for (an outage), if anything
	Held      string // the stages it holds for a runtime filter, if any
	Stalled   string // that the object store does not answer, while it does not (stall.go)
	Collected string // when its objects were garbage-collected
	// Cost holds the record's cost fields (isCostField), as written.
	Cost map[string]string

	graph, graph0 string
	settings      string // JSON of the knobs it was submitted with (JobSettings)
	// taskFields are fieldTasks and the legacy task fields, as written.
	taskFields map[string]string
}

// waiting is what a running job waits for, as clients show it: the
// outage it waits out, the stages held for a runtime filter and a store
// that does not answer, those that apply, joined by "; ".
func (r *JobRecord) waiting() string {
	var parts []string
	for _, s := range []string{r.Waiting, r.Held, r.Stalled} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

// decodeJob decodes a job hash (HGETALL).
func decodeJob(m map[string]string) *JobRecord {
	r := &JobRecord{State: JobState(m["state"]), SQL: m["sql"], Explain: m["explain"], Created: m["created"],
		Admitted: m["admitted"], Finished: m["finished"], Owner: m["owner"], Adaptive: m["adaptive"] == "1", Error: m["error"], Code: m["code"],
		Class: m["class"], Waiting: m["waiting"], Held: m["held"], Stalled: m["stalled"], Collected: m["collected"], Cost: costFields(m),
		graph: m["graph"], graph0: m["graph0"], settings: m["settings"], taskFields: map[string]string{}}
	r.Round, _ = strconv.Atoi(m["round"])
	for _, f := range append([]string{fieldTasks}, legacyTaskFields...) {
		if v, ok := m[f]; ok {
			r.taskFields[f] = v
		}
	}
	return r
}

// Plan decodes the job's plan as it is now.
func (r *JobRecord) Plan() (*plan.Graph, error) {
	var g plan.Graph
	if err := json.Unmarshal([]byte(r.graph), &g); err != nil {
		return nil, fmt.Errorf("decode plan: %w", err)
	}
	return &g, nil
}

// SubmittedPlan decodes the plan as submitted (nil when the record has
// none or it does not decode: the web UI's round 0 is then left out).
func (r *JobRecord) SubmittedPlan() *plan.Graph {
	if r.graph0 == "" {
		return nil
	}
	var g plan.Graph
	if json.Unmarshal([]byte(r.graph0), &g) != nil {
		return nil
	}
	return &g
}

// TaskPlans decodes every stage's task plan (decodeTaskPlans).
func (r *JobRecord) TaskPlans() (adaptive.TaskPlans, error) { return decodeTaskPlans(r.taskFields) }

// Failure is a failed job's error.
func (r *JobRecord) Failure(job string) *JobError {
	return &JobError{Code: r.Code, Msg: fmt.Sprintf("job %s failed: %s", job, r.Error)}
}

// StageRecord is a stage's record (sluice:{J}:stage:<s>); the zero
// record (State "") is a stage that has not started.
type StageRecord struct {
	State           StageState
	Reason          string // why it was skipped
	Tasks           int
	Done            int // tasks committed
	Invoked         int // function invocations its committed attempts cost
	Attempts        int
	Failures        int
	Rows, Bytes     int64 // its output
	InputRows       int64
	InputBytes      int64
	FilesPruned     int
	RowGroupsPruned int
	// RowGroupsFromStats: row groups answered from footer statistics.
	RowGroupsFromStats int
	Seconds            float64
	PeakMemory         int64
	SpillBytes         int64
	SpillFiles         int64
	PlanKey            string // the object key of its plan fragment
	Work               string // the fingerprint of its tasks (workPrint)
	// Cost holds the record's cost fields (isCostField), as written.
	Cost map[string]string

	output, metrics string
}

// decodeStage decodes a stage hash (HGETALL).
func decodeStage(m map[string]string) *StageRecord {
	r := &StageRecord{State: StageState(m["state"]), Reason: m["reason"], PlanKey: m["plan_key"], Work: m["work"],
		Cost: costFields(m), output: m["output"], metrics: m["metrics"]}
	for f, dst := range map[string]*int{"tasks": &r.Tasks, "done": &r.Done, "invoked": &r.Invoked, "attempts": &r.Attempts,
		"failures": &r.Failures, "files_pruned": &r.FilesPruned, "row_groups_pruned": &r.RowGroupsPruned,
		"row_groups_from_stats": &r.RowGroupsFromStats} {
		*dst, _ = strconv.Atoi(m[f])
	}
	for f, dst := range map[string]*int64{"rows": &r.Rows, "bytes": &r.Bytes, "input_rows": &r.InputRows, "input_bytes": &r.InputBytes,
		"peak_memory": &r.PeakMemory, "spill_bytes": &r.SpillBytes, "spill_files": &r.SpillFiles} {
		*dst, _ = strconv.ParseInt(m[f], 10, 64)
	}
	r.Seconds, _ = strconv.ParseFloat(m["seconds"], 64)
	return r
}

// Started reports whether the stage has a state (it started, or was
// skipped).
func (r *StageRecord) Started() bool { return r.State != "" }

// StateOrPending is the stage's state, pending when it has none yet.
func (r *StageRecord) StateOrPending() StageState {
	if r.State == "" {
		return StagePending
	}
	return r.State
}

// HasOutput reports whether a finished stage's output is recorded.
func (r *StageRecord) HasOutput() bool { return r.output != "" }

// Output decodes the record of a finished stage's output: with FromTasks
// set its Objects are not in it (Store.StageOutput rebuilds them).
func (r *StageRecord) Output() (*stageOutput, error) {
	var out stageOutput
	if err := json.Unmarshal([]byte(r.output), &out); err != nil {
		return nil, fmt.Errorf("decode stage output: %w", err)
	}
	return &out, nil
}

// Metrics decodes the stage's per-operator and phase metrics (nil when
// it has none).
func (r *StageRecord) Metrics() *function.StageMetrics {
	if r.metrics == "" || r.metrics == "null" {
		return nil
	}
	var m function.StageMetrics
	if json.Unmarshal([]byte(r.metrics), &m) != nil {
		return nil
	}
	return &m
}

// TaskRecord is a task's record (sluice:{J}:task:<s>:<t>).
type TaskRecord struct {
	State     TaskState // "" before its first attempt
	Error     string
	Committed int // the committed attempt, 0 when none
	Attempts  int
	Failures  int
	// opens and ends: per attempt, when it opened (ms) and
	// "invoked,end,outcome" (ms, ms, outcome) once it ended.
	opens, ends map[int]string
	result      string
}

// decodeTask decodes a task hash (HGETALL).
func decodeTask(m map[string]string) *TaskRecord {
	r := &TaskRecord{State: TaskState(m["state"]), Error: m["error"], result: m["result"], opens: map[int]string{}, ends: map[int]string{}}
	r.Committed, _ = strconv.Atoi(m["committed"])
	r.Attempts, _ = strconv.Atoi(m["attempts"])
	r.Failures, _ = strconv.Atoi(m["failures"])
	for k, v := range m {
		if a, ok := strings.CutPrefix(k, "open:"); ok {
			if n, err := strconv.Atoi(a); err == nil {
				r.opens[n] = v
			}
		} else if a, ok := strings.CutPrefix(k, "end:"); ok {
			if n, err := strconv.Atoi(a); err == nil {
				r.ends[n] = v
			}
		}
	}
	return r
}

// Open is when attempt a opened (ms since the epoch; 0: not recorded).
func (r *TaskRecord) Open(a int) int64 {
	ms, _ := strconv.ParseInt(r.opens[a], 10, 64)
	return ms
}

// End is when attempt a was invoked and ended (ms) and its outcome;
// ok=false when its end is not recorded (or, with at least the end time,
// partly: invoked and outcome are then zero).
func (r *TaskRecord) End(a int) (invoked, end int64, outcome string, ok bool) {
	f := strings.SplitN(r.ends[a], ",", 3)
	if len(f) >= 2 {
		end, _ = strconv.ParseInt(f[1], 10, 64)
	}
	if len(f) < 3 {
		return 0, end, "", false
	}
	invoked, _ = strconv.ParseInt(f[0], 10, 64)
	return invoked, end, f[2], true
}

// Result decodes the committed attempt's result (an error when the
// task has none or it does not decode).
func (r *TaskRecord) Result() (*function.TaskResult, error) {
	var res *function.TaskResult
	if err := json.Unmarshal([]byte(r.result), &res); err != nil {
		return nil, fmt.Errorf("decode committed result: %w", err)
	}
	if res == nil {
		return nil, fmt.Errorf("no committed result")
	}
	return res, nil
}

// ResultFields decodes the committed result as loose JSON (nil when it
// does not decode), for figures older results named otherwise.
func (r *TaskRecord) ResultFields() map[string]any {
	var res map[string]any
	if json.Unmarshal([]byte(r.result), &res) != nil {
		return nil
	}
	return res
}

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
	if _, ok := m["groups"]; !ok {
		// Every record has one or the other from its submit on: without
		// them a stage reading exchanges would run no task at all.
		return nil, fmt.Errorf("no task plans (neither %s nor groups)", fieldTasks)
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
