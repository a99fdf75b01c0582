package plan

import (
	"errors"
	"fmt"
)

// KindWrite is the table writer (Trino's TableWriter, DataFusion's
// DataSinkExec): it writes all of its input rows as one file per task into
// the bucket and outputs one row per written file, (file, rows). It sits
// at the root of the stage that produces a CREATE TABLE AS or COPY TO
// job's rows (AddWrite), so the files are written in parallel by that
// stage's tasks, and the job's result is the list of files, which the
// statement's commit step turns into the commit marker (see Write).
const KindWrite Kind = "write"

// Write says where and how a KindWrite node writes.
type Write struct {
	// Format is "parquet" or "csv".
	Format string `json:"format"`
	// Prefix is the key prefix (in the job's bucket, ending in "/") the
	// files go under. Each task writes WriteFileName(Prefix, job, task,
	// Format): a retried or hedged attempt of a task overwrites the same
	// key with the same rows, and no reader sees any file of the job
	// before its commit marker exists.
	Prefix string `json:"prefix"`
	// Columns are the names the written columns get (the query's names).
	Columns []string `json:"columns"`
}

// WriteSchema is the output of a KindWrite node: one row per file.
var WriteSchema = Schema{{Name: "file", Type: DataType{ID: String}}, {Name: "rows", Type: DataType{ID: Int64}}}

// WriteFileName is the key of the file task writes for job under prefix:
// the job id and the task number, the name layout.DataFileName gives a
// writer's part, so the commit protocol's listing rule covers it.
func WriteFileName(prefix, job string, task int, format string) string {
	return fmt.Sprintf("%s%s-%05d.%s", prefix, job, task, format)
}

// AddWrite makes g write its result rows as files described by w
// (w.Columns default to g.Columns); the result is then WriteSchema, one
// row per file: the graph of a CREATE TABLE AS or COPY TO job.
//
// The writer goes where the rows are produced in parallel: when the result
// stage only gathers another stage's output (its root is a bare exchange
// leaf), the writer becomes that stage's root, so each of its tasks writes
// its own file and the result stage gathers the file list; otherwise (a
// sort, a final LIMIT or aggregate in the result stage) the result
// stage's single task writes one file. The writing stage's LIMIT early
// stop no longer applies (its root is the writer).
func (g *Graph) AddWrite(w Write) error {
	switch w.Format {
	case "parquet", "csv":
	default:
		return fmt.Errorf("write format %q (want parquet or csv)", w.Format)
	}
	res := g.Stage(g.Result)
	if res == nil || res.Root == nil {
		return errors.New("write: the graph has no result stage")
	}
	if w.Columns == nil {
		w.Columns = append([]string(nil), g.Columns...)
	}
	if len(w.Columns) != len(res.Root.Schema) {
		return fmt.Errorf("write: %d column names for %d columns", len(w.Columns), len(res.Root.Schema))
	}
	st := res
	if r := res.Root; r.Kind == KindExchange && !r.Whole {
		if up := g.Stage(r.Stage); up != nil && up.Root != nil && len(g.Consumers(up.ID)) == 1 {
			st = up
			r.Schema = append(Schema(nil), WriteSchema...)
		}
	}
	if st.Root.Kind == KindWrite {
		return errors.New("write: the graph already writes")
	}
	st.Root = &Node{Kind: KindWrite, Schema: append(Schema(nil), WriteSchema...), Inputs: []*Node{st.Root}, Write: &w, Limit: -1}
	st.Output = Partitioning{Kind: PartitionSingle, Count: 1}
	g.Columns = []string{"file", "rows"}
	return nil
}

// validateWrite checks a KindWrite node.
func validateWrite(n *Node) error {
	w := n.Write
	if w == nil {
		return errors.New("no Write")
	}
	if w.Format != "parquet" && w.Format != "csv" {
		return fmt.Errorf("format %q", w.Format)
	}
	if len(w.Columns) != len(n.Inputs[0].Schema) {
		return fmt.Errorf("%d column names for %d input columns", len(w.Columns), len(n.Inputs[0].Schema))
	}
	if !sameSchema(n.Schema, WriteSchema) {
		return fmt.Errorf("schema %v, want %v", n.Schema, WriteSchema)
	}
	return nil
}
