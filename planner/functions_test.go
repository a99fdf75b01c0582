package planner

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// TestFunctionDocs keeps docs/functions.md equal to the library's table
// (go test ./planner -run TestFunctionDocs -update rewrites it).
func TestFunctionDocs(t *testing.T) {
	const path = "../docs/functions.md"
	got := "# SQL function library\n\nGenerated from the registry (`function/exec/functions.go`) by `go test ./planner -run TestFunctionDocs -update`; do not edit.\n" +
		"Parameter types: `numeric` is any number as it is, `any->string` any value cast to a string, `T` the common type of those arguments.\n" +
		"Unless stated, a NULL argument gives NULL.\n\n" + FunctionDocs() +
		"\n## Aggregates\n\nGenerated from the aggregate registry (`function/exec/aggregates.go`, one `agg_*.go` file per family). A NULL value is skipped; over no rows an aggregate is NULL, a count 0.\n\n" + exec.AggregateDocs() +
		"\nTwo-argument aggregates, rewritten by the planner into the ones above: `covar_pop(y, x)`, `covar_samp`, `corr`, `regr_slope`, `regr_intercept`, `regr_r2`, `regr_count`, `regr_avgx`, `regr_avgy`, `regr_sxx`, `regr_syy`, `regr_sxy` (over the pairs where both are not NULL).\n" +
		"\nDate part shorthands (DuckDB's): `year(d)`, `month`, `day`/`dayofmonth`, `quarter`, `week`/`weekofyear`, `yearweek`, `isoyear`, `dayofweek`/`weekday`, `isodow`, `dayofyear`, `decade`, `century`, `millennium`, `era`, `hour`, `minute`, `second` are `date_part('field', d)` of a date or timestamp.\n" +
		"\nBound by the planner: `date_add(d, x)` is `d + x` (an INTERVAL constant: a timestamp; an integer: days; as DuckDB); `d ->> path` is `json_extract_string(d, path)` and `d -> path` is `json_extract(d, path)`; they bind as Postgres operators (tighter than `=`, as tight as `||`), where DuckDB binds them looser than `=`: parenthesize `(d ->> path) = x` to mean the same in both.\n"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./planner -run TestFunctionDocs -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s is stale (run go test ./planner -run TestFunctionDocs -update)", path)
	}
	if !strings.Contains(got, "| `trim` | btrim |") {
		t.Errorf("trim is not documented under its SQL name")
	}
}

// TestRoundScale: round(decimal(p,s), n) has scale n as in DuckDB
// (round(3.14159, 2) prints 3.14, not 3.14000); 0 for n < 0; s for n >= s.
func TestRoundScale(t *testing.T) {
	p, err := Plan(context.Background(), "select round(l_extendedprice, 1), round(3.14159, 2), round(l_extendedprice, -1), round(l_extendedprice, 5), round(l_quantity) from lineitem", testCatalog, Options{})
	if err != nil {
		t.Fatal(err)
	}
	schema := p.Graph.Stage(p.Graph.Result).Root.Schema
	want := []int{1, 2, 0, 2, 0}
	for i, s := range want {
		if got := schema[i].Type; got.ID != plan.Decimal || got.Scale != s {
			t.Errorf("column %d (%s): type %s, want scale %d", i, schema[i].Name, got, s)
		}
	}
}
