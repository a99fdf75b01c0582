package plan

// Operators that combine inputs.
const (
	// KindHashJoin joins Inputs[0] (the probe side, "left") with Inputs[1]
	// (the build side, "right", held in memory) on Join.LeftKeys =
	// Join.RightKeys. See Join for the semantics of each type.
	KindHashJoin Kind = "hash_join"
	// KindCrossJoin pairs every row of Inputs[0] with every row of
	// Inputs[1] (the right side is held in memory, or in blocks spilled to
	// disk when it is over the task's budget); Join.Filter, if set,
	// keeps only the pairs where it is true (an inner nested-loop join).
	// Join may be nil (a plain cross product) and has no keys; an empty
	// Join.Type means inner. Exec also accepts the other join types here
	// (a nested-loop join with Filter as the whole join condition).
	KindCrossJoin Kind = "cross_join"
	// KindUnion concatenates its inputs (UNION ALL); all have the node's
	// schema.
	KindUnion Kind = "union"
)

// JoinType is the kind of a join.
type JoinType string

const (
	JoinInner JoinType = "inner"
	// JoinLeft keeps every probe row; unmatched ones get NULL build columns.
	JoinLeft JoinType = "left"
	// JoinRight keeps every build row; unmatched ones get NULL probe columns
	// (emitted after the probe side is exhausted).
	JoinRight JoinType = "right"
	// JoinFull is left and right together.
	JoinFull JoinType = "full"
	// JoinSemi emits each probe row that has at least one match, once.
	// Output: probe columns only.
	JoinSemi JoinType = "semi"
	// JoinAnti emits each probe row that has no match. Output: probe
	// columns only. With NullAware (NOT IN semantics): if the build side
	// has a row whose key is NULL, no probe row is emitted; a probe row
	// whose key is NULL is emitted only when the build side is empty.
	// With several keys, a key is NULL when any of its columns is. These
	// rules look at the whole build side, ignoring Filter: NullAware is
	// meant for uncorrelated NOT IN (a correlated NOT IN needs its
	// correlation handled before, e.g. by filtering the build side).
	JoinAnti JoinType = "anti"
	// JoinRightSemi emits each build row that has at least one match,
	// once, after the probe side is exhausted. Output: build columns only.
	// It is a semi join with its sides swapped: the planner builds the
	// hash table on the preserved side when that side is the smaller one
	// (DuckDB's and DataFusion's RIGHT SEMI), so a big subquery side is
	// streamed through it instead of held.
	JoinRightSemi JoinType = "right_semi"
	// JoinRightAnti emits each build row that has no match, after the
	// probe side is exhausted (a build row with a NULL key never matches).
	// Output: build columns only. Never NullAware.
	JoinRightAnti JoinType = "right_anti"
)

// BuildOnly reports whether a join of type t outputs build columns only
// (right semi and right anti joins).
func (t JoinType) BuildOnly() bool { return t == JoinRightSemi || t == JoinRightAnti }

// Join describes a hash or cross join.
//
// Rows match when every LeftKeys[i] equals RightKeys[i] (SQL equality: a
// NULL key never matches) and Filter, evaluated over the concatenated row
// [probe columns..., build columns...], is true. Filter is part of the
// join condition: for outer joins a row failing it counts as unmatched, for
// semi/anti joins it decides whether a build row is a match.
//
// Output schema: probe columns then build columns for inner, left, right
// and full joins; probe columns only for semi and anti joins.
type Join struct {
	Type      JoinType `json:"type"`
	LeftKeys  []*Expr  `json:"left_keys,omitempty"`
	RightKeys []*Expr  `json:"right_keys,omitempty"`
	Filter    *Expr    `json:"filter,omitempty"`
	NullAware bool     `json:"null_aware,omitempty"`
}

// BroadcastBytes is sluice's one broadcast threshold: a join side up to
// this size is sent whole to every task of the other side instead of being
// shuffled on the join keys. The planner applies it to its estimates
// (planner.Options.BroadcastBytes, flag --plan-broadcast-bytes), the
// re-planner to the real in-memory size of a finished side
// (adaptive.Config.BroadcastBytes, flag --broadcast-bytes); both default
// to it.
const BroadcastBytes = 8 << 20
