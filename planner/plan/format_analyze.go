package plan

import (
	"strings"
)

// FormatFragment renders a stage fragment one operator a line, indented
// from depth, numbering nodes in pre-order from root (0) as per-operator
// metrics do (exec.NodeIDs). annotate, when set, returns text appended to
// a node's line (EXPLAIN ANALYZE's metrics=[...]); "" appends nothing.
func FormatFragment(root *Node, depth int, exprName func(*Expr) string, annotate func(id int, n *Node) string) string {
	if exprName == nil {
		exprName = (*Expr).String
	}
	var b strings.Builder
	id := 0
	var walk func(n *Node, depth int)
	walk = func(n *Node, depth int) {
		if n == nil {
			return
		}
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(describeNode(n, exprName))
		if annotate != nil {
			if s := annotate(id, n); s != "" {
				b.WriteString(" " + s)
			}
		}
		b.WriteByte('\n')
		id++
		for _, c := range n.Inputs {
			walk(c, depth+1)
		}
	}
	walk(root, depth)
	return b.String()
}
