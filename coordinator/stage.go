package coordinator

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"sync"
	"sync/atomic"
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
//
// In memory, a FromTasks output keeps each committed task's partitions
// packed (tasks, in task order: about 28 bytes a partition, against 64 for
// an ObjectRef and its copy in the task result), and builds a partition's
// refs when a consumer's tasks are planned (partObjects).
type stageOutput struct {
	Stats adaptive.StageStats `json:"stats"`
	// Objects are the objects per partition of a record written before
	// FromTasks (nil otherwise: see partObjects).
	Objects map[int][]shuffle.ObjectRef `json:"objects,omitempty"`
	// FromTasks: Objects are the committed results of tasks 0..Tasks-1.
	FromTasks bool `json:"from_tasks,omitempty"`
	Tasks     int  `json:"tasks,omitempty"`
	// Replaced maps the id of a lost object to the objects a repair
	// wrote in its place (applied again to the replacements).
	Replaced map[string][]shuffle.ObjectRef `json:"replaced,omitempty"`

	// tasks are the committed tasks' partitions, in task order (a
	// FromTasks output in memory).
	tasks []taskParts

	// index is built once, when first asked for (an output is not
	// changed once its stage is done: repairs replace objects in the
	// readers' inputs, repairState.fix).
	indexOnce sync.Once
	idx       outputIndex
	// refsBuilt counts the refs built from the packed partitions (what
	// consumers' tasks cost in memory and CPU; the tests check that
	// planning builds none).
	refsBuilt atomic.Int64
}

// outputIndex is what planning a consumer stage needs of a finished
// output without building its refs (tasks x partitions of them: 19 M for
// 10,000 tasks feeding 2,000 partitions): the bytes per partition and per
// task, and a digest of which objects hold which partitions. One pass
// over the packed partitions builds it.
type outputIndex struct {
	// fast: bytes are from the packed partitions (no legacy Objects, no
	// replacements); else they are summed from the refs.
	fast      bool
	partBytes map[int]int64
	partRefs  map[int]int // objects holding each partition
	taskBytes []int64
	digest    uint64
}

// index returns the output's index, building it the first time.
func (o *stageOutput) index() *outputIndex {
	o.indexOnce.Do(func() {
		x := &o.idx
		x.partBytes, x.partRefs = map[int]int64{}, map[int]int{}
		h := fnv.New64a()
		var buf [4]byte
		if o.packed() && len(o.Replaced) == 0 {
			x.fast = true
			x.taskBytes = make([]int64, len(o.tasks))
			for i := range o.tasks {
				t := &o.tasks[i]
				fmt.Fprintf(h, "t%d:%s;", i, t.key)
				for j := range t.len() {
					p, b := t.partAt(j), t.bytesAt(j)
					x.partBytes[p] += b
					x.partRefs[p]++
					x.taskBytes[i] += b
					binary.LittleEndian.PutUint32(buf[:], uint32(p))
					h.Write(buf[:])
					if t.keys != nil {
						h.Write([]byte(t.keys[j]))
						h.Write([]byte{','})
					}
				}
			}
		} else {
			for _, p := range o.partitions() {
				fmt.Fprintf(h, "p%d:", p)
				for _, r := range o.partObjects(p) {
					x.partBytes[p] += r.Bytes
					x.partRefs[p]++
					h.Write([]byte(r.ID()))
					h.Write([]byte{','})
				}
			}
		}
		x.digest = h.Sum64()
	})
	return &o.idx
}

// taskParts is one committed task's output partitions, packed: the
// partitions in ascending order, with their rows, byte ranges and
// checksums, of one data object (key) or, for objects of manifest
// version 1, of one object each (keys). The usual case, every partition
// 0..n-1 in one object, its ranges back to back, keeps 16 bytes a
// partition (rows and offsets): part is nil when the partitions are
// 0..n-1, and bytes when each range ends where the next begins (then
// last is the last range's size).
type taskParts struct {
	key       string
	keys      []string
	n         int
	part      []int32 // nil: partitions 0..n-1
	rows, off []int64
	bytes     []int64 // nil: contiguous ranges, see last
	last      int64
	sums      []shuffle.Sum // nil when no partition has a checksum
}

// packParts packs a task result's partitions.
func packParts(ps []shuffle.PartitionStat) taskParts {
	if len(ps) == 0 {
		return taskParts{}
	}
	if !sort.SliceIsSorted(ps, func(i, j int) bool { return ps[i].Partition < ps[j].Partition }) {
		ps = append([]shuffle.PartitionStat(nil), ps...)
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Partition < ps[j].Partition })
	}
	n := len(ps)
	t := taskParts{key: ps[0].Key, n: n, rows: make([]int64, n), off: make([]int64, n), last: ps[n-1].Bytes}
	dense, contiguous := true, true
	for i, p := range ps {
		t.rows[i], t.off[i] = p.Rows, p.Offset
		dense = dense && p.Partition == i
		contiguous = contiguous && (i == 0 || p.Offset == ps[i-1].Offset+ps[i-1].Bytes) && p.Key == t.key
		if p.Key != t.key && t.keys == nil {
			t.keys = make([]string, n)
			for j := range i {
				t.keys[j] = t.key
			}
		}
		if t.keys != nil {
			t.keys[i] = p.Key
		}
		if p.Checksum != 0 && t.sums == nil {
			t.sums = make([]shuffle.Sum, n)
		}
		if t.sums != nil {
			t.sums[i] = p.Checksum
		}
	}
	if !dense {
		t.part = make([]int32, n)
		for i, p := range ps {
			t.part[i] = int32(p.Partition)
		}
	}
	if !contiguous {
		t.bytes = make([]int64, n)
		for i, p := range ps {
			t.bytes[i] = p.Bytes
		}
	}
	return t
}

func (t *taskParts) len() int { return t.n }

// partAt returns the i-th partition's number.
func (t *taskParts) partAt(i int) int {
	if t.part == nil {
		return i
	}
	return int(t.part[i])
}

// bytesAt returns the i-th partition's size.
func (t *taskParts) bytesAt(i int) int64 {
	switch {
	case t.bytes != nil:
		return t.bytes[i]
	case i == t.n-1:
		return t.last
	default:
		return t.off[i+1] - t.off[i]
	}
}

// stat returns the i-th partition.
func (t *taskParts) stat(i int) shuffle.PartitionStat {
	s := shuffle.PartitionStat{Partition: t.partAt(i), Rows: t.rows[i], Offset: t.off[i], Bytes: t.bytesAt(i), Key: t.key}
	if t.keys != nil {
		s.Key = t.keys[i]
	}
	if t.sums != nil {
		s.Checksum = t.sums[i]
	}
	return s
}

// find returns the index of partition p, or -1.
func (t *taskParts) find(p int) int {
	if t.part == nil {
		if p >= 0 && p < t.n {
			return p
		}
		return -1
	}
	i := sort.Search(len(t.part), func(i int) bool { return int(t.part[i]) >= p })
	if i < len(t.part) && int(t.part[i]) == p {
		return i
	}
	return -1
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

// addResult appends a committed task result's partitions (the next task's).
func (o *stageOutput) addResult(r *function.TaskResult) {
	o.tasks = append(o.tasks, packParts(r.Partitions))
}

// packed reports whether the output holds its tasks' partitions packed
// (else Objects).
func (o *stageOutput) packed() bool { return o.tasks != nil || o.Objects == nil }

// partObjects returns the committed objects of partition p, in task order,
// with the repairs' replacements.
func (o *stageOutput) partObjects(p int) []shuffle.ObjectRef {
	if !o.packed() {
		return o.Objects[p]
	}
	var out []shuffle.ObjectRef
	for i := range o.tasks {
		t := &o.tasks[i]
		j := t.find(p)
		if j < 0 {
			continue
		}
		ref := t.stat(j).Ref()
		if len(o.Replaced) == 0 {
			out = append(out, ref)
		} else {
			out = append(out, o.replaced(ref, 0)...)
		}
	}
	o.refsBuilt.Add(int64(len(out)))
	return out
}

// partitions returns the partitions with committed objects, in order.
func (o *stageOutput) partitions() []int {
	seen := map[int]bool{}
	if !o.packed() {
		for p := range o.Objects {
			seen[p] = true
		}
	}
	for i := range o.tasks {
		for j := range o.tasks[i].len() {
			seen[o.tasks[i].partAt(j)] = true
		}
	}
	out := make([]int, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}

// objectsByPart returns every partition's committed objects.
func (o *stageOutput) objectsByPart() map[int][]shuffle.ObjectRef {
	if !o.packed() {
		return o.Objects
	}
	out := map[int][]shuffle.ObjectRef{}
	for _, p := range o.partitions() {
		out[p] = o.partObjects(p)
	}
	return out
}

// allObjects returns the committed objects of every partition, in
// partition order.
func (o *stageOutput) allObjects() []shuffle.ObjectRef {
	var out []shuffle.ObjectRef
	for _, p := range o.partitions() {
		out = append(out, o.partObjects(p)...)
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
	sp := stagePlan{key: planKey}
	uploaded := make(chan error, 1)
	if len(body) <= InlinePlanBytes {
		// The tasks get the fragment in their specs: its object is for
		// what reads it later (a repair runs a task of a done stage
		// again by its key), so it is written beside the tasks, and the
		// stage is not done before it is.
		sp.body = body
		go func() { uploaded <- c.bucket.Put(ctx, planKey, body) }()
	} else {
		if err := c.bucket.Put(ctx, planKey, body); err != nil {
			return nil, fmt.Errorf("upload plan of stage %d: %w", st.ID, err)
		}
		close(uploaded)
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

	// results keep each task's metrics; its partitions go to out.tasks,
	// packed, as it commits (a result holds them unpacked only between).
	results := make([]*function.TaskResult, len(work))
	out := &stageOutput{tasks: make([]taskParts, len(work))}
	var limit int64
	if c.cfg.LimitEarlyStop {
		limit = stageLimit(st)
	}
	first := c.runTasks(ctx, run, st, sp, work, results, out.tasks, limit, nil)
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
			first = c.runTasks(ctx, run, st, sp, work, results, out.tasks, 0, again)
		}
	}
	if first == nil {
		if err, ok := <-uploaded; ok && err != nil {
			first = fmt.Errorf("upload plan of stage %d: %w", st.ID, err)
		}
	}
	if first != nil {
		if ctx.Err() == nil && !errors.Is(first, ErrStaleFence) && !errors.Is(first, errCancelled) {
			// Failed for good: the stage says so (the job fails next).
			_ = c.store.FailStage(context.WithoutCancel(ctx), run.id, run.fence, st.ID, "error", first.Error())
		}
		return nil, first
	}
	parts := map[int]*adaptive.PartitionStats{}
	var inRows, inBytes, peakMem, spillBytes, spillFiles, gets, puts int64
	invoked, rgPruned, rgStats := 0, 0, 0
	dataObjects := map[string]bool{}
	for t, r := range results {
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
		tp := &out.tasks[t]
		if tp.keys == nil && tp.len() > 0 {
			dataObjects[tp.key] = true
		}
		for i := range tp.len() {
			if tp.keys != nil {
				dataObjects[tp.keys[i]] = true
			}
			p, b := tp.partAt(i), tp.bytesAt(i)
			ps := parts[p]
			if ps == nil {
				ps = &adaptive.PartitionStats{Partition: p}
				parts[p] = ps
			}
			ps.Rows += tp.rows[i]
			ps.Bytes += b
			ps.Objects++
			out.Stats.Rows += tp.rows[i]
			out.Stats.Bytes += b
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

// InlinePlanBytes is the largest encoded plan fragment sent inside each
// task's spec (function.TaskSpec.Plan): such a task reads no plan object,
// and the stage's tasks start without waiting for the fragment's PUT (on
// a warm local stack a PUT and a GET, 3-5 ms, of every stage's critical
// path; on S3 tens of milliseconds). Typical fragments are a few KiB; a
// larger one (a long IN list) goes by its key only, so that specs, which
// a pack carries by the dozen, stay small.
const InlinePlanBytes = 16 << 10

// stagePlan is how a stage's tasks get its plan fragment: the key of its
// object, and the encoded fragment itself when small enough to travel in
// the spec (nil otherwise).
type stagePlan struct {
	key  string
	body []byte
}

// runTasks runs the given tasks of a stage (all when only is nil) and fills
// results, with each result's partitions moved to packed; it returns the
// first error that fails the stage.
func (c *Coordinator) runTasks(ctx context.Context, run *jobRun, st *plan.Stage, sp stagePlan, work []taskWork,
	results []*function.TaskResult, packed []taskParts, limit int64, only []int) error {
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
			res, err := c.runTask(tctx, run, st, sp, t, work[t], limit)
			if res != nil {
				packed[t] = packParts(res.Partitions)
				res.Partitions = nil
			}
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
