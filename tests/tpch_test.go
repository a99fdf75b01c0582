package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tpchQueries reads the 22 TPC-H queries the planner's goldens use.
func tpchQueries(tb testing.TB) []query {
	tb.Helper()
	var out []query
	for i := 1; i <= 22; i++ {
		p := filepath.Join("..", "planner", "testdata", "tpch", fmt.Sprintf("q%02d.sql", i))
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatalf("read %s: %v", p, err)
		}
		sql := strings.TrimSpace(string(b))
		sql = strings.TrimSuffix(sql, ";")
		out = append(out, query{name: fmt.Sprintf("q%02d", i), sql: sql,
			ordered: strings.Contains(strings.ToLower(sql), "order by")})
	}
	return out
}

// TestTPCH runs all 22 TPC-H queries through the whole distributed path
// and checks them against DuckDB on the same files, adaptive and static.
func TestTPCH(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "planner", "testdata", "tpch", "q01.sql")); err != nil {
		t.Skip("TPC-H query texts not present")
	}
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	checkModes(t, st, db, tpchQueries(t))
}
