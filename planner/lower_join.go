package planner

import (
	"fmt"

	"github.com/sluicedb/sluice/planner/plan"
)

// DefaultBroadcastBytes is Options.BroadcastBytes when it is zero: the
// one broadcast threshold, plan.BroadcastBytes.
const DefaultBroadcastBytes = plan.BroadcastBytes

// joinStrategy is how a join's sides meet.
type joinStrategy int

const (
	// broadcast: the build side's stage outputs one partition that every
	// task of the probe side's stage reads whole; the probe side stays in
	// its pipeline.
	broadcastJoin joinStrategy = iota
	// partitioned: both sides are hashed on the join keys with the same
	// partition count, and a new stage joins partition by partition.
	partitionedJoin
)

// lowerJoin lowers a join. Equalities between a left and a right
// expression are the hash keys; the other conditions are the join's
// filter. The strategy:
//
//   - broadcast when the build side is estimated at most BroadcastBytes
//     and the join does not keep unmatched build rows (inner, left, semi,
//     anti): every probe task sees the whole build side, so unmatched build
//     rows could not be told apart between tasks for right and full joins;
//   - broadcast regardless of size for a join without keys (a cross join)
//     and for a null-aware anti join (NOT IN), whose NULL rules need the
//     whole build side in every task;
//   - broadcast when the probe side already sits in one task;
//   - otherwise partitioned: both sides hashed on the keys with the same
//     partition count (and key types, which the binder made equal). A side
//     whose rows are already hash-partitioned on some of the keys (the
//     output of an aggregation or a partitioned join on them) is not
//     shuffled again: the other side is hashed to match it, or, when both
//     already match, they are joined in place.
func (l *lowerer) lowerJoin(n *joinNode) (*fragment, error) {
	lf, err := l.lower(n.left)
	if err != nil {
		return nil, err
	}
	rf, err := l.lower(n.right)
	if err != nil {
		return nil, err
	}
	lcols, rcols := colSet(n.left.output()), colSet(n.right.output())
	var lk, rk, residual []*plan.Expr
	for _, c := range n.conds {
		a, b, nullSafe, ok := keySides(c, lcols, rcols)
		switch {
		case !ok:
			residual = append(residual, c)
		case nullSafe:
			// x IS NOT DISTINCT FROM y: two keys that are never NULL,
			// (x IS NULL, x or a constant when NULL), match exactly when
			// x and y are equal or both NULL.
			lk, rk = append(lk, nullSafeKeys(a)...), append(rk, nullSafeKeys(b)...)
		default:
			lk, rk = append(lk, a), append(rk, b)
		}
	}
	if len(lk) == 0 && n.typ != plan.JoinInner && !n.nullAware {
		// An outer, semi or anti join (a decorrelated EXISTS too) on a
		// condition without an equality between its sides: every pair of
		// rows is a candidate, so it is a hash join on a constant key (one
		// bucket, in one task when it is partitioned) whose residual
		// condition decides, which keeps the join kernel's bookkeeping (NULL
		// padding, unmatched build rows, first match). As a nested loop
		// join it costs the product of the sides.
		lk, rk = []*plan.Expr{intLit(1)}, []*plan.Expr{intLit(1)}
	}
	if len(lk) == 0 && n.typ != plan.JoinInner {
		what := fmt.Sprintf("%s join without an equality condition", n.typ)
		if n.subquery != "" {
			what = fmt.Sprintf("%s subquery without an equality correlation", n.subquery)
		}
		return nil, l.rc.unsupported(n.loc, what)
	}
	keepsBuild := n.typ == plan.JoinRight || n.typ == plan.JoinFull
	strategy := partitionedJoin
	limit := float64(l.opts.BroadcastBytes)
	switch {
	case lf.single, len(lk) == 0, n.nullAware:
		strategy = broadcastJoin
	case !keepsBuild && l.opts.BroadcastBytes > 0 && l.est.bytes(n.right) <= limit:
		strategy = broadcastJoin
	}

	// A side already partitioned on (some of) the keys stays where it is
	// (not for NOT IN: a NULL key must be seen by every probe task).
	lidx, lok := partitionedOn(lf, lk)
	ridx, rok := partitionedOn(rf, rk)
	if n.nullAware {
		lok, rok = false, false
	}
	colocated := lok && rok && equalInts(lidx, ridx)
	if colocated {
		strategy = partitionedJoin
	}
	if rok && strategy == partitionedJoin && l.filterCut(n, rf) {
		// A selective build side computed in this stage becomes a stage
		// of its own, partitioned alike, so that a runtime filter can
		// carry its keys to the probe side's scans (filter_cut.go).
		rf = l.cutBuild(rf)
	}

	var probe, build *plan.Node
	var parts [][]colID
	keepsProbe := n.typ != plan.JoinRight && n.typ != plan.JoinFull
	f := lf
	switch {
	case strategy == broadcastJoin:
		id := l.closeStage(rf, plan.Partitioning{Kind: plan.PartitionBroadcast, Count: 1})
		probe = lf.root
		build = &plan.Node{Kind: plan.KindExchange, Schema: rf.root.Schema, Stage: id}
		f.inputs = append(f.inputs, id)
		if keepsProbe {
			parts = lf.parts
		}
	case colocated:
		// Both sides are partitioned alike on the keys: join in place.
		probe, build = lf.root, rf.root
		f = &fragment{cols: lf.cols, inputs: append(append([]int{}, lf.inputs...), rf.inputs...)}
		parts = joinParts(n.typ, lf.parts, rf.parts)
	case lok:
		// Shuffle the build side to match the probe side's partitioning.
		var rpos []int
		if rf, rpos, err = l.keyColumns(rf, pick(rk, lidx)); err != nil {
			return nil, err
		}
		rid := l.closeStage(rf, plan.Partitioning{Kind: plan.PartitionHash, Keys: rpos, Count: l.opts.Partitions})
		probe = lf.root
		build = &plan.Node{Kind: plan.KindExchange, Schema: rf.root.Schema, Stage: rid}
		f.inputs = append(f.inputs, rid)
		parts = joinParts(n.typ, lf.parts, [][]colID{colsAt(rf.cols, rpos)})
	case rok:
		// Shuffle the probe side to match the build side's partitioning.
		var lpos []int
		if lf, lpos, err = l.keyColumns(lf, pick(lk, ridx)); err != nil {
			return nil, err
		}
		lid := l.closeStage(lf, plan.Partitioning{Kind: plan.PartitionHash, Keys: lpos, Count: l.opts.Partitions})
		probe = &plan.Node{Kind: plan.KindExchange, Schema: lf.root.Schema, Stage: lid}
		build = rf.root
		f = &fragment{cols: lf.cols, inputs: append([]int{lid}, rf.inputs...)}
		parts = joinParts(n.typ, [][]colID{colsAt(lf.cols, lpos)}, rf.parts)
	default:
		var lpos, rpos []int
		if lf, lpos, err = l.keyColumns(lf, lk); err != nil {
			return nil, err
		}
		if rf, rpos, err = l.keyColumns(rf, rk); err != nil {
			return nil, err
		}
		lid := l.closeStage(lf, plan.Partitioning{Kind: plan.PartitionHash, Keys: lpos, Count: l.opts.Partitions})
		rid := l.closeStage(rf, plan.Partitioning{Kind: plan.PartitionHash, Keys: rpos, Count: l.opts.Partitions})
		probe = &plan.Node{Kind: plan.KindExchange, Schema: lf.root.Schema, Stage: lid}
		build = &plan.Node{Kind: plan.KindExchange, Schema: rf.root.Schema, Stage: rid}
		f = &fragment{cols: lf.cols, inputs: []int{lid, rid}}
		parts = joinParts(n.typ, [][]colID{colsAt(lf.cols, lpos)}, [][]colID{colsAt(rf.cols, rpos)})
	}

	j := &plan.Join{Type: n.typ, NullAware: n.nullAware}
	for i := range lk {
		a, err := l.phys(lk[i], lf.cols)
		if err != nil {
			return nil, err
		}
		b, err := l.phys(rk[i], rf.cols)
		if err != nil {
			return nil, err
		}
		j.LeftKeys, j.RightKeys = append(j.LeftKeys, a), append(j.RightKeys, b)
	}
	both := append(append([]colID{}, lf.cols...), rf.cols...)
	if j.Filter, err = l.phys(conjoin(residual), both); err != nil {
		return nil, err
	}
	kind := plan.KindHashJoin
	if len(lk) == 0 {
		kind = plan.KindCrossJoin
	}
	// The output: probe columns, then build columns unless semi/anti; a
	// side padded with NULLs is nullable.
	var schema plan.Schema
	out := append([]colID{}, lf.cols...)
	for _, fd := range probe.Schema {
		fd.Nullable = fd.Nullable || keepsBuild
		schema = append(schema, fd)
	}
	if n.typ != plan.JoinSemi && n.typ != plan.JoinAnti {
		out = append(out, rf.cols...)
		for _, fd := range build.Schema {
			fd.Nullable = fd.Nullable || n.typ == plan.JoinLeft || n.typ == plan.JoinFull
			schema = append(schema, fd)
		}
	}
	f.root = &plan.Node{Kind: kind, Schema: schema, Inputs: []*plan.Node{probe, build}, Join: j}
	if strategy == partitionedJoin && kind == plan.KindHashJoin && !n.nullAware && (n.typ == plan.JoinSemi || n.typ == plan.JoinAnti) &&
		l.est.bytes(n.left)*rightSemiRatio < l.est.bytes(n.right) {
		// The subquery side is much the bigger: the preserved side
		// builds, the subquery side streams through it and marks what it
		// matches (a right semi or right anti join, output the same rows).
		// Only partitioned: a preserved side broadcast to several tasks
		// would be emitted by each.
		rj := *j
		rj.Type = plan.JoinRightSemi
		if n.typ == plan.JoinAnti {
			rj.Type = plan.JoinRightAnti
		}
		rj.LeftKeys, rj.RightKeys = j.RightKeys, j.LeftKeys
		swapped := append(append([]colID{}, rf.cols...), lf.cols...)
		if rj.Filter, err = l.phys(conjoin(residual), swapped); err != nil {
			return nil, err
		}
		f.root = &plan.Node{Kind: kind, Schema: schema, Inputs: []*plan.Node{build, probe}, Join: &rj}
		// a stage lists its inputs in the order its exchanges are read
		f.inputs = f.inputs[:0:0]
		plan.Walk(f.root, func(x *plan.Node) {
			if x.Kind == plan.KindExchange {
				f.inputs = append(f.inputs, x.Stage)
			}
		})
	}
	l.markSelectiveBuild(n, f.root)
	f.cols = out
	f.single = lf.single && strategy == broadcastJoin
	f.parts = parts
	if f.single {
		f.parts = nil
	}
	if want := n.output(); len(want) != len(out) {
		exprs := make([]*plan.Expr, len(want))
		for i, id := range want {
			exprs[i] = l.md.ref(id)
		}
		return l.project(f, exprs, want)
	}
	return f, nil
}

// rightSemiRatio is how many times the estimated bytes of a semi or anti
// join's preserved side its subquery side must have for the preserved
// side to build (plan.JoinRightSemi, plan.JoinRightAnti).
const rightSemiRatio = 4

// nullSafeKeys are the join keys of x in a NULL-safe equality: whether x
// is NULL, and x with NULL replaced by the zero value of its type.
func nullSafeKeys(x *plan.Expr) []*plan.Expr {
	isNull := plan.Call(plan.OpIsNull, plan.BoolType, x)
	return []*plan.Expr{isNull, plan.Call(plan.OpCase, x.Type, isNull, lit(plan.Value{}, x.Type), x)}
}

// keyColumns makes the key expressions columns of f (a projection adds the
// computed ones) and returns their positions, in key order.
func (l *lowerer) keyColumns(f *fragment, keys []*plan.Expr) (*fragment, []int, error) {
	pos := make([]int, len(keys))
	var extra []*plan.Expr
	for i, k := range keys {
		pos[i] = -1
		if k.Op == plan.OpColumn {
			for j, id := range f.cols {
				if id == k.Col {
					pos[i] = j
					break
				}
			}
		}
		if pos[i] < 0 {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return f, pos, nil
	}
	exprs := make([]*plan.Expr, 0, len(f.cols)+len(extra))
	cols := append([]colID{}, f.cols...)
	for _, id := range f.cols {
		exprs = append(exprs, l.md.ref(id))
	}
	for i, k := range keys {
		if pos[i] >= 0 {
			continue
		}
		pos[i] = len(exprs)
		exprs = append(exprs, k)
		cols = append(cols, l.md.add(column{name: exprName(k), typ: k.Type, nullable: true}))
	}
	nf, err := l.project(f, exprs, cols)
	return nf, pos, err
}

// lowerUnion lowers UNION ALL: every input stage writes the union's
// columns (renamed and in order), hashed on all of them with the same
// partition count (or single when every input is single); the union stage
// reads them all.
func (l *lowerer) lowerUnion(n *unionNode) (*fragment, error) {
	var frags []*fragment
	allSingle := true
	for _, in := range n.inputs {
		f, err := l.lower(in)
		if err != nil {
			return nil, err
		}
		frags = append(frags, f)
		allSingle = allSingle && f.single
	}
	schema := l.schema(n.cols)
	out := single
	if !allSingle {
		out = plan.Partitioning{Kind: plan.PartitionHash, Count: l.opts.Partitions}
		for i := range n.cols {
			out.Keys = append(out.Keys, i)
		}
	}
	u := &plan.Node{Kind: plan.KindUnion, Schema: schema}
	nf := &fragment{cols: n.cols, single: allSingle}
	for i, f := range frags {
		exprs := make([]*plan.Expr, len(n.cols))
		for k, id := range n.inCols[i] {
			e, err := l.phys(l.md.ref(id), f.cols)
			if err != nil {
				return nil, err
			}
			exprs[k] = e
		}
		f.root = &plan.Node{Kind: plan.KindProject, Schema: schema, Inputs: []*plan.Node{f.root}, Exprs: exprs}
		f.cols = n.cols
		id := l.closeStage(f, out)
		u.Inputs = append(u.Inputs, &plan.Node{Kind: plan.KindExchange, Schema: schema, Stage: id})
		nf.inputs = append(nf.inputs, id)
	}
	nf.root = u
	return nf, nil
}

// joinParts are the partitionings of a join's output, given those of its
// sides: a side's hold for the rows it contributes, so for every row only
// when the join never pads that side with NULLs.
func joinParts(t plan.JoinType, left, right [][]colID) [][]colID {
	var out [][]colID
	if t != plan.JoinRight && t != plan.JoinFull {
		out = append(out, left...)
	}
	if t == plan.JoinInner || t == plan.JoinRight {
		out = append(out, right...)
	}
	return out
}

func pick(keys []*plan.Expr, idx []int) []*plan.Expr {
	out := make([]*plan.Expr, len(idx))
	for i, j := range idx {
		out[i] = keys[j]
	}
	return out
}

func colsAt(cols []colID, pos []int) []colID {
	out := make([]colID, len(pos))
	for i, p := range pos {
		out[i] = cols[p]
	}
	return out
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
