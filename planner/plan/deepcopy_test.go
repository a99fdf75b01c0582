package plan

import (
	"reflect"
	"testing"
)

// TestCloneExprFields: cloneExpr copies Expr by hand; every field of Expr
// and Value other than Args and Value must be a scalar (or a struct of
// scalars) that a struct copy duplicates. A new pointer, slice or map
// field fails here until cloneExpr copies it.
func TestCloneExprFields(t *testing.T) {
	var check func(t reflect.Type, path string)
	check = func(typ reflect.Type, path string) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name := path + "." + f.Name
			if name == "Expr.Args" || name == "Expr.Value" {
				continue
			}
			switch f.Type.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func:
				t.Errorf("%s is a %s: cloneExpr would share it", name, f.Type.Kind())
			case reflect.Struct:
				check(f.Type, name)
			}
		}
	}
	check(reflect.TypeFor[Expr](), "Expr")
	check(reflect.TypeFor[Value](), "Value")
	e := Call(OpIn, BoolType, Column(0, "x", Int64Type), Literal(Value{I: 1}, Int64Type))
	c := cloneExpr(e)
	if !reflect.DeepEqual(e, c) || c.Args[1].Value == e.Args[1].Value || &c.Args[0] == &e.Args[0] {
		t.Fatalf("clone %v of %v is not a deep copy", c, e)
	}
}
