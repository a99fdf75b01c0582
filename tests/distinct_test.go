package tests

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/sluicedb/sluice/planner/catalog"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// TestDistinctEstimatesTPCDS registers TPC-DS tables (SF 0.01, written by
// DuckDB, which sets each column chunk's distinct_count) and checks the
// catalog's distinct-value estimates against DuckDB's exact
// count(DISTINCT) over the same files: never below half the truth (an
// underestimate would make a key join look like a blow-up), and within
// three times the truth for the columns of few values the join-order
// estimator needs (a status, a gender, a flag). A column without an
// estimate is taken as unique by the planner.
func TestDistinctEstimatesTPCDS(t *testing.T) {
	root, _ := tpcdsData(t, 0.01)
	ctx := context.Background()
	conn, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	low := 0
	for _, table := range []string{"customer_demographics", "item", "date_dim", "store_sales", "customer_address"} {
		b := objstore.NewMem("b")
		path := filepath.Join(root, table, table+".parquet")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Put(ctx, table+"/"+table+".parquet", data); err != nil {
			t.Fatal(err)
		}
		tb, err := catalog.Inspect(ctx, b, table, table+"/")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range tb.Columns {
			var truth int64
			q := fmt.Sprintf(`SELECT count(DISTINCT "%s") FROM read_parquet('%s')`, c.Name, path)
			if err := db.QueryRow(q).Scan(&truth); err != nil {
				t.Fatalf("duckdb: %s: %v", q, err)
			}
			truth = max(truth, 1) // all NULL: one value, as the estimate counts it
			est, ok := tb.Distinct[c.Name]
			if !ok {
				continue
			}
			if 2*est < truth {
				t.Errorf("%s.%s: estimate %d, truth %d: an underestimate", table, c.Name, est, truth)
			}
			if truth <= 50 {
				low++
				if est > 3*truth {
					t.Errorf("%s.%s: estimate %d, truth %d: more than 3x", table, c.Name, est, truth)
				}
			}
		}
	}
	if low < 10 {
		t.Errorf("only %d low-cardinality columns had an estimate", low)
	}
}
