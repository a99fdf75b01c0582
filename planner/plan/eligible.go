package plan

// The predicates below decide which rewrites of a distributed plan keep
// its answer. The adaptive rules (planner/adaptive) and the coordinator's
// scheduling ask them rather than repeating the lists of join types and
// operators, so that a new join type or operator is classified once.

// PerProbeRow reports whether a join of type t computes its output probe
// row by probe row, each from the build rows alone: inner, left, semi and
// anti joins. Such a join gives the same rows however its probe side is
// split among tasks, as long as every task sees every build row of its
// probe rows' keys, so it can be broadcast (every task holds the whole
// build side). Right and full joins also emit unmatched build rows, which
// only a task seeing every probe row can know.
func (t JoinType) PerProbeRow() bool {
	switch t {
	case JoinInner, JoinLeft, JoinSemi, JoinAnti:
		return true
	}
	return false
}

// BuildOnlyMarks reports whether a join of type t uses its build rows
// only to mark probe rows, never emitting them: semi and anti joins. A
// build row whose key no probe row has then changes nothing, unless a
// NULL build key changes every probe row's answer (a NOT IN anti join,
// Join.NullAware, which the caller checks): the runtime filter's reverse
// edge filters such a build side by the probe side's keys.
func (t JoinType) BuildOnlyMarks() bool {
	return t == JoinSemi || t == JoinAnti
}

// DropsUnmatchedProbe reports whether a join of type t drops the probe
// rows that match no build row: inner, semi and right joins (a right
// join's probe side is its null-supplying side), and right semi and
// right anti joins, whose probe rows only mark build rows. Probe rows
// whose key is none of the build side's keys may then be filtered out
// before the join, as runtime filters do. Left, full and anti joins emit
// such rows.
func (t JoinType) DropsUnmatchedProbe() bool {
	switch t {
	case JoinInner, JoinSemi, JoinRight, JoinRightSemi, JoinRightAnti:
		return true
	}
	return false
}

// Splittable reports whether j's probe side may be split among tasks each
// holding only part of the build side: the rows of one key must all be in
// the same task (a partitioned join), or the build side whole. That is a
// PerProbeRow join without NOT IN semantics (NullAware looks at the whole
// build side for a NULL key).
func (j *Join) Splittable() bool {
	return j != nil && j.Type.PerProbeRow() && !j.NullAware
}

// RowLocal reports whether the rows of target, a node under root, reach
// root only through row-local operators: filters, projections, partial
// aggregations, and hash joins with target on the probe side of a
// Splittable join. Then root's output over any subset of target's rows is
// the matching subset of its output over all of them, so target's rows
// may be split among tasks (skewed partitions) or repartitioned
// (a broadcast join turned partitioned) without changing the answer.
// Any other operator above target (a final or single aggregation, a sort,
// a limit, a union, a right or full join) needs all of target's rows in
// one task.
func RowLocal(root, target *Node) bool {
	if root == nil {
		return false
	}
	if root == target {
		return true
	}
	switch root.Kind {
	case KindFilter, KindProject:
	case KindAggregate:
		if root.Aggregate == nil || root.Aggregate.Mode != AggPartial {
			return false
		}
	case KindHashJoin:
		return root.Join.Splittable() && len(root.Inputs) == 2 && RowLocal(root.Inputs[0], target)
	default:
		return false
	}
	return len(root.Inputs) == 1 && RowLocal(root.Inputs[0], target)
}

// ExchangeLeaf returns the first exchange leaf under root that reads stage
// id partition by partition (not Whole), or nil.
func ExchangeLeaf(root *Node, id int) *Node {
	var out *Node
	Walk(root, func(n *Node) {
		if out == nil && n.Kind == KindExchange && n.Stage == id && !n.Whole {
			out = n
		}
	})
	return out
}
