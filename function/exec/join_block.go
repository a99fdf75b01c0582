package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// Block nested-loop join. A join whose build side does not fit the task's
// memory budget and that hashing cannot split writes the build rows held
// so far and the rest of the build input to spill files in blocks of
// about the memory the join could hold (blockShare of it, the rest left
// for the probe bitmap and the layout), then the probe input to one spill
// file. Each block is then loaded and joined in memory by an ordinary
// join of the same plan (a "pass") with the whole probe file streamed
// against it, so at most one block is held at a time. Such joins are:
//
//   - a cross join (KindCrossJoin: no keys, the filter is the whole join
//     condition);
//   - a hash join on constant keys (the planner's form of an outer, semi
//     or anti join without an equality: one bucket);
//   - a grace-join partition that still does not fit at maxSpillLevel (a
//     key too frequent for any hash to split): each block is a hash
//     table of its own.
//
// Each pass is exact for the pairs it sees. What depends on every block
// is carried across the passes in one bitmap over the probe rows'
// ordinals (the probe file gives its rows in the same order every pass):
// a probe row matched in an earlier pass starts the next one matched, so
// semi and anti joins skip it and a left or full join does not call it
// unmatched. Only the last pass emits the probe rows whose answer depends
// on all blocks (left and full: unmatched, semi: matched, anti:
// unmatched). Build-preserving joins (right, full) emit a block's
// unmatched rows at the end of its own pass, since a build row lives in
// one block. A null-aware anti join without keys is a plain anti join in
// memory and stays one here; one with keys is a grace join (whose
// partitions are no longer null-aware), never a block join.

// blockShare is the part of the memory the join could hold when it
// spilled that one build block is cut to.
const blockShare = 0.75

// minBlockShare: a block is at least 1/minBlockShare of the budget.
const minBlockShare = 16

// blockPass is what one pass of a block nested-loop join shares with the
// others.
type blockPass struct {
	matched []uint64 // per probe ordinal: matched in some pass so far
	last    bool     // the last pass: emit the probe rows' verdicts
	pos     int      // probe ordinal of the next probe batch
	base    int      // probe ordinal of the current probe batch
}

// blockJoin holds the spilled inputs of a block nested-loop join.
type blockJoin struct {
	j         *joinOp
	blocks    []*spillFile
	probe     *spillFile
	probeRows int
	matched   []uint64
	next      int
	cur       Operator
}

// canBlock reports whether the join may spill as a block nested-loop join
// (see above); a pass of one never spills again.
func (j *joinOp) canBlock() bool {
	if j.node == nil || j.blk != nil || (j.nullAware && len(j.rkeys) > 0) || j.neverMatch {
		return false
	}
	return len(j.rkeys) == 0 || j.constKeys || j.level >= maxSpillLevel
}

// blockBytes estimates what a build batch costs a pass that loads it: its
// buffers, its positions (batch and row, int32 each), with keys its group
// ids and a share of the hash table, and, for a build-preserving join, its
// bit in the matched bitmap.
func (j *joinOp) blockBytes(rec arrow.RecordBatch) int64 {
	n := rec.NumRows()
	b := bytesOf(rec) + 8*n
	if len(j.rkeys) > 0 {
		b += 4*n + 24*n
	}
	if j.tracksBuild() {
		b += n/8 + 1
	}
	return b
}

// startBlocks writes the held build rows and the rest of the build input
// to block files, then the probe input to one file.
func (j *joinOp) startBlocks(ctx context.Context) error {
	// A block is cut to what the join could hold now; other operators
	// holding nearly all the budget leave it at least minBlockShare of it
	// (a pass that then does not fit fails as any operator would).
	target := max(int64(float64(j.res.room())*blockShare), j.opts.Pool.Limit()/minBlockShare)
	g := &blockJoin{j: j}
	j.spilled = g
	buildSide, probeSide := " build side", " probe side"
	if len(j.rkeys) == 0 {
		buildSide, probeSide = " right side", " left side"
	}
	mem := j.opts.Mem
	var cur *spillFile
	var curBytes int64
	// put appends rec, which costs b bytes in memory, to the current
	// block, or to a new one when it would outgrow the target.
	put := func(rec arrow.RecordBatch, b int64) error {
		if cur == nil || (curBytes > 0 && curBytes+b > target) {
			if cur != nil {
				if err := cur.finish(); err != nil {
					return err
				}
			}
			f, err := j.opts.Pool.newSpill(j.label+buildSide, j.build.Schema(), mem)
			if err != nil {
				return err
			}
			g.blocks = append(g.blocks, f)
			cur, curBytes = f, 0
		}
		curBytes += b
		return cur.write(rec)
	}
	write := func(rec arrow.RecordBatch) error {
		n := rec.NumRows()
		if n == 0 {
			return nil
		}
		b := j.blockBytes(rec)
		if b <= target || n == 1 {
			return put(rec, b)
		}
		// A batch larger than a block goes in slices of about a block (a
		// slice is written with its own rows only, so it costs its share).
		step := max(1, n*target/b)
		for lo := int64(0); lo < n; lo += step {
			hi := min(n, lo+step)
			part := rec.NewSlice(lo, hi)
			err := put(part, b*(hi-lo)/n+1)
			part.Release()
			if err != nil {
				return err
			}
		}
		return nil
	}
	held := j.batches
	j.batches = nil
	for i, rec := range held {
		if err := write(rec); err != nil {
			for _, r := range held[i:] {
				r.Release()
			}
			return err
		}
		rec.Release()
	}
	j.releaseBuild()
	j.held = 0
	if err := j.res.set(0); err != nil {
		return err
	}
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
		if int64(j.buildRows)+rec.NumRows() > 1<<31-1 {
			rec.Release()
			return fmt.Errorf("exec: %s: build side exceeds 2^31 rows", j.label)
		}
		j.buildRows += int(rec.NumRows())
		err = write(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	if !j.buildClosed {
		j.buildClosed = true
		if err := j.build.Close(); err != nil {
			return err
		}
	}
	if cur != nil {
		if err := cur.finish(); err != nil {
			return err
		}
	}
	pf, err := j.opts.Pool.newSpill(j.label+probeSide, j.probe.Schema(), mem)
	if err != nil {
		return err
	}
	g.probe = pf
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := j.probe.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		g.probeRows += int(rec.NumRows())
		err = pf.write(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	if err := pf.finish(); err != nil {
		return err
	}
	// The probe bitmap is held across the passes.
	g.matched = make([]uint64, (g.probeRows+63)/64)
	return j.res.set(int64(len(g.matched)) * 8)
}

// nextBatch returns the next batch of the passes.
func (g *blockJoin) nextBatch(ctx context.Context) (arrow.RecordBatch, error) {
	j := g.j
	for {
		if g.cur == nil {
			if g.next >= len(g.blocks) || (g.probeRows == 0 && !j.outerBuild() && j.jt != plan.JoinRightAnti) {
				g.close()
				j.res.release()
				return nil, io.EOF
			}
			p := g.next
			g.next++
			probe, err := g.probe.reread(j.opts.Mem)
			if err != nil {
				return nil, err
			}
			build, err := g.blocks[p].open(j.opts.Mem)
			if err != nil {
				probe.Close()
				return nil, err
			}
			op, err := newJoin(j.kindName, probe, build, j.node, j.spec, j.opts)
			if err != nil {
				probe.Close()
				build.Close()
				return nil, err
			}
			op.(*joinOp).level = j.level // a grace partition's passes do not partition again
			op.(*joinOp).blk = &blockPass{matched: g.matched, last: p == len(g.blocks)-1}
			g.cur = op
		}
		rec, err := g.cur.Next(ctx)
		if err == io.EOF {
			err = g.cur.Close()
			g.cur = nil
			if err != nil {
				return nil, err
			}
			continue
		}
		return rec, err
	}
}

func (g *blockJoin) close() {
	if g.cur != nil {
		g.cur.Close()
		g.cur = nil
	}
	for _, f := range g.blocks {
		f.remove()
	}
	if g.probe != nil {
		g.probe.remove()
	}
}

// startBatch notes the probe ordinals of a pass's probe batch of n rows
// and marks the rows an earlier pass matched.
func (b *blockPass) startBatch(pmatch []bool) {
	b.base = b.pos
	b.pos += len(pmatch)
	for i := range pmatch {
		k := b.base + i
		if b.matched[k>>6]&(1<<(uint(k)&63)) != 0 {
			pmatch[i] = true
		}
	}
}

// endBatch records the pass's matches of the current probe batch; it
// reports whether the batch's probe-side verdicts are to be emitted (the
// last pass).
func (b *blockPass) endBatch(pmatch []bool) bool {
	for i, m := range pmatch {
		if m {
			k := b.base + i
			b.matched[k>>6] |= 1 << (uint(k) & 63)
		}
	}
	return b.last
}

// allLiterals reports whether every expression is a non-NULL literal.
func allLiterals(es []*plan.Expr) bool {
	for _, e := range es {
		if e.Op != plan.OpLiteral || e.Value == nil || e.Value.Null {
			return false
		}
	}
	return true
}
