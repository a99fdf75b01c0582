package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestNestedOutput: nested values in table/CSV text as DuckDB's CLI prints
// them, and as JSON arrays and objects in JSON output.
func TestNestedOutput(t *testing.T) {
	mem := memory.NewGoAllocator()
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: st, Nullable: true},
		{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
	}, nil)
	rec, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(
		`[{"s": {"a": 1, "b": ["x", null]}, "m": [{"key": "k", "value": 2}, {"key": "z", "value": null}]}, {"s": null, "m": []}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	for r, want := range []string{`{'a': 1, 'b': [x, NULL]} {k=2, z=NULL}`, `NULL {}`} {
		s, _ := formatValue(rec.Column(0), r)
		m, _ := formatValue(rec.Column(1), r)
		if got := s + " " + m; got != want {
			t.Errorf("row %d text: %s, want %s", r, got, want)
		}
	}
	var b bytes.Buffer
	if err := writeResult(&b, "json", schema, []arrow.RecordBatch{rec}); err != nil {
		t.Fatal(err)
	}
	want := `{"s":{"a":1,"b":["x",null]},"m":{"k":2,"z":null}}
{"s":null,"m":{}}
`
	if b.String() != want {
		t.Errorf("json:\n%s\nwant:\n%s", b.String(), want)
	}
	if got := sqlTypeName(schema.Field(0).Type); got != "STRUCT(a BIGINT, b VARCHAR[])" {
		t.Errorf("type name: %s", got)
	}
}
