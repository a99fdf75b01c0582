package planner

import "github.com/sluicedb/sluice/planner/plan"

// FormatFragment renders a stage fragment as EXPLAIN ANALYZE shows it
// (plan.FormatFragment with projections named as the binder names them).
func FormatFragment(root *plan.Node, depth int, annotate func(id int, n *plan.Node) string) string {
	return plan.FormatFragment(root, depth, exprString, annotate)
}
