package sqlparse

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

func rep(s string, n int) string { return strings.Repeat(s, n) }

// deepForms build, for a size n, SQL that nests about n levels deep in each
// of the ways the grammar nests: left-deep operator chains (which the
// parser accepts at any length), nested parentheses, calls, subqueries,
// CASE, set operations and joins.
var deepForms = []struct {
	name string
	sql  func(n int) string
}{
	{"plus chain", func(n int) string { return "select 1" + rep("+1", n) }},
	{"concat chain", func(n int) string { return "select 'a'" + rep("||'a'", n) }},
	{"cast chain", func(n int) string { return "select 1" + rep("::int", n) }},
	{"collate chain", func(n int) string { return "select 'a'" + rep(` collate "C"`, n) }},
	{"at time zone chain", func(n int) string { return "select now()" + rep(" at time zone 'utc'", n) }},
	{"is null chain", func(n int) string { return "select x" + rep(" is null = true", n) }},
	{"not", func(n int) string { return "select " + rep("not ", n) + "true" }},
	{"unary minus", func(n int) string { return "select " + rep("- ", n) + "x" }},
	{"parentheses", func(n int) string { return "select " + rep("(", n) + "1" + rep(")", n) }},
	{"calls", func(n int) string { return "select " + rep("abs(", n) + "1" + rep(")", n) }},
	{"coalesce", func(n int) string { return "select " + rep("coalesce(", n) + "1" + rep(",1)", n) }},
	{"arrays", func(n int) string { return "select " + rep("array[", n) + "1" + rep("]", n) }},
	{"rows", func(n int) string { return "select " + rep("row(", n) + "1" + rep(")", n) }},
	{"scalar subqueries", func(n int) string { return "select " + rep("(select ", n) + "1" + rep(")", n) }},
	{"from subqueries", func(n int) string { return rep("select * from (", n) + "select 1" + rep(") s", n) }},
	{"exists", func(n int) string {
		return "select 1 where " + rep("exists (select 1 where ", n) + "true" + rep(")", n)
	}},
	{"in", func(n int) string { return "select " + rep("1 in (", n) + "1" + rep(")", n) }},
	{"between", func(n int) string { return "select " + rep("(1 between 0 and ", n) + "1" + rep(")", n) }},
	{"like", func(n int) string { return "select " + rep("(x like ", n) + "'a'" + rep(")", n) }},
	{"case in then", func(n int) string { return "select " + rep("case when true then ", n) + "1" + rep(" end", n) }},
	{"case in when", func(n int) string { return "select " + rep("case when ", n) + "true" + rep(" then 1 end = 1", n) }},
	{"and or", func(n int) string { return "select " + rep("(a and b or ", n) + "c" + rep(")", n) }},
	{"windows", func(n int) string { return "select " + rep("sum(", n) + "1" + rep(") over ()", n) }},
	{"ctes", func(n int) string { return rep("with a as (", n) + "select 1" + rep(") select 1", n) }},
	{"union chain", func(n int) string { return "select 1" + rep(" union select 1", n) }},
	{"nested unions", func(n int) string { return rep("(select 1 union ", n) + "select 1" + rep(")", n) }},
	{"join chain", func(n int) string { return "select * from t" + rep(" join t on true", n) }},
	{"nested joins", func(n int) string { return "select * from " + rep("(t join ", n) + "t" + rep(" on true)", n) }},
	{"chains after deep operands", func(n int) string { // 10 levels of n/10 operators each
		return "select " + rep("(", 10) + "1" + rep(")"+rep("+1", n/10), 10)
	}},
}

// maxAccepted returns the largest n whose form Check accepts.
func maxAccepted(t *testing.T, form func(int) string) int {
	t.Helper()
	lo, hi := 1, 4*MaxDepth
	if Check(form(lo)) != nil {
		t.Fatalf("%s refused at n=1", form(lo))
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if Check(form(mid)) == nil {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// TestCheck: every deep form is refused once it nests past the limit, with
// SL090 and the position at which it did, and accepted well below it.
func TestCheck(t *testing.T) {
	for _, f := range deepForms {
		t.Run(f.name, func(t *testing.T) {
			if err := Check(f.sql(MaxDepth / 5)); err != nil {
				t.Fatalf("refused at a fifth of the limit: %v", err)
			}
			sql := f.sql(3 * MaxDepth)
			err := Check(sql)
			var de *DepthError
			if !errors.As(err, &de) || plan.CodeOf(err) != plan.CodeSQLTooLarge {
				t.Fatalf("Check at 3x the limit: %v", err)
			}
			if de.Pos < 1 || de.Pos > len(sql) || plan.PositionOf(err) != de.Pos {
				t.Fatalf("position %d of %d characters", de.Pos, len(sql))
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("more than %d levels", MaxDepth)) {
				t.Fatalf("message does not name the limit: %v", err)
			}
			if _, err := Parse(sql); !errors.As(err, &de) {
				t.Fatalf("Parse at 3x the limit: %v", err)
			}
		})
	}
}

// TestIssue30Crash: the input that killed the coordinator (1+1+... with
// 30,000 terms, a SIGSEGV in pg_query's C code) is refused before it
// reaches the parser.
func TestIssue30Crash(t *testing.T) {
	sql := "select 1" + rep("+1", 30000)
	_, err := Parse(sql)
	var de *DepthError
	if !errors.As(err, &de) {
		t.Fatalf("got %v", err)
	}
	if want := len("select 1") + 2*MaxDepth; de.Pos < want-20 || de.Pos > want+20 {
		t.Fatalf("position %d, want about %d (the operator that went over)", de.Pos, want)
	}
}

// TestRealQueriesPass: the TPC-H queries and the corpus are nowhere near
// the limit.
func TestRealQueriesPass(t *testing.T) {
	files, _ := filepath.Glob("../testdata/tpch/*.sql")
	if len(files) == 0 {
		t.Fatal("no TPC-H queries")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if d := Depth(string(b)); d > MaxDepth/20 {
			t.Errorf("%s: depth %d", f, d)
		}
		if _, err := Parse(string(b)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, sql := range []string{
		"select 1 where x in (" + strings.TrimSuffix(rep("1,", 50000), ",") + ")",
		"select 1 where " + strings.TrimSuffix(rep("x = 1 or ", 20000), " or "),
		"select 1 where " + strings.TrimSuffix(rep("x = 1 and y = 2 or ", 10000), " or "),
		"select case" + rep(" when x = 1 then 1", 20000) + " end",
		"select " + strings.TrimSuffix(rep("a + b, ", 20000), ", "),
		"values " + strings.TrimSuffix(rep("(1, 'a'), ", 20000), ", "),
		"select a from t where b between 1 and 2 and c between 3 and 4",
	} {
		if d := Depth(sql); d > 10 {
			t.Errorf("%.60s...: depth %d", sql, d)
		}
	}
}

// wrappers nest an expression one way or another.
var wrappers = []string{
	"(%s)", "abs(%s)", "%s + 1", "1 + %s", "%s * 2", "%s::int", "not %s", "- %s", "case when %s then 1 end",
	"case when true then %s else 0 end", "(select %s)", "(select %s from t where true)", "(%s is null)", "array[%s]",
	"coalesce(%s, 1)", "%s || 'a'", "(1 between 0 and %s)", "(%s in (1, 2))", "exists (select %s)", "row(%s)",
	"sum(%s) over ()", "%s and x or y", "%s collate \"C\"", "(select %s union select 1)", "x = any(array[%s])",
}

// mixed builds, with seed, the deepest SQL Check accepts of random
// wrappers one inside the other.
func mixed(t *testing.T, seed int64) string {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	steps := make([]string, 4*MaxDepth)
	for i := range steps {
		steps[i] = wrappers[r.Intn(len(wrappers))]
	}
	build := func(n int) string {
		e := "1"
		for _, w := range steps[:n] {
			e = fmt.Sprintf(w, e)
		}
		return "select " + e
	}
	lo, hi := 0, len(steps)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if Check(build(mid)) == nil {
			lo = mid
		} else {
			hi = mid
		}
	}
	if Check(build(len(steps))) == nil {
		t.Fatalf("seed %d: %d wrappers accepted", seed, len(steps))
	}
	return build(lo)
}

const childEnv = "SQLPARSE_SMALL_STACK_CHILD"

// TestDeepInputsSmallStack parses the deepest input Check accepts of every
// form, and of 30 random mixes of them, in a child process whose stacks are 1 MiB (an eighth of the usual
// default): none may crash it. The crash the limit guards against needs
// about 24,000 chained operators on an 8 MiB stack.
func TestDeepInputsSmallStack(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		for _, f := range deepForms {
			n := maxAccepted(t, f.sql)
			if _, err := Parse(f.sql(n)); err != nil {
				t.Errorf("%s n=%d: %v", f.name, n, err)
			}
		}
		for seed := range int64(30) {
			if _, err := Parse(mixed(t, seed)); err != nil {
				t.Errorf("mixed seed %d: %v", seed, err)
			}
		}
		return
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to set the stack limit with")
	}
	cmd := exec.Command(sh, "-c", `ulimit -s 1024 && exec "$0" -test.run '^TestDeepInputsSmallStack$' -test.count=1`, os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child on a 1 MiB stack: %v\n%.3000s", err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("child:\n%s", out)
	}
}
