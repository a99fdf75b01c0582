package adaptive

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// SizeFunctions picks each pending stage's function size from the sizes
// the platform offers (Config.Sizing.Sizes), for the objective
// Config.Sizing.Optimize.
//
// On Lambda memory buys CPU (one vCPU at 1,769 MiB, in proportion below
// it) and the bill is GB-seconds plus a price per request. A stage whose
// tasks each read a few MiB finishes as fast, and for less, on small
// functions: most of its time is the fixed start and request cost, which
// a big function pays at a higher rate. A stage whose tasks hold a big
// join build or aggregation needs the memory to avoid spilling, and its
// compute-bound time shrinks with the CPU the memory buys.
//
// Trigger: sizes are configured, and a pending stage's task inputs are
// known: a scan stage the driver measured (State.Scans), or a stage whose
// inputs have all finished.
//
// Rewrite: TaskPlan.FunctionMemory, the size of the functions that run the
// stage's tasks, from a model of one task on each size (SizeModel):
//   - the largest task's input B and the memory it needs without spilling,
//     need = SizeModel.MemoryShare × B (the planner sizes a task's input to
//     a quarter of its function's memory);
//   - its duration on size m: Overhead + B / (Rate × cpu(m)) with cpu(m)
//     = min(1, m / VCPUMemory), plus, when need > m, writing and reading
//     back the part that does not fit at SpillRate × cpu(m);
//   - the stage's cost: tasks × (m × duration × $/GB-s + $/request), and
//     its latency: duration × the waves its tasks need on Parallelism
//     slots.
//
// Objectives: "cost" takes the cheapest size; "latency" the fastest, the
// cheaper one of two within 2%; "balanced" the cheapest whose latency is
// within 25% of the fastest. The note gives the choice, its predicted cost
// and time, and those of the configured default size.
//
// Safe because a function's size changes no answer: every operator either
// fits its budget or spills, at any size. The rule only changes how much a
// task pays and how long it takes.
type SizeFunctions struct{}

func (SizeFunctions) Name() string { return "size-functions" }

// Sizing configures SizeFunctions.
type Sizing struct {
	// Sizes are the function sizes the platform offers, in bytes (empty:
	// the rule is off, every task runs on the one configured size).
	Sizes []int64 `json:"sizes,omitempty"`
	// Default is the size a stage runs on when the rule leaves it alone
	// (the coordinator's --function-memory).
	Default int64 `json:"default,omitempty"`
	// Optimize is the objective: "cost", "latency" or "balanced" (the
	// default).
	Optimize string    `json:"optimize,omitempty"`
	Model    SizeModel `json:"model"`
}

// SizeModel is the rule's model of one task on one function size. The
// defaults (DefaultSizeModel) are AWS Lambda's list prices and this
// engine's throughput measured on one core (docs/architecture.md, Scale).
type SizeModel struct {
	// VCPUMemory is the memory that buys one full vCPU (1,769 MiB on
	// Lambda); below it, CPU is proportional to memory. A task runs its
	// operators on one core, so more memory than this buys no speed.
	VCPUMemory int64 `json:"vcpu_memory"`
	// Rate is the input bytes per second one task processes on one vCPU.
	Rate float64 `json:"rate"`
	// SpillRate is the bytes per second a task on one vCPU writes and
	// reads back when it spills.
	SpillRate float64 `json:"spill_rate"`
	// Overhead is the fixed seconds of a task: invocation, plan fetch,
	// commit.
	Overhead float64 `json:"overhead"`
	// MemoryShare: a task needs MemoryShare times its input in memory
	// not to spill.
	MemoryShare float64 `json:"memory_share"`
	// GBSecond and Request are the $ of one GB-second and of one
	// invocation.
	GBSecond float64 `json:"gb_second"`
	Request  float64 `json:"request"`
}

// DefaultSizeModel returns the model's defaults.
func DefaultSizeModel() SizeModel {
	return SizeModel{VCPUMemory: 1769 << 20, Rate: 150e6, SpillRate: 200e6, Overhead: 0.08, MemoryShare: 4,
		GBSecond: 0.0000166667, Request: 0.20 / 1e6}
}

// Objectives SizeFunctions takes.
const (
	OptimizeCost     = "cost"
	OptimizeLatency  = "latency"
	OptimizeBalanced = "balanced"
)

// ParseOptimize checks an objective's name ("" is balanced).
func ParseOptimize(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", OptimizeBalanced:
		return OptimizeBalanced, nil
	case OptimizeCost:
		return OptimizeCost, nil
	case OptimizeLatency:
		return OptimizeLatency, nil
	}
	return "", fmt.Errorf("--optimize %q: want cost, latency or balanced", s)
}

// sizeEstimate is the model's prediction for a stage on one size.
type sizeEstimate struct {
	mem     int64
	dollars float64
	seconds float64 // the stage's latency: waves of its longest task
}

// estimate predicts a stage of tasks tasks, the largest reading bytes,
// on functions of mem bytes with slots slots.
func (m SizeModel) estimate(mem, bytes, tasks int64, slots int) sizeEstimate {
	cpu := math.Min(1, float64(mem)/float64(m.VCPUMemory))
	secs := m.Overhead + float64(bytes)/(m.Rate*cpu)
	if need := m.MemoryShare * float64(bytes); need > float64(mem) {
		// The part of the input beyond what fits is written out and read
		// back once, encoded and compressed on the same CPU.
		over := (need - float64(mem)) / m.MemoryShare
		secs += 2 * over / (m.SpillRate * cpu)
	}
	gb := float64(mem) / (1 << 30)
	waves := int64(1)
	if slots > 0 {
		waves = (tasks + int64(slots) - 1) / int64(slots)
	}
	return sizeEstimate{mem: mem, dollars: float64(tasks) * (gb*secs*m.GBSecond + m.Request), seconds: float64(waves) * secs}
}

// choose picks a size among ests for objective.
func choose(ests []sizeEstimate, objective string) sizeEstimate {
	best := ests[0]
	switch objective {
	case OptimizeCost:
		for _, e := range ests[1:] {
			if e.dollars < best.dollars || (e.dollars == best.dollars && e.seconds < best.seconds) {
				best = e
			}
		}
	case OptimizeLatency:
		for _, e := range ests[1:] {
			if e.seconds < best.seconds*0.98 || (e.seconds <= best.seconds*1.02 && e.dollars < best.dollars) {
				best = e
			}
		}
	default: // balanced
		fastest := ests[0].seconds
		for _, e := range ests[1:] {
			fastest = math.Min(fastest, e.seconds)
		}
		first := true
		for _, e := range ests {
			if e.seconds > fastest*1.25 {
				continue
			}
			if first || e.dollars < best.dollars {
				best, first = e, false
			}
		}
	}
	return best
}

func (SizeFunctions) Apply(s *State) (string, error) {
	z := s.Config.Sizing
	if len(z.Sizes) == 0 {
		return "", nil
	}
	sizes := slices.Clone(z.Sizes)
	slices.Sort(sizes)
	model := z.Model
	if model.Rate <= 0 || model.VCPUMemory <= 0 || model.MemoryShare <= 0 || model.SpillRate <= 0 {
		model = DefaultSizeModel()
	}
	var notes []string
	for _, st := range s.Graph.Stages {
		if !s.Pending(st.ID) {
			continue
		}
		bytes, tasks, ok := s.largestTask(st)
		if !ok || tasks < 1 {
			continue
		}
		ests := make([]sizeEstimate, len(sizes))
		for i, m := range sizes {
			ests[i] = model.estimate(m, bytes, tasks, s.Config.Parallelism)
		}
		pick := choose(ests, z.Optimize)
		if s.Tasks.Of(st.ID).FunctionMemory == pick.mem {
			continue
		}
		s.Tasks.Edit(st.ID).FunctionMemory = pick.mem
		note := fmt.Sprintf("stage %d: %d MiB functions for %d tasks of up to %d bytes (predicted $%.3g, %.2fs",
			st.ID, pick.mem>>20, tasks, bytes, pick.dollars, pick.seconds)
		if z.Default > 0 && z.Default != pick.mem {
			d := model.estimate(z.Default, bytes, tasks, s.Config.Parallelism)
			note += fmt.Sprintf("; at %d MiB $%.3g, %.2fs", z.Default>>20, d.dollars, d.seconds)
		}
		notes = append(notes, note+")")
	}
	return strings.Join(notes, "; "), nil
}

// largestTask returns the input bytes of pending stage st's largest task
// and its task count, when every input is known: a scan stage's table
// bytes per task (as the driver measured them) and, for a stage reading
// finished stages, its partition groups' bytes. Inputs every task reads
// whole (a broadcast) count in full for each task.
func (s *State) largestTask(st *plan.Stage) (bytes, tasks int64, ok bool) {
	if !s.allDone(st.Inputs) { // skew.go
		return 0, 0, false
	}
	var whole int64
	hash := hashInputs(s.Graph, st)
	for _, in := range st.Inputs {
		if !slices.Contains(hash, in) {
			whole += s.Done[in].Bytes
		}
	}
	if scans(st.Root) {
		size, measured := s.Scans[st.ID]
		n, known := s.scanTasks(st.ID) // combine.go
		if !measured || !known || size.Bytes <= 0 {
			return 0, 0, false
		}
		return whole + (size.Bytes+n-1)/n, n, true
	}
	if len(hash) == 0 {
		// Reads its inputs whole: one task (a final merge, a combining
		// stage's readers excepted, which split objects evenly).
		if k := s.Tasks.Of(st.ID).Combine; k > 0 {
			return (whole + int64(k) - 1) / int64(k), int64(k), true
		}
		return whole, 1, true
	}
	tp := s.Tasks.Of(st.ID)
	if tp.Groups == nil {
		return 0, 0, false
	}
	part := func(p int) int64 {
		var b int64
		for _, in := range hash {
			b += s.Done[in].Partition(p).Bytes
		}
		return b
	}
	var most int64
	for _, g := range tp.Groups {
		var b int64
		for _, p := range g {
			b += part(p)
		}
		most = max(most, b)
	}
	for _, t := range tp.Skew {
		// A skew task reads the map outputs [Lo, Hi) of one input's
		// partition, and the other inputs' partition whole.
		b := part(t.Part)
		if ps := s.Done[t.Input].Partition(t.Part); ps.Objects > 0 {
			b += ps.Bytes*int64(t.Hi-t.Lo)/int64(ps.Objects) - ps.Bytes
		}
		most = max(most, b)
	}
	return whole + most, int64(len(tp.Groups) + len(tp.Skew)), true
}
