package exec

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

// Grace hash join. When a hash join's build side does not fit the task's
// memory budget, the rows held so far and the rest of the build input are
// written to spillFanout partition files by a hash of the join keys, then
// the probe input likewise by its keys; each pair of partition files is
// then joined by an ordinary in-memory hash join (which may spill again,
// hashed with another seed, up to maxSpillLevel). Every key value lands in
// one partition on both sides, so per-partition joins give the same rows
// for every join type: a row with a NULL key matches nothing and is kept
// or dropped by its partition's join as in one join. NOT IN (null-aware
// anti) is decided globally first: a NULL build key empties the result,
// and probe rows with a NULL key are dropped (the build side is not
// empty), after which each partition is a plain anti join.

// spilledJoin is what a join that spilled its inputs returns its rows
// from.
type spilledJoin interface {
	nextBatch(ctx context.Context) (arrow.RecordBatch, error)
	close()
}

// graceJoin holds the partition pairs of a spilled hash join.
type graceJoin struct {
	j       *joinOp
	build   *spillPartitions
	probe   *spillPartitions
	next    int
	cur     Operator
	noProbe bool // NOT IN with a NULL build key: nothing to emit
}

// canGrace reports whether the join may partition itself to disk.
func (j *joinOp) canGrace() bool {
	return j.node != nil && len(j.rkeys) > 0 && !j.neverMatch && !j.constKeys && j.level < maxSpillLevel
}

// startGrace partitions the held build rows, the rest of the build input
// and then the probe input to disk.
func (j *joinOp) startGrace(ctx context.Context) error {
	mem := j.opts.Mem
	label := j.label + " build side"
	bp, err := j.opts.Pool.newSpillPartitions(label, j.build.Schema(), mem, spillFanout)
	if err != nil {
		return err
	}
	g := &graceJoin{j: j, build: bp}
	j.spilled = g
	write := func(sp *spillPartitions, rec arrow.RecordBatch, exprs []*plan.Expr, side string, dropNull bool) error {
		keys, err := j.evalKeys(exprs, rec, side)
		if err != nil {
			return err
		}
		defer releaseAll(keys)
		j.nullScratch = growTo(j.nullScratch[:0], int(rec.NumRows()))
		if anyNullKey(keys, j.nullScratch) {
			if side == "build" {
				j.buildNullKey = true
			}
			if dropNull {
				var sel []int32
				for i, isNull := range j.nullScratch {
					if !isNull {
						sel = append(sel, int32(i))
					}
				}
				r2, err := takeRecord(mem, rec, sel)
				if err != nil {
					return err
				}
				defer r2.Release()
				k2 := make([]arrow.Array, len(keys))
				for i, k := range keys {
					if k2[i], err = take(mem, k, sel); err != nil {
						releaseAll(k2[:i])
						return err
					}
				}
				defer releaseAll(k2)
				rec, keys = r2, k2
			}
		}
		return sp.write(mem, rec, keys, j.level)
	}
	for _, rec := range j.batches {
		if err := write(bp, rec, j.rkeys, "build", false); err != nil {
			return err
		}
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
		j.buildRows += int(rec.NumRows())
		err = write(bp, rec, j.rkeys, "build", false)
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
	if j.nullAware && j.buildNullKey {
		g.noProbe = true // x NOT IN (..., NULL, ...) is never TRUE
		return nil
	}
	pp, err := j.opts.Pool.newSpillPartitions(j.label+" probe side", j.probe.Schema(), mem, spillFanout)
	if err != nil {
		return err
	}
	g.probe = pp
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
		err = write(pp, rec, j.lkeys, "probe", j.nullAware)
		rec.Release()
		if err != nil {
			return err
		}
	}
	for _, sp := range []*spillPartitions{bp, pp} {
		for _, f := range sp.files {
			if err := f.finish(); err != nil {
				return err
			}
		}
	}
	return nil
}

// nextBatch returns the next batch of the partition joins.
func (g *graceJoin) nextBatch(ctx context.Context) (arrow.RecordBatch, error) {
	j := g.j
	if g.noProbe {
		return nil, io.EOF
	}
	for {
		if g.cur == nil {
			if g.next >= len(g.build.files) {
				return nil, io.EOF
			}
			p := g.next
			g.next++
			bf, pf := g.build.files[p], g.probe.files[p]
			if skipPartition(j, bf.rows, pf.rows) {
				bf.remove()
				pf.remove()
				continue
			}
			probe, err := pf.open(j.opts.Mem)
			if err != nil {
				return nil, err
			}
			build, err := bf.open(j.opts.Mem)
			if err != nil {
				probe.Close()
				return nil, err
			}
			spec := j.spec
			spec.NullAware = false // decided above: no NULL keys are left
			op, err := newJoin(j.kindName, probe, build, j.node, spec, j.opts)
			if err != nil {
				probe.Close()
				build.Close()
				return nil, err
			}
			op.(*joinOp).level = j.level + 1
			if j.skip != nil {
				op.(*joinOp).skip = j.skip
				op.(*joinOp).nulls = make([]nullFill, len(j.skip))
			}
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

// skipPartition reports whether a partition pair yields no rows.
func skipPartition(j *joinOp, buildRows, probeRows int64) bool {
	switch {
	case buildRows == 0 && probeRows == 0:
		return true
	case buildRows == 0:
		return !j.outerProbe() && j.jt != plan.JoinAnti
	case probeRows == 0:
		return !j.outerBuild() && j.jt != plan.JoinRightAnti
	}
	return false
}

func (g *graceJoin) close() {
	if g.cur != nil {
		g.cur.Close()
		g.cur = nil
	}
	g.build.remove()
	g.probe.remove()
}
