package plan

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
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
	// Format is "parquet", "csv" or "json" (newline-delimited objects).
	Format string `json:"format"`
	// Prefix is the key prefix (in the job's bucket, ending in "/") the
	// files go under. Each task writes WriteFileName(Prefix, job, task,
	// Ext()): a retried or hedged attempt of a task overwrites the same
	// key with the same rows, and no reader sees any file of the job
	// before its commit marker exists.
	Prefix string `json:"prefix"`
	// Columns are the names the written columns get (the query's names).
	Columns []string `json:"columns"`
	// File, when set, is the one key the whole result is written to (a
	// COPY target that names a file): the result stage's single task
	// writes it, and one PUT makes it visible at once, with no marker.
	File string `json:"file,omitempty"`
	// Compression: for Parquet the page codec, "zstd" (the default),
	// "snappy", "gzip", "lz4" or "uncompressed"; for CSV and JSON the
	// whole file's, "gzip" or "zstd" (the name gets .gz or .zst), or ""
	// for none.
	Compression string `json:"compression,omitempty"`
	// NoHeader leaves out a CSV file's header line.
	NoHeader bool `json:"no_header,omitempty"`
	// Delimiter is a CSV file's one-character field separator ("": ',').
	Delimiter string `json:"delimiter,omitempty"`
	// Quote is a CSV file's one-character quote ("": '"'); a quote inside
	// a quoted field is doubled.
	Quote string `json:"quote,omitempty"`
	// Null is how a CSV file writes NULL (default the empty field).
	Null string `json:"null,omitempty"`
	// PartitionBy names columns (of Columns) whose values pick the folder
	// a row's file goes to, in the hive layout DuckDB's PARTITION_BY
	// writes: Prefix + "col=value/" per column (HivePath) + the task's
	// file name. The partition columns are not written into the files;
	// readers take them from the folders. Not with File.
	PartitionBy []string `json:"partition_by,omitempty"`
}

// Check validates the format and its options.
func (w *Write) Check() error {
	switch w.Format {
	case "parquet":
		switch w.Compression {
		case "", "zstd", "snappy", "gzip", "lz4", "uncompressed":
		default:
			return fmt.Errorf("parquet compression %q (want zstd, snappy, gzip, lz4 or uncompressed)", w.Compression)
		}
		if w.NoHeader || w.Delimiter != "" || w.Quote != "" || w.Null != "" {
			return errors.New("HEADER, DELIMITER, QUOTE and NULL are CSV options; the format is parquet")
		}
	case "csv", "json":
		switch w.Compression {
		case "", "none", "uncompressed", "gzip", "zstd":
		default:
			return fmt.Errorf("%s compression %q (want gzip, zstd or none)", w.Format, w.Compression)
		}
		if w.Format == "json" && (w.NoHeader || w.Delimiter != "" || w.Quote != "" || w.Null != "") {
			return errors.New("HEADER, DELIMITER, QUOTE and NULL are CSV options; the format is json")
		}
		quote := '"'
		if q := []rune(w.Quote); len(w.Quote) > 0 {
			if len(q) != 1 || q[0] == '\n' || q[0] == '\r' {
				return fmt.Errorf("QUOTE %q: want one character other than a line break", w.Quote)
			}
			quote = q[0]
		}
		if d := []rune(w.Delimiter); len(w.Delimiter) > 0 && (len(d) != 1 || d[0] == quote || d[0] == '\n' || d[0] == '\r') {
			return fmt.Errorf("DELIMITER %q: want one character other than the quote or a line break", w.Delimiter)
		}
		if w.Delimiter == "" && quote == ',' {
			return errors.New("QUOTE ',': the quote may not be the delimiter")
		}
		if strings.ContainsAny(w.Null, "\r\n") || strings.ContainsRune(w.Null, quote) ||
			(w.Delimiter != "" && strings.Contains(w.Null, w.Delimiter)) || (w.Delimiter == "" && strings.Contains(w.Null, ",")) {
			return fmt.Errorf("NULL %q: the null string may not hold the delimiter, the quote or a line break", w.Null)
		}
	default:
		return fmt.Errorf("write format %q (want parquet, csv or json)", w.Format)
	}
	return nil
}

// HiveNull is the folder value a NULL partition value gets, as DuckDB
// writes it (readers with hive partitioning read it back as NULL).
const HiveNull = "__HIVE_DEFAULT_PARTITION__"

// HiveSegment is the folder "col=value/" of one partition value (value
// is its text; null for NULL): the name and the value path-escaped, as
// DuckDB escapes them, so that a "/" or "%" in a value stays in one
// folder and url.PathUnescape gives it back.
func HiveSegment(col, value string, null bool) string {
	v := HiveNull
	if !null {
		v = hiveEscape(value)
	}
	return hiveEscape(col) + "=" + v + "/"
}

// hiveEscape percent-encodes what may not stand in a folder name of a
// hive key or value: what url.PathEscape escapes, and '='.
func hiveEscape(s string) string {
	return strings.ReplaceAll(url.PathEscape(s), "=", "%3D")
}

// CheckPartitionBy validates PartitionBy against Columns.
func (w *Write) CheckPartitionBy() error {
	if len(w.PartitionBy) == 0 {
		return nil
	}
	if w.File != "" {
		return errors.New("PARTITION_BY writes a folder of key=value folders, not one file: end the target with '/'")
	}
	seen := map[string]bool{}
	for _, p := range w.PartitionBy {
		if seen[strings.ToLower(p)] {
			return fmt.Errorf("PARTITION_BY names %s twice", p)
		}
		seen[strings.ToLower(p)] = true
		if w.partitionIndex(p) < 0 {
			return fmt.Errorf("PARTITION_BY column %s is not a column of the query (%s)", p, strings.Join(w.Columns, ", "))
		}
	}
	if len(seen) >= len(w.Columns) {
		return errors.New("PARTITION_BY names every column of the query: the files would have no columns left")
	}
	return nil
}

// partitionIndex is the position in Columns of the partition column p
// (matched regardless of case), or -1.
func (w *Write) partitionIndex(p string) int {
	for i, c := range w.Columns {
		if strings.EqualFold(c, p) {
			return i
		}
	}
	return -1
}

// PartitionColumns are the positions in Columns of PartitionBy, in its
// order.
func (w *Write) PartitionColumns() []int {
	out := make([]int, len(w.PartitionBy))
	for i, p := range w.PartitionBy {
		out[i] = w.partitionIndex(p)
	}
	return out
}

// Ext is the written files' extension: the format's, and for a
// compressed CSV or JSON file the codec's after it ("csv.gz").
func (w *Write) Ext() string {
	if w.Format != "parquet" {
		switch w.Compression {
		case "gzip":
			return w.Format + ".gz"
		case "zstd":
			return w.Format + ".zst"
		}
	}
	return w.Format
}

// Key is the key task of job writes: File, or its part under Prefix.
func (w *Write) Key(job string, task int) string {
	if w.File != "" {
		return w.File
	}
	return WriteFileName(w.Prefix, job, task, w.Ext())
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
// sort, a final LIMIT or aggregate in the result stage, or a write to one
// File) the result stage's tasks write a file each; a write to one File
// first gathers the rows into one task when the result stage may run as
// several. The writing stage's LIMIT early
// stop no longer applies (its root is the writer).
func (g *Graph) AddWrite(w Write) error {
	if err := w.Check(); err != nil {
		return err
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
	if err := w.CheckPartitionBy(); err != nil {
		return err
	}
	if w.File != "" && !g.OneTask(res) {
		// One file is written by one task: gather the rows first (the
		// planner elides a result stage that only gathers).
		g.Gather()
		res = g.Stage(g.Result)
	}
	st := res
	if r := res.Root; r.Kind == KindExchange && !r.Whole && w.File == "" {
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
	if err := w.Check(); err != nil {
		return err
	}
	if len(w.Columns) != len(n.Inputs[0].Schema) {
		return fmt.Errorf("%d column names for %d input columns", len(w.Columns), len(n.Inputs[0].Schema))
	}
	if err := w.CheckPartitionBy(); err != nil {
		return err
	}
	if !sameSchema(n.Schema, WriteSchema) {
		return fmt.Errorf("schema %v, want %v", n.Schema, WriteSchema)
	}
	return nil
}
