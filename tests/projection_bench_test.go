package tests

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/catalog"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// scaledCatalog is a catalog whose tables hold factor times the rows,
// bytes and row groups of another's: synthetic statistics for a planning
// projection at a scale factor nobody generated. nation and region do not
// grow with the TPC-H scale factor.
type scaledCatalog struct {
	inner  *catalog.Store
	factor float64
}

func (c scaledCatalog) Table(ctx context.Context, name string) (*planner.TableInfo, error) {
	t, err := c.inner.Table(ctx, name)
	if err != nil {
		return nil, err
	}
	out := *t
	f := c.scale(name)
	out.Rows, out.Bytes = int64(float64(t.Rows)*f), int64(float64(t.Bytes)*f)
	return &out, nil
}

func (c scaledCatalog) scale(table string) float64 {
	if table == "nation" || table == "region" {
		return 1
	}
	return c.factor
}

// projection is what a query's static plan would issue at one scale.
type projection struct {
	stages, tasks        int
	puts, gets, scanGets int64
	dollars              float64
}

// projectQuery plans sql over the catalog scaled by factor and counts, for
// the static plan (one task per scan split of splitBytes and per hash
// partition; adaptivity only lowers these), the requests its stages would
// issue in the one-object-per-attempt layout:
//   - PUTs: a data object and a manifest per task, a plan fragment per stage;
//   - shuffle GETs: one ranged GET per (map object, reading task) pair,
//     partitions of one object merged, plus one per further 16 MiB a
//     reading task's range spans;
//   - scan GETs: one ranged GET per column chunk read (row groups of the
//     table times the columns the scan reads; chunks smaller than the
//     reader's 64 KiB window share one), plus a footer per file.
//
// Functions invoked are the tasks; the $ uses the list prices (Lambda
// GB-seconds are left out: they need run times).
func projectQuery(ctx context.Context, cat *catalog.Store, sql string, factor float64, opts planner.Options, splitBytes int64) (projection, error) {
	sc := scaledCatalog{inner: cat, factor: factor}
	pl, err := planner.Plan(ctx, sql, sc, opts)
	if err != nil {
		return projection{}, err
	}
	g := pl.Graph
	var p projection
	tasks := map[int]int64{}
	outBytes := map[int]float64{}
	for _, st := range g.Stages { // inputs have lower ids: planned bottom up
		var t int64 = 1
		var scanned float64
		plan.Walk(st.Root, func(n *plan.Node) {
			if n.Kind != plan.KindScan {
				return
			}
			info, err := cat.Table(ctx, n.Scan.Table)
			lay, err2 := cat.Layout(ctx, n.Scan.Table)
			if err != nil || err2 != nil {
				return
			}
			f := sc.scale(n.Scan.Table)
			bytes := float64(info.Bytes) * f
			scanned += bytes
			t = max(t, int64(math.Ceil(bytes/float64(splitBytes))))
			var rgs int
			for _, file := range lay.Files {
				rgs += len(file.RowGroups)
			}
			if rgs == 0 {
				return
			}
			// A column chunk is one GET; chunks under the reader's 64 KiB
			// window share one (objstore.ReaderAt).
			cols := float64(len(n.Scan.Columns))
			chunkBytes := float64(info.Bytes) / float64(rgs) * cols / float64(max(1, len(info.Columns)))
			perRG := min(cols, max(1, math.Ceil(chunkBytes/float64(objstore.DefaultMinRead))))
			files := math.Ceil(float64(len(lay.Files)) * f)
			p.scanGets += int64(float64(rgs)*f*perRG + files)
		})
		for _, in := range st.Inputs {
			up := g.Stage(in)
			if up.Output.Kind == plan.PartitionHash && !plan.WholeRead(st, in) {
				t = max(t, int64(up.Output.Count))
			}
		}
		for _, in := range st.Inputs {
			perTask := outBytes[in] / float64(t)
			if plan.WholeRead(st, in) || g.Stage(in).Output.Kind != plan.PartitionHash {
				perTask = outBytes[in]
			}
			p.gets += tasks[in]*t + int64(float64(t)*math.Floor(perTask/float64(16<<20)))
		}
		tasks[st.ID] = t
		// The stage's output, for its readers' range sizes: what it scans,
		// or what it reads, as an upper bound.
		out := scanned
		for _, in := range st.Inputs {
			out += outBytes[in]
		}
		outBytes[st.ID] = out
		p.tasks += int(t)
		p.puts += 2*t + 1
	}
	p.stages = len(g.Stages)
	p.gets += p.scanGets
	prices := coordinator.DefaultPrices()
	p.dollars = float64(p.puts)*prices.S3PutPer1000/1000 + float64(p.gets)*prices.S3GetPer1000/1000 +
		float64(p.tasks)*prices.LambdaPerMillion/1e6
	return p, nil
}

// projectionReport prints the projection of every query at each of the
// scale factors (relative to the data at sf), for functions of fnMem.
func projectionReport(ctx context.Context, cat *catalog.Store, queries []query, sf float64, targets []float64, fnMem int64, splitBytes int64) string {
	var b strings.Builder
	opts := planner.Options{TaskBytes: planner.TaskBytesFor(fnMem)}
	for _, target := range targets {
		fmt.Fprintf(&b, "\nProjection, static plans at SF %g (synthetic statistics: SF %g's tables x%g), %d MiB functions, %d MiB splits\n",
			target, sf, target/sf, fnMem>>20, splitBytes>>20)
		fmt.Fprintf(&b, "%-6s %7s %9s %12s %14s %14s %10s\n", "query", "stages", "tasks", "PUTs", "GETs", "of them scan", "$ (S3+req)")
		var tot projection
		for _, q := range queries {
			p, err := projectQuery(ctx, cat, q.sql, target/sf, opts, splitBytes)
			if err != nil {
				fmt.Fprintf(&b, "%-6s %v\n", q.name, err)
				continue
			}
			fmt.Fprintf(&b, "%-6s %7d %9d %12d %14d %14d %10.2f\n", q.name, p.stages, p.tasks, p.puts, p.gets, p.scanGets, p.dollars)
			tot.stages += p.stages
			tot.tasks += p.tasks
			tot.puts += p.puts
			tot.gets += p.gets
			tot.scanGets += p.scanGets
			tot.dollars += p.dollars
		}
		fmt.Fprintf(&b, "%-6s %7d %9d %12d %14d %14d %10.2f\n", "total", tot.stages, tot.tasks, tot.puts, tot.gets, tot.scanGets, tot.dollars)
	}
	return b.String()
}
