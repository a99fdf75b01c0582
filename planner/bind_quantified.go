package planner

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/sluicedb/sluice/planner/plan"
)

// Quantified comparisons x op ANY|SOME|ALL (q), for op one of < <= > >=
// = <>, are rewritten into scalar subqueries over q's one column v, as
// IN is (bindInValue): each is an aggregation of q, so decorrelation
// handles a correlated q as any correlated scalar subquery, and an
// uncorrelated q costs one one-row aggregation per value. We chose this
// over a mark join because it needs no new join kind or kernel, and the
// aggregates carry all SQL's NULL semantics needs:
//
//	k = (SELECT max(CASE WHEN v IS NULL THEN 2 ELSE 1 END) FROM (q) s(v))
//	     -- NULL: q is empty; 2: q has a NULL
//	e = min(v) or max(v), the extreme that decides the comparison
//
// x > ALL (q) holds when x is greater than every value, that is greater
// than max(v); it is false as soon as one value is not less than x; and
// it is NULL when no value decides it but q has a NULL (or x is NULL):
//
//	x op ALL (q) = CASE WHEN k IS NULL THEN true
//	                    WHEN NOT (x op e) THEN false
//	                    WHEN k = 2 THEN NULL
//	                    ELSE x op e END            -- true, or NULL for a NULL x
//	x op ANY (q) = CASE WHEN k IS NULL THEN false
//	                    WHEN x op e THEN true
//	                    WHEN k = 2 THEN NULL
//	                    ELSE x op e END            -- false, or NULL for a NULL x
//
// with e = max(v) for ALL with > or >= and for ANY with < or <=, min(v)
// otherwise. For = ALL and <> ANY, "x op e" is "x = min AND x = max" and
// its negation "x <> min OR x <> max" (some value differs from x). = ANY
// is IN and <> ALL is NOT IN (bindInValue, or a semi/anti join as a
// conjunct of WHERE).

// subqueryRewrite builds scalar subqueries over the rows of one subquery,
// its columns renamed __sluice_v0, __sluice_v1, ...
type subqueryRewrite struct {
	b  *binder
	sl *pg.SubLink
	c  *exprCtx
	n  int // the subquery's column count
}

const subqueryAlias = "__sluice_in"

func pgStr(s string) *pg.Node { return &pg.Node{Node: &pg.Node_String_{String_: &pg.String{Sval: s}}} }

func pgInt(v int32) *pg.Node {
	return &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Ival{Ival: &pg.Integer{Ival: v}}, Location: -1}}}
}

// col is a reference to the subquery's column i.
func (r *subqueryRewrite) col(i int) *pg.Node {
	return &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{
		Fields: []*pg.Node{pgStr(subqueryAlias), pgStr(fmt.Sprintf("__sluice_v%d", i))}, Location: -1}}}
}

// call is the function call name(args...) at the subquery's location.
func (r *subqueryRewrite) call(name string, args ...*pg.Node) *pg.Node {
	return &pg.Node{Node: &pg.Node_FuncCall{FuncCall: &pg.FuncCall{Funcname: []*pg.Node{pgStr(name)}, Args: args, Location: r.sl.Location}}}
}

// scalar binds (SELECT target FROM (q) s(v0, ...) [WHERE where]).
func (r *subqueryRewrite) scalar(target, where *pg.Node) (*plan.Expr, error) {
	names := make([]*pg.Node, r.n)
	for i := range names {
		names[i] = pgStr(fmt.Sprintf("__sluice_v%d", i))
	}
	sel := &pg.SelectStmt{Op: pg.SetOperation_SETOP_NONE,
		TargetList: []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: target, Location: -1}}}},
		FromClause: []*pg.Node{{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
			Subquery: proto.Clone(r.sl.Subselect).(*pg.Node),
			Alias:    &pg.Alias{Aliasname: subqueryAlias, Colnames: names},
		}}}},
		WhereClause: where,
	}
	return r.b.bindScalarSubquery(&pg.SubLink{SubLinkType: pg.SubLinkType_EXPR_SUBLINK, Location: r.sl.Location,
		Subselect: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}}}, r.c)
}

// kind is max(CASE WHEN <a column is NULL> THEN 2 ELSE 1 END) over the
// subquery: NULL when it has no row, 2 when a row has a NULL. For several
// columns, a row counts as having a NULL when any column is NULL.
func (r *subqueryRewrite) kind() (*plan.Expr, error) {
	var isNull *pg.Node
	for i := 0; i < r.n; i++ {
		t := &pg.Node{Node: &pg.Node_NullTest{NullTest: &pg.NullTest{Arg: r.col(i), Nulltesttype: pg.NullTestType_IS_NULL, Location: -1}}}
		if isNull == nil {
			isNull = t
		} else {
			isNull = &pg.Node{Node: &pg.Node_BoolExpr{BoolExpr: &pg.BoolExpr{Boolop: pg.BoolExprType_OR_EXPR, Args: []*pg.Node{isNull, t}, Location: -1}}}
		}
	}
	kase := &pg.Node{Node: &pg.Node_CaseExpr{CaseExpr: &pg.CaseExpr{
		Args:      []*pg.Node{{Node: &pg.Node_CaseWhen{CaseWhen: &pg.CaseWhen{Expr: isNull, Result: pgInt(2), Location: -1}}}},
		Defresult: pgInt(1), Location: -1}}}
	return r.scalar(r.call("max", kase), nil)
}

// columns binds the subquery alone to count its columns (the binding is
// discarded; the rewrites bind it again inside their scalar subqueries).
func (b *binder) subqueryColumns(sl *pg.SubLink, c *exprCtx) (int, error) {
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil {
		return 0, b.unsupported(sl.Location, "this subquery form")
	}
	sub, err := b.bindQuery(sel, c.scope)
	if err != nil {
		return 0, err
	}
	return len(sub.output()), nil
}

var quantifiedOps = map[string]plan.Op{
	"=": plan.OpEq, "<>": plan.OpNe, "!=": plan.OpNe,
	"<": plan.OpLt, "<=": plan.OpLe, ">": plan.OpGt, ">=": plan.OpGe,
}

// bindQuantified binds x op ANY|SOME|ALL (q) for every comparison
// operator (see the comment at the top of the file).
func (b *binder) bindQuantified(sl *pg.SubLink, c *exprCtx) (*plan.Expr, error) {
	all := sl.SubLinkType == pg.SubLinkType_ALL_SUBLINK
	quant := "ANY"
	if all {
		quant = "ALL"
	}
	opName := "="
	if len(sl.OperName) == 1 {
		opName = sl.OperName[0].GetString_().GetSval()
	}
	op, ok := quantifiedOps[opName]
	if len(sl.OperName) > 1 || !ok {
		return nil, b.unsupported(sl.Location, fmt.Sprintf("operator %s with %s (subquery)", opName, quant))
	}
	switch {
	case op == plan.OpEq && !all:
		return b.bindInValue(sl, c)
	case op == plan.OpNe && all:
		in, err := b.bindInValue(sl, c)
		if err != nil {
			return nil, err
		}
		return plan.Call(plan.OpNot, plan.BoolType, in), nil
	}
	if sl.Testexpr.GetRowExpr() != nil {
		return nil, b.unsupported(sl.Location, fmt.Sprintf("row-valued %s %s (subquery)", opName, quant))
	}
	if c.subs == nil {
		clause := c.clause
		if clause == "" {
			clause = "this clause"
		}
		return nil, b.unsupported(sl.Location, "subqueries in "+clause)
	}
	n, err := b.subqueryColumns(sl, c)
	if err != nil {
		return nil, err
	}
	if n != 1 {
		return nil, b.errorf(CodeType, sl.Location, "type mismatch: subquery has %d columns, %s %s needs one", n, opName, quant)
	}
	r := &subqueryRewrite{b: b, sl: sl, c: c, n: 1}
	k, err := r.kind()
	if err != nil {
		return nil, err
	}
	x, err := b.bindExpr(sl.Testexpr, c)
	if err != nil {
		return nil, err
	}
	// decides is "x op e", fails its negation.
	var decides, fails *plan.Expr
	switch op {
	case plan.OpEq, plan.OpNe: // = ALL, <> ANY
		lo, err := r.scalar(r.call("min", r.col(0)), nil)
		if err != nil {
			return nil, err
		}
		hi, err := r.scalar(r.call("max", r.col(0)), nil)
		if err != nil {
			return nil, err
		}
		eqLo, err := b.compare(plan.OpEq, x, lo, sl.Location)
		if err != nil {
			return nil, err
		}
		eqHi, err := b.compare(plan.OpEq, x, hi, sl.Location)
		if err != nil {
			return nil, err
		}
		neLo, err := b.compare(plan.OpNe, x, lo, sl.Location)
		if err != nil {
			return nil, err
		}
		neHi, err := b.compare(plan.OpNe, x, hi, sl.Location)
		if err != nil {
			return nil, err
		}
		same := plan.Call(plan.OpAnd, plan.BoolType, eqLo, eqHi)
		differs := plan.Call(plan.OpOr, plan.BoolType, neLo, neHi)
		decides, fails = same, differs
		if op == plan.OpNe { // <> ANY: decided by some value differing
			decides, fails = differs, same
		}
	default:
		useMax := (op == plan.OpGt || op == plan.OpGe) == all
		agg := "min"
		if useMax {
			agg = "max"
		}
		e, err := r.scalar(r.call(agg, r.col(0)), nil)
		if err != nil {
			return nil, err
		}
		if decides, err = b.compare(op, x, e, sl.Location); err != nil {
			return nil, err
		}
		fails = plan.Call(plan.OpNot, plan.BoolType, decides)
	}
	empty, hasNull := plan.Call(plan.OpIsNull, plan.BoolType, k), plan.Call(plan.OpEq, plan.BoolType, k, plan.Literal(plan.Value{I: 2}, k.Type))
	if all {
		return plan.Call(plan.OpCase, plan.BoolType,
			empty, boolLit(true),
			fails, boolLit(false),
			hasNull, nullOf(plan.BoolType),
			decides), nil
	}
	return plan.Call(plan.OpCase, plan.BoolType,
		empty, boolLit(false),
		decides, boolLit(true),
		hasNull, nullOf(plan.BoolType),
		decides), nil
}
