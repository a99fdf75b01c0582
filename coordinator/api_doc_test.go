package coordinator

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAPIDocListsEveryRoute checks that every route the API registers
// (mux.Handle and mux.HandleFunc patterns in api*.go) appears in
// docs/api.md as `METHOD PATH`.
func TestAPIDocListsEveryRoute(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("api*.go")
	route := regexp.MustCompile(`mux\.Handle(?:Func)?\("([A-Z]+ [^"]+)"`)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range route.FindAllStringSubmatch(string(src), -1) {
			n++
			if !strings.Contains(string(doc), "`"+m[1]+"`") {
				t.Errorf("route %q (%s) is not documented in docs/api.md", m[1], f)
			}
		}
	}
	if n < 10 {
		t.Fatalf("found only %d routes in api*.go: the pattern no longer matches the code", n)
	}
}
