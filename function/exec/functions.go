package exec

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// The scalar function library. Every function is one ScalarFunction entry
// (in the style of DataFusion's ScalarUDFImpl and DuckDB's function sets):
// its SQL name and aliases, its overloads (parameter types and a return
// type rule), how it treats NULLs, and its kernel over Arrow arrays. The
// planner resolves a call through Lookup and ResolveCall and emits
// plan.OpFunc with the canonical name; the function runtime finds the same
// entry by that name. Adding a function is one entry and a test.

// NullHandling says how a function treats NULL arguments.
type NullHandling int

const (
	// NullPropagates: any NULL argument gives NULL (DuckDB's default);
	// the kernel is called only for rows whose arguments are all valid.
	NullPropagates NullHandling = iota
	// NullCustom: the kernel sees NULLs and decides (concat skips them,
	// greatest ignores them).
	NullCustom
)

// Parameter types of a signature beyond the engine types.
const (
	// AnyType matches any argument type.
	AnyType plan.TypeID = "any"
	// NumericType matches int64, float64 and decimal as they are.
	NumericType plan.TypeID = "numeric"
	// ToString matches any type; the argument is cast to string.
	ToString plan.TypeID = "any->string"
	// SameType matches any type; all SameType arguments are cast to their
	// common supertype (greatest, least).
	SameType plan.TypeID = "T"
)

// Signature is one overload: parameter types and the return type.
type Signature struct {
	Params []plan.TypeID
	// Variadic: the last parameter repeats, zero or more times.
	Variadic bool
	// Returns is the return type when Return is nil.
	Returns plan.DataType
	// Return computes the return type from the (cast) argument types.
	Return func(args []plan.DataType) plan.DataType
	// ReturnDoc describes Return for the docs (default: the type of the
	// first argument).
	ReturnDoc string
}

// Kernel evaluates a function over one batch: n rows, one Datum per
// argument. It returns an array of n rows of type t.
type Kernel func(c *Call) (arrow.Array, error)

// ScalarFunction is one entry of the library.
type ScalarFunction struct {
	Name       string
	Aliases    []string
	Doc        string
	Signatures []Signature
	Nulls      NullHandling
	// NullOnValues: the function may be NULL although no argument is
	// (mod and // by zero). The planner reads Nulls and this flag for its
	// null analyses (outer-join simplification, NOT IN), so both must be
	// true to the kernel: TestNullHandlingHonest checks them.
	NullOnValues bool
	// TakesWide: the kernel reads wide decimal arguments (decimal(19..38,
	// s), arrow Decimal128) itself, so the planner does not narrow them to
	// the 64-bit layout first (printf, format).
	TakesWide bool
	// Nested: the function takes or gives LIST, STRUCT or MAP values (the
	// planner lets only these compute on nested values).
	Nested bool
	Kernel Kernel
}

// Strict reports whether f is NULL whenever any argument is NULL.
func (f *ScalarFunction) Strict() bool { return f.Nulls == NullPropagates }

// Call is the input of a kernel.
type Call struct {
	Name string
	Args []Datum
	N    int
	Type plan.DataType
	Mem  memory.Allocator
}

// Datum is an evaluated argument: an array of N rows, or a constant.
type Datum struct {
	arr arrow.Array
	lit plan.Value
	t   plan.DataType
}

// Const reports whether d is the same value on every row.
func (d Datum) Const() bool { return d.arr == nil }

// Type is d's engine type.
func (d Datum) Type() plan.DataType { return d.t }

// Null reports whether row i is NULL.
func (d Datum) Null(i int) bool {
	if d.arr == nil {
		return d.lit.Null || d.t.ID == plan.Null
	}
	return d.arr.IsNull(i)
}

// Str returns row i of a string datum.
func (d Datum) Str(i int) string {
	if d.arr == nil {
		return d.lit.S
	}
	return d.arr.(*array.String).Value(i)
}

// Int returns row i of an int64, decimal (unscaled), date (days) or
// timestamp (microseconds) datum.
func (d Datum) Int(i int) int64 {
	if d.arr == nil {
		return d.lit.I
	}
	switch a := d.arr.(type) {
	case *array.Int64:
		return a.Value(i)
	case *array.Decimal64:
		return int64(a.Value(i))
	case *array.Date32:
		return int64(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	}
	return 0
}

// Float returns row i as a float64 (ints and decimals converted).
func (d Datum) Float(i int) float64 {
	if d.t.ID == plan.Float64 {
		if d.arr == nil {
			return d.lit.F
		}
		return d.arr.(*array.Float64).Value(i)
	}
	v := d.Int(i)
	if d.t.ID == plan.Decimal {
		return float64(v) / pow10f(d.t.Scale)
	}
	return float64(v)
}

// Bool returns row i of a bool datum.
func (d Datum) Bool(i int) bool {
	if d.arr == nil {
		return d.lit.B
	}
	return d.arr.(*array.Boolean).Value(i)
}

func pow10f(s int) float64 {
	f := 1.0
	for ; s > 0; s-- {
		f *= 10
	}
	return f
}

// out builds a kernel's result array row by row.
type out struct {
	t   plan.DataType
	bld array.Builder
}

func newOut(mem memory.Allocator, t plan.DataType, n int) *out {
	b := array.NewBuilder(mem, t.Arrow())
	b.Reserve(n)
	return &out{t: t, bld: b}
}

func (o *out) null() { o.bld.AppendNull() }

func (o *out) str(s string) { o.bld.(*array.StringBuilder).Append(s) }

func (o *out) i64(v int64) {
	switch b := o.bld.(type) {
	case *array.Int64Builder:
		b.Append(v)
	case *array.Decimal64Builder:
		b.Append(decimal.Decimal64(v))
	case *array.Date32Builder:
		b.Append(arrow.Date32(v))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v))
	}
}

func (o *out) f64(v float64) { o.bld.(*array.Float64Builder).Append(v) }

func (o *out) boolean(v bool) { o.bld.(*array.BooleanBuilder).Append(v) }

func (o *out) finish() arrow.Array {
	a := o.bld.NewArray()
	o.bld.Release()
	return a
}

// eachRow runs f on every row whose arguments are all valid and appends NULL
// for the others: the loop of a NullPropagates kernel. f appends exactly
// one value (or NULL) to o.
func eachRow(c *Call, f func(i int, o *out) error) (arrow.Array, error) {
	o := newOut(c.Mem, c.Type, c.N)
	for i := 0; i < c.N; i++ {
		null := false
		for _, a := range c.Args {
			if a.Null(i) {
				null = true
				break
			}
		}
		if null {
			o.null()
			continue
		}
		if err := f(i, o); err != nil {
			o.bld.Release()
			return nil, err
		}
	}
	return o.finish(), nil
}

// ---- the registry -----------------------------------------------------------

var (
	libraryOnce sync.Once
	libraryList []*ScalarFunction
	libraryMap  map[string]*ScalarFunction
)

// library gathers the entries of every family (funcs_*.go).
func library() ([]*ScalarFunction, map[string]*ScalarFunction) {
	libraryOnce.Do(func() {
		var all []*ScalarFunction
		all = append(all, stringFunctions()...)
		all = append(all, mathFunctions()...)
		all = append(all, dateFunctions()...)
		all = append(all, moreFunctions()...)
		all = append(all, epochFunctions()...)
		all = append(all, jsonFunctions()...)
		all = append(all, formatFunctions()...)
		all = append(all, typeFunctions()...) // funcs_typeof.go
		all = append(all, nestedFunctions()...)
		all = append(all, mapFunctions()...)
		all = append(all, listFunctions()...)
		m := map[string]*ScalarFunction{}
		for _, f := range all {
			for _, n := range append([]string{f.Name}, f.Aliases...) {
				if _, dup := m[n]; dup {
					panic("exec: function " + n + " registered twice")
				}
				m[n] = f
			}
		}
		sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
		libraryList, libraryMap = all, m
	})
	return libraryList, libraryMap
}

// Functions returns every scalar function of the library, by name.
func Functions() []*ScalarFunction {
	l, _ := library()
	return l
}

// LookupFunction finds a scalar function by name or alias (lower case).
func LookupFunction(name string) (*ScalarFunction, bool) {
	_, m := library()
	f, ok := m[name]
	return f, ok
}

// SignatureString renders a signature as name(type, ...) -> type.
func (f *ScalarFunction) SignatureString(s Signature) string {
	ps := make([]string, len(s.Params))
	for i, p := range s.Params {
		ps[i] = string(p)
		if s.Variadic && i == len(s.Params)-1 {
			ps[i] += "..."
		}
	}
	ret := s.ReturnDoc
	switch {
	case s.Return == nil:
		ret = s.Returns.String()
	case ret == "":
		ret = "type of the first argument"
	}
	return fmt.Sprintf("%s(%s) -> %s", f.Name, strings.Join(ps, ", "), ret)
}

// ReturnType is the type a call with (already cast) argument types yields.
func (s Signature) ReturnType(args []plan.DataType) plan.DataType {
	if s.Return != nil {
		return s.Return(args)
	}
	return s.Returns
}

// ParamFor returns the parameter type of argument i (following a
// variadic tail), and whether the signature takes i+1 arguments at all.
func (s Signature) ParamFor(i int) (plan.TypeID, bool) {
	if i < len(s.Params) {
		return s.Params[i], true
	}
	if s.Variadic && len(s.Params) > 0 {
		return s.Params[len(s.Params)-1], true
	}
	return "", false
}

// Arity reports whether the signature accepts n arguments.
func (s Signature) Arity(n int) bool {
	if s.Variadic {
		return n >= len(s.Params)-1
	}
	return n == len(s.Params)
}

// evalFunc runs the kernel of a plan.OpFunc expression.
func (ev *evaluator) evalFunc(e *plan.Expr, args []vec) (arrow.Array, error) {
	f, ok := LookupFunction(e.Func)
	if !ok {
		return nil, fmt.Errorf("unknown function %s()", e.Func)
	}
	if f.Nulls == NullPropagates {
		for _, a := range args {
			if a.isNull() {
				return makeNulls(ev.mem, e.Type.Arrow(), ev.n), nil
			}
		}
	}
	c := &Call{Name: f.Name, N: ev.n, Type: e.Type, Mem: ev.mem, Args: make([]Datum, len(args))}
	for i, a := range args {
		c.Args[i] = Datum{arr: a.arr, lit: a.lit, t: a.t}
		if a.arr == nil && a.isNull() {
			c.Args[i].lit.Null = true
		}
	}
	out, err := f.Kernel(c)
	if err != nil {
		// A kernel fails only on its arguments' values (a date out of
		// range, an invalid regular expression): the query's data, which
		// another attempt would meet again. A user error, never retried.
		return nil, plan.WithCode(plan.CodeRuntime, err)
	}
	return out, nil
}
