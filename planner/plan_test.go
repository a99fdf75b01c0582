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

// TestPlans plans every testdata/plans/*.sql and compares Explain's output
// with the .golden file beside it (go test ./planner -update rewrites them).
func TestPlans(t *testing.T) {
	files, err := filepath.Glob("testdata/plans/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no plan cases")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
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
