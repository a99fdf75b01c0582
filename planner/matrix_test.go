package planner

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestExprMatrix combines operands of every type with every operator in
// several clauses. Each combination must either plan into a graph whose
// expressions agree with their input schemas (checkNode) and whose
// comparisons and additions have operands of one type, or fail with a
// coded *Error; never panic.
func TestExprMatrix(t *testing.T) {
	atoms := []string{
		"l_orderkey", "l_quantity", "l_tax", "l_comment", "l_shipdate",
		"1", "-7", "0.06", "2.5e0", "'x'", "'1998-01-01'", "'12'", "date '1995-06-30'", "true", "null",
		"(l_quantity * l_discount)", "cast(l_orderkey as double)", "(l_tax > 0)",
	}
	binary := []string{"+", "-", "*", "/", "%", "=", "<>", "<", ">=", "and", "or", "like"}
	var exprs []string
	for _, a := range atoms {
		for _, b := range atoms {
			for _, op := range binary {
				exprs = append(exprs, fmt.Sprintf("%s %s %s", a, op, b))
			}
			exprs = append(exprs,
				fmt.Sprintf("%s in (%s, %s)", a, b, a),
				fmt.Sprintf("%s between %s and %s", a, b, a),
				fmt.Sprintf("case when l_tax > 0 then %s else %s end", a, b),
				fmt.Sprintf("coalesce(%s, %s)", a, b),
			)
		}
		exprs = append(exprs, "-"+a, "not "+a, a+" is null", "extract(year from "+a+")", "sum("+a+")", "avg("+a+")", "min("+a+")")
	}
	shapes := []string{
		"select %s from lineitem",
		"select l_returnflag from lineitem where %s",
		"select l_returnflag, count(*) from lineitem group by l_returnflag having %s",
		"select max(%s) from lineitem group by l_linestatus",
		"select l_orderkey from lineitem order by %s limit 3",
	}
	planned, failed := 0, 0
	for _, e := range exprs {
		for _, shape := range shapes {
			q := fmt.Sprintf(shape, e)
			p, err := func() (p *Planned, err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
					}
				}()
				return Plan(context.Background(), q, testCatalog, Options{})
			}()
			if err != nil {
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("%s: %v", q, err)
				}
				failed++
				continue
			}
			planned++
			for _, s := range p.Graph.Stages {
				plan.Walk(s.Root, func(n *plan.Node) { checkNode(t, q, n) })
			}
			if t.Failed() {
				t.FailNow()
			}
		}
	}
	t.Logf("%d planned, %d rejected", planned, failed)
}
