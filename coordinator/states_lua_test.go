package coordinator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// stateConstants parses states.go and returns the value of every
// constant of type JobState, StageState and TaskState, by type name.
// Parsing, not a hand-kept list, so a constant added there is seen here.
func stateConstants(t *testing.T) map[string][]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "states.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			typ, ok := vs.Type.(*ast.Ident)
			if !ok || !strings.HasSuffix(typ.Name, "State") {
				continue
			}
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("states.go: a %s constant that is not a string literal", typ.Name)
				}
				s, _ := strconv.Unquote(lit.Value)
				out[typ.Name] = append(out[typ.Name], s)
			}
		}
	}
	for _, k := range []string{"JobState", "StageState", "TaskState"} {
		if len(out[k]) == 0 {
			t.Fatalf("states.go: no %s constants found", k)
		}
	}
	return out
}

// Where a Lua script names a state: the value written to a record's
// state field, or a literal a state is compared with (a state variable,
// or a record's state read in place).
var (
	luaStateWrite = regexp.MustCompile(`'state',\s*'([^']*)'`)
	luaStateCmp   = regexp.MustCompile(`(?:\b(?:st|to|job_state)|'state'\))\s*[~=]=\s*'([^']*)'`)
)

// TestLuaStatesAreConstants: every state a transition script (lua/*.lua)
// writes or compares with is a Go state constant of a record it touches
// (every fenced script checks the job's state; job_finish cancels the
// job's running stages), so a state spelled in Lua alone, or a constant
// renamed in Go alone, fails here and not in production.
func TestLuaStatesAreConstants(t *testing.T) {
	consts := stateConstants(t)
	entries, err := luaFS.ReadDir("lua")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".lua")
		body, err := luaFS.ReadFile("lua/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		allowed := slices.Clone(consts["JobState"])
		switch {
		case strings.HasPrefix(name, "stage_"), name == "job_finish":
			allowed = append(allowed, consts["StageState"]...)
		case strings.HasPrefix(name, "task_"):
			allowed = append(allowed, consts["TaskState"]...)
		}
		for i, line := range strings.Split(string(body), "\n") {
			code, _, _ := strings.Cut(line, "--")
			for _, re := range []*regexp.Regexp{luaStateWrite, luaStateCmp} {
				for _, m := range re.FindAllStringSubmatch(code, -1) {
					seen++
					if !slices.Contains(allowed, m[1]) {
						t.Errorf("lua/%s:%d names state %q, which is no state constant of the records it touches (%v)", e.Name(), i+1, m[1], allowed)
					}
				}
			}
		}
	}
	if seen < 20 {
		t.Fatalf("found only %d state literals in the scripts: the patterns no longer match them", seen)
	}
}

// TestStatesCovered: the transition matrix puts records in every state
// constant, so a state added to the machine is tested in every
// transition.
func TestStatesCovered(t *testing.T) {
	consts := stateConstants(t)
	for typ, matrix := range map[string][]string{"JobState": matrixJobStates, "StageState": matrixStageStates, "TaskState": matrixTaskStates} {
		var missing []string
		for _, c := range consts[typ] {
			if !slices.Contains(matrix, c) {
				missing = append(missing, c)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("TestTransitionMatrix puts no record in %s %v", typ, missing)
		}
	}
}
