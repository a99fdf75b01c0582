package tests

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/local"
)

// writeHive has DuckDB write q's rows under dir as hive partitions
// (PARTITION_BY by), and uploads every file under prefix. It returns the
// number of files.
func writeHive(t *testing.T, st *local.Stack, db *sql.DB, q, dir, format, by, prefix string) int {
	t.Helper()
	opts := "FORMAT parquet"
	if format == "csv" {
		opts = "FORMAT csv, HEADER true"
	}
	if _, err := db.Exec(fmt.Sprintf("COPY (%s) TO '%s' (%s, PARTITION_BY (%s))", q, dir, opts, by)); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		upload(t, st, path, prefix+filepath.ToSlash(rel))
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// filesPruned sums the files the job's stages pruned by partition.
func filesPruned(res *local.Result) int {
	n := 0
	if res.Status != nil {
		for _, s := range res.Status.Stages {
			n += s.FilesPruned
		}
	}
	return n
}

// TestHivePartitionedTables: external tables over hive-partitioned
// Parquet and CSV layouts (written by DuckDB's PARTITION_BY, NULLs and
// spaces in values included) expose the keys as columns with DuckDB's
// inferred types; answers with and without partition filters match DuckDB
// reading the same files with hive_partitioning, filters on partition
// columns prune files, and a new partition is seen by the next query.
func TestHivePartitionedTables(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	bucket := st.S3.Bucket
	out := t.TempDir()

	src := `select o_orderkey, o_totalprice, o_orderdate, year(o_orderdate) as yr, o_orderstatus as status,
		case when o_orderpriority like '1%' then null else o_orderpriority end as prio from orders`
	pqDir := filepath.Join(out, "pq")
	files := writeHive(t, st, db, src+" where year(o_orderdate) < 1998", pqDir, "parquet", "yr, status, prio", "hive/orders/")
	csvDir := filepath.Join(out, "csv")
	writeHive(t, st, db, src, csvDir, "csv", "status, yr", "hive/orders_csv/")

	keys, _ := st.Bucket.List(context.Background(), "hive/orders/")
	var null, space bool
	for _, k := range keys {
		null = null || strings.Contains(k.Key, "prio=__HIVE_DEFAULT_PARTITION__/")
		space = space || strings.Contains(k.Key, "prio=4-NOT%20SPECIFIED/")
	}
	if !null || !space {
		t.Fatalf("DuckDB's layout has no NULL (%v) or URL-encoded (%v) partition: %v", null, space, keys[:3])
	}
	stmt(t, st, fmt.Sprintf("create external table ho stored as parquet location 's3://%s/hive/orders/'", bucket))
	stmt(t, st, fmt.Sprintf("create external table hc (o_orderkey bigint, o_totalprice decimal(15,2), o_orderdate date, prio varchar, status varchar, yr bigint) stored as csv location 's3://%s/hive/orders_csv/'", bucket))
	duck := func(sub string) string {
		return fmt.Sprintf("read_parquet('%s/**/*.parquet', hive_partitioning=true)", sub)
	}
	duckCSV := fmt.Sprintf("read_csv('%s/**/*.csv', hive_partitioning=true, header=true)", csvDir)

	for _, tc := range []struct {
		name, q string
		table   string // sluice table; DuckDB reads the same files
		duck    string
		pruned  bool
	}{
		{"all", "select yr, status, prio, count(*), sum(o_totalprice) from %s group by 1, 2, 3", "ho", duck(pqDir), false},
		{"eq", "select status, count(*), min(o_orderkey) from %s where yr = 1995 group by status", "ho", duck(pqDir), true},
		{"range_in", "select yr, count(*) from %s where yr >= 1994 and status in ('F', 'P') group by yr", "ho", duck(pqDir), true},
		{"null", "select yr, count(*) from %s where prio is null group by yr", "ho", duck(pqDir), true},
		{"space", "select yr, count(*) from %s where prio = '4-NOT SPECIFIED' and o_totalprice > 100000 group by yr", "ho", duck(pqDir), true},
		{"or_file_col", "select count(*) from %s where yr = 1993 or o_orderkey < 100", "ho", duck(pqDir), false},
		{"typeof", "select distinct yr + 1, status || 'x' from %s", "ho", duck(pqDir), false},
		{"only_partitions", "select yr, status, count(*) from %s where prio is not null group by 1, 2", "ho", duck(pqDir), true},
		{"count_star", "select count(*) from %s", "ho", duck(pqDir), false},
		{"csv_only_partitions", "select yr, status, count(*) from %s group by 1, 2", "hc", duckCSV, false},
		{"csv_all", "select status, yr, count(*), sum(o_totalprice) from %s group by 1, 2", "hc", duckCSV, false},
		{"csv_eq", "select prio, count(*) from %s where status = 'F' and yr < 1994 group by prio", "hc", duckCSV, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, st, fmt.Sprintf(tc.q, tc.table), true)
			want := duckRows(t, db, fmt.Sprintf(tc.q, tc.duck))
			if len(want) == 0 {
				t.Fatal("DuckDB found no rows: the case tests nothing")
			}
			compareRows(t, sluiceRows(res), want, false)
			if p := filesPruned(res); (p > 0) != tc.pruned {
				t.Fatalf("files pruned %d, want pruning %v", p, tc.pruned)
			}
		})
	}

	// EXPLAIN shows the files a partition filter prunes; EXPLAIN ANALYZE
	// the stage's count.
	ex := fmt.Sprint(sluiceRows(stmt(t, st, "explain select count(*) from ho where yr = 1995")))
	if !strings.Contains(ex, "partition pruning: stage") || !strings.Contains(ex, fmt.Sprintf("of %d files pruned", files)) {
		t.Fatalf("explain shows no pruning of %d files: %s", files, ex)
	}
	if ex := fmt.Sprint(sluiceRows(stmt(t, st, "explain analyze select count(*) from ho where yr = 1995"))); !strings.Contains(ex, "files_pruned=") {
		t.Fatalf("explain analyze shows no files_pruned: %s", ex)
	}

	// A Parquet table's column list declares partition key types (and
	// only those); DuckDB is told the same with hive_types.
	stmt(t, st, fmt.Sprintf("create external table hd (yr varchar) stored as parquet location 's3://%s/hive/orders/'", bucket))
	q := "select yr, count(*) from %s where yr in ('1995', '1996') group by yr"
	res := run(t, st, fmt.Sprintf(q, "hd"), true)
	compareRows(t, sluiceRows(res), duckRows(t, db, fmt.Sprintf(q, fmt.Sprintf("read_parquet('%s/**/*.parquet', hive_partitioning=true, hive_types={'yr': 'varchar'})", pqDir))), false)
	if filesPruned(res) == 0 {
		t.Fatal("no files pruned by a varchar partition key")
	}
	if ae := stmtErr(t, st, fmt.Sprintf("create external table hx (o_orderkey bigint) stored as parquet location 's3://%s/hive/orders/'", bucket)); ae.Code != "SL022" || ae.Position != 27 {
		t.Fatalf("a file column in a Parquet column list: %+v", ae)
	}

	// Partition columns are listed after the file columns, typed as
	// DuckDB types them.
	desc := fmt.Sprint(sluiceRows(stmt(t, st, "describe ho")))
	for _, want := range []string{"yr bigint", "status varchar", "prio varchar"} {
		f := strings.Fields(want)
		if !strings.Contains(strings.ToLower(desc), f[0]) || !strings.Contains(strings.ToLower(desc), f[1]) {
			t.Fatalf("describe ho: %s, want %s", desc, want)
		}
	}

	// A new partition appears at query time (the location is re-listed).
	more := filepath.Join(out, "more")
	added := writeHive(t, st, db, src+" where year(o_orderdate) = 1998", more, "parquet", "yr, status, prio", "hive/orders/")
	q = "select yr, count(*), sum(o_totalprice) from %s group by yr"
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(q, "ho"), true)),
		duckRows(t, db, fmt.Sprintf(q, fmt.Sprintf("(select * from %s union all select * from %s)", duck(pqDir), duck(more)))), false)
	res = run(t, st, fmt.Sprintf(q, "ho")+" having yr = 1998", true)
	if p := filesPruned(res); p != files {
		t.Fatalf("yr = 1998 pruned %d files, want the %d older ones (%d new)", p, files, added)
	}

	// The embedded stack uploads a partitioned folder as it is (the
	// folders pq, csv and more become tables).
	if _, err := st.LoadDir(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	q = "select status, count(*), sum(o_totalprice) from %s where yr between 1993 and 1994 group by status"
	res = run(t, st, fmt.Sprintf(q, "pq"), true)
	compareRows(t, sluiceRows(res), duckRows(t, db, fmt.Sprintf(q, duck(pqDir))), false)
	if filesPruned(res) == 0 {
		t.Fatal("no files pruned in the uploaded table")
	}
	q = "select yr, prio, count(*) from %s where status = 'P' group by yr, prio"
	compareRows(t, sluiceRows(run(t, st, fmt.Sprintf(q, "csv"), true)), duckRows(t, db, fmt.Sprintf(q, duckCSV)), false)
}
