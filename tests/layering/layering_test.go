// Package layering holds the tests of sluice's dependency rules: they read
// the module's import graph with `go list -deps -json` and fail when a
// dependency points the wrong way.
package layering

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/sluicedb/sluice"

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Standard   bool
	Module     *struct{ Path string }
}

// graph lists patterns and all their dependencies (non-test files).
func graph(t *testing.T, patterns ...string) map[string]*pkg {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not on PATH")
	}
	cmd := exec.Command(goBin, append([]string{"list", "-deps", "-json=ImportPath,Imports,Deps,Standard,Module"}, patterns...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = &p
	}
	return pkgs
}

func ours(path string) bool { return path == module || strings.HasPrefix(path, module+"/") }

func under(path, dir string) bool {
	return path == module+"/"+dir || strings.HasPrefix(path, module+"/"+dir+"/")
}

// rule is one dependency rule: no package matched by from may depend
// (directly or through others) on a package that forbidden reports.
type rule struct {
	name      string
	from      func(path string) bool
	forbidden func(path string) bool
}

var rules = []rule{
	{
		name:      "the plan contract imports no sluice package",
		from:      func(p string) bool { return p == module+"/planner/plan" },
		forbidden: ours,
	},
	{
		name: "function/... imports neither planner (except the plan contract) nor coordinator",
		from: func(p string) bool { return under(p, "function") },
		forbidden: func(p string) bool {
			return (under(p, "planner") && p != module+"/planner/plan") || under(p, "coordinator")
		},
	},
	{
		name:      "the catalog does not import the coordinator",
		from:      func(p string) bool { return under(p, "planner/catalog") },
		forbidden: func(p string) bool { return under(p, "coordinator") },
	},
	{
		name: "the table layout imports only the plan contract",
		from: func(p string) bool { return p == module+"/planner/catalog/layout" },
		forbidden: func(p string) bool {
			return ours(p) && p != module+"/planner/plan"
		},
	},
	{
		name:      "the Redis keyspace imports no sluice package",
		from:      func(p string) bool { return under(p, "function/redisdb") },
		forbidden: ours,
	},
	{
		name: "the shuffle layer knows nothing of planner (but the plan contract), coordinator or function",
		from: func(p string) bool { return under(p, "shuffle") },
		forbidden: func(p string) bool {
			return (under(p, "planner") && p != module+"/planner/plan") || under(p, "coordinator") || under(p, "function")
		},
	},
	{
		name:      "the shared column kernels import no sluice package (executor and shuffle both link them)",
		from:      func(p string) bool { return under(p, "shuffle/kernel") },
		forbidden: ours,
	},
	{
		// planner -> function/exec is allowed, and only from the SQL front
		// end: the binder, the docs and the executor read one scalar
		// function library and one aggregate library (names, signatures,
		// result types, NULL behaviour, partial state layouts), so the
		// planner and the functions cannot disagree about a function. The
		// re-planner (which the coordinator links, apart from the front
		// end) has no use for the executor's libraries and stays free of
		// it. (planner/catalog reaches it through the front end today.)
		name: "the re-planner does not link the executor (only the SQL front end reads its function and aggregate libraries)",
		from: func(p string) bool { return under(p, "planner/adaptive") },
		forbidden: func(p string) bool {
			return p == module+"/function/exec"
		},
	},
	{
		// The re-planner decides from the plan and the table's file
		// layout alone (rules, task plans, scan-task shaping): the driver
		// gathers those inputs and applies the result, so the decisions
		// stay pure and testable without Redis, a bucket or functions.
		name: "the re-planner imports only the plan contract and the table layout",
		from: func(p string) bool { return p == module+"/planner/adaptive" },
		forbidden: func(p string) bool {
			return ours(p) && p != module+"/planner/plan" && p != module+"/planner/catalog/layout"
		},
	},
	{
		name:      "the coordinator does not link the SQL front end (it plans through its Planner interface)",
		from:      func(p string) bool { return p == module+"/coordinator" },
		forbidden: func(p string) bool { return p == module+"/planner" || p == module+"/planner/catalog" },
	},
	{
		// The simulation (local/sim) models the FaaS platform and the
		// object store behind the engine's own interfaces (the Lambda
		// invoker's HTTP client, objstore.Bucket): it may import the
		// engine, never the reverse, or a model could leak into a real
		// deployment. Only the CLI, which offers `sluice sim`, links it.
		name: "the simulation is linked by the CLI only (no engine package imports its models)",
		from: func(p string) bool {
			return ours(p) && !under(p, "local/sim") && p != module+"/cmd/sluice" && !under(p, "tests")
		},
		forbidden: func(p string) bool { return under(p, "local/sim") },
	},
	{
		name:      "DuckDB is a test oracle only: no sluice package links it",
		from:      ours,
		forbidden: func(p string) bool { return strings.HasPrefix(p, "github.com/duckdb/") },
	},
}

// check returns one line per violation of r in pkgs.
func check(r rule, pkgs map[string]*pkg) []string {
	var bad []string
	for path, p := range pkgs {
		if !ours(path) || !r.from(path) {
			continue
		}
		for _, d := range p.Deps {
			if r.forbidden(d) {
				bad = append(bad, path+" -> "+d+" (via "+via(pkgs, p, r.forbidden)+")")
			}
		}
	}
	return bad
}

// via names a direct import of p through which it reaches a forbidden
// package, to say which edge to cut.
func via(pkgs map[string]*pkg, p *pkg, forbidden func(string) bool) string {
	for _, imp := range p.Imports {
		if forbidden(imp) {
			return imp
		}
		if q := pkgs[imp]; q != nil {
			for _, d := range q.Deps {
				if forbidden(d) {
					return imp
				}
			}
		}
	}
	return "?"
}

func TestDependencyRules(t *testing.T) {
	pkgs := graph(t, module+"/...")
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			matched := false
			for path := range pkgs {
				matched = matched || (ours(path) && r.from(path))
			}
			if !matched {
				t.Fatalf("rule matches no package: the module moved and the rule must follow")
			}
			for _, v := range check(r, pkgs) {
				t.Error(v)
			}
		})
	}
}

// TestRulesCatchViolations runs every rule over a graph in which it is
// broken, so a rule that cannot fail is itself caught.
func TestRulesCatchViolations(t *testing.T) {
	m := func(s string) string { return module + "/" + s }
	broken := map[string][2]string{
		"the plan contract imports no sluice package":                                                                   {m("planner/plan"), m("shuffle")},
		"function/... imports neither planner (except the plan contract) nor coordinator":                               {m("function/exec"), m("planner")},
		"the catalog does not import the coordinator":                                                                   {m("planner/catalog"), m("coordinator")},
		"the table layout imports only the plan contract":                                                               {m("planner/catalog/layout"), m("function/redisdb")},
		"the Redis keyspace imports no sluice package":                                                                  {m("function/redisdb"), m("planner/plan")},
		"the shuffle layer knows nothing of planner (but the plan contract), coordinator or function":                   {m("shuffle"), m("function")},
		"the coordinator does not link the SQL front end (it plans through its Planner interface)":                      {m("coordinator"), m("planner")},
		"the re-planner does not link the executor (only the SQL front end reads its function and aggregate libraries)": {m("planner/adaptive"), m("function/exec")},
		"the re-planner imports only the plan contract and the table layout":                                            {m("planner/adaptive"), m("function")},
		"the shared column kernels import no sluice package (executor and shuffle both link them)":                      {m("shuffle/kernel"), m("planner/plan")},
		"DuckDB is a test oracle only: no sluice package links it":                                                      {m("cmd/sluice"), "github.com/duckdb/duckdb-go/v2"},
		"the simulation is linked by the CLI only (no engine package imports its models)":                               {m("coordinator"), m("local/sim")},
	}
	for _, r := range rules {
		e, ok := broken[r.name]
		if !ok {
			t.Errorf("rule %q has no violation case", r.name)
			continue
		}
		pkgs := map[string]*pkg{e[0]: {ImportPath: e[0], Imports: []string{e[1]}, Deps: []string{e[1]}}}
		if len(check(r, pkgs)) == 0 {
			t.Errorf("rule %q does not catch %s -> %s", r.name, e[0], e[1])
		}
		// and the allowed edge of the function rule stays allowed
	}
	ok := map[string]*pkg{m("function"): {ImportPath: m("function"), Deps: []string{m("planner/plan"), m("function/redisdb")}}}
	for _, r := range rules {
		if v := check(r, ok); len(v) > 0 {
			t.Errorf("rule %q rejects an allowed edge: %v", r.name, v)
		}
	}
}

// allowedTesting lists the third-party packages that import "testing" in
// non-test files and that the function binary cannot avoid: thrift (read
// by the Parquet reader) has a TestLogger helper in logger.go. No sluice
// package may be on this list.
var allowedTesting = map[string]bool{
	"github.com/apache/thrift/lib/go/thrift": true,
}

// TestFunctionBinaryLinksNoTesting: the lean function binary links no test
// helper of ours (the object-store acceptance test lives in objstoretest,
// as testing/fstest lives apart from io/fs), and testing reaches it only
// through the third-party packages of allowedTesting.
func TestFunctionBinaryLinksNoTesting(t *testing.T) {
	pkgs := graph(t, module+"/cmd/sluice-function")
	if pkgs[module+"/cmd/sluice-function"] == nil {
		t.Fatal("cmd/sluice-function not listed")
	}
	for path, p := range pkgs {
		for _, imp := range p.Imports {
			if imp != "testing" && !strings.HasPrefix(imp, "testing/") {
				continue
			}
			if ours(path) || !allowedTesting[path] {
				t.Errorf("%s imports %s in a non-test file, so cmd/sluice-function links it", path, imp)
			}
		}
		if strings.HasSuffix(path, "test") && ours(path) {
			t.Errorf("cmd/sluice-function links the test helper package %s", path)
		}
	}
}
