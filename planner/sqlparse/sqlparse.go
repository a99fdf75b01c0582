// Package sqlparse is the one entry to pg_query's parser: every SQL text
// sluice parses (the planner, the Postgres wire protocol's session and
// catalog statements) goes through Parse, which bounds how deeply the text
// nests before the C parser sees it.
//
// pg_query's parser is C code run on the calling thread's stack. A left-deep
// chain such as 1+1+...+1 costs the grammar nothing (it reduces as it goes),
// but the tree it builds is as deep as the chain is long, and pg_query walks
// that tree recursively to hand it to Go: about 24,000 levels overflow an
// 8 MiB thread stack and the process dies with SIGSEGV, which Go cannot
// recover. Check estimates the depth from the tokens alone (pg_query's
// scanner is not recursive) and refuses text deeper than MaxDepth, a
// twentieth of what crashes on an 8 MiB stack (TestDeepInputsSmallStack
// parses the deepest accepted inputs on a 1 MiB one).
package sqlparse

import (
	"fmt"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// MaxDepth is the deepest nesting Check accepts, in levels: an operator
// chained to the previous one without AND, OR or a comma between them, a
// parenthesis, bracket or CASE, a set operation (UNION, INTERSECT, EXCEPT)
// and a JOIN each add one. DuckDB's max_expression_depth has the same
// default.
const MaxDepth = 1000

// DepthError is the error of SQL text that nests deeper than the limit. Its
// code is plan.CodeSQLTooLarge.
type DepthError struct {
	Limit int
	// Pos is the 1-based character position at which the text went over
	// the limit.
	Pos int
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("%s: %s at position %d", plan.CodeSQLTooLarge, e.Message(), e.Pos)
}

// Message says what limit was hit, without the code and position.
func (e *DepthError) Message() string {
	return fmt.Sprintf("the SQL nests more than %d levels deep (chained operators, parentheses, CASE, subqueries, set operations and joins each add levels; AND, OR and commas do not)", e.Limit)
}

// ErrorCode and ErrorPosition let every layer read the code and position
// (plan.CodeOf, plan.PositionOf).
func (e *DepthError) ErrorCode() string  { return plan.CodeSQLTooLarge }
func (e *DepthError) ErrorPosition() int { return e.Pos }

// Parse checks sql with Check and parses it with pg_query. A parse error is
// pg_query's (*parser.Error); a text over the limit is a *DepthError.
func Parse(sql string) (*pg.ParseResult, error) {
	if err := Check(sql); err != nil {
		return nil, err
	}
	return pg.Parse(sql)
}

// Check returns a *DepthError when sql nests deeper than MaxDepth. Text the
// scanner rejects (an unterminated string) passes: the parser reports it
// without building a tree.
func Check(sql string) error {
	return check(sql, MaxDepth)
}

func check(sql string, limit int) error {
	res, err := pg.Scan(sql)
	if err != nil {
		return nil
	}
	e := estimator{limit: limit}
	e.reset()
	for _, t := range res.Tokens {
		if e.token(t) {
			return &DepthError{Limit: limit, Pos: utf8.RuneCountInString(sql[:min(int(t.Start), len(sql))]) + 1}
		}
	}
	return nil
}

// Depth returns the nesting depth Check estimates for sql (0 when it does
// not scan).
func Depth(sql string) int {
	res, err := pg.Scan(sql)
	if err != nil {
		return 0
	}
	e := estimator{limit: int(^uint(0) >> 1)}
	e.reset()
	for _, t := range res.Tokens {
		e.token(t)
	}
	return max(e.done, e.closeAll())
}

// The estimate. The text is read as nested frames (the statement, and each
// parenthesis, bracket and CASE in it); a frame is a sequence of segments
// separated by AND, OR, commas and clause keywords, which become siblings in
// the tree (Postgres flattens AND and OR chains into one list). Within a
// segment every operator may nest its left operand one level deeper (a
// left-deep chain) and a nested frame hangs below all of them, so a
// segment's depth is its operators plus its deepest frame; a frame's is one
// plus its set operations and joins (left-deep too) plus its deepest
// segment. This bounds the depth of the tree the parser builds, counting a
// pair of parentheses that builds no node as a level.
type frame struct {
	closer     pg.Token // ')' or ']' or END_P; 0 for the statement
	weight     int      // the levels of the frame itself
	structural int      // UNION, INTERSECT, EXCEPT, JOIN so far
	ops        int      // operators of the current segment
	child      int      // the deepest frame closed in the current segment
	best       int      // the deepest segment before the current one
	between    bool     // a BETWEEN waits for its AND
}

func (f *frame) depth() int { return f.weight + f.structural + max(f.best, f.ops+f.child) }

// Frame weights, in levels of about two protobuf messages each (what a
// chained operator costs): a parenthesis or bracket, a CASE (its WHEN
// clauses sit in a list below it) and a query (a subquery or CTE: the
// sublink, the statement, its target list).
const (
	parenWeight = 1
	caseWeight  = 2
	queryWeight = 3
)

type estimator struct {
	limit  int
	frames []frame
	done   int // the deepest statement finished
}

func (e *estimator) reset() { e.frames = append(e.frames[:0], frame{weight: queryWeight}) }

// open starts a frame and reports whether the frames alone go over the
// limit.
func (e *estimator) open(closer pg.Token, weight int) bool {
	e.frames = append(e.frames, frame{closer: closer, weight: weight})
	return len(e.frames) > e.limit
}

func (e *estimator) top() *frame { return &e.frames[len(e.frames)-1] }

// closeTop closes the innermost frame and returns its depth.
func (e *estimator) closeTop() int {
	d := e.top().depth()
	e.frames = e.frames[:len(e.frames)-1]
	if len(e.frames) > 0 {
		p := e.top()
		p.child = max(p.child, d)
	}
	return d
}

// closeAll closes every open frame and returns the statement's depth.
func (e *estimator) closeAll() int {
	d := 0
	for len(e.frames) > 0 {
		d = e.closeTop()
	}
	e.reset()
	return d
}

// token reads one token and reports whether the depth went over the limit.
func (e *estimator) token(t *pg.ScanToken) bool {
	f := e.top()
	switch tok := t.Token; {
	case tok == pg.Token_ASCII_40: // (
		return e.open(pg.Token_ASCII_41, parenWeight)
	case tok == pg.Token_ASCII_91: // [
		return e.open(pg.Token_ASCII_93, parenWeight)
	case tok == pg.Token_CASE:
		return e.open(pg.Token_END_P, caseWeight)
	case tok == pg.Token_ASCII_41 || tok == pg.Token_ASCII_93 || tok == pg.Token_END_P:
		// Close up to the matching frame; a closer without one (unbalanced
		// text, END as a statement) closes nothing.
		for i := len(e.frames) - 1; i > 0; i-- {
			if e.frames[i].closer == tok {
				for len(e.frames) > i {
					if e.closeTop() > e.limit {
						return true
					}
				}
				break
			}
		}
		// The closed frame hangs below the operators of the segment it
		// closed in.
		return e.top().depth() > e.limit
	case tok == pg.Token_ASCII_59: // ;
		e.done = max(e.done, e.closeAll())
		return e.done > e.limit
	case tok == pg.Token_AND && f.between: // BETWEEN's bounds: one segment
		f.between = false
		return false
	case separators[tok]:
		if queries[tok] {
			f.weight = max(f.weight, queryWeight)
		}
		f.best = max(f.best, f.ops+f.child)
		f.ops, f.child = 0, 0
		return false
	case structural[tok]:
		f.structural++
	case tok == pg.Token_BETWEEN: // its bounds sit in a list below it
		f.ops += 2
		f.between = true
	case operators[tok] || tok == pg.Token_Op:
		f.ops++
	default:
		return false
	}
	return f.depth() > e.limit
}

// separators start a sibling of what precedes them in the same frame.
var separators = map[pg.Token]bool{
	pg.Token_ASCII_44: true, // ,
	pg.Token_AND:      true, pg.Token_OR: true,
	pg.Token_WHEN: true, pg.Token_THEN: true, pg.Token_ELSE: true,
	pg.Token_SELECT: true, pg.Token_WHERE: true, pg.Token_GROUP_P: true, pg.Token_HAVING: true,
	pg.Token_ORDER: true, pg.Token_LIMIT: true, pg.Token_OFFSET: true, pg.Token_ON: true,
	pg.Token_USING: true, pg.Token_WINDOW: true, pg.Token_VALUES: true, pg.Token_RETURNING: true, pg.Token_WITH: true,
}

// queries make their frame a query's.
var queries = map[pg.Token]bool{pg.Token_SELECT: true, pg.Token_VALUES: true, pg.Token_WITH: true}

// structural tokens nest what precedes them one level deeper, across
// segments: the set operations and joins of a frame build left-deep trees
// of whole queries and FROM items.
var structural = map[pg.Token]bool{
	pg.Token_UNION: true, pg.Token_INTERSECT: true, pg.Token_EXCEPT: true, pg.Token_JOIN: true,
}

// operators may nest an operand one level deeper.
var operators = map[pg.Token]bool{
	pg.Token_ASCII_37: true, pg.Token_ASCII_42: true, pg.Token_ASCII_43: true, pg.Token_ASCII_45: true, // % * + -
	pg.Token_ASCII_47: true, pg.Token_ASCII_60: true, pg.Token_ASCII_61: true, pg.Token_ASCII_62: true, // / < = >
	pg.Token_ASCII_94: true, pg.Token_ASCII_58: true, // ^ :
	pg.Token_TYPECAST: true, pg.Token_LESS_EQUALS: true, pg.Token_GREATER_EQUALS: true, pg.Token_NOT_EQUALS: true,
	pg.Token_EQUALS_GREATER: true, pg.Token_COLON_EQUALS: true,
	pg.Token_NOT: true, pg.Token_NOT_LA: true, pg.Token_IS: true, pg.Token_ISNULL: true, pg.Token_NOTNULL: true,
	pg.Token_LIKE: true, pg.Token_ILIKE: true, pg.Token_SIMILAR: true, pg.Token_IN_P: true,
	pg.Token_COLLATE: true, pg.Token_AT: true, pg.Token_OVERLAPS: true, pg.Token_OPERATOR: true,
	pg.Token_UESCAPE: true, pg.Token_ESCAPE: true, pg.Token_EXISTS: true, pg.Token_ANY: true, pg.Token_ALL: true,
	pg.Token_SOME: true, pg.Token_ARRAY: true, pg.Token_ROW: true,
}
