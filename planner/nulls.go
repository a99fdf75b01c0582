package planner

import (
	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// The planner's two NULL analyses of a scalar expression. Both are
// conservative and opt-in: an operator or function counts only where its
// NULL behaviour is known, so an operator added later is safe until it is
// listed here. Library functions (plan.OpFunc) answer from the function
// registry's own flags (exec.ScalarFunction.Strict and NullOnValues), so a
// non-strict function such as greatest, least, concat or coalesce-like
// library entries never lets an outer join become inner.

// strictOps are the operators that are NULL whenever an argument is: every
// argument for arithmetic, comparisons, NOT, casts, EXTRACT, SUBSTRING and
// LIKE; for IN only the tested value (a NULL in the list does not make
// x IN (...) NULL when x matches another item).
func strictArgs(e *plan.Expr) []*plan.Expr {
	switch e.Op {
	case plan.OpAdd, plan.OpSub, plan.OpMul, plan.OpDiv, plan.OpMod, plan.OpNeg,
		plan.OpEq, plan.OpNe, plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe,
		plan.OpNot, plan.OpCast, plan.OpTryCast, plan.OpLike, plan.OpExtract, plan.OpSubstring:
		return e.Args
	case plan.OpIn:
		if len(e.Args) > 0 {
			return e.Args[:1]
		}
	case plan.OpFunc:
		if f, ok := exec.LookupFunction(e.Func); ok && f.Strict() {
			return e.Args
		}
	}
	return nil
}

// strictIn reports whether e is NULL whenever every column of cols is.
func strictIn(e *plan.Expr, cols map[colID]bool) bool {
	if e.Op == plan.OpColumn {
		return cols[e.Col]
	}
	for _, a := range strictArgs(e) {
		if strictIn(a, cols) {
			return true
		}
	}
	return false
}

// mayBeNull reports whether e can be NULL, given which columns can be.
func mayBeNull(e *plan.Expr, nullable func(colID) bool) bool {
	switch e.Op {
	case plan.OpColumn:
		return nullable(e.Col)
	case plan.OpLiteral:
		return e.Value.Null
	case plan.OpIsNull, plan.OpIsNotNull:
		return false
	case plan.OpAdd, plan.OpSub, plan.OpMul, plan.OpNeg,
		plan.OpEq, plan.OpNe, plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe,
		plan.OpNot, plan.OpAnd, plan.OpOr, plan.OpLike, plan.OpIn, plan.OpExtract, plan.OpSubstring:
		// NULL only from a NULL argument (OpDiv and OpMod are NULL for a
		// zero divisor, casts for values out of range: they fall through).
	case plan.OpFunc:
		f, ok := exec.LookupFunction(e.Func)
		if !ok || f.NullOnValues {
			return true
		}
	default:
		return true
	}
	for _, a := range e.Args {
		if mayBeNull(a, nullable) {
			return true
		}
	}
	return false
}
