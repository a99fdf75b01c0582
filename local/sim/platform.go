package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// Calibration is the compute rate of one function per operator kind, at
// one vCPU (Lambda's 1,769 MB). A function's pipeline runs on one
// goroutine, so memory past 1,769 MB buys no compute here (it buys
// memory and network); below it, compute scales with memory as Lambda's
// CPU share does.
type Calibration struct {
	// ScanBytesPerSec: Parquet file bytes decoded per second (the columns
	// read).
	ScanBytesPerSec float64
	// ShuffleReadBytesPerSec: stored shuffle bytes read and decoded per
	// second; WriteBytesPerSec: in-memory bytes partitioned, encoded and
	// compressed into shuffle objects per second.
	ShuffleReadBytesPerSec float64
	WriteBytesPerSec       float64
	// JoinRowsPerSec and AggRowsPerSec: rows a hash join (build and probe)
	// or a hash aggregation takes per second; SortRowsPerSec rows sorted.
	JoinRowsPerSec float64
	AggRowsPerSec  float64
	SortRowsPerSec float64
	// Compression is the shuffle's in-memory bytes over stored bytes
	// (lz4).
	Compression float64
	// Startup is the function's own start per invocation (spec checks,
	// plan fragment, operators), warm.
	Startup time.Duration
}

// DefaultCalibration comes from this machine (a 2-core AMD EPYC VM, quiet,
// one goroutine; go test -bench, -benchtime 3x): Parquet scan of the Q1
// columns of lineitem 182 MB/s of file bytes, about 80 MB/s of the
// columns read (BenchmarkParquetScanLineitem; 60 MB/s is used, on the
// slow side); hash join 11.3 M rows/s inner, 20.3 M semi
// (BenchmarkHashJoin); hash aggregation 64 M rows/s at 1 K groups, 5.3 M
// at 1 M groups (BenchmarkHashAggregate; 15 M is used for every
// aggregation). The shuffle's write and read rates and lz4's 2.14x were
// not re-measured (BenchmarkCodecLineitem needs MinIO): the Performance
// section's figures were taken under load average 25, where the scan ran
// about 4-15x slower than here, and are scaled up to 60 and 80 MB/s.
func DefaultCalibration() Calibration {
	return Calibration{
		ScanBytesPerSec:        60e6,
		ShuffleReadBytesPerSec: 80e6,
		WriteBytesPerSec:       60e6,
		JoinRowsPerSec:         12e6,
		AggRowsPerSec:          15e6,
		SortRowsPerSec:         4e6,
		Compression:            2.14,
		Startup:                20 * time.Millisecond,
	}
}

// PlatformConfig is the FaaS model. Defaults (DefaultPlatformConfig) are
// AWS Lambda's documented limits and published measurements, each noted.
type PlatformConfig struct {
	// Concurrency is the account's concurrent executions (Lambda's
	// default quota: 1,000): past it an invocation is refused with 429
	// TooManyRequestsException.
	Concurrency int
	// Burst: from a cold start of scaling, BurstInitial environments at
	// once, then BurstStep more every BurstInterval (Lambda since 2023:
	// 1,000 every 10 s per function).
	BurstInitial, BurstStep int
	BurstInterval           time.Duration
	// ColdStart is the median init time of a new environment (a Go
	// provided.al2023 binary: ~100-300 ms published), lognormal with
	// ColdSigma; an environment idle longer than IdleWindow is reclaimed
	// (not documented; 5-15 minutes observed).
	ColdStart  time.Duration
	ColdSigma  float64
	IdleWindow time.Duration
	// Invoke is the round trip of a warm synchronous invocation outside
	// the function (~10-20 ms in-region).
	Invoke time.Duration
	// StragglerRate of invocations run StragglerMin-StragglerMax times
	// slower; CrashRate of invocations die part-way (a function error).
	StragglerRate              float64
	StragglerMin, StragglerMax float64
	CrashRate                  float64
	// Skew puts this fraction of each task's output rows into one hot
	// partition of a hash exchange (0: uniform).
	Skew float64
	// Seed seeds the model's randomness.
	Seed        uint64
	Calibration Calibration
}

// DefaultPlatformConfig returns Lambda's documented figures.
func DefaultPlatformConfig() PlatformConfig {
	return PlatformConfig{Concurrency: 1000, BurstInitial: 1000, BurstStep: 1000, BurstInterval: 10 * time.Second,
		ColdStart: 250 * time.Millisecond, ColdSigma: 0.4, IdleWindow: 10 * time.Minute, Invoke: 15 * time.Millisecond,
		StragglerRate: 0.01, StragglerMin: 5, StragglerMax: 10, CrashRate: 0.002, Seed: 1,
		Calibration: DefaultCalibration()}
}

// PlatformStats counts what the platform did.
type PlatformStats struct {
	Invocations, Throttled, ColdStarts, Stragglers, Crashes int64
	Tasks                                                   int64
	PeakConcurrency                                         int
	// FunctionSeconds and GBSeconds are simulated (billed) time.
	FunctionSeconds, GBSeconds float64
	// ModelCPU is the real CPU the models spent answering invocations
	// (decoding specs, estimating, encoding results), measured per OS
	// thread: the process's CPU less this is the coordinator's.
	ModelCPU time.Duration
}

// Platform is the modelled FaaS platform. It answers the Lambda Invoke
// API in process (HTTPClient), so the coordinator's real LambdaInvoker,
// with its slots and its retries of 429s, sits between it and the
// coordinator.
type Platform struct {
	cfg   PlatformConfig
	clock *Clock
	store *Store
	stats columnStats
	files map[string]layout.File
	cols  map[string]int // columns per table

	mu         sync.Mutex
	rng        *rand.Rand
	running    int
	idle       []time.Duration // simulated times environments went idle, oldest first
	level      int             // concurrency allowed in the current ramp interval
	tick       time.Duration   // start of the current ramp interval
	tickPeak   int             // invocations in flight at most during it
	plans      map[string]*plan.Stage
	stageParts map[string]int // "<job>/<stage>": output partitions its tasks wrote
	st         PlatformStats
}

// NewPlatform returns the platform over store, reading the virtual
// tables' files.
func NewPlatform(cfg PlatformConfig, clock *Clock, store *Store, tables []*TableFiles, stats columnStats) *Platform {
	p := &Platform{cfg: cfg, clock: clock, store: store, stats: stats, files: map[string]layout.File{}, cols: map[string]int{},
		rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), plans: map[string]*plan.Stage{}, stageParts: map[string]int{}}
	for _, t := range tables {
		p.cols[strings.ToLower(t.Name)] = t.Columns
		for _, f := range t.Files {
			p.files[f.Key] = f
		}
	}
	return p
}

// TableFiles is what the platform needs of a table: its files and its
// column count.
type TableFiles struct {
	Name    string
	Columns int
	Files   []layout.File
}

// Stats returns what the platform did so far.
func (p *Platform) Stats() PlatformStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st
}

// ResetPeak forgets the peak concurrency (for a per-query figure).
func (p *Platform) ResetPeak() {
	p.mu.Lock()
	p.st.PeakConcurrency = p.running
	p.mu.Unlock()
}

// Running returns the invocations in flight.
func (p *Platform) Running() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running
}

// HTTPClient returns the aws.HTTPClient the Lambda invoker sends its
// Invoke requests through.
func (p *Platform) HTTPClient() *http.Client {
	return &http.Client{Transport: roundTripper(p.serve)}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func respond(r *http.Request, code int, hdr map[string]string, body []byte) *http.Response {
	h := http.Header{"Content-Type": {"application/json"}}
	for k, v := range hdr {
		h.Set(k, v)
	}
	return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), Header: h,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
}

// capLocked is the concurrency the platform allows at simulated time now.
// Lambda's scaling rule (since 2023): BurstInitial environments at once,
// then BurstStep more per BurstInterval. Modelled per interval: the next
// interval allows BurstStep more than the most that ran in this one (at
// least BurstInitial, at most the account's concurrency), so the ramp
// starts over whenever the demand fell, not only when nothing runs.
func (p *Platform) capLocked(now time.Duration) int {
	c := p.cfg.Concurrency
	if p.cfg.BurstInitial <= 0 || p.cfg.BurstInterval <= 0 {
		return c
	}
	if p.level == 0 {
		p.level, p.tick = min(c, p.cfg.BurstInitial), now
	}
	for i := 0; now-p.tick >= p.cfg.BurstInterval; i++ {
		if i == 2 { // idle for long: only the demand now counts
			p.tick = now
			p.level = min(c, max(p.cfg.BurstInitial, p.running+p.cfg.BurstStep))
			break
		}
		p.level = min(c, max(p.cfg.BurstInitial, p.tickPeak+p.cfg.BurstStep))
		p.tickPeak = p.running
		p.tick += p.cfg.BurstInterval
	}
	return p.level
}

// serve answers one Invoke request.
func (p *Platform) serve(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	now := p.clock.Now()
	p.mu.Lock()
	if p.running >= p.capLocked(now) {
		p.st.Throttled++
		p.mu.Unlock()
		return respond(r, http.StatusTooManyRequests, map[string]string{"X-Amzn-ErrorType": "TooManyRequestsException"},
			[]byte(`{"Type":"User","message":"Rate Exceeded.","Reason":"ReservedFunctionConcurrentInvocationLimitExceeded"}`)), nil
	}
	p.running++
	p.tickPeak = max(p.tickPeak, p.running)
	p.st.Invocations++
	p.st.PeakConcurrency = max(p.st.PeakConcurrency, p.running)
	cold := time.Duration(0)
	for len(p.idle) > 0 && now-p.idle[0] > p.cfg.IdleWindow {
		p.idle = p.idle[1:] // reclaimed
	}
	if n := len(p.idle); n > 0 {
		p.idle = p.idle[:n-1] // the most recently used stays warm longest
	} else {
		cold = time.Duration(float64(p.cfg.ColdStart) * math.Exp(p.cfg.ColdSigma*p.rng.NormFloat64()))
		p.st.ColdStarts++
	}
	straggle := 1.0
	if p.rng.Float64() < p.cfg.StragglerRate {
		straggle = p.cfg.StragglerMin + p.rng.Float64()*(p.cfg.StragglerMax-p.cfg.StragglerMin)
		p.st.Stragglers++
	}
	crashAt := -1.0
	if p.rng.Float64() < p.cfg.CrashRate {
		crashAt = p.rng.Float64()
		p.st.Crashes++
	}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.running--
		p.idle = append(p.idle, p.clock.Now())
		p.mu.Unlock()
	}()

	start := now + p.cfg.Invoke/2 + cold
	runtime.LockOSThread()
	cpu0 := threadCPU()
	out, work, mem, err := p.run(ctx, body, start)
	used := threadCPU() - cpu0
	runtime.UnlockOSThread()
	p.mu.Lock()
	p.st.ModelCPU += used
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	total := p.cfg.Invoke + cold + time.Duration(float64(work)*straggle)
	if crashAt >= 0 {
		total = time.Duration(float64(total) * crashAt)
	}
	p.mu.Lock()
	billed := (total - p.cfg.Invoke).Seconds()
	p.st.FunctionSeconds += billed
	p.st.GBSeconds += billed * float64(mem) / (1 << 30)
	p.mu.Unlock()
	if err := p.clock.Sleep(ctx, total); err != nil {
		return nil, err
	}
	if crashAt >= 0 {
		return respond(r, http.StatusOK, map[string]string{"X-Amz-Function-Error": "Unhandled"},
			[]byte(`{"errorType":"Runtime.ExitError","errorMessage":"RequestId: sim Error: Runtime exited with error: signal: killed (modelled crash)"}`)), nil
	}
	return respond(r, http.StatusOK, nil, out), nil
}

// run computes the results of an invocation's tasks (one spec, a batch,
// or a spec passed by reference) and how long the function works on them.
func (p *Platform) run(ctx context.Context, body []byte, start time.Duration) ([]byte, time.Duration, int64, error) {
	var ref function.SpecRef
	if json.Unmarshal(body, &ref) == nil && ref.SpecKey != "" {
		b, err := p.store.Get(ctx, ref.SpecKey)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("spec by reference: %w", err)
		}
		p.store.Forget(ref.SpecKey)
		body = b
	}
	if function.IsBatch(body) {
		var b function.Batch
		if err := json.Unmarshal(body, &b); err != nil {
			return nil, 0, 0, err
		}
		var work time.Duration
		var mem int64
		for _, raw := range b.Specs {
			res, d, m := p.task(ctx, raw, start+work)
			work += d
			mem = max(mem, m)
			b.Results = append(b.Results, res)
		}
		b.Specs = nil
		out, err := json.Marshal(b)
		return out, work, mem, err
	}
	res, d, m := p.task(ctx, body, start)
	return res, d, m, nil
}

// task models one task: its result and its duration.
func (p *Platform) task(ctx context.Context, raw []byte, start time.Duration) (json.RawMessage, time.Duration, int64) {
	fail := func(spec *function.TaskSpec, err error) (json.RawMessage, time.Duration, int64) {
		res := function.TaskResult{Error: err.Error(), Kind: function.ErrUser, Code: plan.CodeBadSpec}
		if spec != nil {
			res.Job, res.Stage, res.Task, res.Attempt, res.Fence = spec.Job, spec.Stage, spec.Task, spec.Attempt, spec.Fence
		}
		out, _ := json.Marshal(res)
		return out, 0, 0
	}
	spec, err := function.DecodeSpec(raw)
	if err != nil {
		return fail(nil, err)
	}
	st, err := p.fragment(ctx, spec)
	if err != nil {
		return fail(spec, err)
	}
	mem := spec.FunctionMemory
	if mem <= 0 {
		mem = 1769 << 20
	}
	cal := p.cfg.Calibration
	cpu := math.Min(1, float64(mem)/float64(1769<<20))
	net := p.store.cfg.Bandwidth * math.Min(4, math.Max(1, cpu*4)) // four streams at a full vCPU

	outParts := st.Output.Count
	if st.Output.Kind != plan.PartitionHash || outParts < 1 {
		outParts = 1
	}
	p.mu.Lock()
	p.stageParts[spec.Job+"/"+fmt.Sprint(spec.Stage)] = outParts
	parts := make(map[int]int, len(spec.Inputs))
	for _, in := range spec.Inputs {
		parts[in.Stage] = p.stageParts[spec.Job+"/"+fmt.Sprint(in.Stage)]
	}
	p.mu.Unlock()
	v := &taskView{spec: spec, stats: p.stats, files: p.files, parts: parts}
	outFlow := v.estimate(st.Root)

	var s3 objstore.RequestStats
	s3.Get++ // the plan fragment
	var slow int64
	var delay time.Duration

	// Reads: table splits (a footer, then the read-ahead's requests of up
	// to 8 MiB), and shuffle objects (one ranged GET per 16 MiB of an
	// object's partitions read).
	scanRows, scanBytes := v.scanned()
	colFrac := 1.0
	plan.Walk(st.Root, func(n *plan.Node) {
		if n.Kind == plan.KindScan && n.Scan != nil && !n.Scan.Inline {
			if c := p.cols[strings.ToLower(n.Scan.Table)]; c > 0 {
				colFrac = math.Min(1, float64(len(n.Scan.Columns))/float64(c))
			}
		}
		if n.Kind == plan.KindScan && n.Scan != nil && n.Scan.Inline {
			for _, f := range n.Scan.Files {
				scanBytes += float64(f.Size)
				s3.Get += 2
				for _, rg := range p.files[f.Key].RowGroups {
					scanRows += float64(rg.Rows)
				}
			}
		}
	})
	readBytes := scanBytes * colFrac
	var scanGets int64
	for _, sp := range spec.Splits {
		scanGets += 1 + int64(math.Ceil(float64(sp.Size)*colFrac/float64(8<<20)))
	}
	var shufBytes, shufRows float64
	perObject := map[string]int64{}
	for _, in := range spec.Inputs {
		for _, o := range in.Objects {
			shufBytes += float64(o.Bytes)
			shufRows += float64(o.Rows)
			perObject[o.Key] += o.Bytes
		}
	}
	readNet := (readBytes + shufBytes) / net
	scanCPU := readBytes / (cal.ScanBytesPerSec * cpu)
	shufCPU := shufBytes / (cal.ShuffleReadBytesPerSec * cpu)
	readTime := secs(math.Max(readNet, scanCPU+shufCPU))
	if len(spec.Splits) > 0 {
		s, d := p.store.Charge(classGet, spec.Splits[0].Key, scanGets, start, readTime)
		slow, delay = slow+s, max(delay, d)
	}
	var shufGets int64
	for key, b := range perObject {
		n := 1 + b/(16<<20)
		shufGets += n
		s, d := p.store.Charge(classGet, key, n, start, readTime)
		slow, delay = slow+s, max(delay, d)
	}
	gets := scanGets + shufGets
	s3.Get += gets + slow
	s3.BytesRead = int64(readBytes + shufBytes)
	latency := time.Duration(math.Ceil(float64(gets)/4)) * p.store.cfg.FirstByte // four requests in flight

	// Compute: rows through the fragment's joins, aggregations and sorts.
	inRows := scanRows + shufRows
	var compute float64
	plan.Walk(st.Root, func(n *plan.Node) {
		switch n.Kind {
		case plan.KindHashJoin, plan.KindCrossJoin:
			compute += inRows / cal.JoinRowsPerSec
		case plan.KindAggregate:
			compute += inRows / cal.AggRowsPerSec
		case plan.KindSort, plan.KindWindow:
			compute += inRows / cal.SortRowsPerSec
		}
	})
	compute /= cpu

	// Output: partitions of the stage's exchange, one data object and a
	// manifest.
	memBytes := outFlow.rows * rowWidth(st.Root.Schema)
	stored := memBytes / cal.Compression
	writeTime := secs(memBytes/(cal.WriteBytesPerSec*cpu) + stored/net)
	dataKey := shuffle.DataKey(spec.OutputPrefix)
	res := function.TaskResult{Job: spec.Job, Stage: spec.Stage, Task: spec.Task, Attempt: spec.Attempt, Fence: spec.Fence,
		InputRows: int64(inRows), InputBytes: int64(readBytes + shufBytes)}
	res.Partitions = p.partitions(spec, dataKey, outParts, outFlow.rows, stored)
	for _, ps := range res.Partitions {
		res.Rows += ps.Rows
		res.Bytes += ps.Bytes
	}
	work := cal.Startup + readTime + latency + delay + secs(compute) + writeTime + 2*p.store.cfg.FirstByte
	end := start + work
	puts := int64(1)
	if res.Bytes > 0 {
		puts++
		p.store.PutSized(dataKey, res.Bytes+16)
	}
	p.store.PutSized(shuffle.ManifestKey(spec.OutputPrefix), int64(300+80*len(res.Partitions)))
	ps, pd := p.store.Charge(classPut, dataKey, puts, end, 0)
	work += pd
	s3.Put += puts + ps
	s3.BytesWritten = res.Bytes
	p.store.Count(s3)
	res.S3 = &s3
	res.Seconds = work.Seconds()
	p.mu.Lock()
	p.st.Tasks++
	p.mu.Unlock()
	out, _ := json.Marshal(res)
	return out, work, mem
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// partitions lays a task's output rows out over the stage's partitions as
// the shuffle writer would: one data object, every non-empty partition a
// contiguous byte range of it. With Skew, that fraction of the rows goes
// to one hot partition.
func (p *Platform) partitions(spec *function.TaskSpec, key string, count int, rows, bytes float64) []shuffle.PartitionStat {
	total := int64(math.Round(rows))
	if total <= 0 {
		return nil
	}
	perRow := bytes / rows
	counts := make(map[int]int64)
	if count == 1 {
		counts[0] = total
	} else {
		hot := int64(float64(total) * p.cfg.Skew)
		if hot > 0 {
			counts[(spec.Stage*7919)%count] += hot
		}
		rest := total - hot
		if rest < int64(count) {
			first := (spec.Task * 7919) % count
			for i := int64(0); i < rest; i++ {
				counts[(first+int(i))%count]++
			}
		} else {
			each, extra := rest/int64(count), rest%int64(count)
			for i := 0; i < count; i++ {
				n := each
				if int64(i) < extra {
					n++
				}
				counts[i] += n
			}
		}
	}
	out := make([]shuffle.PartitionStat, 0, len(counts))
	off := int64(8) // the Arrow IPC file's magic
	for i := 0; i < count; i++ {
		n, ok := counts[i]
		if !ok || n == 0 {
			continue
		}
		b := max(int64(math.Ceil(float64(n)*perRow)), 1)
		out = append(out, shuffle.PartitionStat{Partition: i, Rows: n, Offset: off, Bytes: b, Key: key})
		off += b
	}
	return out
}

// fragment returns the plan fragment at key (cached: fragments are
// immutable by key).
func (p *Platform) fragment(ctx context.Context, spec *function.TaskSpec) (*plan.Stage, error) {
	key := spec.PlanKey
	p.mu.Lock()
	st, ok := p.plans[key]
	p.mu.Unlock()
	if ok {
		return st, nil
	}
	b := []byte(spec.Plan) // sent in the spec: no GET
	if len(b) == 0 {
		var err error
		if b, err = p.store.Get(ctx, key); err != nil {
			return nil, fmt.Errorf("plan fragment: %w", err)
		}
	}
	var s plan.Stage
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decode plan fragment %s: %w", key, err)
	}
	p.mu.Lock()
	p.plans[key] = &s
	p.mu.Unlock()
	return &s, nil
}
