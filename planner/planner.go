// Package planner turns SQL text into sluice's physical stage graph.
//
// The pipeline (each step in its own file):
//
//	parse (pg_query) -> bind (bind.go, bind_expr.go, types.go, fold.go)
//	  -> logical plan (logical.go, logical_join.go; subqueries as joins,
//	     bind_subquery.go) -> logical rules (rules.go, rule_*.go; sizes
//	     from estimate.go) -> physical operators and stages (lower.go,
//	     lower_join.go) -> plan.Graph
//
// Explain renders every step's result as stable text (explain.go).
package planner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/planner/sqlparse"
)

// Catalog is what the planner needs of the table catalog.
type Catalog interface {
	// Table returns the table called name. For a table it does not have it
	// returns an error wrapping ErrUnknownTable; any other error is passed
	// on to the caller of Plan as is (wrapped).
	Table(ctx context.Context, name string) (*TableInfo, error)
}

// TableInfo describes one table.
type TableInfo struct {
	Name    string
	Format  string       // "parquet" or "csv"
	Columns []plan.Field // engine types, in file order
	Rows    int64        // estimated row count (0: unknown)
	Bytes   int64        // total size of the table's files
	// Constant tables have no files: their rows are Values, one value per
	// column of its type, and bind as a Values leaf (virtual.go).
	Constant bool
	Values   [][]plan.Value
	// View, when set, makes the table a view: the text of its query,
	// bound in place of a scan wherever the view is named (bind_view.go).
	View string
	// Skipped are the file columns left out of Columns because sluice
	// cannot read their type: a reference to one is SL005 naming it.
	Skipped []SkippedColumn
	// Distinct estimates distinct values per column name (case as in
	// Columns), for the join-order and aggregation estimates; a column
	// without one is taken as unique.
	Distinct map[string]int64
}

// SkippedColumn is a column of a table's files that the table leaves out
// (its type is not supported), with the file's type text.
type SkippedColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Options tune planning.
type Options struct {
	// Partitions, when set, is the number of hash partitions of every
	// shuffle exchange (an override); when 0 the count comes from the data
	// (see PartitionsFor).
	Partitions int
	// TaskBytes is the estimated exchange input (in-memory bytes) one
	// task is sized for: a query's hash exchanges get enough partitions
	// that the biggest one's partitions hold at most this much. 0:
	// DefaultTaskBytes. Set from the function memory by TaskBytesFor.
	TaskBytes int64
	// MinPartitions and MaxPartitions bound the count from the data
	// (defaults DefaultMinPartitions, DefaultMaxPartitions).
	MinPartitions, MaxPartitions int
	// BroadcastBytes is the estimated size up to which the build side of a
	// join is broadcast to the probe side's tasks rather than both sides
	// shuffled on the join keys (default DefaultBroadcastBytes; negative:
	// never, except where a join needs it: no keys, NOT IN, a probe side
	// in one task).
	BroadcastBytes int64
	// FilterCutBytes is the estimated size from which a probe-side scan
	// makes a selective build side computed in its join's stage a stage
	// of its own, for a runtime filter (filter_cut.go; default
	// DefaultFilterCutBytes; negative: never).
	FilterCutBytes int64
	// Postgres gives the operators whose meaning differs between DuckDB
	// and Postgres their Postgres meaning: x ~ p matches p anywhere in x
	// (DuckDB: the whole of x), and LIKE's escape character is backslash
	// unless ESCAPE names another (DuckDB: none). The Postgres catalog
	// of coordinator/pgwire is planned with it.
	Postgres bool
}

// Partition counts from the data. Extra partitions are nearly free (a
// task writes one object whatever the count, and adaptive coalescing packs
// small partitions into one task whose adjacent ranges are one GET), while
// too few cannot be undone except by skew splitting; so the count from
// the data never goes below DefaultMinPartitions.
const (
	DefaultMinPartitions = 8
	DefaultMaxPartitions = 4096
	// DefaultFunctionMemory is a function's memory when none is given.
	DefaultFunctionMemory = 1 << 30
	// DefaultTaskBytes is TaskBytesFor(DefaultFunctionMemory).
	DefaultTaskBytes = DefaultFunctionMemory / taskMemoryShare
	// taskMemoryShare: a task's exchange input is sized to 1/4 of its
	// function's memory, leaving room for decoded batches, hash tables,
	// output buffers and the runtime.
	taskMemoryShare = 4
)

// DefaultPartitions is kept for callers that want the old fixed count.
const DefaultPartitions = DefaultMinPartitions

// TaskBytesFor returns Options.TaskBytes for functions of mem bytes.
func TaskBytesFor(mem int64) int64 {
	if mem <= 0 {
		mem = DefaultFunctionMemory
	}
	return max(mem/taskMemoryShare, 1)
}

// PartitionsFor returns the hash partition count for a query whose
// biggest exchange input is estimated at bytes: ceil(bytes/TaskBytes),
// clamped to [MinPartitions, MaxPartitions]; Options.Partitions when set.
func PartitionsFor(bytes float64, opts Options) int {
	if opts.Partitions > 0 {
		return opts.Partitions
	}
	tb, lo, hi := opts.TaskBytes, opts.MinPartitions, opts.MaxPartitions
	if tb <= 0 {
		tb = DefaultTaskBytes
	}
	if lo <= 0 {
		lo = DefaultMinPartitions
	}
	if hi <= 0 {
		hi = DefaultMaxPartitions
	}
	hi = max(hi, lo)
	n := math.Ceil(bytes / float64(tb))
	if math.IsNaN(n) || n < float64(lo) {
		return lo
	}
	if n > float64(hi) {
		return hi
	}
	return int(n)
}

// maxBytes returns the biggest estimated output of n and its inputs: an
// upper bound of what any exchange of the query moves.
func maxBytes(es *estimator, n node) float64 {
	m := es.bytes(n)
	for _, c := range n.children() {
		m = math.Max(m, maxBytes(es, c))
	}
	return m
}

// Planned is a planned query.
type Planned struct {
	// Logical is the optimized logical plan as indented text.
	Logical string
	// Rules are the logical rules that changed the plan, in the order run.
	Rules []string
	// Graph is the physical stage graph to execute.
	Graph *plan.Graph
	// Estimates is the optimized logical plan with the estimator's rows
	// and bytes on every operator: what join ordering, the broadcast
	// decision and the static partition count were based on.
	Estimates string
}

// Plan parses, binds and plans one SQL statement. Errors a user can cause
// are *Error with a stable code; catalog failures other than an unknown
// table are returned wrapped.
func Plan(ctx context.Context, sql string, cat Catalog, opts Options) (*Planned, error) {
	if opts.BroadcastBytes == 0 {
		opts.BroadcastBytes = DefaultBroadcastBytes
	}
	sql = rewriteNestedLiterals(sql)
	tree, quals, err := parse(sql)
	if err != nil {
		return nil, err
	}
	if opts.Postgres {
		if err := rewriteArrayAgg(tree); err != nil {
			return nil, err
		}
	}
	b := &binder{ctx: ctx, sql: sql, cat: cat, md: &metadata{}, pos: map[*plan.Expr]int32{}, qualify: quals, postgres: opts.Postgres}
	switch len(tree.Stmts) {
	case 0:
		return nil, &Error{Code: CodeSyntax, Msg: "syntax error: empty statement"}
	case 1:
	default:
		return nil, b.unsupported(tree.Stmts[1].StmtLocation, "more than one statement")
	}
	root, err := b.bindStatement(tree.Stmts[0])
	if err != nil {
		return nil, err
	}
	if err := b.unusedQualify(); err != nil {
		return nil, err
	}
	rc := &ruleCtx{md: b.md, sql: sql, opts: opts}
	root, logical, fired, err := optimize(root, rc, b.outerRefs)
	if err != nil {
		return nil, err
	}
	est := newEstimator(b.md)
	// One count for the whole query, so that exchanges on the same keys
	// stay co-partitioned (a join of two such sides runs in place).
	opts.Partitions = PartitionsFor(maxBytes(est, root), opts)
	l := &lowerer{md: b.md, opts: opts, rc: rc, est: est}
	g, err := l.lowerPlan(root)
	if err != nil {
		return nil, err
	}
	g.ReuseStages()
	g.ElideGather()
	if err := checkNested(g); err != nil {
		return nil, err
	}
	// A graph that breaks the plan contract is a planner bug, not the
	// user's: it wraps plan.ErrInvalidPlan, never an *Error.
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("planner bug: %w", err)
	}
	return &Planned{Logical: logical, Rules: fired, Graph: g, Estimates: formatEstimates(root, b.md, est)}, nil
}

// parse parses sql with pg_query after rewriting the DuckDB syntax the
// Postgres grammar lacks (TRY_CAST, GROUP BY ALL, QUALIFY, //, FOR VERSION
// AS OF) at the same
// byte offsets. Text that nests too deeply for the parser is refused first
// (sqlparse.Check), before any of it is parsed.
func parse(sql string) (*pg.ParseResult, *qualifies, error) {
	if err := sqlparse.Check(sql); err != nil {
		return nil, nil, syntaxError(sql, err)
	}
	masked, quals, err := splitQualify(maskOrderByAll(maskGroupByAll(maskTryCast(maskNestedTypes(maskIntDiv(maskIntervalCount(maskTimeTravel(maskFromPaths(maskStructArgs(sql))))))))))
	if err != nil {
		return nil, nil, err
	}
	tree, err := sqlparse.Parse(masked)
	if err != nil {
		return nil, nil, syntaxError(sql, err)
	}
	return tree, quals, nil
}

// syntaxError converts an error of sqlparse.Parse into an Error: SL090 for
// text over the nesting limit, else SL001. The parser's message already
// names the token ("syntax error at or near "where""); its cursor position
// is 1-based in characters.
func syntaxError(sql string, err error) error {
	var de *sqlparse.DepthError
	if errors.As(err, &de) {
		return &Error{Code: plan.CodeSQLTooLarge, Pos: de.Pos, Msg: de.Message(), err: err}
	}
	var pe *pgparser.Error
	if errors.As(err, &pe) {
		msg := pe.Message
		if !strings.HasPrefix(msg, "syntax error") {
			msg = "syntax error: " + msg
		}
		return &Error{Code: CodeSyntax, Pos: pe.Cursorpos, Msg: msg, err: err}
	}
	return &Error{Code: CodeSyntax, Msg: "syntax error: " + err.Error(), err: err}
}
