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
// sections of Explain (plan.FormatGraph, with projections named as the
// binder names select-list expressions).
func FormatGraph(g *plan.Graph) string { return plan.FormatGraph(g, exprString) }
