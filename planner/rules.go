package planner

import (
	"fmt"

	"github.com/sluicedb/sluice/planner/plan"
)

// A logicalRule rewrites a whole logical plan. Rules must keep the plan's
// output (columns and rows) unchanged; each one is idempotent. A rule that
// meets a plan it cannot handle returns an *Error (SL005).
type logicalRule interface {
	name() string
	apply(root node, rc *ruleCtx) (node, error)
}

// ruleCtx is what rules may use besides the plan.
type ruleCtx struct {
	md   *metadata
	sql  string
	opts Options
}

// unsupported builds an SL005 error at a parser location.
func (rc *ruleCtx) unsupported(loc int32, what string) *Error {
	return &Error{Code: CodeUnsupported, Pos: charPos(rc.sql, loc), Msg: "unsupported: " + what}
}

// logicalRules run in this order. The order is the contract:
//
//  1. decorrelate_subqueries first: until it ran, subquery joins still
//     refer to columns of their left side, which no other rule expects;
//     it turns their correlated conditions into join conditions that the
//     next rule moves.
//  2. rewrite_sums next (rule_sum_rewrite.go): several sum(x + k) of one
//     column become sum(x) and count(x) under a projection; after
//     decorrelation, whose patterns expect a subquery's aggregation as
//     the binder built it, and before the rules that move filters and
//     prune columns through the projection it adds.
//  3. push_down_filters moves every condition as low as it can go: into
//     scans (for row-group pruning), onto the joins whose two sides it
//     relates, turning outer joins into inner ones where a condition
//     rejects their NULL rows.
//  4. prune_columns, so the scans read only what is used and the next
//     rules' size estimates count only those columns.
//  5. nested_paths (rule_nested_paths.go) after the filters reached the
//     scans, so a pushed filter on a struct field becomes one on the
//     field's column, and after prune_columns, so that a struct column
//     only passed on unused is no use of it whole.
//     list_fields (rule_list_fields.go) right after, so that it also
//     marks the list fields nested_paths made of struct columns.
//  6. reorder_joins picks the join order and build sides from estimated
//     sizes; it keeps every condition on the lowest join that has its
//     columns.
//  7. prune_columns again: the reordered joins pass on only the columns
//     used above them.
var logicalRules = []logicalRule{
	decorrelateSubqueries{},
	rewriteSums{},
	pushDownFilters{},
	pruneColumns{},
	nestedPaths{},
	listFields{},
	reorderJoins{},
	pruneColumns{},
}

// optimize runs the logical rules and returns the plan, its text
// (formatLogical) and the names of the rules that changed it. A rule
// changed the plan when its text changed; each rule's "after" is the next
// one's "before", so a plan is formatted once per rule (its text is
// proportional to the query's: a 60,000-value IN list is formatted 8
// times, not 15).
func optimize(root node, rc *ruleCtx, outerRefs map[colID]bool) (node, string, []string, error) {
	var fired []string
	text := formatLogical(root, rc.md)
	for _, r := range logicalRules {
		var err error
		if root, err = r.apply(root, rc); err != nil {
			return nil, "", nil, err
		}
		if after := formatLogical(root, rc.md); after != text {
			fired = append(fired, r.name())
			text = after
		}
	}
	if err := checkColumns(root, rc, outerRefs); err != nil {
		return nil, "", nil, err
	}
	return root, text, fired, nil
}

// checkColumns verifies that every operator only reads columns its inputs
// produce. A correlated reference left over where decorrelation could not
// reach (say, a subquery in the select list of a grouped query that refers
// to an ungrouped column) is the user's SL005; anything else is a bug.
func checkColumns(root node, rc *ruleCtx, outerRefs map[colID]bool) error {
	var err error
	var walk func(n node)
	walk = func(n node) {
		if err != nil {
			return
		}
		avail := map[colID]bool{}
		for _, c := range n.children() {
			for _, id := range c.output() {
				avail[id] = true
			}
		}
		if s, ok := n.(*scanNode); ok {
			avail = colSet(s.cols)
		}
		for _, e := range nodeExprs(n) {
			walkExpr(e, func(x *plan.Expr) {
				if err == nil && x.Op == plan.OpColumn && !avail[x.Col] {
					if outerRefs[x.Col] {
						err = rc.unsupported(-1, fmt.Sprintf("correlated reference to %s in this position", x.Name))
					} else {
						err = fmt.Errorf("planner: internal error: %s reads column %s (#%d) its inputs do not produce", n.describe(rc.md), x.Name, x.Col)
					}
				}
			})
		}
		for _, c := range n.children() {
			walk(c)
		}
	}
	walk(root)
	return err
}

func wrapFilter(n node, conds []*plan.Expr) node {
	if len(conds) == 0 {
		return n
	}
	return &filterNode{input: n, conds: conds}
}

// substCols replaces column references by expressions.
func substCols(e *plan.Expr, subst map[colID]*plan.Expr) *plan.Expr {
	return substTopDown(e, func(x *plan.Expr) *plan.Expr {
		if x.Op == plan.OpColumn {
			if s, ok := subst[x.Col]; ok {
				return s
			}
		}
		return nil
	})
}

func copySet(s map[colID]bool) map[colID]bool {
	c := make(map[colID]bool, len(s))
	for k, v := range s {
		c[k] = v
	}
	return c
}
