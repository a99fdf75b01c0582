package plan

// PartitionKind says how a stage's output rows are spread over partitions.
type PartitionKind string

const (
	// PartitionHash: rows go to partition hash(Keys) % Count.
	PartitionHash PartitionKind = "hash"
	// PartitionSingle: all rows go to partition 0 (Count = 1).
	PartitionSingle PartitionKind = "single"
	// PartitionBroadcast: one partition that every consumer task reads whole.
	PartitionBroadcast PartitionKind = "broadcast"
)

// Partitioning is a stage's output partitioning.
type Partitioning struct {
	Kind  PartitionKind `json:"kind"`
	Keys  []int         `json:"keys,omitempty"` // output columns hashed
	Count int           `json:"count"`
}

// Stage is the part of a plan between exchanges: a fragment whose leaves
// are scans or exchange reads of upstream stages, and the partitioning of
// its output.
type Stage struct {
	ID     int          `json:"id"`
	Root   *Node        `json:"root"`
	Output Partitioning `json:"output"`
	// Inputs are the stages this stage's exchange leaves read.
	Inputs []int `json:"inputs,omitempty"`
	// Summarize lists output columns each task summarizes over the rows
	// it writes (ColumnSummary, reported in its result): the adaptive
	// rule runtime-filter sets it on a join's build side while the stage
	// is pending, to filter the probe side's scan with it.
	Summarize []int `json:"summarize,omitempty"`
	// FilterBuild marks a join's build side the planner cut into a stage
	// of its own for a runtime filter (planner/filter_cut.go): the
	// estimates call it selective, so the probe scans it could prune wait
	// for it (adaptive.State.FilterHolds) even while it still waits for
	// its own inputs.
	FilterBuild bool `json:"filter_build,omitempty"`
}

// Graph is a query's stage graph. The Result stage's single output
// partition is the query's result; Columns are its user-visible names.
type Graph struct {
	Stages  []*Stage `json:"stages"`
	Result  int      `json:"result"`
	Columns []string `json:"columns"`
}

// Stage returns the stage with the given id, or nil.
func (g *Graph) Stage(id int) *Stage {
	for _, s := range g.Stages {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// Consumers returns the ids of stages that read stage id.
func (g *Graph) Consumers(id int) []int {
	var out []int
	for _, s := range g.Stages {
		for _, in := range s.Inputs {
			if in == id {
				out = append(out, s.ID)
			}
		}
	}
	return out
}

// Walk calls f on n and every node below it, parents first.
func Walk(n *Node, f func(*Node)) {
	if n == nil {
		return
	}
	f(n)
	for _, c := range n.Inputs {
		Walk(c, f)
	}
}

// Clone returns a deep copy of the fragment rooted at n, as Graph.Clone.
func (n *Node) Clone() (*Node, error) { return deepCopy(n), nil }

// Clone returns a deep copy of g: nothing reachable from the copy is
// shared with g (TestCloneSharesNothing checks every golden plan). The
// re-planner clones the graph for every rule round, so the copy is a
// structural one (deepcopy.go): a JSON round trip took 6 s of a query
// with a 60,000-value IN list.
func (g *Graph) Clone() (*Graph, error) { return deepCopy(g), nil }
