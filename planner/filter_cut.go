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
