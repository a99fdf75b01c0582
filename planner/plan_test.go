package planner

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// planCases are the golden plan cases: testdata/plans/*.sql and the 22
// TPC-H queries testdata/tpch/qNN.sql.
func planCases(t testing.TB) []string {
	var files []string
	for _, dir := range []string{"testdata/plans", "testdata/tpch"} {
		fs, err := filepath.Glob(filepath.Join(dir, "*.sql"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	if len(files) == 0 {
		t.Fatal("no plan cases")
	}
	return files
}

// TestPlans plans every plan case and compares Explain's output with the
// .golden file beside it (go test ./planner -update rewrites them).
func TestPlans(t *testing.T) {
	for _, f := range planCases(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		if filepath.Base(filepath.Dir(f)) == "tpch" {
			name = "tpch/" + name
		}
		t.Run(name, func(t *testing.T) {
			sql, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Plan(context.Background(), string(sql), testCatalog, Options{})
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			got := Explain(p)
			golden := strings.TrimSuffix(f, ".sql") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./planner -update)", err)
			}
			if got != string(want) {
				t.Errorf("plan differs from %s (run go test ./planner -update and review the diff)\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}
