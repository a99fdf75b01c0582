package exec

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// The aggregate library. Every aggregate is one AggregateFunction entry
// beside the scalar library (functions.go), in the shape of DuckDB's
// AggregateFunction and DataFusion's GroupsAccumulator: its names, its
// signatures (argument types, the cast applied first, the result type),
// its partial state layout, its flags, and a constructor of its
// Accumulator, the per-group state that the hash aggregate folds batches
// into. The planner binds calls and lays out partial states from the
// entry; the hash aggregate loops over accumulators without knowing which
// aggregate each one is. Adding an aggregate is one file (its
// accumulator and its entry) and one line in aggregateFamilies.

// Accumulator holds the per-group state of one aggregate call. Groups are
// dense ids [0, n); every method works on a whole batch (gids[i] is row i's
// group, gids nil: every row is group 0), so the per-row loops stay inside
// the type-specialized accumulator.
type Accumulator interface {
	// Grow makes room for groups [0, n) (n only grows).
	Grow(n int)
	// Update folds one batch of argument values (partial and single
	// mode). arg is nil for an aggregate of no argument (count(*)); n is
	// the batch's row count. An argument of the NULL type is never passed.
	Update(arg arrow.Array, gids []uint32, n int) error
	// Merge folds one batch of partial states, the columns States wrote
	// (final mode).
	Merge(states []arrow.Array, gids []uint32) error
	// States builds the partial state columns of groups [lo, hi), of the
	// types ts (the plan's layout).
	States(mem memory.Allocator, ts []arrow.DataType, lo, hi int) ([]arrow.Array, error)
	// Result builds the final values of groups [lo, hi) as type t.
	Result(mem memory.Allocator, t arrow.DataType, lo, hi int) (arrow.Array, error)
	// Bytes is the memory the states hold (counted against the budget).
	Bytes() int64
}

// MultiAccumulator is the accumulator of an aggregate of several
// arguments (arg_min(value, key)): the hash aggregate calls UpdateArgs,
// not Update, with every argument evaluated (args[0] is the call's Arg,
// then its More), arguments of the NULL type included. Merge, States and
// Result are as for one argument: the partial state is the aggregate's
// own layout (StateTypes).
type MultiAccumulator interface {
	Accumulator
	UpdateArgs(args []arrow.Array, gids []uint32, n int) error
}

// AggSpec is what an accumulator is built from.
type AggSpec struct {
	Call plan.AggCall
	Mode plan.AggMode
	// States is, in partial mode, the state column types of the plan's
	// output schema (nil in the other modes).
	States []plan.DataType
	Mem    memory.Allocator
}

// AggSignature is one overload of an aggregate.
type AggSignature struct {
	// Arg is the argument's type: a type ID, AnyType or NumericType; ""
	// for no argument (count(*)).
	Arg plan.TypeID
	// More are the types of the arguments after the first of an
	// aggregate of several (arg_min(value, key)); its accumulator is a
	// MultiAccumulator and its calls carry them in AggCall.More.
	More []plan.TypeID
	// Cast, when set, is the type the argument is cast to first.
	Cast plan.DataType
	// Returns is the result type when Return is nil.
	Returns plan.DataType
	// Return computes the result type from the (cast) argument type.
	Return func(arg plan.DataType) plan.DataType
	// ReturnDoc describes Return for the docs (default: the argument's
	// type).
	ReturnDoc string
}

// Matches reports whether an argument of type t fits the signature.
func (s AggSignature) Matches(t plan.DataType) bool {
	return matchesAggArg(s.Arg, t)
}

// MatchesAll reports whether arguments of types ts fit the signature,
// every one of them.
func (s AggSignature) MatchesAll(ts []plan.DataType) bool {
	if len(ts) != 1+len(s.More) || !s.Matches(ts[0]) {
		return false
	}
	for i, m := range s.More {
		if !matchesAggArg(m, ts[i+1]) {
			return false
		}
	}
	return true
}

func matchesAggArg(arg plan.TypeID, t plan.DataType) bool {
	switch arg {
	case AnyType:
		return true
	case NumericType:
		return t.IsNumeric()
	case "":
		return false
	}
	return t.ID == arg
}

// ReturnType is the result type over a (cast) argument of type t.
func (s AggSignature) ReturnType(t plan.DataType) plan.DataType {
	if s.Return != nil {
		return s.Return(t)
	}
	return s.Returns
}

// AggregateFunction is one entry of the aggregate library.
type AggregateFunction struct {
	// Name is the SQL name and, unless PlanAs is set, the plan's
	// AggCall.Func.
	Name    plan.AggFunc
	Aliases []string
	Doc     string
	// PlanAs: calls are planned as this aggregate (bool_and is min of a
	// bool); the entry only adds names, signatures and docs.
	PlanAs plan.AggFunc
	// Internal: planned by the planner's rewrites, never bound by name
	// (count_star, count_distinct).
	Internal   bool
	Signatures []AggSignature
	// NumStates is the number of partial state columns, and StateTypes
	// their types for a call (Arg may be nil in final mode; StateTypes is
	// asked only where it is set). Holistic aggregates have none.
	NumStates  int
	StateTypes func(c plan.AggCall) []plan.DataType
	// StateNames are the suffixes of the state columns' names (none: the
	// call's name).
	StateNames []string
	// Holistic: the aggregate needs every value of a group in one place,
	// so it has no partial form; the planner shuffles the rows on the
	// group keys and aggregates in single mode (as count(DISTINCT)).
	Holistic bool
	// DuplicateInsensitive: duplicates of a value do not change the
	// result (min, max), so DISTINCT is dropped and the aggregate can run
	// over the distinct values of another aggregate's DISTINCT argument.
	DuplicateInsensitive bool
	// DistinctDropped: DISTINCT is accepted and ignored (as it always was
	// for these; a known difference from DuckDB).
	DistinctDropped bool
	// ZeroOnEmpty: the result over no rows is 0, not NULL (the counts);
	// decorrelation substitutes 0 for it where a subquery finds no rows.
	ZeroOnEmpty bool
	// Selects: the result is one of the input values (min, max), so a
	// float result does not depend on the order the rows arrive in.
	Selects bool
	// OrderSensitive: the result depends on the order of the rows
	// (string_agg without ORDER BY).
	OrderSensitive bool
	// LargeState: a one-row partial state is large (a whole sketch), so
	// adaptive partial aggregation never passes rows on as such states.
	LargeState bool
	// Frame, when set, evaluates the aggregate over each row's window
	// frame (the window operator, window.go); it is then a window function.
	Frame func(in *frameInput) (arrow.Array, error)
	// FromStats, when set, gives the partial state columns of a call over
	// one row group from its column's footer statistics (no argument:
	// st.Rows only), each of one row; ok is false when they do not tell
	// it (stats_fold.go).
	FromStats func(mem memory.Allocator, st *ColumnStats) (states []arrow.Array, ok bool)
	// New builds the accumulator of a call (nil for PlanAs entries).
	New func(s AggSpec) (Accumulator, error)
}

// Windowed reports whether f (as planned) is a window function too.
func (f *AggregateFunction) Windowed() bool {
	p, ok := PlannedAggregate(f.Planned())
	return ok && p.Frame != nil
}

// Planned is the aggregate a call of f is planned as.
func (f *AggregateFunction) Planned() plan.AggFunc {
	if f.PlanAs != "" {
		return f.PlanAs
	}
	return f.Name
}

// Signature finds the overload for an argument of type t.
func (f *AggregateFunction) Signature(t plan.DataType) (AggSignature, bool) {
	return f.SignatureOf([]plan.DataType{t})
}

// SignatureOf finds the overload for arguments of types ts.
func (f *AggregateFunction) SignatureOf(ts []plan.DataType) (AggSignature, bool) {
	for _, s := range f.Signatures {
		if s.MatchesAll(ts) {
			return s, true
		}
	}
	return AggSignature{}, false
}

// Arity is the number of arguments f takes (1 for count(*) too).
func (f *AggregateFunction) Arity() int {
	if len(f.Signatures) == 0 {
		return 1
	}
	return 1 + len(f.Signatures[0].More)
}

// SignatureString renders an overload as name(type) -> type.
func (f *AggregateFunction) SignatureString(s AggSignature) string {
	arg := string(s.Arg)
	if s.Arg == "" {
		arg = "*"
	}
	for _, m := range s.More {
		arg += ", " + string(m)
	}
	ret := s.ReturnDoc
	switch {
	case s.Return == nil:
		ret = s.Returns.String()
	case ret == "":
		ret = "type of the argument"
	}
	return fmt.Sprintf("%s(%s) -> %s", f.Name, arg, ret)
}

// aggregateFamilies gathers the entries of every family (agg_*.go).
var aggregateFamilies = []func() []*AggregateFunction{
	countAggregates,     // agg_count.go
	sumAggregates,       // agg_sum.go
	minMaxAggregates,    // agg_minmax.go
	varianceAggregates,  // agg_variance.go
	hllAggregates,       // agg_hll.go
	holisticAggregates,  // agg_holistic.go
	bitAggregates,       // agg_bits.go
	argMinMaxAggregates, // agg_argminmax.go
}

var (
	aggLibraryOnce sync.Once
	aggLibraryList []*AggregateFunction
	aggLibraryMap  map[string]*AggregateFunction // by SQL name and alias
	aggPlannedMap  map[plan.AggFunc]*AggregateFunction
)

func aggLibrary() ([]*AggregateFunction, map[string]*AggregateFunction, map[plan.AggFunc]*AggregateFunction) {
	aggLibraryOnce.Do(func() {
		var all []*AggregateFunction
		for _, fam := range aggregateFamilies {
			all = append(all, fam()...)
		}
		byName := map[string]*AggregateFunction{}
		planned := map[plan.AggFunc]*AggregateFunction{}
		for _, f := range all {
			if f.PlanAs == "" {
				if _, dup := planned[f.Name]; dup {
					panic("exec: aggregate " + string(f.Name) + " registered twice")
				}
				planned[f.Name] = f
			}
			if f.Internal {
				continue
			}
			for _, n := range append([]string{string(f.Name)}, f.Aliases...) {
				if _, dup := byName[n]; dup {
					panic("exec: aggregate " + n + " registered twice")
				}
				byName[n] = f
			}
		}
		sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
		aggLibraryList, aggLibraryMap, aggPlannedMap = all, byName, planned
	})
	return aggLibraryList, aggLibraryMap, aggPlannedMap
}

// Aggregates returns every aggregate of the library, by name.
func Aggregates() []*AggregateFunction {
	l, _, _ := aggLibrary()
	return l
}

// LookupAggregate finds an aggregate by SQL name or alias (lower case);
// internal aggregates are not found.
func LookupAggregate(name string) (*AggregateFunction, bool) {
	_, m, _ := aggLibrary()
	f, ok := m[name]
	return f, ok
}

// PlannedAggregate finds the entry of a plan's aggregate function.
func PlannedAggregate(fn plan.AggFunc) (*AggregateFunction, bool) {
	_, _, m := aggLibrary()
	f, ok := m[fn]
	return f, ok
}

// AggStateTypes is the partial state layout of c (its Arg set), nil for
// an unknown or holistic aggregate.
func AggStateTypes(c plan.AggCall) []plan.DataType {
	f, ok := PlannedAggregate(c.Func)
	if !ok || f.StateTypes == nil {
		return nil
	}
	return f.StateTypes(c)
}

// StateName names the j-th partial state column of the call c.
func StateName(c plan.AggCall, j int) string {
	if f, ok := PlannedAggregate(c.Func); ok && j < len(f.StateNames) {
		return c.Name + f.StateNames[j]
	}
	return c.Name
}

// AggNumStates is the number of partial state columns of c, known without
// its Arg (1 for an unknown aggregate, which fails where it is built).
func AggNumStates(c plan.AggCall) int {
	if f, ok := PlannedAggregate(c.Func); ok && !f.Holistic {
		return f.NumStates
	}
	return 1
}

// AggregateDocs renders the library as a Markdown table.
func AggregateDocs() string {
	var b strings.Builder
	b.WriteString("| aggregate | aliases | arguments | description |\n|---|---|---|---|\n")
	for _, f := range Aggregates() {
		if f.Internal {
			continue
		}
		sigs := make([]string, len(f.Signatures))
		for i, s := range f.Signatures {
			sigs[i] = "`" + f.SignatureString(s) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Name, strings.Join(f.Aliases, ", "), strings.Join(sigs, "<br>"), f.Doc)
	}
	return b.String()
}

// newAccumulator builds the accumulator of the aggregate call c, the i-th
// of its node, with checks every aggregate shares.
func newAccumulator(c plan.AggCall, mode plan.AggMode, out plan.Schema, col int, mem memory.Allocator) (Accumulator, *AggregateFunction, error) {
	f, ok := PlannedAggregate(c.Func)
	if !ok || f.New == nil {
		return nil, nil, fmt.Errorf("unsupported aggregate function %q", c.Func)
	}
	takesArg := len(f.Signatures) == 0 || f.Signatures[0].Arg != ""
	switch {
	case f.Holistic && (mode != plan.AggSingle || c.Arg == nil):
		return nil, nil, fmt.Errorf("%s is only supported in single mode with an argument", c.Func)
	case takesArg && mode != plan.AggFinal && c.Arg == nil:
		return nil, nil, fmt.Errorf("missing argument")
	}
	s := AggSpec{Call: c, Mode: mode, Mem: mem}
	if mode == plan.AggPartial {
		for j := 0; j < f.NumStates; j++ {
			s.States = append(s.States, out[col+j].Type)
		}
	}
	acc, err := f.New(s)
	return acc, f, err
}

// ---- value state: typed per-group slots -------------------------------------

// valueState is one value per group of one engine layout (sum, min, max,
// avg's sum), with has[g] false until a non-NULL value was seen.
type valueState struct {
	k     kind
	dec   bool
	scale int

	has []bool
	i64 []int64
	f64 []float64
	i32 []int32
	w   []decimal128.Num // wide decimal sums (any decimal input) and min/max
	bl  []bool
	str []string

	strBytes int64
}

func (v *valueState) setType(t plan.DataType) {
	v.k, v.dec, v.scale = kindOfType(t), t.ID == plan.Decimal, t.Scale
}

func (v *valueState) bytes() int64 {
	return int64(cap(v.has)+cap(v.i64)*8+cap(v.f64)*8+cap(v.i32)*4+cap(v.w)*16+cap(v.bl)+cap(v.str)*16) + v.strBytes
}

func (v *valueState) grow(n int) {
	v.has = growTo(v.has, n)
	switch v.k {
	case kInt64:
		v.i64 = growTo(v.i64, n)
	case kFloat64:
		v.f64 = growTo(v.f64, n)
	case kDate:
		v.i32 = growTo(v.i32, n)
	case kDec128:
		v.w = growTo(v.w, n)
	case kBool:
		v.bl = growTo(v.bl, n)
	case kString:
		v.str = growTo(v.str, n)
	}
}

func growTo[T any](s []T, n int) []T {
	if n <= len(s) {
		return s
	}
	if n <= cap(s) {
		return s[:n]
	}
	c := max(2*cap(s), n, 16)
	ns := make([]T, n, c)
	copy(ns, s)
	return ns
}

// checkKind checks that arg fits the state's layout; wideFromNarrow lets
// a wide decimal state take narrow decimals (sums).
func (v *valueState) checkKind(arg arrow.Array, wideFromNarrow bool) error {
	if k := layoutOf(arg); k != v.k && !(v.k == kDec128 && k == kInt64 && wideFromNarrow) {
		return fmt.Errorf("input of type %s, state is %s", arg.DataType(), v.k)
	}
	if v.dec {
		if dt, ok := arg.DataType().(*arrow.Decimal64Type); ok && int(dt.Scale) != v.scale {
			return fmt.Errorf("input of type %s, state scale is %d", arg.DataType(), v.scale)
		}
		if dt, ok := arg.DataType().(*arrow.Decimal128Type); ok && int(dt.Scale) != v.scale {
			return fmt.Errorf("input of type %s, state scale is %d", arg.DataType(), v.scale)
		}
	}
	return nil
}

// array builds the values of groups [lo, hi) with NULL where no value was
// seen.
func (v *valueState) array(mem memory.Allocator, t arrow.DataType, lo, hi int) (arrow.Array, error) {
	n := hi - lo
	if v.k == kNull {
		return makeNulls(mem, t, n), nil
	}
	var valid *memory.Buffer
	allHave := true
	for _, h := range v.has[lo:hi] {
		if !h {
			allHave = false
			break
		}
	}
	if !allHave {
		var vb []byte
		valid, vb = newBitmap(mem, n)
		for i, h := range v.has[lo:hi] {
			if h {
				setBit(vb, i)
			}
		}
	}
	switch v.k {
	case kInt64:
		buf, out := newFixed[int64](mem, n)
		copy(out, v.i64[lo:hi])
		return makeArray(t, n, valid, buf), nil
	case kFloat64:
		buf, out := newFixed[float64](mem, n)
		copy(out, v.f64[lo:hi])
		return makeArray(t, n, valid, buf), nil
	case kDate:
		buf, out := newFixed[int32](mem, n)
		copy(out, v.i32[lo:hi])
		return makeArray(t, n, valid, buf), nil
	case kDec128:
		buf, out := newFixed[decimal128.Num](mem, n)
		copy(out, v.w[lo:hi])
		return makeArray(t, n, valid, buf), nil
	case kBool:
		buf, out := newBitmap(mem, n)
		for i, b := range v.bl[lo:hi] {
			if b {
				setBit(out, i)
			}
		}
		return makeArray(t, n, valid, buf), nil
	case kString:
		total := 0
		for _, s := range v.str[lo:hi] {
			total += len(s)
		}
		sb := newStrBuilder(mem, n, total)
		for _, s := range v.str[lo:hi] {
			sb.appendString(s)
		}
		return sb.finish(valid)
	}
	if valid != nil {
		valid.Release()
	}
	return nil, fmt.Errorf("unsupported state layout %s", v.k)
}

// States is the one state column of the value (sum, min, max).
func (v *valueState) States(mem memory.Allocator, ts []arrow.DataType, lo, hi int) ([]arrow.Array, error) {
	s, err := v.array(mem, ts[0], lo, hi)
	if err != nil {
		return nil, err
	}
	return []arrow.Array{s}, nil
}

func countArray(mem memory.Allocator, cnt []int64) arrow.Array {
	buf, out := newFixed[int64](mem, len(cnt))
	copy(out, cnt)
	return makeArray(arrow.PrimitiveTypes.Int64, len(cnt), nil, buf)
}

// isNullArray reports whether a is of the NULL type (a state column of an
// aggregate that saw only NULL-typed input).
func isNullArray(a arrow.Array) bool { return a.DataType().ID() == arrow.NULL }
