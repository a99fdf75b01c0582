package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// strResult builds a result of varchar columns named names from rows.
func strResult(t *testing.T, names []string, rows [][]string) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	fields := make([]arrow.Field, len(names))
	for i, n := range names {
		fields[i] = arrow.Field{Name: n, Type: arrow.BinaryTypes.String}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, r := range rows {
		for c, v := range r {
			b.Field(c).(*array.StringBuilder).Append(v)
		}
	}
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return schema, []arrow.RecordBatch{rec}
}

// TestTableFit: a table wider than its limit has long values cut with
// "…", then middle columns hidden behind one "…" column with a count in
// the footer; a limit of 0 (piped output) leaves it whole. Exact output.
func TestTableFit(t *testing.T) {
	long := strings.Repeat("x", 100)
	huge := strings.Repeat("y", 1<<20)
	tests := []struct {
		name  string
		cols  []string
		rows  [][]string
		fit   tableFit
		want  string
		maxNB int // when set, the output is at most this many bytes (and want is not checked)
	}{
		{name: "fits", cols: []string{"a", "b"}, rows: [][]string{{"1", "two"}}, fit: tableFit{maxWidth: 21}, want: `
┌─────────┬─────────┐
│    a    │    b    │
│ varchar │ varchar │
├─────────┼─────────┤
│ 1       │ two     │
└─────────┴─────────┘
(1 row)
`},
		{name: "long value cut, the room left used", cols: []string{"k", "v"}, rows: [][]string{{"1", long}, {"2", "short"}}, fit: tableFit{maxWidth: 40}, want: `
┌─────────┬────────────────────────────┐
│    k    │             v              │
│ varchar │          varchar           │
├─────────┼────────────────────────────┤
│ 1       │ xxxxxxxxxxxxxxxxxxxxxxxxx… │
│ 2       │ short                      │
└─────────┴────────────────────────────┘
(2 rows)
`},
		{name: "no limit keeps the long value", cols: []string{"v"}, rows: [][]string{{long}}, fit: tableFit{}, want: `
┌──────────────────────────────────────────────────────────────────────────────────────────────────────┐
│                                                  v                                                   │
│                                               varchar                                                │
├──────────────────────────────────────────────────────────────────────────────────────────────────────┤
│ ` + long + ` │
└──────────────────────────────────────────────────────────────────────────────────────────────────────┘
(1 row)
`},
		{name: "middle columns hidden", cols: []string{"c1", "c2", "c3", "c4", "c5", "c6"},
			rows: [][]string{{"a1", "b2", "c3", "d4", "e5", "f6"}}, fit: tableFit{maxWidth: 50}, want: `
┌─────────┬─────────┬───┬─────────┬─────────┐
│   c1    │   c2    │ … │   c5    │   c6    │
│ varchar │ varchar │   │ varchar │ varchar │
├─────────┼─────────┼───┼─────────┼─────────┤
│ a1      │ b2      │ … │ e5      │ f6      │
└─────────┴─────────┴───┴─────────┴─────────┘
(1 row; 2 of 6 columns hidden, .maxwidth 0 shows all)
`},
		{name: "rows and columns elided", cols: []string{"c1", "c2", "c3"},
			rows: [][]string{{"1", "x", "y"}, {"2", "x", "y"}, {"3", "x", "y"}, {"4", "x", "y"}, {"5", "x", "y"}},
			fit:  tableFit{maxWidth: 30, maxRows: 2}, want: `
┌─────────┬───┬─────────┐
│   c1    │ … │   c3    │
│ varchar │   │ varchar │
├─────────┼───┼─────────┤
│ 1       │ … │ y       │
│ ·       │ · │ ·       │
│ ·       │ · │ ·       │
│ ·       │ · │ ·       │
│ 5       │ … │ y       │
└─────────┴───┴─────────┘
(5 rows, 2 shown; 1 of 3 columns hidden, .maxwidth 0 shows all)
`},
		{name: "newlines and tabs shown escaped", cols: []string{"v"}, rows: [][]string{{"a\nb\tc"}}, fit: tableFit{maxWidth: 80}, want: `
┌─────────┐
│    v    │
│ varchar │
├─────────┤
│ a\nb\tc │
└─────────┘
(1 row)
`},
		{name: "one column wider than the limit", cols: []string{"v"}, rows: [][]string{{long}}, fit: tableFit{maxWidth: 12}, want: `
┌──────────┐
│    v     │
│ varchar  │
├──────────┤
│ xxxxxxx… │
└──────────┘
(1 row)
`},
		{name: "a 1 MB value prints one short table", cols: []string{"k", "v"}, rows: [][]string{{"1", huge}, {"2", "b"}, {"3", "c"}},
			fit: tableFit{maxWidth: 120}, maxNB: 3000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema, recs := strResult(t, tt.cols, tt.rows)
			var buf bytes.Buffer
			if err := writeTable(&buf, schema, recs, tt.fit); err != nil {
				t.Fatal(err)
			}
			if tt.maxNB > 0 {
				if buf.Len() > tt.maxNB {
					t.Fatalf("%d bytes of output, want at most %d", buf.Len(), tt.maxNB)
				}
				for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
					if n := len([]rune(line)); n > tt.fit.maxWidth {
						t.Fatalf("line of %d characters, limit %d: %q", n, tt.fit.maxWidth, line)
					}
				}
				return
			}
			if got, want := buf.String(), strings.TrimPrefix(tt.want, "\n"); got != want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
