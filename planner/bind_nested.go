package planner

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// Field access and subscripts of nested values, as DuckDB binds them:
//
//	s.a, t.s.a, (s).a   a struct field (a table qualifier is tried first:
//	                    t.s is column s of table t when t is a FROM item,
//	                    else field s of column t)
//	s['a']              a struct field by a constant name
//	l[i]                list_extract: 1-based, negative from the end
//	m[k]                map_extract_value: the value, NULL when absent
//
// Field names match regardless of case.

// relNamed reports whether a FROM item of s or an enclosing scope is
// called alias.
func relNamed(s *scope, alias string) bool {
	for ; s != nil; s = s.parent {
		for _, r := range s.rels {
			if strings.EqualFold(r.alias, alias) {
				return true
			}
		}
	}
	return false
}

// bindFieldPath binds a column reference of more names than a qualified
// column (t.s.a, s.a.b) or whose first name is no FROM item (s.a) as a
// column and struct fields; ok false when cr is a plain column reference.
func (b *binder) bindFieldPath(cr *pg.ColumnRef, c *exprCtx) (*plan.Expr, bool, error) {
	var names []string
	for _, f := range cr.Fields {
		s, ok := f.Node.(*pg.Node_String_)
		if !ok {
			return nil, false, nil
		}
		names = append(names, s.String_.Sval)
	}
	n := 1 // names taken by the column reference
	if relNamed(c.scope, names[0]) {
		n = 2
	}
	if len(names) <= n {
		return nil, false, nil
	}
	base, err := b.bindColumnRef(&pg.ColumnRef{Fields: cr.Fields[:n], Location: cr.Location}, c)
	if err != nil {
		if n == 1 && len(names) == 2 {
			return nil, false, nil // not a column either: the qualified reference's error
		}
		return nil, true, err
	}
	e := base
	for _, f := range names[n:] {
		if e, err = b.structField(e, f, cr.Location); err != nil {
			return nil, true, err
		}
	}
	return e, true, nil
}

// structField is field name of struct-typed e.
func (b *binder) structField(e *plan.Expr, name string, loc int32) (*plan.Expr, error) {
	if e.Type.ID != plan.Struct {
		return nil, b.errorf(CodeType, loc, "type mismatch: %s is of type %s, not a struct: it has no field %q", e, e.Type, name)
	}
	f, k := e.Type.Field(name)
	if k < 0 {
		return nil, b.errorf(CodeUnknownCol, loc, "struct %s has no field %q", e.Type, name)
	}
	return plan.CallFunc("struct_extract", f.Type, e, lit(plan.Value{S: f.Name}, plan.StringType)), nil
}

// structExtract binds struct_extract(s, 'name').
func (b *binder) structExtract(args []*plan.Expr, loc int32) (*plan.Expr, error) {
	if len(args) != 2 || !isLit(fold(args[1])) || fold(args[1]).Type.ID != plan.String || fold(args[1]).Value.Null {
		return nil, b.errorf(CodeType, loc, "type mismatch: struct_extract takes a struct and a constant field name")
	}
	return b.structField(args[0], fold(args[1]).Value.S, loc)
}

// nestedIndirection binds subscripts and fields of a nested value (ok
// false: ind.Arg is not of a nested type, for the Postgres array forms).
func (b *binder) nestedIndirection(ind *pg.A_Indirection, c *exprCtx) (*plan.Expr, bool, error) {
	if ind.Arg.GetAArrayExpr() != nil || len(ind.Indirection) == 0 {
		return nil, false, nil
	}
	e, err := b.bindExpr(ind.Arg, c)
	if err != nil || !e.Type.IsNested() {
		return nil, false, nil
	}
	loc := exprLoc(ind.Arg)
	for _, step := range ind.Indirection {
		switch x := step.Node.(type) {
		case *pg.Node_String_:
			if e, err = b.structField(e, x.String_.Sval, loc); err != nil {
				return nil, true, err
			}
		case *pg.Node_AIndices:
			if x.AIndices.IsSlice {
				if e, err = b.listSlice(e, x.AIndices, c, loc); err != nil {
					return nil, true, err
				}
				continue
			}
			if x.AIndices.Uidx == nil {
				return nil, true, b.unsupported(loc, "a subscript without an index")
			}
			i, err := b.bindExpr(x.AIndices.Uidx, c)
			if err != nil {
				return nil, true, err
			}
			switch e.Type.ID {
			case plan.List:
				e, err = b.callByName("list_extract", []*plan.Expr{e, i}, loc)
			case plan.Map:
				e, err = b.callByName("map_extract_value", []*plan.Expr{e, i}, loc)
			case plan.Struct:
				i = fold(i)
				if !isLit(i) || i.Type.ID != plan.String || i.Value.Null {
					return nil, true, b.errorf(CodeType, loc, "type mismatch: a struct subscript is a constant field name, not %s", i)
				}
				e, err = b.structField(e, i.Value.S, loc)
			default:
				return nil, true, b.errorf(CodeType, loc, "type mismatch: %s is of type %s, which has no elements", e, e.Type)
			}
			if err != nil {
				return nil, true, err
			}
		default:
			return nil, true, b.unsupported(loc, fmt.Sprintf("%s of a nested value", nodeName(step)))
		}
	}
	return e, true, nil
}

// listSlice binds l[a:b] as list_slice(l, a, b); an omitted bound is the
// list's first (1) or last (-1) element.
func (b *binder) listSlice(e *plan.Expr, ind *pg.A_Indices, c *exprCtx, loc int32) (*plan.Expr, error) {
	if e.Type.ID != plan.List {
		return nil, b.errorf(CodeType, loc, "type mismatch: %s is of type %s, which cannot be sliced", e, e.Type)
	}
	bound := func(n *pg.Node, def int64) (*plan.Expr, error) {
		if n == nil {
			return lit(plan.Value{I: def}, plan.Int64Type), nil
		}
		return b.bindExpr(n, c)
	}
	lo, err := bound(ind.Lidx, 1)
	if err != nil {
		return nil, err
	}
	hi, err := bound(ind.Uidx, -1)
	if err != nil {
		return nil, err
	}
	return b.callByName("list_slice", []*plan.Expr{e, lo, hi}, loc)
}

// structPack binds struct_pack(a := x, b := y) (and {'a': x, 'b': y},
// rewritten to it): a struct of the named arguments, in order.
func (b *binder) structPack(fc *pg.FuncCall, c *exprCtx) (*plan.Expr, error) {
	if len(fc.Args) == 0 {
		return nil, b.errorf(CodeType, fc.Location, "type mismatch: struct_pack takes at least one named argument")
	}
	var fields []plan.Field
	var args []*plan.Expr
	seen := map[string]bool{}
	for _, a := range fc.Args {
		na := a.GetNamedArgExpr()
		if na == nil {
			return nil, b.errorf(CodeType, fc.Location, "type mismatch: struct_pack takes named arguments: struct_pack(a := 1, b := 'x')")
		}
		if seen[strings.ToLower(na.Name)] {
			return nil, b.errorf(CodeType, fc.Location, "struct_pack: duplicate field name %q", na.Name)
		}
		seen[strings.ToLower(na.Name)] = true
		e, err := b.bindExpr(na.Arg, c)
		if err != nil {
			return nil, err
		}
		fields = append(fields, plan.Field{Name: na.Name, Type: e.Type})
		args = append(args, e)
	}
	return plan.CallFunc("struct_pack", plan.StructOf(fields), args...), nil
}

// mapLiteralFunc is the call a MAP {k: v, ...} literal is rewritten to
// (nested_literals.go): its arguments are the keys and values in turn.
const mapLiteralFunc = "sluice_map_literal"

// mapLiteral binds MAP {k1: v1, k2: v2} as DuckDB does: map([k1, k2],
// [v1, v2]).
func (b *binder) mapLiteral(fc *pg.FuncCall, c *exprCtx) (*plan.Expr, error) {
	if len(fc.Args)%2 != 0 {
		return nil, b.errorf(CodeSyntax, fc.Location, "syntax error: a MAP literal takes key: value pairs")
	}
	var keys, vals []*plan.Expr
	for i, a := range fc.Args {
		e, err := b.bindExpr(a, c)
		if err != nil {
			return nil, err
		}
		if i%2 == 0 {
			keys = append(keys, e)
		} else {
			vals = append(vals, e)
		}
	}
	if len(keys) == 0 {
		return b.callByName("map", nil, fc.Location)
	}
	k, err := b.callByName("list_value", keys, fc.Location)
	if err != nil {
		return nil, err
	}
	v, err := b.callByName("list_value", vals, fc.Location)
	if err != nil {
		return nil, err
	}
	return b.callByName("map", []*plan.Expr{k, v}, fc.Location)
}

// bindRow binds row(a, b) (also ROW(a, b) and (a, b)) as DuckDB does: an
// unnamed struct, whose fields have empty names (its text is (a, b); it
// is cast to a named struct by position).
func (b *binder) bindRow(r *pg.RowExpr, c *exprCtx) (*plan.Expr, error) {
	if len(r.Args) == 0 {
		return nil, b.errorf(CodeType, r.Location, "type mismatch: row() takes at least one value")
	}
	var fields []plan.Field
	var args []*plan.Expr
	for _, a := range r.Args {
		e, err := b.bindExpr(a, c)
		if err != nil {
			return nil, err
		}
		if e.Type.ID == plan.Null {
			e = nullOf(plan.Int64Type) // DuckDB's row(NULL) has an INTEGER field
		}
		fields = append(fields, plan.Field{Name: "", Type: e.Type})
		args = append(args, e)
	}
	return plan.CallFunc("struct_pack", plan.StructOf(fields), args...), nil
}

// comparisonOp reports whether op is a comparison operator.
func comparisonOp(op string) bool {
	switch op {
	case "=", "<>", "!=", "<", "<=", ">", ">=":
		return true
	}
	return false
}

// unifyUnnamed casts an unnamed struct (row(...)) that meets a named
// struct of as many fields to the named one's type, as DuckDB compares
// them; ok false when l and r are no such pair.
func (b *binder) unifyUnnamed(l, r *plan.Expr, loc int32) (*plan.Expr, *plan.Expr, bool, error) {
	if l.Type.ID != plan.Struct || r.Type.ID != plan.Struct || len(l.Type.Children()) != len(r.Type.Children()) {
		return l, r, false, nil
	}
	rf := r.Type.Children()
	for i, f := range l.Type.Children() {
		// DuckDB casts the fields implicitly only between numbers (and
		// from NULL); others must be of one type
		a, b := f.Type, rf[i].Type
		if a != b && a.ID != plan.Null && b.ID != plan.Null && !(a.IsNumeric() && b.IsNumeric()) {
			return l, r, false, nil
		}
	}
	switch {
	case exec.IsUnnamedStruct(l.Type) && castAllowed(l.Type, r.Type):
		nl, err := b.cast(l, r.Type, loc)
		return nl, r, err == nil, err
	case exec.IsUnnamedStruct(r.Type) && castAllowed(r.Type, l.Type):
		nr, err := b.cast(r, l.Type, loc)
		return l, nr, err == nil, err
	}
	return l, r, false, nil
}
