package exec

import (
	"encoding/json"
	"testing"
)

// TestJSONPathAndNumbers: DuckDB's path forms and its way of printing
// numbers back (values asked of DuckDB 1.x; the corpus file
// functions_json_format.slt checks whole calls against DuckDB).
func TestJSONPathAndNumbers(t *testing.T) {
	doc := json.RawMessage(`{"a": {"b": [10, {"c": "x"}], "x y": 1}, "a": 2}`)
	for _, tc := range []struct {
		path, want string // want "" = absent
	}{
		{"$.a.b[0]", "10"}, {"$.a.b[1].c", `"x"`}, {"$.a.b[#-1].c", `"x"`}, {"$.a.b[2]", ""},
		{`$.a."x y"`, "1"}, {"/a/b/0", "10"}, {"a", `{"b":[10,{"c":"x"}],"x y":1}`}, {"", `{"a":{"b":[10,{"c":"x"}],"x y":1},"a":2}`},
		{"$[0]", ""}, {"$.zz", ""},
	} {
		steps, err := parseJSONPath(tc.path)
		if err != nil {
			t.Fatalf("%q: %v", tc.path, err)
		}
		v, ok, err := jsonWalk(doc, steps)
		got := ""
		if ok {
			got = compactJSON(v)
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q (%v), want %q", tc.path, got, err, tc.want)
		}
	}
	for _, p := range []string{"$.a[", "$.", "$.a[x]", "$.a[*]", "$a", `$."a`} {
		if _, err := parseJSONPath(p); err == nil {
			t.Errorf("%q: no error", p)
		}
	}
	for in, want := range map[string]string{"2.50": "2.5", "1e2": "100.0", "-0": "0", "1.0": "1.0", "1e300": "1e300",
		"0.0000001": "1e-7", "123456789012345678901234": "123456789012345678901234", "18446744073709551615": "18446744073709551615"} {
		if got := jsonNumber(in); got != want {
			t.Errorf("jsonNumber(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestFormatters: printf and format of one row (DuckDB's answers).
func TestFormatters(t *testing.T) {
	i := func(v int64) fmtArg { return fmtArg{kind: 'i', i: v} }
	f := func(v float64) fmtArg { return fmtArg{kind: 'f', f: v} }
	s := func(v string) fmtArg { return fmtArg{kind: 's', s: v} }
	for _, tc := range []struct {
		printf bool
		f      string
		args   []fmtArg
		want   string // "!" = an error
	}{
		{true, "%5.2f|%-5d|%05d", []fmtArg{f(3.14159), i(42), i(42)}, " 3.14|42   |00042"},
		{true, "%x %X %o %%", []fmtArg{i(-1), i(255), i(8)}, "ffffffffffffffff FF 10 %"},
		{true, "%d", []fmtArg{{null: true}}, "NULL"},
		{true, "%d", []fmtArg{f(1.5)}, "!"},
		{true, "%d %d", []fmtArg{i(1)}, "!"},
		{false, "{:>6}|{:<6}|{:^7}", []fmtArg{s("ab"), s("cd"), s("ef")}, "    ab|cd    |  ef   "},
		{false, "{:*^9}|{:08.3f}|{:,}|{:#x}", []fmtArg{s("ab"), f(-3.14159), i(1234567), i(255)}, "***ab****|-003.142|1,234,567|0xff"},
		{false, "{} {} {} {}", []fmtArg{f(2), f(1e20), f(1e-5), f(123456789.123)}, "2.0 1e+20 1e-05 123456789.123"},
		{false, "{1}{0}{{}}", []fmtArg{i(1), i(2)}, "21{}"},
		{false, "{0} {}", []fmtArg{i(1), i(2)}, "!"},
		{false, "{:d}", []fmtArg{s("x")}, "!"},
		{false, "{}", []fmtArg{{kind: 'i', wide: "-18446744073709551616"}}, "-18446744073709551616"},
	} {
		one := fmtOne
		if tc.printf {
			one = printfOne
		}
		got, err := one(tc.f, tc.args)
		if err != nil {
			got = "!"
		}
		if got != tc.want {
			t.Errorf("%q: got %q (%v), want %q", tc.f, got, err, tc.want)
		}
	}
}
