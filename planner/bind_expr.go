package planner

import (
	"errors"
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// bindExpr binds a scalar expression: names resolved, types checked and
// coerced, constants folded.
func (b *binder) bindExpr(n *pg.Node, c *exprCtx) (*plan.Expr, error) {
	switch x := n.GetNode().(type) {
	case *pg.Node_ColumnRef:
		return b.bindColumnRef(x.ColumnRef, c)
	case *pg.Node_AConst:
		return b.bindConst(x.AConst)
	case *pg.Node_TypeCast:
		return b.bindTypeCast(x.TypeCast, c)
	case *pg.Node_AExpr:
		return b.bindAExpr(x.AExpr, c)
	case *pg.Node_BoolExpr:
		return b.bindBoolExpr(x.BoolExpr, c)
	case *pg.Node_NullTest:
		arg, err := b.bindExpr(x.NullTest.Arg, c)
		if err != nil {
			return nil, err
		}
		op := plan.OpIsNull
		if x.NullTest.Nulltesttype == pg.NullTestType_IS_NOT_NULL {
			op = plan.OpIsNotNull
		}
		return fold(plan.Call(op, plan.BoolType, arg)), nil
	case *pg.Node_CaseExpr:
		return b.bindCase(x.CaseExpr, c)
	case *pg.Node_CoalesceExpr:
		return b.bindCoalesce(x.CoalesceExpr, c)
	case *pg.Node_FuncCall:
		return b.bindFuncCall(x.FuncCall, c)
	case *pg.Node_SubLink:
		return b.bindScalarSubquery(x.SubLink, c)
	case *pg.Node_GroupingFunc:
		return b.bindGroupingFunc(x.GroupingFunc, c)
	case *pg.Node_ParamRef:
		if e, ok := b.macroArg(x.ParamRef); ok {
			return e, nil // an argument of a catalog SQL function (virtual.go)
		}
		if b.params != nil {
			return b.params.placeholder(x.ParamRef), nil // params.go
		}
		return nil, b.unsupported(x.ParamRef.Location, "parameters")
	case *pg.Node_BooleanTest:
		return b.bindBooleanTest(x.BooleanTest, c)
	case *pg.Node_MinMaxExpr:
		return b.bindMinMax(x.MinMaxExpr, c)
	case *pg.Node_SqlvalueFunction:
		return b.bindSQLValueFunction(x.SqlvalueFunction)
	case *pg.Node_AIndirection:
		return b.bindIndirection(x.AIndirection, c) // arrays_pg.go
	case *pg.Node_RowExpr:
		return b.bindRow(x.RowExpr, c) // bind_nested.go
	case *pg.Node_CollateClause:
		if b.postgres && bytewiseCollation(x.CollateClause.Collname) {
			// the engine compares strings bytewise: Postgres's "C" and
			// "POSIX", and the default of a database made with C (as
			// sluice's catalog says its database is)
			return b.bindExpr(x.CollateClause.Arg, c)
		}
		return nil, b.unsupported(x.CollateClause.Location, "COLLATE")
	}
	return nil, b.unsupported(exprLoc(n), "expression "+nodeName(n))
}

// bindBooleanTest binds x IS [NOT] TRUE / FALSE / UNKNOWN, which are never
// NULL: x IS TRUE is (x IS NOT NULL) AND x, x IS NOT TRUE is (x IS NULL)
// OR NOT x, and IS [NOT] UNKNOWN is IS [NOT] NULL. x is cast to boolean as
// DuckDB does.
func (b *binder) bindBooleanTest(bt *pg.BooleanTest, c *exprCtx) (*plan.Expr, error) {
	x, err := b.bindExpr(bt.Arg, c)
	if err != nil {
		return nil, err
	}
	if x.Type.ID == plan.Null {
		x = nullOf(plan.BoolType)
	}
	if x.Type.ID != plan.Bool {
		if x, err = b.cast(x, plan.BoolType, bt.Location); err != nil {
			return nil, err
		}
	}
	and := func(l, r *plan.Expr) *plan.Expr { return fold(plan.Call(plan.OpAnd, plan.BoolType, l, r)) }
	or := func(l, r *plan.Expr) *plan.Expr { return fold(plan.Call(plan.OpOr, plan.BoolType, l, r)) }
	not := func(e *plan.Expr) *plan.Expr { return fold(plan.Call(plan.OpNot, plan.BoolType, e)) }
	isNull := fold(plan.Call(plan.OpIsNull, plan.BoolType, x))
	notNull := fold(plan.Call(plan.OpIsNotNull, plan.BoolType, x))
	switch bt.Booltesttype {
	case pg.BoolTestType_IS_TRUE:
		return and(notNull, x), nil
	case pg.BoolTestType_IS_NOT_TRUE:
		return or(isNull, not(x)), nil
	case pg.BoolTestType_IS_FALSE:
		return and(notNull, not(x)), nil
	case pg.BoolTestType_IS_NOT_FALSE:
		return or(isNull, x), nil
	case pg.BoolTestType_IS_UNKNOWN:
		return isNull, nil
	case pg.BoolTestType_IS_NOT_UNKNOWN:
		return notNull, nil
	}
	return nil, b.unsupported(bt.Location, "boolean test "+bt.Booltesttype.String())
}

func (b *binder) bindColumnRef(cr *pg.ColumnRef, c *exprCtx) (*plan.Expr, error) {
	if len(cr.Fields) > 1 {
		if e, ok, err := b.bindFieldPath(cr, c); ok || err != nil {
			return e, err
		}
	}
	var names []string
	for _, f := range cr.Fields {
		if f.GetAStar() != nil {
			return nil, b.unsupported(cr.Location, "* in an expression")
		}
		names = append(names, f.GetString_().GetSval())
	}
	var qual, name string
	switch len(names) {
	case 1:
		name = names[0]
	case 2:
		qual, name = names[0], names[1]
	default:
		return nil, b.unsupported(cr.Location, "schema-qualified column references")
	}
	// The query's own FROM items first.
	if e, err := b.resolveIn(c.scope, qual, name, cr.Location); e != nil || err != nil {
		return e, err
	}
	if qual == "" && c.targets != nil {
		// Fall back to a select-list alias; bind its expression without
		// further alias fallback, so aliases cannot refer to each other.
		var found *target
		for _, t := range c.targets {
			if t.aliased && strings.EqualFold(t.name, name) {
				if found != nil {
					return nil, b.errorf(CodeAmbiguous, cr.Location, "column reference %q is ambiguous (several select-list aliases)", name)
				}
				found = t
			}
		}
		if found != nil {
			return b.bindExpr(found.ast, c.with(func(c *exprCtx) { c.targets = nil }))
		}
	}
	// Then the enclosing queries: a correlated reference.
	for s := c.scope.parent; s != nil; s = s.parent {
		e, err := b.resolveIn(s, qual, name, cr.Location)
		if err != nil {
			return nil, err
		}
		if e != nil {
			for t := c.scope; t != s; t = t.parent {
				if t.outer == nil {
					t.outer = map[colID]bool{}
				}
				t.outer[e.Col] = true
			}
			if b.outerRefs == nil {
				b.outerRefs = map[colID]bool{}
			}
			b.outerRefs[e.Col] = true
			return e, nil
		}
	}
	if err := b.skippedColumn(c.scope, qual, name, cr.Location); err != nil {
		return nil, err
	}
	if qual != "" {
		return nil, b.errorf(CodeUnknownTbl, cr.Location, "unknown table %q in column reference %s.%s", qual, qual, name)
	}
	if len(c.scope.rels) == 1 && c.scope.parent == nil {
		return nil, b.errorf(CodeUnknownCol, cr.Location, "unknown column %q in table %q", name, c.scope.rels[0].table)
	}
	return nil, b.errorf(CodeUnknownCol, cr.Location, "unknown column %q", name)
}

// skippedColumn is the SL005 error for a reference to a column its table
// left out for its type, or nil when name is no such column.
func (b *binder) skippedColumn(s *scope, qual, name string, loc int32) error {
	for ; s != nil; s = s.parent {
		for _, r := range s.rels {
			if qual != "" && !strings.EqualFold(r.alias, qual) {
				continue
			}
			for _, sk := range r.skipped {
				if strings.EqualFold(sk.Name, name) {
					return b.unsupported(loc, fmt.Sprintf("column %q of table %q has type %s, which sluice does not read yet", sk.Name, r.table, sk.Type))
				}
			}
		}
	}
	return nil
}

// resolveIn resolves a column reference in the relations of one scope:
// the reference, nil when the scope has no such column, or an error when
// it is ambiguous or names a relation of the scope without that column.
func (b *binder) resolveIn(s *scope, qual, name string, loc int32) (*plan.Expr, error) {
	if s == nil {
		return nil, nil
	}
	var matches []colID
	qualFound := false
	var qualRel *relation
	for _, r := range s.rels {
		if qual != "" && !strings.EqualFold(r.alias, qual) {
			continue
		}
		qualFound, qualRel = true, r
		for i, id := range r.cols {
			if qual == "" && r.hidden != nil && r.hidden[i] {
				continue
			}
			if strings.EqualFold(r.names[i], name) { // as DuckDB: names match regardless of case
				matches = append(matches, id)
			}
		}
	}
	switch {
	case len(matches) == 1:
		e := b.md.ref(matches[0])
		b.pos[e] = loc
		return e, nil
	case len(matches) > 1:
		if qual != "" {
			return nil, b.errorf(CodeAmbiguous, loc, "column reference %q is ambiguous: table %q has several columns of that name regardless of case", name, qual)
		}
		return nil, b.errorf(CodeAmbiguous, loc, "column reference %q is ambiguous", name)
	case qual != "" && qualFound:
		if err := b.skippedColumn(s, qual, name, loc); err != nil {
			return nil, err
		}
		return nil, b.errorf(CodeUnknownCol, loc, "unknown column %q in table %q", name, qualRel.table)
	}
	return nil, nil
}

func (b *binder) bindConst(ac *pg.A_Const) (*plan.Expr, error) {
	if ac.Isnull {
		return nullOf(plan.NullType), nil
	}
	switch v := ac.Val.(type) {
	case *pg.A_Const_Ival:
		return intLit(int64(v.Ival.Ival)), nil
	case *pg.A_Const_Fval:
		e, err := parseNumber(v.Fval.Fval)
		if err != nil {
			return nil, b.errorf(CodeValue, ac.Location, "%v", err)
		}
		return e, nil
	case *pg.A_Const_Sval:
		if b.maskedAll(ac) {
			return nil, b.unsupported(ac.Location, "ORDER BY ALL other than as a query's whole ORDER BY")
		}
		return lit(plan.Value{S: v.Sval.Sval}, plan.StringType), nil
	case *pg.A_Const_Boolval:
		return boolLit(v.Boolval.Boolval), nil
	case *pg.A_Const_Bsval:
		return nil, b.unsupported(ac.Location, "bit-string literals")
	}
	return nil, b.unsupported(ac.Location, "this constant")
}

// typeNameOf returns the lower-case unqualified name of a type.
func typeNameOf(tn *pg.TypeName) string {
	if len(tn.Names) == 0 {
		return ""
	}
	return strings.ToLower(tn.Names[len(tn.Names)-1].GetString_().GetSval())
}

// resolveType maps a SQL type name to an engine type.
func (b *binder) resolveType(tn *pg.TypeName) (plan.DataType, error) {
	if tn.Setof || tn.PctType {
		return plan.DataType{}, b.unsupported(tn.Location, "special types")
	}
	if n := typeNameOf(tn); (n == "struct" || n == "map") && len(tn.Names) == 1 {
		return b.nestedTypeAt(tn) // the type read from the SQL, its [] too
	}
	if len(tn.ArrayBounds) > 0 { // BIGINT[]: a list (cast_nested.go)
		base := &pg.TypeName{Names: tn.Names, Typmods: tn.Typmods, Typemod: tn.Typemod, Location: tn.Location}
		t, err := b.resolveType(base)
		if err != nil {
			return plan.DataType{}, err
		}
		for range tn.ArrayBounds {
			t = plan.ListOf(t)
		}
		return t, nil
	}
	name := typeNameOf(tn)
	if b.postgres && (name == "name" || name == "pg_node_tree") {
		return plan.StringType, nil // Postgres's catalog text types ('_RETURN'::name)
	}
	t, ok := plan.TypeByName(name) // the one table of SQL type names
	if !ok {
		return plan.DataType{}, b.unsupported(tn.Location, "type "+name)
	}
	if t.ID != plan.Decimal {
		return t, nil // modifiers of the character types are ignored
	}
	mods := make([]int, 0, 2)
	for _, m := range tn.Typmods {
		iv := m.GetAConst().GetIval()
		if iv == nil {
			return plan.DataType{}, b.errorf(CodeValue, tn.Location, "invalid decimal type modifier")
		}
		mods = append(mods, int(iv.Ival))
	}
	t, err := plan.DecimalOf(mods)
	if err != nil {
		return plan.DataType{}, b.errorf(CodeValue, tn.Location, "%v", err)
	}
	return t, nil
}

func (b *binder) bindTypeCast(tc *pg.TypeCast, c *exprCtx) (*plan.Expr, error) {
	loc := tc.Location
	if loc < 0 {
		loc = tc.TypeName.GetLocation()
	}
	if typeNameOf(tc.TypeName) == "interval" {
		return nil, b.unsupported(loc, "INTERVAL values outside date/timestamp +/- INTERVAL")
	}
	if len(tc.TypeName.ArrayBounds) == 0 {
		if in := tc.Arg.GetTypeCast(); in != nil && len(in.TypeName.ArrayBounds) == 0 {
			// x::regclass::text: a catalog may define the pair (a
			// relation's name, where ::regclass alone is its oid)
			if e, ok, err := b.macro("::"+typeNameOf(in.TypeName)+"::"+typeNameOf(tc.TypeName), []*pg.Node{in.Arg}, loc, c); ok {
				return e, err
			}
		}
		if e, ok, err := b.macro("::"+typeNameOf(tc.TypeName), []*pg.Node{tc.Arg}, loc, c); ok {
			return e, err // a cast a catalog defines (x::regclass; virtual.go)
		}
	}
	t, err := b.resolveType(tc.TypeName)
	if err != nil {
		return nil, err
	}
	arg, err := b.bindExpr(tc.Arg, c)
	if err != nil {
		return nil, err
	}
	if b.isTryCast(tc.Location) {
		return b.tryCast(arg, t, loc)
	}
	return b.cast(arg, t, loc)
}

// intervalOf returns the constant interval n spells, if n is an INTERVAL
// literal.
func (b *binder) intervalOf(n *pg.Node) (interval, bool, error) {
	tc := n.GetTypeCast()
	if tc == nil || typeNameOf(tc.TypeName) != "interval" {
		return interval{}, false, nil
	}
	loc := tc.TypeName.GetLocation()
	ac := tc.Arg.GetAConst()
	if ac == nil || ac.GetSval() == nil {
		return interval{}, true, b.unsupported(loc, "non-constant INTERVAL")
	}
	mask := intervalNoMask
	if len(tc.TypeName.Typmods) > 0 {
		iv := tc.TypeName.Typmods[0].GetAConst().GetIval()
		if iv == nil {
			return interval{}, true, b.unsupported(loc, "this INTERVAL form")
		}
		mask = int(iv.Ival)
		if len(tc.TypeName.Typmods) > 1 {
			return interval{}, true, b.unsupported(loc, errIntervalTime.Error())
		}
	}
	iv, err := parseInterval(ac.GetSval().Sval, mask)
	if errors.Is(err, errIntervalTime) {
		return interval{}, true, b.unsupported(loc, err.Error())
	}
	if err != nil {
		return interval{}, true, b.errorf(CodeValue, loc, "%v", err)
	}
	return iv, true, nil
}

// dateShift builds date|timestamp ± interval (sign -1 for minus): a
// constant date ± a days/months interval folds to a date; anything else is
// a timestamp (computed per row unless constant).
func (b *binder) dateShift(d *plan.Expr, iv interval, sign int64, loc int32) (*plan.Expr, error) {
	if isStringLit(d) {
		var err error
		if d, err = b.cast(d, plan.DateType, loc); err != nil {
			return nil, err
		}
	}
	if d.Type.ID == plan.Null {
		return nullOf(plan.DateType), nil
	}
	if d.Type.ID == plan.Timestamp {
		return b.shiftByInterval(d, iv, sign, loc)
	}
	if d.Type.ID != plan.Date {
		return nil, b.errorf(CodeType, loc, "type mismatch: cannot add an interval to %s", d.Type)
	}
	if !isLit(d) || iv.micros != 0 {
		// per row (or with a time part): a timestamp, as in DuckDB
		if isLit(d) && !d.Value.Null {
			d = lit(plan.Value{I: d.Value.I * plan.MicrosPerDay}, plan.TimestampType)
		}
		return b.shiftByInterval(d, iv, sign, loc)
	}
	if d.Value.Null {
		return d, nil
	}
	out, ok := addInterval(int32(d.Value.I), interval{months: sign * iv.months, days: sign * iv.days})
	if !ok {
		return nil, b.errorf(CodeValue, loc, "date out of range")
	}
	return lit(plan.Value{I: int64(out)}, plan.DateType), nil
}

var compareOps = map[string]plan.Op{
	"=": plan.OpEq, "<>": plan.OpNe, "!=": plan.OpNe, "<": plan.OpLt, "<=": plan.OpLe, ">": plan.OpGt, ">=": plan.OpGe,
}

var arithOps = map[string]plan.Op{
	"+": plan.OpAdd, "-": plan.OpSub, "*": plan.OpMul, "/": plan.OpDiv, "%": plan.OpMod,
}

func opName(ae *pg.A_Expr) string {
	if len(ae.Name) == 0 {
		return ""
	}
	return ae.Name[len(ae.Name)-1].GetString_().GetSval()
}

func (b *binder) bindAExpr(ae *pg.A_Expr, c *exprCtx) (*plan.Expr, error) {
	loc := ae.Location
	switch ae.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if ae.Lexpr.GetRowExpr() != nil && ae.Rexpr.GetRowExpr() != nil || (ae.Lexpr.GetRowExpr() != nil || ae.Rexpr.GetRowExpr() != nil) && !comparisonOp(opName(ae)) {
			return b.bindRowCompare(ae, c)
		}
		return b.bindOp(ae, c)
	case pg.A_Expr_Kind_AEXPR_IN:
		return b.bindIn(ae, c)
	case pg.A_Expr_Kind_AEXPR_LIKE:
		return b.bindLike(ae, c)
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		return b.bindBetween(ae, c)
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		// NULLIF(a, b) = CASE WHEN a = b THEN NULL ELSE a END
		l, err := b.bindExpr(ae.Lexpr, c)
		if err != nil {
			return nil, err
		}
		r, err := b.bindExpr(ae.Rexpr, c)
		if err != nil {
			return nil, err
		}
		eq, err := b.compare(plan.OpEq, l, r, loc)
		if err != nil {
			return nil, err
		}
		return b.buildCase([]*plan.Expr{eq}, []*plan.Expr{nullOf(plan.NullType)}, l, loc)
	case pg.A_Expr_Kind_AEXPR_OP_ANY, pg.A_Expr_Kind_AEXPR_OP_ALL:
		return b.bindQuantifiedArray(ae, c) // arrays_pg.go
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		if ae.Lexpr.GetRowExpr() != nil || ae.Rexpr.GetRowExpr() != nil {
			return nil, b.unsupported(loc, "row values with IS [NOT] DISTINCT FROM")
		}
		l, err := b.bindExpr(ae.Lexpr, c)
		if err != nil {
			return nil, err
		}
		r, err := b.bindExpr(ae.Rexpr, c)
		if err != nil {
			return nil, err
		}
		same, err := b.notDistinct(l, r, loc)
		if err != nil {
			return nil, err
		}
		if ae.Kind == pg.A_Expr_Kind_AEXPR_DISTINCT {
			return fold(plan.Call(plan.OpNot, plan.BoolType, same)), nil
		}
		return same, nil
	case pg.A_Expr_Kind_AEXPR_ILIKE:
		return b.bindILike(ae, c)
	case pg.A_Expr_Kind_AEXPR_SIMILAR:
		return b.bindSimilar(ae, c) // functions.go
	case pg.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		return nil, b.unsupported(loc, "BETWEEN SYMMETRIC")
	}
	return nil, b.unsupported(loc, "operator expression")
}

func (b *binder) bindOp(ae *pg.A_Expr, c *exprCtx) (*plan.Expr, error) {
	name, loc := opName(ae), ae.Location
	if name == "/" && b.isIntDiv(loc) {
		name = "//" // masked by maskIntDiv
	}
	if ae.Lexpr == nil { // prefix operator
		arg, err := b.bindExpr(ae.Rexpr, c)
		if err != nil {
			return nil, err
		}
		if arg.Type.ID == plan.Null {
			arg = nullOf(plan.Int64Type)
		}
		switch {
		case (name == "-" || name == "+") && !arg.Type.IsNumeric():
			return nil, b.errorf(CodeType, loc, "type mismatch: operator %s is not defined for %s", name, arg.Type)
		case name == "+":
			return arg, nil
		case name == "-":
			return fold(plan.Call(plan.OpNeg, arg.Type, arg)), nil
		}
		return nil, b.unsupported(loc, "operator "+name)
	}
	if name == "~" || name == "!~" {
		return b.bindRegexMatch(ae, c) // functions.go
	}
	if name == "~~*" || name == "!~~*" {
		return b.bindILike(ae, c) // ILIKE spelled as its operator
	}
	if name == "+" || name == "-" {
		sign := int64(1)
		if name == "-" {
			sign = -1
		}
		if iv, ok, err := b.intervalOf(ae.Rexpr); ok || err != nil {
			if err != nil {
				return nil, err
			}
			d, err := b.bindExpr(ae.Lexpr, c)
			if err != nil {
				return nil, err
			}
			return b.dateShift(d, iv, sign, loc)
		}
		if iv, ok, err := b.intervalOf(ae.Lexpr); ok || err != nil {
			if err != nil {
				return nil, err
			}
			if name == "-" {
				return nil, b.errorf(CodeType, loc, "type mismatch: cannot subtract a date from an interval")
			}
			d, err := b.bindExpr(ae.Rexpr, c)
			if err != nil {
				return nil, err
			}
			return b.dateShift(d, iv, 1, loc)
		}
	}
	l, err := b.bindExpr(ae.Lexpr, c)
	if err != nil {
		return nil, err
	}
	r, err := b.bindExpr(ae.Rexpr, c)
	if err != nil {
		return nil, err
	}
	if op, ok := compareOps[name]; ok {
		return b.compare(op, l, r, loc)
	}
	if b.postgres && (name == "&" || name == "|" || name == "#" || name == "<<" || name == ">>") &&
		(l.Type.ID == plan.Null || r.Type.ID == plan.Null) {
		return nullOf(plan.Int64Type), nil // a bitwise operator of NULL (a NULL array's element)
	}
	if name == "/" && b.postgres && isIntegerType(l.Type) && isIntegerType(r.Type) {
		return b.callByName("divide", []*plan.Expr{l, r}, loc) // Postgres's integer division
	}
	if op, ok := arithOps[name]; ok {
		if l.Type.ID == plan.Timestamp || r.Type.ID == plan.Timestamp {
			return b.timestampArith(op, l, r, loc)
		}
		if l.Type.ID == plan.Date || r.Type.ID == plan.Date {
			return b.dateArith(op, l, r, loc)
		}
		return b.arith(op, l, r, loc)
	}
	switch name {
	case "~~", "!~~":
		return b.like(l, r, name == "!~~", loc)
	case "||":
		if l.Type.ID == plan.List || r.Type.ID == plan.List {
			return b.callByName("list_concat", []*plan.Expr{l, r, lit(plan.Value{B: true}, plan.BoolType)}, loc) // DuckDB: || of lists, NULL with a NULL
		}
		return b.callByName("||", []*plan.Expr{l, r}, loc)
	case "->":
		return b.callByName("json_extract", []*plan.Expr{l, r}, loc)
	case "->>":
		return b.callByName("json_extract_string", []*plan.Expr{l, r}, loc)
	case "//":
		// DuckDB's x // y: integer division (towards zero) of integers,
		// / of anything else.
		if isIntegerType(l.Type) && isIntegerType(r.Type) {
			return b.callByName("divide", []*plan.Expr{l, r}, loc)
		}
		return b.arith(plan.OpDiv, l, r, loc)
	}
	return nil, b.unsupported(loc, "operator "+name)
}

// dateArith handles + and - with a date operand: date ± integer days on
// constants is folded; everything else is unsupported for now.
func (b *binder) dateArith(op plan.Op, l, r *plan.Expr, loc int32) (*plan.Expr, error) {
	if (op == plan.OpAdd || op == plan.OpSub) && (l.Type.ID == plan.Null || r.Type.ID == plan.Null) {
		return nullOf(plan.DateType), nil // date ± NULL
	}
	if op == plan.OpAdd && l.Type.ID == plan.Int64 && r.Type.ID == plan.Date {
		l, r = r, l
	}
	if (op == plan.OpAdd || op == plan.OpSub) && l.Type.ID == plan.Date && r.Type.ID == plan.Int64 {
		if !isLit(l) || !isLit(r) {
			return plan.Call(op, plan.DateType, l, r), nil // date ± days, per row
		}
		if l.Value.Null || r.Value.Null {
			return nullOf(plan.DateType), nil
		}
		n := r.Value.I
		if op == plan.OpSub {
			n = -n
		}
		out, ok := addInterval(int32(l.Value.I), interval{days: n})
		if !ok {
			return nil, b.errorf(CodeValue, loc, "date out of range")
		}
		return lit(plan.Value{I: int64(out)}, plan.DateType), nil
	}
	if op == plan.OpSub && l.Type.ID == plan.Date && r.Type.ID == plan.Date {
		if isLit(l) && isLit(r) {
			if l.Value.Null || r.Value.Null {
				return nullOf(plan.Int64Type), nil
			}
			return intLit(l.Value.I - r.Value.I), nil
		}
		return plan.Call(plan.OpSub, plan.Int64Type, l, r), nil // days between, as in DuckDB
	}
	return nil, b.errorf(CodeType, loc, "type mismatch: operator %s is not defined for %s and %s", op, l.Type, r.Type)
}

func (b *binder) like(l, r *plan.Expr, negated bool, loc int32) (*plan.Expr, error) {
	if l.Type.ID == plan.Null {
		b.noteParam(l, plan.StringType)
		l = nullOf(plan.StringType)
	}
	if l.Type.ID != plan.String {
		return nil, b.errorf(CodeType, loc, "type mismatch: LIKE needs a string, not %s", l.Type)
	}
	if r.Type.ID == plan.Null {
		b.noteParam(r, plan.StringType) // x LIKE $1: text
		return nullOf(plan.BoolType), nil
	}
	if !isStringLit(r) {
		if r.Type.ID != plan.String {
			return nil, b.errorf(CodeType, loc, "type mismatch: LIKE pattern must be a string, not %s", r.Type)
		}
		return nil, b.unsupported(loc, "LIKE with a non-constant pattern")
	}
	e := plan.Call(plan.OpLike, plan.BoolType, l, r)
	e.Negated = negated
	return e, nil
}

func (b *binder) bindLike(ae *pg.A_Expr, c *exprCtx) (*plan.Expr, error) {
	if fc := ae.Rexpr.GetFuncCall(); fc != nil && funcName(fc) == "like_escape" {
		return b.bindLikeEscape(ae, fc, false, opName(ae) == "!~~", c) // functions.go
	}
	if fc := b.postgresEscape(ae.Rexpr); fc != nil {
		return b.bindLikeEscape(ae, fc, false, opName(ae) == "!~~", c)
	}
	l, err := b.bindExpr(ae.Lexpr, c)
	if err != nil {
		return nil, err
	}
	r, err := b.bindExpr(ae.Rexpr, c)
	if err != nil {
		return nil, err
	}
	return b.like(l, r, opName(ae) == "!~~", ae.Location)
}

// bindBetween: x BETWEEN a AND b is x >= a AND x <= b; NOT BETWEEN is
// x < a OR x > b (each comparison coerced on its own, as DuckDB does).
func (b *binder) bindBetween(ae *pg.A_Expr, c *exprCtx) (*plan.Expr, error) {
	x, err := b.bindExpr(ae.Lexpr, c)
	if err != nil {
		return nil, err
	}
	items := ae.Rexpr.GetList().GetItems()
	if len(items) != 2 {
		return nil, b.errorf(CodeSyntax, ae.Location, "syntax error: BETWEEN needs two bounds")
	}
	lo, err := b.bindExpr(items[0], c)
	if err != nil {
		return nil, err
	}
	hi, err := b.bindExpr(items[1], c)
	if err != nil {
		return nil, err
	}
	opLo, opHi, join := plan.OpGe, plan.OpLe, plan.OpAnd
	if ae.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
		opLo, opHi, join = plan.OpLt, plan.OpGt, plan.OpOr
	}
	a, err := b.compare(opLo, x, lo, ae.Location)
	if err != nil {
		return nil, err
	}
	z, err := b.compare(opHi, x, hi, ae.Location)
	if err != nil {
		return nil, err
	}
	return fold(plan.Call(join, plan.BoolType, a, z)), nil
}

// notDistinct is l IS NOT DISTINCT FROM r, equality where NULL equals
// NULL (never NULL itself):
//
//	CASE WHEN l IS NULL THEN r IS NULL WHEN r IS NULL THEN false ELSE l = r END
func (b *binder) notDistinct(l, r *plan.Expr, loc int32) (*plan.Expr, error) {
	eq, err := b.compare(plan.OpEq, l, r, loc)
	if err != nil {
		return nil, err
	}
	isNull := func(e *plan.Expr) *plan.Expr { return fold(plan.Call(plan.OpIsNull, plan.BoolType, e)) }
	return fold(plan.Call(plan.OpCase, plan.BoolType,
		isNull(l), isNull(r),
		isNull(r), boolLit(false),
		eq)), nil
}

// bindRowCompare binds a comparison of two rows, (a1, a2, ...) op (b1,
// b2, ...), as DuckDB compares structs: field by field, NULL equal to
// NULL and greater than any value, so the result is never NULL.
// Equality is every field IS NOT DISTINCT FROM its partner; < is
// lexicographic:
//
//	lt(a1, b1) OR (a1 IS NOT DISTINCT FROM b1 AND (lt(a2, b2) OR ...))
//	lt(a, b) = CASE WHEN a IS NULL THEN false WHEN b IS NULL THEN true ELSE a < b END
//
// and <=, >, >= and <> follow from < and = with the sides swapped.
func (b *binder) bindRowCompare(ae *pg.A_Expr, c *exprCtx) (*plan.Expr, error) {
	loc := ae.Location
	l, r := ae.Lexpr.GetRowExpr(), ae.Rexpr.GetRowExpr()
	if l == nil || r == nil || len(l.Args) != len(r.Args) || len(l.Args) == 0 {
		return nil, b.errorf(CodeType, loc, "type mismatch: a row can only be compared with a row of as many values")
	}
	bind := func(ns []*pg.Node) ([]*plan.Expr, error) {
		out := make([]*plan.Expr, len(ns))
		for i, n := range ns {
			e, err := b.bindExpr(n, c)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	}
	ls, err := bind(l.Args)
	if err != nil {
		return nil, err
	}
	rs, err := bind(r.Args)
	if err != nil {
		return nil, err
	}
	isNull := func(e *plan.Expr) *plan.Expr { return fold(plan.Call(plan.OpIsNull, plan.BoolType, e)) }
	and := func(x, y *plan.Expr) *plan.Expr { return fold(plan.Call(plan.OpAnd, plan.BoolType, x, y)) }
	or := func(x, y *plan.Expr) *plan.Expr { return fold(plan.Call(plan.OpOr, plan.BoolType, x, y)) }
	equal := func(xs, ys []*plan.Expr) (*plan.Expr, error) {
		out := boolLit(true)
		for i := range xs {
			e, err := b.notDistinct(xs[i], ys[i], loc)
			if err != nil {
				return nil, err
			}
			out = and(out, e)
		}
		return out, nil
	}
	less := func(xs, ys []*plan.Expr) (*plan.Expr, error) {
		out := boolLit(false)
		for i := len(xs) - 1; i >= 0; i-- {
			lt, err := b.compare(plan.OpLt, xs[i], ys[i], loc)
			if err != nil {
				return nil, err
			}
			lt = fold(plan.Call(plan.OpCase, plan.BoolType, isNull(xs[i]), boolLit(false), isNull(ys[i]), boolLit(true), lt))
			eq, err := b.notDistinct(xs[i], ys[i], loc)
			if err != nil {
				return nil, err
			}
			out = or(lt, and(eq, out))
		}
		return out, nil
	}
	switch name := opName(ae); name {
	case "=":
		return equal(ls, rs)
	case "<>", "!=":
		e, err := equal(ls, rs)
		if err != nil {
			return nil, err
		}
		return fold(plan.Call(plan.OpNot, plan.BoolType, e)), nil
	case "<":
		return less(ls, rs)
	case ">":
		return less(rs, ls)
	case "<=", ">=":
		if name == ">=" {
			ls, rs = rs, ls
		}
		lt, err := less(ls, rs)
		if err != nil {
			return nil, err
		}
		eq, err := equal(ls, rs)
		if err != nil {
			return nil, err
		}
		return or(lt, eq), nil
	default:
		return nil, b.unsupported(loc, "operator "+name+" on rows")
	}
}

// bindRowIn binds (x1, x2, ...) [NOT] IN ((a1, a2, ...), ...) as DuckDB
// does: the rows are compared as structs, field by field with NULL equal
// to NULL, so the result is never NULL:
//
//	(x1 IS NOT DISTINCT FROM a1 AND x2 IS NOT DISTINCT FROM a2 ...) OR ...
func (b *binder) bindRowIn(ae *pg.A_Expr, xs []*pg.Node, c *exprCtx) (*plan.Expr, error) {
	var out *plan.Expr
	for _, it := range ae.Rexpr.GetList().GetItems() {
		row := it.GetRowExpr()
		if row == nil || len(row.Args) != len(xs) {
			return nil, b.errorf(CodeType, exprLoc(it), "type mismatch: IN list item is not a row of %d values", len(xs))
		}
		var match *plan.Expr
		for i, xn := range xs {
			x, err := b.bindExpr(xn, c)
			if err != nil {
				return nil, err
			}
			a, err := b.bindExpr(row.Args[i], c)
			if err != nil {
				return nil, err
			}
			e, err := b.notDistinct(x, a, ae.Location)
			if err != nil {
				return nil, err
			}
			if match == nil {
				match = e
			} else {
				match = fold(plan.Call(plan.OpAnd, plan.BoolType, match, e))
			}
		}
		if out == nil {
			out = match
		} else {
			out = fold(plan.Call(plan.OpOr, plan.BoolType, out, match))
		}
	}
	if out == nil {
		return nil, b.errorf(CodeSyntax, ae.Location, "syntax error: empty IN list")
	}
	if opName(ae) == "<>" {
		out = fold(plan.Call(plan.OpNot, plan.BoolType, out))
	}
	return out, nil
}

// bindIn binds x [NOT] IN (list). When every item meets x in the same type
// and is a constant the result is one OpIn; otherwise a chain of = (OR) or
// <> (AND). NULL items become "OR NULL" / "AND NULL", which keeps SQL's
// three-valued result.
func (b *binder) bindIn(ae *pg.A_Expr, c *exprCtx) (*plan.Expr, error) {
	loc := ae.Location
	if ae.Rexpr.GetSubLink() != nil {
		return nil, b.unsupported(loc, "subqueries")
	}
	if row := ae.Lexpr.GetRowExpr(); row != nil {
		return b.bindRowIn(ae, row.Args, c)
	}
	negated := opName(ae) == "<>"
	x, err := b.bindExpr(ae.Lexpr, c)
	if err != nil {
		return nil, err
	}
	var items []*plan.Expr
	for _, n := range ae.Rexpr.GetList().GetItems() {
		it, err := b.bindExpr(n, c)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	if len(items) == 0 {
		return nil, b.errorf(CodeSyntax, loc, "syntax error: empty IN list")
	}
	join, cmp := plan.OpOr, plan.OpEq
	if negated {
		join, cmp = plan.OpAnd, plan.OpNe
	}
	var xs, lits []*plan.Expr
	hasNull, simple := false, true
	for _, it := range items {
		if isNullLit(it) {
			b.noteParam(it, x.Type) // x IN ($1, $2): x's type
			hasNull = true
			continue
		}
		xl, il, err := b.unifyCompare(x, it, loc)
		if err != nil {
			return nil, err
		}
		if !isLit(il) || len(xs) > 0 && xl.Type != xs[0].Type {
			simple = false
		}
		xs, lits = append(xs, xl), append(lits, il)
	}
	var out *plan.Expr
	switch {
	case len(lits) == 0:
	case simple && !isLit(xs[0]):
		in := plan.Call(plan.OpIn, plan.BoolType, append([]*plan.Expr{xs[0]}, lits...)...)
		in.Negated = negated
		out = in
	default:
		for i := range lits {
			e := fold(plan.Call(cmp, plan.BoolType, xs[i], lits[i]))
			if out == nil {
				out = e
			} else {
				out = fold(plan.Call(join, plan.BoolType, out, e))
			}
		}
	}
	if hasNull {
		if out == nil {
			return nullOf(plan.BoolType), nil
		}
		out = fold(plan.Call(join, plan.BoolType, out, nullOf(plan.BoolType)))
	}
	return out, nil
}

func (b *binder) bindBoolExpr(be *pg.BoolExpr, c *exprCtx) (*plan.Expr, error) {
	var op plan.Op
	var what string
	switch be.Boolop {
	case pg.BoolExprType_AND_EXPR:
		op, what = plan.OpAnd, "AND"
	case pg.BoolExprType_OR_EXPR:
		op, what = plan.OpOr, "OR"
	case pg.BoolExprType_NOT_EXPR:
		op, what = plan.OpNot, "NOT"
	default:
		return nil, b.unsupported(be.Location, "boolean expression")
	}
	var args []*plan.Expr
	for _, a := range be.Args {
		e, err := b.bindExpr(a, c)
		if err != nil {
			return nil, err
		}
		if e, err = b.requireBool(e, what, exprLoc(a)); err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	if op == plan.OpNot {
		return not(args[0]), nil
	}
	out := args[0]
	for _, a := range args[1:] {
		out = fold(plan.Call(op, plan.BoolType, out, a))
	}
	return out, nil
}

// bindCase binds searched and simple CASE; a simple CASE x WHEN v becomes
// WHEN x = v.
func (b *binder) bindCase(ce *pg.CaseExpr, c *exprCtx) (*plan.Expr, error) {
	var subject *plan.Expr
	if ce.Arg != nil {
		var err error
		if subject, err = b.bindExpr(ce.Arg, c); err != nil {
			return nil, err
		}
	}
	var conds, results []*plan.Expr
	for _, w := range ce.Args {
		cw := w.GetCaseWhen()
		cond, err := b.bindExpr(cw.Expr, c)
		if err != nil {
			return nil, err
		}
		if subject != nil {
			if cond, err = b.compare(plan.OpEq, subject, cond, cw.Location); err != nil {
				return nil, err
			}
		}
		if cond, err = b.requireBool(cond, "CASE WHEN", exprLoc(cw.Expr)); err != nil {
			return nil, err
		}
		res, err := b.bindExpr(cw.Result, c)
		if err != nil {
			return nil, err
		}
		conds, results = append(conds, cond), append(results, res)
	}
	var els *plan.Expr
	if ce.Defresult != nil {
		var err error
		if els, err = b.bindExpr(ce.Defresult, c); err != nil {
			return nil, err
		}
	}
	return b.buildCase(conds, results, els, ce.Location)
}

// buildCase builds a CASE over bound parts, casting all results to their
// common type. els may be nil (NULL).
func (b *binder) buildCase(conds, results []*plan.Expr, els *plan.Expr, loc int32) (*plan.Expr, error) {
	if els == nil {
		els = nullOf(plan.NullType)
	}
	all := append(append([]*plan.Expr{}, results...), els)
	rep := all[0] // an expression of the common type so far (literals keep their digits)
	for _, r := range all[1:] {
		st, ok := supertype(rep, r)
		if !ok {
			return nil, b.errorf(CodeType, loc, "type mismatch: CASE results of types %s and %s cannot be matched", rep.Type, r.Type)
		}
		switch st {
		case rep.Type:
		case r.Type:
			rep = r
		default:
			rep = nullOf(st)
		}
	}
	t := rep.Type
	if t.ID == plan.Null {
		t = plan.Int64Type
	}
	args := make([]*plan.Expr, 0, 2*len(conds)+1)
	for i := range conds {
		r, err := b.cast(results[i], t, loc)
		if err != nil {
			return nil, err
		}
		if isLit(conds[i]) && (conds[i].Value.Null || !conds[i].Value.B) {
			continue // a WHEN that is never true
		}
		if isLit(conds[i]) { // always true: the rest is never reached
			els = r
			break
		}
		args = append(args, conds[i], r)
	}
	e, err := b.cast(els, t, loc)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		return e, nil
	}
	return plan.Call(plan.OpCase, t, append(args, e)...), nil
}

// bindCoalesce: COALESCE(a, b, c) = CASE WHEN a IS NOT NULL THEN a WHEN b
// IS NOT NULL THEN b ELSE c END.
func (b *binder) bindCoalesce(ce *pg.CoalesceExpr, c *exprCtx) (*plan.Expr, error) {
	var args []*plan.Expr
	for _, a := range ce.Args {
		e, err := b.bindExpr(a, c)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	if len(args) == 1 {
		return args[0], nil
	}
	var conds []*plan.Expr
	for _, a := range args[:len(args)-1] {
		conds = append(conds, fold(plan.Call(plan.OpIsNotNull, plan.BoolType, a)))
	}
	return b.buildCase(conds, args[:len(args)-1], args[len(args)-1], ce.Location)
}

func (b *binder) bindFuncCall(fc *pg.FuncCall, c *exprCtx) (*plan.Expr, error) {
	name, loc := funcName(fc), fc.Location
	if e, ok := b.unnested[fc]; ok {
		return e, nil
	}
	if fc.Over != nil {
		return b.bindWindowCall(fc, c)
	}
	if fn, ok := quantileFuncs[name]; ok && !fc.AggWithinGroup {
		// DuckDB's quantile_cont(x, f) is percentile_cont(f) WITHIN
		// GROUP (ORDER BY x).
		if len(fc.Args) != 2 || fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 {
			return nil, b.errorf(CodeType, loc, "type mismatch: %s takes a value and a constant fraction", name)
		}
		within := &pg.FuncCall{Funcname: fc.Funcname, Args: fc.Args[1:], AggFilter: fc.AggFilter, AggWithinGroup: true,
			AggOrder: []*pg.Node{{Node: &pg.Node_SortBy{SortBy: &pg.SortBy{Node: fc.Args[0], Location: -1}}}}, Location: loc}
		return b.bindPercentile(within, fn, c) // aggregates.go
	}
	if bivariateAggs[name] {
		return b.bindBivariate(fc, c) // aggregates_bivariate.go
	}
	if f, ok := exec.LookupAggregate(name); ok { // the aggregate library
		switch f.Name {
		case plan.AggPercentileCont, plan.AggPercentileDisc:
			return b.bindPercentile(fc, f.Name, c) // aggregates.go: WITHIN GROUP
		case plan.AggStringAgg:
			return b.bindStringAgg(fc, c) // aggregates.go: separator, ORDER BY
		case plan.AggList:
			return b.bindListAgg(fc, c) // aggregates.go: ORDER BY
		}
		return b.bindAggregate(fc, f, c)
	}
	if f, ok := statementTimeFuncs[name]; ok {
		if len(fc.Args) > 0 || fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
			return nil, b.errorf(CodeType, loc, "type mismatch: %s() takes no arguments", name)
		}
		return f(b), nil
	}
	if name == "typeof" && len(fc.Args) == 1 && !fc.AggStar && !fc.AggDistinct && len(fc.AggOrder) == 0 && fc.AggFilter == nil && fc.Over == nil {
		// typeof(x) is known when x is bound: a constant (also for an
		// untyped NULL, whose type the library would make VARCHAR).
		arg, err := b.bindExpr(fc.Args[0], c)
		if err != nil {
			return nil, err
		}
		return lit(plan.Value{S: exec.TypeName(arg.Type)}, plan.StringType), nil
	}
	if name == "ifnull" && len(fc.Args) == 2 && !fc.AggStar && !fc.AggDistinct && len(fc.AggOrder) == 0 && fc.AggFilter == nil && fc.Over == nil {
		// DuckDB's ifnull(a, b) is COALESCE(a, b).
		return b.bindCoalesce(&pg.CoalesceExpr{Args: fc.Args, Location: loc}, c)
	}
	if field, ok := datePartFuncs[name]; ok && len(fc.Args) == 1 && fc.Over == nil {
		if fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
			return nil, b.errorf(CodeType, loc, "type mismatch: %s is not an aggregate function", name)
		}
		return b.bindDatePart(field, fc.Args[0], c, loc)
	}
	switch name {
	case "extract", "date_part", "substring", "substr", "date_add":
		if fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
			return nil, b.errorf(CodeType, loc, "type mismatch: %s is not an aggregate function", name)
		}
	}
	switch name {
	case "date_add":
		// DuckDB's date_add(d, x) is d + x (an interval, or days).
		if len(fc.Args) != 2 {
			return nil, b.errorf(CodeType, loc, "type mismatch: date_add takes a date or timestamp and an interval")
		}
		plus := &pg.A_Expr{Kind: pg.A_Expr_Kind_AEXPR_OP, Name: []*pg.Node{pg.MakeStrNode("+")},
			Lexpr: fc.Args[0], Rexpr: fc.Args[1], Location: loc}
		return b.bindOp(plus, c) // DuckDB's date_add(1, 2) is 3 too
	case "extract", "date_part":
		if len(fc.Args) != 2 {
			return nil, b.errorf(CodeType, loc, "type mismatch: %s takes a field and a date", name)
		}
		field := strings.ToLower(fc.Args[0].GetAConst().GetSval().GetSval())
		if field == "" {
			return nil, b.unsupported(loc, "non-constant EXTRACT field")
		}
		return b.bindDatePart(field, fc.Args[1], c, loc)
	case "substring", "substr":
		if len(fc.Args) < 2 || len(fc.Args) > 3 {
			return nil, b.errorf(CodeType, loc, "type mismatch: SUBSTRING takes a string, a start and an optional length")
		}
		var args []*plan.Expr
		for i, a := range fc.Args {
			e, err := b.bindExpr(a, c)
			if err != nil {
				return nil, err
			}
			want := plan.Int64Type
			if i == 0 {
				want = plan.StringType
			}
			if e.Type.ID == plan.Null {
				e = nullOf(want)
			}
			if e.Type != want {
				return nil, b.errorf(CodeType, exprLoc(a), "type mismatch: SUBSTRING argument %d must be %s, not %s", i+1, want, e.Type)
			}
			args = append(args, e)
		}
		for _, a := range args {
			if isNullLit(a) {
				return nullOf(plan.StringType), nil
			}
		}
		return plan.Call(plan.OpSubstring, plan.StringType, args...), nil
	}
	if e, ok, err := b.arrayFunc(fc, name, c); ok {
		return e, err // Postgres's array functions over bind-time arrays (arrays_pg.go)
	}
	if !fc.AggStar && !fc.AggDistinct && len(fc.AggOrder) == 0 && fc.AggFilter == nil {
		if e, ok, err := b.macro(name, fc.Args, loc, c); ok {
			return e, err // a catalog's SQL function (virtual.go)
		}
	}
	return b.bindScalarFuncCall(fc, name, c) // the function library (functions.go)
}

// bindAggregate binds a call of a library aggregate: its signature for the
// argument's type gives the cast and the result type.
func (b *binder) bindAggregate(fc *pg.FuncCall, f *exec.AggregateFunction, c *exprCtx) (*plan.Expr, error) {
	name, loc := funcName(fc), fc.Location
	if err := b.aggregateAllowed(c, loc); err != nil {
		return nil, err
	}
	switch {
	case len(fc.AggOrder) > 0 || fc.AggWithinGroup:
		return nil, b.unsupported(loc, "ORDER BY in aggregate functions")
	}
	if fc.AggStar {
		if f.Name != plan.AggCount {
			return nil, b.errorf(CodeType, loc, "type mismatch: %s(*) is not defined", name)
		}
		if fc.AggFilter != nil {
			arg, err := b.aggFiltered(fc, nil, c)
			if err != nil {
				return nil, err
			}
			return b.addAgg(c.aggs, aggExpr{fn: plan.AggCount, arg: arg, typ: plan.Int64Type}), nil
		}
		return b.addAgg(c.aggs, aggExpr{fn: plan.AggCountStar, typ: plan.Int64Type}), nil
	}
	if f.Arity() > 1 {
		return b.bindMultiAggregate(fc, f, c)
	}
	if len(fc.Args) != 1 {
		return nil, b.errorf(CodeType, loc, "type mismatch: %s takes exactly one argument", name)
	}
	arg, err := b.bindExpr(fc.Args[0], c.with(func(c *exprCtx) { c.aggs, c.inAgg = nil, true }))
	if err != nil {
		return nil, err
	}
	if arg.Type.ID == plan.Null {
		arg = nullOf(plan.Int64Type)
	}
	if arg, err = b.aggFiltered(fc, arg, c); err != nil {
		return nil, err
	}
	sig, ok := f.Signature(arg.Type)
	if !ok {
		return nil, b.errorf(CodeType, loc, "type mismatch: %s is not defined for %s", name, arg.Type)
	}
	argType := arg.Type
	if sig.Cast.ID != "" {
		if arg, err = b.cast(arg, sig.Cast, loc); err != nil {
			return nil, err
		}
	}
	a := aggExpr{fn: f.Planned(), arg: arg, typ: sig.ReturnType(arg.Type),
		distinct: fc.AggDistinct && !f.DuplicateInsensitive && !f.DistinctDropped}
	if a.fn == plan.AggMedian {
		return b.decimalQuantile(b.addAgg(c.aggs, a), argType, a.fn, false, loc)
	}
	return b.addAgg(c.aggs, a), nil
}

// bindMultiAggregate binds a call of a library aggregate of several
// arguments (arg_min(value, key)): the first is the call's arg, the others
// its more. A FILTER applies to the last (the key): rows it rejects get a
// NULL key, which such aggregates ignore.
func (b *binder) bindMultiAggregate(fc *pg.FuncCall, f *exec.AggregateFunction, c *exprCtx) (*plan.Expr, error) {
	name, loc := funcName(fc), fc.Location
	if len(fc.Args) != f.Arity() {
		return nil, b.errorf(CodeType, loc, "type mismatch: %s takes %d arguments, not %d", name, f.Arity(), len(fc.Args))
	}
	inner := c.with(func(c *exprCtx) { c.aggs, c.inAgg = nil, true })
	args := make([]*plan.Expr, len(fc.Args))
	ts := make([]plan.DataType, len(fc.Args))
	for i, a := range fc.Args {
		e, err := b.bindExpr(a, inner)
		if err != nil {
			return nil, err
		}
		if e.Type.ID == plan.Null {
			e = nullOf(plan.Int64Type)
		}
		args[i], ts[i] = e, e.Type
	}
	last := len(args) - 1
	var err error
	if args[last], err = b.aggFiltered(fc, args[last], c); err != nil {
		return nil, err
	}
	sig, ok := f.SignatureOf(ts)
	if !ok {
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = t.String()
		}
		return nil, b.errorf(CodeType, loc, "type mismatch: %s is not defined for (%s)", name, strings.Join(names, ", "))
	}
	switch f.Planned() {
	case plan.AggArgMin, plan.AggArgMax, plan.AggArgMinNull, plan.AggArgMaxNull:
		// Nested values and keys, keys in DuckDB's order of nested values
		// (function/exec/agg_argminmax_nested.go).
	default:
		for i, t := range ts {
			if t.IsNested() {
				return nil, b.unsupported(exprLoc(fc.Args[i]), fmt.Sprintf("%s over a value of type %s", name, t))
			}
		}
	}
	if sig.Cast.ID != "" {
		if args[0], err = b.cast(args[0], sig.Cast, loc); err != nil {
			return nil, err
		}
	}
	a := aggExpr{fn: f.Planned(), arg: args[0], more: args[1:], typ: sig.ReturnType(args[0].Type),
		distinct: fc.AggDistinct && !f.DuplicateInsensitive && !f.DistinctDropped}
	return b.addAgg(c.aggs, a), nil
}

// exprName is the output name of an unaliased select-list expression.
func exprName(e *plan.Expr) string {
	return exprString(e)
}

// datePartFuncs are DuckDB's one-argument shorthands for date_part:
// year(d) is date_part('year', d), dayofweek(d) date_part('dow', d).
var datePartFuncs = map[string]string{
	"year": "year", "month": "month", "day": "day", "dayofmonth": "day", "quarter": "quarter",
	"week": "week", "weekofyear": "week", "yearweek": "yearweek", "isoyear": "isoyear",
	"dayofweek": "dow", "weekday": "dow", "isodow": "isodow", "dayofyear": "doy",
	"decade": "decade", "century": "century", "millennium": "millennium", "era": "era",
	"hour": "hour", "minute": "minute", "second": "second",
}

// bindDatePart binds EXTRACT(field FROM x) / date_part('field', x) of a
// date or timestamp (a string literal or NULL is read as a date).
func (b *binder) bindDatePart(field string, argNode *pg.Node, c *exprCtx, loc int32) (*plan.Expr, error) {
	arg, err := b.bindExpr(argNode, c)
	if err != nil {
		return nil, err
	}
	if arg.Type.ID == plan.Timestamp {
		return b.extractTimestamp(field, arg, loc)
	}
	if isStringLit(arg) || arg.Type.ID == plan.Null {
		if arg, err = b.cast(arg, plan.DateType, loc); err != nil {
			return nil, err
		}
	}
	if arg.Type.ID != plan.Date {
		return nil, b.errorf(CodeType, loc, "type mismatch: EXTRACT needs a date, not %s", arg.Type)
	}
	if field != "year" && field != "month" && field != "day" {
		return b.libraryExtract(field, arg, loc) // functions.go
	}
	e := plan.Call(plan.OpExtract, plan.Int64Type, arg)
	e.Field = field
	return fold(e), nil
}

// quantileFuncs are DuckDB's two-argument forms of the percentiles:
// quantile_cont(x, f), quantile_disc(x, f) and quantile(x, f) (discrete).
var quantileFuncs = map[string]plan.AggFunc{
	"quantile_cont": plan.AggPercentileCont, "quantile_disc": plan.AggPercentileDisc, "quantile": plan.AggPercentileDisc,
}

// isIntegerType reports whether t is an integer (a NULL counts as one).
func isIntegerType(t plan.DataType) bool {
	return t.ID == plan.Int64 || t.ID == plan.Null
}

// bytewiseCollation reports whether the collation named (optionally
// pg_catalog-qualified) orders strings bytewise as the engine does.
func bytewiseCollation(name []*pg.Node) bool {
	if len(name) == 0 || len(name) > 2 {
		return false
	}
	if len(name) == 2 && !strings.EqualFold(name[0].GetString_().GetSval(), "pg_catalog") {
		return false
	}
	switch name[len(name)-1].GetString_().GetSval() {
	case "C", "POSIX", "default", "ucs_basic":
		return true
	}
	return false
}
