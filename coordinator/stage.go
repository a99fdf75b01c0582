package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/adaptive"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
)

// Running one stage: its tasks, the LIMIT early-stop safety net, and the
// output (statistics and committed objects) recorded when it is done.

// stageOutput is what a finished stage produced: statistics for the
// re-planner and the committed objects per partition for its consumers.
//
// Its record in Redis (the stage's "output" field) holds the statistics
// only, with FromTasks set: the objects are the partitions of the
// committed task results, which Redis holds already (one value per task),
// and Store.StageOutput rebuilds them from there, with the repairs'
// replacements (Replaced) applied. Recording them in the stage's value
// too would make that one value grow with tasks x partitions: 20 M
// references, about 2 GB, for 10,000 tasks feeding 2,000 partitions,
// past Redis's 512 MB limit of one value. Records written before hold
// Objects themselves.
type stageOutput struct {
	Stats   adaptive.StageStats         `json:"stats"`
	Objects map[int][]shuffle.ObjectRef `json:"objects,omitempty"`
	// FromTasks: Objects are the committed results of tasks 0..Tasks-1.
	FromTasks bool `json:"from_tasks,omitempty"`
	Tasks     int  `json:"tasks,omitempty"`
	// Replaced maps the id of a lost object to the objects a repair
	// wrote in its place (applied again to the replacements).
	Replaced map[string][]shuffle.ObjectRef `json:"replaced,omitempty"`
}

// record is the output's record for Redis: statistics, no objects.
func (o *stageOutput) record(tasks int) []byte {
	b, _ := json.Marshal(&stageOutput{Stats: o.Stats, FromTasks: true, Tasks: tasks, Replaced: o.Replaced})
	return b
}

// replaced returns ref, or what repairs wrote in its place.
func (o *stageOutput) replaced(ref shuffle.ObjectRef, depth int) []shuffle.ObjectRef {
	rr, ok := o.Replaced[ref.ID()]
	if !ok || depth > 16 {
		return []shuffle.ObjectRef{ref}
	}
	var out []shuffle.ObjectRef
	for _, r := range rr {
		out = append(out, o.replaced(r, depth+1)...)
	}
	return out
}

// addResult appends a committed task result's partitions to Objects.
func (o *stageOutput) addResult(r *function.TaskResult) {
	for _, p := range r.Partitions {
		if len(o.Replaced) == 0 {
			o.Objects[p.Partition] = append(o.Objects[p.Partition], p.Ref())
			continue
		}
		o.Objects[p.Partition] = append(o.Objects[p.Partition], o.replaced(p.Ref(), 0)...)
	}
}

// allObjects returns the committed objects of every partition, in
// partition order.
func (o *stageOutput) allObjects() []shuffle.ObjectRef {
	parts := make([]int, 0, len(o.Objects))
	for p := range o.Objects {
		parts = append(parts, p)
	}
	sort.Ints(parts)
	var out []shuffle.ObjectRef
	for _, p := range parts {
		out = append(out, o.Objects[p]...)
	}
	return out
}

// runStage runs every task of a stage, records its output in Redis and
// returns it. It touches no shared run state: the loop owns that.
func (c *Coordinator) runStage(ctx context.Context, run *jobRun, st *plan.Stage, work []taskWork, planKey string) (*stageOutput, error) {
	log := c.log.With("job", run.id, "stage", st.ID)
	body, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encode stage %d: %w", st.ID, err)
	}
	if err := c.bucket.Put(ctx, planKey, body); err != nil {
		return nil, fmt.Errorf("upload plan of stage %d: %w", st.ID, err)
	}
	started := time.Now()
	kv := []any{"tasks", len(work), "plan_key", planKey, "started", started.UTC().Format(time.RFC3339Nano)}
	if len(work) > 0 && work[0].filesPruned > 0 {
		kv = append(kv, "files_pruned", work[0].filesPruned)
	}
	if err := c.store.StartStage(ctx, run.id, run.fence, st.ID, kv...); err != nil {
		return nil, err
	}
	log.Info("stage started", "tasks", len(work))

	results := make([]*function.TaskResult, len(work))
	var limit int64
	if c.cfg.LimitEarlyStop {
		limit = stageLimit(st)
	}
	first := c.runTasks(ctx, run, st, planKey, work, results, limit, nil)
	if first == nil && limit > 0 {
		// Safety net of LIMIT early stop: failed attempts may have inflated
		// the counter; if the committed rows fall short, run the tasks that
		// stopped early again, to the end.
		var rows int64
		var again []int
		for t, r := range results {
			rows += r.Rows
			if r.StoppedEarly {
				again = append(again, t)
			}
		}
		if rows < limit && len(again) > 0 {
			log.Warn("LIMIT early stop fell short; re-running tasks that stopped early", "rows", rows, "limit", limit, "tasks", len(again))
			for _, t := range again {
				if err := c.store.Reopen(ctx, run.id, run.fence, st.ID, t); err != nil {
					return nil, err
				}
			}
			first = c.runTasks(ctx, run, st, planKey, work, results, 0, again)
		}
	}
	if first != nil {
		if ctx.Err() == nil && !errors.Is(first, ErrStaleFence) && !errors.Is(first, errCancelled) {
			// Failed for good: the stage says so (the job fails next).
			_ = c.store.FailStage(context.WithoutCancel(ctx), run.id, run.fence, st.ID, "error", first.Error())
		}
		return nil, first
	}
	out := &stageOutput{Objects: map[int][]shuffle.ObjectRef{}}
	parts := map[int]*adaptive.PartitionStats{}
	var inRows, inBytes, peakMem, spillBytes, spillFiles, gets, puts int64
	invoked, rgPruned, rgStats := 0, 0, 0
	dataObjects := map[string]bool{}
	for _, r := range results {
		if r.S3 != nil {
			gets += r.S3.Get + r.S3.Head
			puts += r.S3.Put
		}
		inRows += r.InputRows
		inBytes += r.InputBytes
		rgPruned += r.RowGroupsPruned
		rgStats += r.RowGroupsFromStats
		peakMem = max(peakMem, r.PeakMemoryBytes)
		spillBytes += r.SpillBytes
		spillFiles += r.SpillFiles
		if !r.NotInvoked && !r.SharedInvocation {
			invoked++
		}
		for _, p := range r.Partitions {
			dataObjects[p.Ref().Key] = true
			out.Objects[p.Partition] = append(out.Objects[p.Partition], p.Ref())
			ps := parts[p.Partition]
			if ps == nil {
				ps = &adaptive.PartitionStats{Partition: p.Partition}
				parts[p.Partition] = ps
			}
			ps.Rows += p.Rows
			ps.Bytes += p.Bytes
			ps.Objects++
			out.Stats.Rows += p.Rows
			out.Stats.Bytes += p.Bytes
		}
	}
	out.Stats.Objects = len(dataObjects)
	out.Stats.Summaries = stageSummaries(st, results)
	for _, ps := range parts {
		out.Stats.Partitions = append(out.Stats.Partitions, *ps)
	}
	sort.Slice(out.Stats.Partitions, func(i, j int) bool {
		return out.Stats.Partitions[i].Partition < out.Stats.Partitions[j].Partition
	})
	oj := out.record(len(results))
	mj, _ := json.Marshal(function.AggregateMetrics(results)) // per-operator and phase metrics (kept with the stage)
	if err := c.store.FinishStage(ctx, run.id, run.fence, st.ID, "output", string(oj), "metrics", string(mj),
		"rows", out.Stats.Rows, "bytes", out.Stats.Bytes, "input_rows", inRows, "input_bytes", inBytes, "invoked", invoked,
		"row_groups_pruned", rgPruned, "row_groups_from_stats", rgStats,
		"peak_memory", peakMem, "spill_bytes", spillBytes, "spill_files", spillFiles,
		// The committed attempts' requests (the web UI shows s3_* fields
		// as the stage's cost); the job's cost report has every attempt's.
		"s3_get", gets, "s3_put", puts,
		"seconds", time.Since(started).Seconds()); err != nil {
		return nil, err
	}
	log.Info("stage done", "rows", out.Stats.Rows, "bytes", out.Stats.Bytes, "seconds", time.Since(started).Seconds())
	return out, nil
}

// runTasks runs the given tasks of a stage (all when only is nil) and fills
// results; it returns the first error that fails the stage.
func (c *Coordinator) runTasks(ctx context.Context, run *jobRun, st *plan.Stage, planKey string, work []taskWork,
	results []*function.TaskResult, limit int64, only []int) error {
	if only == nil {
		for t := range work {
			only = append(only, t)
		}
	}
	errs := make(chan error, len(only))
	run.times.tracker(st.ID).setTasks(len(work))
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, t := range only {
		go func(t int) {
			res, err := c.runTask(tctx, run, st, planKey, t, work[t], limit)
			results[t] = res
			if err != nil {
				cancel() // one task failing for good fails the stage
			}
			errs <- err
		}(t)
	}
	var first error
	for range only {
		if err := <-errs; err != nil && (first == nil || errors.Is(first, context.Canceled)) {
			first = err
		}
	}
	return first
}

// stageLimit returns the row count a stage needs in total when its
// fragment ends in a bare LIMIT (no sort below it in the stage: any rows
// will do), or 0.
func stageLimit(st *plan.Stage) int64 {
	if st.Root.Kind != plan.KindLimit || st.Root.Limit < 0 {
		return 0
	}
	sorted := false
	plan.Walk(st.Root, func(n *plan.Node) {
		if n.Kind == plan.KindSort {
			sorted = true
		}
	})
	if sorted {
		return 0
	}
	return st.Root.Limit + st.Root.Offset
}
