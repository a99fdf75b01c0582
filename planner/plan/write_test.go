package plan

import (
	"strings"
	"testing"
)

// TestAddWrite: the writer goes on the stage that produces the rows when
// the result stage only gathers them (each of its tasks writes a file),
// and on the result stage when that one computes (a sort: one file, in
// order); the graph stays valid, and misplaced writers do not validate.
func TestAddWrite(t *testing.T) {
	sorted := validGraph() // result stage 3 sorts
	gather := validGraph() // result stage 3 only gathers stage 2
	gather.Stage(3).Root = gather.Stage(3).Root.Inputs[0]
	cases := []struct {
		name   string
		g      *Graph
		writer int // the stage whose root becomes the writer
	}{
		{"result stage sorts", sorted, 3},
		{"result stage gathers", gather, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.g.AddWrite(Write{Format: "parquet", Prefix: "tables/t/"}); err != nil {
				t.Fatal(err)
			}
			if err := c.g.Validate(); err != nil {
				t.Fatalf("after AddWrite: %v", err)
			}
			root := c.g.Stage(c.writer).Root
			if root.Kind != KindWrite || strings.Join(root.Write.Columns, ",") != "k,v" {
				t.Fatalf("stage %d root %s %+v, want the writer of k,v", c.writer, root.Kind, root.Write)
			}
			if got := strings.Join(c.g.Columns, ","); got != "file,rows" {
				t.Fatalf("columns %s", got)
			}
			if err := c.g.AddWrite(Write{Format: "csv"}); err == nil {
				t.Fatal("a second AddWrite succeeded")
			}
		})
	}
	if err := validGraph().AddWrite(Write{Format: "orc"}); err == nil {
		t.Fatal("AddWrite with format orc succeeded")
	}
	// A writer below another operator is not a valid plan.
	g := validGraph()
	if err := g.AddWrite(Write{Format: "csv", Prefix: "out/"}); err != nil {
		t.Fatal(err)
	}
	w := g.Stage(3).Root
	g.Stage(3).Root = &Node{Kind: KindLimit, Schema: w.Schema, Limit: 1, Inputs: []*Node{w}}
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), "write node that is not the stage's root") {
		t.Fatalf("writer under a limit: %v", err)
	}
	if got := WriteFileName("out/", "20260101-000000-deadbeef", 7, "csv"); got != "out/20260101-000000-deadbeef-00007.csv" {
		t.Fatalf("WriteFileName = %s", got)
	}
}
