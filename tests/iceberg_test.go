package tests

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	iceberggo "github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/sluicedb/sluice/planner/catalog/iceberg"
)

// icebergCatalog is the smallest catalog iceberg-go commits through: one
// table whose metadata files are vN.metadata.json under its location,
// with version-hint.text naming the newest (as Hadoop tables are kept).
type icebergCatalog struct {
	fs      *iceberg.FS
	loc     string // s3://bucket/prefix
	version int
	tbl     *table.Table
}

func (c *icebergCatalog) fsys(context.Context) (icebergio.IO, error) { return c.fs, nil }

func (c *icebergCatalog) write(md table.Metadata) (string, error) {
	c.version++
	loc := fmt.Sprintf("%s/metadata/v%d.metadata.json", c.loc, c.version)
	b, err := json.Marshal(md)
	if err != nil {
		return "", err
	}
	if err := c.fs.WriteFile(loc, b); err != nil {
		return "", err
	}
	return loc, c.fs.WriteFile(c.loc+"/metadata/version-hint.text", []byte(fmt.Sprint(c.version)))
}

func (c *icebergCatalog) LoadTable(context.Context, table.Identifier) (*table.Table, error) {
	return c.tbl, nil
}

func (c *icebergCatalog) CommitTable(_ context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	for _, r := range reqs {
		if err := r.Validate(c.tbl.Metadata()); err != nil {
			return nil, "", err
		}
	}
	md, err := table.UpdateTableMetadata(c.tbl.Metadata(), updates, "")
	if err != nil {
		return nil, "", err
	}
	loc, err := c.write(md)
	if err != nil {
		return nil, "", err
	}
	c.tbl = table.New(ident, md, loc, c.fsys, c)
	return md, loc, nil
}

// icebergRows builds n rows of the test table from row first on: ids
// spread over the buckets, timestamps over days (day0 + i/perDay), and the
// columns of the schema at that time (note only once it exists).
func icebergRows(t *testing.T, sc *arrow.Schema, first, n int, day0 time.Time) arrow.Table {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := first; i < first+n; i++ {
		for c, f := range sc.Fields() {
			fb := b.Field(c)
			switch f.Name {
			case "id":
				fb.(*array.Int64Builder).Append(int64(i*7919%100000 + i))
			case "ts":
				ts := day0.Add(time.Duration(i-first) * 24 * time.Hour / time.Duration(n) * 5).Add(time.Duration(i%3600) * time.Second)
				fb.(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
			case "val", "amount":
				if i%17 == 0 {
					fb.AppendNull()
				} else {
					fb.(*array.Float64Builder).Append(float64(i%1000) / 4)
				}
			case "cat":
				fb.(*array.StringBuilder).Append(string(rune('a' + i%5)))
			case "note":
				fb.(*array.StringBuilder).Append(fmt.Sprintf("n%d", i%3))
			default:
				t.Fatalf("no data for column %s", f.Name)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
}

// icebergSnapshot is what the oracle knows of one snapshot: its id and
// time, and its live data and position-delete files as iceberg-go plans
// them.
type icebergSnapshot struct {
	id      int64
	ms      int64
	data    []string // keys
	deletes []string
	// offsets counts the data files whose manifest entries have split
	// offsets (the catalog's row groups come from them, no footer read).
	offsets int
}

func planSnapshot(t *testing.T, fs *iceberg.FS, tbl *table.Table, id int64) icebergSnapshot {
	t.Helper()
	tasks, err := tbl.Scan(table.WithSnapshotID(id)).PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := icebergSnapshot{id: id, ms: tbl.Metadata().SnapshotByID(id).TimestampMs}
	seen := map[string]bool{}
	for _, task := range tasks {
		k, err := fs.Key(task.File.FilePath())
		if err != nil {
			t.Fatal(err)
		}
		s.data = append(s.data, k)
		if len(task.File.SplitOffsets()) > 0 {
			s.offsets++
		}
		for _, d := range task.DeleteFiles {
			dk, _ := fs.Key(d.FilePath())
			if !seen[dk] {
				seen[dk] = true
				s.deletes = append(s.deletes, dk)
			}
		}
	}
	return s
}

// TestIceberg: an Iceberg table written with iceberg-go (format v2,
// partitioned by day(ts) and bucket(16, id)) over 3 appends, a rename
// and an added column, then a merge-on-read delete (position deletes),
// answers as DuckDB does over the same live data files (downloaded; the
// old files' val is the new amount by field id; deleted positions taken
// out by an anti-join on file_row_number), at the current snapshot and at
// every snapshot by time travel; filters prune manifests and data files
// before any file is opened, and EXPLAIN says how many.
func TestIceberg(t *testing.T) {
	ctx := context.Background()
	st := startStack(t, "", nil)
	bucket := st.S3.Bucket
	fs := iceberg.NewFS(ctx, st.Bucket, bucket)
	loc := fmt.Sprintf("s3://%s/lake/events", bucket)

	sc := iceberggo.NewSchema(0,
		iceberggo.NestedField{ID: 1, Name: "id", Type: iceberggo.PrimitiveTypes.Int64, Required: true},
		iceberggo.NestedField{ID: 2, Name: "ts", Type: iceberggo.PrimitiveTypes.Timestamp, Required: true},
		iceberggo.NestedField{ID: 3, Name: "val", Type: iceberggo.PrimitiveTypes.Float64},
		iceberggo.NestedField{ID: 4, Name: "cat", Type: iceberggo.PrimitiveTypes.String},
	)
	spec := iceberggo.NewPartitionSpec(
		iceberggo.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "ts_day", Transform: iceberggo.DayTransform{}},
		iceberggo.PartitionField{SourceIDs: []int{1}, FieldID: 1001, Name: "id_bucket", Transform: iceberggo.BucketTransform{NumBuckets: 16}},
	)
	md, err := table.NewMetadata(sc, &spec, table.UnsortedSortOrder, loc, iceberggo.Properties{
		"format-version": "2", table.WriteDeleteModeKey: table.WriteModeMergeOnRead,
		// Several row groups a file: scan splits cut files at the
		// manifests' split offsets, and delete positions span groups.
		table.ParquetRowGroupLimitKey: "2",
	})
	if err != nil {
		t.Fatal(err)
	}
	cat := &icebergCatalog{fs: fs, loc: loc}
	mloc, err := cat.write(md)
	if err != nil {
		t.Fatal(err)
	}
	ident := table.Identifier{"lake", "events"}
	cat.tbl = table.New(ident, md, mloc, cat.fsys, cat)

	day0 := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	appendRows := func(first, n int, day time.Time) {
		t.Helper()
		asc, err := table.SchemaToArrowSchema(cat.tbl.Schema(), nil, false, false)
		if err != nil {
			t.Fatal(err)
		}
		data := icebergRows(t, asc, first, n, day)
		defer data.Release()
		tx := cat.tbl.NewTransaction()
		if err := tx.AppendTable(ctx, data, 1000, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // distinct snapshot times
	}
	var snaps []int64
	appendRows(0, 400, day0)
	snaps = append(snaps, cat.tbl.CurrentSnapshot().SnapshotID)
	appendRows(400, 400, day0.AddDate(0, 0, 5))
	snaps = append(snaps, cat.tbl.CurrentSnapshot().SnapshotID)

	// Rename val to amount, add note.
	tx := cat.tbl.NewTransaction()
	us := tx.UpdateSchema(true, false).RenameColumn([]string{"val"}, "amount").AddColumn([]string{"note"}, iceberggo.PrimitiveTypes.String, "", false, nil)
	if err := us.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	appendRows(800, 400, day0.AddDate(0, 0, 10))
	snaps = append(snaps, cat.tbl.CurrentSnapshot().SnapshotID)

	// Merge-on-read delete: position-delete files.
	tx = cat.tbl.NewTransaction()
	if err := tx.Delete(ctx, iceberggo.NewAnd(iceberggo.EqualTo(iceberggo.Reference("cat"), "c"), iceberggo.LessThan(iceberggo.Reference("id"), int64(60000))), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	snaps = append(snaps, cat.tbl.CurrentSnapshot().SnapshotID)

	var plans []icebergSnapshot
	for _, id := range snaps {
		plans = append(plans, planSnapshot(t, fs, cat.tbl, id))
	}
	for i, p := range plans {
		t.Logf("snapshot %d (%d): %d data files, %d delete files", i, p.id, len(p.data), len(p.deletes))
	}
	last := plans[len(plans)-1]
	if last.offsets != len(last.data) {
		t.Fatalf("%d of %d data files have split offsets", last.offsets, len(last.data))
	}
	if len(last.deletes) == 0 {
		t.Fatalf("the delete wrote no position-delete files: %+v", last)
	}

	// DuckDB reads the same files, downloaded.
	dir := t.TempDir()
	download := func(keys []string) []string {
		var paths []string
		for _, k := range keys {
			p := filepath.Join(dir, filepath.FromSlash(k))
			if _, err := os.Stat(p); err != nil {
				b, err := st.Bucket.Get(ctx, k)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			paths = append(paths, "'"+p+"'")
		}
		return paths
	}
	conn, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	// view i is snapshot i's live rows in its own schema.
	for i, p := range plans {
		data := download(p.data)
		cols := "id, ts, val, cat"
		if i >= 2 {
			cols = "id, ts, coalesce(amount, val) as amount, cat, note"
		}
		q := fmt.Sprintf("create view s%d as select %s from read_parquet([%s], union_by_name=true, filename=true, file_row_number=true) d", i, cols, strings.Join(data, ", "))
		if len(p.deletes) > 0 {
			q += fmt.Sprintf(" where not exists (select 1 from read_parquet([%s]) x where replace(x.file_path, 's3://%s/', '%s/') = d.filename and x.pos = d.file_row_number)",
				strings.Join(download(p.deletes), ", "), bucket, dir)
		}
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("duckdb: %v\n%s", err, q)
		}
	}
	if _, err := db.Exec(fmt.Sprintf("create view ev as select * from s%d", len(plans)-1)); err != nil {
		t.Fatal(err)
	}
	var groups, files int
	q := fmt.Sprintf("select count(distinct (file_name, row_group_id)), count(distinct file_name) from parquet_metadata([%s])", strings.Join(download(last.data), ", "))
	if err := db.QueryRow(q).Scan(&groups, &files); err != nil || groups <= files {
		t.Fatalf("%d row groups in %d files (%v): want several a file", groups, files, err)
	}

	if ae := stmtErr(t, st, fmt.Sprintf("create external table nothing stored as iceberg location 's3://%s/lake/none/'", bucket)); ae.Code != "SL021" || !strings.Contains(ae.Msg, "no Iceberg metadata file") {
		t.Fatalf("a location without metadata: %+v", ae)
	}
	if ae := stmtErr(t, st, fmt.Sprintf("create external table ev stored as iceberg location '%s/' options (header 'true')", loc)); ae.Code != "SL022" {
		t.Fatalf("OPTIONS on an Iceberg table: %+v", ae)
	}
	// A location naming a metadata file reads that version: the first
	// snapshot's.
	stmt(t, st, fmt.Sprintf("create external table ev1 stored as iceberg location '%s/metadata/v2.metadata.json'", loc))
	compareRows(t, sluiceRows(run(t, st, "select count(*), sum(val) from ev1", true)), duckRows(t, db, "select count(*), sum(val) from s0"), false)
	stmt(t, st, fmt.Sprintf("create external table ev stored as iceberg location '%s/'", loc))
	desc := strings.ToLower(fmt.Sprint(sluiceRows(stmt(t, st, "describe ev"))))
	for _, c := range []string{"id", "ts", "amount", "cat", "note"} {
		if !strings.Contains(desc, c) {
			t.Fatalf("describe ev: %s, want column %s", desc, c)
		}
	}

	for _, tc := range []struct {
		name, q string
		ordered bool
		pruned  bool
	}{
		{"totals", "select count(*), sum(amount), min(ts), max(ts), count(note) from %s", false, false},
		{"count_star", "select count(*) from %s", false, false},
		{"by_cat", "select cat, count(*), sum(amount), avg(amount) from %s group by cat", false, false},
		{"by_note", "select note, count(*), sum(amount) from %s group by note", false, false},
		{"id_eq", "select id, ts, amount, cat, note from %s where id = 7920", false, true},
		{"id_in", "select id, cat from %s where id in (7920, 15840, 23760, 1)", false, true},
		{"one_day", "select cat, count(*), sum(amount) from %s where ts >= timestamp '2024-03-03 00:00:00' and ts < timestamp '2024-03-04 00:00:00' group by cat", false, true},
		{"late_days", "select count(*), max(id) from %s where ts >= timestamp '2024-03-11 00:00:00'", false, true},
		{"amount_range", "select cat, count(*) from %s where amount > 200 group by cat", false, true},
		{"top", "select id, amount, cat from %s where amount is not null order by amount desc, id limit 10", true, false},
		{"self_join", "select a.cat, count(*) from %s a join %[1]s b on a.id = b.id where b.cat <> 'a' group by a.cat", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := duckRows(t, db, fmt.Sprintf(tc.q, "ev"))
			if len(want) == 0 {
				t.Fatal("DuckDB found no rows: the case tests nothing")
			}
			for _, adaptive := range []bool{true, false} {
				res := run(t, st, fmt.Sprintf(tc.q, "ev"), adaptive)
				compareRows(t, sluiceRows(res), want, tc.ordered)
				if p := filesPruned(res); (p > 0) != tc.pruned {
					t.Fatalf("adaptive %v: data files pruned %d, want pruning %v", adaptive, p, tc.pruned)
				}
			}
		})
	}

	// Time travel to every snapshot, by id and by time, in the schema of
	// that snapshot.
	for i, p := range plans {
		q := "select count(*), sum(val), count(distinct cat), min(ts) from %s"
		if i >= 2 {
			q = "select count(*), sum(amount), count(distinct cat), min(ts), count(note) from %s"
		}
		want := duckRows(t, db, fmt.Sprintf(q, fmt.Sprintf("s%d", i)))
		compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(q, fmt.Sprintf(`"ev@%d"`, p.id)), true)), want, false)
		ts := time.UnixMilli(p.ms).UTC().Format("2006-01-02 15:04:05.000")
		compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(q, fmt.Sprintf(`"ev@%s"`, ts)), true)), want, false)
		// Trino's and Spark's syntax, with the table name as qualifier.
		compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(q, fmt.Sprintf("ev for version as of %d", p.id))+" where ev.id >= 0", false)), want, false)
		compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(q, fmt.Sprintf("ev FOR TIMESTAMP AS OF '%s' e", ts))+" where e.id >= 0", true)), want, false)
	}
	if ae := stmtErr(t, st, `select count(*) from "ev@12345"`); ae.Code != "SL002" {
		t.Fatalf("an unknown snapshot: %+v", ae)
	}

	// EXPLAIN: a one-day filter prunes the manifests of the other
	// appends, and the data files of other days.
	ex := fmt.Sprint(sluiceRows(stmt(t, st, "explain select count(*) from ev where ts >= timestamp '2024-03-03 00:00:00' and ts < timestamp '2024-03-04 00:00:00'")))
	day3 := 0
	for _, k := range last.data {
		if strings.Contains(k, "/ts_day=2024-03-03/") {
			day3++
		}
	}
	// Of the snapshot's 4 data manifests (3 appends; the delete dropped a
	// wholly deleted file) the one-day filter keeps the one holding day 3,
	// and of the data files only day 3's are read.
	wantEx := fmt.Sprintf("of 4 manifests pruned, %d of %d data files pruned, %d read, ", len(last.data)-day3, len(last.data), day3)
	if !strings.Contains(ex, "iceberg pruning: stage 0 scan ev: snapshot ") || !strings.Contains(ex, "3 "+wantEx) {
		t.Fatalf("explain shows no manifest and file pruning (want %q): %s", wantEx, ex)
	}
	t.Logf("%s", ex)

	// A column dropped since the last snapshot (a schema change without
	// one) is gone from current reads, and still there in time travel.
	tx = cat.tbl.NewTransaction()
	if err := tx.UpdateSchema(true, false).DeleteColumn([]string{"note"}).Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if ae := stmtErr(t, st, "select note from ev"); ae.Code != "SL003" {
		t.Fatalf("a dropped column: %+v", ae)
	}
	if desc := strings.ToLower(fmt.Sprint(sluiceRows(stmt(t, st, "describe ev")))); strings.Contains(desc, "note") {
		t.Fatalf("describe ev after dropping note: %s", desc)
	}
	if desc := strings.ToLower(fmt.Sprint(sluiceRows(stmt(t, st, fmt.Sprintf(`describe "ev@%d"`, last.id))))); !strings.Contains(desc, "note") {
		t.Fatalf("describe of the last snapshot: %s", desc)
	}
	q = "select cat, count(*), sum(amount) from ev where amount > 100 group by cat"
	compareRows(t, sluiceRows(run(t, st, q, true)), duckRows(t, db, q), false)
	q = "select note, count(*) from %s group by note"
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(q, fmt.Sprintf("ev for version as of %d", last.id)), true)), duckRows(t, db, fmt.Sprintf(q, "ev")), false)

	// Equality deletes are not applied: a scan that would need them is
	// refused (SL005 naming the table and the feature), never answered
	// with the deleted rows; the snapshots before them still read.
	before := cat.tbl.CurrentSnapshot().SnapshotID
	var eqTS time.Time
	if err := db.QueryRow("select ts from ev where id = 7920").Scan(&eqTS); err != nil {
		t.Fatal(err)
	}
	// The partitioned writer wants the partition source columns: the
	// delete's equality fields are id and ts.
	eqSchema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}}}, nil)
	eb := array.NewRecordBuilder(memory.DefaultAllocator, eqSchema)
	eb.Field(0).(*array.Int64Builder).Append(7920)
	eb.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(eqTS.UnixMicro()))
	eqRec := eb.NewRecordBatch()
	eb.Release()
	defer eqRec.Release()
	tx = cat.tbl.NewTransaction()
	err = tx.CommitEqualityDeletes(ctx, []int{1, 2}, func(yield func(arrow.RecordBatch, error) bool) { yield(eqRec, nil) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	ae := stmtErr(t, st, "select count(*) from ev")
	if ae.Code != "SL005" || !strings.Contains(ae.Msg, "ev") || !strings.Contains(ae.Msg, "equality deletes") {
		t.Fatalf("a table with equality deletes: %+v", ae)
	}
	t.Logf("equality deletes: %s %s", ae.Code, ae.Msg)
	// A scan whose filter prunes the files the equality delete applies to
	// (its partition: day 1) needs none.
	q = "select count(*), sum(amount) from ev where ts >= timestamp '2024-03-06 00:00:00'"
	compareRows(t, sluiceRows(run(t, st, q, true)), duckRows(t, db, q), false)
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf("select count(*) from ev for version as of %d", before), true)),
		duckRows(t, db, "select count(*) from ev"), false)
}
