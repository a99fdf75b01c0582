package tests

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	iceberggo "github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/sluicedb/sluice/local"
	"github.com/sluicedb/sluice/planner/catalog"
	"github.com/sluicedb/sluice/planner/catalog/iceberg"
)

// TestIcebergSQLCatalog: tables written with iceberg-go through its SQL
// catalog (SQLite, pure Go) into the stack's bucket are sluice tables
// named namespace.table when the stack runs with that catalog
// (local.Options.IcebergCatalog, as --iceberg-catalog): SHOW TABLES lists
// them, queries answer as DuckDB reading the same live data files, a
// commit made through the catalog is seen by the next query, time travel
// works on them, and a name the catalog lacks is SL002.
func TestIcebergSQLCatalog(t *testing.T) { testIcebergCatalog(t, false) }

// TestIcebergRESTCatalog: the same through the Iceberg REST protocol:
// sluice's catalog is iceberg-go's REST client (--iceberg-catalog
// rest:URI), talking HTTP to a REST server (icebergRESTServer) whose
// answers are those of iceberg-go's SQL catalog holding the tables.
func TestIcebergRESTCatalog(t *testing.T) { testIcebergCatalog(t, true) }

func testIcebergCatalog(t *testing.T, viaREST bool) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "catalog.db")
	// A first stack only provides the object store (its MinIO); the
	// stack under test is started on it with the catalog, whose S3
	// properties need the endpoint.
	store := startStack(t, "", nil)
	s3 := store.S3
	endpoint := s3.Endpoint
	if !strings.Contains(endpoint, "://") {
		endpoint = "http://" + endpoint
	}
	q := url.Values{}
	q.Set("warehouse", fmt.Sprintf("s3://%s/wh", s3.Bucket))
	q.Set("s3.endpoint", endpoint)
	q.Set("s3.region", "us-east-1")
	q.Set("s3.access-key-id", s3.AccessKey)
	q.Set("s3.secret-access-key", s3.SecretKey)
	q.Set("s3.force-virtual-addressing", "false")
	spec := "sql:sqlite:" + dbPath + "?" + q.Encode()

	// Write the tables with iceberg-go's own SQL catalog.
	writer, err := catalog.OpenIcebergCatalog(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"lake", "ops"} {
		if err := writer.CreateNamespace(ctx, table.Identifier{ns}, nil); err != nil {
			t.Fatal(err)
		}
	}
	sc := iceberggo.NewSchema(0,
		iceberggo.NestedField{ID: 1, Name: "id", Type: iceberggo.PrimitiveTypes.Int64, Required: true},
		iceberggo.NestedField{ID: 2, Name: "ts", Type: iceberggo.PrimitiveTypes.Timestamp, Required: true},
		iceberggo.NestedField{ID: 3, Name: "val", Type: iceberggo.PrimitiveTypes.Float64},
		iceberggo.NestedField{ID: 4, Name: "cat", Type: iceberggo.PrimitiveTypes.String},
	)
	pspec := iceberggo.NewPartitionSpec(
		iceberggo.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "ts_day", Transform: iceberggo.DayTransform{}},
		iceberggo.PartitionField{SourceIDs: []int{1}, FieldID: 1001, Name: "id_bucket", Transform: iceberggo.BucketTransform{NumBuckets: 16}},
	)
	events, err := writer.CreateTable(ctx, table.Identifier{"lake", "events"}, sc, icecat.WithPartitionSpec(&pspec),
		icecat.WithProperties(iceberggo.Properties{"format-version": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	small, err := writer.CreateTable(ctx, table.Identifier{"ops", "small"}, sc)
	if err != nil {
		t.Fatal(err)
	}
	day0 := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	appendRows := func(tbl *table.Table, first, n int, day time.Time) *table.Table {
		t.Helper()
		asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
		if err != nil {
			t.Fatal(err)
		}
		data := icebergRows(t, asc, first, n, day)
		defer data.Release()
		tx := tbl.NewTransaction()
		if err := tx.AppendTable(ctx, data, 1000, nil); err != nil {
			t.Fatal(err)
		}
		next, err := tx.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
		return next
	}
	events = appendRows(events, 0, 300, day0)
	first := events.CurrentSnapshot().SnapshotID
	events = appendRows(events, 300, 300, day0.AddDate(0, 0, 4))
	small = appendRows(small, 1000, 50, day0)

	served := spec
	var rs *restServer
	if viaREST {
		rs = icebergRESTServer(t, writer)
		q.Del("warehouse")
		served = "rest:" + rs.url + "?" + q.Encode()
	}
	st := startStack(t, "", func(o *local.Options) {
		o.S3 = s3
		o.IcebergCatalog = served
	})

	// DuckDB reads the live data files of a snapshot, downloaded.
	fs := iceberg.NewFS(ctx, st.Bucket, s3.Bucket)
	dir := t.TempDir()
	conn, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	view := func(name string, tbl *table.Table, snap int64) {
		t.Helper()
		tasks, err := tbl.Scan(table.WithSnapshotID(snap)).PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, task := range tasks {
			if len(task.DeleteFiles) > 0 {
				t.Fatal("the catalog test writes no deletes")
			}
			k, err := fs.Key(task.File.FilePath())
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, filepath.FromSlash(k))
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
			paths = append(paths, "'"+p+"'")
		}
		if len(paths) == 0 {
			t.Fatalf("%s: no data files", name)
		}
		if _, err := db.Exec(fmt.Sprintf("create or replace view %s as select * from read_parquet([%s])", name, strings.Join(paths, ", "))); err != nil {
			t.Fatal(err)
		}
	}
	view("ev", events, events.CurrentSnapshot().SnapshotID)
	view("ev0", events, first)
	view("sm", small, small.CurrentSnapshot().SnapshotID)

	show := fmt.Sprint(sluiceRows(stmt(t, st, "show tables")))
	for _, name := range []string{"lake.events", "ops.small"} {
		if !strings.Contains(show, name) {
			t.Fatalf("show tables: %s, want %s", show, name)
		}
	}
	for _, tc := range []struct{ sluice, duck string }{
		{"select count(*), sum(val), min(ts), max(ts) from lake.events", "select count(*), sum(val), min(ts), max(ts) from ev"},
		{"select cat, count(*), avg(val) from lake.events group by cat", "select cat, count(*), avg(val) from ev group by cat"},
		{"select count(*) from lake.events where ts >= timestamp '2024-03-05 00:00:00'", "select count(*) from ev where ts >= timestamp '2024-03-05 00:00:00'"},
		{"select id, val from lake.events where id = 7920", "select id, val from ev where id = 7920"},
		{`select count(*), sum(val) from "lake.events"`, "select count(*), sum(val) from ev"},
		{"select s.cat, count(*) from ops.small s join lake.events e on s.cat = e.cat group by s.cat", "select s.cat, count(*) from sm s join ev e on s.cat = e.cat group by s.cat"},
		{fmt.Sprintf("select count(*), sum(val) from lake.events for version as of %d", first), "select count(*), sum(val) from ev0"},
	} {
		want := duckRows(t, db, tc.duck)
		if len(want) == 0 {
			t.Fatalf("DuckDB found no rows for %s", tc.duck)
		}
		for _, adaptive := range []bool{true, false} {
			compareRows(t, sluiceRows(run(t, st, tc.sluice, adaptive)), want, false)
		}
	}

	// A commit through the catalog is seen by the next query.
	events = appendRows(events, 600, 100, day0.AddDate(0, 0, 8))
	view("ev", events, events.CurrentSnapshot().SnapshotID)
	q1 := "select count(*), sum(val), max(ts) from %s"
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(q1, "lake.events"), true)), duckRows(t, db, fmt.Sprintf(q1, "ev")), false)

	if ae := stmtErr(t, st, "select count(*) from lake.nothing"); ae.Code != "SL002" {
		t.Fatalf("a table the catalog lacks: %+v", ae)
	}
	if ae := stmtErr(t, st, "select count(*) from nope.events"); ae.Code != "SL002" {
		t.Fatalf("a namespace the catalog lacks: %+v", ae)
	}
	if viaREST {
		calls := rs.calls()
		t.Logf("REST requests: %v", calls)
		for _, k := range []string{"config", "namespaces", "tables", "load"} {
			if calls[k] == 0 {
				t.Errorf("no %s request reached the REST server: %v", k, calls)
			}
		}
	}
}
