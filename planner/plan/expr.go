package plan

import (
	"fmt"
	"strings"
)

// Op is an expression operator.
type Op string

const (
	OpColumn  Op = "col" // input column Col
	OpLiteral Op = "lit" // constant Value

	// Arithmetic. Operands of Add/Sub have the same type (decimals the same
	// scale); Mul of decimals yields scale s1+s2; Div always yields float64
	// (both operands are float64, the planner casts them), as in DuckDB.
	// Date/time forms of Add/Sub: date ± int64 -> date (days), date - date
	// -> int64 (days), date|timestamp ± interval literal -> timestamp.
	OpAdd Op = "+"
	OpSub Op = "-"
	OpMul Op = "*"
	OpDiv Op = "/"
	OpMod Op = "%"
	OpNeg Op = "neg"

	// Comparisons: both operands have the same type (the planner casts).
	OpEq Op = "="
	OpNe Op = "<>"
	OpLt Op = "<"
	OpLe Op = "<="
	OpGt Op = ">"
	OpGe Op = ">="

	// Boolean logic, SQL three-valued.
	OpAnd Op = "and"
	OpOr  Op = "or"
	OpNot Op = "not"

	OpIsNull    Op = "is_null"
	OpIsNotNull Op = "is_not_null"

	// OpCase: Args = [when1, then1, when2, then2, ..., else]; the else
	// argument is always present (a NULL literal when the SQL had none).
	OpCase Op = "case"
	// OpCast converts Args[0] to Type.
	OpCast Op = "cast"
	// OpTryCast converts Args[0] to Type, NULL where a value cannot be
	// converted (TRY_CAST).
	OpTryCast Op = "try_cast"
	// OpLike: Args[0] LIKE Args[1] where Args[1] is a string literal
	// pattern with % and _; Negated for NOT LIKE.
	OpLike Op = "like"
	// OpIn: Args[0] IN (Args[1:]...), all literals of Args[0]'s type;
	// Negated for NOT IN.
	OpIn Op = "in"
	// OpExtract: EXTRACT(Field FROM Args[0]) of a date; Field is year,
	// month or day. Yields int64.
	OpExtract Op = "extract"
	// OpSubstring: SUBSTRING(Args[0] FROM Args[1] [FOR Args[2]]), 1-based,
	// counted in characters.
	OpSubstring Op = "substring"
)

// Value is a literal value. I holds Int64 values, Date days, Timestamp
// microseconds and Decimal unscaled values; F holds Float64; S holds
// String; B holds Bool. A 128-bit decimal is I + H*2^64 (H is 0 whenever
// the value fits an int64; see Dec128).
type Value struct {
	Null bool  `json:"null,omitempty"`
	I    int64 `json:"i,omitempty"`
	H    int64 `json:"h,omitempty"`
	// Months and Days are the calendar parts of an Interval (I holds its
	// microseconds).
	Months int32   `json:"mo,omitempty"`
	Days   int32   `json:"d,omitempty"`
	F      float64 `json:"f,omitempty"`
	S      string  `json:"s,omitempty"`
	B      bool    `json:"b,omitempty"`
}

// Expr is a typed, serializable scalar expression evaluated over the
// columns of its input batch.
type Expr struct {
	Op      Op       `json:"op"`
	Type    DataType `json:"type"`
	Col     int      `json:"col,omitempty"`
	Name    string   `json:"name,omitempty"` // column name (display only)
	Value   *Value   `json:"value,omitempty"`
	Args    []*Expr  `json:"args,omitempty"`
	Field   string   `json:"field,omitempty"` // OpExtract field
	Func    string   `json:"func,omitempty"`  // OpFunc: the registered function's name
	Negated bool     `json:"negated,omitempty"`
}

// Column returns a reference to input column i.
func Column(i int, name string, t DataType) *Expr {
	return &Expr{Op: OpColumn, Col: i, Name: name, Type: t}
}

// Literal returns a constant.
func Literal(v Value, t DataType) *Expr { return &Expr{Op: OpLiteral, Value: &v, Type: t} }

// Call returns an operator applied to args.
func Call(op Op, t DataType, args ...*Expr) *Expr { return &Expr{Op: op, Type: t, Args: args} }

// Columns returns the distinct input columns e refers to, in first-use order.
func (e *Expr) Columns() []int {
	var out []int
	seen := map[int]bool{}
	var walk func(*Expr)
	walk = func(x *Expr) {
		if x == nil {
			return
		}
		if x.Op == OpColumn && !seen[x.Col] {
			seen[x.Col] = true
			out = append(out, x.Col)
		}
		for _, a := range x.Args {
			walk(a)
		}
	}
	walk(e)
	return out
}

// String renders e for EXPLAIN output.
func (e *Expr) String() string {
	if e == nil {
		return "<nil>"
	}
	switch e.Op {
	case OpColumn:
		if e.Name != "" {
			return fmt.Sprintf("%s@%d", e.Name, e.Col)
		}
		return fmt.Sprintf("#%d", e.Col)
	case OpLiteral:
		return e.Value.Format(e.Type)
	case OpAdd, OpSub, OpMul, OpDiv, OpMod, OpEq, OpNe, OpLt, OpLe, OpGt, OpGe, OpAnd, OpOr:
		return fmt.Sprintf("(%s %s %s)", e.Args[0], strings.ToUpper(string(e.Op)), e.Args[1])
	case OpNeg:
		return fmt.Sprintf("(-%s)", e.Args[0])
	case OpNot:
		return fmt.Sprintf("(NOT %s)", e.Args[0])
	case OpIsNull:
		return fmt.Sprintf("(%s IS NULL)", e.Args[0])
	case OpIsNotNull:
		return fmt.Sprintf("(%s IS NOT NULL)", e.Args[0])
	case OpCast:
		return fmt.Sprintf("CAST(%s AS %s)", e.Args[0], e.Type)
	case OpTryCast:
		return fmt.Sprintf("TRY_CAST(%s AS %s)", e.Args[0], e.Type)
	case OpLike:
		not := ""
		if e.Negated {
			not = "NOT "
		}
		return fmt.Sprintf("(%s %sLIKE %s)", e.Args[0], not, e.Args[1])
	case OpIn:
		not := ""
		if e.Negated {
			not = "NOT "
		}
		parts := make([]string, len(e.Args)-1)
		for i, a := range e.Args[1:] {
			parts[i] = a.String()
		}
		return fmt.Sprintf("(%s %sIN (%s))", e.Args[0], not, strings.Join(parts, ", "))
	case OpExtract:
		return fmt.Sprintf("EXTRACT(%s FROM %s)", strings.ToUpper(e.Field), e.Args[0])
	case OpFunc:
		return FuncString(e.Func, e.Args)
	case OpCase:
		var b strings.Builder
		b.WriteString("CASE")
		n := len(e.Args) - 1
		for i := 0; i+1 < n+1 && i < n; i += 2 {
			fmt.Fprintf(&b, " WHEN %s THEN %s", e.Args[i], e.Args[i+1])
		}
		fmt.Fprintf(&b, " ELSE %s END", e.Args[n])
		return b.String()
	}
	parts := make([]string, len(e.Args))
	for i, a := range e.Args {
		parts[i] = a.String()
	}
	return fmt.Sprintf("%s(%s)", strings.ToUpper(string(e.Op)), strings.Join(parts, ", "))
}

// Format renders v as a SQL literal of type t.
func (v *Value) Format(t DataType) string {
	if v == nil || v.Null {
		return "NULL"
	}
	switch t.ID {
	case Bool:
		if v.B {
			return "true"
		}
		return "false"
	case Int64:
		return fmt.Sprint(v.I)
	case Float64:
		return fmt.Sprint(v.F)
	case Decimal:
		if v.H != 0 {
			return v.Dec128().ToString(int32(t.Scale))
		}
		return FormatDecimal(v.I, t.Scale)
	case Timestamp:
		return "TIMESTAMP '" + FormatTimestamp(v.I) + "'"
	case Interval:
		return fmt.Sprintf("INTERVAL '%d months %d days %d us'", v.Months, v.Days, v.I)
	case String:
		return "'" + strings.ReplaceAll(v.S, "'", "''") + "'"
	case Date:
		return "DATE '" + FormatDate(int32(v.I)) + "'"
	}
	return "?"
}

// Flipped returns op' with (a op b) == (b op' a): the comparison with its
// operands swapped (< and >, <= and >=; = and <> stay).
func (op Op) Flipped() Op {
	switch op {
	case OpLt:
		return OpGt
	case OpLe:
		return OpGe
	case OpGt:
		return OpLt
	case OpGe:
		return OpLe
	}
	return op
}
