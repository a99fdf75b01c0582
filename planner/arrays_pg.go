package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sluicedb/sluice/planner/plan"
)

// Postgres arrays, under Options.Postgres (the Postgres catalog of
// coordinator/pgwire). The engine has no array type, so an array exists
// only while a query is bound, in the two forms whose values are known
// then:
//
//   - a constant array: ARRAY[...] of constants, '{a,b}'::T[], or a
//     catalog SQL function whose body is one (current_schemas(true));
//   - a NULL array: any expression of type Null, which is NULL in every
//     row. A catalog declares the array columns it has no values for
//     (pg_index.indkey, pg_class.relacl, ...) as Null columns.
//
// Over those, the array operations clients use bind exactly:
//
//	a[i]                      the element, or NULL (a NULL array: NULL)
//	(r).f                     a field of a NULL record: NULL
//	x op ANY (a), x op ALL (a) the comparisons ORed / ANDed (NULL array: NULL)
//	array_to_string(a, s[, n]) the joined elements; of ARRAY(subquery): string_agg
//	array_upper/array_lower/array_length/cardinality
//	unnest(a), generate_subscripts(a, d), _pg_expandarray(a), aclexplode(a) in a select
//	                          list, over a NULL array: no rows (Postgres's answer)
//
// Anything else over an array (an array in a result column, a column of
// array values) stays SL005: it would need an array type in the engine.

// pgArray is a bound array: its elements, or null for a NULL array.
type pgArray struct {
	null  bool
	elems []*plan.Expr
	elem  plan.DataType
}

// array binds n as an array (ok false: it is not one of the two forms).
func (b *binder) array(n *pg.Node, c *exprCtx) (*pgArray, bool, error) {
	switch x := n.GetNode().(type) {
	case *pg.Node_AArrayExpr:
		a := &pgArray{elem: plan.NullType}
		for _, it := range x.AArrayExpr.Elements {
			e, err := b.bindExpr(it, c)
			if err != nil {
				return nil, true, err
			}
			if e = fold(e); !isLit(e) {
				return nil, false, nil
			}
			a.elems = append(a.elems, e)
		}
		return a, true, nil
	case *pg.Node_TypeCast:
		tc := x.TypeCast
		if len(tc.TypeName.ArrayBounds) == 0 {
			break
		}
		elemName := &pg.TypeName{Names: tc.TypeName.Names, Typmods: tc.TypeName.Typmods, Typemod: tc.TypeName.Typemod, Location: tc.TypeName.Location}
		elem, err := b.resolveArrayElem(elemName)
		if err != nil {
			return nil, true, err
		}
		if inner, ok, err := b.array(tc.Arg, c); ok || err != nil {
			return inner, ok, err
		}
		v, err := b.bindExpr(tc.Arg, c)
		if err != nil {
			return nil, true, err
		}
		v = fold(v)
		switch {
		case v.Type.ID == plan.Null:
			return &pgArray{null: true, elem: elem}, true, nil
		case isStringLit(v):
			items, ok := parseArrayText(v.Value.S)
			if !ok {
				return nil, true, b.errorf(CodeValue, tc.Location, "malformed array literal: %q", v.Value.S)
			}
			a := &pgArray{elem: elem}
			for _, it := range items {
				e := nullOf(elem)
				if it != nil {
					if e, err = b.cast(lit(plan.Value{S: *it}, plan.StringType), elem, tc.Location); err != nil {
						return nil, true, err
					}
					e = fold(e)
				}
				a.elems = append(a.elems, e)
			}
			return a, true, nil
		}
		return nil, false, nil
	case *pg.Node_FuncCall:
		fc := x.FuncCall
		cat, isFC := b.cat.(FunctionCatalog)
		if !isFC || fc.Over != nil {
			break
		}
		name := funcName(fc)
		if _, known, _ := cat.Function(name, nil); !known {
			break
		}
		bound := make([]*plan.Expr, len(fc.Args))
		for i, a := range fc.Args {
			e, err := b.bindExpr(a, c)
			if err != nil {
				return nil, true, err
			}
			bound[i] = fold(e)
		}
		body, found, err := cat.Function(name, bound)
		if err != nil || !found {
			return nil, err != nil, err
		}
		tree, _, err := parse("SELECT " + body)
		if err != nil || len(tree.Stmts) != 1 {
			return nil, false, nil
		}
		expr := tree.Stmts[0].Stmt.GetSelectStmt().GetTargetList()[0].GetResTarget().GetVal()
		if expr.GetAArrayExpr() == nil && expr.GetTypeCast() == nil {
			return nil, false, nil
		}
		b.macroArgs = append(b.macroArgs, bound)
		defer func() { b.macroArgs = b.macroArgs[:len(b.macroArgs)-1] }()
		return b.array(expr, c)
	case *pg.Node_SubLink, *pg.Node_AConst:
		return nil, false, nil
	}
	e, err := b.bindExpr(n, c)
	if err != nil {
		return nil, true, err
	}
	if e.Type.ID == plan.Null {
		return &pgArray{null: true, elem: plan.NullType}, true, nil
	}
	return nil, false, nil
}

// resolveArrayElem is the engine type of an array's element type;
// Postgres's vector types (int2vector, oidvector) and the reg types are
// integers.
func (b *binder) resolveArrayElem(tn *pg.TypeName) (plan.DataType, error) {
	switch typeNameOf(tn) {
	case "int2vector", "oidvector", "oid", "regclass", "regtype", "regproc", "regnamespace", "regrole", "xid", "cid":
		return plan.Int64Type, nil
	case "name", "aclitem", "pg_node_tree", "\"char\"":
		return plan.StringType, nil
	}
	return b.resolveType(tn)
}

// parseArrayText reads the text form of a one-dimensional array
// ({a,"b c",NULL}); nil items are NULLs.
func parseArrayText(s string) ([]*string, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, false
	}
	body := s[1 : len(s)-1]
	var out []*string
	if strings.TrimSpace(body) == "" {
		return out, true
	}
	var cur strings.Builder
	quoted, inQuotes, esc := false, false, false
	flush := func() {
		v := cur.String()
		if !quoted {
			v = strings.TrimSpace(v)
		}
		if !quoted && strings.EqualFold(v, "null") {
			out = append(out, nil)
		} else {
			out = append(out, &v)
		}
		cur.Reset()
		quoted = false
	}
	for _, r := range body {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case r == '\\':
			esc = true
		case r == '"':
			inQuotes, quoted = !inQuotes, true
		case r == ',' && !inQuotes:
			flush()
		case r == '{' && !inQuotes:
			return nil, false // more than one dimension
		default:
			cur.WriteRune(r)
		}
	}
	if inQuotes || esc {
		return nil, false
	}
	flush()
	return out, true
}

// bindIndirection binds a[i] and (r).f.
func (b *binder) bindIndirection(ind *pg.A_Indirection, c *exprCtx) (*plan.Expr, error) {
	if e, ok, err := b.nestedIndirection(ind, c); ok || err != nil {
		return e, err
	}
	loc := exprLoc(ind.Arg)
	if !b.postgres || len(ind.Indirection) == 0 {
		return nil, b.unsupported(loc, "array subscripts and record fields")
	}
	first := ind.Indirection[0].GetAIndices()
	if first != nil && !first.IsSlice && first.Uidx != nil {
		a, ok, err := b.array(ind.Arg, c)
		if err != nil {
			return nil, err
		}
		if ok {
			i, err := b.bindExpr(first.Uidx, c)
			if err != nil {
				return nil, err
			}
			var out *plan.Expr
			switch i = fold(i); {
			case a.null || isNullLit(i):
				out = nullOf(a.elem)
			case isLit(i) && i.Type.ID == plan.Int64:
				out = nullOf(a.elem)
				if k := i.Value.I; k >= 1 && int(k) <= len(a.elems) {
					out = a.elems[k-1]
				}
			default:
				return nil, b.unsupported(loc, "a subscript that is not a constant of a constant array")
			}
			if len(ind.Indirection) > 1 {
				if out.Type.ID != plan.Null {
					return nil, b.unsupported(loc, "nested subscripts")
				}
			}
			return out, nil
		}
	}
	// A field of a record, or a subscript of a NULL value: NULL.
	v, err := b.bindExpr(ind.Arg, c)
	if err != nil {
		return nil, err
	}
	if v.Type.ID == plan.Null {
		return nullOf(plan.NullType), nil
	}
	return nil, b.unsupported(loc, "array subscripts and record fields of "+v.Type.String())
}

// bindQuantifiedArray binds x op ANY (array) and x op ALL (array).
func (b *binder) bindQuantifiedArray(ae *pg.A_Expr, c *exprCtx) (*plan.Expr, error) {
	loc := ae.Location
	all := ae.Kind == pg.A_Expr_Kind_AEXPR_OP_ALL
	if !b.postgres {
		return nil, b.unsupported(loc, "ANY/ALL")
	}
	a, ok, err := b.array(ae.Rexpr, c)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, b.unsupported(loc, "ANY/ALL over something other than a constant or NULL array")
	}
	x, err := b.bindExpr(ae.Lexpr, c)
	if err != nil {
		return nil, err
	}
	if a.null {
		return nullOf(plan.BoolType), nil
	}
	op, isCmp := compareOps[opName(ae)]
	if !isCmp {
		return nil, b.unsupported(loc, "operator "+opName(ae)+" with ANY/ALL")
	}
	out := boolLit(all) // ANY of none: false; ALL of none: true
	for _, e := range a.elems {
		cmp, err := b.compare(op, copyExpr(x), e, loc)
		if err != nil {
			return nil, err
		}
		if all {
			out = fold(plan.Call(plan.OpAnd, plan.BoolType, out, cmp))
		} else {
			out = fold(plan.Call(plan.OpOr, plan.BoolType, out, cmp))
		}
	}
	return out, nil
}

// arrayFunc binds the array functions of Postgres over bind-time arrays
// (ok false: name is not one of them).
func (b *binder) arrayFunc(fc *pg.FuncCall, name string, c *exprCtx) (*plan.Expr, bool, error) {
	if !b.postgres || fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil || fc.Over != nil {
		return nil, false, nil
	}
	loc := fc.Location
	switch name {
	case "unnest", "generate_subscripts", "_pg_expandarray", "aclexplode":
		if len(fc.Args) < 1 {
			return nil, false, nil
		}
		a, ok, err := b.array(fc.Args[0], c)
		if err != nil {
			return nil, true, err
		}
		if !ok || !a.null {
			return nil, true, b.unsupported(loc, name+"() in a select list over an array of values")
		}
		b.srfNoRows = true // of a NULL array: no rows
		return nullOf(plan.NullType), true, nil
	case "array_to_string":
		if len(fc.Args) < 2 || len(fc.Args) > 3 {
			return nil, false, nil
		}
		sep, err := b.bindExpr(fc.Args[1], c)
		if err != nil {
			return nil, true, err
		}
		if sl := fc.Args[0].GetSubLink(); sl != nil && sl.SubLinkType == pg.SubLinkType_ARRAY_SUBLINK && len(fc.Args) == 2 {
			return b.arraySublinkString(sl, fc.Args[1], c)
		}
		var a *pgArray
		if parts := concatParts(fc.Args[0]); len(parts) > 1 {
			var sub *pg.SubLink
			if a, sub, err = b.arrayConcat(parts, c); err != nil {
				return nil, true, err
			}
			if sub != nil {
				if len(fc.Args) == 3 {
					return nil, true, b.unsupported(loc, "array_to_string(a || ARRAY(subquery), sep, null_string)")
				}
				return b.arraySublinkString(sub, fc.Args[1], c)
			}
		} else {
			var ok bool
			a, ok, err = b.array(fc.Args[0], c)
			if err != nil || !ok {
				return nil, true, orUnsupported(err, b.unsupported(loc, "array_to_string() of an array of values"))
			}
		}
		if a.null || isNullLit(sep) {
			return nullOf(plan.StringType), true, nil
		}
		var nullStr *plan.Expr
		if len(fc.Args) == 3 {
			if nullStr, err = b.bindExpr(fc.Args[2], c); err != nil {
				return nil, true, err
			}
		}
		var out *plan.Expr
		for _, e := range a.elems {
			item := e
			if isNullLit(e) {
				if nullStr == nil {
					continue
				}
				item = nullStr
			}
			s, err := b.cast(item, plan.StringType, loc)
			if err != nil {
				return nil, true, err
			}
			if out == nil {
				out = s
				continue
			}
			if out, err = b.callByName("||", []*plan.Expr{out, copyExpr(sep)}, loc); err != nil {
				return nil, true, err
			}
			if out, err = b.callByName("||", []*plan.Expr{out, s}, loc); err != nil {
				return nil, true, err
			}
		}
		if out == nil {
			return lit(plan.Value{S: ""}, plan.StringType), true, nil
		}
		return fold(out), true, nil
	case "array_upper", "array_length", "array_lower", "cardinality":
		if len(fc.Args) < 1 {
			return nil, false, nil
		}
		a, ok, err := b.array(fc.Args[0], c)
		if err != nil || !ok {
			return nil, true, orUnsupported(err, b.unsupported(loc, name+"() of an array of values"))
		}
		switch {
		case a.null || len(a.elems) == 0 && name != "cardinality":
			return nullOf(plan.Int64Type), true, nil
		case name == "array_lower":
			return intLit(1), true, nil
		}
		return intLit(int64(len(a.elems))), true, nil
	}
	return nil, false, nil
}

func orUnsupported(err error, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// arraySublinkString binds array_to_string(ARRAY(SELECT x FROM ...), sep)
// as COALESCE((SELECT string_agg(x, sep ORDER BY ...) FROM ...), ”): the
// same text (both skip NULLs; no rows is an empty array, ”).
func (b *binder) arraySublinkString(sl *pg.SubLink, sep *pg.Node, c *exprCtx) (*plan.Expr, bool, error) {
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil || sel.Op != pg.SetOperation_SETOP_NONE || len(sel.TargetList) != 1 || len(sel.GroupClause) > 0 ||
		sel.HavingClause != nil || len(sel.DistinctClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil ||
		len(sel.ValuesLists) > 0 || containsAgg(sel.TargetList[0].GetResTarget().GetVal()) {
		return nil, true, b.unsupported(sl.Location, "this ARRAY(subquery)")
	}
	val := sel.TargetList[0].GetResTarget().GetVal()
	var order []*pg.Node
	for _, o := range sel.SortClause {
		// ORDER BY 1 is the one output column, inside the aggregate too
		if sb := o.GetSortBy(); sb != nil && sb.Node.GetAConst().GetIval() != nil && sb.Node.GetAConst().GetIval().Ival == 1 {
			c := proto.Clone(sb).(*pg.SortBy)
			c.Node = val
			o = &pg.Node{Node: &pg.Node_SortBy{SortBy: c}}
		}
		order = append(order, o)
	}
	asText := &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{Arg: val, Location: -1,
		TypeName: &pg.TypeName{Names: []*pg.Node{{Node: &pg.Node_String_{String_: &pg.String{Sval: "varchar"}}}}, Typemod: -1, Location: -1}}}}
	agg := &pg.FuncCall{Funcname: []*pg.Node{{Node: &pg.Node_String_{String_: &pg.String{Sval: "string_agg"}}}},
		Args: []*pg.Node{asText, sep}, AggOrder: order, Location: -1}
	inner := &pg.SelectStmt{TargetList: []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{
		Val: &pg.Node{Node: &pg.Node_FuncCall{FuncCall: agg}}, Location: -1}}}},
		FromClause: sel.FromClause, WhereClause: sel.WhereClause, WithClause: sel.WithClause, LimitOption: sel.LimitOption,
		Op: pg.SetOperation_SETOP_NONE}
	sub := &pg.Node{Node: &pg.Node_SubLink{SubLink: &pg.SubLink{SubLinkType: pg.SubLinkType_EXPR_SUBLINK,
		Subselect: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: inner}}, Location: sl.Location}}}
	empty := &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Sval{Sval: &pg.String{Sval: ""}}, Location: -1}}}
	e, err := b.bindCoalesce(&pg.CoalesceExpr{Args: []*pg.Node{sub, empty}, Location: sl.Location}, c)
	return e, true, err
}

// bindArraySublinkText binds ARRAY(SELECT x ...) as a value: the array's
// text form, as Postgres prints it ({a,"b c",NULL}; {} for no rows),
// built by string_agg (the engine has no array type, so the column is
// text).
func (b *binder) bindArraySublinkText(sl *pg.SubLink, c *exprCtx) (*plan.Expr, error) {
	sel := sl.Subselect.GetSelectStmt()
	if !b.postgres || sel == nil || len(sel.TargetList) != 1 {
		return nil, b.unsupported(sl.Location, "this kind of subquery")
	}
	val := sel.TargetList[0].GetResTarget().GetVal()
	tree, _, err := parse(`SELECT CASE WHEN $1 IS NULL THEN 'NULL' WHEN CAST($1 AS VARCHAR) = '' OR lower(CAST($1 AS VARCHAR)) = 'null' ` +
		`OR regexp_matches(CAST($1 AS VARCHAR), '[{},"\\ ]') THEN '"' || replace(replace(CAST($1 AS VARCHAR), '\', '\\'), '"', '\"') || '"' ` +
		`ELSE CAST($1 AS VARCHAR) END`)
	if err != nil {
		return nil, err
	}
	item := substituteParam(tree.Stmts[0].Stmt.GetSelectStmt().GetTargetList()[0].GetResTarget().GetVal(), val)
	elem := proto.Clone(sel).(*pg.SelectStmt)
	elem.TargetList = []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: item, Location: -1}}}}
	sep := &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Sval{Sval: &pg.String{Sval: ","}}, Location: -1}}}
	joined, _, err := b.arraySublinkString(&pg.SubLink{SubLinkType: pg.SubLinkType_ARRAY_SUBLINK,
		Subselect: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: elem}}, Location: sl.Location}, sep, c)
	if err != nil {
		return nil, err
	}
	open := lit(plan.Value{S: "{"}, plan.StringType)
	if joined, err = b.callByName("||", []*plan.Expr{open, joined}, sl.Location); err != nil {
		return nil, err
	}
	return b.callByName("||", []*plan.Expr{joined, lit(plan.Value{S: "}"}, plan.StringType)}, sl.Location)
}

// substituteParam returns a copy of n with every $1 replaced by a copy of
// arg (an AST-level substitution, for the rewrites of this file).
func substituteParam(n *pg.Node, arg *pg.Node) *pg.Node {
	if p := n.GetParamRef(); p != nil && p.Number == 1 {
		return proto.Clone(arg).(*pg.Node)
	}
	out := proto.Clone(n).(*pg.Node)
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					if x, ok := l.Get(i).Message().Interface().(*pg.Node); ok && x.GetParamRef() != nil && x.GetParamRef().Number == 1 {
						x.Node = proto.Clone(arg).(*pg.Node).Node
						continue
					}
					visit(l.Get(i).Message())
				}
			case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
				if x, ok := v.Message().Interface().(*pg.Node); ok && x.GetParamRef() != nil && x.GetParamRef().Number == 1 {
					x.Node = proto.Clone(arg).(*pg.Node).Node
					return true
				}
				visit(v.Message())
			}
			return true
		})
	}
	visit(out.ProtoReflect())
	return out
}

// concatParts splits a || b || ... into its operands (one item: n is not
// a concatenation).
func concatParts(n *pg.Node) []*pg.Node {
	ae := n.GetAExpr()
	if ae == nil || ae.Kind != pg.A_Expr_Kind_AEXPR_OP || len(ae.Name) != 1 || ae.Name[0].GetString_().GetSval() != "||" || ae.Lexpr == nil {
		return []*pg.Node{n}
	}
	return append(concatParts(ae.Lexpr), concatParts(ae.Rexpr)...)
}

// arrayConcat binds the concatenation of arrays parts (array_cat: a NULL
// array adds nothing; all NULL is NULL). Bind-time arrays concatenate
// into one; with an ARRAY(subquery) among them, which has values only at
// run time, the others must add no elements, and that subquery is
// returned (the concatenation is its array).
func (b *binder) arrayConcat(parts []*pg.Node, c *exprCtx) (*pgArray, *pg.SubLink, error) {
	out := &pgArray{null: true, elem: plan.NullType}
	var sub *pg.SubLink
	for _, p := range parts {
		if sl := p.GetSubLink(); sl != nil && sl.SubLinkType == pg.SubLinkType_ARRAY_SUBLINK {
			if sub != nil {
				return nil, nil, b.unsupported(sl.Location, "the concatenation of two ARRAY(subquery)")
			}
			sub = sl
			continue
		}
		a, ok, err := b.array(p, c)
		if err != nil || !ok {
			return nil, nil, orUnsupported(err, b.unsupported(exprLoc(p), "|| of an array of values"))
		}
		if a.null {
			continue
		}
		out.null = false
		if out.elem.ID == plan.Null {
			out.elem = a.elem
		}
		out.elems = append(out.elems, a.elems...)
	}
	if sub != nil && len(out.elems) > 0 {
		return nil, nil, b.unsupported(sub.Location, "|| of an ARRAY(subquery) and an array with elements")
	}
	return out, sub, nil
}

// rewriteArrayAgg rewrites every array_agg(x [ORDER BY ...]) of tree (not
// a window call) as '{' || string_agg(elem(x), ',' [ORDER BY ...]) || '}',
// where elem quotes x as an element of an array's text form and writes
// NULL for a NULL: the text Postgres prints for the array, NULL when there
// are no rows (the engine has no array type, so the column is text, as
// ARRAY(subquery) is in bindArraySublinkText).
func rewriteArrayAgg(tree *pg.ParseResult) error {
	tmpl, _, err := parse(`SELECT '{' || string_agg(CASE WHEN $1 IS NULL THEN 'NULL' WHEN CAST($1 AS VARCHAR) = '' OR ` +
		`lower(CAST($1 AS VARCHAR)) = 'null' OR regexp_matches(CAST($1 AS VARCHAR), '[{},"\\ ]') THEN '"' || ` +
		`replace(replace(CAST($1 AS VARCHAR), '\', '\\'), '"', '\"') || '"' ELSE CAST($1 AS VARCHAR) END, ',') || '}'`)
	if err != nil {
		return err
	}
	body := tmpl.Stmts[0].Stmt.GetSelectStmt().GetTargetList()[0].GetResTarget().GetVal()
	replace := func(x *pg.Node) {
		fc := x.GetFuncCall()
		if fc == nil || fc.Over != nil || fc.AggStar || len(fc.Args) != 1 || len(fc.Funcname) == 0 ||
			strings.ToLower(fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval()) != "array_agg" {
			return
		}
		out := substituteParam(body, fc.Args[0])
		// the string_agg call is the right operand of the left ||
		agg := out.GetAExpr().GetLexpr().GetAExpr().GetRexpr().GetFuncCall()
		agg.AggOrder, agg.AggFilter, agg.AggDistinct, agg.Location = fc.AggOrder, fc.AggFilter, fc.AggDistinct, fc.Location
		x.Node = out.Node
	}
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					visit(l.Get(i).Message())
					if x, ok := l.Get(i).Message().Interface().(*pg.Node); ok {
						replace(x)
					}
				}
			case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
				visit(v.Message())
				if x, ok := v.Message().Interface().(*pg.Node); ok {
					replace(x)
				}
			}
			return true
		})
	}
	for _, s := range tree.Stmts {
		visit(s.ProtoReflect())
	}
	return nil
}
