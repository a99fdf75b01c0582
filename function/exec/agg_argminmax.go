package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// arg_min(value, key) and arg_max(value, key), DuckDB's aggregates of two
// arguments (aliases argmin/argmax/min_by/max_by): the value at the row of
// the least (greatest) key. As in DuckDB, rows where the key or the value
// is NULL are ignored (arg_min_null and arg_max_null keep rows with a NULL
// value and return it), a group with no such row gives NULL, and NaN is
// the greatest float key.
//
// Ties: the first row seen with the best key wins and a later equal key
// does not replace it, within a batch, across batches and when partial
// states are merged. Which row is first depends on the order rows reach
// the aggregation (splits and partial states arrive in any order), so, as
// in DuckDB, the value among rows that tie on the key is not determined.
//
// The partial state is two columns: the chosen value and its key (NULL
// for a group without a row), so partial states merge by their keys.

func argMinMaxAggregates() []*AggregateFunction {
	sig := []AggSignature{{Arg: AnyType, More: []plan.TypeID{AnyType}, Return: func(t plan.DataType) plan.DataType { return t },
		ReturnDoc: "type of the value"}}
	states := func(c plan.AggCall) []plan.DataType {
		k := plan.Int64Type
		if len(c.More) > 0 && c.More[0] != nil {
			k = c.More[0].Type
		}
		return []plan.DataType{c.Type, k}
	}
	entry := func(name plan.AggFunc, aliases []string, isMax, keepNull bool, doc string) *AggregateFunction {
		return &AggregateFunction{Name: name, Aliases: aliases, Doc: doc, Signatures: sig,
			NumStates: 2, StateTypes: states, StateNames: []string{"[value]", "[key]"},
			DistinctDropped: true, Selects: true,
			New: func(s AggSpec) (Accumulator, error) { return newArgMinMaxAcc(s, isMax, keepNull) }}
	}
	return []*AggregateFunction{
		entry(plan.AggArgMin, []string{"argmin", "min_by"}, false, false,
			"the value at the row of the least key (rows where the value or the key is NULL are ignored; among tied keys, any one)"),
		entry(plan.AggArgMax, []string{"argmax", "max_by"}, true, false,
			"the value at the row of the greatest key (rows where the value or the key is NULL are ignored; among tied keys, any one)"),
		entry(plan.AggArgMinNull, nil, false, true,
			"the value, NULL included, at the row of the least key (rows where the key is NULL are ignored)"),
		entry(plan.AggArgMaxNull, nil, true, true,
			"the value, NULL included, at the row of the greatest key (rows where the key is NULL are ignored)"),
	}
}

// argMinMaxAcc holds per group the best key (key.has: the group has a
// row) and the value of its row (val.has: that value is not NULL).
type argMinMaxAcc struct {
	val, key valueState
	isMax    bool
	keepNull bool
}

var _ MultiAccumulator = (*argMinMaxAcc)(nil)

func newArgMinMaxAcc(s AggSpec, isMax, keepNull bool) (Accumulator, error) {
	vt, kt := s.Call.Type, plan.DataType{}
	if len(s.Call.More) > 0 && s.Call.More[0] != nil {
		kt = s.Call.More[0].Type // kept in final mode for the state's type
	}
	if s.Mode == plan.AggPartial {
		vt, kt = s.States[0], s.States[1]
	}
	if kt.ID == "" {
		return nil, fmt.Errorf("the key argument is missing")
	}
	if vt.IsNested() || kt.IsNested() {
		return newNestedArgAcc(vt, kt, isMax, keepNull), nil // agg_argminmax_nested.go
	}
	a := &argMinMaxAcc{isMax: isMax, keepNull: keepNull}
	a.val.setType(vt)
	a.key.setType(kt)
	for _, k := range []kind{a.val.k, a.key.k} {
		switch k {
		case kInt64, kFloat64, kDate, kDec128, kBool, kString:
		default:
			return nil, fmt.Errorf("over %s and %s is not supported", vt, kt)
		}
	}
	return a, nil
}

func (a *argMinMaxAcc) Grow(n int)   { a.val.grow(n); a.key.grow(n) }
func (a *argMinMaxAcc) Bytes() int64 { return a.val.bytes() + a.key.bytes() }

func (a *argMinMaxAcc) Update(arg arrow.Array, gids []uint32, n int) error {
	return fmt.Errorf("takes two arguments")
}

func (a *argMinMaxAcc) UpdateArgs(args []arrow.Array, gids []uint32, n int) error {
	if len(args) != 2 {
		return fmt.Errorf("takes two arguments, not %d", len(args))
	}
	return a.fold(args[0], args[1], gids)
}

func (a *argMinMaxAcc) Merge(st []arrow.Array, gids []uint32) error {
	return a.fold(st[0], st[1], gids)
}

// fold takes, for each row whose key is not NULL (and, unless keepNull,
// whose value is not NULL), its value where its key beats the group's.
func (a *argMinMaxAcc) fold(val, key arrow.Array, gids []uint32) error {
	if isNullArray(key) || isNullArray(val) && !a.keepNull {
		return nil // no row counts
	}
	vals, err := viewOf(val, &a.val)
	if err != nil {
		return err
	}
	keys, err := viewOf(key, &a.key)
	if err != nil {
		return err
	}
	for i := 0; i < key.Len(); i++ {
		if !keys.valid(i) || !a.keepNull && !vals.valid(i) {
			continue
		}
		g := uint32(0)
		if gids != nil {
			g = gids[i]
		}
		if a.key.has[g] {
			c := keys.cmp(&a.key, g, i)
			if a.isMax && c <= 0 || !a.isMax && c >= 0 {
				continue // not better; a tie keeps the first row seen
			}
		}
		keys.store(&a.key, g, i)
		if vals.valid(i) {
			vals.store(&a.val, g, i)
		} else {
			a.val.has[g] = false
		}
	}
	return nil
}

func (a *argMinMaxAcc) States(mem memory.Allocator, ts []arrow.DataType, lo, hi int) ([]arrow.Array, error) {
	v, err := a.val.array(mem, ts[0], lo, hi)
	if err != nil {
		return nil, err
	}
	k, err := a.key.array(mem, ts[1], lo, hi)
	if err != nil {
		v.Release()
		return nil, err
	}
	return []arrow.Array{v, k}, nil
}

func (a *argMinMaxAcc) Result(mem memory.Allocator, t arrow.DataType, lo, hi int) (arrow.Array, error) {
	return a.val.array(mem, t, lo, hi)
}

// colView is one batch's column in the layout of a valueState, read row
// by row (valid, cmp, store).
type colView struct {
	a    arrow.Array
	null bool // of the NULL type: every row NULL
	vb   []byte
	voff int
	i64  []int64
	f64  []float64
	i32  []int32
	w    []decimal128.Num
	bs   []byte
	boff int
	offs []int32
	data []byte
}

func viewOf(a arrow.Array, st *valueState) (*colView, error) {
	v := &colView{a: a}
	if isNullArray(a) {
		v.null = true
		return v, nil
	}
	if err := st.checkKind(a, false); err != nil {
		return nil, err
	}
	v.vb, v.voff = validityOf(a)
	switch st.k {
	case kInt64:
		v.i64 = values[int64](a)
	case kFloat64:
		v.f64 = values[float64](a)
	case kDate:
		v.i32 = values[int32](a)
	case kDec128:
		v.w = values[decimal128.Num](a)
	case kBool:
		v.bs, v.boff = bitsOf(a)
	case kString:
		v.offs, v.data = strOffsets(a)
	default:
		return nil, fmt.Errorf("over %s is not supported", a.DataType())
	}
	return v, nil
}

func (v *colView) valid(i int) bool { return !v.null && isValid(v.vb, v.voff, i) }

// cmp compares row i with group g's value of st: -1, 0 or 1 (NaN is the
// greatest float).
func (v *colView) cmp(st *valueState, g uint32, i int) int {
	switch st.k {
	case kInt64:
		return cmpTotal(v.i64[i], st.i64[g])
	case kFloat64:
		return cmpTotal(v.f64[i], st.f64[g])
	case kDate:
		return cmpTotal(v.i32[i], st.i32[g])
	case kDec128:
		return v.w[i].Cmp(st.w[g])
	case kBool:
		x, y := bit(v.bs, v.boff+i), st.bl[g]
		switch {
		case x == y:
			return 0
		case y:
			return -1
		}
		return 1
	case kString:
		s := string(v.data[v.offs[i]:v.offs[i+1]])
		switch {
		case s < st.str[g]:
			return -1
		case s > st.str[g]:
			return 1
		}
	}
	return 0
}

// cmpTotal compares in DuckDB's total order (NaN the greatest float).
func cmpTotal[T int64 | float64 | int32](x, y T) int {
	switch {
	case above(x, y):
		return 1
	case above(y, x):
		return -1
	}
	return 0
}

// store sets group g's value of st to row i.
func (v *colView) store(st *valueState, g uint32, i int) {
	switch st.k {
	case kInt64:
		st.i64[g] = v.i64[i]
	case kFloat64:
		st.f64[g] = v.f64[i]
	case kDate:
		st.i32[g] = v.i32[i]
	case kDec128:
		st.w[g] = v.w[i]
	case kBool:
		st.bl[g] = bit(v.bs, v.boff+i)
	case kString:
		s := v.data[v.offs[i]:v.offs[i+1]]
		st.strBytes += int64(len(s) - len(st.str[g]))
		st.str[g] = string(s)
	}
	st.has[g] = true
}
