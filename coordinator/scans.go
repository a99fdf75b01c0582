package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/adaptive"
	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
)

// The inputs of scan-task shaping: listing a scan stage's table once per
// run (Iceberg scan planning included) and handing the re-planner what it
// weighs. The decisions are planner/adaptive's pure functions
// (scantasks.go there): which files partition pruning keeps
// (adaptive.PruneFiles), what size-scans and inline-scans are told
// (adaptive.MeasureScan), and how the files become tasks
// (adaptive.TaskPlan.ScanSplits, in the task builder, taskplan.go).

// scanNodes returns the table scans in a stage's fragment whose splits
// are its tasks (not those inline-scans put there: their files are in the
// plan).
func scanNodes(st *plan.Stage) []*plan.Node {
	var scans []*plan.Node
	plan.Walk(st.Root, func(n *plan.Node) {
		if n.SplitScan() {
			scans = append(scans, n)
		}
	})
	return scans
}

// scanInput is what a scan stage reads: the table's files its partition
// filter keeps, their partition values by key, and how many files the
// filter dropped.
type scanInput struct {
	layout *layout.Table
	files  []layout.File
	values map[string][]plan.Value
	pruned int
	// filter is the scan's pruning filter the files were pruned with (a
	// runtime filter added since prunes them again).
	filter string
}

// scanInput lists the files a scan stage reads, once per job run (an
// external table is listed again only by the next run): its tasks, a
// repair of one of them and size-scans all see one listing. It also sets
// the scan's format, CSV dialect and partition columns.
func (c *Coordinator) scanInput(ctx context.Context, run *jobRun, stage int, scan *plan.Node) (*scanInput, error) {
	filter := ""
	if scan.Scan.Filter != nil {
		fj, _ := json.Marshal(scan.Scan.Filter)
		filter = string(fj)
	}
	var lay *layout.Table
	if in, ok := run.scans[stage]; ok {
		scan.Scan.Format, scan.Scan.CSV, scan.Scan.JSON, scan.Scan.Partitions = in.layout.Format, in.layout.CSV, in.layout.JSON, in.layout.Partitions
		if in.layout.Iceberg != nil {
			if err := setFieldIDs(in.layout, scan); err != nil {
				return nil, err
			}
		}
		if in.filter == filter {
			return in, nil
		}
		lay = in.layout // the same listing, pruned by the filter as it is now
	} else {
		var err error
		if lay, err = c.tables.Layout(ctx, scan.Scan.Table); err != nil {
			return nil, err
		}
	}
	// Set before pruning: the partition filter reads the partition columns.
	scan.Scan.Format, scan.Scan.CSV, scan.Scan.JSON, scan.Scan.Partitions = lay.Format, lay.CSV, lay.JSON, lay.Partitions
	var files []layout.File
	var values map[string][]plan.Value
	var pruned int
	var err error
	if lay.Iceberg != nil {
		var sp *layout.ScanPlan
		if sp, err = c.planIceberg(ctx, lay, scan); err != nil {
			return nil, err
		}
		files, pruned = sp.Files, sp.DataFilesPruned
		c.log.Info("iceberg scan planning", "job", run.id, "stage", stage, "table", scan.Scan.Table, "snapshot", lay.Iceberg.Snapshot,
			"manifests", sp.Manifests, "manifests_pruned", sp.ManifestsPruned, "files", sp.DataFiles, "files_pruned", sp.DataFilesPruned, "delete_files", sp.DeleteFiles)
	} else {
		if files, values, pruned, err = prunePartitions(scan, lay); err != nil {
			return nil, err
		}
		if pruned > 0 {
			c.log.Info("partition pruning", "job", run.id, "stage", stage, "table", scan.Scan.Table, "files", len(lay.Files), "pruned", pruned)
		}
	}
	in := &scanInput{layout: lay, files: files, values: values, pruned: pruned, filter: filter}
	if run.scans == nil {
		run.scans = map[int]*scanInput{}
	}
	run.scans[stage] = in
	return in, nil
}

// measureScans records, for size-scans, the table bytes every pending
// scan stage of an adaptive job reads.
func (c *Coordinator) measureScans(ctx context.Context, run *jobRun) error {
	if !run.graph.Adaptive() {
		return nil
	}
	for _, st := range run.state.Graph.Stages {
		if !run.state.Pending(st.ID) {
			continue
		}
		if _, ok := run.state.Scans[st.ID]; ok {
			continue
		}
		scans := scanNodes(st)
		if len(scans) != 1 {
			continue // tasksOf reports a stage of several scans
		}
		in, err := c.scanInput(ctx, run, st.ID, scans[0])
		if err != nil {
			return err
		}
		if run.state.Scans == nil {
			run.state.Scans = map[int]adaptive.ScanSize{}
		}
		size := adaptive.MeasureScan(in.files, in.values, c.cfg.SplitBytes, run.state.Config.InlineScanBytes)
		run.state.Scans[st.ID] = size
	}
	return nil
}

// ScanPlanner is implemented by Tables whose scans plan their files from
// the scan's filter when the scan stage starts (Iceberg tables: manifests
// and data files pruned by partition values and column bounds).
type ScanPlanner interface {
	PlanScan(ctx context.Context, lay *layout.Table, scan *plan.Scan) (*layout.ScanPlan, error)
}

// planIceberg plans the files of a scan of an Iceberg table, and sets the
// field ids its columns are read by.
func (c *Coordinator) planIceberg(ctx context.Context, lay *layout.Table, scan *plan.Node) (*layout.ScanPlan, error) {
	return planIcebergScan(ctx, c.tables, lay, scan)
}

func planIcebergScan(ctx context.Context, tables Tables, lay *layout.Table, scan *plan.Node) (*layout.ScanPlan, error) {
	sp, ok := tables.(ScanPlanner)
	if !ok {
		return nil, fmt.Errorf("coordinator: table %s is an Iceberg table and the catalog cannot plan its scans", scan.Scan.Table)
	}
	if err := setFieldIDs(lay, scan); err != nil {
		return nil, err
	}
	p, err := sp.PlanScan(ctx, lay, scan.Scan)
	if err != nil {
		return nil, err
	}
	// Pruned data files count those of pruned manifests too: the table's
	// files are the snapshot's, as the catalog listed them.
	p.DataFiles = max(len(lay.Files), len(p.Files))
	p.DataFilesPruned = p.DataFiles - len(p.Files)
	return p, nil
}

// setFieldIDs sets the Iceberg field ids a scan reads its columns by.
func setFieldIDs(lay *layout.Table, scan *plan.Node) error {
	scan.Scan.FieldIDs = make([]int, len(scan.Scan.Columns))
	for i, name := range scan.Scan.Columns {
		id, ok := lay.Iceberg.FieldIDs[name]
		if !ok {
			for n, fid := range lay.Iceberg.FieldIDs {
				if strings.EqualFold(n, name) {
					id, ok = fid, true
					break
				}
			}
		}
		if !ok {
			return plan.Errorf(plan.CodeUnknownCol, "table %s has no column %s", scan.Scan.Table, name)
		}
		scan.Scan.FieldIDs[i] = id
	}
	return nil
}

// prunePartitions drops the files of a hive-partitioned table whose
// partition values the scan's filter excludes: adaptive.PruneFiles with
// the executor's partition filter (exec.PartitionFilter).
func prunePartitions(scan *plan.Node, lay *layout.Table) ([]layout.File, map[string][]plan.Value, int, error) {
	return adaptive.PruneFiles(lay, scan.Scan.Table, func(v []plan.Value) bool { return exec.PartitionFilter(scan, v) })
}

// ExplainPruning returns, for every scan with a filter of a
// hive-partitioned table in g, a line saying how many of the table's files
// its partition filter prunes now (as the scan stage will when it starts),
// and for every scan of an Iceberg table how many manifests and data files
// its filter prunes, for EXPLAIN.
func ExplainPruning(ctx context.Context, tables Tables, g *plan.Graph) (string, error) {
	var b strings.Builder
	for _, st := range g.Stages {
		var err error
		plan.Walk(st.Root, func(n *plan.Node) {
			if err != nil || n.Kind != plan.KindScan {
				return
			}
			var lay *layout.Table
			if lay, err = tables.Layout(ctx, n.Scan.Table); err != nil {
				return
			}
			if lay.Iceberg != nil {
				c, sc := *n, *n.Scan
				c.Scan = &sc
				var p *layout.ScanPlan
				if p, err = planIcebergScan(ctx, tables, lay, &c); err == nil {
					fmt.Fprintf(&b, "iceberg pruning: stage %d scan %s: snapshot %d: %d of %d manifests pruned, %d of %d data files pruned, %d read, %d delete files\n",
						st.ID, n.Scan.Table, lay.Iceberg.Snapshot, p.ManifestsPruned, p.Manifests, p.DataFilesPruned, p.DataFiles, len(p.Files), p.DeleteFiles)
				}
				return
			}
			if len(lay.Partitions) == 0 || n.Scan.Filter == nil {
				return
			}
			c, sc := *n, *n.Scan
			sc.Partitions = lay.Partitions
			c.Scan = &sc
			var kept []layout.File
			var pruned int
			if kept, _, pruned, err = prunePartitions(&c, lay); err == nil {
				fmt.Fprintf(&b, "partition pruning: stage %d scan %s: %d of %d files pruned, %d read\n", st.ID, n.Scan.Table, pruned, len(lay.Files), len(kept))
			}
		})
		if err != nil {
			return "", err
		}
	}
	return b.String(), nil
}
