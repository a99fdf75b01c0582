package coordinator

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/redis/go-redis/v9"
	"github.com/zeebo/xxh3"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/adaptive"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
)

// StageStatus is what a stage did, for progress and `jobs show`.
type StageStatus struct {
	ID        int        `json:"id"`
	State     StageState `json:"state"`
	Reason    string     `json:"reason,omitempty"`
	Tasks     int        `json:"tasks"`
	Invoked   int        `json:"invoked"`
	TasksDone int        `json:"tasks_done"`
	// Attempts counts the attempts started (hedged duplicates and
	// attempts abandoned by a dead coordinator included); Retries the
	// failed attempts.
	Attempts   int   `json:"attempts"`
	Retries    int   `json:"retries"`
	Rows       int64 `json:"rows"`
	Bytes      int64 `json:"bytes"`
	InputRows  int64 `json:"input_rows"`
	InputBytes int64 `json:"input_bytes"`
	// FilesPruned is how many files of a scanned hive-partitioned table
	// the stage's partition filter excluded before its tasks were made.
	FilesPruned int `json:"files_pruned,omitempty"`
	// RowGroupsPruned is how many row groups its scan tasks skipped from
	// their statistics (the scan's pruning filter, runtime filters
	// included), summed over its committed tasks.
	RowGroupsPruned int `json:"row_groups_pruned,omitempty"`
	// RowGroupsFromStats is how many row groups a global count, min or
	// max took from their footer statistics instead of reading them.
	RowGroupsFromStats int     `json:"row_groups_from_stats,omitempty"`
	Seconds            float64 `json:"seconds"`
	Output             string  `json:"output"`
	// Metrics are the stage's per-operator metrics and phase breakdown,
	// summed over its committed tasks (nil until the stage is done).
	Metrics *function.StageMetrics `json:"metrics,omitempty"`
	// Plan is the stage's fragment, whose node ids Metrics uses.
	Plan *plan.Node `json:"plan,omitempty"`
	// PeakMemoryBytes is the most operator memory one task of the stage
	// held; SpillBytes and SpillFiles what its tasks spilled to disk.
	PeakMemoryBytes int64 `json:"peak_memory_bytes,omitempty"`
	SpillBytes      int64 `json:"spill_bytes,omitempty"`
	SpillFiles      int64 `json:"spill_files,omitempty"`
}

// JobStatus is a job's state as recorded in Redis.
type JobStatus struct {
	ID    string   `json:"id"`
	State JobState `json:"state"`
	Error string   `json:"error,omitempty"`
	// Code and Class are a failed job's error code and class
	// (docs/errors.md); empty when the failure has no code.
	Code  string `json:"code,omitempty"`
	Class string `json:"class,omitempty"`
	// Waiting, when set, says what the job is waiting for (an outage of
	// the functions or the object store, ridden out within a budget).
	Waiting string `json:"waiting,omitempty"`
	SQL     string `json:"sql"`
	Owner   string `json:"owner,omitempty"`
	// Lease is the coordinator holding the job's lease now ("" when none:
	// finished, or its coordinator died and no other took it over yet);
	// Fence counts the coordinators that drove it.
	Lease     string           `json:"lease,omitempty"`
	Fence     int64            `json:"fence"`
	Collected string           `json:"collected,omitempty"`
	Adaptive  bool             `json:"adaptive"`
	Created   string           `json:"created"`
	Finished  string           `json:"finished,omitempty"`
	Columns   []string         `json:"columns"`
	Stages    []StageStatus    `json:"stages"`
	Rounds    []adaptive.Round `json:"rounds,omitempty"`
	Explain   string           `json:"explain,omitempty"`
	// Cost is the job's cost report so far.
	Cost *Cost `json:"cost,omitempty"`
}

// Status reads a job's status from Redis.
func (s *Store) Status(ctx context.Context, job string) (*JobStatus, error) {
	return s.status(ctx, job, false)
}

// status reads a job's status; brief leaves out, while the job has not
// ended, what a progress display does not show and is dearest to decode:
// the adaptive rounds (each holds plans) and the stages' operator metrics.
// A job that ended is always read whole.
func (s *Store) status(ctx context.Context, job string, brief bool) (*JobStatus, error) {
	m, err := s.Job(ctx, job)
	if err != nil {
		return nil, err
	}
	js := &JobStatus{ID: job, State: m.State, Error: m.Error, Code: m.Code, Class: m.Class, Waiting: m.Waiting, SQL: m.SQL, Owner: m.Owner,
		Adaptive: m.Adaptive, Created: m.Created, Finished: m.Finished, Explain: m.Explain, Collected: m.Collected}
	if m.State == StateRunning {
		// Clients show one line of what the job waits for: an outage, the
		// stages held for a runtime filter, a store that does not answer.
		js.Waiting = m.waiting()
	}
	if m.State == StateQueued && js.Waiting == "" {
		// Clients (submit, the shell, the web UI) show Waiting as it is.
		js.Waiting = "queued by admission control (--max-jobs)"
		if pos, err := s.QueuePosition(ctx, job); err == nil && pos > 0 {
			js.Waiting = fmt.Sprintf("queued by admission control (--max-jobs): number %d in line", pos)
		}
	}
	_ = s.retry(ctx, "read lease", func() error {
		vals, err := s.rdb.MGet(ctx, kLease(job), kFence(job)).Result()
		if err != nil {
			return err
		}
		if !m.State.Terminal() {
			// A finished job holds no lease, whatever the key says: its
			// driver releases it just after recording the end.
			js.Lease, _ = vals[0].(string)
		}
		f, _ := vals[1].(string)
		js.Fence, _ = strconv.ParseInt(f, 10, 64)
		return nil
	})
	g, err := m.Plan()
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", job, err)
	}
	js.Columns = g.Columns
	brief = brief && !Terminal(m.State)
	for _, st := range g.Stages {
		sm, err := s.Stage(ctx, job, st.ID)
		if err != nil {
			return nil, err
		}
		ss := StageStatus{ID: st.ID, State: sm.StateOrPending(), Reason: sm.Reason, Output: plan.FormatPartitioning(st.Output, st.Root),
			Tasks: sm.Tasks, TasksDone: sm.Done, Invoked: sm.Invoked, Attempts: sm.Attempts, Retries: sm.Failures,
			Rows: sm.Rows, Bytes: sm.Bytes, InputRows: sm.InputRows, InputBytes: sm.InputBytes,
			FilesPruned: sm.FilesPruned, RowGroupsPruned: sm.RowGroupsPruned, RowGroupsFromStats: sm.RowGroupsFromStats, Seconds: sm.Seconds,
			PeakMemoryBytes: sm.PeakMemory, SpillBytes: sm.SpillBytes, SpillFiles: sm.SpillFiles}
		if brief {
			js.Stages = append(js.Stages, ss)
			continue
		}
		if m := sm.Metrics(); m != nil {
			ss.Metrics, ss.Plan = m, st.Root
		}
		js.Stages = append(js.Stages, ss)
	}
	if brief {
		return js, nil
	}
	rounds, err := s.Rounds(ctx, job)
	if err != nil {
		return nil, err
	}
	for _, r := range rounds {
		var rr adaptive.Round
		if json.Unmarshal([]byte(r), &rr) == nil {
			js.Rounds = append(js.Rounds, rr)
		}
	}
	return js, nil
}

// ResultObjects returns the committed result objects of a succeeded job,
// in task order, with the result schema.
func (s *Store) ResultObjects(ctx context.Context, job string) ([]shuffle.ObjectRef, *arrow.Schema, error) {
	m, err := s.Job(ctx, job)
	if err != nil {
		return nil, nil, err
	}
	if m.State == StateFailed {
		return nil, nil, m.Failure(job)
	}
	if m.State != StateSucceeded {
		return nil, nil, fmt.Errorf("job %s is %s, not succeeded", job, m.State)
	}
	g, err := m.Plan()
	if err != nil {
		return nil, nil, fmt.Errorf("job %s: %w", job, err)
	}
	st := g.Stage(g.Result)
	schema := ResultSchema(g)
	sm, err := s.Stage(ctx, job, st.ID)
	if err != nil {
		return nil, nil, err
	}
	if sm.State != StageDone {
		return nil, schema, nil // skipped: empty result
	}
	out, err := s.StageOutput(ctx, job, st.ID, sm)
	if err != nil {
		return nil, nil, fmt.Errorf("result stage: %w", err)
	}
	return out.partObjects(0), schema, nil
}

// ResultSchema is the Arrow schema of a job's result, with the user's
// column names.
func ResultSchema(g *plan.Graph) *arrow.Schema {
	sch := g.Stage(g.Result).Root.Schema
	fs := make(plan.Schema, len(sch))
	copy(fs, sch)
	for i := range fs {
		if i < len(g.Columns) {
			fs[i].Name = g.Columns[i]
		}
	}
	return fs.Arrow()
}

// statusFingerprint is a cheap digest of everything Status reads for a job
// whose stages are stages: the job's fields (the plan by its length: a
// re-plan also adds a round), its lease, fence, rounds, cost and the raw
// fields of every stage, in one pipelined round trip and without decoding
// any JSON. Equal digests mean an equal Status; the status long-poll
// re-reads it instead of the whole status while it waits.
func (s *Store) statusFingerprint(ctx context.Context, job string, stages []int) (uint64, error) {
	var sum uint64
	err := s.retry(ctx, "read status digest", func() error {
		pipe := s.rdb.Pipeline()
		fields := pipe.HMGet(ctx, kJob(job), "state", "error", "code", "class", "waiting", "held", "stalled", "finished", "collected", "explain")
		graph := pipe.HStrLen(ctx, kJob(job), "graph")
		lease := pipe.MGet(ctx, kLease(job), kFence(job))
		rounds := pipe.LLen(ctx, kRounds(job))
		cost := pipe.HGetAll(ctx, kCost(job))
		sts := make([]*redis.MapStringStringCmd, len(stages))
		for i, id := range stages {
			sts[i] = pipe.HGetAll(ctx, kStage(job, id))
		}
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		h := xxh3.New()
		fmt.Fprint(h, fields.Val(), graph.Val(), lease.Val(), rounds.Val())
		writeMap(h, cost.Val())
		for _, st := range sts {
			writeMap(h, st.Val())
		}
		sum = h.Sum64()
		return nil
	})
	return sum, err
}

// writeMap writes a map's pairs in key order, each string after its
// length (so that no two maps write the same bytes). It runs every
// statusRecheck while a client long-polls, over stage hashes that hold
// metrics JSON: quoting them with fmt's %q was most of its cost.
func writeMap(w io.Writer, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var n [binary.MaxVarintLen64]byte
	str := func(s string) {
		w.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		io.WriteString(w, s)
	}
	for _, k := range keys {
		str(k)
		str(m[k])
	}
	io.WriteString(w, "|")
}
