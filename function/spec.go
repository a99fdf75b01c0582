// Package function is sluice's task runtime: it decodes a TaskSpec, builds
// the plan fragment's operator pipeline over the task's inputs, writes the
// output through the shuffle writer and returns a TaskResult. The same
// Handle core sits behind every adapter (in-process pool, HTTP, Lambda).
package function

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// SpecVersion is the TaskSpec wire version this runtime understands.
const SpecVersion = 1

// TaskSpec tells a function what to run. It is JSON, small, and never
// holds credentials: functions take those from their environment.
type TaskSpec struct {
	Version int    `json:"version"`
	Job     string `json:"job"`
	Stage   int    `json:"stage"`
	Task    int    `json:"task"`
	Attempt int    `json:"attempt"`
	// Fence is the job's fencing token when the task was scheduled; the
	// coordinator rejects results carrying a stale one.
	Fence int64 `json:"fence"`
	// Bucket and Prefix locate the job's objects.
	Bucket string `json:"bucket"`
	Prefix string `json:"prefix"`
	// PlanKey is the object holding the stage's plan fragment (plan.Stage).
	PlanKey string `json:"plan_key"`
	// Plan, when set, is the fragment itself (the object at PlanKey,
	// encoded): the task reads no plan object. The coordinator sends
	// small fragments this way (coordinator.InlinePlanBytes), and writes
	// their objects while the tasks run.
	Plan json.RawMessage `json:"plan,omitempty"`
	// Splits are the table file pieces a scan stage's task reads.
	Splits []Split `json:"splits,omitempty"`
	// Inputs are, per upstream stage, the committed shuffle objects of
	// the partitions this task reads.
	Inputs []Input `json:"inputs,omitempty"`
	// OutputPrefix is where this attempt writes its output objects and
	// manifest (an attempt prefix of the shuffle layout).
	OutputPrefix string `json:"output_prefix"`
	// Limit, when > 0, is a bare LIMIT the job may stop at: the function
	// adds the rows it emits to the Redis counter LimitKey and stops once
	// the counter reaches Limit. (Used by LIMIT early stop.)
	Limit    int64  `json:"limit,omitempty"`
	LimitKey string `json:"limit_key,omitempty"`
	// ShuffleCodec is the codec of the task's shuffle output (lz4, zstd,
	// none; "" is shuffle.DefaultCompression).
	ShuffleCodec string `json:"shuffle_codec,omitempty"`
	// Deadline is when the coordinator stops waiting for this attempt.
	Deadline time.Time `json:"deadline,omitzero"`
	// FunctionMemory is the memory of the function the task runs in, in
	// bytes (the coordinator's --function-memory; 0: the runtime's own
	// setting). The task's operators get OperatorMemoryShare of it.
	FunctionMemory int64 `json:"function_memory,omitempty"`

	// memoryShare, when > 1, is the number of tasks of one invocation
	// (a Batch) that run at once in the function (handleBatch): each gets
	// that part of the operator budget.
	memoryShare int
}

// Split is one table file and the row groups of it a task reads (nil: all).
type Split struct {
	Key  string `json:"key"`
	Size int64  `json:"size"`
	// ETag is the version of the file the plan was made with (""
	// unknown): the scan reads only that version (objstore.WithVersion).
	ETag      string `json:"etag,omitempty"`
	RowGroups []int  `json:"row_groups,omitempty"`
	// Partition holds the file's hive partition values, one per
	// Scan.Partitions column.
	Partition []plan.Value `json:"partition,omitempty"`
	// Deletes are the keys of the Iceberg position-delete files that
	// name rows of this file; the scan drops those rows.
	Deletes []string `json:"deletes,omitempty"`
}

// Input is what a task reads of one upstream stage.
type Input struct {
	Stage   int                `json:"stage"`
	Objects shuffle.ObjectRefs `json:"objects"`
	// Refs, when set (and Objects nil), are the objects as the
	// coordinator holds them for encoding: written as "objects" without
	// being built (shuffle.RefsOf). A decoded Input has Objects.
	Refs *shuffle.RefsOf `json:"-"`
}

// MarshalJSON implements json.Marshaler: Objects, or Refs when set.
func (in Input) MarshalJSON() ([]byte, error) {
	type plain Input // without this method
	if in.Refs == nil || in.Objects != nil {
		return json.Marshal(plain(in))
	}
	objs, err := in.Refs.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(objs)+40)
	b = append(b, `{"stage":`...)
	b = strconv.AppendInt(b, int64(in.Stage), 10)
	b = append(b, `,"objects":`...)
	b = append(b, objs...)
	return append(b, '}'), nil
}

// ErrorKind classifies a failed task so the coordinator knows whether a
// retry can help.
type ErrorKind string

const (
	// ErrUser: retrying cannot help: the query itself is wrong (a bad
	// cast, an overflow, a memory limit) or a bug made the plan unfit
	// (TaskResult.Code says which, and its class).
	ErrUser ErrorKind = "user"
	// ErrTransient: infrastructure trouble (S3, network); retry.
	ErrTransient ErrorKind = "transient"
	// ErrInputLost: an input object was missing or corrupt; the producing
	// task must run again.
	ErrInputLost ErrorKind = "input_lost"
	// ErrCancelled: the job was cancelled or its LIMIT met.
	ErrCancelled ErrorKind = "cancelled"
)

// TaskResult is what a function reports back.
type TaskResult struct {
	Job     string `json:"job"`
	Stage   int    `json:"stage"`
	Task    int    `json:"task"`
	Attempt int    `json:"attempt"`
	Fence   int64  `json:"fence"`
	// Partitions are the non-empty output partitions written.
	Partitions shuffle.PartitionList `json:"partitions,omitempty"`
	Rows       int64                 `json:"rows"`
	Bytes      int64                 `json:"bytes"`
	// Metrics of the run.
	InputRows       int64 `json:"input_rows"`
	InputBytes      int64 `json:"input_bytes"`
	RowGroupsPruned int   `json:"row_groups_pruned,omitempty"`
	// RowGroupsFromStats is how many row groups a global count/min/max
	// took from their footer statistics instead of reading them.
	RowGroupsFromStats int `json:"row_groups_from_stats,omitempty"`
	// Summaries summarize the output columns the stage asked for
	// (plan.Stage.Summarize) over the rows the task wrote.
	Summaries []plan.ColumnSummary `json:"summaries,omitempty"`
	// StoppedEarly is set when the task stopped reading because its
	// stage's LIMIT counter was reached.
	StoppedEarly bool `json:"stopped_early,omitempty"`
	// NotInvoked is set by the coordinator on the empty result it commits
	// for a task it did not need to run.
	NotInvoked bool `json:"not_invoked,omitempty"`
	// SharedInvocation is set by the coordinator on a task that ran in a
	// Batch whose invocation another member of it counts and is charged.
	SharedInvocation bool    `json:"shared_invocation,omitempty"`
	Seconds          float64 `json:"seconds"`
	// Phases break the attempt's time into queue, startup, read,
	// compute, write and commit (metrics.go).
	Phases *Phases `json:"phases,omitempty"`
	// Operators are the metrics of every operator of the fragment, by
	// plan node id (pre-order from the stage root, exec.NodeIDs), and of
	// the shuffle writer (node -1).
	Operators []exec.OpMetrics `json:"operators,omitempty"`
	// PeakMemoryBytes is the most memory the task's operators held at
	// once (hash tables, sort buffers, join build sides), MemoryBudget the
	// budget they had, and SpillBytes and SpillFiles what they spilled to
	// local disk to stay within it.
	PeakMemoryBytes int64 `json:"peak_memory_bytes,omitempty"`
	MemoryBudget    int64 `json:"memory_budget,omitempty"`
	SpillBytes      int64 `json:"spill_bytes,omitempty"`
	SpillFiles      int64 `json:"spill_files,omitempty"`
	// S3 counts the object store requests and bytes of the attempt (for
	// the job's cost report).
	S3 *objstore.RequestStats `json:"s3,omitempty"`
	// Error, when set, says why the task failed; Kind says what to do.
	Error string    `json:"error,omitempty"`
	Kind  ErrorKind `json:"kind,omitempty"`
	// Code is the error's registry code (plan.Codes), "" when it has
	// none; its class decides whether the coordinator retries.
	Code      string `json:"code,omitempty"`
	LostStage int    `json:"lost_stage,omitempty"`
	// LostKey names the input object found missing or corrupt (Kind
	// input_lost): the coordinator runs the task that wrote it again.
	LostKey string `json:"lost_key,omitempty"`
	// Outage, on a transient failure, names the service that was
	// unreachable ("object store"): the coordinator waits for it within
	// its outage budget instead of spending the task's retries.
	Outage string `json:"outage,omitempty"`
}

// Encode and Decode are the wire format shared by every adapter.
func (s *TaskSpec) Encode() ([]byte, error) { return json.Marshal(s) }

// EncodedSpec is a TaskSpec in its wire form, built in two parts: the bulk
// (splits and inputs, which grow with a stage's width: a reader of 10,000
// objects lists them all) encoded once, and the head (every other field,
// a few hundred bytes) encoded from the struct, again whenever it changes.
// The body is one JSON object, the bulk's members first and the head's
// after them, so DecodeSpec reads it as it reads Encode's (members in
// another order). An attempt sent again later (after a 429, its deadline
// counted from then) re-encodes its head only, and the caller need not
// keep the inputs.
type EncodedSpec struct {
	head   TaskSpec // without splits and inputs
	body   []byte
	headAt int // the head's members start at body[headAt:]
}

// EncodeParts encodes s as an EncodedSpec.
func (s *TaskSpec) EncodeParts() (*EncodedSpec, error) {
	// The bulk's members, written here rather than by json.Marshal of a
	// struct, which copies (and validates) each input's encoding again:
	// a combining task's refs are megabytes.
	var parts [][]byte // name, value, name, value...
	size := 0
	if len(s.Plan) > 0 {
		parts = append(parts, []byte(`"plan":`), s.Plan)
		size += len(s.Plan) + 8
	}
	if len(s.Splits) > 0 {
		b, err := json.Marshal(s.Splits)
		if err != nil {
			return nil, err
		}
		parts = append(parts, []byte(`"splits":`), b)
		size += len(b) + 10
	}
	var ins [][]byte // each input's encoding, in chunks
	for i, in := range s.Inputs {
		if i > 0 {
			ins = append(ins, []byte{','})
		}
		if in.Refs != nil && in.Objects == nil {
			// As Input.MarshalJSON, without copying the refs' encoding.
			objs, err := in.Refs.MarshalJSON()
			if err != nil {
				return nil, err
			}
			ins = append(ins, []byte(`{"stage":`+strconv.Itoa(in.Stage)+`,"objects":`), objs, []byte{'}'})
			size += len(objs) + 40
			continue
		}
		b, err := in.MarshalJSON()
		if err != nil {
			return nil, err
		}
		ins = append(ins, b)
		size += len(b) + 1
	}
	const headRoom = 1 << 10 // the head, appended in place
	body := make([]byte, 0, 1+size+12+headRoom)
	body = append(body, '{')
	for i, p := range parts {
		if i > 0 && i%2 == 0 {
			body = append(body, ',')
		}
		body = append(body, p...)
	}
	if len(ins) > 0 {
		if len(parts) > 0 {
			body = append(body, ',')
		}
		body = append(body, `"inputs":[`...)
		for i, b := range ins {
			body = append(body, b...)
			ins[i] = nil
		}
		body = append(body, ']')
	}
	if len(body) > 1 {
		body = append(body, ',')
	}
	e := &EncodedSpec{head: *s, headAt: len(body)}
	e.head.Splits, e.head.Inputs, e.head.Plan = nil, nil, nil
	head, err := json.Marshal(&e.head)
	if err != nil {
		return nil, err
	}
	e.body = append(body, head[1:]...) // the first body: nobody holds it yet
	return e, nil
}

// encodeHead writes the head's members after the bulk's, into a new body
// (a caller may still hold the last one).
func (e *EncodedSpec) encodeHead() error {
	head, err := json.Marshal(&e.head)
	if err != nil {
		return err
	}
	body := make([]byte, 0, e.headAt+len(head)-1)
	body = append(body, e.body[:e.headAt]...)
	e.body = append(body, head[1:]...) // head is {...}: its members and the closing brace
	return nil
}

// Body returns the encoded spec.
func (e *EncodedSpec) Body() []byte { return e.body }

// Deadline returns the spec's deadline.
func (e *EncodedSpec) Deadline() time.Time { return e.head.Deadline }

// SetDeadline encodes the spec again with deadline d (the bulk as it was).
func (e *EncodedSpec) SetDeadline(d time.Time) error {
	e.head.Deadline = d
	return e.encodeHead()
}

// DecodeSpec parses and checks a TaskSpec.
func DecodeSpec(b []byte) (*TaskSpec, error) {
	var s TaskSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decode task spec: %w", err)
	}
	if s.Version != SpecVersion {
		return nil, fmt.Errorf("task spec version %d not supported (want %d)", s.Version, SpecVersion)
	}
	if s.Job == "" || s.PlanKey == "" || s.OutputPrefix == "" {
		return nil, fmt.Errorf("task spec incomplete: job, plan_key and output_prefix are required")
	}
	return &s, nil
}

// Stage decodes a stage plan fragment.
func decodeStage(b []byte) (*plan.Stage, error) {
	var st plan.Stage
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("decode stage plan: %w", err)
	}
	return &st, nil
}

// Batch is the wire form of one invocation that carries several task
// attempts (small tasks packed together so they cost one invocation, see
// coordinator.Config.PackBytes). Each member is an encoded TaskSpec; the
// function runs them concurrently and answers with a Batch whose Results
// hold, in the same order, each member's encoded TaskResult. A batch never
// nests.
type Batch struct {
	Version int               `json:"version"`
	Specs   []json.RawMessage `json:"batch,omitempty"`
	Results []json.RawMessage `json:"results,omitempty"`
}

// IsBatch reports whether an encoded invocation body is a Batch.
func IsBatch(body []byte) bool {
	var probe struct {
		Specs []json.RawMessage `json:"batch"`
	}
	return json.Unmarshal(body, &probe) == nil && len(probe.Specs) > 0
}
