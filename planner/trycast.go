package planner

import (
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// TRY_CAST(x AS t) is DuckDB syntax the Postgres grammar lacks. Before
// parsing, maskTryCast blanks the "try_" of each TRY_CAST keyword (outside
// string literals, quoted identifiers and comments), so the parser sees a
// CAST at the same byte offsets; the binder, which keeps the original
// text, recognizes a cast whose keyword was preceded by "try_".

// maskTryCast returns sql with every TRY_CAST keyword turned into
// "    CAST" (same length, so parser locations stay those of sql).
func maskTryCast(sql string) string {
	if !strings.Contains(strings.ToLower(sql), "try_cast") {
		return sql
	}
	out := []byte(sql)
	sqlWords(sql, func(pos int, w string) {
		if w == "try_cast" && nextIsParen(sql[pos+len(w):]) {
			copy(out[pos:], "    ")
		}
	})
	return string(out)
}

// isTryCast reports whether the CAST keyword at loc was written TRY_CAST.
func (b *binder) isTryCast(loc int32) bool {
	i := int(loc)
	return i >= 4 && i <= len(b.sql) && strings.EqualFold(b.sql[i-4:i], "try_")
}

// tryCast is cast with TRY_CAST semantics: a value that cannot be
// converted is NULL (a literal folds to NULL at plan time). Types that
// cannot be cast at all are still a type error, as in DuckDB.
func (b *binder) tryCast(e *plan.Expr, t plan.DataType, loc int32) (*plan.Expr, error) {
	if e.Type == t {
		return e, nil
	}
	if !castAllowed(e.Type, t) {
		return nil, b.errorf(CodeType, loc, "type mismatch: cannot cast %s to %s", e.Type, t)
	}
	if isLit(e) {
		v, folded, err := castValue(*e.Value, e.Type, t)
		if err != nil {
			return nullOf(t), nil
		}
		if folded {
			return lit(v, t), nil
		}
	}
	return plan.Call(plan.OpTryCast, t, e), nil
}
