// Package redisdb is what every part of sluice that talks to Redis shares:
// the names of the keys, written down once here, and the retry with which
// each part rides out a Redis outage. It imports no sluice package, so the
// coordinator, the catalog (planner/catalog) and the functions (function)
// may all use it without a dependency pointing the wrong way.
//
// Every key of one job carries the hash tag {job}, so that a job's keys
// live in one Redis Cluster slot and one Lua script may touch them all.
// docs/architecture.md ("Redis") lists what each key holds.
package redisdb

import (
	"fmt"
	"strconv"
)

// Global keys.
const (
	// JobsKey is a ZSET of job ids by submit time (ms).
	JobsKey = "sluice:jobs"
	// FinishedKey is a ZSET of finished jobs by finish time (ms), until
	// retention GC deleted their objects.
	FinishedKey = "sluice:finished"
	// RunningKey is a ZSET of the jobs not finished, by submit time (ms):
	// what recovery scans for unleased jobs, whatever their age.
	RunningKey = "sluice:running"
	// QueuedKey is a ZSET of the jobs admission control holds back, by
	// submit time (µs); AdmittedKey a ZSET of the jobs it let in and that
	// have not finished. One hash tag, so the admission script (which
	// reads both) runs on one Redis Cluster slot.
	QueuedKey   = "sluice:{admission}:queued"
	AdmittedKey = "sluice:{admission}:admitted"
	// CatalogKey is a HASH of table name -> table JSON.
	CatalogKey = "sluice:catalog"
)

func jobKey(job, suffix string) string { return "sluice:{" + job + "}:" + suffix }

// JobKeys is the pattern (for SCAN or KEYS) matching every key of job.
func JobKeys(job string) string { return jobKey(job, "*") }

// JobKey is job's HASH: sql, state, error, graph, groups, round, ...
func JobKey(job string) string { return jobKey(job, "job") }

// FenceKey is job's fencing token, bumped by every new lease holder.
func FenceKey(job string) string { return jobKey(job, "fence") }

// LeaseKey is job's lease (the driving coordinator, with a PX TTL).
func LeaseKey(job string) string { return jobKey(job, "lease") }

// StageKey is the HASH of one stage of job.
func StageKey(job string, stage int) string { return jobKey(job, "stage:"+strconv.Itoa(stage)) }

// TaskKey is the HASH of one task of a stage of job.
func TaskKey(job string, stage, task int) string {
	return jobKey(job, fmt.Sprintf("task:%d:%d", stage, task))
}

// RoundsKey is job's LIST of re-planning rounds.
func RoundsKey(job string) string { return jobKey(job, "rounds") }

// CostKey is job's cost report HASH: S3 requests by verb, bytes moved,
// invocations, function seconds and GB-seconds (HINCRBY, not fenced: a
// stale coordinator's invocations were paid for too).
func CostKey(job string) string { return jobKey(job, "cost") }

// CancelKey is set when job is cancelled; functions poll it between batches.
func CancelKey(job string) string { return jobKey(job, "cancel") }

// LimitKey is the counter of rows a stage's tasks produced toward a bare
// LIMIT (LIMIT early stop).
func LimitKey(job string, stage int) string { return jobKey(job, "limit:"+strconv.Itoa(stage)) }
