package coordinator

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/sluicedb/sluice/coordinator/webui"
)

// JobSettings are the knobs a job runs with, named by their flags (the
// knobs table of cmd/sluice; TestKnobsJobSettings checks every name is
// one): recorded in the job record when it is submitted ("settings"), for
// the web UI. adaptive is the job's own (SubmitOptions may override the
// coordinator's).
func JobSettings(cfg Config, adaptive bool) []webui.Setting {
	b := func(v bool) string { return strconv.FormatBool(v) }
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	d := func(v time.Duration) string { return v.String() }
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	a := cfg.AQE
	return []webui.Setting{
		{Name: "adaptive", Value: b(adaptive)},
		{Name: "functions", Value: strconv.Itoa(cfg.Concurrency)},
		{Name: "fair-share", Value: b(cfg.FairShare)},
		{Name: "max-jobs", Value: strconv.Itoa(cfg.MaxJobs)},
		{Name: "function-memory", Value: n(cfg.FunctionMemory)},
		{Name: "split-bytes", Value: n(cfg.SplitBytes)},
		{Name: "max-split-bytes", Value: n(a.MaxSplitBytes)},
		{Name: "target-partition-bytes", Value: n(a.TargetPartitionBytes)},
		{Name: "broadcast-bytes", Value: n(a.BroadcastBytes)},
		{Name: "unbroadcast-bytes", Value: n(a.UnbroadcastBytes)},
		{Name: "inline-scan-bytes", Value: n(a.InlineScanBytes)},
		{Name: "skew-factor", Value: f(a.SkewFactor)},
		{Name: "skew-min-bytes", Value: n(a.SkewMinBytes)},
		{Name: "get-budget", Value: n(a.GetBudget)},
		{Name: "pack-bytes", Value: n(cfg.PackBytes)},
		{Name: "defer-probe-ratio", Value: n(cfg.DeferProbeRatio)},
		{Name: "runtime-filters", Value: b(a.RuntimeFilters)},
		{Name: "runtime-filter-wait", Value: d(cfg.RuntimeFilterWait)},
		{Name: "limit-early-stop", Value: b(cfg.LimitEarlyStop)},
		{Name: "shuffle-codec", Value: cfg.ShuffleCodec},
		{Name: "max-attempts", Value: strconv.Itoa(cfg.MaxAttempts)},
		{Name: "task-timeout", Value: d(cfg.TaskTimeout)},
		{Name: "outage-budget", Value: d(cfg.OutageBudget)},
		{Name: "hedge-factor", Value: f(cfg.HedgeFactor)},
	}
}

// Settings decodes the knobs the job was submitted with (nil when the
// record has none: jobs recorded before they were kept).
func (r *JobRecord) Settings() []webui.Setting {
	if r.settings == "" {
		return nil
	}
	var out []webui.Setting
	if json.Unmarshal([]byte(r.settings), &out) != nil {
		return nil
	}
	return out
}
