package planner

import (
	"fmt"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// Explain renders a planned query as stable text in three sections: the
// optimized logical plan (with the rules that changed it), the physical
// plan of each stage, and the stage graph.
//
//	logical_plan (rules: push_down_filters, prune_columns, reorder_joins)
//	  Sort: ...
//	    Join: type=inner on=[(l_orderkey = o_orderkey)]
//	physical_plan
//	  Stage 2 [output: hash(l_returnflag) x8, inputs: 0, 1]
//	    Aggregate: mode=partial ... schema=[...]
//	      HashJoin: type=inner keys=[l_orderkey@0 = o_orderkey@0] schema=[...]
//	        Exchange: stage=0 hash(l_orderkey) x8 schema=[...]
//	        Exchange: stage=1 broadcast x1 schema=[...]
//	stage_graph
//	  stage 0 -> stage 2: hash(l_orderkey) x8
//	  result: stage 4, columns=[...]
//
// Logical joins show their type and condition (CrossJoin: for an inner
// join without one); physical joins their keys, residual filter and NOT IN
// semantics (null_aware); every exchange leaf the partitioning of the
// stage it reads, so broadcast and partitioned joins read at a glance.
func Explain(p *Planned) string {
	var b strings.Builder
	b.WriteString("logical_plan")
	if len(p.Rules) > 0 {
		fmt.Fprintf(&b, " (rules: %s)", strings.Join(p.Rules, ", "))
	}
	b.WriteByte('\n')
	for _, line := range strings.Split(strings.TrimRight(p.Logical, "\n"), "\n") {
		b.WriteString("  " + line + "\n")
	}
	b.WriteString(FormatGraph(p.Graph))
	return b.String()
}

// FormatGraph renders a stage graph: the physical_plan and stage_graph
// sections of Explain.
func FormatGraph(g *plan.Graph) string {
	var b strings.Builder
	b.WriteString("physical_plan\n")
	for _, s := range g.Stages {
		fmt.Fprintf(&b, "  Stage %d [output: %s", s.ID, formatPartitioning(s.Output, s.Root))
		if len(s.Inputs) > 0 {
			fmt.Fprintf(&b, ", inputs: %s", joinInts(s.Inputs))
		}
		b.WriteString("]")
		if s.ID == g.Result {
			b.WriteString(" result")
		}
		b.WriteByte('\n')
		writeNode(&b, g, s.Root, 2)
	}
	b.WriteString("stage_graph\n")
	for _, s := range g.Stages {
		for _, c := range g.Consumers(s.ID) {
			fmt.Fprintf(&b, "  stage %d -> stage %d: %s\n", s.ID, c, formatPartitioning(s.Output, s.Root))
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

func formatPartitioning(p plan.Partitioning, root *plan.Node) string {
	switch p.Kind {
	case plan.PartitionHash:
		keys := make([]string, len(p.Keys))
		for i, k := range p.Keys {
			if root != nil && k < len(root.Schema) {
				keys[i] = root.Schema[k].Name
			} else {
				keys[i] = fmt.Sprintf("#%d", k)
			}
		}
		return fmt.Sprintf("hash(%s) x%d", strings.Join(keys, ", "), p.Count)
	case plan.PartitionSingle:
		return "single"
	}
	return fmt.Sprintf("%s x%d", p.Kind, p.Count)
}

func writeNode(b *strings.Builder, g *plan.Graph, n *plan.Node, depth int) {
	b.WriteString(strings.Repeat("  ", depth))
	b.WriteString(describeNode(n))
	if n.Kind == plan.KindExchange {
		if up := g.Stage(n.Stage); up != nil {
			b.WriteString(" " + formatPartitioning(up.Output, up.Root))
		}
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
		writeNode(b, g, c, depth+1)
	}
}

func physExprs(es []*plan.Expr, names plan.Schema) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
		if names != nil && i < len(names) && exprString(e) != names[i].Name {
			parts[i] += " AS " + names[i].Name
		}
	}
	return strings.Join(parts, ", ")
}

func describeNode(n *plan.Node) string {
	switch n.Kind {
	case plan.KindScan:
		s := fmt.Sprintf("Scan: %s format=%s columns=[%s]", n.Scan.Table, n.Scan.Format, strings.Join(n.Scan.Columns, ", "))
		if n.Scan.Filter != nil {
			s += " pruning=" + n.Scan.Filter.String()
		}
		return s
	case plan.KindExchange:
		if n.Whole {
			return fmt.Sprintf("Exchange: stage=%d whole", n.Stage)
		}
		return fmt.Sprintf("Exchange: stage=%d", n.Stage)
	case plan.KindEmpty:
		return "Empty:"
	case plan.KindFilter:
		return "Filter: " + n.Predicate.String()
	case plan.KindProject:
		return "Project: " + physExprs(n.Exprs, n.Schema)
	case plan.KindAggregate:
		a := n.Aggregate
		aggs := make([]string, len(a.Aggs))
		for i, c := range a.Aggs {
			switch {
			case a.Mode == plan.AggFinal:
				aggs[i] = c.Name
			case c.Func == plan.AggCountStar:
				aggs[i] = "count(*)"
			default:
				aggs[i] = fmt.Sprintf("%s(%s)", c.Func, c.Arg)
			}
			aggs[i] += ":" + c.Type.String()
		}
		return fmt.Sprintf("Aggregate: mode=%s group_by=[%s] aggs=[%s]", a.Mode, physExprs(a.GroupBy, nil), strings.Join(aggs, ", "))
	case plan.KindWindow:
		return describeWindow(n)
	case plan.KindExpand:
		sets := make([]string, len(n.Expand))
		for i, p := range n.Expand {
			sets[i] = "[" + physExprs(p, nil) + "]"
		}
		return "Expand: " + strings.Join(sets, ", ")
	case plan.KindSort:
		keys := make([]string, len(n.SortKeys))
		for i, k := range n.SortKeys {
			keys[i] = sortKey{expr: k.Expr, desc: k.Desc, nullsFirst: k.NullsFirst}.physString()
		}
		s := "Sort: [" + strings.Join(keys, ", ") + "]"
		if n.Limit >= 0 {
			s += fmt.Sprintf(" limit=%d", n.Limit)
		}
		return s
	case plan.KindHashJoin, plan.KindCrossJoin:
		j := n.Join
		var b strings.Builder
		if n.Kind == plan.KindHashJoin {
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
	case plan.KindUnion:
		return "Union:"
	case plan.KindLimit:
		if n.Limit < 0 {
			return fmt.Sprintf("Limit: offset=%d limit=none", n.Offset)
		}
		return fmt.Sprintf("Limit: offset=%d limit=%d", n.Offset, n.Limit)
	}
	return string(n.Kind) + ":"
}

func (k sortKey) physString() string {
	s := k.expr.String()
	if k.desc {
		s += " DESC"
	} else {
		s += " ASC"
	}
	if k.nullsFirst {
		return s + " NULLS FIRST"
	}
	return s + " NULLS LAST"
}
