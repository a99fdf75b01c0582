package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/catalog/iceberg"
	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// Iceberg tables (STORED AS ICEBERG): the catalog keeps the table's
// location (its folder, or one metadata file), the metadata file and
// snapshot read last, the snapshot's schema and its data files (from the
// manifests: no footer reads). A query re-reads the newest metadata file
// of a folder location, so new snapshots are seen; "name@ref" reads the
// snapshot ref selects (a snapshot id or a timestamp: time travel). A
// scan's files are planned from its filter through the manifests when
// its stage starts (PlanScan).

// InspectIceberg builds the catalog entry of the Iceberg table at key of
// bucket b (named bucket in s3:// URIs): a table folder (the newest
// metadata file under metadata/) or a metadata file.
func InspectIceberg(ctx context.Context, b objstore.Bucket, bucket, name, key string) (*Table, error) {
	t := &Table{Name: name, Format: "iceberg", Location: key, External: true, Iceberg: &layout.Iceberg{Bucket: bucket}}
	if err := loadIceberg(ctx, b, t, iceberg.Ref{}); err != nil {
		return nil, err
	}
	return t, nil
}

// loadIceberg (re)reads t's newest metadata file and the snapshot ref
// selects into t.
func loadIceberg(ctx context.Context, b objstore.Bucket, t *Table, ref iceberg.Ref) error {
	mk, err := iceberg.MetadataKey(ctx, b, t.Location)
	if err != nil {
		return fmt.Errorf("table %s: %w", t.Name, err)
	}
	fs := iceberg.NewFS(ctx, b, t.Iceberg.Bucket)
	it, err := iceberg.Load(ctx, fs, mk)
	if err != nil {
		return fmt.Errorf("table %s: %w", t.Name, err)
	}
	snap, err := it.Snapshot(ref)
	if err != nil {
		return plan.Errorf(planner.CodeUnknownTbl, "table %s: %w", t.Name, err)
	}
	cols, ids, err := iceberg.Columns(it.Schema(snap, !ref.IsZero()))
	if err != nil {
		return fmt.Errorf("table %s: %w", t.Name, err)
	}
	sp, err := it.Files(ctx, t.Name, snap)
	if err != nil {
		return err
	}
	t.Columns, t.Files, t.Rows, t.Bytes = cols, sp.Files, 0, 0
	t.Iceberg = &layout.Iceberg{Bucket: t.Iceberg.Bucket, Metadata: mk, FieldIDs: ids, Pinned: !ref.IsZero()}
	if snap != nil {
		t.Iceberg.Snapshot = snap.SnapshotID
	}
	t.RowsEstimated = false
	for _, f := range t.Files {
		for _, rg := range f.RowGroups {
			t.Rows += rg.Rows
		}
		t.Bytes += f.Size
		// The manifests count rows written, deleted ones included.
		t.RowsEstimated = t.RowsEstimated || len(f.Deletes) > 0
	}
	return nil
}

// refreshIceberg brings an Iceberg table to its newest metadata file
// (saving the entry when it changed).
func (s *Store) refreshIceberg(ctx context.Context, t *Table) (*Table, error) {
	if s.Bucket == nil {
		return t, nil
	}
	mk, err := iceberg.MetadataKey(ctx, s.Bucket, t.Location)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	if mk == t.Iceberg.Metadata {
		return t, nil
	}
	if err := loadIceberg(ctx, s.Bucket, t, iceberg.Ref{}); err != nil {
		return nil, err
	}
	if err := s.Put(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

// snapshotOf returns the Iceberg table base as of the snapshot ref names
// (a snapshot id or a timestamp), under the name "base@ref".
func (s *Store) snapshotOf(ctx context.Context, base, refText string) (*Table, error) {
	t, err := s.Get(ctx, base)
	if err != nil {
		return nil, err
	}
	if t.Iceberg == nil {
		return nil, plan.Errorf(planner.CodeUnknownTbl, "table %s@%s: %w: only Iceberg tables have snapshots (%s is %s)", base, refText, planner.ErrUnknownTable, t.Name, t.Format)
	}
	ref, err := iceberg.ParseRef(refText)
	if err != nil {
		return nil, plan.Errorf(planner.CodeUnknownTbl, "table %s: %w", t.Name, err)
	}
	if s.Bucket == nil {
		return nil, errors.New("catalog: time travel needs the store's bucket")
	}
	if err := loadIceberg(ctx, s.Bucket, t, ref); err != nil {
		return nil, err
	}
	t.Name = base + "@" + refText
	return t, nil
}

// PlanScan implements coordinator.ScanPlanner: the files an Iceberg scan
// reads, pruned from its filter through the manifests before any data
// file is opened.
func (s *Store) PlanScan(ctx context.Context, lay *layout.Table, scan *plan.Scan) (*layout.ScanPlan, error) {
	if lay.Iceberg == nil {
		return nil, fmt.Errorf("catalog: table %s is not an Iceberg table", scan.Table)
	}
	if s.Bucket == nil {
		return nil, errors.New("catalog: Iceberg scans need the store's bucket")
	}
	fs := iceberg.NewFS(ctx, s.Bucket, lay.Iceberg.Bucket)
	it, err := iceberg.Load(ctx, fs, lay.Iceberg.Metadata)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", scan.Table, err)
	}
	var ref iceberg.Ref
	if lay.Iceberg.Snapshot != 0 {
		ref.SnapshotID = lay.Iceberg.Snapshot
	}
	snap, err := it.Snapshot(ref)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", scan.Table, err)
	}
	if lay.Iceberg.Snapshot == 0 {
		snap = nil // the table had no snapshot when the layout was taken
	}
	return it.Plan(ctx, scan.Table, snap, lay.Iceberg.Pinned, iceberg.Filter(scan.Filter, scan.Columns))
}
