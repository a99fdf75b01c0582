package catalog

import (
	"strings"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pat, key string
		want     bool
	}{
		{"d/*.parquet", "d/a.parquet", true},
		{"d/*.parquet", "d/e/a.parquet", false},
		{"d/**/*.parquet", "d/a.parquet", true},
		{"d/**/*.parquet", "d/y=1/m=2/a.parquet", true},
		{"d/**", "d/y=1/a.csv", true},
		{"d/part-?.csv", "d/part-1.csv", true},
		{"d/part-?.csv", "d/part-10.csv", false},
		{"d/[ab].csv", "d/b.csv", true},
		{"d/[ab].csv", "d/c.csv", false},
		{"d/*/x.json", "d/1/x.json", true},
		{"d/*/x.json", "d/1/2/x.json", false},
	} {
		if got := globMatch(strings.Split(tc.pat, "/"), strings.Split(tc.key, "/")); got != tc.want {
			t.Errorf("%s ~ %s: %v, want %v", tc.pat, tc.key, got, tc.want)
		}
	}
	for in, want := range map[string]string{"d/e/*.csv": "d/e/", "d/**/x": "d/", "*.csv": "", "d/x.csv": "d/x.csv", "d/p?rt/x": "d/"} {
		if got := GlobBase(in); got != want {
			t.Errorf("GlobBase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseCSVOptions(t *testing.T) {
	o, err := ParseCSVOptions(map[string]string{"sep": `\t`, "quote": "'", "escape": `\`, "nullstr": "NA", "skip": "2",
		"allow_quoted_nulls": "false", "header": "no", "dateformat": "%m-%d-%Y", "ignore_errors": "1", "null_padding": "true"})
	if err != nil {
		t.Fatal(err)
	}
	want := CSVOptions{Header: false, Delimiter: '\t', Quote: '\'', Escape: '\\', Null: "NA", Skip: 2, QuotedNotNull: true,
		DateFormat: "%m-%d-%Y", IgnoreErrors: true, NullPadding: true}
	if o.Delimiter != want.Delimiter || o.Quote != want.Quote || o.Escape != want.Escape || o.Null != want.Null || o.Skip != want.Skip ||
		o.QuotedNotNull != want.QuotedNotNull || o.DateFormat != want.DateFormat || !o.IgnoreErrors || !o.NullPadding || o.Header {
		t.Errorf("got %+v, want %+v", o, want)
	}
	for opts, msg := range map[string]string{
		"bogus=1":               `unknown CSV option "bogus" (known: all_varchar,`,
		"delim=ab":              `delim "ab": want one ASCII character`,
		"timestampformat=%d %H": `only ISO timestamps`,
		"compression=lz4":       `want auto, gzip, zstd or none`,
		"dateformat=%Y/%m/%d":   `dateformat "%Y/%m/%d"`,
	} {
		k, v, _ := strings.Cut(opts, "=")
		_, err := ParseCSVOptions(map[string]string{k: v})
		if plan.CodeOf(err) != plan.CodeBadOption || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %s containing %q", opts, err, plan.CodeBadOption, msg)
		}
	}
}
