// Package adaptive is sluice's re-planner: after every stage finishes, an
// ordered registry of named rules rewrites the part of the stage graph that
// has not run yet, from the statistics the finished stages really produced.
//
// A rule is one file with a Rule value and one line in Rules(). Every rule is
// idempotent: applying it to its own output changes nothing.
package adaptive

import (
	"fmt"
	"log/slog"
	"sort"

	"github.com/sluicedb/sluice/planner/plan"
)

// PartitionStats are what one output partition of a finished stage holds,
// summed over its committed tasks.
type PartitionStats struct {
	Partition int   `json:"partition"`
	Rows      int64 `json:"rows"`
	Bytes     int64 `json:"bytes"`
	// Objects is the number of map outputs (committed objects) holding it.
	Objects int `json:"objects"`
}

// StageStats are the statistics of a finished stage.
type StageStats struct {
	Rows       int64            `json:"rows"`
	Bytes      int64            `json:"bytes"`
	Partitions []PartitionStats `json:"partitions"` // non-empty partitions, by partition
	// Objects is the number of committed data objects (map outputs) of
	// the stage, one per task that wrote rows (0 in statistics recorded
	// before it was counted: MapObjects then estimates it).
	Objects int `json:"objects,omitempty"`
	// Summaries summarize the output columns the stage's plan asked for
	// (plan.Stage.Summarize), merged over its committed tasks; a column
	// some task did not summarize has none.
	Summaries []plan.ColumnSummary `json:"summaries,omitempty"`
}

// Summary returns the summary of output column c, or nil.
func (s *StageStats) Summary(c int) *plan.ColumnSummary {
	for i := range s.Summaries {
		if s.Summaries[i].Column == c {
			return &s.Summaries[i]
		}
	}
	return nil
}

// MapObjects returns the stage's committed data objects: Objects, or when
// that was not recorded, the most objects any one partition is spread
// over (a lower bound).
func (s *StageStats) MapObjects() int {
	m := s.Objects
	for _, p := range s.Partitions {
		m = max(m, p.Objects)
	}
	return m
}

// PartitionRows returns rows and bytes of partition p (zero if empty).
func (s *StageStats) Partition(p int) PartitionStats {
	i := sort.Search(len(s.Partitions), func(i int) bool { return s.Partitions[i].Partition >= p })
	if i < len(s.Partitions) && s.Partitions[i].Partition == p {
		return s.Partitions[i]
	}
	return PartitionStats{Partition: p}
}

// Config holds the re-planner's settings.
type Config struct {
	// TargetPartitionBytes is the size coalescing packs partitions toward.
	TargetPartitionBytes int64 `json:"target_partition_bytes"`
	// BroadcastBytes is the in-memory size up to which a finished join
	// side is broadcast instead of joined partition by partition (default
	// plan.BroadcastBytes, the threshold the planner applies to its
	// estimates).
	BroadcastBytes int64 `json:"broadcast_bytes"`
	// UnbroadcastBytes: a broadcast join side that turns out larger than
	// this in memory is repartitioned (0 turns it off).
	UnbroadcastBytes int64 `json:"unbroadcast_bytes"`
	// SkewFactor and SkewMinBytes: a partition larger than SkewFactor times
	// the median and than SkewMinBytes is split.
	SkewFactor   float64 `json:"skew_factor"`
	SkewMinBytes int64   `json:"skew_min_bytes"`
	// GetBudget: when the ranged GETs the pending readers of a finished
	// stage would issue (up to its map objects times their tasks) pass
	// this, combine-objects adds a stage that merges the map objects
	// first (0 turns it off).
	GetBudget int64 `json:"get_budget"`
	// Parallelism is how many tasks can run at once (the coordinator's
	// concurrency: the function pool, or the invoker's limit). Coalescing
	// keeps a stage at this many tasks, as long as each still reads at
	// least MinPartitionBytes, instead of packing a stage whose input fits
	// one target into a single task while the other slots idle (Spark's
	// coalescePartitions.parallelismFirst). 0: no floor.
	Parallelism int `json:"parallelism"`
	// MinPartitionBytes is the least a task coalescing keeps for
	// parallelism reads (default 4 MiB).
	MinPartitionBytes int64 `json:"min_partition_bytes"`
	// SplitBytes is the static plan's table bytes per scan task (the
	// coordinator's split size, which it sets here); MaxSplitBytes the
	// most size-scans gives one scan task when it runs a scan stage on
	// Parallelism tasks instead (default 128 MiB, Spark's
	// maxPartitionBytes; 0 keeps the static splits).
	SplitBytes    int64 `json:"split_bytes"`
	MaxSplitBytes int64 `json:"max_split_bytes"`
	// InlineScanBytes bounds what inline-scans lets the readers of a small
	// broadcast table read again: the table's bytes times their tasks
	// (default 16 MiB; 0 turns the rule off).
	InlineScanBytes int64 `json:"inline_scan_bytes"`
	// RuntimeFilters turns the runtime-filter rule on (the default).
	// RuntimeFilterProbeBytes: a build side is asked for a summary only
	// for a probe scan the driver measured at least this big (default 64
	// MiB), or did not measure; such a build stage is not inlined into
	// its readers (inline-scans), which would leave nothing to summarize.
	RuntimeFilters          bool  `json:"runtime_filters"`
	RuntimeFilterProbeBytes int64 `json:"runtime_filter_probe_bytes"`
	// Sizing configures size-functions (no sizes: off).
	Sizing Sizing `json:"sizing"`
	// FunctionMemory is each function's memory (the coordinator's
	// --function-memory; 0: unknown, negative: no memory bound; the
	// coordinator fills in 0 from its own). Coalescing keeps the rows a task
	// holds in memory (an aggregate's groups, a join's build side) within
	// a quarter of it, half the task's operator budget, so that packing
	// partitions by their compressed shuffle bytes does not make a task
	// spill.
	FunctionMemory int64 `json:"function_memory,omitempty"`
}

// coalesceTarget is the bytes coalescing packs into a task for a stage
// whose hash inputs hold total bytes: the target size, lowered so that
// the stage keeps Parallelism tasks, but not below MinPartitionBytes.
func (c Config) coalesceTarget(total int64) int64 {
	t := c.TargetPartitionBytes
	if c.Parallelism > 1 && total > 0 {
		floor := c.MinPartitionBytes
		if floor <= 0 {
			floor = 4 << 20
		}
		share := (total + int64(c.Parallelism) - 1) / int64(c.Parallelism)
		t = min(t, max(share, floor))
	}
	return t
}

// DefaultConfig returns the defaults documented in the README.
func DefaultConfig() Config {
	return Config{TargetPartitionBytes: 64 << 20, BroadcastBytes: plan.BroadcastBytes, UnbroadcastBytes: 64 << 20, SkewFactor: 4, SkewMinBytes: 16 << 20,
		GetBudget: 10000, MaxSplitBytes: 128 << 20, InlineScanBytes: 16 << 20,
		RuntimeFilters: true, RuntimeFilterProbeBytes: 64 << 20, Sizing: Sizing{Model: DefaultSizeModel()}}
}

// State is the view of a job a rule rewrites.
type State struct {
	Graph *plan.Graph
	// Done holds the statistics of finished stages; a stage in Done never
	// changes again.
	Done map[int]*StageStats
	// Running lists stages that have tasks in flight: rules must not change
	// their fragments or task assignments.
	Running map[int]bool
	// Tasks holds, for every stage that has one, how its tasks are
	// shaped (TaskPlan): the rules' decisions, stored with the job as one
	// record.
	Tasks TaskPlans
	// Scans holds, for pending stages that scan a table, what they read
	// (after partition pruning), as the driver measured it from the
	// table's files; read-only to rules.
	Scans  map[int]ScanSize
	Config Config
	// Log receives the rule rewrites Replan discards (nil: dropped).
	Log *slog.Logger
}

// Pending reports whether stage id may still be rewritten.
func (s *State) Pending(id int) bool {
	_, done := s.Done[id]
	return !done && !s.Skipped(id) && !s.Running[id]
}

// Skipped reports whether stage id will not run (TaskPlan.Skipped).
func (s *State) Skipped(id int) bool { return s.Tasks.Of(id).Skipped }

// Rule rewrites the pending part of a plan. Apply returns a note saying what
// it changed, or "" when it changed nothing.
type Rule interface {
	Name() string
	Apply(s *State) (note string, err error)
}

// Rules returns the registry in the order rules run:
//  1. propagate-empty first, so no later rule spends effort on stages that
//     will not run;
//  2. select-join and unbroadcast next: they change which stages read
//     which (unbroadcast adds stages), and so what the partition-level
//     rules below see;
//  3. runtime-filter after them, on the joins they settled: it asks
//     pending build sides for key summaries and filters pending probe
//     scans with the summaries of finished ones;
//  4. split-skew before coalescing, which then packs only the partitions
//     skew left whole;
//  5. coalesce-partitions once the shape of the plan is settled;
//  6. fuse-single after it: a stage coalesced to one task runs inside its
//     one reader;
//  7. size-scans, which sizes scan stages (independent of the rest);
//  8. inline-scans, which moves a small broadcast table's scan into its
//     readers, whose task counts (size-scans' among them) it weighs;
//  9. combine-objects: it weighs a finished stage's map objects
//     against the task counts of its readers, which the rules above
//     settle (a reader's tasks after coalescing and skew splitting);
//  10. size-functions last: it sizes each stage's functions from the
//     task inputs every rule above has settled.
func Rules() []Rule {
	return []Rule{
		PropagateEmpty{},
		SelectJoin{},
		Unbroadcast{},
		RuntimeFilter{},
		SplitSkew{},
		CoalescePartitions{},
		FuseSingle{},
		SizeScans{},
		InlineScans{},
		CombineObjects{},
		SizeFunctions{},
	}
}

// Fired is one rule application recorded in a round. A rule whose
// rewrite was discarded (it failed, or its plan did not validate) is
// recorded with Discarded saying why and no Note.
type Fired struct {
	Rule      string `json:"rule"`
	Note      string `json:"note"`
	Discarded string `json:"discarded,omitempty"`
}

// Round is one re-planning round, kept with the job for EXPLAIN ANALYZE.
type Round struct {
	Round int     `json:"round"`
	After []int   `json:"after_stages"` // stages finished when it ran
	Fired []Fired `json:"fired"`
	// Scheduling notes what the driver decided about starting stages
	// since the round before (a probe side held for a runtime filter).
	Scheduling []string `json:"scheduling,omitempty"`
	// Stats are the statistics of the finished stages the rules saw.
	Stats     map[int]*StageStats `json:"stats,omitempty"`
	PlanAfter string              `json:"plan_after"`
}

// Replan runs every rule once, in order, and returns what fired. Each rule
// works on a copy of s; its rewrite replaces s only when the rule returned
// no error and the graph it left passes plan.Graph.Validate. Otherwise the
// rule's rewrite in this round is discarded (logged on s.Log, recorded in
// the returned Fired with Discarded set) and the next rule starts from the
// last valid plan, so one faulty rule costs an optimization, never the
// job. A rule that panics is discarded the same way. s.Graph keeps
// pointing to the same Graph value, whose contents a kept rewrite replaces. Replan returns an
// error only when s itself does not validate on entry.
func Replan(s *State, rules []Rule) ([]Fired, error) {
	if err := s.Graph.Validate(); err != nil {
		return nil, fmt.Errorf("re-planning an invalid plan: %w", err)
	}
	log := s.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var fired []Fired
	for _, r := range rules {
		c, err := s.clone()
		if err != nil {
			return fired, err
		}
		note, err := apply(r, c)
		if err == nil {
			err = c.Graph.Validate()
		}
		if err != nil {
			log.Warn("adaptive rule discarded", "rule", r.Name(), "err", err)
			fired = append(fired, Fired{Rule: r.Name(), Discarded: err.Error()})
			continue
		}
		// The Graph s points to is updated in place: the driver holds
		// that pointer across rounds.
		*s.Graph = *c.Graph
		s.Tasks = c.Tasks
		if note != "" {
			fired = append(fired, Fired{Rule: r.Name(), Note: note})
		}
	}
	return fired, nil
}

// apply runs one rule, turning a panic into an error.
func apply(r Rule, s *State) (note string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("rule panicked: %v", p)
		}
	}()
	return r.Apply(s)
}

// clone deep-copies the parts of s a rule may rewrite: the graph and the
// task plans. Done, Running, Scans and Config are read-only to rules and
// shared.
func (s *State) clone() (*State, error) {
	c := *s
	g, err := s.Graph.Clone()
	if err != nil {
		return nil, err
	}
	c.Graph = g
	c.Tasks = s.Tasks.Clone()
	return &c, nil
}

// InitialGroups assigns one task per partition to every stage that reads
// exchanges, before any statistics are known.
func InitialGroups(g *plan.Graph) map[int][][]int {
	out := map[int][][]int{}
	for _, st := range g.Stages {
		if len(st.Inputs) == 0 {
			continue
		}
		n := 1
		for _, in := range hashInputs(g, st) {
			if c := g.Stage(in).Output.Count; c > n {
				n = c
			}
		}
		groups := make([][]int, n)
		for p := range groups {
			groups[p] = []int{p}
		}
		out[st.ID] = groups
	}
	return out
}

// hashInputs returns the upstream stages of st whose output is hash
// partitioned and read partition by partition (the inputs whose partitions
// are split among st's tasks).
func hashInputs(g *plan.Graph, st *plan.Stage) []int {
	var out []int
	for _, in := range st.Inputs {
		if g.Stage(in).Output.Kind == plan.PartitionHash && !plan.WholeRead(st, in) {
			out = append(out, in)
		}
	}
	return out
}
