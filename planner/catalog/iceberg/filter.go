package iceberg

import (
	iceberggo "github.com/apache/iceberg-go"

	"github.com/sluicedb/sluice/planner/plan"
)

// Filter translates a scan's pruning filter (over its output columns,
// named by cols) into an Iceberg row filter for planning. It keeps what
// the manifest evaluators understand: AND / OR / NOT of comparisons of a
// column with a literal of the column's type, IN lists, IS [NOT] NULL.
// A part it cannot translate becomes "true" (keeps every file), so the
// result is never narrower than the filter: rows are still filtered above
// the scan.
func Filter(e *plan.Expr, cols []string) iceberggo.BooleanExpression {
	if e == nil {
		return iceberggo.AlwaysTrue{}
	}
	if f, ok, _ := filter(e, cols); ok {
		return f
	}
	return iceberggo.AlwaysTrue{}
}

// filter translates e; exact says no part of it was dropped (to "true").
func filter(e *plan.Expr, cols []string) (f iceberggo.BooleanExpression, ok, exact bool) {
	switch e.Op {
	case plan.OpAnd:
		var out iceberggo.BooleanExpression = iceberggo.AlwaysTrue{}
		exact := true
		for _, a := range e.Args {
			f, ok, ex := filter(a, cols)
			if ok {
				out = iceberggo.NewAnd(out, f)
			}
			exact = exact && ok && ex
		}
		return out, true, exact
	case plan.OpOr:
		if len(e.Args) == 0 {
			return nil, false, false
		}
		var out iceberggo.BooleanExpression = iceberggo.AlwaysFalse{}
		exact := true
		for _, a := range e.Args {
			f, ok, ex := filter(a, cols)
			if !ok {
				return nil, false, false
			}
			out = iceberggo.NewOr(out, f)
			exact = exact && ex
		}
		return out, true, exact
	case plan.OpNot:
		// NOT of a partial translation would be wider, not narrower: only
		// a complete one can be negated.
		if len(e.Args) != 1 {
			return nil, false, false
		}
		f, ok, exact := filter(e.Args[0], cols)
		if !ok || !exact {
			return nil, false, false
		}
		return iceberggo.NewNot(f), true, true
	case plan.OpLiteral:
		if e.Type.ID == plan.Bool && e.Value != nil && !e.Value.Null {
			if e.Value.B {
				return iceberggo.AlwaysTrue{}, true, true
			}
			return iceberggo.AlwaysFalse{}, true, true
		}
		if e.Value == nil || e.Value.Null || e.Type.ID == plan.Null {
			return iceberggo.AlwaysFalse{}, true, true // NULL is not TRUE
		}
		return nil, false, false
	case plan.OpIsNull, plan.OpIsNotNull:
		ref, ok := column(e.Args, cols)
		if !ok {
			return nil, false, false
		}
		if e.Op == plan.OpIsNull {
			return iceberggo.IsNull(ref), true, true
		}
		return iceberggo.NotNull(ref), true, true
	case plan.OpEq, plan.OpNe, plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe:
		if len(e.Args) != 2 {
			return nil, false, false
		}
		c, l, op := e.Args[0], e.Args[1], e.Op
		if c.Op == plan.OpLiteral && l.Op == plan.OpColumn {
			c, l, op = l, c, op.Flipped()
		}
		if c.Op != plan.OpColumn || l.Op != plan.OpLiteral || c.Col < 0 || c.Col >= len(cols) {
			return nil, false, false
		}
		lit, ok := literal(l, c.Type)
		if !ok {
			return nil, false, false
		}
		return iceberggo.LiteralPredicate(operation(op), iceberggo.Reference(cols[c.Col]), lit), true, true
	case plan.OpIn:
		if e.Negated || len(e.Args) < 2 {
			return nil, false, false
		}
		c := e.Args[0]
		if c.Op != plan.OpColumn || c.Col < 0 || c.Col >= len(cols) {
			return nil, false, false
		}
		var out iceberggo.BooleanExpression = iceberggo.AlwaysFalse{}
		for _, a := range e.Args[1:] {
			if a.Op != plan.OpLiteral {
				return nil, false, false
			}
			if a.Value == nil || a.Value.Null {
				continue // x = NULL is never TRUE
			}
			lit, ok := literal(a, c.Type)
			if !ok {
				return nil, false, false
			}
			out = iceberggo.NewOr(out, iceberggo.LiteralPredicate(iceberggo.OpEQ, iceberggo.Reference(cols[c.Col]), lit))
		}
		return out, true, true
	}
	return nil, false, false
}

func column(args []*plan.Expr, cols []string) (iceberggo.UnboundTerm, bool) {
	if len(args) != 1 || args[0].Op != plan.OpColumn || args[0].Col < 0 || args[0].Col >= len(cols) {
		return nil, false
	}
	return iceberggo.Reference(cols[args[0].Col]), true
}

// literal converts a literal compared with a column of type t; only a
// literal of the column's own type converts.
func literal(l *plan.Expr, t plan.DataType) (iceberggo.Literal, bool) {
	v := l.Value
	if v == nil || v.Null || l.Type.ID != t.ID {
		return nil, false
	}
	switch t.ID {
	case plan.Int64:
		return iceberggo.NewLiteral(v.I), true
	case plan.Float64:
		return iceberggo.NewLiteral(v.F), true
	case plan.String:
		return iceberggo.NewLiteral(v.S), true
	case plan.Bool:
		return iceberggo.NewLiteral(v.B), true
	case plan.Date:
		return iceberggo.NewLiteral(iceberggo.Date(v.I)), true
	case plan.Timestamp:
		return iceberggo.NewLiteral(iceberggo.Timestamp(v.I)), true
	}
	return nil, false
}

func operation(op plan.Op) iceberggo.Operation {
	switch op {
	case plan.OpEq:
		return iceberggo.OpEQ
	case plan.OpNe:
		return iceberggo.OpNEQ
	case plan.OpLt:
		return iceberggo.OpLT
	case plan.OpLe:
		return iceberggo.OpLTEQ
	case plan.OpGt:
		return iceberggo.OpGT
	}
	return iceberggo.OpGTEQ
}
