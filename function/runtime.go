package function

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// Signals are the job-wide flags a running task polls between batches.
// A nil Signals disables them.
type Signals interface {
	// Cancelled reports whether the job was cancelled.
	Cancelled(ctx context.Context, job string) (bool, error)
	// AddRows adds n to a LIMIT counter and returns its new value.
	AddRows(ctx context.Context, key string, n int64) (int64, error)
}

// Runtime runs tasks. It is safe for concurrent use; one Runtime serves
// every task of a process.
type Runtime struct {
	Bucket  objstore.Bucket
	Signals Signals
	Exec    exec.Options
	Log     *slog.Logger
	// CancelPoll is how often a running task looks at its job's cancel
	// flag (default 200ms). A cancelled job stops its tasks wherever they
	// are (their context is cancelled), not only between batches.
	CancelPoll time.Duration
	// SpillDir is where tasks spill to disk when their operators run out
	// of memory: each task makes its own directory under it and removes it
	// when it ends, however it ends ("": os.TempDir(), as /tmp on Lambda;
	// "-": no spill, a task over its budget fails with SL104).
	SpillDir string
	// SpillLimit bounds the bytes one task spills to disk at once (0:
	// DefaultSpillLimit).
	SpillLimit int64
	// Files keeps the table bytes this process's tasks fetched, by file
	// version, for the tasks after them (nil: none; see
	// objstore.RangeCache and DefaultFileCache).
	Files *objstore.RangeCache

	mu    sync.Mutex
	plans map[string]*plan.Stage // plan fragments are immutable: cache by key, at most maxCachedPlans
}

// maxCachedPlans bounds a runtime's cache of plan fragments: a warm
// function (or a local stack's pool) runs the stages of job after job,
// and a fragment is only worth keeping while its stage's tasks arrive.
const maxCachedPlans = 256

// OperatorMemoryShare is the fraction of a function's memory its task's
// operators may hold (1/OperatorMemoryShare): the rest is left to decoded
// input batches, output buffers and the Go runtime.
const OperatorMemoryShare = 2

// DefaultFileCache is the range cache of table bytes an embedded stack's
// functions share (local.Options.FileCache, --file-cache) and a function
// process's when its memory is not known.
const DefaultFileCache int64 = 512 << 20

// FileCacheShare is the fraction of a function process's memory its range
// cache of table bytes may hold (1/FileCacheShare): what is left beside
// its tasks' operators (1/OperatorMemoryShare) and their batches.
const FileCacheShare = 8

// FileCacheFor returns the range-cache budget of a function process of
// memory bytes (0: not known): SLUICE_FILE_CACHE when set (bytes; 0 turns
// the cache off), else memory/FileCacheShare, else DefaultFileCache.
func FileCacheFor(memory int64, getenv func(string) string) (int64, error) {
	if v := getenv("SLUICE_FILE_CACHE"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("SLUICE_FILE_CACHE=%q: want a number of bytes (0: no cache)", v)
		}
		return n, nil
	}
	if memory > 0 {
		return memory / FileCacheShare, nil
	}
	return DefaultFileCache, nil
}

// DefaultSpillLimit is Runtime.SpillLimit when 0: Lambda's default /tmp
// is 512 MiB, and the pool of a local stack shares one disk.
const DefaultSpillLimit int64 = 8 << 30

// NewRuntime returns a runtime reading and writing bucket.
func NewRuntime(bucket objstore.Bucket, sig Signals, log *slog.Logger) *Runtime {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rt := &Runtime{Bucket: bucket, Signals: sig, Log: log, plans: map[string]*plan.Stage{}}
	rt.Exec.PoisonFreed = os.Getenv(PoisonFreedEnv) != ""
	return rt
}

// PoisonFreedEnv, when set in a function process's environment, turns on
// exec.Options.PoisonFreed: the Makefile's test targets set it, so every
// test's answers are checked with released scan buffers overwritten.
const PoisonFreedEnv = "SLUICE_POISON_FREED"

// Handle is the core every adapter calls: encoded TaskSpec in, encoded
// TaskResult out. It never fails: errors are reported in the result.
//
// A Batch body runs its members concurrently, each exactly as if it had
// been invoked alone, and returns a Batch of their results.
func (r *Runtime) Handle(ctx context.Context, body []byte) []byte {
	if IsBatch(body) {
		return r.handleBatch(ctx, body)
	}
	spec, err := DecodeSpec(body)
	var res *TaskResult
	if err != nil {
		res = &TaskResult{Error: err.Error(), Kind: ErrUser, Code: plan.CodeBadSpec}
	} else {
		res = r.Run(ctx, spec)
	}
	out, _ := json.Marshal(res)
	return out
}

// MinPackShare is the least operator memory a member of a packed
// invocation runs with. The members of a Batch share one function's
// memory: with K members and an operator budget B, min(K, B/MinPackShare)
// of them run at once (at least one), each with B divided by that many;
// the others wait for a free slot. So a pack never holds more than one
// function's memory, a big function runs all of its (small) members at
// once, and a tiny one runs them one after the other with the whole budget
// each, as if invoked alone.
const MinPackShare = 16 << 20

// handleBatch runs the members of a Batch, as many at once as the
// function's memory allows (MinPackShare), each with its share of the
// operator budget. A member that is itself a batch fails alone (batches do
// not nest).
func (r *Runtime) handleBatch(ctx context.Context, body []byte) []byte {
	var b Batch
	if err := json.Unmarshal(body, &b); err != nil {
		out, _ := json.Marshal(&TaskResult{Error: fmt.Sprintf("decode task batch: %v", err), Kind: ErrUser, Code: plan.CodeBadSpec})
		return out
	}
	results := make([]json.RawMessage, len(b.Specs))
	specs := make([]*TaskSpec, len(b.Specs))
	var budget int64
	for i, spec := range b.Specs {
		if IsBatch(spec) {
			results[i], _ = json.Marshal(&TaskResult{Error: "a task batch inside a task batch", Kind: ErrUser, Code: plan.CodeBadSpec})
			continue
		}
		s, err := DecodeSpec(spec)
		if err != nil {
			results[i], _ = json.Marshal(&TaskResult{Error: err.Error(), Kind: ErrUser, Code: plan.CodeBadSpec})
			continue
		}
		specs[i] = s
		budget = max(budget, r.operatorBudget(s))
	}
	slots := int(min(int64(len(b.Specs)), max(budget/MinPackShare, 1)))
	sem := make(chan struct{}, slots)
	var wg sync.WaitGroup
	for i, s := range specs {
		if s == nil {
			continue
		}
		s.memoryShare = slots
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i], _ = json.Marshal(&TaskResult{Job: s.Job, Stage: s.Stage, Task: s.Task, Attempt: s.Attempt, Fence: s.Fence,
					Error: ctx.Err().Error(), Kind: ErrCancelled})
				return
			}
			defer func() { <-sem }()
			results[i], _ = json.Marshal(r.Run(ctx, s))
		}()
	}
	wg.Wait()
	out, _ := json.Marshal(&Batch{Version: SpecVersion, Results: results})
	return out
}

// Run executes one task attempt.
func (r *Runtime) Run(ctx context.Context, spec *TaskSpec) *TaskResult {
	start := time.Now()
	res := &TaskResult{Job: spec.Job, Stage: spec.Stage, Task: spec.Task, Attempt: spec.Attempt, Fence: spec.Fence}
	log := r.Log.With("job", spec.Job, "stage", spec.Stage, "task", spec.Task, "attempt", spec.Attempt)
	if !spec.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, spec.Deadline)
		defer cancel()
	}
	if r.Signals != nil {
		var stop context.CancelCauseFunc
		ctx, stop = context.WithCancelCause(ctx)
		defer stop(nil)
		go r.watchCancel(ctx, spec.Job, stop)
	}
	var s3 objstore.Counter
	cctx := objstore.WithCounter(ctx, &s3)
	err := ownOutput(spec)
	if err == nil {
		// Whether the attempt wrote its output already is asked while the
		// task starts (reads its plan, opens its inputs): it must be known
		// before the task writes anything, not before it reads.
		checked := make(chan error, 1)
		go func() { checked <- r.checkOutput(cctx, spec) }()
		check := sync.OnceValue(func() error { return <-checked })
		err = r.run(cctx, spec, res, start, check)
		if cerr := check(); cerr != nil {
			err = cerr // refused: whatever else happened does not matter
		}
	}
	if err != nil && errors.Is(context.Cause(ctx), errCancelled) {
		err = errCancelled
	}
	res.Seconds = time.Since(start).Seconds()
	st := s3.Snapshot()
	res.S3 = &st
	if err != nil {
		res.Error = err.Error()
		res.Kind = Classify(err)
		if res.Kind != ErrCancelled && res.Kind != ErrInputLost {
			res.Code = plan.CodeOf(err)
		}
		if res.Kind == ErrTransient {
			res.Outage = outageOf(err)
		}
		if key, ok := shuffle.FailedObject(err); ok {
			res.LostKey = key
			if info, perr := shuffle.ParseKey(key); perr == nil {
				res.LostStage = info.Stage
			}
		}
		if res.Kind == ErrCancelled {
			log.Info("task stopped: cancelled", "err", err)
			return res
		}
		level := slog.LevelWarn
		if c := plan.ClassOf(res.Code); c == plan.ClassUser || c == plan.ClassUnsupported {
			level = slog.LevelInfo // the query's fault, reported to its user: not an operational problem
		}
		log.Log(ctx, level, "task failed", "err", err, "kind", res.Kind, "code", res.Code)
		return res
	}
	log.Debug("task done", "rows", res.Rows, "bytes", res.Bytes, "seconds", res.Seconds)
	return res
}

// ErrAttemptWritten is the error of a spec whose attempt already wrote its
// manifest: a replayed or forged spec must not overwrite committed objects
// (the coordinator runs every attempt under a new number).
var ErrAttemptWritten = errors.New("attempt already written: refusing to overwrite its objects")

// ownOutput refuses a spec that would write outside its own attempt
// prefix.
func ownOutput(spec *TaskSpec) error {
	want := shuffle.AttemptPrefix(spec.Prefix, spec.Job, spec.Stage, spec.Task, spec.Attempt)
	own := false
	for digits := 0; digits <= shuffle.MaxSpreadDigits && !own; digits++ { // with or without the key-spread component
		own = spec.OutputPrefix == shuffle.SpreadAttemptPrefix(spec.Prefix, digits, spec.Job, spec.Stage, spec.Task, spec.Attempt)
	}
	if !own {
		return plan.UserErrorf("task spec output prefix %q is not the attempt's own (%q): refused", spec.OutputPrefix, want)
	}
	return nil
}

// checkOutput refuses a spec whose attempt already finished writing.
func (r *Runtime) checkOutput(ctx context.Context, spec *TaskSpec) error {
	_, err := r.Bucket.Stat(ctx, shuffle.ManifestKey(spec.OutputPrefix))
	switch {
	case err == nil:
		return fmt.Errorf("%w (%s)", ErrAttemptWritten, spec.OutputPrefix)
	case errors.Is(err, objstore.ErrNotFound):
		return nil
	}
	return fmt.Errorf("check output %s: %w", spec.OutputPrefix, err)
}

// watchCancel polls the job's cancel flag while a task runs and stops the
// task (cancels its context) once the flag is set. An unreachable Redis
// is not a cancellation: the task carries on.
func (r *Runtime) watchCancel(ctx context.Context, job string, stop context.CancelCauseFunc) {
	every := r.CancelPoll
	if every <= 0 {
		every = 200 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if c, err := r.Signals.Cancelled(ctx, job); err == nil && c {
				stop(errCancelled)
				return
			}
		}
	}
}

// Classify says what kind of failure err is.
func Classify(err error) ErrorKind {
	switch {
	case errors.Is(err, errCancelled), errors.Is(err, context.Canceled):
		return ErrCancelled
	case errors.Is(err, shuffle.ErrCorrupt), errors.Is(err, shuffle.ErrMissing):
		return ErrInputLost
	case !plan.ClassOf(plan.CodeOf(err)).Retryable():
		return ErrUser // user, unsupported or internal: another attempt fails the same way
	case plan.IsUserError(err), errors.Is(err, exec.ErrMemoryLimit), errors.Is(err, exec.ErrIntegerOverflow),
		errors.Is(err, exec.ErrCorruptFile):
		return ErrUser
	}
	return ErrTransient
}

var errCancelled = errors.New("job cancelled")

// outageOf names the service whose outage caused a transient failure, or
// "" when it was something else.
func outageOf(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "" // the task's own deadline
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		// The function's own disk (a spill file): its errno would pass
		// for a transport error below.
		return ""
	}
	if objstore.Transient(err) {
		return "object store"
	}
	s := err.Error()
	if strings.Contains(s, "objstore:") && (strings.Contains(s, "connection refused") || strings.Contains(s, "connection reset")) {
		return "object store" // an error the parquet reader re-wrapped as text
	}
	return ""
}

// stage returns the spec's plan fragment: from the cache, from the spec
// when it carries it, or from its object.
func (r *Runtime) stage(ctx context.Context, spec *TaskSpec) (*plan.Stage, error) {
	key := spec.PlanKey
	r.mu.Lock()
	st, ok := r.plans[key]
	r.mu.Unlock()
	if ok {
		return st, nil
	}
	b := []byte(spec.Plan)
	if len(b) == 0 {
		var err error
		if b, err = r.Bucket.Get(ctx, key); err != nil {
			return nil, fmt.Errorf("read plan fragment %s: %w", key, err)
		}
	}
	st, err := decodeStage(b)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if len(r.plans) >= maxCachedPlans {
		for k := range r.plans { // any one: a fragment evicted too early is read again
			delete(r.plans, k)
			break
		}
	}
	r.plans[key] = st
	r.mu.Unlock()
	return st, nil
}

// run runs the task; check says whether it may write its output (see
// checkOutput), and is called before its first write.
func (r *Runtime) run(ctx context.Context, spec *TaskSpec, res *TaskResult, start time.Time, check func() error) error {
	st, err := r.stage(ctx, spec)
	if err != nil {
		return err
	}
	if spec.Limit > 0 && r.Signals != nil {
		// LIMIT early stop: a task started after its stage already has
		// enough rows reads nothing.
		if n, err := r.Signals.AddRows(ctx, spec.LimitKey, 0); err == nil && n >= spec.Limit {
			if err := check(); err != nil {
				return err
			}
			w := shuffle.NewWriter(r.Bucket, spec.OutputPrefix, st.Root.Schema.Arrow(), st.Output, shuffle.WriterOptions{Compression: shuffle.Compression(spec.ShuffleCodec)})
			t0 := time.Now()
			m, err := w.Close(ctx)
			if err != nil {
				return fmt.Errorf("commit shuffle output: %w", err)
			}
			res.Summaries = newSummarizer(st.Summarize, st.Root.Schema).result() // of no rows
			res.Partitions, res.StoppedEarly = m.Partitions, true
			res.Phases = &Phases{Startup: t0.Sub(start).Seconds(), Commit: time.Since(t0).Seconds()}
			return nil
		}
	}
	lv := &leaves{rt: r, spec: spec}
	opts, cleanup, err := r.execOptions(spec)
	if err != nil {
		return err
	}
	defer cleanup()
	defer func() {
		res.PeakMemoryBytes, res.MemoryBudget = opts.Pool.Peak(), opts.Pool.Limit()
		res.SpillBytes, res.SpillFiles = opts.Pool.SpillBytes(), opts.Pool.SpillCount()
	}()
	opts.Metrics = exec.NewMetrics() // one per task: the operators' metrics
	opts.Sink = fileSink{bucket: r.Bucket, job: spec.Job, task: spec.Task, check: check}
	op, err := exec.Build(ctx, st.Root, lv, opts)
	if err != nil {
		return fmt.Errorf("build stage %d pipeline: %w", spec.Stage, err)
	}
	defer op.Close()
	w := shuffle.NewWriter(r.Bucket, spec.OutputPrefix, op.Schema(), st.Output, shuffle.WriterOptions{Compression: shuffle.Compression(spec.ShuffleCodec)})
	ph := &Phases{Startup: time.Since(start).Seconds()}
	var writing time.Duration // inside w.Write
	var batches int64
	sum := newSummarizer(st.Summarize, st.Root.Schema) // over the rows written
	for {
		rec, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			w.Abort()
			return err
		}
		rows := rec.NumRows()
		sum.add(rec)
		if batches == 0 {
			if err := check(); err != nil {
				rec.Release()
				w.Abort()
				return err
			}
		}
		t0 := time.Now()
		err = w.Write(ctx, rec)
		writing += time.Since(t0)
		batches++
		rec.Release()
		if err != nil {
			w.Abort()
			return fmt.Errorf("write shuffle output: %w", err)
		}
		if spec.Limit > 0 && r.Signals != nil && rows > 0 {
			// LIMIT early stop: once the stage's tasks together produced
			// enough rows, stop reading and commit what this task has.
			total, err := r.Signals.AddRows(ctx, spec.LimitKey, rows)
			if err == nil && total >= spec.Limit {
				res.StoppedEarly = true
				break
			}
		}
	}
	if err := check(); err != nil {
		w.Abort()
		return err
	}
	t0 := time.Now()
	m, err := w.Close(ctx)
	if err != nil {
		return fmt.Errorf("commit shuffle output: %w", err)
	}
	closing := time.Since(t0)
	res.Partitions = m.Partitions
	res.Rows, res.Bytes = m.Rows, m.Bytes
	res.InputRows, res.InputBytes, res.RowGroupsPruned = lv.rows, lv.bytes, lv.pruned
	if lv.fold != nil {
		res.RowGroupsFromStats = int(lv.fold.RowGroups())
	}
	res.Summaries = sum.result()

	ops := opts.Metrics.Snapshot()
	for _, o := range ops {
		if o.Leaf {
			ph.Read += time.Duration(o.ComputeNanos).Seconds()
		} else {
			ph.Compute += time.Duration(o.ComputeNanos).Seconds()
		}
	}
	ph.Write, ph.Commit = writing.Seconds(), closing.Seconds()
	wm := exec.OpMetrics{Node: WriterNode, Kind: WriterKind, Rows: m.Rows, Batches: batches,
		ComputeNanos: int64(writing + closing), Bytes: m.Bytes}
	if len(ops) > 0 {
		wm.WallNanos = int64(time.Since(start)) - int64(ph.Startup*1e9)
	}
	res.Phases, res.Operators = ph, append([]exec.OpMetrics{wm}, ops...)
	return nil
}

// execOptions returns the operator options of one task: its memory pool
// (a share of the function's memory) and its own spill directory, removed
// by cleanup.
func (r *Runtime) execOptions(spec *TaskSpec) (exec.Options, func(), error) {
	opts := r.Exec
	limit := r.operatorBudget(spec)
	if spec.memoryShare > 1 {
		limit = max(limit/int64(spec.memoryShare), 1)
	}
	spillLimit := r.SpillLimit
	if spillLimit <= 0 {
		spillLimit = DefaultSpillLimit
	}
	dir := ""
	cleanup := func() {}
	if r.SpillDir != "-" {
		d, err := os.MkdirTemp(r.SpillDir, fmt.Sprintf("sluice-spill-%s-%d-%d-%d-", shortID(spec.Job), spec.Stage, spec.Task, spec.Attempt))
		if err != nil {
			return opts, nil, fmt.Errorf("create spill directory: %w", err)
		}
		dir = d
		cleanup = func() { os.RemoveAll(d) }
	}
	opts.Pool = exec.NewMemoryPool(limit, dir, spillLimit)
	return opts, cleanup, nil
}

// operatorBudget is the memory the operators of spec's task may hold when
// it runs alone: its share of the function's memory (the runtime's own
// limit when the spec does not say; exec's default when neither does).
func (r *Runtime) operatorBudget(spec *TaskSpec) int64 {
	if spec.FunctionMemory > 0 {
		return max(spec.FunctionMemory/OperatorMemoryShare, 1)
	}
	if r.Exec.MemoryLimit > 0 {
		return r.Exec.MemoryLimit
	}
	return exec.DefaultMemoryLimit
}

// shortID keeps a job id fit for a file name.
func shortID(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 32 {
		b = b[:32]
	}
	return string(b)
}

// leaves supplies scans of the task's splits and reads of its inputs.
type leaves struct {
	rt     *Runtime
	spec   *TaskSpec
	rows   int64
	bytes  int64
	pruned int
	fold   *exec.StatsFold // a global count/min/max answered from footers, when one is
}

func (l *leaves) Scan(ctx context.Context, n *plan.Node) (exec.Operator, error) {
	switch n.Scan.Format {
	case "", "parquet", "iceberg": // an Iceberg table's data files are Parquet
	case "csv":
		if n.Scan.CSV == nil {
			return nil, fmt.Errorf("scan of CSV table %s has no CSV format", n.Scan.Table)
		}
	case "json":
		if n.Scan.JSON == nil {
			return nil, fmt.Errorf("scan of JSON table %s has no JSON format", n.Scan.Table)
		}
	default:
		return nil, plan.UserErrorf("unsupported table format %q of table %s", n.Scan.Format, n.Scan.Table)
	}
	splits := l.spec.Splits
	if n.Scan.Inline {
		// A scan inlined into this stage (inline-scans): every task reads
		// all of its files, listed in the plan.
		splits = make([]Split, len(n.Scan.Files))
		for i, f := range n.Scan.Files {
			splits[i] = Split{Key: f.Key, Size: f.Size, ETag: f.ETag, Partition: f.Partition}
		}
	}
	return &splitScan{l: l, n: n, splits: splits, schema: n.Schema.Arrow()}, nil
}

func (l *leaves) Exchange(ctx context.Context, n *plan.Node) (exec.Operator, error) {
	var refs []shuffle.ObjectRef
	for _, in := range l.spec.Inputs {
		if in.Stage == n.Stage {
			refs = append(refs, in.Objects...)
		}
	}
	for _, ref := range refs {
		l.bytes += ref.Bytes
		l.rows += ref.Rows
	}
	e := newExchangeReader(ctx, l.rt.Bucket, refs, n.Schema.Arrow())
	for _, ref := range refs {
		e.bytes += ref.Bytes
	}
	return e, nil
}

// splitScan reads the task's splits one after the other.
type splitScan struct {
	read   atomic.Int64 // bytes read of the files (the parquet reader may read columns concurrently)
	l      *leaves
	n      *plan.Node
	splits []Split
	cur    exec.Operator
	curKey string
	schema *arrow.Schema
	// late counts the late materialization of the files done with.
	lateDecoded, lateSkipped int64
	dicts                    []int              // columns handed over as dictionaries (EmitDictionaries)
	blooms                   []*plan.BloomProbe // runtime filters the Parquet files test (TakeBloom)
	ranges                   []keyRange         // ranges the Parquet files prune row groups by (TakeRange)
	rangePruned              int64              // row groups they left unread in the files done with
	// next is the reader of the next split's Parquet file, its footer
	// fetched in the background while the current split is decoded.
	next *objstore.ReaderAt
	// curRA is the reader of the current split's Parquet file.
	curRA *objstore.ReaderAt
	// cached counts the bytes of the files read from the runtime's range
	// cache instead of the bucket (included in read).
	cached int64
}

// JoinRangePruned is the row groups of the scan's files a join's range
// left unread (exec.JoinRangePruner).
func (s *splitScan) JoinRangePruned() int64 {
	n := s.rangePruned
	if jp, ok := s.cur.(exec.JoinRangePruner); ok {
		n += jp.JoinRangePruned()
	}
	return n
}

// keyRange is a TakeRange of a splitScan, handed to each file.
type keyRange struct {
	col    int
	lo, hi plan.Value
}

// TakeRange makes the Parquet files of the scan leave unread the row
// groups whose statistics put column col outside [lo, hi]
// (exec.RangeTaker): the files not opened yet, so every one when it comes
// before the first Next.
func (s *splitScan) TakeRange(col int, lo, hi plan.Value) bool {
	switch s.n.Scan.Format {
	case "", "parquet", "iceberg":
	default:
		return false
	}
	if exec.FileScan(s.n) != s.n || s.cur != nil {
		return false
	}
	s.ranges = append(s.ranges, keyRange{col, lo, hi})
	return true
}

// TakeBloom makes the Parquet files of the scan test a runtime filter's
// Bloom filter before they decode the other columns (exec.BloomTaker).
func (s *splitScan) TakeBloom(p *plan.BloomProbe) bool {
	switch s.n.Scan.Format {
	case "", "parquet", "iceberg":
	default:
		return false
	}
	if exec.FileScan(s.n) != s.n {
		return false // hive partition columns are added by another operator
	}
	s.blooms = append(s.blooms, p)
	return true
}

// HasFilterOn reports whether the scan's files test a Bloom filter on
// column col, or the plan gave the scan a runtime filter on it
// (exec.BloomHolder).
func (s *splitScan) HasFilterOn(col int) bool {
	return exec.HasFilterOn(s.n, s.blooms, col)
}

// LateRows is the rows the scan's files decoded late and skipped
// (exec.LateMaterializer).
func (s *splitScan) LateRows() (decoded, skipped int64) {
	decoded, skipped = s.lateDecoded, s.lateSkipped
	if lm, ok := s.cur.(exec.LateMaterializer); ok {
		d, k := lm.LateRows()
		decoded, skipped = decoded+d, skipped+k
	}
	return decoded, skipped
}

// EmitDictionaries makes the Parquet files of the scan hand the String
// columns cols over as dictionary arrays where they can
// (exec.DictionaryEmitter): for an aggregation grouping by them.
func (s *splitScan) EmitDictionaries(cols []int) bool {
	switch s.n.Scan.Format {
	case "", "parquet", "iceberg":
	default:
		return false
	}
	if exec.FileScan(s.n) != s.n {
		return false // hive partition columns are added by another operator
	}
	s.dicts = cols
	return true
}

func (s *splitScan) Schema() *arrow.Schema { return s.schema }

// FoldStats makes the scan hand the row groups of its Parquet files whose
// statistics answer f to f instead of reading them (exec.StatsFold).
func (s *splitScan) FoldStats(f *exec.StatsFold) bool {
	switch s.n.Scan.Format {
	case "", "parquet", "iceberg":
	default:
		return false
	}
	s.l.fold = f
	return true
}

// BytesRead is the bytes the scan read of its files (exec.BytesReader).
func (s *splitScan) BytesRead() int64 { return s.read.Load() }

// BytesCached is the part of BytesRead the runtime's range cache held
// (exec.CacheReader).
func (s *splitScan) BytesCached() int64 {
	n := s.cached
	if s.curRA != nil {
		n += s.curRA.BytesCached()
	}
	return n
}

func (s *splitScan) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if s.cur == nil {
			if len(s.splits) == 0 {
				return nil, io.EOF
			}
			sp := s.splits[0]
			s.splits = s.splits[1:]
			op, err := s.open(ctx, sp)
			if err != nil {
				if s.changed(err) {
					return nil, s.fileErr(sp.Key, err)
				}
				return nil, fmt.Errorf("scan %s: %w", sp.Key, err)
			}
			s.warmNext(ctx)
			s.l.bytes += sp.Size
			s.cur, s.curKey = op, sp.Key
		}
		rec, err := s.cur.Next(ctx)
		if errors.Is(err, io.EOF) {
			if p, ok := s.cur.(interface{ Pruned() int }); ok {
				s.l.pruned += p.Pruned()
			}
			if lm, ok := s.cur.(exec.LateMaterializer); ok {
				d, k := lm.LateRows()
				s.lateDecoded, s.lateSkipped = s.lateDecoded+d, s.lateSkipped+k
			}
			if jp, ok := s.cur.(exec.JoinRangePruner); ok {
				s.rangePruned += jp.JoinRangePruned()
			}
			s.cur.Close()
			s.cur = nil
			s.closeCur()
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				err = s.fileErr(s.curKey, err)
			}
			return nil, err
		}
		s.l.rows += rec.NumRows()
		return rec, nil
	}
}

// open starts reading one split: the file's columns, and its hive
// partition values as constants when the scan reads partition columns.
func (s *splitScan) open(ctx context.Context, sp Split) (exec.Operator, error) {
	fn := exec.FileScan(s.n)
	if fn == s.n {
		return s.openFile(ctx, sp, fn)
	}
	in, err := s.openFile(ctx, sp, fn)
	if err != nil {
		return nil, err
	}
	op, err := exec.NewPartitionScan(in, s.n, sp.Partition, nil)
	if err != nil {
		in.Close()
		return nil, err
	}
	return op, nil
}

// namedBytes is a file's body that tells its key (Name), so scan errors
// name the file.
type namedBytes struct {
	*bytes.Reader
	name string
}

func (b namedBytes) Name() string { return b.name }

// textBody is the reader of a CSV or JSON file's bytes, decompressed as
// they are read when its key names a codec (objstore.CompressionOf). Data
// that is not what its name says is corrupt input (SL106, the user's:
// never retried), naming the file.
func textBody(key string, body []byte) (io.Reader, error) {
	codec := objstore.CompressionOf(key)
	if codec == objstore.Uncompressed {
		return namedBytes{bytes.NewReader(body), key}, nil
	}
	zr, err := objstore.Decompress(codec, bytes.NewReader(body))
	if err != nil {
		return nil, plan.WithCode(plan.CodeCorruptInput, fmt.Errorf("file %s: not %s data: %w", key, codec, err))
	}
	return &decompressed{r: zr, name: key, codec: codec}, nil
}

// decompressed reads a compressed file's bytes; a decoding error is the
// user's (corrupt or truncated data), naming the file. The decoder is
// released at EOF or on an error.
type decompressed struct {
	r     io.ReadCloser
	name  string
	codec objstore.Compression
	done  bool
}

func (d *decompressed) Name() string { return d.name }

func (d *decompressed) Read(p []byte) (int, error) {
	if d.done {
		return 0, io.EOF
	}
	n, err := d.r.Read(p)
	switch {
	case err == io.EOF:
		d.done = true
		d.r.Close()
	case err != nil:
		d.done = true
		d.r.Close()
		return n, plan.WithCode(plan.CodeCorruptInput, fmt.Errorf("file %s: corrupt %s data: %w", d.name, d.codec, err))
	}
	return n, err
}

// openFile starts reading the file columns of one split (n is the scan
// node without partition columns).
func (s *splitScan) openFile(ctx context.Context, sp Split, n *plan.Node) (exec.Operator, error) {
	if f := s.n.Scan.Format; f == "csv" || f == "json" {
		body, err := s.wholeFile(ctx, sp)
		if err != nil {
			return nil, err
		}
		s.read.Add(int64(len(body)))
		r, err := textBody(sp.Key, body)
		if err != nil {
			return nil, err
		}
		if f == "json" {
			return exec.NewJSONScan(ctx, r, n, s.l.rt.Exec)
		}
		return exec.NewCSVScan(ctx, r, n, s.l.rt.Exec)
	}
	s.closeCur()
	s.curRA = s.reader(ctx, sp)
	ra := &countingReaderAt{ReaderAt: s.curRA, n: &s.read}
	op, err := exec.NewParquetScan(ctx, ra, n, sp.RowGroups, s.l.rt.Exec)
	if err == nil && s.l.fold != nil && len(sp.Deletes) == 0 {
		op.(*exec.ParquetScan).FoldStats(s.l.fold)
	}
	if err == nil && s.dicts != nil && len(sp.Deletes) == 0 {
		op.(*exec.ParquetScan).EmitDictionaries(s.dicts)
	}
	if err == nil && len(sp.Deletes) == 0 {
		for _, p := range s.blooms {
			op.(*exec.ParquetScan).TakeBloom(p)
		}
	}
	if err == nil {
		for _, r := range s.ranges {
			op.(*exec.ParquetScan).TakeRange(r.col, r.lo, r.hi)
		}
	}
	if err == nil && len(sp.Deletes) > 0 {
		deleted, derr := positionDeletes(ctx, s.l.rt.Bucket, sp.Deletes, sp.Key)
		if derr != nil {
			op.Close()
			return nil, fmt.Errorf("table %s: %w", s.n.Scan.Table, derr)
		}
		op.(*exec.ParquetScan).SetDeleted(deleted)
	}
	if err != nil && sp.Size > 0 {
		// The catalog's row groups and offsets hold only for the file as
		// registered: a file rewritten since (its footer is not where the
		// registered size puts it) is an error naming it. Asked only when
		// the open failed, so a scan costs no HEAD request.
		info, serr := s.l.rt.Bucket.Stat(ctx, sp.Key)
		if serr == nil && info.Size != sp.Size {
			return nil, plan.UserErrorf("table %s: file %s changed since registered: size %d, now %d (register the table again)",
				s.n.Scan.Table, sp.Key, sp.Size, info.Size)
		}
	}
	return op, err
}

// wholeFile returns the bytes of a split's text file: of the version the
// plan listed, from the runtime's range cache where it holds them (one
// range, the whole file), else by one GET.
func (s *splitScan) wholeFile(ctx context.Context, sp Split) ([]byte, error) {
	if sp.ETag == "" || sp.Size <= 0 {
		return s.l.rt.Bucket.Get(ctx, sp.Key)
	}
	b := s.l.rt.Bucket
	body, mem, err := s.l.rt.Files.Read(b.Name(), sp.Key, sp.ETag, 0, sp.Size, func(off, n int64) ([]byte, error) {
		data, err := objstore.GetRangeMatch(ctx, b, sp.Key, sp.ETag, off, n)
		if err == nil && int64(len(data)) != n {
			err = fmt.Errorf("objstore: GET %s: got %d bytes, want %d (object changed?): %w", sp.Key, len(data), n, io.ErrUnexpectedEOF)
		}
		return data, err
	})
	s.cached += mem
	return body, err
}

// reader returns the reader of a split's Parquet file: the one warmNext
// made for it, or a new one.
func (s *splitScan) reader(ctx context.Context, sp Split) *objstore.ReaderAt {
	if r := s.next; r != nil {
		s.next = nil
		if r.Key() == sp.Key && r.Size() == sp.Size {
			return r
		}
		r.Close()
	}
	return s.newReader(ctx, sp)
}

// newReader returns a new reader of a split's file, reading ahead within
// the task's budget.
func (s *splitScan) newReader(ctx context.Context, sp Split) *objstore.ReaderAt {
	return objstore.NewReaderAt(ctx, s.l.rt.Bucket, sp.Key, sp.Size, objstore.WithVersion(sp.ETag, s.l.rt.Files),
		objstore.WithPrefetch(objstore.PrefetchOptions{Ahead: prefetchAhead(s.l.rt.operatorBudget(s.l.spec))}))
}

// warmNext starts fetching the footer of the next split's Parquet file
// while the current one is decoded: a task of several files waits for
// one footer GET, not one per file.
func (s *splitScan) warmNext(ctx context.Context) {
	if s.next != nil || len(s.splits) == 0 || s.splits[0].Size <= 0 {
		return
	}
	switch s.n.Scan.Format {
	case "", "parquet", "iceberg":
	default:
		return
	}
	s.next = s.newReader(ctx, s.splits[0])
	s.next.FetchTail()
}

// prefetchAhead is how far a scan reads ahead of its decoder: a quarter of
// the task's operator budget (the read-ahead's buffers are outside the
// operator pool), between one request (8 MiB) and
// objstore.DefaultPrefetchAhead.
func prefetchAhead(budget int64) int64 {
	return min(max(budget/4, objstore.DefaultPrefetchRequest), objstore.DefaultPrefetchAhead)
}

// countingReaderAt adds the bytes read through it to *n.
type countingReaderAt struct {
	*objstore.ReaderAt
	n *atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	k, err := c.ReaderAt.ReadAt(p, off)
	c.n.Add(int64(k))
	return k, err
}

func (c *countingReaderAt) View(off, n int64) ([]byte, error) {
	b, err := c.ReaderAt.View(off, n)
	c.n.Add(int64(len(b)))
	return b, err
}

// changed reports whether err comes of the current file having been
// replaced since the plan listed it.
func (s *splitScan) changed(err error) bool {
	return errors.Is(err, objstore.ErrChanged) || s.curRA != nil && s.curRA.Changed()
}

// fileErr names the file in an error of reading it: a file replaced since
// the query was planned is the user's error SL107 (another attempt reads
// the same other version), anything else keeps its class.
func (s *splitScan) fileErr(key string, err error) error {
	if s.changed(err) {
		return plan.WithCode(plan.CodeFileChanged, fmt.Errorf(
			"table %s: file %s was replaced after the query was planned: run the query again (an external table is listed anew by each query; register any other table again): %w",
			s.n.Scan.Table, key, err))
	}
	return fmt.Errorf("file %s: %w", key, err)
}

// closeCur ends the current split: what its reader took from the cache
// is counted.
func (s *splitScan) closeCur() {
	if s.curRA != nil {
		s.cached += s.curRA.BytesCached()
		s.curRA = nil
	}
}

func (s *splitScan) Close() error {
	if s.next != nil {
		s.next.Close()
		s.next = nil
	}
	if s.cur != nil {
		err := s.cur.Close()
		s.closeCur()
		return err
	}
	s.closeCur()
	return nil
}

// exchangeReader turns shuffle.ReadObjects' push stream into a pull-based
// operator.
type exchangeReader struct {
	bytes  int64 // of the objects read
	schema *arrow.Schema
	ch     chan arrow.RecordBatch
	done   chan struct{}
	err    error
	cancel context.CancelFunc
}

func newExchangeReader(ctx context.Context, b objstore.Bucket, refs []shuffle.ObjectRef, schema *arrow.Schema) *exchangeReader {
	ctx, cancel := context.WithCancel(ctx)
	e := &exchangeReader{schema: schema, ch: make(chan arrow.RecordBatch, 2), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(e.ch)
		// The exchange's schema is its producer's output schema: partitions
		// of data objects are decoded with it (they carry no schema).
		e.err = shuffle.ReadObjectsWith(ctx, b, refs, shuffle.ReadOptions{Schema: schema}, func(rec arrow.RecordBatch) error {
			rec.Retain()
			select {
			case e.ch <- rec:
				return nil
			case <-ctx.Done():
				rec.Release()
				return ctx.Err()
			}
		})
	}()
	return e
}

func (e *exchangeReader) Schema() *arrow.Schema { return e.schema }

// BytesRead is the bytes of the shuffle objects read (exec.BytesReader).
func (e *exchangeReader) BytesRead() int64 { return e.bytes }

func (e *exchangeReader) Next(ctx context.Context) (arrow.RecordBatch, error) {
	select {
	case rec, ok := <-e.ch:
		if !ok {
			if e.err != nil {
				return nil, e.err
			}
			return nil, io.EOF
		}
		return rec, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (e *exchangeReader) Close() error {
	e.cancel()
	for rec := range e.ch {
		rec.Release()
	}
	return nil
}

// fileSink is the task's exec.FileSink: a table writer's file goes into
// the job's bucket under the name of the job and task (plan.WriteFileName),
// so every attempt of a task writes the same key.
type fileSink struct {
	bucket objstore.Bucket
	job    string
	task   int
	check  func() error // may the attempt write (Runtime.run)
}

// PutFile writes one file. A key the object store refuses to take (the
// planner checks write targets, so only a plan from elsewhere has one) is
// the statement's error (CodeBadLocation), never retried.
func (f fileSink) PutFile(ctx context.Context, key string, body []byte) error {
	if f.check != nil {
		if err := f.check(); err != nil {
			return err
		}
	}
	err := f.bucket.Put(ctx, key, body)
	if errors.Is(err, objstore.ErrInvalidKey) {
		return plan.Errorf(plan.CodeBadLocation, "write target: %w", err)
	}
	return err
}

func (f fileSink) Writer() (string, int) { return f.job, f.task }
