package planner

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/sluicedb/sluice/planner/plan"
)

// Error codes a user can cause. They are stable: users, tests and tools match
// on the code, never on the message. The registry (codes, classes, docs) is
// plan.Codes; these names are kept for the planner's own use.
const (
	CodeSyntax      = plan.CodeSyntax       // the SQL does not parse
	CodeUnknownTbl  = plan.CodeUnknownTbl   // FROM names a table the catalog does not know, or a qualifier no FROM item has
	CodeUnknownCol  = plan.CodeUnknownCol   // a column reference resolves to nothing
	CodeType        = plan.CodeType         // operand types do not fit an operator, function or clause
	CodeUnsupported = plan.CodeUnsupported  // valid SQL that sluice does not run (yet)
	CodeAmbiguous   = plan.CodeAmbiguous    // a name resolves to more than one column
	CodeGrouping    = plan.CodeGrouping     // misuse of GROUP BY / aggregates (ungrouped column, aggregate in WHERE, nesting)
	CodeValue       = plan.CodeValue        // a constant is invalid or out of range (bad date, LIMIT -1, ORDER BY 9 of 2 columns)
	CodeTableExists = plan.CodeTableExists  // CREATE of a table that exists
	CodeBadLocation = plan.CodeBadLocation  // a LOCATION or COPY target that is not usable
	CodeBadOption   = plan.CodeBadOption    // an unknown or invalid statement option
	CodeWrongKind   = plan.CodeWrongKind    // a table statement on a view, or a view statement on a table
	CodeBadName     = plan.CodeBadTableName // CREATE of a table whose name is not [a-z_][a-z0-9_]*
)

// ErrUnknownTable is wrapped by a Catalog's error for a table it does not
// have; the planner turns it into an SL002 Error at the table's position.
var ErrUnknownTable = errors.New("unknown table")

// Error is a planning error a user can cause. Code is one of the Code*
// constants; Pos is the 1-based character offset into the SQL text of the
// construct the error refers to, 0 when there is none.
type Error struct {
	Code string
	Pos  int
	Msg  string
	err  error // underlying cause, if any (e.g. the catalog's error)
}

func (e *Error) Error() string {
	if e.Pos > 0 {
		return fmt.Sprintf("%s: %s at position %d", e.Code, e.Msg, e.Pos)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Msg)
}

// ErrorCode and ErrorPosition let every layer read the code and position
// (plan.CodeOf, plan.PositionOf) without importing the planner.
func (e *Error) ErrorCode() string  { return e.Code }
func (e *Error) ErrorPosition() int { return e.Pos }

// Unwrap returns the underlying cause, so errors.Is(err, ErrUnknownTable)
// holds for SL002 errors raised from the catalog.
func (e *Error) Unwrap() error { return e.err }

// errorf builds an Error at a parser location (0-based byte offset into sql;
// negative for none).
func (b *binder) errorf(code string, loc int32, format string, args ...any) *Error {
	return &Error{Code: code, Pos: charPos(b.sql, loc), Msg: fmt.Sprintf(format, args...)}
}

// unsupported builds an SL005 error: "unsupported: <what>".
func (b *binder) unsupported(loc int32, what string) *Error {
	return b.errorf(CodeUnsupported, loc, "unsupported: %s", what)
}

// charPos converts a 0-based byte offset into sql to a 1-based character
// offset; negative offsets (no location) give 0.
func charPos(sql string, loc int32) int {
	if loc < 0 {
		return 0
	}
	if int(loc) > len(sql) {
		loc = int32(len(sql))
	}
	return utf8.RuneCountInString(sql[:loc]) + 1
}
