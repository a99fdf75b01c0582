package exec

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/sluicedb/sluice/planner/plan"
)

var (
	i64T  = plan.Int64Type
	f64T  = plan.Float64Type
	strT  = plan.StringType
	boolT = plan.BoolType
	dateT = plan.DateType
	d102  = plan.DecimalType(10, 2)
)

func dec(p, s int) plan.DataType { return plan.DecimalType(p, s) }

// evalCols is the record most expression tests run over.
func evalCols() []col {
	return []col{
		ints("a", 1, 2, nil, -4, 5, 7),                                                         // 0
		ints("b", 3, 0, 1, nil, 2, -2),                                                         // 1
		decs("d", 10, 2, "1.50", "-2.25", nil, "100.00", "0.01", "3.33"),                       // 2
		decs("e", 10, 2, "0.50", "2.25", "1.00", nil, "0.00", "-3.33"),                         // 3
		floats("f", 1.5, 0.0, nil, -2.0, 10.0, 3.0),                                            // 4
		floats("g", 0.5, 0.0, 1.0, 2.0, nil, -1.5),                                             // 5
		strs("s", "apple", "banana", nil, "cherry", "añejo", ""),                               // 6
		strs("t", "apple", "Banana", "x", nil, "añejo", "z"),                                   // 7
		dates("dt", "1998-09-02", "1970-01-01", nil, "2000-02-29", "1969-12-31", "1995-03-15"), // 8
		bools("p", true, false, nil, true, nil, false),                                         // 9
		bools("q", true, true, true, nil, nil, false),                                          // 10
	}
}

var (
	cA  = cref(0, i64T)
	cB  = cref(1, i64T)
	cD  = cref(2, d102)
	cE  = cref(3, d102)
	cF  = cref(4, f64T)
	cG  = cref(5, f64T)
	cS  = cref(6, strT)
	cT  = cref(7, strT)
	cDt = cref(8, dateT)
	cP  = cref(9, boolT)
	cQ  = cref(10, boolT)
)

func like(a *plan.Expr, p string, neg bool) *plan.Expr {
	e := call(plan.OpLike, boolT, a, litS(p))
	e.Negated = neg
	return e
}

func in(neg bool, a *plan.Expr, list ...*plan.Expr) *plan.Expr {
	e := call(plan.OpIn, boolT, append([]*plan.Expr{a}, list...)...)
	e.Negated = neg
	return e
}

func extract(field string, a *plan.Expr) *plan.Expr {
	e := call(plan.OpExtract, i64T, a)
	e.Field = field
	return e
}

func cast(a *plan.Expr, t plan.DataType) *plan.Expr { return call(plan.OpCast, t, a) }

func TestEvalOps(t *testing.T) {
	N := any(nil)
	T, F := any(true), any(false)
	cases := []struct {
		name string
		e    *plan.Expr
		want []any
	}{
		// integer arithmetic
		{"a+b", call(plan.OpAdd, i64T, cA, cB), []any{int64(4), int64(2), N, N, int64(7), int64(5)}},
		{"a-b", call(plan.OpSub, i64T, cA, cB), []any{int64(-2), int64(2), N, N, int64(3), int64(9)}},
		{"a*b", call(plan.OpMul, i64T, cA, cB), []any{int64(3), int64(0), N, N, int64(10), int64(-14)}},
		{"a%b", call(plan.OpMod, i64T, cA, cB), []any{int64(1), N, N, N, int64(1), int64(1)}},
		{"a+10", call(plan.OpAdd, i64T, cA, litI(10)), []any{int64(11), int64(12), N, int64(6), int64(15), int64(17)}},
		{"10-a", call(plan.OpSub, i64T, litI(10), cA), []any{int64(9), int64(8), N, int64(14), int64(5), int64(3)}},
		{"-a", call(plan.OpNeg, i64T, cA), []any{int64(-1), int64(-2), N, int64(4), int64(-5), int64(-7)}},
		{"(1+2)*a", call(plan.OpMul, i64T, call(plan.OpAdd, i64T, litI(1), litI(2)), cA), []any{int64(3), int64(6), N, int64(-12), int64(15), int64(21)}},
		{"a+NULL", call(plan.OpAdd, i64T, cA, litNull(i64T)), []any{N, N, N, N, N, N}},
		// decimal arithmetic
		{"d+e", call(plan.OpAdd, dec(11, 2), cD, cE), []any{"2.00", "0.00", N, N, "0.01", "0.00"}},
		{"d-e", call(plan.OpSub, dec(11, 2), cD, cE), []any{"1.00", "-4.50", N, N, "0.01", "6.66"}},
		{"d*e", call(plan.OpMul, dec(18, 4), cD, cE), []any{"0.7500", "-5.0625", N, N, "0.0000", "-11.0889"}},
		{"d*e->s2", call(plan.OpMul, dec(18, 2), cD, cE), []any{"0.75", "-5.06", N, N, "0.00", "-11.09"}},
		{"1-e", call(plan.OpSub, dec(11, 2), litD("1.00", 3, 2), cE), []any{"0.50", "-1.25", "0.00", N, "1.00", "4.33"}},
		{"d*2.0", call(plan.OpMul, dec(18, 3), cD, litD("2.0", 2, 1)), []any{"3.000", "-4.500", N, "200.000", "0.020", "6.660"}},
		{"d%e", call(plan.OpMod, d102, cD, cE), []any{"0.00", "0.00", N, N, N, "0.00"}},
		{"-d", call(plan.OpNeg, d102, cD), []any{"-1.50", "2.25", N, "-100.00", "-0.01", "-3.33"}},
		{"d+a (int promoted)", call(plan.OpAdd, dec(18, 2), cD, cA), []any{"2.50", "-0.25", N, "96.00", "5.01", "10.33"}},
		// float arithmetic: division by zero is IEEE 754's (as DuckDB's)
		{"f/g", call(plan.OpDiv, f64T, cF, cG), []any{3.0, "NaN", N, -1.0, N, -2.0}},
		{"f+g", call(plan.OpAdd, f64T, cF, cG), []any{2.0, 0.0, N, 0.0, N, 1.5}},
		{"f%g", call(plan.OpMod, f64T, cF, cG), []any{0.0, "NaN", N, 0.0, N, 0.0}},
		{"a/b", call(plan.OpDiv, f64T, cast(cA, f64T), cast(cB, f64T)), []any{1.0 / 3.0, math.Inf(1), N, N, 2.5, -3.5}},
		{"d/e as float", call(plan.OpDiv, f64T, cD, cE), []any{3.0, -1.0, N, N, math.Inf(1), -1.0}},
		// dates
		{"dt+1", call(plan.OpAdd, dateT, cDt, litI(1)), []any{"1998-09-03", "1970-01-02", N, "2000-03-01", "1970-01-01", "1995-03-16"}},
		{"dt-dt", call(plan.OpSub, i64T, cDt, cDt), []any{int64(0), int64(0), N, int64(0), int64(0), int64(0)}},
		// comparisons
		{"a<b", call(plan.OpLt, boolT, cA, cB), []any{T, F, N, N, F, F}},
		{"a<=b", call(plan.OpLe, boolT, cA, cB), []any{T, F, N, N, F, F}},
		{"a>b", call(plan.OpGt, boolT, cA, cB), []any{F, T, N, N, T, T}},
		{"a<>b", call(plan.OpNe, boolT, cA, cB), []any{T, T, N, N, T, T}},
		{"a=2", call(plan.OpEq, boolT, cA, litI(2)), []any{F, T, N, F, F, F}},
		{"2<a", call(plan.OpLt, boolT, litI(2), cA), []any{F, F, N, F, T, T}},
		{"a>=2", call(plan.OpGe, boolT, cA, litI(2)), []any{F, T, N, F, T, T}},
		{"a=NULL", call(plan.OpEq, boolT, cA, litNull(i64T)), []any{N, N, N, N, N, N}},
		{"d>e", call(plan.OpGt, boolT, cD, cE), []any{T, F, N, N, T, T}},
		{"d=100", call(plan.OpEq, boolT, cD, litD("100.00", 5, 2)), []any{F, F, N, T, F, F}},
		{"d<1.5(s1)", call(plan.OpLt, boolT, cD, litD("1.5", 2, 1)), []any{F, T, N, F, T, F}},
		{"f>=g", call(plan.OpGe, boolT, cF, cG), []any{T, T, N, F, N, T}},
		{"f<2.5", call(plan.OpLt, boolT, cF, litF(2.5)), []any{T, T, N, T, F, F}},
		{"s=t", call(plan.OpEq, boolT, cS, cT), []any{T, F, N, N, T, F}},
		{"s<t", call(plan.OpLt, boolT, cS, cT), []any{F, F, N, N, F, T}},
		{"s='banana'", call(plan.OpEq, boolT, cS, litS("banana")), []any{F, T, N, F, F, F}},
		{"s>'b'", call(plan.OpGt, boolT, cS, litS("b")), []any{F, T, N, T, F, F}},
		{"'b'<s", call(plan.OpLt, boolT, litS("b"), cS), []any{F, T, N, T, F, F}},
		{"s<>'apple'", call(plan.OpNe, boolT, cS, litS("apple")), []any{F, T, N, T, T, T}},
		{"dt<1990", call(plan.OpLt, boolT, cDt, litDate("1990-01-01")), []any{F, T, N, F, T, F}},
		{"dt>=1995-03-15", call(plan.OpGe, boolT, cDt, litDate("1995-03-15")), []any{T, F, N, T, F, T}},
		{"p=q", call(plan.OpEq, boolT, cP, cQ), []any{T, F, N, N, N, T}},
		{"p<q", call(plan.OpLt, boolT, cP, cQ), []any{F, T, N, N, N, F}},
		{"p=true", call(plan.OpEq, boolT, cP, litB(true)), []any{T, F, N, T, N, F}},
		// three-valued logic
		{"p AND q", call(plan.OpAnd, boolT, cP, cQ), []any{T, F, N, N, N, F}},
		{"p OR q", call(plan.OpOr, boolT, cP, cQ), []any{T, T, T, T, N, F}},
		{"NOT p", call(plan.OpNot, boolT, cP), []any{F, T, N, F, N, T}},
		{"p AND false", call(plan.OpAnd, boolT, cP, litB(false)), []any{F, F, F, F, F, F}},
		{"false AND p", call(plan.OpAnd, boolT, litB(false), cP), []any{F, F, F, F, F, F}},
		{"p OR true", call(plan.OpOr, boolT, cP, litB(true)), []any{T, T, T, T, T, T}},
		{"p AND NULL", call(plan.OpAnd, boolT, cP, litNull(boolT)), []any{N, F, N, N, N, F}},
		{"p OR NULL", call(plan.OpOr, boolT, cP, litNull(boolT)), []any{T, N, N, T, N, N}},
		{"a>1 AND s IS NOT NULL", call(plan.OpAnd, boolT, call(plan.OpGt, boolT, cA, litI(1)), call(plan.OpIsNotNull, boolT, cS)), []any{F, T, F, F, T, T}},
		{"a IS NULL", call(plan.OpIsNull, boolT, cA), []any{F, F, T, F, F, F}},
		{"p IS NOT NULL", call(plan.OpIsNotNull, boolT, cP), []any{T, T, F, T, F, T}},
		{"NULL IS NULL", call(plan.OpIsNull, boolT, litNull(i64T)), []any{T, T, T, T, T, T}},
		// CASE
		{"case str", call(plan.OpCase, strT,
			call(plan.OpGt, boolT, cA, litI(1)), litS("big"),
			call(plan.OpIsNull, boolT, cA), litS("none"),
			litS("small")), []any{"small", "big", "none", "small", "big", "big"}},
		{"case dec", call(plan.OpCase, d102, cP, cD, cE), []any{"1.50", "2.25", "1.00", "100.00", "0.00", "-3.33"}},
		{"case like", call(plan.OpCase, i64T, like(cS, "a%", false), litI(1), litI(0)), []any{int64(1), int64(0), int64(0), int64(0), int64(1), int64(0)}},
		{"case no else", call(plan.OpCase, i64T, call(plan.OpEq, boolT, cA, litI(2)), litI(10), litNull(i64T)), []any{N, int64(10), N, N, N, N}},
		{"case const when", call(plan.OpCase, i64T, litB(false), litI(1), litB(true), cA, litI(3)), []any{int64(1), int64(2), N, int64(-4), int64(5), int64(7)}},
		{"case then int->dec", call(plan.OpCase, d102, cP, cD, litI(0)), []any{"1.50", "0.00", "0.00", "100.00", "0.00", "0.00"}},
		{"case float", call(plan.OpCase, f64T, cQ, cF, cG), []any{1.5, 0.0, N, 2.0, N, -1.5}},
		{"case bool", call(plan.OpCase, boolT, cP, cQ, litB(false)), []any{T, F, F, N, F, F}},
		{"case date", call(plan.OpCase, dateT, cP, cDt, litDate("2020-01-01")), []any{"1998-09-02", "2020-01-01", "2020-01-01", "2000-02-29", "2020-01-01", "2020-01-01"}},
		// CAST
		{"a::float", cast(cA, f64T), []any{1.0, 2.0, N, -4.0, 5.0, 7.0}},
		{"a::dec", cast(cA, d102), []any{"1.00", "2.00", N, "-4.00", "5.00", "7.00"}},
		{"a::string", cast(cA, strT), []any{"1", "2", N, "-4", "5", "7"}},
		{"a::bool", cast(cA, boolT), []any{T, T, N, T, T, T}},
		{"d::float", cast(cD, f64T), []any{1.5, -2.25, N, 100.0, 0.01, 3.33}},
		{"d::int", cast(cD, i64T), []any{int64(2), int64(-2), N, int64(100), int64(0), int64(3)}},
		{"d::dec(10,1)", cast(cD, dec(10, 1)), []any{"1.5", "-2.3", N, "100.0", "0.0", "3.3"}},
		{"d::dec(12,4)", cast(cD, dec(12, 4)), []any{"1.5000", "-2.2500", N, "100.0000", "0.0100", "3.3300"}},
		{"d::string", cast(cD, strT), []any{"1.50", "-2.25", N, "100.00", "0.01", "3.33"}},
		{"f::int", cast(cF, i64T), []any{int64(2), int64(0), N, int64(-2), int64(10), int64(3)}},
		{"f::dec", cast(cF, dec(10, 1)), []any{"1.5", "0.0", N, "-2.0", "10.0", "3.0"}},
		{"f::string", cast(cF, strT), []any{"1.5", "0.0", N, "-2.0", "10.0", "3.0"}},
		{"dt::string", cast(cDt, strT), []any{"1998-09-02", "1970-01-01", N, "2000-02-29", "1969-12-31", "1995-03-15"}},
		{"p::int", cast(cP, i64T), []any{int64(1), int64(0), N, int64(1), N, int64(0)}},
		{"p::string", cast(cP, strT), []any{"true", "false", N, "true", N, "false"}},
		{"'1998-12-01'::date", cast(litS("1998-12-01"), dateT), []any{"1998-12-01", "1998-12-01", "1998-12-01", "1998-12-01", "1998-12-01", "1998-12-01"}},
		{"NULL::int", cast(litNull(plan.NullType), i64T), []any{N, N, N, N, N, N}},
		// LIKE
		{"like a%", like(cS, "a%", false), []any{T, F, N, F, T, F}},
		{"like %a", like(cS, "%a", false), []any{F, T, N, F, F, F}},
		{"like %an%", like(cS, "%an%", false), []any{F, T, N, F, F, F}},
		{"like _ñ%", like(cS, "_ñ%", false), []any{F, F, N, F, T, F}},
		{"like a_ejo", like(cS, "a_ejo", false), []any{F, F, N, F, T, F}},
		{"like %e%y", like(cS, "%e%y", false), []any{F, F, N, T, F, F}},
		{"like b%n%a", like(cS, "b%n%a", false), []any{F, T, N, F, F, F}},
		{"like ''", like(cS, "", false), []any{F, F, N, F, F, T}},
		{"like %", like(cS, "%", false), []any{T, T, N, T, T, T}},
		{"like _____", like(cS, "_____", false), []any{T, F, N, F, T, F}},
		{"like %_r%r_", like(cS, "%_r%r_", false), []any{F, F, N, T, F, F}},
		{"not like a%", like(cS, "a%", true), []any{F, T, N, T, F, T}},
		{"like exact", like(cS, "cherry", false), []any{F, F, N, T, F, F}},
		// IN
		{"a in (1,5,9)", in(false, cA, litI(1), litI(5), litI(9)), []any{T, F, N, F, T, F}},
		{"a not in (1,5)", in(true, cA, litI(1), litI(5)), []any{F, T, N, T, F, T}},
		{"a in (1,NULL)", in(false, cA, litI(1), litNull(i64T)), []any{T, N, N, N, N, N}},
		{"a not in (1,NULL)", in(true, cA, litI(1), litNull(i64T)), []any{F, N, N, N, N, N}},
		{"s in (apple,cherry)", in(false, cS, litS("apple"), litS("cherry")), []any{T, F, N, T, F, F}},
		{"d in (1.50,0.01)", in(false, cD, litD("1.50", 3, 2), litD("0.01", 3, 2)), []any{T, F, N, F, T, F}},
		{"dt in (...)", in(false, cDt, litDate("1970-01-01"), litDate("1995-03-15")), []any{F, T, N, F, F, T}},
		{"f in (1.5,3)", in(false, cF, litF(1.5), litF(3)), []any{T, F, N, F, F, T}},
		{"a in big", in(false, cA, bigIntList(20, 7)...), []any{F, F, N, F, F, T}},
		{"s in big", in(false, cS, bigStrList(12, "añejo")...), []any{F, F, N, F, T, F}},
		{"a not in big", in(true, cA, bigIntList(20, 7)...), []any{T, T, N, T, T, F}},
		{"a in big with NULL", in(false, cA, append(bigIntList(20, 7), litNull(i64T))...), []any{N, N, N, N, N, T}},
		{"dt in big", in(false, cDt, bigDateList(20, "1995-03-15")...), []any{F, F, N, F, F, T}},
		{"d in big", in(false, cD, append(bigIntList(19, 8), litD("0.01", 3, 2))...), []any{F, F, N, T, T, F}},
		{"a in (b, 5)", in(false, cA, cB, litI(5)), []any{F, F, N, N, T, F}},
		// EXTRACT
		{"year", extract("year", cDt), []any{int64(1998), int64(1970), N, int64(2000), int64(1969), int64(1995)}},
		{"month", extract("month", cDt), []any{int64(9), int64(1), N, int64(2), int64(12), int64(3)}},
		{"day", extract("day", cDt), []any{int64(2), int64(1), N, int64(29), int64(31), int64(15)}},
		// SUBSTRING (DuckDB semantics)
		{"substr(s,1,3)", call(plan.OpSubstring, strT, cS, litI(1), litI(3)), []any{"app", "ban", N, "che", "añe", ""}},
		{"substr(s,2)", call(plan.OpSubstring, strT, cS, litI(2)), []any{"pple", "anana", N, "herry", "ñejo", ""}},
		{"substr(s,-3)", call(plan.OpSubstring, strT, cS, litI(-3)), []any{"ple", "ana", N, "rry", "ejo", ""}},
		{"substr(s,0,2)", call(plan.OpSubstring, strT, cS, litI(0), litI(2)), []any{"a", "b", N, "c", "a", ""}},
		{"substr(s,2,2)", call(plan.OpSubstring, strT, cS, litI(2), litI(2)), []any{"pp", "an", N, "he", "ñe", ""}},
		{"substr(s,a,2)", call(plan.OpSubstring, strT, cS, cA, litI(2)), []any{"ap", "an", N, "er", "o", ""}},
		{"substr(s,1,NULL)", call(plan.OpSubstring, strT, cS, litI(1), litNull(i64T)), []any{N, N, N, N, N, N}},
		// literal-only expressions are broadcast
		{"lit only", call(plan.OpAdd, i64T, litI(1), litI(2)), []any{int64(3), int64(3), int64(3), int64(3), int64(3), int64(3)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := checkedMem(t)
			rec := mkRec(mem, evalCols()...)
			defer rec.Release()
			got, err := Eval(tc.e, rec, mem)
			if err != nil {
				t.Fatalf("Eval(%s): %v", tc.e, err)
			}
			defer got.Release()
			if got.Len() != int(rec.NumRows()) {
				t.Fatalf("len %d", got.Len())
			}
			if g := goVals(got); !reflect.DeepEqual(g, tc.want) {
				t.Fatalf("Eval(%s)\n got %v\nwant %v", tc.e, g, tc.want)
			}
			// The same over a slice of the batch (arrays with offsets),
			// with a cache kept over the batches as an operator keeps one
			// (an IN list's set is built on the first) ...
			cache := &ExprCache{}
			for _, r := range [][2]int64{{0, 6}, {1, 6}, {3, 5}} {
				sl := rec.NewSlice(r[0], r[1])
				got, err := EvalCached(tc.e, sl, mem, cache)
				if err != nil {
					t.Fatalf("Eval(%s) over slice %v: %v", tc.e, r, err)
				}
				if g := goVals(got); !reflect.DeepEqual(g, tc.want[r[0]:r[1]]) {
					t.Fatalf("Eval(%s) over slice %v\n got %v\nwant %v", tc.e, r, g, tc.want[r[0]:r[1]])
				}
				got.Release()
				sl.Release()
			}
			// ... and over no rows.
			empty := rec.NewSlice(2, 2)
			defer empty.Release()
			got0, err := Eval(tc.e, empty, mem)
			if err != nil {
				t.Fatalf("Eval(%s) over no rows: %v", tc.e, err)
			}
			if got0.Len() != 0 {
				t.Fatalf("Eval(%s) over no rows: %d rows", tc.e, got0.Len())
			}
			got0.Release()
		})
	}
}

func bigIntList(n int, include int64) []*plan.Expr {
	var out []*plan.Expr
	for i := 0; i < n-1; i++ {
		out = append(out, litI(int64(100+i)))
	}
	return append(out, litI(include))
}

func bigDateList(n int, include string) []*plan.Expr {
	var out []*plan.Expr
	for i := 0; i < n-1; i++ {
		out = append(out, litDate(fmt.Sprintf("2010-01-%02d", i+1)))
	}
	return append(out, litDate(include))
}

func bigStrList(n int, include string) []*plan.Expr {
	var out []*plan.Expr
	for i := 0; i < n-1; i++ {
		out = append(out, litS(strings.Repeat("z", i+1)))
	}
	return append(out, litS(include))
}

func TestEvalOnlyWhereSelected(t *testing.T) {
	mem := checkedMem(t)
	rec := mkRec(mem, strs("u", "12", "x", "7"), ints("k", 1, 2, 3))
	defer rec.Release()
	u, k := cref(0, strT), cref(1, i64T)
	kne2 := call(plan.OpNe, boolT, k, litI(2))
	cases := []struct {
		name string
		e    *plan.Expr
		want []any
	}{
		{"case guards cast", call(plan.OpCase, i64T, kne2, cast(u, i64T), litI(0)), []any{int64(12), int64(0), int64(7)}},
		{"and guards cast", call(plan.OpAnd, boolT, kne2, call(plan.OpGt, boolT, cast(u, i64T), litI(10))), []any{true, false, false}},
		{"or guards cast", call(plan.OpOr, boolT, call(plan.OpEq, boolT, k, litI(2)), call(plan.OpGt, boolT, cast(u, i64T), litI(10))), []any{true, true, false}},
	}
	for _, tc := range cases {
		got, err := Eval(tc.e, rec, mem)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if g := goVals(got); !reflect.DeepEqual(g, tc.want) {
			t.Errorf("%s: got %v want %v", tc.name, g, tc.want)
		}
		got.Release()
	}
	// Unguarded, the cast fails and names the value.
	_, err := Eval(cast(u, i64T), rec, mem)
	if err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("want cast error naming the value, got %v", err)
	}
}

func TestEvalCastsFromString(t *testing.T) {
	mem := checkedMem(t)
	v, w := cref(0, strT), cref(1, strT)
	rec2 := mkRec(mem, strs("v", "42", " -7 ", nil), strs("w", "3.25", "-0.005", "1e3"))
	defer rec2.Release()
	got, err := Eval(cast(v, i64T), rec2, mem)
	if err != nil {
		t.Fatal(err)
	}
	if g := goVals(got); !reflect.DeepEqual(g, []any{int64(42), int64(-7), nil}) {
		t.Errorf("string->int: %v", g)
	}
	got.Release()
	got, err = Eval(cast(w, f64T), rec2, mem)
	if err != nil {
		t.Fatal(err)
	}
	if g := goVals(got); !reflect.DeepEqual(g, []any{3.25, -0.005, 1000.0}) {
		t.Errorf("string->float: %v", g)
	}
	got.Release()
	rec3 := mkRec(mem, strs("w", "3.25", "-0.005", "12", "0.015"))
	defer rec3.Release()
	got, err = Eval(cast(cref(0, strT), dec(10, 2)), rec3, mem)
	if err != nil {
		t.Fatal(err)
	}
	if g := goVals(got); !reflect.DeepEqual(g, []any{"3.25", "-0.01", "12.00", "0.02"}) {
		t.Errorf("string->decimal: %v", g)
	}
	got.Release()
}

func TestEvalStringToDate(t *testing.T) {
	mem := checkedMem(t)
	rec := mkRec(mem, strs("v", "1998-09-02", "2000-02-29", nil, " 1970-01-01 "))
	defer rec.Release()
	got, err := Eval(cast(cref(0, strT), dateT), rec, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if g := goVals(got); !reflect.DeepEqual(g, []any{"1998-09-02", "2000-02-29", nil, "1970-01-01"}) {
		t.Errorf("string->date: %v", g)
	}
	bad := mkRec(mem, strs("v", "1999-02-29"))
	defer bad.Release()
	if _, err := Eval(cast(cref(0, strT), dateT), bad, mem); err == nil {
		t.Error("1999-02-29 parsed as a date")
	}
}

func TestDecimalOverflow(t *testing.T) {
	mem := checkedMem(t)
	rec := mkRec(mem, decs("x", 18, 2, "9999999999999999.99", "1.00", nil), decs("y", 18, 2, "1000.00", "2.00", "5.00"))
	defer rec.Release()
	x, y := cref(0, dec(18, 2)), cref(1, dec(18, 2))
	for _, e := range []*plan.Expr{
		call(plan.OpMul, dec(18, 4), x, y),
		call(plan.OpAdd, dec(18, 2), x, x),
		cast(x, dec(18, 6)),
		call(plan.OpMul, dec(18, 2), x, litD("1000000000000000.00", 18, 2)),
	} {
		_, err := Eval(e, rec, mem)
		if !errors.Is(err, plan.ErrDecimalOverflow) {
			t.Errorf("%s: want ErrDecimalOverflow, got %v", e, err)
		}
	}
	// NULL rows never overflow: garbage under a NULL is ignored.
	rec2 := mkRec(mem, decs("x", 18, 2, "1.00", nil))
	defer rec2.Release()
	got, err := Eval(call(plan.OpAdd, dec(18, 2), cref(0, dec(18, 2)), litD("1.00", 3, 2)), rec2, mem)
	if err != nil {
		t.Fatal(err)
	}
	got.Release()
}

func TestIntegerOverflow(t *testing.T) {
	mem := checkedMem(t)
	rec := mkRec(mem, ints("x", int64(math.MaxInt64), int64(math.MinInt64)))
	defer rec.Release()
	x := cref(0, i64T)
	for _, e := range []*plan.Expr{
		call(plan.OpAdd, i64T, x, litI(1)),
		call(plan.OpSub, i64T, litI(-2), x),
		call(plan.OpMul, i64T, x, litI(2)),
		call(plan.OpNeg, i64T, x),
	} {
		if _, err := Eval(e, rec, mem); !errors.Is(err, ErrIntegerOverflow) {
			t.Errorf("%s: want ErrIntegerOverflow, got %v", e, err)
		}
	}
	got, err := Eval(call(plan.OpMod, i64T, x, litI(-1)), rec, mem)
	if err != nil {
		t.Fatal(err)
	}
	got.Release()
}

func TestEvalErrors(t *testing.T) {
	mem := checkedMem(t)
	rec := mkRec(mem, evalCols()...)
	defer rec.Release()
	for _, e := range []*plan.Expr{
		cref(42, i64T),                          // out of range
		cref(0, strT),                           // type mismatch
		cast(cS, i64T),                          // bad value
		call(plan.OpLike, boolT, cA, litS("x")), // LIKE over int
		extract("century", cDt),
	} {
		if _, err := Eval(e, rec, mem); err == nil {
			t.Errorf("%s: expected an error", e)
		}
	}
}

// TestEvalErrorsAreNeverTransient: evaluation does no I/O, so a failure
// is a user error with its own code or an internal error (SL900), never
// an uncoded error the task runtime would retry as transient; and an
// interval over a folded constant evaluates (it was "cannot broadcast
// literal of type interval", retried four times).
func TestEvalErrorsAreNeverTransient(t *testing.T) {
	mem := checkedMem(t)
	rec := mkRec(mem, ints("x", int64(1), int64(2)))
	defer rec.Release()
	_, err := Eval(&plan.Expr{Op: "no_such_op", Type: i64T, Args: []*plan.Expr{cref(0, i64T)}}, rec, mem)
	if err == nil || plan.CodeOf(err) != plan.CodeInternal {
		t.Errorf("unknown operator: want %s, got %v (code %q)", plan.CodeInternal, err, plan.CodeOf(err))
	}
	_, err = Eval(call(plan.OpAdd, i64T, cref(0, i64T), litI(math.MaxInt64)), rec, mem)
	if !errors.Is(err, ErrIntegerOverflow) || plan.CodeOf(err) == plan.CodeInternal {
		t.Errorf("overflow: want the user error, got %v (code %q)", err, plan.CodeOf(err))
	}
	iv := plan.Literal(plan.Value{Months: 12}, plan.DataType{ID: plan.Interval})
	d := plan.Literal(plan.Value{I: 8805}, plan.DateType) // 1994-02-10
	e := cast(call(plan.OpAdd, plan.TimestampType, plan.CallFunc("last_day", plan.DateType, d), iv), plan.DateType)
	got, err := Eval(e, rec, mem)
	if err != nil {
		t.Fatalf("%s: %v", e, err)
	}
	defer got.Release()
	if s := got.ValueStr(0); s != "1995-02-28" {
		t.Errorf("%s = %s, want 1995-02-28", e, s)
	}
}

// TestScalarArith checks integer and decimal arithmetic with a literal
// operand (scalarArith, no broadcast) against the same arithmetic with the
// literal as a column, left and right, over values that overflow and
// NULLs: equal values where both succeed, an overflow error from both
// otherwise.
func TestScalarArith(t *testing.T) {
	mem := checkedMem(t)
	rng := rand.New(rand.NewSource(7))
	const n = 300
	gen := func(big bool) (xs, ds []any) { // big: a few values at the types' bounds
		xs, ds = make([]any, n), make([]any, n)
		for i := range xs {
			switch {
			case i%23 == 0:
				xs[i], ds[i] = nil, nil
			case big && i%97 == 1:
				xs[i], ds[i] = int64(math.MaxInt64-int64(rng.Intn(3))), "9999999999999999.99"
			default:
				v := rng.Int63n(2_000_000) - 1_000_000
				xs[i], ds[i] = v, plan.FormatDecimal(v, 2)
			}
		}
		return xs, ds
	}
	xs, ds := gen(false)
	bxs, bds := gen(true)
	ilits := []*plan.Expr{litI(1), litI(-3), litI(0), litI(1 << 40), litI(math.MaxInt64), litI(math.MinInt64 + 1)}
	dlits := []*plan.Expr{litD("1.00", 18, 2), litD("-0.05", 18, 2), litD("0.00", 18, 2), litD("999999999999.99", 18, 2)}
	for _, tc := range []struct {
		name string
		typ  plan.DataType
		col  col
		lits []*plan.Expr
	}{
		{"int64", i64T, ints("x", xs...), ilits},
		{"int64 at the bounds", i64T, ints("x", bxs...), ilits},
		{"decimal", dec(18, 2), decs("x", 18, 2, ds...), dlits},
		{"decimal at the bounds", dec(18, 2), decs("x", 18, 2, bds...), dlits},
	} {
		for _, lit := range tc.lits {
			rec := mkRec(mem, tc.col)
			litCol, err := Eval(lit, rec, mem) // the literal broadcast into a column
			if err != nil {
				t.Fatal(err)
			}
			both := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{rec.Schema().Field(0), {Name: "c", Type: litCol.DataType(), Nullable: true}}, nil),
				[]arrow.Array{rec.Column(0), litCol}, int64(n))
			litCol.Release()
			x, c := cref(0, tc.typ), cref(1, tc.typ)
			for _, op := range []plan.Op{plan.OpAdd, plan.OpSub, plan.OpMul} {
				rt := tc.typ
				if op == plan.OpMul && tc.typ.ID == plan.Decimal {
					rt = dec(18, 4)
				}
				for _, left := range []bool{false, true} {
					sc, gen := call(op, rt, x, lit), call(op, rt, x, c)
					if left {
						sc, gen = call(op, rt, lit, x), call(op, rt, c, x)
					}
					got, gerr := Eval(sc, rec, mem)
					want, werr := Eval(gen, both, mem)
					switch {
					case gerr != nil || werr != nil:
						if (gerr == nil) != (werr == nil) || errors.Is(gerr, ErrIntegerOverflow) != errors.Is(werr, ErrIntegerOverflow) ||
							errors.Is(gerr, plan.ErrDecimalOverflow) != errors.Is(werr, plan.ErrDecimalOverflow) {
							t.Errorf("%s %s: literal: %v; column: %v", tc.name, sc, gerr, werr)
						}
					case !array.Equal(got, want):
						t.Errorf("%s %s: literal and column operands differ", tc.name, sc)
					}
					if got != nil {
						got.Release()
					}
					if want != nil {
						want.Release()
					}
				}
			}
			both.Release()
			rec.Release()
		}
	}
}
