package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// JOIN ... USING (a, b) and NATURAL JOIN: the join condition is the
// equality of the named columns of both sides, and each named column
// appears once: an unqualified reference (and SELECT *, where the merged
// columns come first) sees the left side's column for inner and left
// joins, the right side's for right joins, and COALESCE(left, right) for
// full joins; the sides' columns stay reachable qualified (t.a, t.*).

// usingJoin is the bound USING list of a join.
type usingJoin struct {
	names       []string
	left, right []colID
	loc         int32
}

// bindUsing adds the USING (or NATURAL) equalities to j.
func (b *binder) bindUsing(je *pg.JoinExpr, j *joinNode, lrels, rrels []*relation) (*usingJoin, error) {
	loc := exprLoc(je.Larg)
	u := &usingJoin{loc: loc}
	if je.IsNatural {
		right := map[string]bool{}
		for _, n := range visibleNames(rrels) {
			right[strings.ToLower(n)] = true
		}
		for _, n := range visibleNames(lrels) {
			if right[strings.ToLower(n)] {
				u.names = append(u.names, n)
			}
		}
	} else {
		seen := map[string]bool{}
		for _, n := range je.UsingClause {
			name := n.GetString_().GetSval()
			if seen[strings.ToLower(name)] {
				return nil, b.errorf(CodeAmbiguous, loc, "column %q appears more than once in USING clause", name)
			}
			seen[strings.ToLower(name)] = true
			u.names = append(u.names, name)
		}
	}
	for _, name := range u.names {
		side := func(rels []*relation, which string) (*plan.Expr, error) {
			sc := newScope(nil)
			sc.rels = rels
			e, err := b.resolveIn(sc, "", name, loc)
			if err != nil {
				return nil, err
			}
			if e == nil {
				return nil, b.errorf(CodeUnknownCol, loc, "column %q specified in USING clause does not exist in %s table", name, which)
			}
			return e, nil
		}
		le, err := side(lrels, "left")
		if err != nil {
			return nil, err
		}
		re, err := side(rrels, "right")
		if err != nil {
			return nil, err
		}
		t, ok := supertype(le, re)
		if !ok {
			return nil, b.errorf(CodeType, loc, "type mismatch: USING column %q has types %s and %s", name, le.Type, re.Type)
		}
		lc, err := b.cast(le, t, loc)
		if err != nil {
			return nil, err
		}
		rc, err := b.cast(re, t, loc)
		if err != nil {
			return nil, err
		}
		j.conds = append(j.conds, plan.Call(plan.OpEq, plan.BoolType, lc, rc))
		u.left, u.right = append(u.left, le.Col), append(u.right, re.Col)
	}
	return u, nil
}

// visibleNames are the names unqualified references see, in order.
func visibleNames(rels []*relation) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rels {
		for i, n := range r.names {
			if (r.hidden == nil || !r.hidden[i]) && !seen[strings.ToLower(n)] {
				seen[strings.ToLower(n)] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// finishUsing hides the sides' USING columns from unqualified references
// and puts the merged columns in front.
func (b *binder) finishUsing(j *joinNode, js *scope, u *usingJoin) (node, []*relation, error) {
	if len(u.names) == 0 {
		return j, js.rels, nil // NATURAL JOIN without common columns: a cross join
	}
	using := map[colID]bool{}
	for i := range u.left {
		using[u.left[i]], using[u.right[i]] = true, true
	}
	var rels []*relation
	merged := &relation{table: "USING", names: u.names}
	rels = append(rels, merged)
	for _, r := range js.rels {
		c := *r
		c.hidden = make([]bool, len(r.cols))
		if r.hidden != nil {
			copy(c.hidden, r.hidden)
		}
		for i, id := range r.cols {
			if using[id] {
				c.hidden[i] = true
			}
		}
		rels = append(rels, &c)
	}
	var out node = j
	switch j.typ {
	case plan.JoinRight:
		merged.cols = u.right
	case plan.JoinFull:
		p := &projectNode{input: j}
		for _, id := range j.output() {
			p.exprs = append(p.exprs, b.md.ref(id))
			p.cols = append(p.cols, id)
		}
		for i := range u.left {
			l, r := b.md.ref(u.left[i]), b.md.ref(u.right[i])
			e, err := b.buildCase([]*plan.Expr{plan.Call(plan.OpIsNotNull, plan.BoolType, l)}, []*plan.Expr{l}, r, u.loc)
			if err != nil {
				return nil, nil, err
			}
			id := b.md.add(column{name: u.names[i], typ: e.Type, nullable: true})
			p.exprs = append(p.exprs, e)
			p.cols = append(p.cols, id)
			merged.cols = append(merged.cols, id)
		}
		out = p
	default:
		merged.cols = u.left
	}
	return out, rels, nil
}
