package plan

import (
	"fmt"
	"strings"
)

// FormatGraph renders a stage graph as EXPLAIN shows it: the physical_plan
// section (every stage's fragment, one operator a line) and the
// stage_graph section (who reads whom, through which partitioning).
//
// exprName renders an expression the way the SQL front end names an
// unaliased select-list item: a projection prints "AS name" only where its
// output name differs from it. With nil, Expr.String is used.
func FormatGraph(g *Graph, exprName func(*Expr) string) string {
	if exprName == nil {
		exprName = (*Expr).String
	}
	var b strings.Builder
	b.WriteString("physical_plan\n")
	for _, s := range g.Stages {
		fmt.Fprintf(&b, "  Stage %d [output: %s", s.ID, FormatPartitioning(s.Output, s.Root))
		if len(s.Inputs) > 0 {
			fmt.Fprintf(&b, ", inputs: %s", joinInts(s.Inputs))
		}
		if len(s.Summarize) > 0 {
			names := make([]string, len(s.Summarize))
			for i, c := range s.Summarize {
				names[i] = fmt.Sprintf("#%d", c)
				if s.Root != nil && c >= 0 && c < len(s.Root.Schema) {
					names[i] = s.Root.Schema[c].Name
				}
			}
			fmt.Fprintf(&b, ", summarize: %s", strings.Join(names, ", "))
		}
		if s.FilterBuild {
			b.WriteString(", filter build")
		}
		b.WriteString("]")
		if s.ID == g.Result {
			b.WriteString(" result")
		}
		b.WriteByte('\n')
		writeNode(&b, g, s.Root, 2, exprName)
	}
	b.WriteString("stage_graph\n")
	for _, s := range g.Stages {
		for _, c := range g.Consumers(s.ID) {
			fmt.Fprintf(&b, "  stage %d -> stage %d: %s\n", s.ID, c, FormatPartitioning(s.Output, s.Root))
		}
	}
	fmt.Fprintf(&b, "  result: stage %d, columns=[%s]\n", g.Result, strings.Join(g.Columns, ", "))
	return b.String()
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}

// FormatPartitioning renders a stage's output partitioning: hash(keys) xN,
// single, or broadcast x1. Hash keys are named from root, the stage's root
// node (its output schema); with root nil they show as #column.
func FormatPartitioning(p Partitioning, root *Node) string {
	switch p.Kind {
	case PartitionHash:
		keys := make([]string, len(p.Keys))
		for i, k := range p.Keys {
			if root != nil && k >= 0 && k < len(root.Schema) {
				keys[i] = root.Schema[k].Name
			} else {
				keys[i] = fmt.Sprintf("#%d", k)
			}
		}
		return fmt.Sprintf("hash(%s) x%d", strings.Join(keys, ", "), p.Count)
	case PartitionSingle:
		return "single"
	}
	return fmt.Sprintf("%s x%d", p.Kind, p.Count)
}

func writeNode(b *strings.Builder, g *Graph, n *Node, depth int, exprName func(*Expr) string) {
	b.WriteString(strings.Repeat("  ", depth))
	var up *Stage
	if n.Kind == KindExchange {
		up = g.Stage(n.Stage)
	}
	if up != nil {
		// The partitioning read, before the filters on the read.
		b.WriteString(exchangeHead(n) + " " + FormatPartitioning(up.Output, up.Root) + exchangeFilters(n))
	} else {
		b.WriteString(describeNode(n, exprName))
	}
	b.WriteString(" schema=[")
	for i, f := range n.Schema {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s:%s", f.Name, f.Type)
	}
	b.WriteString("]\n")
	for _, c := range n.Inputs {
		writeNode(b, g, c, depth+1, exprName)
	}
}

func physExprs(es []*Expr, names Schema, exprName func(*Expr) string) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
		if names != nil && i < len(names) && exprName(e) != names[i].Name {
			parts[i] += " AS " + names[i].Name
		}
	}
	return strings.Join(parts, ", ")
}

func describeNode(n *Node, exprName func(*Expr) string) string {
	switch n.Kind {
	case KindScan:
		cols := make([]string, len(n.Scan.Columns))
		for i := range cols {
			cols[i] = n.Scan.ColumnRead(i)
		}
		s := fmt.Sprintf("Scan: %s format=%s columns=[%s]", n.Scan.Table, n.Scan.Format, strings.Join(cols, ", "))
		if n.Scan.Filter != nil {
			s += " pruning=" + shortExpr(n.Scan.Filter)
		}
		if len(n.Scan.RuntimeFilters) > 0 {
			s += " runtime_filters=[" + runtimeFilters(n.Scan.RuntimeFilters) + "]"
		}
		if n.Scan.Inline {
			s += fmt.Sprintf(" inline files=%d (every task reads them)", len(n.Scan.Files))
		}
		return s
	case KindExchange:
		return exchangeHead(n) + exchangeFilters(n)
	case KindEmpty:
		return "Empty:"
	case KindValues:
		return fmt.Sprintf("Values: rows=%d", len(n.Rows))
	case KindWindow:
		w := n.Window
		keys := make([]string, len(w.OrderBy))
		for i, k := range w.OrderBy {
			keys[i] = k.String()
		}
		calls := make([]string, len(w.Calls))
		for i, c := range w.Calls {
			args := make([]string, len(c.Args))
			for j, a := range c.Args {
				args[j] = a.String()
			}
			call := string(c.Func) + "(" + strings.Join(args, ", ") + ")"
			if c.Func == WindowFunc(AggCountStar) {
				call = "count(*)"
			}
			if c.Func.UsesFrame() {
				call += " " + c.Frame.String()
			}
			calls[i] = call + ":" + c.Type.String()
		}
		return fmt.Sprintf("Window: partition_by=[%s] order_by=[%s] calls=[%s]",
			physExprs(w.PartitionBy, nil, exprName), strings.Join(keys, ", "), strings.Join(calls, ", "))
	case KindUnnest:
		return "Unnest: " + physExprs(n.Exprs, nil, exprName)
	case KindExpand:
		sets := make([]string, len(n.Expand))
		for i, p := range n.Expand {
			sets[i] = "[" + physExprs(p, nil, exprName) + "]"
		}
		return "Expand: " + strings.Join(sets, ", ")
	case KindWrite:
		return fmt.Sprintf("Write: format=%s prefix=%s columns=[%s]", n.Write.Format, n.Write.Prefix, strings.Join(n.Write.Columns, ", "))
	case KindFilter:
		if n.Bloom != nil {
			return fmt.Sprintf("Filter: %s AND bloom(#%d, %d KiB)", shortExpr(n.Predicate), n.Bloom.Column, len(n.Bloom.Bits)>>10)
		}
		return "Filter: " + shortExpr(n.Predicate)
	case KindProject:
		return "Project: " + physExprs(n.Exprs, n.Schema, exprName)
	case KindAggregate:
		a := n.Aggregate
		aggs := make([]string, len(a.Aggs))
		for i, c := range a.Aggs {
			switch {
			case a.Mode == AggFinal:
				aggs[i] = c.Name
			case c.Func == AggCountStar:
				aggs[i] = "count(*)"
			default:
				args := []string{c.Arg.String()}
				for _, m := range c.More {
					args = append(args, m.String())
				}
				aggs[i] = fmt.Sprintf("%s(%s)", c.Func, strings.Join(args, ", "))
			}
			aggs[i] += ":" + c.Type.String()
		}
		return fmt.Sprintf("Aggregate: mode=%s group_by=[%s] aggs=[%s]", a.Mode, physExprs(a.GroupBy, nil, exprName), strings.Join(aggs, ", "))
	case KindSort:
		keys := make([]string, len(n.SortKeys))
		for i, k := range n.SortKeys {
			keys[i] = k.String()
		}
		s := "Sort: [" + strings.Join(keys, ", ") + "]"
		if n.Limit >= 0 {
			s += fmt.Sprintf(" limit=%d", n.Limit)
		}
		return s
	case KindHashJoin, KindCrossJoin:
		j := n.Join
		var b strings.Builder
		if n.Kind == KindHashJoin {
			fmt.Fprintf(&b, "HashJoin: type=%s", j.Type)
			keys := make([]string, len(j.LeftKeys))
			for i := range j.LeftKeys {
				keys[i] = fmt.Sprintf("%s = %s", j.LeftKeys[i], j.RightKeys[i])
			}
			fmt.Fprintf(&b, " keys=[%s]", strings.Join(keys, ", "))
		} else {
			fmt.Fprintf(&b, "CrossJoin: type=%s", j.Type)
		}
		if j.Filter != nil {
			b.WriteString(" filter=" + j.Filter.String())
		}
		if j.NullAware {
			b.WriteString(" null_aware")
		}
		return b.String()
	case KindUnion:
		return "Union:"
	case KindLimit:
		if n.Limit < 0 {
			return fmt.Sprintf("Limit: offset=%d limit=none", n.Offset)
		}
		return fmt.Sprintf("Limit: offset=%d limit=%d", n.Offset, n.Limit)
	}
	return string(n.Kind) + ":"
}

// String renders k for EXPLAIN: the expression, ASC or DESC, and where
// NULLs go.
func (k SortKey) String() string {
	s := k.Expr.String()
	if k.Desc {
		s += " DESC"
	} else {
		s += " ASC"
	}
	if k.NullsFirst {
		return s + " NULLS FIRST"
	}
	return s + " NULLS LAST"
}

// String renders a window frame for EXPLAIN: MODE BETWEEN start AND end.
func (f Frame) String() string {
	bound := func(b FrameBound) string {
		switch b.Kind {
		case BoundPreceding:
			return fmt.Sprintf("%g PRECEDING", b.Offset)
		case BoundFollowing:
			return fmt.Sprintf("%g FOLLOWING", b.Offset)
		}
		return strings.ToUpper(strings.ReplaceAll(string(b.Kind), "_", " "))
	}
	s := fmt.Sprintf("%s BETWEEN %s AND %s", strings.ToUpper(string(f.Mode)), bound(f.Start), bound(f.End))
	if f.Exclude != ExcludeNoOthers {
		s += " EXCLUDE " + strings.ToUpper(strings.ReplaceAll(string(f.Exclude), "_", " "))
	}
	return s
}

// maxShownIn is the most IN list values plan text shows (a runtime
// filter's list holds up to MaxSummaryValues).
const maxShownIn = 8

// shortExpr renders e as Expr.String does, but with IN lists longer than
// maxShownIn cut to their first values and a count of the rest.
func shortExpr(e *Expr) string {
	long := false
	var find func(*Expr)
	find = func(x *Expr) {
		if x == nil || long {
			return
		}
		long = x.Op == OpIn && len(x.Args) > maxShownIn+1
		for _, a := range x.Args {
			find(a)
		}
	}
	if find(e); !long {
		return e.String()
	}
	var cut func(*Expr) *Expr
	cut = func(x *Expr) *Expr {
		if x == nil {
			return nil
		}
		c := *x
		if x.Op == OpIn && len(x.Args) > maxShownIn+1 {
			more := len(x.Args) - 1 - maxShownIn
			c.Args = append(append([]*Expr(nil), x.Args[:maxShownIn+1]...),
				&Expr{Op: OpColumn, Col: -1, Name: fmt.Sprintf("...%d more", more)})
			return &c
		}
		c.Args = make([]*Expr, len(x.Args))
		for i, a := range x.Args {
			c.Args[i] = cut(a)
		}
		return &c
	}
	return strings.ReplaceAll(cut(e).String(), "@-1", "")
}

func runtimeFilters(fs []RuntimeFilter) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, "; ")
}

// exchangeHead describes an exchange leaf: the stage it reads, and how.
func exchangeHead(n *Node) string {
	s := fmt.Sprintf("Exchange: stage=%d", n.Stage)
	switch {
	case n.SplitObjects:
		s += " whole, objects split among tasks"
	case n.Whole:
		s += " whole"
	}
	return s
}

// exchangeFilters describes the runtime filters on an exchange leaf's
// read ("" when it has none).
func exchangeFilters(n *Node) string {
	var s string
	if n.Predicate != nil {
		s += " filter=" + shortExpr(n.Predicate)
	}
	if n.Bloom != nil {
		s += fmt.Sprintf(" bloom=#%d", n.Bloom.Column)
	}
	if len(n.RuntimeFilters) > 0 {
		s += " runtime_filters=[" + runtimeFilters(n.RuntimeFilters) + "]"
	}
	return s
}
