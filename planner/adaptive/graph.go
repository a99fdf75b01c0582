package adaptive

// ExecutionGraph decides, after every finished stage, what the rest of a
// job's plan becomes. The driver holds one per job and calls Replan after
// each stage; everything else about running the job is the same for both
// kinds.
type ExecutionGraph interface {
	// Name is "adaptive" or "static".
	Name() string
	// Replan rewrites the pending part of s and says what fired.
	Replan(s *State) ([]Fired, error)
	// Adaptive reports whether the graph changes at run time (scheduling
	// policies that only pay off with re-planning, such as letting a probe
	// side wait for its build side, check it).
	Adaptive() bool
}

// Static is the execution graph fixed at submit time: stages, their
// exchanges and one task per partition never change.
type Static struct{}

func (Static) Name() string                   { return "static" }
func (Static) Replan(*State) ([]Fired, error) { return nil, nil }
func (Static) Adaptive() bool                 { return false }

// Adaptive re-plans after every stage with Rules in order.
type Adaptive struct{ Rules []Rule }

func (Adaptive) Name() string                       { return "adaptive" }
func (a Adaptive) Replan(s *State) ([]Fired, error) { return Replan(s, a.Rules) }
func (Adaptive) Adaptive() bool                     { return true }

// NewExecutionGraph returns the adaptive graph with the default rules, or
// the static one.
func NewExecutionGraph(adaptive bool) ExecutionGraph {
	if adaptive {
		return Adaptive{Rules: Rules()}
	}
	return Static{}
}
