// Package webui is the coordinator's web UI: a jobs list and a job page
// showing what the adaptive planner did (the stage graph after every
// re-planning round, the rules that fired, the stages and their tasks on a
// timeline). Pages are rendered on the server from the same JSON views the
// API serves (JobSummary, JobDetail), which a Source reads from Redis, so
// every coordinator replica shows the same thing. Templates, CSS and the
// little JavaScript (live refresh, round selector) are embedded.
package webui

// JobSummary is one line of the jobs list (GET /v1/jobs?detail=1).
type JobSummary struct {
	ID       string `json:"id"`
	State    string `json:"state"`
	SQL      string `json:"sql"`
	Error    string `json:"error,omitempty"`
	Code     string `json:"code,omitempty"` // the error's stable code (SLnnn), when it has one
	Adaptive bool   `json:"adaptive"`
	Created  string `json:"created"`
	Finished string `json:"finished,omitempty"`
	// Seconds is the wall time from submit to finish (to now while running).
	Seconds    float64 `json:"seconds"`
	StageCount int     `json:"stage_count"`
	// Invoked counts function invocations (attempts started).
	Invoked       int   `json:"invoked"`
	ShuffledBytes int64 `json:"shuffled_bytes"`
	RoundCount    int   `json:"round_count"`
	RulesFired    int   `json:"rules_fired"`
	// Cost holds the cost fields recorded with the job (S3 requests, $),
	// by name, when the coordinator records any.
	Cost map[string]string `json:"cost,omitempty"`
	// USD is the job's priced cost in dollars (the cost field "usd"); -1
	// when nothing was priced.
	USD float64 `json:"usd"`
	// Waiting, when set, says what a running job waits for (an outage of
	// the object store or the functions, a stage held for a runtime
	// filter).
	Waiting string `json:"waiting,omitempty"`
}

// JobDetail is everything the job page shows (GET /v1/jobs/{id}/detail).
type JobDetail struct {
	JobSummary
	Columns []string `json:"columns"`
	Explain string   `json:"explain,omitempty"`
	// Graph is the plan as it stands now, with every stage's state.
	Graph *Graph `json:"graph"`
	// Rounds starts with round 0, the plan as submitted; every later
	// entry is the plan after one re-planning round.
	Rounds []Round `json:"rounds"`
	Stages []Stage `json:"stages"`
	Tasks  []Task  `json:"tasks"`
	// Now is the server's clock (Unix ms) when the view was read, the end
	// of attempts still running on the timeline.
	Now int64 `json:"now"`
	// Settings are the knobs the job ran with, as recorded when it was
	// submitted (nil for jobs recorded before they were).
	Settings []Setting `json:"settings,omitempty"`
}

// Setting is one knob of a job and its value.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Graph is a stage graph: one node per stage, one edge per exchange.
type Graph struct {
	Stages []GraphStage `json:"stages"`
	Edges  []Edge       `json:"edges"`
	Result int          `json:"result"`
}

// GraphStage is a node of the stage graph.
type GraphStage struct {
	ID int `json:"id"`
	// Ops lists the stage's fragment, leaves last ("aggregate final ←
	// hash join ← scan lineitem").
	Ops string `json:"ops"`
	// Main names the work of the stage: its one or two main operators,
	// in the order data flows ("hash join → agg partial"; "scan" for a
	// stage that only reads).
	Main string `json:"main"`
	// Tables are the tables its scans read.
	Tables []string `json:"tables,omitempty"`
	// Held is set on a pending stage held for a runtime filter.
	Held bool `json:"held,omitempty"`
	// Done counts its committed tasks.
	Done   int    `json:"tasks_done,omitempty"`
	Output string `json:"output"` // its output partitioning
	// Tasks is the number of tasks planned (0: one per scan split, unknown
	// until it starts).
	Tasks int `json:"tasks,omitempty"`
	// State is pending, running, done, skipped (or failed, cancelled).
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
}

// Edge is an exchange: stage To reads the output of stage From.
type Edge struct {
	From int `json:"from"`
	To   int `json:"to"`
	// Label is the partitioning of the exchange ("hash(#0) x8",
	// "broadcast", "single").
	Label string `json:"label"`
	// Whole is set when every task of To reads all of it (a hash
	// partitioned output broadcast by the re-planner).
	Whole bool `json:"whole,omitempty"`

	moved string // set on the layout's edges of removed stages (movedEdges)
}

// Round is the plan after one re-planning round.
type Round struct {
	Round int `json:"round"`
	// After lists the stages that had finished when the round ran.
	After []int   `json:"after_stages"`
	Fired []Fired `json:"fired"`
	// Graph is the plan after the round (nil for rounds recorded before
	// the coordinator kept it: then only Plan is known).
	Graph *Graph `json:"graph,omitempty"`
	// Plan is the round's plan as EXPLAIN text, with its task groups.
	Plan string `json:"plan,omitempty"`
	// Changes lists, by stage, what the round changed against the
	// previous one (added, skipped, partitioning, inputs, tasks).
	Changes map[int][]string `json:"changes,omitempty"`
}

// Fired is one rule that changed the plan in a round.
type Fired struct {
	Rule string `json:"rule"`
	Note string `json:"note"`
	// Stages are the stages the note names.
	Stages []int `json:"stages,omitempty"`
}

// Stage is one row of the stage table.
type Stage struct {
	ID         int     `json:"id"`
	State      string  `json:"state"`
	Reason     string  `json:"reason,omitempty"`
	Output     string  `json:"output"`
	Tasks      int     `json:"tasks"`
	TasksDone  int     `json:"tasks_done"`
	Invoked    int     `json:"invoked"`
	Attempts   int     `json:"attempts"`
	Retries    int     `json:"retries"`
	Rows       int64   `json:"rows"`
	Bytes      int64   `json:"bytes"`
	InputRows  int64   `json:"input_rows"`
	InputBytes int64   `json:"input_bytes"`
	Seconds    float64 `json:"seconds"`
	// Task durations of the committed attempts, in seconds.
	P50 float64 `json:"task_p50"`
	P90 float64 `json:"task_p90"`
	Max float64 `json:"task_max"`
	// PeakMemory is the largest peak memory a task reported (0: none did).
	PeakMemory int64 `json:"peak_memory,omitempty"`
	// InputQ and OutputQ are the min, 25th, 50th, 75th percentile and max
	// of the committed tasks' input bytes (table or shuffle bytes read)
	// and shuffle bytes written: the stage's skew at a glance.
	InputQ  *Quantiles `json:"input_bytes_q,omitempty"`
	OutputQ *Quantiles `json:"output_bytes_q,omitempty"`
	// Objects are the stored objects of its output, one per object key
	// (a task's data object holds every partition it wrote, as byte
	// ranges): the objects `sluice shuffle ls` lists, manifests aside.
	Objects []Object          `json:"objects,omitempty"`
	Cost    map[string]string `json:"cost,omitempty"`
	// Phases break the committed tasks' time into queue, startup, read,
	// compute, write and commit: summed over the tasks and the slowest
	// task's (nil: no task reported them yet).
	PhaseSum *Phases `json:"phase_sum,omitempty"`
	PhaseMax *Phases `json:"phase_max,omitempty"`
	// Operators are the stage's operators (the shuffle writer first, then
	// the fragment in pre-order) with their metrics summed over the
	// committed tasks.
	Operators []Operator `json:"operators,omitempty"`
}

// Phases are where tasks' time went, in seconds.
type Phases struct {
	Queue   float64 `json:"queue"`
	Startup float64 `json:"startup"`
	Read    float64 `json:"read"`
	Compute float64 `json:"compute"`
	Write   float64 `json:"write"`
	Commit  float64 `json:"commit"`
}

// Operator is one operator of a stage with its metrics (DataFusion's
// output_rows, elapsed_compute, ...), summed over the stage's tasks.
type Operator struct {
	// Node is the plan node id (pre-order from the stage root, 0); -1 is
	// the shuffle writer.
	Node  int    `json:"node"`
	Depth int    `json:"depth"`
	Kind  string `json:"kind"`
	Text  string `json:"text"`
	// Tasks counts the tasks that reported the operator.
	Tasks   int   `json:"tasks"`
	Rows    int64 `json:"output_rows"`
	Batches int64 `json:"output_batches"`
	// Bytes read (scan, exchange) or written (shuffle writer).
	Bytes int64 `json:"bytes,omitempty"`
	// Compute is elapsed_compute summed over tasks (s); ComputeMax and
	// WallMax the slowest task's.
	Compute    float64 `json:"elapsed_compute"`
	ComputeMax float64 `json:"elapsed_compute_max"`
	WallMax    float64 `json:"wall_max"`
}

// Quantiles are min, p25, p50, p75 and max (nearest rank).
type Quantiles [5]int64

// Object is one committed output object of a stage.
type Object struct {
	Key string `json:"key"`
	// Partitions are the output partitions it holds (one for an object
	// per partition, several for a task's data object).
	Partitions []int `json:"partitions"`
	Bytes      int64 `json:"bytes"`
	Rows       int64 `json:"rows"`
}

// Task is one task of a stage with all its attempts.
type Task struct {
	Stage     int       `json:"stage"`
	Task      int       `json:"task"`
	State     string    `json:"state"`
	Committed int       `json:"committed,omitempty"` // the winning attempt
	Error     string    `json:"error,omitempty"`
	Attempts  []Attempt `json:"attempts"`
	// Figures of the committed attempt's result (zero until committed).
	Seconds    float64 `json:"seconds"` // from invoked to committed
	InputRows  int64   `json:"input_rows"`
	InputBytes int64   `json:"input_bytes"`
	Rows       int64   `json:"rows"`  // written
	Bytes      int64   `json:"bytes"` // shuffle bytes written
	SpillBytes int64   `json:"spill_bytes,omitempty"`
	PeakMemory int64   `json:"peak_memory,omitempty"`
}

// Attempt is one attempt of a task on the timeline. Times are Unix ms; 0
// when not recorded (attempts of coordinators older than the timeline).
type Attempt struct {
	Attempt int   `json:"attempt"`
	Open    int64 `json:"open"`    // opened (then queued for a dispatch slot)
	Invoked int64 `json:"invoked"` // its function was invoked
	End     int64 `json:"end"`     // its outcome was known
	// Outcome is committed, lost_race, retrying, failed, input_lost,
	// running (no outcome yet) or cancelled (no outcome and the task is
	// decided: a duplicate stopped when another attempt won, or the
	// stage cancelled).
	Outcome string `json:"outcome"`
	// Hedge is set on a duplicate started while another attempt of the
	// task was still running.
	Hedge bool `json:"hedge,omitempty"`
}
