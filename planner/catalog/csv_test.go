package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestInferCSVLikeDuckDB: the types inferred for the files under
// tests/testdata/formats are those DuckDB 1.5's read_csv sniffer gives
// (recorded from DESCRIBE SELECT * FROM read_csv(file)), except that
// sluice reads plain decimals as DECIMAL(18,s) where DuckDB says DOUBLE.
func TestInferCSVLikeDuckDB(t *testing.T) {
	dec := func(s int) plan.DataType { return plan.DecimalType(plan.MaxDecimal64Precision, s) }
	for _, tc := range []struct {
		file    string
		names   []string
		types   []plan.DataType
		formats map[string]string
	}{
		{"spreadsheet.csv",
			[]string{"Customer Name", "Amount ($)", "Order Date", "Paid", "Note", "Score", "Created At"},
			[]plan.DataType{plan.StringType, dec(2), plan.DateType, plan.BoolType, plan.StringType, plan.Int64Type, plan.TimestampType},
			map[string]string{"Order Date": "%d/%m/%Y"}},
		{"types.csv",
			[]string{"id", "when", "ratio", "flag", "code"},
			[]plan.DataType{plan.Int64Type, plan.DateType, plan.Float64Type, plan.BoolType, plan.StringType}, nil},
		{"monthfirst.csv",
			[]string{"id", "us_date"},
			[]plan.DataType{plan.Int64Type, plan.DateType},
			map[string]string{"us_date": "%m/%d/%Y"}},
		{"ambiguous.csv",
			[]string{"a", "b", "c", "d", "e", "f", "g"},
			[]plan.DataType{plan.DateType, plan.StringType, plan.Int64Type, plan.TimestampType, dec(1), plan.BoolType, plan.StringType},
			map[string]string{"a": "%d/%m/%Y"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "..", "tests", "testdata", "formats", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			cols, formats, _, _, err := inferCSV(b, false, CSVOptions{Header: true, Delimiter: ','})
			if err != nil {
				t.Fatal(err)
			}
			if len(cols) != len(tc.names) {
				t.Fatalf("columns %v, want %v", cols, tc.names)
			}
			for i, c := range cols {
				if c.Name != tc.names[i] || c.Type != tc.types[i] {
					t.Errorf("column %d: %s %s, want %s %s", i, c.Name, c.Type, tc.names[i], tc.types[i])
				}
			}
			if len(formats) != len(tc.formats) {
				t.Errorf("date formats %v, want %v", formats, tc.formats)
			}
			for k, v := range tc.formats {
				if formats[k] != v {
					t.Errorf("date format of %s: %q, want %q", k, formats[k], v)
				}
			}
		})
	}
}

func TestHeaderNames(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"a", "A", "a"}, []string{"a", "A_1", "a_2"}},
		{[]string{" Customer Name ", "", "x"}, []string{"Customer Name", "column1", "x"}},
	} {
		got := headerNames(tc.in)
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("headerNames(%q) = %q, want %q", tc.in, got, tc.want)
				break
			}
		}
	}
}

// TestInferCSVBadInput: a malformed sample is a CodeBadInput error naming
// the line and column.
func TestInferCSVBadInput(t *testing.T) {
	_, _, _, _, err := inferCSV([]byte("a,b\n1,\"x\"y\n"), false, CSVOptions{Header: true, Delimiter: ','})
	if plan.CodeOf(err) != plan.CodeBadInput {
		t.Fatalf("err %v (code %q), want %s", err, plan.CodeOf(err), plan.CodeBadInput)
	}
	if got := err.Error(); !strings.Contains(got, "line 2") {
		t.Errorf("error %q does not name line 2", got)
	}
}

// TestInferJSONLikeDuckDB: the types inferred for
// tests/testdata/formats/events.ndjson are DuckDB 1.5's read_json ones
// (DESCRIBE SELECT * FROM read_json(file)), with DuckDB's JSON type and
// lists read as VARCHAR columns of JSON text (Raw).
func TestInferJSONLikeDuckDB(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "tests", "testdata", "formats", "events.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	cols, raw, _, err := inferJSON(b, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []plan.Field{
		{Name: "id", Type: plan.Int64Type}, {Name: "Name", Type: plan.StringType}, {Name: "score", Type: plan.Float64Type},
		{Name: "ok", Type: plan.BoolType}, {Name: "day", Type: plan.DateType},
		{Name: "at", Type: plan.StringType}, // two timestamp forms: VARCHAR, as DuckDB
		{Name: "mixed", Type: plan.StringType}, {Name: "num", Type: plan.Float64Type},
		{Name: "tags", Type: plan.StringType}, {Name: "gone", Type: plan.StringType}, {Name: "extra", Type: plan.StringType},
	}
	if len(cols) != len(want) {
		t.Fatalf("columns %v, want %v", cols, want)
	}
	for i := range want {
		if cols[i].Name != want[i].Name || cols[i].Type != want[i].Type {
			t.Errorf("column %d: %s %s, want %s %s", i, cols[i].Name, cols[i].Type, want[i].Name, want[i].Type)
		}
	}
	if !raw["mixed"] || !raw["tags"] || len(raw) != 2 {
		t.Errorf("raw columns %v, want mixed and tags", raw)
	}
	for _, tc := range []struct{ in, want string }{
		{"{\"a\": 1}\n[1, 2]\n", "line 2: not a JSON object"},
		{"{\"a\": 1}\n\n{\"a\": }\n", "line 3: invalid JSON"},
		{"{\"a\": 1} {\"a\": 2}\n", "line 1: more than one JSON value"},
	} {
		_, _, _, err := inferJSON([]byte(tc.in), false)
		if plan.CodeOf(err) != plan.CodeBadInput || !strings.Contains(fmt.Sprint(err), tc.want) {
			t.Errorf("%q: %v, want %s %q", tc.in, err, plan.CodeBadInput, tc.want)
		}
	}
}
