package planner

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// Binding calls of the scalar function library (function/exec/functions.go):
// the library entry gives the overloads and the return type rule; the
// binder picks the overload whose parameters the arguments fit with the
// fewest implicit casts, casts the arguments, and emits plan.OpFunc under
// the function's canonical name. Errors name the SQL function: SL005 for a
// function the library does not have, SL004 for arguments no overload
// takes.

// bindScalarFuncCall binds name(args) through the library.
func (b *binder) bindScalarFuncCall(fc *pg.FuncCall, name string, c *exprCtx) (*plan.Expr, error) {
	loc := fc.Location
	if name == mapLiteralFunc {
		return b.mapLiteral(fc, c)
	}
	f, ok := exec.LookupFunction(name)
	if !ok {
		return nil, b.unsupported(loc, "function "+name+"()")
	}
	if fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
		return nil, b.errorf(CodeType, loc, "type mismatch: %s is not an aggregate function", f.Name)
	}
	if f.Name == "struct_pack" {
		return b.structPack(fc, c)
	}
	args := make([]*plan.Expr, len(fc.Args))
	for k, a := range fc.Args {
		e, err := b.bindExpr(a, c)
		if err != nil {
			return nil, err
		}
		args[k] = e
	}
	if f.Name == "struct_extract" {
		return b.structExtract(args, loc)
	}
	call, err := b.callLibrary(f, args, loc)
	if err != nil {
		return nil, err
	}
	if f.Name == "map_from_entries" && call.Type.ID != plan.Map {
		if args[0].Type.ID == plan.Null {
			return nullOf(plan.NullType), nil // map_from_entries(NULL)
		}
		return nil, b.errorf(CodeType, loc, "type mismatch: map_from_entries takes a list of two-field structs (key, value), not %s", argTypes(args))
	}
	if f.Name == "list_concat" && call.Type.ID != plan.List {
		if args[0].Type.ID == plan.Null && args[1].Type.ID == plan.Null {
			return nullOf(plan.NullType), nil // list_concat(NULL, NULL)
		}
		return nil, b.errorf(CodeType, loc, "type mismatch: list_concat takes two lists, not %s", argTypes(args))
	}
	return b.roundScale(f, args, call, loc)
}

// roundScale gives round(decimal(p,s), n) with a constant n the scale of
// its result, as DuckDB does: decimal(p, n) for 0 <= n < s (decimal(p, 0)
// for a negative n), so round(3.14159, 2) is 3.14, not 3.14000. The value
// is already rounded to n places: the cast only drops zero digits.
func (b *binder) roundScale(f *exec.ScalarFunction, args []*plan.Expr, call *plan.Expr, loc int32) (*plan.Expr, error) {
	if f.Name != "round" || len(args) != 2 || call.Type.ID != plan.Decimal || !isLit(args[1]) || args[1].Value.Null {
		return call, nil
	}
	n := max(args[1].Value.I, 0)
	if n >= int64(call.Type.Scale) {
		return call, nil
	}
	return b.cast(call, plan.DataType{ID: plan.Decimal, Precision: call.Type.Precision, Scale: int(n)}, loc)
}

// callLibrary resolves f's overload for args and builds the call.
func (b *binder) callLibrary(f *exec.ScalarFunction, args []*plan.Expr, loc int32) (*plan.Expr, error) {
	// The library's kernels take decimals in the 64-bit layout: a wide
	// decimal argument (a sum, which is decimal(38,s)) is narrowed to
	// decimal(18,s), exactly, or failing with a decimal overflow (SL103)
	// when a value does not fit, never a wrong answer. DuckDB keeps 38
	// digits here; the values are the same. The call's type is still the
	// one the wide arguments give (ceil of decimal(38,2) is decimal(38,0),
	// greatest of decimal(38,4) and decimal(38,2) is decimal(38,2), as in
	// DuckDB): the narrow result is cast to it below, so a CASE or UNION
	// around the call finds the same common type as DuckDB.
	orig := append([]*plan.Expr(nil), args...)
	narrowed := false
	for k, a := range args {
		if a.Type.Wide() && !f.TakesWide {
			narrowed = true
			s := min(a.Type.Scale, plan.MaxDecimal64Precision)
			n, err := b.cast(a, plan.DataType{ID: plan.Decimal, Precision: plan.MaxDecimal64Precision, Scale: s}, loc)
			if err != nil {
				return nil, err
			}
			args[k] = n
		}
	}
	best, bestCost := -1, 0
	for k, s := range f.Signatures {
		cost, ok := signatureCost(s, args)
		if ok && (best < 0 || cost < bestCost) {
			best, bestCost = k, cost
		}
	}
	if best < 0 {
		return nil, b.errorf(CodeType, loc, "type mismatch: %s(%s) is not defined; %s takes %s",
			f.Name, argTypes(args), f.Name, candidates(f))
	}
	s := f.Signatures[best]
	cast := make([]*plan.Expr, len(args))
	same, _ := sameTypeOf(s, args)
	elem := plan.NullType // the element type of a nested first argument (exec.ElemType)
	if len(args) > 0 {
		if t := args[0].Type; t.ID == plan.List {
			elem = t.Elem()
		} else if t.ID == plan.Map {
			elem = t.Key()
		}
	}
	for k, a := range args {
		p, _ := s.ParamFor(k)
		if p == exec.ElemType {
			p, same = exec.SameType, elem
		}
		e, err := b.castToParam(a, p, same, loc)
		if err != nil {
			return nil, err
		}
		cast[k] = e
	}
	types := make([]plan.DataType, len(cast))
	for k, a := range cast {
		types[k] = a.Type
	}
	ret := s.ReturnType(types)
	if f.Nulls == exec.NullPropagates {
		for _, a := range cast {
			if isNullLit(a) {
				return nullOf(ret), nil
			}
		}
	}
	call := plan.CallFunc(f.Name, ret, cast...)
	if narrowed {
		if wide, ok := wideReturn(s, orig); ok && wide != ret && wide.ID == plan.Decimal && ret.ID == plan.Decimal {
			return b.cast(call, wide, loc)
		}
	}
	return call, nil
}

// wideReturn is the type signature s gives for the arguments as they were
// before callLibrary narrowed wide decimals: SameType parameters take the
// common type of their (wide) arguments, decimal parameters the argument's
// own type. ok is false when there is no such type.
func wideReturn(s exec.Signature, orig []*plan.Expr) (plan.DataType, bool) {
	var same *plan.Expr
	types := make([]plan.DataType, len(orig))
	for k, a := range orig {
		p, _ := s.ParamFor(k)
		switch {
		case p == exec.SameType:
			if same == nil {
				same = a
				continue
			}
			t, ok := supertype(same, a)
			if !ok {
				return plan.DataType{}, false
			}
			same = &plan.Expr{Op: plan.OpColumn, Type: t}
		case a.Type.ID == plan.Decimal && (p == plan.Decimal || p == exec.NumericType || p == exec.AnyType),
			a.Type.ID == plan.Int64 && p == plan.Int64:
			types[k] = a.Type
		default:
			return plan.DataType{}, false
		}
	}
	for k := range orig {
		if p, _ := s.ParamFor(k); p == exec.SameType {
			if same.Type.ID != plan.Decimal {
				return plan.DataType{}, false
			}
			types[k] = same.Type
		}
	}
	return s.ReturnType(types), true
}

// paramCost is the cost of passing a to a parameter of type p: 0 exact,
// more for each implicit cast, ok false when a does not fit.
func paramCost(a *plan.Expr, p plan.TypeID) (int, bool) {
	t := a.Type.ID
	switch {
	case p == exec.AnyType || p == exec.SameType || p == exec.ElemType:
		return 0, true
	case t == plan.Null:
		return 0, true
	case p == exec.ToString:
		if t == plan.String {
			return 0, true
		}
		return 1, true
	case p == exec.NumericType:
		return 0, a.Type.IsNumeric()
	case t == p:
		return 0, true
	case t == plan.Int64 && p == plan.Decimal:
		return 1, true
	case t == plan.Int64 && p == plan.Float64, t == plan.Decimal && p == plan.Float64:
		return 2, true
	case isStringLit(a) && p == plan.Date:
		return 1, true
	case t == plan.Date && p == plan.Timestamp:
		return 1, true // DuckDB's implicit cast: a date is its midnight
	}
	return 0, false
}

func signatureCost(s exec.Signature, args []*plan.Expr) (int, bool) {
	if !s.Arity(len(args)) {
		return 0, false
	}
	total := 0
	for k, a := range args {
		p, _ := s.ParamFor(k)
		c, ok := paramCost(a, p)
		if !ok {
			return 0, false
		}
		total += c
	}
	if _, ok := sameTypeOf(s, args); !ok {
		return 0, false
	}
	return total, true
}

// sameTypeOf is the common supertype of the SameType arguments.
func sameTypeOf(s exec.Signature, args []*plan.Expr) (plan.DataType, bool) {
	var acc *plan.Expr
	for k, a := range args {
		if p, _ := s.ParamFor(k); p != exec.SameType {
			continue
		}
		if acc == nil {
			acc = a
			continue
		}
		t, ok := supertype(acc, a)
		if !ok {
			return plan.DataType{}, false
		}
		acc = &plan.Expr{Op: plan.OpColumn, Type: t}
	}
	if acc == nil {
		return plan.NullType, true
	}
	if acc.Type.ID == plan.Null {
		return plan.Int64Type, true
	}
	if t := acc.Type; t.Wide() {
		// The kernels take 64-bit decimals (see callLibrary): the common
		// type of decimal(18,4) and decimal(18,2) is decimal(20,4), kept
		// at 18 digits (a value that does not fit fails with SL103).
		// greatest(sum(x * y), sum(x)) produced no rows in the wide layout.
		return plan.DataType{ID: plan.Decimal, Precision: plan.MaxDecimal64Precision, Scale: min(t.Scale, plan.MaxDecimal64Precision)}, true
	}
	return acc.Type, true
}

// castToParam casts a to parameter type p.
func (b *binder) castToParam(a *plan.Expr, p plan.TypeID, same plan.DataType, loc int32) (*plan.Expr, error) {
	var t plan.DataType
	switch p {
	case exec.AnyType:
		if a.Type.ID == plan.Null {
			return nullOf(plan.StringType), nil
		}
		return a, nil
	case exec.SameType:
		t = same
	case exec.ToString:
		t = plan.StringType
	case exec.NumericType:
		if a.Type.ID == plan.Null {
			return nullOf(plan.Int64Type), nil
		}
		return a, nil
	case plan.Decimal:
		if a.Type.ID == plan.Decimal {
			return a, nil
		}
		t = asDecimal(a)
	case plan.List, plan.Map, plan.Struct:
		if a.Type.ID == p {
			return a, nil
		}
		return nullOf(plan.NullType), nil // a NULL argument: a NULL result
	default:
		t = plan.DataType{ID: p}
	}
	if a.Type.ID == plan.Null {
		return nullOf(t), nil
	}
	return b.cast(a, t, loc)
}

func argTypes(args []*plan.Expr) string {
	ts := make([]string, len(args))
	for k, a := range args {
		ts[k] = a.Type.String()
	}
	return strings.Join(ts, ", ")
}

func candidates(f *exec.ScalarFunction) string {
	var out []string
	for _, s := range f.Signatures {
		ps := make([]string, len(s.Params))
		for k, p := range s.Params {
			ps[k] = string(p)
			if s.Variadic && k == len(s.Params)-1 {
				ps[k] += "..."
			}
		}
		out = append(out, "("+strings.Join(ps, ", ")+")")
	}
	return strings.Join(out, " or ")
}

// callByName binds a library call from already bound arguments (operators
// and SQL syntax that map to library functions: ||, GREATEST, ILIKE).
func (b *binder) callByName(name string, args []*plan.Expr, loc int32) (*plan.Expr, error) {
	f, ok := exec.LookupFunction(name)
	if !ok {
		return nil, b.unsupported(loc, "function "+name+"()")
	}
	return b.callLibrary(f, args, loc)
}

// bindMinMax binds GREATEST(...) and LEAST(...).
func (b *binder) bindMinMax(mm *pg.MinMaxExpr, c *exprCtx) (*plan.Expr, error) {
	name := "least"
	if mm.Op == pg.MinMaxOp_IS_GREATEST {
		name = "greatest"
	}
	var args []*plan.Expr
	for _, a := range mm.Args {
		e, err := b.bindExpr(a, c)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	return b.callByName(name, args, mm.Location)
}

// bindSQLValueFunction binds CURRENT_DATE and CURRENT_TIMESTAMP /
// LOCALTIMESTAMP: the statement's date or time, UTC, fixed when the query
// is planned, so the same for every row, every call and every task of the
// query (it is a literal in the plan).
func (b *binder) bindSQLValueFunction(f *pg.SQLValueFunction) (*plan.Expr, error) {
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return b.currentDate(), nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N,
		pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return b.currentTimestamp(), nil
	}
	name := strings.ToLower(strings.TrimPrefix(f.Op.String(), "SVFOP_"))
	if e, ok, err := b.macro(name, nil, f.Location, &exprCtx{clause: "SELECT"}); ok {
		return e, err // current_user, current_schema ... from a catalog that defines them
	}
	return nil, b.unsupported(f.Location, "SQL value function "+strings.TrimPrefix(f.Op.String(), "SVFOP_"))
}

func (b *binder) statementTime() time.Time {
	if b.now.IsZero() {
		b.now = time.Now().UTC().Truncate(time.Microsecond)
	}
	return b.now
}

// currentDate is CURRENT_DATE (today()): the statement's date.
func (b *binder) currentDate() *plan.Expr {
	return lit(plan.Value{I: int64(daysOf(b.statementTime()))}, plan.DateType)
}

// currentTimestamp is now() / CURRENT_TIMESTAMP: the statement's time in
// microseconds since the epoch, UTC.
func (b *binder) currentTimestamp() *plan.Expr {
	return lit(plan.Value{I: b.statementTime().UnixMicro()}, plan.TimestampType)
}

// statementTimeFuncs are the functions without arguments that read the
// statement time.
var statementTimeFuncs = map[string]func(*binder) *plan.Expr{
	"now": (*binder).currentTimestamp, "get_current_timestamp": (*binder).currentTimestamp,
	"transaction_timestamp": (*binder).currentTimestamp, "current_timestamp": (*binder).currentTimestamp,
	"today": (*binder).currentDate, "current_date": (*binder).currentDate,
}

// bindILike binds a [NOT] ILIKE pattern as lower(a) [NOT] LIKE lower(pattern).
func (b *binder) bindILike(ae *pg.A_Expr, c *exprCtx) (*plan.Expr, error) {
	if fc := ae.Rexpr.GetFuncCall(); fc != nil && funcName(fc) == "like_escape" {
		return b.bindLikeEscape(ae, fc, true, opName(ae) == "!~~*", c)
	}
	if fc := b.postgresEscape(ae.Rexpr); fc != nil {
		return b.bindLikeEscape(ae, fc, true, opName(ae) == "!~~*", c)
	}
	l, err := b.bindExpr(ae.Lexpr, c)
	if err != nil {
		return nil, err
	}
	r, err := b.bindExpr(ae.Rexpr, c)
	if err != nil {
		return nil, err
	}
	if l.Type.ID != plan.String && l.Type.ID != plan.Null {
		return nil, b.errorf(CodeType, ae.Location, "type mismatch: ILIKE needs a string, not %s", l.Type)
	}
	if isStringLit(r) {
		r = lit(plan.Value{S: strings.ToLower(r.Value.S)}, plan.StringType)
	}
	if l.Type.ID == plan.String {
		if l, err = b.callByName("lower", []*plan.Expr{l}, ae.Location); err != nil {
			return nil, err
		}
	}
	return b.like(l, r, opName(ae) == "!~~*", ae.Location)
}

// bindLikeEscape binds x [NOT] [I]LIKE pattern ESCAPE e (the parser's
// like_escape(pattern, e)): with a constant pattern and escape character
// (one character, or the empty string for none), the pattern becomes the regular
// expression matching the same strings ('%' any run, '_' one character,
// e followed by a character that character itself), matched against the
// whole string; ILIKE matches without regard to case.
func (b *binder) bindLikeEscape(ae *pg.A_Expr, fc *pg.FuncCall, ci, negated bool, c *exprCtx) (*plan.Expr, error) {
	loc := ae.Location
	if len(fc.Args) != 2 {
		return nil, b.errorf(CodeType, loc, "type mismatch: ESCAPE takes one character")
	}
	x, err := b.bindExpr(ae.Lexpr, c)
	if err != nil {
		return nil, err
	}
	p, err := b.bindExpr(fc.Args[0], c)
	if err != nil {
		return nil, err
	}
	e, err := b.bindExpr(fc.Args[1], c)
	if err != nil {
		return nil, err
	}
	if isNullLit(x) || isNullLit(p) || isNullLit(e) {
		return nullOf(plan.BoolType), nil
	}
	if x.Type.ID != plan.String {
		return nil, b.errorf(CodeType, loc, "type mismatch: LIKE needs a string, not %s", x.Type)
	}
	if !isStringLit(p) || !isStringLit(e) {
		return nil, b.unsupported(loc, "LIKE ... ESCAPE with a non-constant pattern or escape")
	}
	esc := []rune(e.Value.S)
	if len(esc) > 1 {
		return nil, b.errorf(CodeValue, exprLoc(fc.Args[1]), "invalid escape string %q: it must be empty or one character", e.Value.S)
	}
	var re strings.Builder
	re.WriteString("^(?s")
	if ci {
		re.WriteString("i")
	}
	re.WriteString(":")
	pat := []rune(p.Value.S)
	for i := 0; i < len(pat); i++ {
		switch r := pat[i]; {
		case len(esc) == 1 && r == esc[0]:
			if i+1 == len(pat) {
				return nil, b.errorf(CodeValue, exprLoc(fc.Args[0]), "LIKE pattern %q ends with its escape character", p.Value.S)
			}
			i++
			re.WriteString(regexp.QuoteMeta(string(pat[i])))
		case r == '%':
			re.WriteString(".*")
		case r == '_':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString(")$")
	return b.regexMatch(x, lit(plan.Value{S: re.String()}, plan.StringType), negated, loc)
}

// bindSimilar binds x [NOT] SIMILAR TO pattern as DuckDB does: the pattern
// is a regular expression (RE2) that must match the whole string, so it is
// regexp_matches(x, '^(?:pattern)$'). The parser wraps the pattern in
// similar_to_escape(pattern[, escape]); a constant pattern without an
// ESCAPE is supported.
func (b *binder) bindSimilar(ae *pg.A_Expr, c *exprCtx) (*plan.Expr, error) {
	loc := ae.Location
	pat := ae.Rexpr
	if fc := pat.GetFuncCall(); fc != nil && funcName(fc) == "similar_to_escape" {
		if len(fc.Args) != 1 {
			return nil, b.unsupported(loc, "SIMILAR TO ... ESCAPE")
		}
		pat = fc.Args[0]
	}
	x, err := b.bindExpr(ae.Lexpr, c)
	if err != nil {
		return nil, err
	}
	p, err := b.bindExpr(pat, c)
	if err != nil {
		return nil, err
	}
	if isNullLit(p) {
		return nullOf(plan.BoolType), nil
	}
	if !isStringLit(p) {
		return nil, b.unsupported(loc, "SIMILAR TO with a non-constant pattern")
	}
	if b.postgres {
		// Postgres's SIMILAR TO: an SQL regular expression, % and _
		// the LIKE wildcards, matching the whole string
		p = lit(plan.Value{S: similarToRE2(p.Value.S)}, plan.StringType)
	}
	full, err := b.anchored(p, loc)
	if err != nil {
		return nil, err
	}
	return b.regexMatch(x, full, opName(ae) == "!~", loc)
}

// bindRegexMatch binds x ~ pattern and x !~ pattern as DuckDB does:
// whether the regular expression (RE2) matches the whole string
// (regexp_full_match), through regexp_matches with the pattern anchored.
func (b *binder) bindRegexMatch(ae *pg.A_Expr, c *exprCtx) (*plan.Expr, error) {
	loc := ae.Location
	x, err := b.bindExpr(ae.Lexpr, c)
	if err != nil {
		return nil, err
	}
	p, err := b.bindExpr(ae.Rexpr, c)
	if err != nil {
		return nil, err
	}
	if isNullLit(x) || isNullLit(p) {
		return nullOf(plan.BoolType), nil
	}
	if b.postgres {
		return b.regexMatch(x, p, opName(ae) == "!~", loc) // a match anywhere
	}
	full, err := b.anchored(p, loc)
	if err != nil {
		return nil, err
	}
	return b.regexMatch(x, full, opName(ae) == "!~", loc)
}

// anchored is the regular expression p anchored to match a whole string,
// '^(?:' || p || ')$' (a literal when p is; NULL when p is).
func (b *binder) anchored(p *plan.Expr, loc int32) (*plan.Expr, error) {
	if isStringLit(p) {
		return lit(plan.Value{S: "^(?:" + p.Value.S + ")$"}, plan.StringType), nil
	}
	open, err := b.callByName("||", []*plan.Expr{lit(plan.Value{S: "^(?:"}, plan.StringType), p}, loc)
	if err != nil {
		return nil, err
	}
	return b.callByName("||", []*plan.Expr{open, lit(plan.Value{S: ")$"}, plan.StringType)}, loc)
}

// regexMatch is regexp_matches(x, re), negated for the NOT forms.
func (b *binder) regexMatch(x, re *plan.Expr, negated bool, loc int32) (*plan.Expr, error) {
	m, err := b.callByName("regexp_matches", []*plan.Expr{x, re}, loc)
	if err != nil {
		return nil, err
	}
	if negated {
		m = fold(plan.Call(plan.OpNot, plan.BoolType, m))
	}
	return m, nil
}

// libraryExtract binds EXTRACT(field FROM d) / date_part for the fields
// beyond year, month and day through the library's date_part.
func (b *binder) libraryExtract(field string, arg *plan.Expr, loc int32) (*plan.Expr, error) {
	if !exec.IsDatePart(field) {
		return nil, b.errorf(CodeValue, loc, "unknown date part %q in EXTRACT/date_part", field)
	}
	return b.callByName("date_part", []*plan.Expr{lit(plan.Value{S: field}, plan.StringType), arg}, loc)
}

// FunctionDocs renders the library as a Markdown table (name, aliases,
// signatures, description), for the README and `sluice functions`.
func FunctionDocs() string {
	var sb strings.Builder
	sb.WriteString("| function | aliases | arguments | description |\n|---|---|---|---|\n")
	for _, f := range exec.Functions() {
		var sigs []string
		for _, s := range f.Signatures {
			sigs = append(sigs, "`"+f.SignatureString(s)+"`")
		}
		aliases := strings.Join(f.Aliases, ", ")
		fmt.Fprintf(&sb, "| `%s` | %s | %s | %s |\n", f.Name, aliases, strings.Join(sigs, "<br>"), strings.ReplaceAll(f.Doc, "|", "\\|"))
	}
	return sb.String()
}

// postgresEscape is Postgres's default LIKE escape (backslash) made
// explicit, for a constant pattern that uses it under Options.Postgres;
// nil otherwise.
func (b *binder) postgresEscape(pattern *pg.Node) *pg.FuncCall {
	if !b.postgres || !strings.Contains(pattern.GetAConst().GetSval().GetSval(), `\`) {
		return nil
	}
	esc := &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Sval{Sval: &pg.String{Sval: `\`}}, Location: -1}}}
	return &pg.FuncCall{Funcname: []*pg.Node{{Node: &pg.Node_String_{String_: &pg.String{Sval: "like_escape"}}}},
		Args: []*pg.Node{pattern, esc}, Location: -1}
}

// similarToRE2 translates an SQL regular expression (SIMILAR TO, as
// Postgres's similar_to_escape reads it, escape character backslash) to
// RE2: % is .*, _ is ., a dot, ^ and $ are literal, a bracket expression
// and the other operators (| * + ? {m,n} ( )) are kept.
func similarToRE2(pat string) string {
	var re strings.Builder
	inBracket := false
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\\' && i+1 < len(rs):
			i++
			re.WriteString(regexp.QuoteMeta(string(rs[i])))
		case inBracket:
			if r == ']' {
				inBracket = false
			}
			re.WriteRune(r)
		case r == '[':
			inBracket = true
			re.WriteRune(r)
		case r == '%':
			re.WriteString(".*")
		case r == '_':
			re.WriteString(".")
		case r == '.' || r == '^' || r == '$':
			re.WriteString("\\" + string(r))
		default:
			re.WriteRune(r)
		}
	}
	return re.String()
}
