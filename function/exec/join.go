package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// joinOp is a hash join (KindHashJoin) or a nested-loop join
// (KindCrossJoin, the same operator with no keys: every build row is a
// candidate for every probe row).
//
// Build: Inputs[1] is drained and held (its batches as received, counted
// against the fragment's memory limit). Its keys go into a groupTable (one
// group per distinct key); the rows of every group whose key has no NULL
// are laid out contiguously by group (CSR: start[g]..start[g+1] index
// rowB/rowR, the batch and row of each build row). Rows with a NULL key are
// never chained, so they never match; right and full joins keep them after
// the chained rows to emit them as unmatched.
//
// Probe: every batch of Inputs[0] looks its keys up in the table (typed,
// vectorized) and expands the candidate pairs (probe row, build position)
// in chunks of at most BatchRows pairs. With a Filter, a chunk's pairs are
// gathered into a batch of the columns the filter reads, the filter is
// evaluated, and only the pairs where it is TRUE count as matches. Output
// rows are queued as (probe row or -1, build position or -1) and gathered
// into batches of at most BatchRows rows with typed take kernels; -1 yields
// NULL columns. Right and full joins mark matched build rows in a bitmap
// and, once the probe side is exhausted, emit the unmatched ones with NULL
// probe columns.
type joinOp struct {
	label  string // "hash join (inner)", for errors
	probe  Operator
	build  Operator
	jt     plan.JoinType
	lkeys  []*plan.Expr
	rkeys  []*plan.Expr
	filter *plan.Expr
	fcache ExprCache // the filter's
	// nullAware: NOT IN semantics of an anti join
	nullAware bool
	schema    *arrow.Schema
	opts      Options
	res       *reservation

	// spilled joins: grace hash join (join_spill.go), block nested-loop
	// join (join_block.go)
	kindName string
	node     *plan.Node
	spec     plan.Join
	level    int
	spilled  spilledJoin
	blk      *blockPass // this join is one pass of a block nested-loop join

	nProbeCols int
	nBuildCols int
	outBuild   bool   // output has build columns (not semi/anti)
	buildOnly  bool   // output has build columns only (right semi/anti)
	groupDone  []bool // right semi/anti without a filter: the group's rows are marked
	filterRefs []bool
	keyKinds   []kind
	neverMatch bool // a key is NULL-typed: nothing can match
	// constKeys: every key on both sides is a non-NULL literal (the
	// planner's constant key of a non-equi outer, semi or anti join): one
	// bucket, a nested-loop join that hashing cannot split
	constKeys bool

	// bloomOffered: the probe scan took a Bloom filter of the build keys
	// (offerBloom)
	bloomOffered bool
	// rangeOffered: the probe scan took the range of the build keys
	rangeOffered bool

	// build side
	built        bool
	buildClosed  bool
	table        *groupTable
	batches      []arrow.RecordBatch
	buildSrcs    [][]arrow.Array // per build column, the column of every batch
	start        []int32         // per group: first chained position (len groups+1)
	rowB, rowR   []int32         // per build position: batch and row
	nChained     int
	buildRows    int
	buildNullKey bool     // some build row has a NULL key
	matched      []uint64 // right/full: bitmap over chained positions
	held         int64

	// current probe batch
	cur      arrow.RecordBatch
	curN     int
	gids     []uint32 // per probe row: group or noGroup
	probeNul []bool   // per probe row: a key is NULL (null-aware anti)
	row, off int      // expansion cursor: probe row, offset in its chain
	expanded bool     // every candidate pair of cur was considered
	tailDone bool     // cur's unmatched / semi / anti rows were queued
	pmatch   []bool   // per probe row: has a match

	// output queue
	outP, outB []int32
	qpos       int

	probeDone bool
	tailPos   int // right/full: next build position to consider
	closed    bool

	// skip: output columns no consumer reads (skipcols.go), filled from
	// nulls instead of gathered
	skip  []bool
	nulls []nullFill

	// scratch
	candP, candB []int32
	bi, ri       []int32
	sel          []int32
	nullScratch  []bool
}

// NewHashJoin joins in probe (n.Inputs[0]) and build (n.Inputs[1]) per
// n.Join (KindHashJoin). See joinOp for the algorithm.
func NewHashJoin(probe, build Operator, n *plan.Node, opts Options) (Operator, error) {
	if n.Join == nil {
		return nil, fmt.Errorf("exec: hash join: node has no join description")
	}
	if len(n.Join.LeftKeys) != len(n.Join.RightKeys) {
		return nil, fmt.Errorf("exec: hash join: %d left keys, %d right keys", len(n.Join.LeftKeys), len(n.Join.RightKeys))
	}
	return newJoin("hash join", probe, build, n, *n.Join, opts)
}

// NewCrossJoin pairs every row of left (n.Inputs[0]) with every row of right
// (n.Inputs[1], held in memory, or spilled in blocks over the budget:
// join_block.go), keeping the pairs where n.Join.Filter (if
// any) is TRUE. n.Join may be nil (a plain cross product); its Type, when
// set, may be any join type (a nested-loop join with the filter as the
// join condition), and its keys, if any, are ignored.
func NewCrossJoin(left, right Operator, n *plan.Node, opts Options) (Operator, error) {
	j := plan.Join{Type: plan.JoinInner}
	if n.Join != nil {
		j = *n.Join
		if len(j.LeftKeys) > 0 || len(j.RightKeys) > 0 {
			return nil, fmt.Errorf("exec: cross join: has join keys (a hash join was meant)")
		}
	}
	return newJoin("cross join", left, right, n, j, opts)
}

func newJoin(kindName string, probe, build Operator, n *plan.Node, j plan.Join, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	if j.Type == "" {
		j.Type = plan.JoinInner
	}
	label := fmt.Sprintf("%s (%s)", kindName, j.Type)
	op := &joinOp{label: label, probe: probe, build: build, jt: j.Type, lkeys: j.LeftKeys, rkeys: j.RightKeys,
		filter: j.Filter, nullAware: j.NullAware, schema: n.Schema.Arrow(), opts: opts,
		nProbeCols: probe.Schema().NumFields(), nBuildCols: build.Schema().NumFields(),
		kindName: kindName, node: n, spec: j}
	switch j.Type {
	case plan.JoinInner, plan.JoinLeft, plan.JoinRight, plan.JoinFull:
		op.outBuild = true
	case plan.JoinSemi, plan.JoinAnti:
	case plan.JoinRightSemi, plan.JoinRightAnti:
		op.outBuild, op.buildOnly = true, true
	default:
		return nil, fmt.Errorf("exec: %s: unknown join type %q", kindName, j.Type)
	}
	if op.buildOnly && j.NullAware {
		return nil, fmt.Errorf("exec: %s: null-aware is only defined for anti joins", label)
	}
	if j.NullAware && j.Type != plan.JoinAnti {
		return nil, fmt.Errorf("exec: %s: null-aware is only defined for anti joins", label)
	}
	want := op.probeOut()
	if op.outBuild {
		want += op.nBuildCols
	}
	if len(n.Schema) != want {
		return nil, fmt.Errorf("exec: %s: output schema has %d columns, inputs give %d", label, len(n.Schema), want)
	}
	for i := range j.LeftKeys {
		lt, rt := j.LeftKeys[i].Type, j.RightKeys[i].Type
		if lt.ID == plan.Null || rt.ID == plan.Null {
			op.neverMatch = true
		} else if lt.ID != rt.ID || (lt.ID == plan.Decimal && lt.Scale != rt.Scale) || (lt.IsNested() && !sameType(lt, rt)) {
			return nil, fmt.Errorf("exec: %s: key %d compares %s with %s", label, i, lt, rt)
		}
		op.keyKinds = append(op.keyKinds, kindOfType(rt))
	}
	op.constKeys = len(j.LeftKeys) > 0 && allLiterals(j.LeftKeys) && allLiterals(j.RightKeys)
	if j.Filter != nil {
		op.filterRefs = make([]bool, op.nProbeCols+op.nBuildCols)
		for _, c := range j.Filter.Columns() {
			if c < 0 || c >= len(op.filterRefs) {
				return nil, fmt.Errorf("exec: %s: filter reads column %d of %d", label, c, len(op.filterRefs))
			}
			op.filterRefs[c] = true
		}
	}
	side := "build side"
	if kindName == "cross join" {
		side = "right side"
	}
	op.res = opts.Pool.reserve(label + " " + side)
	return op, nil
}

func (j *joinOp) Schema() *arrow.Schema { return j.schema }

// SkipColumns fills the output columns of unread no consumer reads with
// NULLs, and passes on to each input those its keys and the join filter do
// not read either.
func (j *joinOp) SkipColumns(unread []bool) {
	j.skip = unread
	j.nulls = make([]nullFill, len(unread))
	var probeRead, buildRead []*plan.Expr
	probeRead = append(probeRead, j.lkeys...)
	buildRead = append(buildRead, j.rkeys...)
	probeSkip := unread[:min(j.nProbeCols, len(unread))]
	if j.buildOnly {
		// no probe column is output: the probe side passes on only what
		// the keys and the filter read
		probeSkip = make([]bool, j.nProbeCols)
		for i := range probeSkip {
			probeSkip[i] = true
		}
	}
	buildSkip := make([]bool, j.nBuildCols)
	if j.outBuild && len(unread) >= j.probeOut()+j.nBuildCols {
		copy(buildSkip, unread[j.probeOut():])
	}
	if j.filter != nil {
		// the filter reads probe columns 0..nProbeCols-1 and build columns
		// after them
		probeSkip = append([]bool(nil), probeSkip...)
		for c, ref := range j.filterRefs {
			switch {
			case !ref:
			case c < j.nProbeCols:
				probeSkip[c] = false
			default:
				buildSkip[c-j.nProbeCols] = false
			}
		}
	}
	passUnread(j.probe, probeSkip, probeRead...)
	if j.outBuild {
		passUnread(j.build, buildSkip, buildRead...)
	}
}

// skipped reports whether output column c is filled with NULLs.
func (j *joinOp) skipped(c int) bool { return c < len(j.skip) && j.skip[c] }

func (j *joinOp) Close() error {
	if !j.closed {
		j.closed = true
		j.releaseBuild()
		if j.cur != nil {
			j.cur.Release()
			j.cur = nil
		}
		j.res.release()
		if j.spilled != nil {
			j.spilled.close()
		}
		for i := range j.nulls {
			j.nulls[i].release()
		}
	}
	err := j.probe.Close()
	if !j.buildClosed {
		j.buildClosed = true
		if e := j.build.Close(); err == nil {
			err = e
		}
	}
	return err
}

func (j *joinOp) releaseBuild() {
	for _, b := range j.batches {
		b.Release()
	}
	j.batches, j.buildSrcs, j.table = nil, nil, nil
	j.start, j.rowB, j.rowR, j.matched = nil, nil, nil, nil
}

func (j *joinOp) outerBuild() bool { return j.jt == plan.JoinRight || j.jt == plan.JoinFull }

// tracksBuild reports whether the join marks the build rows that matched
// and emits build rows by it after the probe side: right and full joins
// (unmatched rows), right semi (matched) and right anti (unmatched).
func (j *joinOp) tracksBuild() bool { return j.outerBuild() || j.buildOnly }

// probeOut is the number of probe columns in the output (none for right
// semi and right anti joins).
func (j *joinOp) probeOut() int {
	if j.buildOnly {
		return 0
	}
	return j.nProbeCols
}
func (j *joinOp) outerProbe() bool { return j.jt == plan.JoinLeft || j.jt == plan.JoinFull }

// ---- build ------------------------------------------------------------------

// anyNullKey sets out[i] when a key of row i is NULL; it reports whether
// any row has one.
func anyNullKey(keys []arrow.Array, out []bool) bool {
	clear(out)
	any := false
	for _, k := range keys {
		if k.DataType().ID() == arrow.NULL {
			for i := range out {
				out[i] = true
			}
			return len(out) > 0
		}
		vb, voff := validityOf(k)
		if vb == nil {
			continue
		}
		for i := range out {
			if !bit(vb, voff+i) {
				out[i], any = true, true
			}
		}
	}
	return any
}

func (j *joinOp) evalKeys(exprs []*plan.Expr, rec arrow.RecordBatch, side string) ([]arrow.Array, error) {
	keys := make([]arrow.Array, len(exprs))
	for i, e := range exprs {
		k, err := Eval(e, rec, j.opts.Mem)
		if err != nil {
			releaseAll(keys)
			return nil, fmt.Errorf("exec: %s: %s key %d: %w", j.label, side, i, err)
		}
		keys[i] = k
		if kk := layoutOf(k); !j.neverMatch && kk != j.keyKinds[i] && kk != kNull {
			releaseAll(keys)
			return nil, fmt.Errorf("exec: %s: %s key %d has type %s, plan says %s", j.label, side, i, k.DataType(), e.Type)
		}
	}
	return keys, nil
}

func (j *joinOp) account() error {
	n := j.held + int64(cap(j.start)+cap(j.rowB)+cap(j.rowR))*4 + int64(cap(j.matched))*8
	if j.table != nil {
		n += j.table.bytes()
	}
	return j.res.set(n)
}

// buildSide drains the build input into the hash table.
func (j *joinOp) buildSide(ctx context.Context) error {
	nkeys := len(j.rkeys)
	if nkeys > 0 && !j.neverMatch {
		j.table = newGroupTable(j.keyKinds)
	}
	var rowGid []uint32 // per build row (global order): group, or noGroup for a NULL key
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := j.build.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		n := int(rec.NumRows())
		if n == 0 {
			rec.Release()
			continue
		}
		if int64(j.buildRows)+int64(n) > 1<<31-1 {
			rec.Release()
			return fmt.Errorf("exec: %s: build side exceeds 2^31 rows", j.label)
		}
		j.batches = append(j.batches, rec)
		j.held += bytesOf(rec)
		j.buildRows += n
		switch {
		case nkeys == 0:
			// cross join: every row is chained into group 0
		case j.neverMatch:
			j.buildNullKey = true
		default:
			keys, err := j.evalKeys(j.rkeys, rec, "build")
			if err != nil {
				return err
			}
			gids, err := j.table.insert(keys, n)
			if err != nil {
				releaseAll(keys)
				return fmt.Errorf("exec: %s: %w", j.label, err)
			}
			base := len(rowGid)
			rowGid = append(rowGid, gids...)
			j.nullScratch = growTo(j.nullScratch[:0], n)
			if anyNullKey(keys, j.nullScratch) {
				j.buildNullKey = true
				for i, isNull := range j.nullScratch {
					if isNull {
						rowGid[base+i] = noGroup
					}
				}
			}
			releaseAll(keys)
		}
		// with the layout (rowB, rowR) it will need once the side is in
		need := j.held + int64(cap(rowGid))*4 + tableBytes(j.table) + int64(j.buildRows)*8
		if j.canGrace() && j.res.spill(need) {
			return j.startGrace(ctx)
		}
		if j.canBlock() && j.res.spill(need) {
			return j.startBlocks(ctx)
		}
		if err := j.res.set(need); err != nil {
			return err
		}
	}
	if !j.buildClosed {
		j.buildClosed = true
		if err := j.build.Close(); err != nil {
			return err
		}
	}
	j.buildSrcs = make([][]arrow.Array, j.nBuildCols)
	for c := range j.buildSrcs {
		for _, b := range j.batches {
			if c >= int(b.NumCols()) {
				return fmt.Errorf("exec: %s: build batch has %d columns, schema %d", j.label, b.NumCols(), j.nBuildCols)
			}
			j.buildSrcs[c] = append(j.buildSrcs[c], b.Column(c))
		}
	}
	j.layout(rowGid)
	return j.account()
}

func tableBytes(t *groupTable) int64 {
	if t == nil {
		return 0
	}
	return t.bytes()
}

// layout orders the build rows by group (CSR), non-NULL keys first.
func (j *joinOp) layout(rowGid []uint32) {
	nkeys := len(j.rkeys)
	total := j.buildRows
	keepNull := j.tracksBuild()
	switch {
	case nkeys == 0:
		j.start = []int32{0, int32(total)}
		j.nChained = total
	case j.neverMatch:
		j.start = []int32{0}
		j.nChained = 0
	default:
		ng := j.table.ngroups
		j.start = make([]int32, ng+1)
		for _, g := range rowGid {
			if g != noGroup {
				j.start[g+1]++
			}
		}
		for g := 0; g < ng; g++ {
			j.start[g+1] += j.start[g]
		}
		j.nChained = int(j.start[ng])
	}
	size := j.nChained
	if keepNull {
		size = total
	}
	j.rowB = make([]int32, size)
	j.rowR = make([]int32, size)
	if nkeys == 0 || j.neverMatch {
		if size > 0 {
			p := 0
			for b, rec := range j.batches {
				for r := 0; r < int(rec.NumRows()); r++ {
					j.rowB[p], j.rowR[p] = int32(b), int32(r)
					p++
				}
			}
		}
	} else {
		fill := make([]int32, len(j.start)-1)
		copy(fill, j.start)
		nullPos := j.nChained
		k := 0
		for b, rec := range j.batches {
			for r := 0; r < int(rec.NumRows()); r++ {
				g := rowGid[k]
				k++
				if g == noGroup {
					if keepNull {
						j.rowB[nullPos], j.rowR[nullPos] = int32(b), int32(r)
						nullPos++
					}
					continue
				}
				p := fill[g]
				fill[g]++
				j.rowB[p], j.rowR[p] = int32(b), int32(r)
			}
		}
	}
	if keepNull {
		j.matched = make([]uint64, (j.nChained+63)/64)
	}
}

// ---- probe ------------------------------------------------------------------

func (j *joinOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if j.closed {
		return nil, io.EOF
	}
	if !j.built {
		if err := j.buildSide(ctx); err != nil {
			return nil, err
		}
		j.built = true
		if j.spilled != nil {
			j.probeDone = true
		}
		if j.buildRows == 0 && (j.jt == plan.JoinInner || j.jt == plan.JoinSemi || j.jt == plan.JoinRight || j.buildOnly) {
			j.probeDone = true // nothing can match: the probe side is not read
		}
		if j.nullAware && j.buildNullKey {
			j.probeDone = true // x NOT IN (..., NULL, ...) is never TRUE
		}
		if !j.probeDone {
			j.offerBloom()
		}
	}
	if j.spilled != nil {
		return j.spilled.nextBatch(ctx)
	}
	limit := j.opts.BatchRows
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pending := len(j.outP) - j.qpos
		if pending >= limit {
			return j.emit(limit)
		}
		if j.cur != nil {
			if !j.expanded {
				if err := j.expand(limit - pending); err != nil {
					return nil, err
				}
				continue
			}
			if !j.tailDone {
				j.queueProbeTail()
				j.tailDone = true
				continue
			}
			if pending > 0 {
				return j.emit(pending)
			}
			j.cur.Release()
			j.cur = nil
			continue
		}
		if !j.probeDone {
			rec, err := j.probe.Next(ctx)
			if err == io.EOF {
				j.probeDone = true
				continue
			}
			if err != nil {
				return nil, err
			}
			if err := j.startBatch(rec); err != nil {
				return nil, err
			}
			continue
		}
		if j.tracksBuild() && j.tailPos < len(j.rowB) {
			j.queueBuildTail(limit - pending)
			continue
		}
		if pending > 0 {
			return j.emit(pending)
		}
		j.releaseBuild()
		j.res.release()
		return nil, io.EOF
	}
}

// startBatch makes rec the current probe batch and looks its keys up.
func (j *joinOp) startBatch(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	if n == 0 {
		rec.Release()
		return nil
	}
	j.cur, j.curN = rec, n
	j.row, j.off, j.expanded, j.tailDone = 0, 0, false, false
	j.outP, j.outB, j.qpos = j.outP[:0], j.outB[:0], 0
	j.pmatch = growTo(j.pmatch[:0], n)
	clear(j.pmatch)
	j.gids = growTo(j.gids[:0], n)
	switch {
	case j.buildRows == 0 || j.neverMatch:
		for i := range j.gids {
			j.gids[i] = noGroup
		}
	case len(j.lkeys) == 0:
		clear(j.gids) // group 0 holds every build row
	default:
		keys, err := j.evalKeys(j.lkeys, rec, "probe")
		if err != nil {
			return err
		}
		gids, err := j.table.lookup(keys, n)
		if err != nil {
			releaseAll(keys)
			return fmt.Errorf("exec: %s: %w", j.label, err)
		}
		copy(j.gids, gids)
		if j.nullAware {
			j.probeNul = growTo(j.probeNul[:0], n)
			anyNullKey(keys, j.probeNul)
		}
		releaseAll(keys)
	}
	if j.filter == nil && j.buildOnly {
		// right semi / anti without a filter: every row of a probe row's
		// group matches; a group is marked once
		if j.groupDone == nil {
			j.groupDone = make([]bool, len(j.start)-1)
		}
		for _, g := range j.gids {
			if g == noGroup || j.groupDone[g] {
				continue
			}
			j.groupDone[g] = true
			for p := j.start[g]; p < j.start[g+1]; p++ {
				j.matched[p>>6] |= 1 << (uint(p) & 63)
			}
		}
		j.expanded = true
	}
	if j.filter == nil && !j.outBuild {
		// semi / anti without a filter: a non-empty chain is a match
		for i, g := range j.gids {
			j.pmatch[i] = g != noGroup && j.start[g+1] > j.start[g]
		}
		j.expanded = true
	}
	if j.blk != nil {
		j.blk.startBatch(j.pmatch[:n])
	}
	return nil
}

// expand considers the next candidate pairs of the current probe batch: at
// most room pairs without a filter (they go straight to the output queue),
// at most BatchRows with one (the filter picks the matches).
func (j *joinOp) expand(room int) error {
	if j.filter != nil {
		room = j.opts.BatchRows
	}
	skipMatched := !j.outBuild // semi/anti: one match decides
	candP, candB := j.candP[:0], j.candB[:0]
	start := j.start
	for j.row < j.curN && len(candP) < room {
		g := j.gids[j.row]
		if g == noGroup || (skipMatched && j.pmatch[j.row]) {
			j.row++
			j.off = 0
			continue
		}
		s, e := int(start[g])+j.off, int(start[g+1])
		k := min(e-s, room-len(candP))
		for p := s; p < s+k; p++ {
			candP = append(candP, int32(j.row))
			candB = append(candB, int32(p))
		}
		j.off += k
		if s+k >= e {
			j.row++
			j.off = 0
		}
	}
	if j.row >= j.curN {
		j.expanded = true
	}
	j.candP, j.candB = candP, candB
	if len(candP) == 0 {
		return nil
	}
	if j.filter != nil {
		var err error
		candP, candB, err = j.applyFilter(candP, candB)
		if err != nil {
			return err
		}
	}
	for _, p := range candP {
		j.pmatch[p] = true
	}
	if j.tracksBuild() {
		for _, b := range candB {
			j.matched[b>>6] |= 1 << (uint(b) & 63)
		}
	}
	if j.outBuild && !j.buildOnly {
		j.outP = append(j.outP, candP...)
		j.outB = append(j.outB, candB...)
	}
	return nil
}

// applyFilter keeps the candidate pairs where the join filter is TRUE
// (compacting candP/candB in place).
func (j *joinOp) applyFilter(candP, candB []int32) ([]int32, []int32, error) {
	n := len(candP)
	mem := j.opts.Mem
	cols := make([]arrow.Array, j.nProbeCols+j.nBuildCols)
	fields := make([]arrow.Field, len(cols))
	defer releaseAll(cols)
	j.setBuildIndex(candB)
	for c, ref := range j.filterRefs {
		var a arrow.Array
		var err error
		switch {
		case !ref:
			a = array.NewNull(n)
		case c < j.nProbeCols:
			a, err = take(mem, j.cur.Column(c), candP)
		default:
			bc := c - j.nProbeCols
			a, err = takeMulti(mem, j.buildSrcs[bc][0].DataType(), j.buildSrcs[bc], j.bi, j.ri)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("exec: %s: filter input column %d: %w", j.label, c, err)
		}
		cols[c] = a
		fields[c] = arrow.Field{Name: fmt.Sprint("c", c), Type: a.DataType(), Nullable: true}
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n))
	mask, err := EvalCached(j.filter, rec, mem, &j.fcache)
	rec.Release()
	if err != nil {
		return nil, nil, fmt.Errorf("exec: %s: filter: %w", j.label, err)
	}
	j.sel, err = selectRows(mask, j.sel[:0])
	mask.Release()
	if err != nil {
		return nil, nil, fmt.Errorf("exec: %s: filter: %w", j.label, err)
	}
	for k, i := range j.sel {
		candP[k], candB[k] = candP[i], candB[i]
	}
	return candP[:len(j.sel)], candB[:len(j.sel)], nil
}

// setBuildIndex fills j.bi/j.ri with the batch and row of build positions
// (-1: NULL).
func (j *joinOp) setBuildIndex(pos []int32) {
	j.bi = growTo(j.bi[:0], len(pos))
	j.ri = growTo(j.ri[:0], len(pos))
	for i, p := range pos {
		if p < 0 {
			j.bi[i], j.ri[i] = -1, 0
			continue
		}
		j.bi[i], j.ri[i] = j.rowB[p], j.rowR[p]
	}
}

// queueProbeTail queues, once the current batch is expanded, its rows
// without a match (left, full: with NULL build columns; anti) or with one
// (semi).
func (j *joinOp) queueProbeTail() {
	if j.blk != nil && !j.blk.endBatch(j.pmatch[:j.curN]) {
		return // a pass of a block nested-loop join but the last
	}
	switch {
	case j.outerProbe():
		for i, m := range j.pmatch[:j.curN] {
			if !m {
				j.outP = append(j.outP, int32(i))
				j.outB = append(j.outB, -1)
			}
		}
	case j.jt == plan.JoinSemi:
		for i, m := range j.pmatch[:j.curN] {
			if m {
				j.outP = append(j.outP, int32(i))
			}
		}
	case j.jt == plan.JoinAnti:
		// null-aware: a NULL key matches nothing but is not known to be
		// absent from a non-empty build side (the case of a NULL in the
		// build side stopped the join before any probing)
		dropNull := j.nullAware && j.buildRows > 0 && len(j.lkeys) > 0 && !j.neverMatch
		for i, m := range j.pmatch[:j.curN] {
			if !m && !(dropNull && j.probeNul[i]) {
				j.outP = append(j.outP, int32(i))
			}
		}
	}
}

// queueBuildTail queues up to room unmatched build rows (right, full,
// right anti), or matched ones (right semi).
func (j *joinOp) queueBuildTail(room int) {
	want := j.jt == plan.JoinRightSemi
	for ; j.tailPos < len(j.rowB) && room > 0; j.tailPos++ {
		p := j.tailPos
		if (p < j.nChained && j.matched[p>>6]&(1<<(uint(p)&63)) != 0) != want {
			continue
		}
		j.outP = append(j.outP, -1)
		j.outB = append(j.outB, int32(p))
		room--
	}
}

// emit gathers the next k queued rows into an output batch.
func (j *joinOp) emit(k int) (arrow.RecordBatch, error) {
	mem := j.opts.Mem
	lo := j.qpos
	pidx := j.outP[lo : lo+k]
	j.qpos += k
	if j.qpos == len(j.outP) {
		defer func() { j.outP, j.outB, j.qpos = j.outP[:0], j.outB[:0], 0 }()
	}
	cols := make([]arrow.Array, 0, j.schema.NumFields())
	fail := func(err error) (arrow.RecordBatch, error) {
		releaseAll(cols)
		return nil, fmt.Errorf("exec: %s: %w", j.label, err)
	}
	// probe columns
	identity := j.cur != nil && k == j.curN
	hasNull := false
	for i, p := range pidx {
		if p != int32(i) {
			identity = false
		}
		if p < 0 {
			hasNull = true
		}
	}
	for c := 0; c < j.probeOut(); c++ {
		t := j.schema.Field(c).Type
		var a arrow.Array
		var err error
		switch {
		case j.cur == nil || (hasNull && allNegative(pidx)):
			a = makeNulls(mem, t, k)
		case identity:
			a = j.cur.Column(c)
			a.Retain()
		case j.skipped(c):
			a = j.nulls[c].get(mem, t, k)
		case hasNull:
			a, err = takeNullable(mem, j.cur.Column(c), pidx)
		default:
			a, err = take(mem, j.cur.Column(c), pidx)
		}
		if err != nil {
			return fail(err)
		}
		cols = append(cols, a)
	}
	if j.outBuild {
		j.setBuildIndex(j.outB[lo : lo+k])
		for c := 0; c < j.nBuildCols; c++ {
			oc := j.probeOut() + c
			t := j.schema.Field(oc).Type
			var a arrow.Array
			var err error
			if len(j.buildSrcs[c]) == 0 {
				a = makeNulls(mem, t, k)
			} else if j.skipped(oc) {
				a = j.nulls[oc].get(mem, t, k)
			} else {
				a, err = takeMultiNullable(mem, j.buildSrcs[c][0].DataType(), j.buildSrcs[c], j.bi, j.ri)
			}
			if err != nil {
				return fail(err)
			}
			cols = append(cols, a)
		}
	}
	rec, err := conformRecord(mem, j.schema, cols, k)
	cols = nil
	if err != nil {
		return fail(err)
	}
	return rec, nil
}

func allNegative(x []int32) bool {
	for _, v := range x {
		if v >= 0 {
			return false
		}
	}
	return true
}

// ---- union ------------------------------------------------------------------

type unionOp struct {
	ins    []Operator
	closed []bool
	i      int
	schema *arrow.Schema
	mem    memory.Allocator
}

// NewUnion concatenates its inputs in order (UNION ALL); each input is
// closed as soon as it is exhausted.
func NewUnion(ins []Operator, n *plan.Node, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	if len(ins) == 0 {
		return nil, fmt.Errorf("exec: union: no inputs")
	}
	for i, in := range ins {
		if in.Schema().NumFields() != len(n.Schema) {
			return nil, fmt.Errorf("exec: union: input %d has %d columns, output %d", i, in.Schema().NumFields(), len(n.Schema))
		}
	}
	return &unionOp{ins: ins, closed: make([]bool, len(ins)), schema: n.Schema.Arrow(), mem: opts.Mem}, nil
}

func (u *unionOp) Schema() *arrow.Schema { return u.schema }

func (u *unionOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for u.i < len(u.ins) {
		rec, err := u.ins[u.i].Next(ctx)
		if err == io.EOF {
			u.closed[u.i] = true
			err = u.ins[u.i].Close()
			u.i++
			if err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		out, err := withSchema(u.mem, u.schema, rec)
		if err != nil {
			return nil, fmt.Errorf("exec: union input %d: %w", u.i, err)
		}
		return out, nil
	}
	return nil, io.EOF
}

func (u *unionOp) Close() error {
	var first error
	for i, in := range u.ins {
		if !u.closed[i] {
			u.closed[i] = true
			if err := in.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}
