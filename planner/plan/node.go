package plan

import "strings"

// Kind names a physical operator.
type Kind string

const (
	KindScan      Kind = "scan"      // leaf: reads table files (the task's splits)
	KindExchange  Kind = "exchange"  // leaf: reads shuffle output of an upstream stage
	KindEmpty     Kind = "empty"     // leaf: produces no rows (empty propagation)
	KindValues    Kind = "values"    // leaf: the constant rows of Rows (VALUES, SELECT without FROM)
	KindFilter    Kind = "filter"    // keeps rows where Predicate is true
	KindProject   Kind = "project"   // computes Exprs, one output column each
	KindAggregate Kind = "aggregate" // hash aggregation, see Aggregate.Mode
	KindSort      Kind = "sort"      // full sort by SortKeys; with Limit >= 0 a top-k
	KindLimit     Kind = "limit"     // skips Offset rows, then passes Limit rows
)

// Node is one operator of a plan fragment. Exactly the field that belongs to
// Kind is set. Schema is the node's output schema.
type Node struct {
	Kind      Kind       `json:"kind"`
	Schema    Schema     `json:"schema"`
	Inputs    []*Node    `json:"inputs,omitempty"`
	Scan      *Scan      `json:"scan,omitempty"`
	Predicate *Expr      `json:"predicate,omitempty"`
	Exprs     []*Expr    `json:"exprs,omitempty"`
	Aggregate *Aggregate `json:"aggregate,omitempty"`
	Join      *Join      `json:"join,omitempty"`
	SortKeys  []SortKey  `json:"sort_keys,omitempty"`
	Window    *Window    `json:"window,omitempty"` // KindWindow (window.go)
	Expand    [][]*Expr  `json:"expand,omitempty"` // KindExpand (expand.go)
	Write     *Write     `json:"write,omitempty"`  // KindWrite (write.go)
	// Limit is the row limit of KindLimit and KindSort (-1: none);
	// Offset applies to KindLimit only.
	Limit  int64 `json:"limit"`
	Offset int64 `json:"offset,omitempty"`
	// Stage is the upstream stage a KindExchange leaf reads.
	Stage int `json:"stage,omitempty"`
	// Whole, on a KindExchange leaf, makes every task read every partition
	// of its stage (a broadcast read of a hash-partitioned output, which
	// the adaptive planner introduces when a join side turns out small).
	Whole bool `json:"whole,omitempty"`
	// SplitObjects, on a Whole KindExchange leaf, divides the upstream
	// stage's committed data objects (its map outputs) among the stage's
	// tasks instead of giving every task all of them: each task reads
	// every partition of its group of objects, as scan tasks divide a
	// table's row groups. The adaptive combine-objects rule's stages read
	// this way (see Graph.Validate for where it may stand).
	SplitObjects bool `json:"split_objects,omitempty"`
	// Bloom, on a KindFilter node, also keeps only rows whose column may
	// be in a Bloom filter (a runtime filter's keys; BloomProbe).
	Bloom *BloomProbe `json:"bloom,omitempty"`
	// Predicate and Bloom, on a KindExchange leaf, drop the rows read
	// that do not pass them, as a Filter node above would: the runtime
	// filters the adaptive rule runtime-filter put on a shuffle read
	// (RuntimeFilters records them), whose rows a join above drops anyway.
	// They stay on the leaf so that rules matching a join's exchange
	// inputs (select-join, DeferProbe) still see the exchange.
	RuntimeFilters []RuntimeFilter `json:"runtime_filters,omitempty"`
	// Rows are the rows of a KindValues leaf: one constant expression
	// (no column references) per column of Schema, already of its type.
	Rows [][]*Expr `json:"rows,omitempty"`
}

// Scan describes a table scan. The files and row groups a task reads come
// from its TaskSpec, not from the plan.
type Scan struct {
	Table  string `json:"table"`
	Format string `json:"format"` // "parquet", "csv", "json" or "iceberg" (Parquet data files)
	// Columns are the file columns read, by name, in output order; the
	// node's Schema gives their engine types.
	Columns []string `json:"columns"`
	// Paths, when set, has one entry per column of Columns: the struct
	// fields, outermost first, that the column is under the file column
	// Columns[i] (nil: the file column itself). A column with a path is
	// that field alone (NULL where the struct or a struct on the way is),
	// and a Parquet scan reads only the leaves under it (the planner's
	// nested_paths rule turns s.a into such a column).
	Paths [][]string `json:"paths,omitempty"`
	// Fields, when set, has one entry per column of Columns: for a
	// column of a LIST type with structs inside, the struct fields of its
	// elements that are read, each a path of field names (list levels on
	// the way implicit), e.g. [["a"], ["c", "x"]] for l of type
	// list<struct<a, b, c struct<x, y>>>; nil: the whole column. A
	// Parquet scan reads only the leaves under those fields and hands the
	// others over as NULL (the planner's list_fields rule sets it when no
	// use reads them).
	Fields [][][]string `json:"fields,omitempty"`
	// FieldIDs, when set (Iceberg tables, set with Format when the stage
	// starts), are the Iceberg field ids of Columns: a file's columns are
	// found by their Parquet field ids, not their names, so renamed
	// columns read right, and a column a file lacks (added since it was
	// written) reads as NULL.
	FieldIDs []int `json:"field_ids,omitempty"`
	// Filter, over the output columns, is used to prune row groups from
	// their statistics, and a Parquet scan may drop the rows it makes
	// FALSE or NULL before decoding their other columns (late
	// materialization, function/exec/parquet_late.go). Rows are still
	// filtered by a Filter node above: Filter holds only conditions that
	// the query drops such rows by anyway (conjuncts of the Filter above,
	// a runtime filter's build-side keys).
	Filter *Expr `json:"filter,omitempty"`
	// CSV describes CSV files (Format "csv").
	CSV *CSVFormat `json:"csv,omitempty"`
	// JSON describes newline-delimited JSON files (Format "json").
	JSON *JSONFormat `json:"json,omitempty"`
	// Partitions are the table's hive partition columns (key=value
	// folders), set with Format when the stage starts. A column of Columns
	// that names one is not read from the files: each split's values fill
	// it as a constant.
	Partitions []Field `json:"partitions,omitempty"`
	// Inline marks a scan that runs inside a stage other than its own
	// (the adaptive rule inline-scans): every task of the stage reads all
	// of Files, and the stage's tasks are not this scan's splits. A stage
	// has at most one scan that is not Inline.
	Inline bool `json:"inline,omitempty"`
	// Files are the files an Inline scan reads, as the coordinator listed
	// and pruned them.
	Files []ScanFile `json:"files,omitempty"`
	// RuntimeFilters are the filters the adaptive rule runtime-filter
	// added to Filter (and to a Filter node above the scan) from a join
	// build side's summary; recorded for EXPLAIN and so the rule adds
	// each only once.
	RuntimeFilters []RuntimeFilter `json:"runtime_filters,omitempty"`
}

// ScanFile is one table file an Inline scan reads whole.
type ScanFile struct {
	Key  string `json:"key"`
	Size int64  `json:"size"`
	ETag string `json:"etag,omitempty"` // the version listed (layout.File.ETag)
	// Partition holds the file's hive partition values, one per
	// Scan.Partitions column.
	Partition []Value `json:"partition,omitempty"`
}

// ColumnName is how column i of the scan is written: its file column,
// then the fields of its path, joined by dots.
func (s *Scan) ColumnName(i int) string {
	if i < len(s.Paths) && len(s.Paths[i]) > 0 {
		return s.Columns[i] + "." + strings.Join(s.Paths[i], ".")
	}
	return s.Columns[i]
}

// ColumnRead is ColumnName followed by the element fields read, when
// the scan reads only some ({a, c.x}).
func (s *Scan) ColumnRead(i int) string {
	n := s.ColumnName(i)
	if i < len(s.Fields) && s.Fields[i] != nil {
		parts := make([]string, len(s.Fields[i]))
		for k, f := range s.Fields[i] {
			parts[k] = strings.Join(f, ".")
		}
		n += "{" + strings.Join(parts, ", ") + "}"
	}
	return n
}

// ColumnNames lists ColumnName of every column.
func (s *Scan) ColumnNames() []string {
	out := make([]string, len(s.Columns))
	for i := range out {
		out[i] = s.ColumnName(i)
	}
	return out
}

// SplitScan reports whether n is the scan whose splits are its stage's
// tasks: a scan that is not Inline.
func (n *Node) SplitScan() bool {
	return n.Kind == KindScan && n.Scan != nil && !n.Scan.Inline
}

// CSVFormat says how to parse a CSV table's files.
type CSVFormat struct {
	// Columns are all the file's columns, in file order, with the engine
	// types values are parsed into (dates as YYYY-MM-DD, decimals as
	// plain digits); Scan.Columns selects among them by name.
	Columns []Field `json:"columns"`
	// Header is true when the first line of each file holds column names.
	Header bool `json:"header"`
	// Delimiter is the field separator (default ',').
	Delimiter string `json:"delimiter,omitempty"`
	// Null is the text that stands for NULL (default: empty field).
	Null string `json:"null,omitempty"`
	// QuotedNotNull: a quoted field equal to Null ("" by default) is a
	// value, not NULL (DuckDB's allow_quoted_nulls=false). By default it
	// is NULL, as DuckDB reads it.
	QuotedNotNull bool `json:"quoted_not_null,omitempty"`
	// Quote is the quote character ("": '"'); Escape the character that
	// makes the next quote (or escape) inside a quoted field literal ("":
	// the quote itself, doubled).
	Quote  string `json:"quote,omitempty"`
	Escape string `json:"escape,omitempty"`
	// Skip is the number of lines skipped at the start of each file,
	// before the header.
	Skip int `json:"skip,omitempty"`
	// NullPadding reads a line with fewer fields than the file has columns
	// with NULL in the missing ones (else it is an error).
	NullPadding bool `json:"null_padding,omitempty"`
	// IgnoreErrors skips lines that do not parse (a wrong field count, a
	// value not of its column's type) instead of failing the scan.
	IgnoreErrors bool `json:"ignore_errors,omitempty"`
	// DateFormats give, by column name, the format of DATE columns not
	// written YYYY-MM-DD: "%d/%m/%Y" (day first) or "%m/%d/%Y" (month
	// first), with '/', '-' or '.' between the parts.
	DateFormats map[string]string `json:"date_formats,omitempty"`
}

// JSONFormat says how to read newline-delimited JSON files: one object
// per line (empty lines skipped), a column per key.
type JSONFormat struct {
	// Columns are the keys read, with the engine types values are parsed
	// into (dates and timestamps from ISO strings); a key missing from an
	// object, or null, is NULL. Keys are matched exactly, then regardless
	// of case.
	Columns []Field `json:"columns"`
	// Raw names the (string) columns that hold each value's JSON text:
	// keys whose sampled values have conflicting types (DuckDB's JSON
	// type) or are objects or arrays.
	Raw map[string]bool `json:"raw,omitempty"`
}

// AggMode says which phase of a two-phase aggregation a node runs.
type AggMode string

const (
	// AggPartial: input rows -> [group keys..., state columns...].
	AggPartial AggMode = "partial"
	// AggFinal: [group keys..., state columns...] (as AggPartial wrote them)
	// -> [group keys..., results...]. GroupBy are then column references to
	// the first len(GroupBy) input columns and Args of Aggs are unused.
	AggFinal AggMode = "final"
	// AggSingle: input rows -> [group keys..., results...] in one step.
	AggSingle AggMode = "single"
)

// AggFunc is an aggregate function.
type AggFunc string

const (
	AggSum       AggFunc = "sum"
	AggCount     AggFunc = "count"      // count of non-NULL Arg
	AggCountStar AggFunc = "count_star" // count of rows, no Arg
	AggAvg       AggFunc = "avg"
	// AggCountDistinct is only planned as AggSingle or as the final phase
	// after the planner grouped by the argument first; exec supports it in
	// AggSingle mode (distinct values per group held in memory).
	AggCountDistinct AggFunc = "count_distinct"
	AggMin           AggFunc = "min"
	AggMax           AggFunc = "max"
)

// AggCall is one aggregate of an Aggregate node. Type is its final result
// type: sum(int64)=int64, sum(decimal(p,s))=decimal(18,s),
// sum(float64)=float64, count=int64, avg=float64, min/max=arg type.
type AggCall struct {
	Func AggFunc `json:"func"`
	Arg  *Expr   `json:"arg,omitempty"`
	// More are the arguments after Arg of an aggregate of several
	// (arg_min(value, key): Arg is the value, More[0] the key).
	More []*Expr  `json:"more,omitempty"`
	Type DataType `json:"type"`
	Name string   `json:"name,omitempty"`
	// Fraction is the percentile of percentile_cont/percentile_disc.
	Fraction float64 `json:"fraction,omitempty"`
	// Sep is the separator of string_agg.
	Sep string `json:"sep,omitempty"`
	// Distinct makes string_agg(DISTINCT x) take each value of a group
	// once (its first occurrence in the group's order).
	Distinct bool `json:"distinct,omitempty"`
}

// The layout of an aggregate's partial state columns (their number, types
// and names) is the aggregate library's (function/exec.AggregateFunction):
// the planner lays out a partial aggregation's output from it and the
// executor of both phases reads it there.

// SumType is the result type of SUM over t: as in DuckDB, the sum of a
// decimal(p,s) is decimal(38,s), so money sums do not overflow, and the
// sum of an integer is 128 bits wide (DuckDB's HUGEINT, here
// decimal(38,0)), so a sum of 64-bit ids does not overflow either.
func SumType(t DataType) DataType {
	switch t.ID {
	case Decimal:
		return DecimalType(MaxDecimalPrecision, t.Scale)
	case Int64:
		return DecimalType(MaxDecimalPrecision, 0)
	}
	return t
}

// Aggregate describes a hash aggregation. Output columns are the group keys
// followed by one column per AggCall (its states in AggPartial mode).
type Aggregate struct {
	Mode    AggMode   `json:"mode"`
	GroupBy []*Expr   `json:"group_by,omitempty"`
	Aggs    []AggCall `json:"aggs"`
}

// SortKey is one ORDER BY key over the input columns.
type SortKey struct {
	Expr       *Expr `json:"expr"`
	Desc       bool  `json:"desc,omitempty"`
	NullsFirst bool  `json:"nulls_first,omitempty"`
}
