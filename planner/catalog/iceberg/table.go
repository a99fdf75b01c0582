// Package iceberg reads Apache Iceberg tables for the catalog with
// iceberg-go: it finds a table's newest metadata file, selects a snapshot
// (the current one, or one named for time travel), maps the snapshot's
// schema to sluice's types, and plans a scan from its filter through the
// manifests (partition values and column bounds) into the data files and
// position-delete files the scan reads. Data files are Parquet files read
// by field id, so they become scan splits as a Parquet table's files do.
package iceberg

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	iceberggo "github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/metrics"
	"github.com/apache/iceberg-go/table"

	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// ErrNoMetadata is matched by the error of a location that holds no
// Iceberg metadata file.
var ErrNoMetadata = errors.New("no Iceberg metadata file")

// MetadataKey returns the key of the metadata file a location names: the
// location itself when it is a metadata file (….metadata.json), else the
// newest metadata file under its metadata/ folder, by version-hint.text
// when there is one and it names a file that exists, else by the highest
// version in the file names (vN.metadata.json or NNNNN-uuid.metadata.json).
func MetadataKey(ctx context.Context, b objstore.Bucket, key string) (string, error) {
	if isMetadataFile(key) {
		if _, err := b.Stat(ctx, key); err != nil {
			return "", fmt.Errorf("iceberg metadata file %s: %w", key, err)
		}
		return key, nil
	}
	dir := strings.TrimSuffix(key, "/") + "/metadata/"
	if hint, err := b.Get(ctx, dir+"version-hint.text"); err == nil {
		v := strings.TrimSpace(string(hint))
		for _, name := range []string{"v" + v + ".metadata.json", v, "v" + v + ".gz.metadata.json"} {
			if _, err := b.Stat(ctx, dir+name); err == nil && isMetadataFile(name) {
				return dir + name, nil
			}
		}
	} else if !errors.Is(err, objstore.ErrNotFound) {
		return "", fmt.Errorf("read %sversion-hint.text: %w", dir, err)
	}
	objs, err := b.List(ctx, dir)
	if err != nil {
		return "", fmt.Errorf("list %s: %w", dir, err)
	}
	best, bestV := "", int64(-1)
	for _, o := range objs {
		name := path.Base(o.Key)
		if path.Dir(o.Key)+"/" != dir || !isMetadataFile(name) {
			continue
		}
		if v, ok := metadataVersion(name); ok && v > bestV {
			best, bestV = o.Key, v
		}
	}
	if best == "" {
		return "", fmt.Errorf("%w under %s", ErrNoMetadata, dir)
	}
	return best, nil
}

func isMetadataFile(name string) bool {
	return strings.HasSuffix(name, ".metadata.json") || strings.HasSuffix(name, ".metadata.json.gz")
}

// metadataVersion parses the version of vN.metadata.json or
// NNNNN-uuid.metadata.json.
func metadataVersion(name string) (int64, bool) {
	s := strings.TrimPrefix(name, "v")
	end := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if end <= 0 {
		return 0, false
	}
	v, err := strconv.ParseInt(s[:end], 10, 64)
	return v, err == nil
}

// Table is a loaded Iceberg table.
type Table struct {
	fs  *FS
	tbl *table.Table
}

// Load reads the table metadata file at metadataKey of fs's bucket.
func Load(ctx context.Context, fs *FS, metadataKey string) (*Table, error) {
	uri := fs.URI(metadataKey)
	tbl, err := table.NewFromLocation(ctx, table.Identifier{path.Base(metadataKey)}, uri,
		func(context.Context) (icebergio.IO, error) { return fs, nil }, nil)
	if err != nil {
		return nil, fmt.Errorf("load iceberg metadata %s: %w", uri, err)
	}
	return &Table{fs: fs, tbl: tbl}, nil
}

// Metadata returns the table's metadata.
func (t *Table) Metadata() table.Metadata { return t.tbl.Metadata() }

// Ref selects a snapshot: the current one (zero Ref), one by id, or the
// one current at a time.
type Ref struct {
	SnapshotID int64
	// AsOf, when not zero, selects the snapshot current at that time.
	AsOf time.Time
}

// IsZero reports whether r selects the current snapshot.
func (r Ref) IsZero() bool { return r.SnapshotID == 0 && r.AsOf.IsZero() }

// String renders r as the table-name suffix that selects it.
func (r Ref) String() string {
	switch {
	case r.SnapshotID != 0:
		return strconv.FormatInt(r.SnapshotID, 10)
	case !r.AsOf.IsZero():
		return r.AsOf.UTC().Format("2006-01-02 15:04:05.999999")
	}
	return ""
}

// ParseRef parses a snapshot id or a timestamp ('2024-05-01 10:00:00',
// RFC 3339, or a date; UTC unless it says otherwise).
func ParseRef(s string) (Ref, error) {
	s = strings.TrimSpace(s)
	if id, err := strconv.ParseInt(s, 10, 64); err == nil {
		return Ref{SnapshotID: id}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if ts, err := time.Parse(layout, s); err == nil {
			return Ref{AsOf: ts}, nil
		}
	}
	return Ref{}, fmt.Errorf("snapshot %q: want a snapshot id or a timestamp such as '2024-05-01 10:00:00'", s)
}

// ErrNoSnapshot is matched by the error of a Ref no snapshot answers.
var ErrNoSnapshot = errors.New("no such snapshot")

// Snapshot returns the snapshot r selects; nil (and no error) for the
// current snapshot of a table with none.
func (t *Table) Snapshot(r Ref) (*table.Snapshot, error) {
	md := t.tbl.Metadata()
	switch {
	case r.SnapshotID != 0:
		s := md.SnapshotByID(r.SnapshotID)
		if s == nil {
			return nil, fmt.Errorf("%w: snapshot id %d (the table has %s)", ErrNoSnapshot, r.SnapshotID, snapshotIDs(md))
		}
		return s, nil
	case !r.AsOf.IsZero():
		s := t.tbl.SnapshotAsOf(r.AsOf.UnixMilli(), true)
		if s == nil {
			return nil, fmt.Errorf("%w: none as of %s (the first is %s)", ErrNoSnapshot, r.AsOf.UTC().Format(time.RFC3339Nano), firstSnapshotTime(md))
		}
		return s, nil
	}
	return md.CurrentSnapshot(), nil
}

func snapshotIDs(md table.Metadata) string {
	var ids []string
	for _, s := range md.Snapshots() {
		ids = append(ids, strconv.FormatInt(s.SnapshotID, 10))
	}
	if len(ids) == 0 {
		return "no snapshots"
	}
	return "snapshots " + strings.Join(ids, ", ")
}

func firstSnapshotTime(md table.Metadata) string {
	first := int64(0)
	for _, s := range md.Snapshots() {
		if first == 0 || s.TimestampMs < first {
			first = s.TimestampMs
		}
	}
	if first == 0 {
		return "none"
	}
	return time.UnixMilli(first).UTC().Format(time.RFC3339Nano)
}

// Schema returns the schema a read of snapshot s sees: the current
// schema unless s was named (pinned: time travel), then s's own (the
// current one when s is nil or names none). A schema change made since
// the last snapshot (a dropped column) is seen by current reads.
func (t *Table) Schema(s *table.Snapshot, pinned bool) *iceberggo.Schema {
	md := t.tbl.Metadata()
	if pinned && s != nil && s.SchemaID != nil {
		for _, sc := range md.Schemas() {
			if sc.ID == *s.SchemaID {
				return sc
			}
		}
	}
	return md.CurrentSchema()
}

// Columns maps an Iceberg schema to sluice columns as Parquet columns map
// (through the Arrow types iceberg-go gives them), with every column's
// field id by name.
func Columns(sc *iceberggo.Schema) ([]plan.Field, map[string]int, error) {
	ids := make(map[string]int, len(sc.Fields()))
	var cols []plan.Field
	for _, f := range sc.Fields() {
		at, err := table.TypeToArrowType(f.Type, false, false)
		if err != nil {
			return nil, nil, plan.Errorf(plan.CodeUnsupported, "unsupported: column %s has Iceberg type %s: %w", f.Name, f.Type, err)
		}
		t, ok := plan.FromArrow(at)
		if !ok {
			return nil, nil, plan.Errorf(plan.CodeUnsupported, "unsupported: column %s has Iceberg type %s", f.Name, f.Type)
		}
		cols = append(cols, plan.Field{Name: f.Name, Type: t, Nullable: !f.Required})
		ids[f.Name] = f.ID
	}
	return cols, ids, nil
}

// Plan lists the files a scan of snapshot s reads when its filter is
// filter (nil: all), pruning manifests by their partition summaries and
// data files by partition values and column bounds (iceberg-go's
// evaluators) before any data file is opened. Equality deletes and
// deletion vectors are refused (SL005): reading past them would give
// deleted rows.
//
// pinned says s was named (time travel): the filter's names are then
// those of s's schema, else those of the current schema.
func (t *Table) Plan(ctx context.Context, name string, s *table.Snapshot, pinned bool, filter iceberggo.BooleanExpression) (*layout.ScanPlan, error) {
	return t.plan(ctx, name, s, pinned, filter, true)
}

// Files lists all data files of snapshot s, for the catalog's row and
// byte counts: as Plan with no filter, but a file with equality deletes
// or deletion vectors is listed (Plan refuses it when a scan reads it).
func (t *Table) Files(ctx context.Context, name string, s *table.Snapshot) (*layout.ScanPlan, error) {
	return t.plan(ctx, name, s, true, nil, false)
}

func (t *Table) plan(ctx context.Context, name string, s *table.Snapshot, pinned bool, filter iceberggo.BooleanExpression, strict bool) (*layout.ScanPlan, error) {
	if s == nil {
		return &layout.ScanPlan{}, nil
	}
	if filter == nil {
		filter = iceberggo.AlwaysTrue{}
	}
	rep := &reporter{}
	opts := []table.ScanOption{table.WithRowFilter(filter), table.WithCaseSensitive(false), table.WithReporter(rep), table.WithMaxConcurrency(4)}
	if pinned || t.tbl.Metadata().CurrentSnapshot() == nil || t.tbl.Metadata().CurrentSnapshot().SnapshotID != s.SnapshotID {
		// A named snapshot binds the filter to its own schema; the
		// current one (no option) to the current schema.
		opts = append(opts, table.WithSnapshotID(s.SnapshotID))
	}
	scan := t.tbl.Scan(opts...)
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("table %s: plan iceberg scan of snapshot %d: %w", name, s.SnapshotID, err)
	}
	out := &layout.ScanPlan{}
	seen := map[string]bool{}
	deletes := map[string]bool{}
	for _, task := range tasks {
		df := task.File
		if strict && len(task.EqualityDeleteFiles) > 0 {
			return nil, plan.Errorf(plan.CodeUnsupported, "unsupported: table %s: Iceberg equality deletes (file %s has %d): sluice applies position deletes only",
				name, df.FilePath(), len(task.EqualityDeleteFiles))
		}
		if strict && len(task.DeletionVectorFiles) > 0 {
			return nil, plan.Errorf(plan.CodeUnsupported, "unsupported: table %s: Iceberg deletion vectors (file %s): sluice applies position-delete files only", name, df.FilePath())
		}
		if df.FileFormat() != iceberggo.ParquetFile {
			return nil, plan.Errorf(plan.CodeUnsupported, "unsupported: table %s: data file %s is %s: sluice reads Parquet data files only", name, df.FilePath(), df.FileFormat())
		}
		key, err := t.fs.Key(df.FilePath())
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		f, err := t.dataFile(ctx, key, df)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		for _, d := range task.DeleteFiles {
			if d.FileFormat() != iceberggo.ParquetFile {
				return nil, plan.Errorf(plan.CodeUnsupported, "unsupported: table %s: delete file %s is %s: sluice reads Parquet delete files only", name, d.FilePath(), d.FileFormat())
			}
			dk, err := t.fs.Key(d.FilePath())
			if err != nil {
				return nil, fmt.Errorf("table %s: %w", name, err)
			}
			f.Deletes = append(f.Deletes, dk)
			deletes[dk] = true
		}
		sort.Strings(f.Deletes)
		out.Files = append(out.Files, f)
	}
	sort.Slice(out.Files, func(i, j int) bool { return out.Files[i].Key < out.Files[j].Key })
	out.DeleteFiles = len(deletes)
	m := rep.metrics
	out.Manifests = int(counter(m.TotalDataManifests))
	out.ManifestsPruned = int(counter(m.SkippedDataManifests))
	out.DataFilesPruned = int(counter(m.SkippedDataFiles))
	out.DataFiles = len(out.Files) + out.DataFilesPruned
	return out, nil
}

func counter(c *metrics.CounterResult) int64 {
	if c == nil {
		return 0
	}
	return c.Value
}

// dataFile describes a data file from its manifest entry: its row groups
// from the split offsets (their rows shared out by bytes: estimates for
// the planner; the scan reads each row group whole), with no footer read.
// A file without split offsets has its footer read.
func (t *Table) dataFile(ctx context.Context, key string, df iceberggo.DataFile) (layout.File, error) {
	f := layout.File{Key: key, Size: df.FileSizeBytes()}
	offs := df.SplitOffsets()
	valid := len(offs) > 0
	for i, o := range offs {
		if o < 4 || o >= f.Size || (i > 0 && o <= offs[i-1]) {
			valid = false
		}
	}
	if !valid {
		ra := objstore.NewReaderAt(ctx, t.fs.b, key, f.Size)
		pf, err := file.NewParquetReader(ra)
		if err != nil {
			return layout.File{}, fmt.Errorf("read parquet footer of %s: %w", key, err)
		}
		defer pf.Close()
		md := pf.MetaData()
		for i := 0; i < md.NumRowGroups(); i++ {
			rg := md.RowGroup(i)
			f.RowGroups = append(f.RowGroups, layout.RowGroup{Rows: rg.NumRows(), Bytes: rg.TotalCompressedSize()})
		}
		return f, nil
	}
	total := f.Size - offs[0]
	rows := df.Count()
	var given int64
	for i, o := range offs {
		end := f.Size
		if i+1 < len(offs) {
			end = offs[i+1]
		}
		rg := layout.RowGroup{Bytes: end - o}
		if i == len(offs)-1 {
			rg.Rows = rows - given
		} else if total > 0 {
			rg.Rows = int64(float64(rows) * float64(rg.Bytes) / float64(total))
		}
		given += rg.Rows
		f.RowGroups = append(f.RowGroups, rg)
	}
	return f, nil
}

// reporter keeps the scan report of one scan's planning.
type reporter struct {
	metrics metrics.ScanMetricsResult
}

func (r *reporter) Report(_ context.Context, report metrics.MetricsReport) {
	switch rep := report.(type) {
	case metrics.ScanReport:
		r.metrics = rep.Metrics
	case *metrics.ScanReport:
		r.metrics = rep.Metrics
	}
}

func (r *reporter) Close() error { return nil }
