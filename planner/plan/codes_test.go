package plan

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/errors.md from the registry")

const errorsDoc = "../../docs/errors.md"

// TestErrorsDoc fails when docs/errors.md is not what the registry
// generates; `go generate ./planner/plan` (or -update) rewrites it.
func TestErrorsDoc(t *testing.T) {
	want := ErrorsMarkdown()
	if *update {
		if err := os.WriteFile(errorsDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(errorsDoc)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is stale: run go generate ./planner/plan", errorsDoc)
	}
}

// TestRegistry checks the registry's invariants: codes are unique and
// well formed, and each range has its classes.
func TestRegistry(t *testing.T) {
	form := regexp.MustCompile(`^SL[0-9]{3}$`)
	seen := map[string]bool{}
	names := map[string]bool{}
	for _, c := range Codes() {
		if !form.MatchString(c.Code) || seen[c.Code] || names[c.Name] || c.Doc == "" {
			t.Errorf("bad or duplicate entry %+v", c)
		}
		seen[c.Code], names[c.Name] = true, true
		var ok bool
		switch c.Code[2] {
		case '0':
			ok = c.Class == ClassUser || c.Class == ClassUnsupported
		case '1':
			ok = c.Class == ClassUser
		case '2':
			ok = c.Class == ClassTransient
		case '9':
			ok = c.Class == ClassInternal
		}
		if !ok {
			t.Errorf("%s has class %s, which its range does not allow", c.Code, c.Class)
		}
	}
}

func TestCodeOf(t *testing.T) {
	cases := []struct {
		err   error
		code  string
		class Class
	}{
		{nil, "", ClassTransient},
		{errors.New("connection reset"), "", ClassTransient},
		{Errorf(CodeInvalidCast, "cannot cast"), CodeInvalidCast, ClassUser},
		{fmt.Errorf("stage 1: %w", Errorf(CodeInvalidCast, "cannot cast")), CodeInvalidCast, ClassUser},
		{fmt.Errorf("sum: %w", ErrDecimalOverflow), CodeDecimalOverflow, ClassUser},
		{UserErrorf("bad"), CodeRuntime, ClassUser},
		{Errorf(CodeUnsupported, "unsupported: x"), CodeUnsupported, ClassUnsupported},
		{Errorf(CodeInternal, "bug"), CodeInternal, ClassInternal},
		{WithCode(CodeInternal, Errorf(CodeInvalidCast, "x")), CodeInvalidCast, ClassUser}, // keeps the inner code
		{Errorf("SL199", "from a newer function"), "SL199", ClassUser},
		{Errorf("SL777", "unknown range"), "SL777", ClassInternal},
	}
	for i, c := range cases {
		code := CodeOf(c.err)
		if code != c.code || ClassOf(code) != c.class {
			t.Errorf("%d: %v: code %q class %s, want %q %s", i, c.err, code, ClassOf(code), c.code, c.class)
		}
		if retry := ClassOf(code).Retryable(); retry != (c.class == ClassTransient) {
			t.Errorf("%d: retryable %v for class %s", i, retry, c.class)
		}
	}
}
