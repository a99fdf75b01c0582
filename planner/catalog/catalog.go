// Package catalog keeps sluice's table catalog in Redis: every registered
// table's schema (from Parquet footers), its files and their row groups,
// and its row and byte counts.
package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	icecat "github.com/apache/iceberg-go/catalog"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/function/redisdb"
	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// Table is a registered table.
type Table struct {
	Name     string           `json:"name"`
	Format   string           `json:"format"`
	Location string           `json:"location"` // bucket prefix of its files
	CSV      *plan.CSVFormat  `json:"csv,omitempty"`
	JSON     *plan.JSONFormat `json:"json,omitempty"`
	Columns  []plan.Field     `json:"columns"`
	Files    []layout.File    `json:"files"`
	Rows     int64            `json:"rows"`
	Bytes    int64            `json:"bytes"`
	// RowsEstimated is true when Rows is an estimate (CSV: the bytes over
	// the sampled average line length), not counted.
	RowsEstimated bool `json:"rows_estimated,omitempty"`
	// External tables (CREATE EXTERNAL TABLE) are re-listed whenever a
	// query uses them (Store.Bucket set), so new files under the location
	// are seen without registering the table again.
	External bool `json:"external,omitempty"`
	// Partitions are the hive partition columns (key=value folders under
	// the location; see applyPartitions), also in Columns.
	Partitions []plan.Field `json:"partitions,omitempty"`
	// NoHive reads key=value folders as plain folders
	// (hive_partitioning=false): no partition columns.
	NoHive bool `json:"no_hive,omitempty"`
	// Schema is the declared column list, when one was given: its types
	// win over the files' and the partition folders'.
	Schema []plan.Field `json:"schema,omitempty"`
	// View is the query text of a view (CREATE VIEW; Format "view"), which
	// has no files: its Columns are the query's output when it was made.
	View string `json:"view,omitempty"`
	// Iceberg is set for an Iceberg table (Format "iceberg"): the metadata
	// file and snapshot its Columns and Files are of (see iceberg.go).
	Iceberg *layout.Iceberg `json:"iceberg,omitempty"`
	// Skipped are the files' columns of types sluice does not read: left
	// out of Columns (a reference to one is SL005) and named in a warning
	// when the table is registered.
	Skipped []planner.SkippedColumn `json:"skipped,omitempty"`
	// Distinct estimates the distinct values of plain columns, by name,
	// from the Parquet footers when the table was registered (distinct.go);
	// a column without one is taken as unique. Files a re-list adds do
	// not change it.
	Distinct map[string]int64 `json:"distinct,omitempty"`
}

// RowsText renders the row count for people: "1234", or "~1234
// (estimated)" when it is an estimate.
func (t *Table) RowsText() string {
	if t.RowsEstimated {
		return fmt.Sprintf("~%d (estimated)", t.Rows)
	}
	return fmt.Sprint(t.Rows)
}

// Store is the catalog in Redis (the hash redisdb.CatalogKey).
type Store struct {
	rdb redis.UniversalClient
	// Retry is how long every read and write waits for an unreachable
	// Redis before it fails with redisdb.ErrUnavailable: the same outage
	// bound as the coordinator's job store.
	Retry redisdb.Retry
	// Bucket, when set, is where external tables' files are re-listed
	// when a query plans or runs against them (Relist); without it a
	// table's files are those found at registration.
	Bucket objstore.Bucket
	// BucketName is the name of Bucket: s3:// paths a query reads
	// (ReadFiles) must name it.
	BucketName string
	// Iceberg, when set, is an Iceberg catalog (--iceberg-catalog) whose
	// tables are found as "namespace.table" (icebergcat.go).
	Iceberg icecat.Catalog
}

// NewStore returns the catalog kept in rdb, waiting up to two minutes for
// an unreachable Redis (as coordinator.NewStore does).
func NewStore(rdb redis.UniversalClient) *Store {
	return &Store{rdb: rdb, Retry: redisdb.Retry{Outage: 2 * time.Minute}}
}

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,62}$`)

// CheckName says whether name can name a table: a letter or _, then up to
// 62 letters, digits, _ or - (a name with - or capitals is queried as a
// quoted identifier, "My-Table"). Names keep their case for display and
// are looked up regardless of case, as in DuckDB. A name becomes a Redis
// field and the folder of a CREATE TABLE AS table's files, so nothing else
// (no /, no ..) gets in.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("invalid table name %q: use a letter or _ then letters, digits, _ or - (at most 63)", name)
	}
	return nil
}

// key is the catalog key of a table name: its lower-case form.
func key(name string) string { return strings.ToLower(name) }

// Put registers or replaces a table (a table whose name differs only in
// case is the same table).
func (s *Store) Put(ctx context.Context, t *Table) error {
	if err := CheckName(t.Name); err != nil {
		return err
	}
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	err = s.Retry.Do(ctx, "hset", func() error { return s.rdb.HSet(ctx, redisdb.CatalogKey, key(t.Name), b).Err() })
	if err != nil {
		return fmt.Errorf("register table %s: %w", t.Name, err)
	}
	return nil
}

// Get returns a registered table, or an error wrapping
// planner.ErrUnknownTable when name is not registered.
func (s *Store) Get(ctx context.Context, name string) (*Table, error) {
	var b []byte
	err := s.Retry.Do(ctx, "get table", func() (err error) {
		b, err = s.rdb.HGet(ctx, redisdb.CatalogKey, key(name)).Bytes()
		return err
	})
	if errors.Is(err, redis.Nil) {
		if s.Iceberg != nil && strings.Contains(name, ".") {
			return s.icebergCatalogTable(ctx, name)
		}
		return nil, fmt.Errorf("%w: %s", planner.ErrUnknownTable, name)
	}
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	var t Table
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("decode table %s: %w", name, err)
	}
	return &t, nil
}

// List returns every registered table, by name.
func (s *Store) List(ctx context.Context) ([]*Table, error) {
	var m map[string]string
	err := s.Retry.Do(ctx, "list tables", func() (err error) {
		m, err = s.rdb.HGetAll(ctx, redisdb.CatalogKey).Result()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	var out []*Table
	for _, v := range m {
		var t Table
		if err := json.Unmarshal([]byte(v), &t); err != nil {
			return nil, err
		}
		out = append(out, &t)
	}
	if s.Iceberg != nil {
		ts, err := s.icebergCatalogList(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i].Name) < key(out[j].Name) })
	return out, nil
}

// Drop removes a table from the catalog (its files stay).
func (s *Store) Drop(ctx context.Context, name string) error {
	return s.Retry.Do(ctx, "drop table", func() error { return s.rdb.HDel(ctx, redisdb.CatalogKey, key(name)).Err() })
}

// current returns a table, re-listing an external table's location first
// (and saving the new file list when it changed).
func (s *Store) current(ctx context.Context, name string) (*Table, error) {
	if isRead(name) {
		return s.getRead(ctx, name) // listed by ReadFiles when the query was planned
	}
	if base, ref, ok := strings.Cut(name, "@"); ok {
		return s.snapshotOf(ctx, base, ref)
	}
	t, err := s.Get(ctx, name)
	if err == nil && t.Iceberg != nil {
		return s.refreshIceberg(ctx, t)
	}
	if err != nil || !t.External || s.Bucket == nil {
		return t, err
	}
	changed, err := Relist(ctx, s.Bucket, t)
	if err != nil {
		return nil, err
	}
	if changed {
		if err := s.Put(ctx, t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Layout implements coordinator.Tables.
func (s *Store) Layout(ctx context.Context, name string) (*layout.Table, error) {
	t, err := s.current(ctx, name)
	if err != nil {
		return nil, err
	}
	return &layout.Table{Format: t.Format, CSV: t.CSV, JSON: t.JSON, Partitions: t.Partitions, Files: t.Files, Iceberg: t.Iceberg}, nil
}

// Table implements planner.Catalog.
func (s *Store) Table(ctx context.Context, name string) (*planner.TableInfo, error) {
	t, err := s.current(ctx, name)
	if err != nil {
		return nil, err
	}
	return &planner.TableInfo{Name: t.Name, Format: t.Format, Columns: t.Columns, Rows: t.Rows, Bytes: t.Bytes, View: t.View, Skipped: t.Skipped, Distinct: t.Distinct}, nil
}

// Inspect builds a table's catalog entry from the Parquet files at prefix
// (a prefix ending in "/", or one file; see ListFiles): the schema from the footers (all files must agree), and the row
// groups of every file. It reads footers only, through ranged GETs.
func Inspect(ctx context.Context, b objstore.Bucket, name, prefix string) (*Table, error) {
	return InspectParquet(ctx, b, name, prefix, ParquetOptions{})
}

// ParquetOptions say how to read a Parquet table.
type ParquetOptions struct {
	// Schema, when set, declares the types of hive partition keys; it
	// names nothing else (the files give the other columns).
	Schema []plan.Field
	// NoHive reads key=value folders as plain folders.
	NoHive bool
}

// InspectParquet is Inspect with options.
func InspectParquet(ctx context.Context, b objstore.Bucket, name, prefix string, opts ParquetOptions) (*Table, error) {
	objs, err := ListFiles(ctx, b, prefix, ".parquet")
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	t := &Table{Name: name, Format: "parquet", Location: prefix, Schema: opts.Schema, NoHive: opts.NoHive}
	var fileCols []plan.Field
	distinct := map[string]*distinctAcc{}
	for _, o := range objs {
		f, cols, skipped, err := inspectFile(ctx, b, o, distinct)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		if fileCols == nil {
			fileCols, t.Skipped = cols, skipped
		} else if !sameColumns(fileCols, cols) || !slices.Equal(t.Skipped, skipped) {
			return nil, fmt.Errorf("table %s: file %s has a different schema than the others", name, o.Key)
		}
		t.Files = append(t.Files, f)
		for _, rg := range f.RowGroups {
			t.Rows += rg.Rows
		}
		t.Bytes += f.Size
	}
	if len(t.Files) == 0 {
		return nil, fmt.Errorf("table %s: no .parquet files under %s", name, prefix)
	}
	if err := applyPartitions(t, fileCols); err != nil {
		return nil, err
	}
	for name, a := range distinct {
		if n := a.estimate(); n > 0 {
			if t.Distinct == nil {
				t.Distinct = map[string]int64{}
			}
			t.Distinct[name] = n
		}
	}
	if len(t.Skipped) > 0 {
		var names []string
		for _, s := range t.Skipped {
			names = append(names, s.Name+" ("+s.Type+")")
		}
		slog.WarnContext(ctx, "table registered without columns of unsupported types", "table", name, "columns", strings.Join(names, ", "))
	}
	return t, nil
}

// SkippedText names a table's left-out columns for people ("" when none):
// "column x (type) is left out: its type is not supported".
func (t *Table) SkippedText() string {
	if len(t.Skipped) == 0 {
		return ""
	}
	var names []string
	for _, s := range t.Skipped {
		names = append(names, s.Name+" ("+s.Type+")")
	}
	return fmt.Sprintf("table %s: columns left out, their types are not supported: %s", t.Name, strings.Join(names, ", "))
}

// inspectFile reads one Parquet file's footer: its row groups, its
// columns, and (into distinct, when not nil, by top-level column name)
// each plain column's distinct-value bounds.
func inspectFile(ctx context.Context, b objstore.Bucket, o objstore.ObjectInfo, distinct map[string]*distinctAcc) (layout.File, []plan.Field, []planner.SkippedColumn, error) {
	ra := objstore.NewReaderAt(ctx, b, o.Key, o.Size, objstore.WithVersion(o.ETag, nil))
	pf, err := file.NewParquetReader(ra)
	if err != nil {
		return layout.File{}, nil, nil, fmt.Errorf("read parquet footer of %s: %w", o.Key, err)
	}
	defer pf.Close()
	md := pf.MetaData()
	sch, err := pqarrow.FromParquet(md.Schema, nil, md.KeyValueMetadata())
	if err != nil {
		return layout.File{}, nil, nil, fmt.Errorf("schema of %s: %w", o.Key, err)
	}
	cols := make([]plan.Field, 0, sch.NumFields())
	var skipped []planner.SkippedColumn
	for _, f := range sch.Fields() {
		t, ok := plan.FromArrow(f.Type)
		if !ok {
			skipped = append(skipped, planner.SkippedColumn{Name: f.Name, Type: f.Type.String()})
			continue
		}
		cols = append(cols, plan.Field{Name: f.Name, Type: t, Nullable: f.Nullable}) // as written: lookups ignore case
	}
	out := layout.File{Key: o.Key, Size: o.Size, ETag: o.ETag}
	for i := 0; i < md.NumRowGroups(); i++ {
		rg := md.RowGroup(i)
		var compressed int64
		for c := 0; c < rg.NumColumns(); c++ {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				continue
			}
			compressed += cc.TotalCompressedSize()
			if path := cc.PathInSchema(); distinct != nil && len(path) == 1 {
				a := distinct[path[0]]
				if a == nil {
					a = &distinctAcc{}
					distinct[path[0]] = a
				}
				a.add(cc, rg.NumRows())
			}
		}
		out.RowGroups = append(out.RowGroups, layout.RowGroup{Rows: rg.NumRows(), Bytes: compressed})
	}
	return out, cols, skipped, nil
}

func sameColumns(a, b []plan.Field) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Type != b[i].Type {
			return false
		}
	}
	return true
}
