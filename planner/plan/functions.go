package plan

import "strings"

// OpFunc calls a scalar function of the function library by name (Func):
// the planner resolves the name and the argument types against the
// registry in function/exec (overloads, implicit casts, return type) and
// the function runtime evaluates it with the kernel registered under the
// same name. Args are already cast to the chosen signature's types.
const OpFunc Op = "func"

// CallFunc returns a call of the library function name with return type t.
func CallFunc(name string, t DataType, args ...*Expr) *Expr {
	return &Expr{Op: OpFunc, Func: name, Type: t, Args: args}
}

// FuncString renders a function call as SQL: name(a, b); an operator
// spelled with symbols (||) is rendered infix.
func FuncString(name string, args []*Expr) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.String()
	}
	if name != "" && !isIdentStart(name[0]) {
		return "(" + strings.Join(parts, " "+name+" ") + ")"
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}

func isIdentStart(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
