package plan

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The error-code registry. Every error a user can meet carries a stable
// code; its class says what the system does with it. The registry lives in
// the plan contract because every layer reports these errors and the plan
// package imports no other sluice package: the planner raises SL0xx codes,
// the kernels (function/exec) and the function runtime SL1xx and SL9xx, and
// the coordinator reads the code back from a task's result (TaskResult.Code)
// to decide on a retry, to count failures by class and to answer the API.
// docs/errors.md is generated from it (go generate ./planner/plan).
//
//go:generate go test -run TestErrorsDoc -update .

// Class says what to do with an error.
type Class string

const (
	// ClassUser: the query or its data is wrong. Retrying cannot help: the
	// job fails on the first attempt.
	ClassUser Class = "user"
	// ClassUnsupported: valid SQL that sluice does not run (yet). Not
	// retried.
	ClassUnsupported Class = "unsupported"
	// ClassTransient: infrastructure trouble (object store, Redis, a
	// function that crashed or timed out). Retried within the budget.
	ClassTransient Class = "transient"
	// ClassInternal: a bug in sluice (a plan that does not fit its data).
	// Not retried: the same plan fails the same way.
	ClassInternal Class = "internal"
)

// Retryable reports whether another attempt may succeed.
func (c Class) Retryable() bool { return c == ClassTransient || c == "" }

// Classes lists the classes in the order the docs give them.
var Classes = []Class{ClassUser, ClassUnsupported, ClassTransient, ClassInternal}

// Error codes. The number ranges: SL0xx planning errors, SL1xx run-time
// errors of the query or its data, SL2xx infrastructure, SL9xx bugs.
// Codes are never reused or renumbered: users, tests and tools match on
// them, never on messages.
const (
	CodeSyntax      = "SL001"
	CodeUnknownTbl  = "SL002"
	CodeUnknownCol  = "SL003"
	CodeType        = "SL004"
	CodeUnsupported = "SL005"
	CodeAmbiguous   = "SL006"
	CodeGrouping    = "SL007"
	CodeValue       = "SL008"
	CodeSQLTooLarge = "SL090"

	CodeTableExists   = "SL020"
	CodeBadLocation   = "SL021"
	CodeBadOption     = "SL022"
	CodeNotStatement  = "SL023"
	CodeBadPartitions = "SL024"
	CodeBadTableName  = "SL025"
	CodeWrongKind     = "SL026"

	CodeRuntime         = "SL100"
	CodeInvalidCast     = "SL101"
	CodeIntegerOverflow = "SL102"
	CodeDecimalOverflow = "SL103"
	CodeMemoryLimit     = "SL104"
	CodeBadInput        = "SL105"
	CodeCorruptInput    = "SL106"
	CodeFileChanged     = "SL107"

	CodeRetriesExhausted = "SL200"
	CodeTaskTimeout      = "SL201"
	CodeInputsLost       = "SL202"
	CodeStoreUnavailable = "SL203"
	CodeCatalogRead      = "SL204"

	CodeInternal = "SL900"
	CodeBadSpec  = "SL901"
)

// CodeInfo describes one registered code.
type CodeInfo struct {
	Code  string
	Class Class
	Name  string // short, stable name (snake case)
	Doc   string // when it is raised, for docs/errors.md
}

var registry = []CodeInfo{
	{CodeSyntax, ClassUser, "syntax_error", "The SQL does not parse. The position points at the token the parser stopped at."},
	{CodeUnknownTbl, ClassUser, "unknown_table", "FROM names a table the catalog does not know, or a qualifier no FROM item has."},
	{CodeUnknownCol, ClassUser, "unknown_column", "A column reference resolves to nothing."},
	{CodeType, ClassUser, "type_mismatch", "Operand types do not fit an operator, function or clause."},
	{CodeUnsupported, ClassUnsupported, "unsupported", "Valid SQL that sluice does not run (yet)."},
	{CodeAmbiguous, ClassUser, "ambiguous_column", "A name resolves to more than one column."},
	{CodeGrouping, ClassUser, "grouping_error", "Misuse of GROUP BY or aggregates: an ungrouped column, an aggregate in WHERE, nested aggregates."},
	{CodeValue, ClassUser, "invalid_value", "A constant is invalid or out of range (a bad date, LIMIT -1, ORDER BY 9 of 2 columns)."},
	{CodeTableExists, ClassUser, "table_exists", "CREATE names a table the catalog already has (use DROP TABLE first, or IF NOT EXISTS)."},
	{CodeBadLocation, ClassUser, "bad_location", "A LOCATION or COPY target is not s3://BUCKET/PREFIX in the bucket sluice runs on, is not a valid key prefix (\"..\", \".\" or empty path components, control characters, too long), holds no files of the format, or is not empty where it must be; a path of read_parquet/read_csv/read_json or FROM 's3://...' that matches no file (each path of a list must match), is in another bucket, or (a bare path) has no format extension; or a write (COPY, CREATE TABLE AS) would land inside sluice's own data (jobs/, tables/) or another registered table's location. Raised at planning, before anything is written; the message names the target."},
	{CodeBadOption, ClassUser, "bad_option", "An unknown or invalid statement option: STORED AS, FORMAT, OPTIONS(...) or an external table's column list; an unknown or invalid named argument of a read function (read_csv(..., delim='ab')). The message lists the known options."},
	{CodeNotStatement, ClassUser, "statement_needs_api", "A statement other than a query (DDL, COPY, EXPLAIN as SQL) was sent where only a query is accepted: send it to POST /v1/statements."},
	{CodeBadPartitions, ClassUser, "bad_partitions", "A table's files do not sit under the same hive key=value folders (another key set or order, a key twice), or a partition value does not parse as its declared type. The message names the table and the file."},
	{CodeBadTableName, ClassUser, "bad_table_name", "CREATE names a table other than 1 to 63 lower-case letters, digits and _ (quoted names too): a name becomes the folder of a CREATE TABLE AS table's files, so it can hold no '/'. Raised before anything is written."},
	{CodeWrongKind, ClassUser, "wrong_object_kind", "A statement for tables names a view, or one for views names a table: DROP TABLE of a view (use DROP VIEW), DROP VIEW of a table, INSERT INTO a view, CREATE OR REPLACE VIEW over a table."},
	{CodeSQLTooLarge, ClassUser, "sql_too_large", "The SQL text is longer than the coordinator's --max-sql-bytes (HTTP 413 from the API; the same limit holds for the Postgres wire protocol and Flight SQL), or nests more than 1000 levels deep (chained operators, parentheses, CASE, subqueries, set operations, joins: the parser's limit, the position says where). Nothing reaches the parser, the planner or Redis."},

	{CodeRuntime, ClassUser, "runtime_error", "The query failed on its data in a way no more specific code names."},
	{CodeInvalidCast, ClassUser, "invalid_cast", "A value cannot be cast to the target type (CAST('abc' AS INTEGER))."},
	{CodeIntegerOverflow, ClassUser, "integer_overflow", "Integer arithmetic, a SUM or a cast does not fit in 64 bits."},
	{CodeDecimalOverflow, ClassUser, "decimal_overflow", "A decimal result does not fit in 18 digits."},
	{CodeMemoryLimit, ClassUser, "memory_limit", "An operator needed more memory than its task's budget (half the function's --function-memory) and could not spill to disk: no spill directory, the spill space used up, a spill nested too deep, or an operator that cannot go on within the budget (one group's string_agg or list result that alone passes the budget: it is built in memory, a window partition larger than the budget with nth_value of an n that is not constant or with EXCLUDE and an UNBOUNDED bound, or a frame (a RANGE/GROUPS offset, or a peer group of ORDER BY ties that nth/last_value, a frame from CURRENT ROW or EXCLUDE GROUP/TIES needs whole) of more rows than the budget holds, a nested-loop join block that no longer fits when read back). The message names the operator and the budget, and ends with a hint of what to change: --function-memory, the spill space, or a higher --partitions with a lower --target-partition-bytes to spread the operator's input over more tasks."},
	{CodeBadInput, ClassUser, "bad_input_data", "A table file cannot be read as its format says (a malformed CSV line, a value that does not parse as its column's type)."},

	{CodeCorruptInput, ClassUser, "corrupt_input", "A table file is not valid in its format (a damaged Parquet footer or page): every read of it succeeded, its contents do not decode."},

	{CodeFileChanged, ClassUser, "table_file_changed", "A table file was replaced after the catalog listed it (its ETag is no longer the one the query was planned with): the scan stops rather than mix the bytes of two versions. An external table is listed again by its next query; run the query again (a table registered with CREATE TABLE ... AS or INSERT is rewritten only by sluice)."},

	{CodeRetriesExhausted, ClassTransient, "retries_exhausted", "A task failed with retryable errors on every attempt of its budget (--max-attempts); the message gives the last error."},
	{CodeTaskTimeout, ClassTransient, "task_timeout", "A task attempt ran past its deadline (--task-timeout) on every attempt."},
	{CodeInputsLost, ClassTransient, "inputs_lost", "More shuffle objects of the job were lost or corrupt than the repair budget allows."},
	{CodeStoreUnavailable, ClassTransient, "store_unavailable", "Redis (the job and catalog store) did not answer for longer than the coordinator's --redis-outage: the statement could not read the catalog or record the job. Nothing was run; check that Redis is up and submit again."},
	{CodeCatalogRead, ClassTransient, "catalog_read_failed", "A table's catalog entry could not be read for a reason other than Redis: an Iceberg catalog (--iceberg-catalog) did not answer or refused, or a table's metadata could not be fetched or decoded. The message names the table and the cause."},

	{CodeInternal, ClassInternal, "internal_error", "A bug in sluice: a plan inconsistent with its data or with itself. Please report it with the query."},
	{CodeBadSpec, ClassInternal, "bad_task_spec", "A function received a task description it cannot decode (a coordinator and function of different versions)."},
}

// Codes returns the registry, ordered by code.
func Codes() []CodeInfo {
	out := append([]CodeInfo(nil), registry...)
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// Lookup returns the registered code.
func Lookup(code string) (CodeInfo, bool) {
	for _, c := range registry {
		if c.Code == code {
			return c, true
		}
	}
	return CodeInfo{}, false
}

// ClassOf returns the class of a code. An unregistered SL0xx or SL1xx code
// (raised by a newer component) is the user's; any other unknown code is
// internal; no code at all is transient (an error sluice did not classify,
// such as a network error, is worth another attempt).
func ClassOf(code string) Class {
	if code == "" {
		return ClassTransient
	}
	if c, ok := Lookup(code); ok {
		return c.Class
	}
	if strings.HasPrefix(code, "SL0") || strings.HasPrefix(code, "SL1") {
		return ClassUser
	}
	return ClassInternal
}

// Coder is implemented by errors that carry a registry code (CodedError,
// the planner's Error).
type Coder interface {
	error
	ErrorCode() string
}

// Positioner is implemented by errors that point into the SQL text
// (1-based character offset, 0 for none).
type Positioner interface {
	ErrorPosition() int
}

// CodedError is an error with a registry code.
type CodedError struct {
	Code string
	Err  error
}

func (e *CodedError) Error() string     { return e.Err.Error() }
func (e *CodedError) Unwrap() error     { return e.Err }
func (e *CodedError) ErrorCode() string { return e.Code }

// Errorf returns a new CodedError. The format may wrap (%w).
func Errorf(code, format string, args ...any) error {
	return &CodedError{Code: code, Err: fmt.Errorf(format, args...)}
}

// WithCode gives err a code unless it already carries one.
func WithCode(code string, err error) error {
	if err == nil || CodeOf(err) != "" {
		return err
	}
	return &CodedError{Code: code, Err: err}
}

// CodeOf returns the code err carries: the outermost Coder in its chain;
// for the sentinels of this package and an uncoded UserError, their code;
// "" when err carries none.
func CodeOf(err error) string {
	if err == nil {
		return ""
	}
	var c Coder
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	switch {
	case errors.Is(err, ErrDecimalOverflow):
		return CodeDecimalOverflow
	case errors.As(err, new(*UserError)):
		return CodeRuntime
	}
	return ""
}

// PositionOf returns the SQL position err points at, 0 when none.
func PositionOf(err error) int {
	var p Positioner
	if errors.As(err, &p) {
		return p.ErrorPosition()
	}
	return 0
}

// ErrorsMarkdown renders the registry as docs/errors.md.
func ErrorsMarkdown() string {
	var b strings.Builder
	b.WriteString("# Error codes\n\n")
	b.WriteString("<!-- Generated from planner/plan/codes.go by `go generate ./planner/plan`; do not edit. -->\n\n")
	b.WriteString("Every error a user can meet carries a stable code. Match on the code, never on the message.\n")
	b.WriteString("The API answers errors as `{\"code\", \"class\", \"message\", \"position\"}` (position: the 1-based\n")
	b.WriteString("character offset into the SQL, 0 when none); a failed job's status has `code` and `class` next to\n")
	b.WriteString("`error`; the CLI prints the code first. The class decides what sluice does:\n\n")
	b.WriteString("| class | retried | meaning |\n|---|---|---|\n")
	b.WriteString("| user | no: the job fails on the first attempt | the query or its data is wrong |\n")
	b.WriteString("| unsupported | no | valid SQL that sluice does not run (yet) |\n")
	b.WriteString("| transient | yes, up to `--max-attempts` failed attempts per task | infrastructure trouble |\n")
	b.WriteString("| internal | no | a bug in sluice: please report it |\n\n")
	b.WriteString("Ranges: SL0xx planning, SL1xx run-time errors of the query or its data, SL2xx infrastructure\n")
	b.WriteString("(after the retry budget), SL9xx bugs. An error without a code is treated as transient.\n\n")
	b.WriteString("| code | name | class | when |\n|---|---|---|---|\n")
	for _, c := range Codes() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.Code, c.Name, c.Class, c.Doc)
	}
	return b.String()
}
