package exec

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Eval evaluates e over the rows of rec. The result has rec.NumRows() rows
// and the Arrow layout of e.Type (a decimal keeps the scale of e.Type; a
// bare column reference is returned as stored). The caller releases it.
//
// Semantics: NULLs propagate through every operator except AND/OR (SQL
// three-valued logic), IS [NOT] NULL, CASE and IN (x IN (..., NULL) is NULL
// when x is not found). Division and modulo by zero yield NULL. int64
// overflow fails with ErrIntegerOverflow, decimal results that do not fit
// in 18 digits with plan.ErrDecimalOverflow. Literals are not materialized
// where a kernel can use them directly; an expression over literals only is
// computed once per call.
func Eval(e *plan.Expr, rec arrow.RecordBatch, mem memory.Allocator) (arrow.Array, error) {
	return EvalCached(e, rec, mem, nil)
}

// EvalCached is Eval keeping what does not change between batches (an IN
// list's set, built from its literals once) in cache, which an operator
// holds for its expressions' life; nil keeps nothing. A cache is not safe
// for concurrent use.
func EvalCached(e *plan.Expr, rec arrow.RecordBatch, mem memory.Allocator, cache *ExprCache) (arrow.Array, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	ev := &evaluator{mem: mem, rec: rec, n: int(rec.NumRows()), cache: cache}
	v, err := ev.eval(e)
	if err != nil {
		return nil, evalError(e, err)
	}
	return ev.materialize(v)
}

// evalError wraps an evaluation failure. Evaluating an expression over
// batches in memory does no I/O, so its errors are never transient: one
// the query's values cause carries its user code already (SL1xx, the
// overflow and memory-limit sentinels); anything else is a bug in the
// plan or a kernel, an internal error (SL900) that no retry would fix.
func evalError(e *plan.Expr, err error) error {
	err = fmt.Errorf("exec: eval %s: %w", e, err)
	if plan.IsUserError(err) || errors.Is(err, ErrIntegerOverflow) || errors.Is(err, ErrMemoryLimit) || errors.Is(err, ErrCorruptFile) {
		return err
	}
	return plan.WithCode(plan.CodeInternal, err)
}

// vec is an evaluated operand: an array of ev.n rows, or a literal.
type vec struct {
	arr arrow.Array // nil for a literal
	lit plan.Value
	t   plan.DataType
}

func (v vec) scalar() bool { return v.arr == nil }

func (v vec) isNull() bool { return v.t.ID == plan.Null || (v.arr == nil && v.lit.Null) }

func (v vec) release() {
	if v.arr != nil {
		v.arr.Release()
	}
}

type evaluator struct {
	mem   memory.Allocator
	rec   arrow.RecordBatch
	n     int
	cache *ExprCache
}

// ExprCache holds, per expression node, what its evaluation derives from
// its literals alone (see EvalCached).
type ExprCache struct {
	in map[*plan.Expr]*inMatcher
}

// materialize turns v into an array (consuming v).
func (ev *evaluator) materialize(v vec) (arrow.Array, error) {
	if v.arr != nil {
		return v.arr, nil
	}
	return broadcast(ev.mem, v.t, v.lit, ev.n)
}

// typeOfArrow is the engine type of an Arrow array type.
func typeOfArrow(t arrow.DataType) plan.DataType {
	switch tt := t.(type) {
	case *arrow.Decimal64Type:
		return plan.DataType{ID: plan.Decimal, Precision: int(tt.Precision), Scale: int(tt.Scale)}
	case *arrow.Decimal128Type:
		// The engine keeps only decimals above 18 digits in this layout.
		return plan.DataType{ID: plan.Decimal, Precision: max(int(tt.Precision), plan.MaxDecimal64Precision+1), Scale: int(tt.Scale)}
	}
	dt, ok := plan.FromArrow(t)
	if !ok {
		return plan.NullType
	}
	return dt
}

func (ev *evaluator) eval(e *plan.Expr) (vec, error) {
	if e == nil {
		return vec{}, errors.New("nil expression")
	}
	switch e.Op {
	case plan.OpColumn:
		if ev.rec == nil || e.Col < 0 || e.Col >= int(ev.rec.NumCols()) {
			return vec{}, fmt.Errorf("column %s out of range (batch has %d columns)", e, numCols(ev.rec))
		}
		a := ev.rec.Column(e.Col)
		k, err := kindOf(a.DataType())
		if err != nil {
			return vec{}, fmt.Errorf("column %s: %w", e, err)
		}
		if k != kNull && e.Type.ID != plan.Null && k != kindOfType(e.Type) {
			return vec{}, fmt.Errorf("column %s has arrow type %s, plan says %s", e, a.DataType(), e.Type)
		}
		a.Retain()
		return vec{arr: a, t: typeOfArrow(a.DataType())}, nil
	case plan.OpLiteral:
		v := plan.Value{Null: true}
		if e.Value != nil {
			v = *e.Value
		}
		if e.Type.ID == plan.Null {
			v.Null = true
		}
		return vec{lit: v, t: e.Type}, nil
	case plan.OpAnd, plan.OpOr:
		return ev.evalLogic(e)
	case plan.OpCase:
		return ev.evalCase(e)
	case plan.OpIn:
		if ev.cache != nil && inLiterals(e) {
			return ev.evalInCached(e)
		}
	}
	return ev.evalGeneric(e)
}

// evalGeneric evaluates e's operands, then folds e over literal operands
// or applies its kernel.
func (ev *evaluator) evalGeneric(e *plan.Expr) (vec, error) {
	args := make([]vec, 0, len(e.Args))
	defer func() {
		for _, a := range args {
			a.release()
		}
	}()
	allScalar := len(e.Args) > 0
	for _, x := range e.Args {
		v, err := ev.eval(x)
		if err != nil {
			return vec{}, err
		}
		args = append(args, v)
		allScalar = allScalar && v.scalar()
	}
	if allScalar && e.Type.IsNested() {
		// A nested value has no literal: the operands become arrays of
		// every row (list_value(1, 2), {'a': 1}).
		for i, a := range args {
			if a.t.ID == plan.Interval {
				continue
			}
			arr, err := broadcast(ev.mem, a.t, a.lit, ev.n)
			if err != nil {
				return vec{}, err
			}
			args[i] = vec{arr: arr, t: a.t}
		}
	} else if allScalar {
		return ev.fold(e, args)
	}
	arr, err := ev.apply(e, args)
	if err != nil {
		return vec{}, fmt.Errorf("%s: %w", opName(e), err)
	}
	return vec{arr: arr, t: typeOfArrow(arr.DataType())}, nil
}

func numCols(rec arrow.RecordBatch) int64 {
	if rec == nil {
		return 0
	}
	return rec.NumCols()
}

func opName(e *plan.Expr) string {
	if e.Op == plan.OpExtract {
		return "extract(" + e.Field + ")"
	}
	if e.Op == plan.OpFunc {
		return e.Func + "()"
	}
	return string(e.Op)
}

// fold computes an operator over literal operands once, as a literal.
func (ev *evaluator) fold(e *plan.Expr, args []vec) (vec, error) {
	sub := &evaluator{mem: ev.mem, n: 1}
	arrs := make([]vec, len(args))
	defer func() {
		for _, a := range arrs {
			a.release()
		}
	}()
	for i, a := range args {
		if a.t.ID == plan.Interval {
			// Interval operands are always literals (timestampArith
			// takes them as they are); only the other operands become
			// one-row arrays.
			arrs[i] = vec{lit: a.lit, t: a.t}
			continue
		}
		arr, err := broadcast(ev.mem, a.t, a.lit, 1)
		if err != nil {
			return vec{}, err
		}
		arrs[i] = vec{arr: arr, t: a.t}
	}
	res, err := sub.apply(e, arrs)
	if err != nil {
		return vec{}, fmt.Errorf("%s: %w", opName(e), err)
	}
	defer res.Release()
	return vec{lit: scalarAt(res, 0), t: e.Type}, nil
}

// apply runs the kernel of e over evaluated operands (at least one array).
func (ev *evaluator) apply(e *plan.Expr, args []vec) (arrow.Array, error) {
	need := func(k int) error {
		if len(args) < k {
			return fmt.Errorf("needs %d argument(s), has %d", k, len(args))
		}
		return nil
	}
	if e.Op == plan.OpFunc { // the function library (functions.go)
		return ev.evalFunc(e, args)
	}
	if err := need(1); err != nil {
		return nil, err
	}
	switch e.Op {
	case plan.OpIsNull, plan.OpIsNotNull:
		return ev.isNull(args[0], e.Op == plan.OpIsNotNull)
	case plan.OpIn:
		if args[0].isNull() {
			return makeNulls(ev.mem, plan.BoolType.Arrow(), ev.n), nil
		}
		return ev.in(e, args)
	}
	for _, a := range args {
		if a.isNull() {
			return makeNulls(ev.mem, e.Type.Arrow(), ev.n), nil
		}
	}
	switch e.Op {
	case plan.OpAdd, plan.OpSub, plan.OpMul, plan.OpDiv, plan.OpMod:
		if err := need(2); err != nil {
			return nil, err
		}
		return ev.arith(e, args[0], args[1])
	case plan.OpNeg:
		return ev.neg(e, args[0])
	case plan.OpEq, plan.OpNe, plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe:
		if err := need(2); err != nil {
			return nil, err
		}
		return ev.compare(e.Op, args[0], args[1])
	case plan.OpNot:
		return ev.not(args[0])
	case plan.OpCast:
		a, err := ev.materialize(retained(args[0]))
		if err != nil {
			return nil, err
		}
		defer a.Release()
		return castArray(ev.mem, a, e.Type)
	case plan.OpTryCast:
		a, err := ev.materialize(retained(args[0]))
		if err != nil {
			return nil, err
		}
		defer a.Release()
		return tryCastArray(ev.mem, a, e.Type)
	case plan.OpLike:
		if err := need(2); err != nil {
			return nil, err
		}
		return ev.like(e, args[0], args[1])
	case plan.OpExtract:
		return ev.extract(e, args[0])
	case plan.OpSubstring:
		if err := need(2); err != nil {
			return nil, err
		}
		return ev.substring(args)
	}
	return nil, fmt.Errorf("unsupported operator %q", e.Op)
}

// castVec converts v to type t (a no-op when the layout and scale agree).
func (ev *evaluator) castVec(v vec, t plan.DataType) (vec, error) {
	if sameType(v.t, t) {
		return v, nil
	}
	if v.isNull() {
		v.release()
		return vec{lit: plan.Value{Null: true}, t: t}, nil
	}
	if v.scalar() {
		arr, err := broadcast(ev.mem, v.t, v.lit, 1)
		if err != nil {
			return vec{}, err
		}
		defer arr.Release()
		out, err := castArray(ev.mem, arr, t)
		if err != nil {
			return vec{}, err
		}
		defer out.Release()
		return vec{lit: scalarAt(out, 0), t: t}, nil
	}
	out, err := castArray(ev.mem, v.arr, t)
	v.release()
	if err != nil {
		return vec{}, err
	}
	return vec{arr: out, t: typeOfArrow(out.DataType())}, nil
}

// sameType reports whether values of a and b share a layout (decimals: the
// same scale; precision does not matter).
func sameType(a, b plan.DataType) bool {
	if a.ID != b.ID {
		return false
	}
	if a.IsNested() {
		return a == b
	}
	return a.ID != plan.Decimal || (a.Scale == b.Scale && a.Wide() == b.Wide())
}

// ---- subsets ----------------------------------------------------------------

// evalOnRows evaluates e over rows sel of the batch only and returns an
// array of ev.n rows that is NULL outside sel. It is the fallback used when
// an expression fails over a whole batch but must only be evaluated where
// a CASE / AND / OR lets it through.
func (ev *evaluator) evalOnRows(e *plan.Expr, sel []int32) (arrow.Array, error) {
	if len(sel) == 0 || ev.rec == nil {
		return makeNulls(ev.mem, e.Type.Arrow(), ev.n), nil
	}
	ncols := int(ev.rec.NumCols())
	cols := make([]arrow.Array, ncols)
	fields := make([]arrow.Field, ncols)
	for i := range cols {
		cols[i] = array.NewNull(len(sel))
		fields[i] = arrow.Field{Name: ev.rec.ColumnName(i), Type: arrow.Null, Nullable: true}
	}
	for _, c := range e.Columns() {
		if c < 0 || c >= ncols {
			continue
		}
		t, err := take(ev.mem, ev.rec.Column(c), sel)
		if err != nil {
			releaseAll(cols)
			return nil, err
		}
		cols[c].Release()
		cols[c] = t
		fields[c].Type = t.DataType()
	}
	sub := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(len(sel)))
	releaseAll(cols)
	defer sub.Release()
	sev := &evaluator{mem: ev.mem, rec: sub, n: len(sel)}
	v, err := sev.eval(e)
	if err != nil {
		return nil, err
	}
	arr, err := sev.materialize(v)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	return scatter(ev.mem, arr, sel, ev.n)
}

// scatter places row k of a at row sel[k] of an n-row result, NULL elsewhere.
func scatter(mem memory.Allocator, a arrow.Array, sel []int32, n int) (arrow.Array, error) {
	if a.DataType().ID() == arrow.NULL {
		return array.NewNull(n), nil
	}
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = -1
	}
	for k, r := range sel {
		idx[r] = int32(k)
	}
	return takeNullable(mem, a, idx)
}

// ---- logic ------------------------------------------------------------------

// alignedBits returns n bits of bm starting at off as a bitmap starting at 0
// (a view when off is 0, else a copy).
func alignedBits(bm []byte, off, n int) []byte {
	nb := int(bitutil.BytesForBits(int64(n)))
	if off == 0 {
		return bm[:nb]
	}
	out := make([]byte, nb)
	bitutil.CopyBitmap(bm, off, n, out, 0)
	return out
}

func (ev *evaluator) evalLogic(e *plan.Expr) (vec, error) {
	if len(e.Args) != 2 {
		return vec{}, fmt.Errorf("%s needs 2 arguments, has %d", e.Op, len(e.Args))
	}
	isOr := e.Op == plan.OpOr
	l, err := ev.eval(e.Args[0])
	if err != nil {
		return vec{}, err
	}
	// FALSE AND x = FALSE; TRUE OR x = TRUE.
	if l.scalar() && !l.isNull() && l.lit.B == isOr {
		return vec{lit: plan.Value{B: isOr}, t: plan.BoolType}, nil
	}
	r, err := ev.eval(e.Args[1])
	if err != nil {
		if l.scalar() {
			return vec{}, err
		}
		// Evaluate the right side only where the left does not decide.
		sel := undecidedRows(l.arr, isOr)
		arr, err2 := ev.evalOnRows(e.Args[1], sel)
		if err2 != nil {
			l.release()
			return vec{}, err2
		}
		r = vec{arr: arr, t: plan.BoolType}
	}
	if l.scalar() && r.scalar() {
		return vec{lit: logic3(isOr, l, r), t: plan.BoolType}, nil
	}
	la, err := ev.materialize(l)
	if err != nil {
		r.release()
		return vec{}, err
	}
	defer la.Release()
	ra, err := ev.materialize(r)
	if err != nil {
		return vec{}, err
	}
	defer ra.Release()
	out, err := logicKernel(ev.mem, isOr, la, ra, ev.n)
	if err != nil {
		return vec{}, fmt.Errorf("%s: %w", e.Op, err)
	}
	return vec{arr: out, t: plan.BoolType}, nil
}

// undecidedRows lists rows where a (the left side of AND/OR) does not decide
// the result: not FALSE for AND, not TRUE for OR.
func undecidedRows(a arrow.Array, isOr bool) []int32 {
	var sel []int32
	if a.DataType().ID() != arrow.BOOL {
		for i := 0; i < a.Len(); i++ {
			sel = append(sel, int32(i))
		}
		return sel
	}
	bs, off := bitsOf(a)
	vb, voff := validityOf(a)
	for i := 0; i < a.Len(); i++ {
		if !isValid(vb, voff, i) || bit(bs, off+i) != isOr {
			sel = append(sel, int32(i))
		}
	}
	return sel
}

func logic3(isOr bool, l, r vec) plan.Value {
	ln, rn := l.isNull(), r.isNull()
	if isOr {
		if (!ln && l.lit.B) || (!rn && r.lit.B) {
			return plan.Value{B: true}
		}
		if ln || rn {
			return plan.Value{Null: true}
		}
		return plan.Value{}
	}
	if (!ln && !l.lit.B) || (!rn && !r.lit.B) {
		return plan.Value{}
	}
	if ln || rn {
		return plan.Value{Null: true}
	}
	return plan.Value{B: true}
}

// logicKernel computes a AND b / a OR b with SQL three-valued logic.
func logicKernel(mem memory.Allocator, isOr bool, a, b arrow.Array, n int) (arrow.Array, error) {
	if a.DataType().ID() == arrow.NULL && b.DataType().ID() == arrow.NULL {
		return makeNulls(mem, arrow.FixedWidthTypes.Boolean, n), nil
	}
	bitsAndValid := func(x arrow.Array) (vals, valid []byte, err error) {
		switch x.DataType().ID() {
		case arrow.NULL:
			nb := int(bitutil.BytesForBits(int64(n)))
			return make([]byte, nb), make([]byte, nb), nil
		case arrow.BOOL:
			bs, off := bitsOf(x)
			vals = alignedBits(bs, off, n)
			if vb, voff := validityOf(x); vb != nil {
				valid = alignedBits(vb, voff, n)
			}
			return vals, valid, nil
		}
		return nil, nil, fmt.Errorf("operand of type %s, want bool", x.DataType())
	}
	av, an, err := bitsAndValid(a)
	if err != nil {
		return nil, err
	}
	bv, bn, err := bitsAndValid(b)
	if err != nil {
		return nil, err
	}
	vbuf, out := newBitmap(mem, n)
	if isOr {
		for i := range out {
			out[i] = av[i] | bv[i]
		}
	} else {
		for i := range out {
			out[i] = av[i] & bv[i]
		}
	}
	if an == nil && bn == nil {
		return makeArray(arrow.FixedWidthTypes.Boolean, n, nil, vbuf), nil
	}
	nbuf, valid := newBitmap(mem, n)
	for i := range valid {
		x, y := byte(0xff), byte(0xff)
		if an != nil {
			x = an[i]
		}
		if bn != nil {
			y = bn[i]
		}
		if isOr {
			valid[i] = (x & y) | (x & av[i]) | (y & bv[i])
		} else {
			valid[i] = (x & y) | (x &^ av[i]) | (y &^ bv[i])
		}
	}
	return makeArray(arrow.FixedWidthTypes.Boolean, n, nbuf, vbuf), nil
}

func (ev *evaluator) not(v vec) (arrow.Array, error) {
	a := v.arr
	if a.DataType().ID() != arrow.BOOL {
		return nil, fmt.Errorf("operand of type %s, want bool", a.DataType())
	}
	bs, off := bitsOf(a)
	src := alignedBits(bs, off, ev.n)
	buf, out := newBitmap(ev.mem, ev.n)
	for i := range out {
		out[i] = ^src[i]
	}
	return makeArray(arrow.FixedWidthTypes.Boolean, ev.n, copyValidity(ev.mem, a), buf), nil
}

func (ev *evaluator) isNull(v vec, not bool) (arrow.Array, error) {
	if v.scalar() {
		return broadcast(ev.mem, plan.BoolType, plan.Value{B: v.isNull() != not}, ev.n)
	}
	a := v.arr
	if a.DataType().ID() == arrow.NULL {
		return broadcast(ev.mem, plan.BoolType, plan.Value{B: !not}, ev.n)
	}
	vb, voff := validityOf(a)
	if vb == nil {
		return broadcast(ev.mem, plan.BoolType, plan.Value{B: not}, ev.n)
	}
	src := alignedBits(vb, voff, ev.n)
	buf, out := newBitmap(ev.mem, ev.n)
	if not {
		copy(out, src)
	} else {
		for i := range out {
			out[i] = ^src[i]
		}
	}
	return makeArray(arrow.FixedWidthTypes.Boolean, ev.n, nil, buf), nil
}

// ---- CASE -------------------------------------------------------------------

func (ev *evaluator) evalCase(e *plan.Expr) (vec, error) {
	args := e.Args
	if len(args) == 0 || len(args)%2 != 1 {
		return vec{}, fmt.Errorf("case: want WHEN/THEN pairs and an ELSE, have %d arguments", len(args))
	}
	nw := (len(args) - 1) / 2
	thenOf := func(b int) *plan.Expr {
		if b == nw {
			return args[len(args)-1]
		}
		return args[2*b+1]
	}
	n := ev.n
	branch := make([]int32, n)
	undecided := make([]int32, n)
	for i := range branch {
		branch[i] = int32(nw)
		undecided[i] = int32(i)
	}
	allScalarWhens := true
	for k := 0; k < nw && len(undecided) > 0; k++ {
		w, err := ev.eval(args[2*k])
		if err != nil {
			if len(undecided) == n {
				return vec{}, err
			}
			arr, err2 := ev.evalOnRows(args[2*k], undecided)
			if err2 != nil {
				return vec{}, err2
			}
			w = vec{arr: arr, t: plan.BoolType}
		}
		if w.scalar() {
			if !w.isNull() && w.lit.B {
				for _, r := range undecided {
					branch[r] = int32(k)
				}
				undecided = undecided[:0]
				if allScalarWhens {
					// Every row takes branch k.
					return ev.caseResult(e, thenOf(k))
				}
			}
			continue
		}
		allScalarWhens = false
		if w.arr.DataType().ID() == arrow.NULL {
			w.release()
			continue
		}
		if w.arr.DataType().ID() != arrow.BOOL {
			w.release()
			return vec{}, fmt.Errorf("case: WHEN of type %s, want bool", w.arr.DataType())
		}
		bs, off := bitsOf(w.arr)
		vb, voff := validityOf(w.arr)
		keep := undecided[:0]
		for _, r := range undecided {
			if isValid(vb, voff, int(r)) && bit(bs, off+int(r)) {
				branch[r] = int32(k)
			} else {
				keep = append(keep, r)
			}
		}
		undecided = keep
		w.release()
	}
	if allScalarWhens {
		return ev.caseResult(e, thenOf(nw))
	}
	counts := make([]int, nw+1)
	for _, b := range branch {
		counts[b]++
	}
	for b, c := range counts {
		if c == n {
			return ev.caseResult(e, thenOf(b))
		}
	}
	srcs := make([]vec, nw+1)
	defer func() {
		for _, s := range srcs {
			s.release()
		}
	}()
	for b := range srcs {
		srcs[b] = vec{lit: plan.Value{Null: true}, t: e.Type}
		if counts[b] == 0 {
			continue
		}
		v, err := ev.eval(thenOf(b))
		if err != nil {
			var sel []int32
			for i, bb := range branch {
				if int(bb) == b {
					sel = append(sel, int32(i))
				}
			}
			arr, err2 := ev.evalOnRows(thenOf(b), sel)
			if err2 != nil {
				return vec{}, err2
			}
			v = vec{arr: arr, t: typeOfArrow(arr.DataType())}
		}
		if v, err = ev.castVec(v, e.Type); err != nil {
			return vec{}, fmt.Errorf("case: %w", err)
		}
		srcs[b] = v
	}
	out, err := chooseKernel(ev.mem, e.Type, srcs, branch)
	if err != nil {
		return vec{}, fmt.Errorf("case: %w", err)
	}
	return vec{arr: out, t: typeOfArrow(out.DataType())}, nil
}

// caseResult evaluates the one branch every row takes.
func (ev *evaluator) caseResult(e *plan.Expr, then *plan.Expr) (vec, error) {
	v, err := ev.eval(then)
	if err != nil {
		return vec{}, err
	}
	if e.Type.ID == plan.Null {
		return v, nil
	}
	return ev.castVec(v, e.Type)
}

type fixedSrc[T int64 | float64 | int32 | decimal128.Num] struct {
	vals    []T
	c       T
	isConst bool
	null    bool
	vb      []byte
	voff    int
}

// chooseKernel builds row i from srcs[branch[i]] (arrays of n rows or
// literals, all of type t).
func chooseKernel(mem memory.Allocator, t plan.DataType, srcs []vec, branch []int32) (arrow.Array, error) {
	n := len(branch)
	at := t.Arrow()
	switch kindOfType(t) {
	case kNull:
		return array.NewNull(n), nil
	case kInt64:
		return chooseFixed[int64](mem, at, srcs, branch, func(v plan.Value) int64 { return v.I }), nil
	case kFloat64:
		return chooseFixed[float64](mem, at, srcs, branch, func(v plan.Value) float64 { return v.F }), nil
	case kDate:
		return chooseFixed[int32](mem, at, srcs, branch, func(v plan.Value) int32 { return int32(v.I) }), nil
	case kDec128:
		return chooseFixed[decimal128.Num](mem, at, srcs, branch, func(v plan.Value) decimal128.Num { return v.Dec128() }), nil
	case kBool:
		type bsrc struct {
			bs              []byte
			off             int
			c, isConst, nul bool
			vb              []byte
			voff            int
		}
		ss := make([]bsrc, len(srcs))
		for i, s := range srcs {
			if s.scalar() || s.arr.DataType().ID() == arrow.NULL {
				ss[i] = bsrc{c: s.lit.B, isConst: true, nul: s.isNull()}
				continue
			}
			ss[i].bs, ss[i].off = bitsOf(s.arr)
			ss[i].vb, ss[i].voff = validityOf(s.arr)
		}
		vbuf, valid := newOnes(mem, n)
		buf, out := newBitmap(mem, n)
		for i, b := range branch {
			s := &ss[b]
			if s.isConst {
				if s.nul {
					clearBit(valid, i)
				} else if s.c {
					setBit(out, i)
				}
				continue
			}
			if !isValid(s.vb, s.voff, i) {
				clearBit(valid, i)
			} else if bit(s.bs, s.off+i) {
				setBit(out, i)
			}
		}
		return makeArray(at, n, vbuf, buf), nil
	case kString:
		type ssrc struct {
			offs    []int32
			data    []byte
			c       string
			isConst bool
			nul     bool
			vb      []byte
			voff    int
		}
		ss := make([]ssrc, len(srcs))
		for i, s := range srcs {
			if s.scalar() || s.arr.DataType().ID() == arrow.NULL {
				ss[i] = ssrc{c: s.lit.S, isConst: true, nul: s.isNull()}
				continue
			}
			ss[i].offs, ss[i].data = strOffsets(s.arr)
			ss[i].vb, ss[i].voff = validityOf(s.arr)
		}
		total := 0
		for i, b := range branch {
			s := &ss[b]
			if s.isConst {
				total += len(s.c)
			} else {
				total += int(s.offs[i+1] - s.offs[i])
			}
		}
		vbuf, valid := newOnes(mem, n)
		sb := newStrBuilder(mem, n, total)
		for i, b := range branch {
			s := &ss[b]
			switch {
			case s.isConst && s.nul:
				clearBit(valid, i)
				sb.appendEmpty()
			case s.isConst:
				sb.appendString(s.c)
			case !isValid(s.vb, s.voff, i):
				clearBit(valid, i)
				sb.appendEmpty()
			default:
				sb.append(s.data[s.offs[i]:s.offs[i+1]])
			}
		}
		return sb.finish(vbuf)
	}
	return nil, fmt.Errorf("unsupported result type %s", t)
}

func chooseFixed[T int64 | float64 | int32 | decimal128.Num](mem memory.Allocator, at arrow.DataType, srcs []vec, branch []int32, conv func(plan.Value) T) arrow.Array {
	n := len(branch)
	ss := make([]fixedSrc[T], len(srcs))
	for i, s := range srcs {
		if s.scalar() || s.arr.DataType().ID() == arrow.NULL {
			ss[i] = fixedSrc[T]{isConst: true, null: s.isNull()}
			if !s.isNull() {
				ss[i].c = conv(s.lit)
			}
			continue
		}
		ss[i].vals = values[T](s.arr)
		ss[i].vb, ss[i].voff = validityOf(s.arr)
	}
	vbuf, valid := newOnes(mem, n)
	buf, out := newFixed[T](mem, n)
	for i, b := range branch {
		s := &ss[b]
		if s.isConst {
			out[i] = s.c
			if s.null {
				clearBit(valid, i)
			}
			continue
		}
		out[i] = s.vals[i]
		if s.vb != nil && !bit(s.vb, s.voff+i) {
			clearBit(valid, i)
		}
	}
	return makeArray(at, n, vbuf, buf)
}
