package planner

import (
	"context"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// Parameter typing: the types of a statement's $n parameters as their
// context gives them, as Postgres infers an unspecified parameter's type
// (x = $1 is x's type, $1 + col the number's, LIMIT $1 bigint, $1::date
// date). Parameters are substituted into the SQL text as literals before
// a statement is planned (sluice plans text), so this only describes a
// prepared statement to its client: the Flight SQL parameter schema.
//
// The statement is bound with each $n an untyped NULL (a placeholder, by
// identity); where the binder gives an untyped NULL a type (a comparison
// or arithmetic with a typed operand, a cast, LIMIT/OFFSET), the
// placeholder's parameter takes it. The first type a parameter meets
// wins. A parameter no context types stays plan.NullType.

// paramTyping collects the types of the parameters of one statement.
type paramTyping struct {
	at    map[*plan.Expr]int // placeholder -> parameter number
	types map[int]plan.DataType
	max   int
}

// placeholder is the bound form of the parameter p: an untyped NULL
// remembered as p.
func (pt *paramTyping) placeholder(p *pg.ParamRef) *plan.Expr {
	e := nullOf(plan.NullType)
	pt.at[e] = int(p.Number)
	pt.max = max(pt.max, int(p.Number))
	return e
}

// noteParam records that e, when it is a parameter's placeholder, has
// the type t in its context.
func (b *binder) noteParam(e *plan.Expr, t plan.DataType) {
	if b.params == nil || t.ID == plan.Null {
		return
	}
	n, ok := b.params.at[e]
	if !ok {
		return
	}
	if _, typed := b.params.types[n]; !typed {
		b.params.types[n] = t
	}
}

// ParamTypes returns the types of sql's parameters $1..$n (n the highest
// one sql uses) as their contexts give them; an untyped one is
// plan.NullType. sql must bind with its parameters as NULLs.
func ParamTypes(ctx context.Context, sql string, cat Catalog, opts Options) ([]plan.DataType, error) {
	sql = rewriteNestedLiterals(sql)
	tree, quals, err := parse(sql)
	if err != nil {
		return nil, err
	}
	if len(tree.Stmts) != 1 {
		return nil, &Error{Code: CodeSyntax, Msg: "syntax error: not one statement"}
	}
	if opts.Postgres {
		if err := rewriteArrayAgg(tree); err != nil {
			return nil, err
		}
	}
	pt := &paramTyping{at: map[*plan.Expr]int{}, types: map[int]plan.DataType{}}
	b := &binder{ctx: ctx, sql: sql, cat: cat, md: &metadata{}, pos: map[*plan.Expr]int32{}, qualify: quals, postgres: opts.Postgres, params: pt}
	if _, err := b.bindStatement(tree.Stmts[0]); err != nil {
		return nil, err
	}
	out := make([]plan.DataType, pt.max)
	for i := range out {
		out[i] = plan.NullType
		if t, ok := pt.types[i+1]; ok {
			out[i] = t
		}
	}
	return out, nil
}
