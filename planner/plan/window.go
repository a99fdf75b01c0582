package plan

// KindWindow evaluates window functions: its output is its input's columns
// followed by one column per WindowCall. The rows of one window partition
// (equal PartitionBy values) must all be in the task: the planner puts a
// hash exchange on the partition keys (a single partition without keys)
// below it, and the adaptive rules never split such an input.
const KindWindow Kind = "window"

// WindowFunc is a window function: a ranking or offset function, or an
// aggregate function evaluated over each row's frame (those of the
// aggregate library, function/exec, with a Frame evaluator: sum, count,
// count_star, avg, min, max).
type WindowFunc string

const (
	WinRowNumber   WindowFunc = "row_number"
	WinRank        WindowFunc = "rank"
	WinDenseRank   WindowFunc = "dense_rank"
	WinPercentRank WindowFunc = "percent_rank"
	WinCumeDist    WindowFunc = "cume_dist"
	WinNtile       WindowFunc = "ntile"       // Args: [buckets int64]
	WinLag         WindowFunc = "lag"         // Args: [value, offset int64, default]
	WinLead        WindowFunc = "lead"        // Args: [value, offset int64, default]
	WinFirstValue  WindowFunc = "first_value" // Args: [value]
	WinLastValue   WindowFunc = "last_value"  // Args: [value]
	WinNthValue    WindowFunc = "nth_value"   // Args: [value, n int64 (constant)]
)

// IsAggregate reports whether f is an aggregate evaluated over frames:
// any function but the ranking and offset ones above (which aggregates
// have a frame form is the aggregate library's to say).
func (f WindowFunc) IsAggregate() bool {
	switch f {
	case WinRowNumber, WinRank, WinDenseRank, WinPercentRank, WinCumeDist, WinNtile,
		WinLag, WinLead, WinFirstValue, WinLastValue, WinNthValue:
		return false
	}
	return f != ""
}

// UsesFrame reports whether f's value depends on the frame (aggregates and
// first/last/nth_value); the others see the whole partition.
func (f WindowFunc) UsesFrame() bool {
	return f.IsAggregate() || f == WinFirstValue || f == WinLastValue || f == WinNthValue
}

// FrameMode is how a frame's offsets count: in rows, in values of the
// single ORDER BY key (peers, rows with equal keys, are always together),
// or in peer groups.
type FrameMode string

const (
	FrameRows   FrameMode = "rows"
	FrameRange  FrameMode = "range"
	FrameGroups FrameMode = "groups"
)

// FrameExclude is what a frame leaves out of the rows its bounds span:
// nothing (""), the current row, its peer group, or its peers but itself.
type FrameExclude string

const (
	ExcludeNoOthers   FrameExclude = ""
	ExcludeCurrentRow FrameExclude = "current_row"
	ExcludeGroup      FrameExclude = "group"
	ExcludeTies       FrameExclude = "ties"
)

// BoundKind is one end of a frame.
type BoundKind string

const (
	BoundUnboundedPreceding BoundKind = "unbounded_preceding"
	BoundPreceding          BoundKind = "preceding" // Offset rows / values before
	BoundCurrentRow         BoundKind = "current_row"
	BoundFollowing          BoundKind = "following" // Offset rows / values after
	BoundUnboundedFollowing BoundKind = "unbounded_following"
)

// FrameBound is a frame's start or end. Offset is a row count (ROWS) or a
// distance in the ORDER BY key's value (RANGE; for a decimal key in its
// unscaled units' real value, for a date in days).
type FrameBound struct {
	Kind   BoundKind `json:"kind"`
	Offset float64   `json:"offset,omitempty"`
}

// Frame is the set of rows around each row an aggregate or first/last/
// nth_value sees: SQL's default is RANGE BETWEEN UNBOUNDED PRECEDING AND
// CURRENT ROW with an ORDER BY, the whole partition without one.
type Frame struct {
	Mode    FrameMode    `json:"mode"`
	Start   FrameBound   `json:"start"`
	End     FrameBound   `json:"end"`
	Exclude FrameExclude `json:"exclude,omitempty"`
}

// WindowCall is one window function over the node's partitions and order.
// Type is its result type: int64 for the ranks, row_number, ntile and
// count; float64 for percent_rank, cume_dist and avg; sum as AggCall;
// the value's type for min, max and the offset functions.
type WindowCall struct {
	Func  WindowFunc `json:"func"`
	Args  []*Expr    `json:"args,omitempty"`
	Type  DataType   `json:"type"`
	Frame Frame      `json:"frame"`
	Name  string     `json:"name,omitempty"`
	// Distinct makes count/sum/avg take each value of the frame once; the
	// planner allows it only over whole-partition frames.
	Distinct bool `json:"distinct,omitempty"`
}

// Window is a KindWindow node's work: every call shares the partitioning
// and the order (the planner stacks one node per distinct pair).
type Window struct {
	PartitionBy []*Expr      `json:"partition_by,omitempty"`
	OrderBy     []SortKey    `json:"order_by,omitempty"`
	Calls       []WindowCall `json:"calls"`
}
