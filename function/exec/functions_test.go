package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestFunctionRegistry: every entry is complete, names are lower case and
// unique across names and aliases, and lookup finds each by every name.
func TestFunctionRegistry(t *testing.T) {
	seen := map[string]string{}
	for _, f := range Functions() {
		if f.Name == "" || f.Kernel == nil || len(f.Signatures) == 0 || f.Doc == "" {
			t.Errorf("incomplete entry %+v", f)
		}
		for _, n := range append([]string{f.Name}, f.Aliases...) {
			if prev, dup := seen[n]; dup {
				t.Errorf("%s is both %s and %s", n, prev, f.Name)
			}
			seen[n] = f.Name
			if g, ok := LookupFunction(n); !ok || g != f {
				t.Errorf("LookupFunction(%q) does not find %s", n, f.Name)
			}
		}
		for _, s := range f.Signatures {
			if s.Return == nil && s.Returns.ID == "" {
				t.Errorf("%s: signature without a return type", f.SignatureString(s))
			}
		}
	}
	if _, ok := LookupFunction("btrim"); !ok {
		t.Error("btrim (Postgres' name of trim) is not an alias")
	}
}

// TestFunctionKernels evaluates library calls over arrays with NULLs and
// constants mixed, through Eval as a fragment does.
func TestFunctionKernels(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"  Ab ", "", "x"}, []bool{true, true, true})
	sb.AppendNull()
	strs := sb.NewArray()
	defer strs.Release()
	ib := array.NewInt64Builder(mem)
	ib.AppendValues([]int64{1, -2, 3}, nil)
	ib.AppendNull()
	ints := ib.NewArray()
	defer ints.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{strs, ints}, 4)
	defer rec.Release()
	s := plan.Column(0, "s", plan.StringType)
	i := plan.Column(1, "i", plan.Int64Type)
	str := func(v string) *plan.Expr { return plan.Literal(plan.Value{S: v}, plan.StringType) }
	cases := []struct {
		e    *plan.Expr
		want []string
	}{
		{plan.CallFunc("upper", plan.StringType, plan.CallFunc("trim", plan.StringType, s)), []string{"AB", "", "X", "(null)"}},
		{plan.CallFunc("concat", plan.StringType, s, str("!")), []string{"  Ab !", "!", "x!", "!"}},
		{plan.CallFunc("||", plan.StringType, s, str("!")), []string{"  Ab !", "!", "x!", "(null)"}},
		{plan.CallFunc("abs", plan.Int64Type, i), []string{"1", "2", "3", "(null)"}},
		{plan.CallFunc("left", plan.StringType, str("hello"), i), []string{"h", "hel", "hel", "(null)"}},
		{plan.CallFunc("greatest", plan.Int64Type, i, plan.Literal(plan.Value{I: 2}, plan.Int64Type)), []string{"2", "2", "3", "2"}},
		{plan.CallFunc("length", plan.Int64Type, s), []string{"5", "0", "1", "(null)"}},
	}
	for _, c := range cases {
		got, err := Eval(c.e, rec, mem)
		if err != nil {
			t.Fatalf("%s: %v", c.e, err)
		}
		for r, w := range c.want {
			if v := got.ValueStr(r); v != w {
				t.Errorf("%s row %d: got %q, want %q", c.e, r, v, w)
			}
		}
		got.Release()
	}
}

// TestFunctionValueErrors: a kernel failing on its arguments' values is
// the query's error, with code SL100 (class user: never retried).
func TestFunctionValueErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ib := array.NewInt64Builder(mem)
	ib.AppendValues([]int64{2}, nil)
	ints := ib.NewArray()
	defer ints.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{ints}, 1)
	defer rec.Release()
	i := plan.Column(0, "i", plan.Int64Type)
	str := func(v string) *plan.Expr { return plan.Literal(plan.Value{S: v}, plan.StringType) }
	num := func(v int64) *plan.Expr { return plan.Literal(plan.Value{I: v}, plan.Int64Type) }
	cases := []struct {
		name string
		e    *plan.Expr
	}{
		{"group out of range", plan.CallFunc("regexp_extract", plan.StringType, str("abc"), str("b"), i)},
		{"invalid regular expression", plan.CallFunc("regexp_matches", plan.BoolType, str("abc"), str("("))},
		{"date out of range", plan.CallFunc("make_date", plan.DateType, num(2023), i, num(30))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Eval(c.e, rec, mem)
			if err == nil {
				got.Release()
				t.Fatalf("%s: no error", c.e)
			}
			if code := plan.CodeOf(err); code != plan.CodeRuntime || plan.ClassOf(code) != plan.ClassUser {
				t.Fatalf("%s: %v has code %q, want %s of class user", c.e, err, code, plan.CodeRuntime)
			}
		})
	}
}
