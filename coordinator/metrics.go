package coordinator

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// Metrics are a coordinator's Prometheus metrics, served on GET /metrics.
// Counters count what this coordinator process did (a job driven by two
// coordinators in turn is counted by both, each for its part).
type Metrics struct {
	Registry *prometheus.Registry

	JobsSubmitted prometheus.Counter
	JobsFinished  *prometheus.CounterVec // state
	JobsDriving   prometheus.Gauge
	JobsTakenOver prometheus.Counter
	Stages        *prometheus.CounterVec // state: done, failed
	Tasks         *prometheus.CounterVec // outcome: committed, failed
	Attempts      *prometheus.CounterVec // outcome
	Retries       prometheus.Counter
	Failures      *prometheus.CounterVec // class: failed task attempts
	JobFailures   *prometheus.CounterVec // class: failed jobs
	Hedges        prometheus.Counter
	InputRepairs  prometheus.Counter
	Invocation    prometheus.Histogram
	// ConcurrencyLimit is the dispatcher's effective limit (the
	// configured slots, less while the platform throttles); Throttled
	// counts the invocations the platform refused (429) that the
	// dispatcher handled.
	ConcurrencyLimit prometheus.Gauge
	Throttled        prometheus.Counter
	StaleFence       prometheus.Counter
	RedisErrors      *prometheus.CounterVec // op
	S3Errors         *prometheus.CounterVec // op (the coordinator's own requests)
	GCJobs           prometheus.Counter
	GCObjects        prometheus.Counter
	// The cost report, over all jobs.
	S3Requests      *prometheus.CounterVec // verb: GET, PUT, LIST, DELETE, HEAD, other
	S3Bytes         *prometheus.CounterVec // direction: read, written
	Invocations     prometheus.Counter
	FunctionSeconds prometheus.Counter
	GBSeconds       prometheus.Counter
	CostDollars     prometheus.Counter
}

// addCost adds one attempt's (or a driver's) cost to the metrics.
func (m *Metrics) addCost(s3 objstore.RequestStats, invocations int64, secs, gbs float64, p Prices) {
	for _, v := range []struct {
		verb string
		n    int64
	}{{"GET", s3.Get}, {"PUT", s3.Put}, {"LIST", s3.List}, {"DELETE", s3.Delete}, {"HEAD", s3.Head}, {"other", s3.Other}} {
		if v.n > 0 {
			m.S3Requests.WithLabelValues(v.verb).Add(float64(v.n))
		}
	}
	m.S3Bytes.WithLabelValues("read").Add(float64(s3.BytesRead))
	m.S3Bytes.WithLabelValues("written").Add(float64(s3.BytesWritten))
	m.Invocations.Add(float64(invocations))
	m.FunctionSeconds.Add(secs)
	m.GBSeconds.Add(gbs)
	c := Cost{S3: s3, Invocations: invocations, FunctionSeconds: secs, GBSeconds: gbs}
	c.Price(p)
	m.CostDollars.Add(c.Dollars)
}

// Attempt outcomes (label values of sluice_task_attempts_total).
const (
	outcomeCommitted = "committed"    // this attempt's output became the task's
	outcomeLostRace  = "lost_race"    // succeeded, but another attempt committed first
	outcomeTransient = "transient"    // the function reported a retryable error
	outcomeUser      = "user_error"   // the query's fault: the job fails
	outcomeInputLost = "input_lost"   // an input object was missing or corrupt
	outcomeCancelled = "cancelled"    // job cancelled, or attempt made useless (hedge won, stage cancelled)
	outcomeInvoke    = "invoke_error" // the invocation itself failed (crash, unreachable)
	outcomeTimeout   = "timeout"      // past the task deadline
	outcomeStale     = "stale_fence"  // commit rejected: another coordinator drives the job
	outcomeSkipped   = "not_invoked"  // LIMIT already met: committed empty without a function
)

// NewMetrics returns a coordinator's metrics on a new registry, with the
// Go runtime and process collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &Metrics{Registry: reg}
	m.JobsSubmitted = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_jobs_submitted_total",
		Help: "Jobs submitted to this coordinator."})
	m.JobsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_jobs_finished_total",
		Help: "Jobs this coordinator finished, by final state."}, []string{"state"})
	m.JobsDriving = prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_jobs_driving",
		Help: "Jobs this coordinator drives now (holds the lease of)."})
	m.JobsTakenOver = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_jobs_taken_over_total",
		Help: "Running jobs whose lease had expired that this coordinator took over."})
	m.Stages = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_stages_total",
		Help: "Stages finished by this coordinator, by state."}, []string{"state"})
	m.Tasks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_tasks_total",
		Help: "Tasks finished by this coordinator, by outcome (committed or failed)."}, []string{"outcome"})
	m.Attempts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_task_attempts_total",
		Help: "Task attempts ended, by outcome."}, []string{"outcome"})
	m.Retries = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_task_retries_total",
		Help: "Attempts started again after a failed attempt."})
	m.Failures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_task_failures_total",
		Help: "Failed task attempts, by error class (user, unsupported, transient, internal; see docs/errors.md)."}, []string{"class"})
	m.JobFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_job_failures_total",
		Help: "Jobs this coordinator failed, by error class (transient: after the retry budget, or an error without a code)."}, []string{"class"})
	m.Hedges = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_task_hedges_total",
		Help: "Duplicate attempts started for stragglers."})
	m.InputRepairs = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_input_repairs_total",
		Help: "Committed tasks run again because a shuffle object they wrote was missing or corrupt."})
	m.Invocation = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sluice_invocation_duration_seconds",
		Help:    "Duration of function invocations (one task attempt), whatever their outcome.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12)})
	m.ConcurrencyLimit = prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_function_concurrency_limit",
		Help: "Task invocations this coordinator allows in flight now: the configured slots (--functions), less while the platform throttles (429)."})
	m.Throttled = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_function_throttled_total",
		Help: "Invocations the platform refused with 429 TooManyRequests; the attempt gave its slot back (cutting the concurrency limit) and waited for one again; it fails only if throttled past the outage budget without a commit."})
	m.StaleFence = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_stale_fence_rejections_total",
		Help: "State changes of this coordinator rejected because another coordinator took the job over."})
	m.RedisErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_redis_errors_total",
		Help: "Redis errors met by job-state operations (retried or not), by operation."}, []string{"op"})
	m.S3Errors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_s3_errors_total",
		Help: "Failed S3 requests of this coordinator and its in-process functions (retried or not), by operation."}, []string{"op"})
	m.GCJobs = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_gc_jobs_total",
		Help: "Finished jobs whose shuffle objects were deleted after the retention period."})
	m.GCObjects = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_gc_prefixes_deleted_total",
		Help: "Object prefixes (losing or abandoned attempts, finished jobs) deleted."})
	m.S3Requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_s3_requests_total",
		Help: "Object store requests of jobs (functions and drivers), by verb."}, []string{"verb"})
	m.S3Bytes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_s3_bytes_total",
		Help: "Object bytes moved by jobs' requests, by direction."}, []string{"direction"})
	m.Invocations = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_function_invocations_total",
		Help: "Function invocations (task attempts that reached a function)."})
	m.FunctionSeconds = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_function_seconds_total",
		Help: "Wall seconds of function invocations."})
	m.GBSeconds = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_function_gb_seconds_total",
		Help: "Function invocation seconds times function memory in GB."})
	m.CostDollars = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_cost_dollars_total",
		Help: "Estimated cost of jobs (S3 requests and Lambda) from the price table."})
	for _, c := range []prometheus.Collector{m.S3Requests, m.S3Bytes, m.Invocations, m.FunctionSeconds, m.GBSeconds, m.CostDollars, m.JobsSubmitted, m.JobsFinished, m.JobsDriving, m.JobsTakenOver, m.Stages,
		m.Tasks, m.Attempts, m.Retries, m.Failures, m.JobFailures, m.Hedges, m.InputRepairs, m.Invocation, m.ConcurrencyLimit, m.Throttled, m.StaleFence, m.RedisErrors, m.S3Errors,
		m.GCJobs, m.GCObjects} {
		f(c)
	}
	// Every label value exists from the start, so rates work from zero.
	for _, s := range []JobState{StateSucceeded, StateFailed, StateCancelled} {
		m.JobsFinished.WithLabelValues(string(s))
	}
	for _, o := range []string{outcomeCommitted, outcomeLostRace, outcomeTransient, outcomeUser, outcomeInputLost,
		outcomeCancelled, outcomeInvoke, outcomeTimeout, outcomeStale, outcomeSkipped} {
		m.Attempts.WithLabelValues(o)
	}
	for _, c := range plan.Classes {
		m.Failures.WithLabelValues(string(c))
		m.JobFailures.WithLabelValues(string(c))
	}
	m.Tasks.WithLabelValues("committed")
	m.Tasks.WithLabelValues("failed")
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// redisError counts a Redis error of a store operation.
func (m *Metrics) redisError(op string, _ error) {
	m.RedisErrors.WithLabelValues(strings.ReplaceAll(op, " ", "_")).Inc()
}

// S3Error counts a failed S3 request of op. The composition root (local.Start,
// coordinator serve) hooks it to the bucket the coordinator and its
// in-process functions share: objstore.Observe(bucket).OnError(m.S3Error).
func (m *Metrics) S3Error(op string) {
	m.S3Errors.WithLabelValues(op).Inc()
}
