// Package local runs sluice's embedded stack on one machine: a MinIO server
// (or an S3 endpoint you name), miniredis in-process (or a Redis URL), an
// in-process pool of functions and the same coordinator code that runs as
// a service elsewhere, with its HTTP API on a loopback port.
package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/coordinator/sqlsession"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/function/redisdb"
	"github.com/sluicedb/sluice/local/minioserver"
	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/catalog"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// Options configure the embedded stack.
type Options struct {
	// RedisURL, when set, is used instead of an in-process miniredis
	// (redis://, rediss:// with TLS; user and password for AUTH).
	RedisURL string
	// S3, when its Endpoint is set, is used instead of starting MinIO.
	S3 objstore.S3Config
	// MinIOBin is the MinIO server binary (default: found by minioserver).
	MinIOBin string
	// Functions is the size of the in-process function pool; 0: one per
	// core (DefaultFunctions).
	Functions int
	// Partitions, when set, is the hash partition count of every shuffle
	// exchange; 0 sizes it from the data and FunctionMemory.
	Partitions int
	// FunctionMemory is each function's memory budget in bytes (the
	// planner sizes tasks to it; the cost report's GB-seconds use it).
	FunctionMemory int64
	// BroadcastBytes is the planner's broadcast threshold on estimated
	// sizes (0: the planner's default; negative: never broadcast).
	BroadcastBytes int64
	// FilterCutBytes is the planner's Options.FilterCutBytes (0: its
	// default).
	FilterCutBytes int64
	// APIAddr is where the coordinator API listens (default a free
	// loopback port).
	APIAddr     string
	Coordinator coordinator.Config
	Log         *slog.Logger
	// IcebergCatalog, when set, is an Iceberg catalog whose tables are
	// queried as namespace.table (catalog.OpenIcebergCatalog).
	IcebergCatalog string
	// FileCache is the budget of the range cache of table bytes the
	// in-process functions share (function.Runtime.Files): a query reads
	// from memory what an earlier one fetched of the same file versions.
	// 0: no cache; at most a quarter of the functions' memory
	// (FileCacheBudget). DefaultOptions sets function.DefaultFileCache.
	FileCache int64
	// WrapInvoker, when set, wraps the in-process function pool (fault
	// injection in tests: coordinator.NewFaultInvoker).
	WrapInvoker func(coordinator.Invoker) coordinator.Invoker
}

// GCLimit is the memory a process running the embedded stack's in-process
// functions is given to TuneGC: the functions' memory (Functions x
// FunctionMemory), capped by the platform's limit when it has one.
func GCLimit(opts Options) int64 {
	n := opts.Functions
	if n <= 0 {
		n = DefaultFunctions()
	}
	mem := opts.FunctionMemory
	if mem <= 0 {
		mem = planner.DefaultFunctionMemory
	}
	limit := int64(n) * mem
	if m := function.MemoryLimit(); m > 0 {
		limit = min(limit, m)
	}
	return limit
}

// FileCacheBudget is the in-process functions' range cache: opts.FileCache,
// at most a quarter of their memory (GCLimit), which their tasks need.
func FileCacheBudget(opts Options) int64 {
	return min(opts.FileCache, GCLimit(opts)/4)
}

// DefaultFunctions is the default size of the in-process function pool:
// one slot per core the Go runtime may use (GOMAXPROCS). A task is CPU
// work between object-store round trips, so more slots than cores only
// interleave tasks and raise peak memory.
func DefaultFunctions() int { return runtime.GOMAXPROCS(0) }

// DefaultOptions returns the embedded stack's defaults.
func DefaultOptions() Options {
	return Options{Functions: DefaultFunctions(), FunctionMemory: planner.DefaultFunctionMemory, Coordinator: coordinator.DefaultConfig(),
		FileCache: function.DefaultFileCache}
}

// Stack is a running embedded stack.
type Stack struct {
	MinIO     *minioserver.Server
	Miniredis *miniredis.Miniredis
	RDB       redis.UniversalClient
	// Bucket is the one client of the stack's bucket (objstore.Open),
	// observed: the coordinator's metrics count its failed requests,
	// the coordinator's and the in-process functions' alike.
	Bucket      *objstore.Observed
	S3          objstore.S3Config
	RedisURL    string
	Catalog     *catalog.Store
	Runtime     *function.Runtime
	Pool        *function.Pool
	Coordinator *coordinator.Coordinator
	APIURL      string

	server *http.Server
	opts   Options
	stops  []func() // front ends started on the stack (StartPG, StartFlight)
}

// RequestStats returns the requests the stack's bucket client made so far
// (every HTTP request, retries included).
func (s *Stack) RequestStats() objstore.RequestStats {
	st, _ := objstore.StatsOf(s.Bucket)
	return st
}

// Start starts the stack. On error nothing is left running.
func Start(ctx context.Context, opts Options) (_ *Stack, err error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Functions <= 0 {
		opts.Functions = DefaultFunctions()
	}
	if opts.Coordinator.Owner == "" {
		opts.Coordinator = coordinator.DefaultConfig()
	}
	s := &Stack{opts: opts}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	// Redis.
	if opts.RedisURL == "" {
		s.Miniredis, err = miniredis.Run()
		if err != nil {
			return nil, fmt.Errorf("start miniredis: %w", err)
		}
		s.RedisURL = "redis://" + s.Miniredis.Addr()
	} else {
		s.RedisURL = opts.RedisURL
	}
	ropts, err := redis.ParseURL(s.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("redis URL %q: %w", redactURL(s.RedisURL), err)
	}
	ropts.DialTimeout = 3 * time.Second
	ropts.MaxRetries = redisdb.NoClientRetries
	s.RDB = redis.NewClient(ropts)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.RDB.Ping(pctx).Err(); err != nil {
		return nil, fmt.Errorf("redis at %s unreachable: %w", ropts.Addr, err)
	}
	// S3.
	s.S3 = opts.S3
	if s.S3.Endpoint == "" {
		s.MinIO, err = minioserver.Start(ctx, minioserver.Options{Bin: opts.MinIOBin})
		if err != nil {
			return nil, err
		}
		s.S3 = objstore.S3Config{Endpoint: s.MinIO.Endpoint, AccessKey: s.MinIO.AccessKey,
			SecretKey: s.MinIO.SecretKey, Bucket: opts.Coordinator.Bucket, Region: "us-east-1"}
		wctx, stop := context.WithCancel(context.Background())
		s.stops = append(s.stops, stop)
		go superviseMinIO(wctx, s.MinIO, opts.Log)
	}
	if s.S3.Bucket == "" {
		s.S3.Bucket = opts.Coordinator.Bucket
	}
	opts.Coordinator.Bucket = s.S3.Bucket
	// The in-process pool is the bottleneck: dispatch no more tasks than
	// it runs, so a task's fate (LIMIT early stop, cancellation) is decided
	// when it can actually start.
	opts.Coordinator.Concurrency = opts.Functions
	if opts.Coordinator.AQE.Parallelism == 0 {
		// In-process functions share this process's cores: no more tasks
		// run at once than there are cores to run them, whatever the
		// pool's size (the re-planner sizes stages to this).
		opts.Coordinator.AQE.Parallelism = min(opts.Functions, runtime.GOMAXPROCS(0))
	}
	raw, err := objstore.Open(ctx, objstore.Config{Backend: objstore.BackendS3, S3: s.S3})
	if err != nil {
		return nil, err
	}
	s.Bucket = objstore.Observe(raw)
	if err := ensureBucket(ctx, s.Bucket, s.S3.Endpoint, s.MinIO, opts.Log); err != nil {
		return nil, err
	}
	// Functions, catalog, coordinator, API.
	s.Catalog = catalog.NewStore(s.RDB)
	s.Catalog.Bucket = s.Bucket // external tables are re-listed when used
	s.Catalog.BucketName = s.S3.Bucket
	if opts.IcebergCatalog != "" {
		if s.Catalog.Iceberg, err = catalog.OpenIcebergCatalog(ctx, opts.IcebergCatalog); err != nil {
			return nil, err
		}
	}
	s.Runtime = function.NewRuntime(s.Bucket, function.RedisSignals{RDB: s.RDB}, opts.Log)
	s.Runtime.Files = objstore.NewRangeCache(FileCacheBudget(opts))
	s.Pool = function.NewPool(s.Runtime, opts.Functions)
	store := coordinator.NewStore(s.RDB)
	if opts.FunctionMemory > 0 {
		opts.Coordinator.FunctionMemory = opts.FunctionMemory
	}
	pl := &sqlsession.Session{Catalog: s.Catalog, Options: planner.Options{Partitions: opts.Partitions, BroadcastBytes: opts.BroadcastBytes, FilterCutBytes: opts.FilterCutBytes,
		TaskBytes: planner.TaskBytesFor(opts.Coordinator.FunctionMemory)}}
	var inv coordinator.Invoker = s.Pool
	if opts.WrapInvoker != nil {
		inv = opts.WrapInvoker(inv)
	}
	s.Coordinator = coordinator.New(opts.Coordinator, store, s.Bucket, pl, s.Catalog, inv, opts.Log)
	s.Bucket.OnError(s.Coordinator.Metrics().S3Error)
	addr := opts.APIAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("coordinator API listen on %s: %w", addr, err)
	}
	s.APIURL = "http://" + ln.Addr().String()
	srv := &http.Server{Handler: coordinator.NewAPI(s.Coordinator).Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.server = srv
	go func() { _ = srv.Serve(ln) }()
	return s, nil
}

// minioRestarts bounds how often superviseMinIO tries to bring a dead
// MinIO back before it gives up and leaves the stack without storage.
const minioRestarts = 5

// superviseMinIO notices when the stack's MinIO process dies (a crash, the
// OOM killer, a kill by hand) and says so at once, with the server's log
// tail, instead of leaving every query to stall in the object-store outage
// budget; then it starts MinIO again on the same port and data folder, so
// committed data and running jobs carry on. A Kill or Stop by the stack's
// owner (tests inject outages with Kill) is not a death and is left alone.
func superviseMinIO(ctx context.Context, srv *minioserver.Server, log *slog.Logger) {
	for {
		var cause error
		select {
		case <-ctx.Done():
			return
		case cause = <-srv.Died():
		}
		log.Error("embedded MinIO died; starting it again on the same port and data folder",
			"endpoint", srv.Endpoint, "err", cause, "log_tail", lastLines(srv.Logs(), 10))
		for attempt := 1; ; attempt++ {
			rctx, cancel := context.WithTimeout(ctx, srv.StartTimeout)
			err := srv.Restart(rctx)
			cancel()
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				log.Warn("embedded MinIO is back", "endpoint", srv.Endpoint, "attempt", attempt)
				break
			}
			log.Error("restarting embedded MinIO failed", "endpoint", srv.Endpoint, "attempt", attempt, "err", err)
			if attempt == minioRestarts {
				log.Error("giving up on the embedded MinIO: queries fail once their object-store outage budget is spent; restart the stack",
					"endpoint", srv.Endpoint)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(attempt) * time.Second):
			}
		}
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Close stops everything the stack started. It is safe to call twice.
func (s *Stack) Close() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
	s.stops = nil
	if s.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = s.server.Shutdown(ctx)
		cancel()
		s.server = nil
	}
	if s.Coordinator != nil {
		s.Coordinator.Close()
		s.Coordinator = nil
	}
	if s.RDB != nil {
		_ = s.RDB.Close()
		s.RDB = nil
	}
	if s.Miniredis != nil {
		s.Miniredis.Close()
		s.Miniredis = nil
	}
	if s.MinIO != nil {
		_ = s.MinIO.Stop()
		s.MinIO = nil
	}
}

// TablesPrefix is where the stack uploads table files.
func (s *Stack) TablesPrefix(table string) string {
	p := strings.Trim(s.opts.Coordinator.Prefix, "/")
	if p != "" {
		p += "/"
	}
	return p + "tables/" + table + "/"
}

// dataFormats are the file formats a table folder may hold, by extension,
// in the order LoadDir tries them (the first with files wins).
var dataFormats = []struct {
	format string
	exts   []string
}{
	{"parquet", []string{".parquet"}},
	{"csv", []string{".csv"}},
	{"json", catalog.FormatExtensions("json")},
}

// LoadDir uploads every table folder under dir (DIR/<table>/*.parquet, or
// DIR/<table>/*.csv with a header row, or newline-delimited DIR/<table>/*.json,
// .ndjson or .jsonl, CSV and JSON maybe compressed whole as .gz or .zst,
// each maybe under hive key=value
// subfolders, which become partition columns) to the bucket and registers
// it in the catalog. A folder's name is the table's, as written (queried
// regardless of case; a name with - or capitals as a quoted identifier,
// "My-Table"). What it does not load it logs as a warning, with the reason:
// top-level files, symlinks, folders whose name cannot name a table or
// that repeat another's name regardless of case, folders without data
// files, and files a table folder holds besides its data files (other
// formats, files in folders that are not key=value). Hidden entries
// (named .*) are skipped with a debug log only.
func (s *Stack) LoadDir(ctx context.Context, dir string) ([]*catalog.Table, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	log := s.opts.Log
	var out []*catalog.Table
	seen := map[string]string{}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), "."):
			log.Debug("data dir: skipping a hidden entry", "path", path)
			continue
		case e.Type()&fs.ModeSymlink != 0:
			log.Warn("data dir: skipping a symlink (table folders must be real folders)", "path", path)
			continue
		case !e.IsDir():
			log.Warn("data dir: skipping a top-level file (a table is a folder DIR/<table>/ of data files)", "path", path)
			continue
		}
		name := e.Name()
		if err := catalog.CheckName(name); err != nil {
			log.Warn("data dir: skipping a folder whose name cannot name a table", "path", path, "reason", err.Error())
			continue
		}
		if other, ok := seen[strings.ToLower(name)]; ok {
			log.Warn("data dir: skipping a folder whose name differs only in case from another table's", "path", path, "table", other)
			continue
		}
		format, files, skipped, err := tableFiles(path)
		if err != nil {
			return nil, err
		}
		for _, sk := range skipped {
			log.Warn("data dir: skipping a file of table "+name, "path", filepath.Join(path, sk.path), "reason", sk.reason)
		}
		if len(files) == 0 {
			log.Warn("data dir: skipping a folder without data files", "path", path)
			continue
		}
		seen[strings.ToLower(name)] = name
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(path, f))
			if err != nil {
				return nil, err
			}
			if err := s.Bucket.Put(ctx, s.TablesPrefix(name)+filepath.ToSlash(f), b); err != nil {
				return nil, fmt.Errorf("upload %s: %w", f, err)
			}
		}
		var t *catalog.Table
		switch format {
		case "csv", "json":
			if format == "csv" {
				t, err = catalog.InspectCSV(ctx, s.Bucket, name, s.TablesPrefix(name), catalog.CSVOptions{Header: true})
			} else {
				t, err = catalog.InspectJSON(ctx, s.Bucket, name, s.TablesPrefix(name), false)
			}
			if err == nil {
				err = s.Catalog.Put(ctx, t)
			}
		default:
			t, err = s.Register(ctx, name, s.TablesPrefix(name))
		}
		if err != nil {
			return nil, fmt.Errorf("data dir: table %s (folder %s): %w", name, path, err)
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("data dir %s has no table folders with %s files (expected DIR/<table>/*.parquet; see the warnings for what was skipped)", dir, dataExtensions())
	}
	return out, nil
}

// skippedFile is a file under a table folder that LoadDir does not load.
type skippedFile struct {
	path   string // relative to the table folder
	reason string
}

// tableFiles returns the format of a table folder and its data files
// (relative to it, in its hive key=value subfolders too, sorted): those
// of the first format in dataFormats with any. skipped are the other
// files, and those under folders that are not key=value, with the reason.
func tableFiles(root string) (format string, files []string, skipped []skippedFile, err error) {
	byFormat := map[string][]string{}
	var other []skippedFile
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			other = append(other, skippedFile{rel, "a symlink (not followed)"})
			return nil
		}
		if d.IsDir() {
			if path != root && !strings.Contains(d.Name(), "=") {
				other = append(other, skippedFile{rel + string(filepath.Separator), "a subfolder that is not a hive key=value folder (its files are not read)"})
				return filepath.SkipDir // only key=value folders hold a table's files
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") {
			return nil // hidden or a marker, as readers ignore them
		}
		ext, compressed := objstore.DataExt(path)
		for _, f := range dataFormats {
			if slices.Contains(f.exts, ext) && (!compressed || catalog.Compressible(ext)) {
				byFormat[f.format] = append(byFormat[f.format], rel)
				return nil
			}
		}
		other = append(other, skippedFile{rel, "not a data file (" + dataExtensions() + ")"})
		return nil
	})
	if err != nil {
		return "", nil, nil, fmt.Errorf("data dir: %w", err)
	}
	for _, f := range dataFormats {
		fs := byFormat[f.format]
		if len(fs) == 0 {
			continue
		}
		if format == "" {
			format, files = f.format, fs
			continue
		}
		for _, p := range fs {
			skipped = append(skipped, skippedFile{p, fmt.Sprintf("a %s file in a %s table", f.format, format)})
		}
	}
	sort.Strings(files)
	return format, files, append(skipped, other...), nil
}

// dataExtensions lists the extensions of data files.
func dataExtensions() string {
	var exts []string
	for _, f := range dataFormats {
		exts = append(exts, f.exts...)
	}
	return strings.Join(exts, ", ") + " (CSV and JSON also as .gz or .zst)"
}

// Register adds the files under prefix as a table.
func (s *Stack) Register(ctx context.Context, name, prefix string) (*catalog.Table, error) {
	t, err := catalog.Inspect(ctx, s.Bucket, name, prefix)
	if err != nil {
		return nil, err
	}
	if err := s.Catalog.Put(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

// Result is a finished query's answer and what it took.
type Result struct {
	Job     string
	Schema  *arrow.Schema
	Records []arrow.RecordBatch
	Status  *coordinator.JobStatus
}

// Release frees the result's batches.
func (r *Result) Release() {
	for _, rec := range r.Records {
		rec.Release()
	}
}

// Query runs sql through the coordinator API, as a remote client would,
// and returns its result. progress, if set, is called on every poll.
func (s *Stack) Query(ctx context.Context, sql string, adaptive *bool, progress func(*coordinator.JobStatus)) (*Result, error) {
	return RunQuery(ctx, coordinator.NewClient(s.APIURL, ""), sql, adaptive, progress)
}

// RunQuery submits sql to a coordinator, waits for it and fetches the
// result. A failed job's error is returned with its reason.
func RunQuery(ctx context.Context, c *coordinator.Client, sql string, adaptive *bool, progress func(*coordinator.JobStatus)) (*Result, error) {
	job, err := c.Submit(ctx, sql, adaptive)
	if err != nil {
		return nil, err
	}
	js, err := c.Wait(ctx, job, progress)
	if err != nil {
		return nil, err
	}
	if js.State != coordinator.StateSucceeded {
		err := fmt.Errorf("job %s %s: %s", job, js.State, js.Error)
		if js.Code != "" {
			err = plan.WithCode(js.Code, err) // the message starts with the code already
		}
		return &Result{Job: job, Status: js}, err
	}
	schema, recs, err := c.Result(ctx, job)
	if err != nil {
		return nil, err
	}
	return &Result{Job: job, Schema: schema, Records: recs, Status: js}, nil
}

// Statement runs one SQL statement of any kind (a query, DDL, SHOW,
// DESCRIBE, CREATE TABLE AS, COPY, EXPLAIN) through the coordinator API.
func (s *Stack) Statement(ctx context.Context, sql string, adaptive *bool) (*Result, error) {
	return RunStatement(ctx, coordinator.NewClient(s.APIURL, ""), sql, adaptive, nil)
}

// RunStatement runs one statement through POST /v1/statements: a query is
// waited for and its result fetched as RunQuery does; any other statement
// returns its result set at once (Job "").
func RunStatement(ctx context.Context, c *coordinator.Client, sql string, adaptive *bool, progress func(*coordinator.JobStatus)) (*Result, error) {
	job, schema, recs, err := c.Statement(ctx, sql, adaptive)
	if err != nil {
		return nil, err
	}
	if job == "" {
		return &Result{Schema: schema, Records: recs}, nil
	}
	js, err := c.Wait(ctx, job, progress)
	if err != nil {
		return nil, err
	}
	if js.State != coordinator.StateSucceeded {
		err := fmt.Errorf("job %s %s: %s", job, js.State, js.Error)
		if js.Code != "" {
			err = plan.WithCode(js.Code, err)
		}
		return &Result{Job: job, Status: js}, err
	}
	schema, recs, err = c.Result(ctx, job)
	if err != nil {
		return nil, err
	}
	return &Result{Job: job, Schema: schema, Records: recs, Status: js}, nil
}

func redactURL(u string) string {
	if i := strings.Index(u, "@"); i > 0 {
		if j := strings.Index(u, "://"); j > 0 && j < i {
			return u[:j+3] + "***" + u[i:]
		}
	}
	return u
}

// bucketMaker is the part of the object store ensureBucket uses.
type bucketMaker interface {
	EnsureBucket(ctx context.Context) error
}

// ensureBucket creates the bucket, retrying while the object store is
// still coming up. The deadline follows the machine: an embedded MinIO
// that took t to become ready gets 30 s + 10 t more (a loaded machine is
// slow at everything), an external endpoint 30 s; every retry says what
// it waits for.
func ensureBucket(ctx context.Context, b bucketMaker, endpoint string, srv *minioserver.Server, log *slog.Logger) error {
	budget := 30 * time.Second
	if srv != nil {
		budget += 10 * srv.Startup
	}
	deadline := time.Now().Add(budget)
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := b.EnsureBucket(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) || !objstore.Transient(err) && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("S3 endpoint %s: create bucket (attempt %d, gave up after %v): %w", endpoint, attempt, budget, err)
		}
		log.Warn("waiting for the object store to accept bucket requests", "endpoint", endpoint, "attempt", attempt,
			"deadline_in", time.Until(deadline).Round(time.Second), "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("S3 endpoint %s: create bucket: %w", endpoint, ctx.Err())
		case <-time.After(min(time.Duration(attempt)*500*time.Millisecond, 5*time.Second)):
		}
	}
}
