package tests

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicedb/sluice/local/tpch"
)

// TestCSVTables: the same data as CSV files (header row, types inferred at
// registration) gives the same answers as the Parquet files, checked
// against DuckDB over the Parquet files.
func TestCSVTables(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	csvDir := t.TempDir()
	for _, table := range tpch.Tables() {
		if err := os.MkdirAll(filepath.Join(csvDir, table), 0o755); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(csvDir, table, table+".csv")
		if _, err := db.Exec("COPY " + table + " TO '" + out + "' (HEADER, DELIMITER ',')"); err != nil {
			t.Fatalf("write %s as CSV: %v", table, err)
		}
	}
	st := startStack(t, "", nil)
	tables, err := st.LoadDir(context.Background(), csvDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if tb.Format != "csv" {
			t.Fatalf("table %s registered as %s", tb.Name, tb.Format)
		}
	}
	qs := append([]query(nil), singleTable...)
	if _, err := os.Stat(filepath.Join("..", "planner", "testdata", "tpch", "q01.sql")); err == nil {
		all := tpchQueries(t)
		qs = append(qs, all[2], all[4], all[12]) // Q3, Q5, Q13: joins over CSV
	}
	for _, q := range qs {
		t.Run(q.name, func(t *testing.T) {
			res := run(t, st, q.sql, true)
			compareRows(t, sluiceRows(res), duckRows(t, db, q.sql), q.ordered)
		})
	}
}
