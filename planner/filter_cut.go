package planner

import (
	"github.com/sluicedb/sluice/planner/plan"
)

// The runtime-filter cut. The adaptive rule runtime-filter carries a
// join's build keys into the scans of its probe side only across a stage
// boundary: it summarizes the output of the stage that writes the build
// side. A build side that is computed inside the join's own stage (a
// final aggregation with HAVING co-partitioned with its probe side, as
// TPC-H Q18's IN subquery) has no such boundary, so its keys never reach
// the probe scans, which then read, shuffle and join every row.
//
// When the build side is a filtered result (a HAVING or WHERE the
// estimates call selective) at least filterCutRatio times smaller than a
// big scan on the probe side, lowerJoin closes the build side as a stage of its own, hashed as
// it already was (the join stays co-partitioned), at the cost of one small
// shuffle: the re-planner can then hold the probe scans until the build
// keys are known and prune them.

const (
	// filterCutRatio: a scan of the probe side is estimated at least this
	// many times the build side's rows. Low on purpose: without column
	// statistics an aggregate's groups are estimated at its input rows
	// and a HAVING's selectivity is a default guess (TPC-H Q18's
	// build side keeps 57 of 1.5 million orders at SF 1, estimated 1.8
	// million rows against lineitem's 6 million).
	filterCutRatio = 2
	// filterCutSelectivity: the build side's filter is estimated to keep
	// at most this fraction of its input.
	filterCutSelectivity = 0.5
	// DefaultFilterCutBytes: ... and at least this many bytes
	// (Options.FilterCutBytes; the runtime-filter rule's
	// RuntimeFilterProbeBytes default): a small probe scan does not pay
	// for a stage.
	DefaultFilterCutBytes = 64 << 20
)

// filterCut reports whether the build side rf of join n should be cut into
// a stage of its own for a runtime filter: n drops unmatched probe rows
// (inner or semi, not NOT IN), rf is computed in the open fragment (not an
// exchange read), its top (below projections) is a filter estimated to
// keep at most filterCutSelectivity of its input, and the probe
// side holds a scan estimated at least Options.FilterCutBytes and
// filterCutRatio times the build side's rows.
func (l *lowerer) filterCut(n *joinNode, rf *fragment) bool {
	if n.nullAware || (n.typ != plan.JoinInner && n.typ != plan.JoinSemi) || rf.single || rf.root == nil || rf.root.Kind == plan.KindExchange {
		return false
	}
	top := n.right
	for {
		p, ok := top.(*projectNode)
		if !ok {
			break
		}
		top = p.input
	}
	f, ok := top.(*filterNode)
	if !ok || l.est.rows(f) > filterCutSelectivity*l.est.rows(f.input) {
		return false
	}
	minBytes := l.opts.FilterCutBytes
	switch {
	case minBytes < 0:
		return false
	case minBytes == 0:
		minBytes = DefaultFilterCutBytes
	}
	build := l.est.rows(n.right)
	cut := false
	walkLogical(n.left, func(x node) {
		if s, ok := x.(*scanNode); ok && !cut {
			cut = l.est.bytes(s) >= float64(minBytes) && l.est.rows(s) >= filterCutRatio*build
		}
	})
	return cut
}

// cutBuild closes rf as a stage hashed on its current partitioning and
// returns the fragment reading it (partitioned alike).
func (l *lowerer) cutBuild(rf *fragment) *fragment {
	for _, p := range rf.parts {
		var keys []int
		for _, id := range p {
			for i, c := range rf.cols {
				if c == id {
					keys = append(keys, i)
					break
				}
			}
		}
		if len(p) == 0 || len(keys) != len(p) {
			continue
		}
		id := l.closeStage(rf, plan.Partitioning{Kind: plan.PartitionHash, Keys: keys, Count: l.opts.Partitions})
		l.stages[id].FilterBuild = true
		return l.exchange(id, rf.root.Schema, rf.cols, false)
	}
	return rf
}

// walkLogical calls f on n and every node below it.
func walkLogical(n node, f func(node)) {
	f(n)
	for _, c := range n.children() {
		walkLogical(c, f)
	}
}

// selectiveBuildRatio: a partitioned join's build stage is marked
// plan.Stage.FilterBuild when a scan of its probe side is estimated at
// least this many times the build side's rows (and at least
// Options.FilterCutBytes), so that the probe stage waits for its runtime
// filter even while the build stage still waits for its own inputs.
// Higher than filterCutRatio: the wait is paid in latency when the
// estimate is wrong, and no stage is added to make it possible.
const selectiveBuildRatio = 8

// markSelectiveBuild marks the build stage of join j (lowered from n) a
// selective build side (plan.Stage.FilterBuild) when the estimates say
// its rows are few next to a big scan of the probe side, and what the
// stage reads is no measure of what it writes (it filters, joins or
// aggregates): the join drops
// unmatched probe rows (inner, semi, right semi or right anti; not NOT
// IN), its build side is an exchange from a stage of its own (hashed, or
// broadcast into a probe side that reads no table in the join's stage: a
// scan there waits for the broadcast anyway, one in a stage below, as
// under an aggregation, does not), and a scan of its probe side is estimated at least selectiveBuildRatio times the
// build side's rows and Options.FilterCutBytes. (TPC-H Q21: lineitem
// joined to one nation's suppliers and the failed orders is a few tens of
// thousands of rows, which the two full scans of lineitem of its EXISTS
// and NOT EXISTS are semi and anti joined to; held for its keys, those
// scans shuffle the rows of its orders only.)
func (l *lowerer) markSelectiveBuild(n *joinNode, j *plan.Node) {
	if j == nil || j.Kind != plan.KindHashJoin || j.Join == nil || j.Join.NullAware || len(j.Inputs) != 2 {
		return
	}
	if j.Join.Type.DropsUnmatchedProbe() && j.Join.Type != plan.JoinRight {
		buildSide, probeSide := n.right, n.left
		if j.Join.Type.BuildOnly() {
			buildSide, probeSide = n.left, n.right
		}
		l.markSelective(j, j.Inputs[1], buildSide, probeSide)
	}
	// The other way (adaptive.RuntimeFilter's reverse edges): the outer
	// side of a semi or anti join, few rows, filters a big scan of its
	// subquery side (TPC-H Q4: one quarter's orders, and lineitem).
	if j.Join.Type.BuildOnlyMarks() {
		l.markSelective(j, j.Inputs[0], n.left, n.right)
	}
}

// markSelective marks the stage writing src, the exchange that feeds join
// j the side small (of the logical plan), a selective filter source
// (plan.Stage.FilterBuild) when a scan of the other side, big, is
// estimated at least selectiveBuildRatio times small's rows and
// Options.FilterCutBytes, and the stage filters, joins or aggregates.
func (l *lowerer) markSelective(j, src *plan.Node, small, big node) {
	if src.Kind != plan.KindExchange || src.Whole {
		return
	}
	bs := l.stages[src.Stage]
	if bs == nil || bs.FilterBuild {
		return
	}
	switch bs.Output.Kind {
	case plan.PartitionHash:
	case plan.PartitionBroadcast:
		// The other side's scans in the join's own stage wait for a
		// broadcast anyway: only one that reads another stage (an
		// aggregation's, say) can use the mark.
		other := j.Inputs[0]
		if src == j.Inputs[0] {
			other = j.Inputs[1]
		}
		inStage := false
		plan.Walk(other, func(x *plan.Node) { inStage = inStage || x.Kind == plan.KindScan })
		if inStage {
			return
		}
	default:
		return
	}
	reduces := false
	plan.Walk(bs.Root, func(x *plan.Node) {
		reduces = reduces || x.Kind == plan.KindFilter || x.Kind == plan.KindHashJoin || x.Kind == plan.KindAggregate
	})
	if !reduces {
		// A bare scan: what it reads measures what it writes, and the
		// hold weighs that (adaptive.State.FilterHolds).
		return
	}
	minBytes := l.opts.FilterCutBytes
	switch {
	case minBytes < 0:
		return
	case minBytes == 0:
		minBytes = DefaultFilterCutBytes
	}
	rows := l.est.rows(small)
	walkLogical(big, func(x node) {
		if s, ok := x.(*scanNode); ok && !bs.FilterBuild {
			bs.FilterBuild = l.est.bytes(s) >= float64(minBytes) && l.est.rows(s) >= selectiveBuildRatio*rows
		}
	})
}
