package planner

import "github.com/sluicedb/sluice/planner/plan"

// libraryAggregate types the aggregates beyond sum/avg/count/min/max:
// the variance family (float64 over a numeric argument cast to float64)
// and bool_and/bool_or (min/max of a bool). done is false for the others.
func (b *binder) libraryAggregate(name string, a *aggExpr, loc int32) (done bool, err error) {
	switch {
	case a.fn.IsVariance():
		if !a.arg.Type.IsNumeric() {
			return true, b.errorf(CodeType, loc, "type mismatch: %s is not defined for %s", name, a.arg.Type)
		}
		if a.arg, err = b.cast(a.arg, plan.Float64Type, loc); err != nil {
			return true, err
		}
		a.typ = plan.Float64Type
		return true, nil
	case name == "bool_and" || name == "bool_or" || name == "every":
		if a.arg.Type.ID != plan.Bool {
			return true, b.errorf(CodeType, loc, "type mismatch: %s is not defined for %s", name, a.arg.Type)
		}
		a.typ, a.distinct = plan.BoolType, false
		return true, nil
	}
	return false, nil
}
