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
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/sluicedb/sluice/planner/plan"
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
}

// Options tune planning.
type Options struct {
	// Partitions is the number of hash partitions of shuffle exchanges
	// (default 8).
	Partitions int
	// BroadcastBytes is the estimated size up to which the build side of a
	// join is broadcast to the probe side's tasks rather than both sides
	// shuffled on the join keys (default DefaultBroadcastBytes; negative:
	// never, except where a join needs it: no keys, NOT IN, a probe side
	// in one task).
	BroadcastBytes int64
}

// DefaultPartitions is Options.Partitions when it is zero.
const DefaultPartitions = 8

// Planned is a planned query.
type Planned struct {
	// Logical is the optimized logical plan as indented text.
	Logical string
	// Rules are the logical rules that changed the plan, in the order run.
	Rules []string
	// Graph is the physical stage graph to execute.
	Graph *plan.Graph
}

// Plan parses, binds and plans one SQL statement. Errors a user can cause
// are *Error with a stable code; catalog failures other than an unknown
// table are returned wrapped.
func Plan(ctx context.Context, sql string, cat Catalog, opts Options) (*Planned, error) {
	if opts.Partitions <= 0 {
		opts.Partitions = DefaultPartitions
	}
	if opts.BroadcastBytes == 0 {
		opts.BroadcastBytes = DefaultBroadcastBytes
	}
	tree, err := pg.Parse(maskTryCast(sql))
	if err != nil {
		return nil, syntaxError(sql, err)
	}
	b := &binder{ctx: ctx, sql: sql, cat: cat, md: &metadata{}, pos: map[*plan.Expr]int32{}}
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
	rc := &ruleCtx{md: b.md, sql: sql, opts: opts}
	root, fired, err := optimize(root, rc, b.outerRefs)
	if err != nil {
		return nil, err
	}
	l := &lowerer{md: b.md, opts: opts, rc: rc, est: newEstimator(b.md)}
	g, err := l.lowerPlan(root)
	if err != nil {
		return nil, err
	}
	// A graph that breaks the plan contract is a planner bug, not the
	// user's: it wraps plan.ErrInvalidPlan, never an *Error.
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("planner bug: %w", err)
	}
	return &Planned{Logical: formatLogical(root, b.md), Rules: fired, Graph: g}, nil
}

// syntaxError converts a pg_query parse error into an SL001 Error. The
// parser's message already names the token ("syntax error at or near
// "where""); its cursor position is 1-based in characters.
func syntaxError(sql string, err error) error {
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
