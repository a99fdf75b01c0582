package planner

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// TestNestedPaths: which columns the scans of events read, and what they
// prune by. A struct column used only through its fields is read as those
// fields (nested_paths fired); one used whole anywhere is read whole.
func TestNestedPaths(t *testing.T) {
	for _, tc := range []struct {
		sql   string
		scans []string // each scan's columns, in plan order
		fired bool
		prune string // a scan's pruning filter ("" none)
	}{
		{sql: `select e_info.a from events`, scans: []string{"[e_info.a]"}, fired: true},
		{sql: `select e_info.a from events where e_info.a > 5`, scans: []string{"[e_info.a]"}, fired: true, prune: "(e_info.a@0 > 5)"},
		{sql: `select e_info.c.x, e_info.c from events`, scans: []string{"[e_info.c]"}, fired: true},
		{sql: `select e_info.c.x, e_info.c.y, e_info['b'] from events`, scans: []string{"[e_info.b e_info.c.x e_info.c.y]"}, fired: true},
		{sql: `select e_id from events where e_info.c.y = 'k'`, scans: []string{"[e_id e_info.c.y]"}, fired: true, prune: "(e_info.c.y@1 = 'k')"},
		{sql: `select struct_extract(e_info, 'A') from events`, scans: []string{"[e_info.a]"}, fired: true},
		{sql: `select e_info.b, row_number() over (partition by e_info.a order by e_id) from events`, scans: []string{"[e_id e_info.a e_info.b]"}, fired: true},
		{sql: `select e_info.a from events union all select e_info.b::bigint from events`, scans: []string{"[e_info.a]", "[e_info.b]"}, fired: true},
		{sql: `select (select max(e_info.a) from events), e_id from events`, scans: []string{"[e_id]", "[e_info.a]"}, fired: true},
		{sql: `select unnest(e_tags), e_info.b from events`, scans: []string{"[e_info.b e_tags]"}, fired: true},
		{sql: `select e_info.c.x, count(*) from events group by e_info.c.x`, scans: []string{"[e_info.c.x]"}, fired: true},
		// Used whole: read whole.
		{sql: `select e_info, e_info.a from events where e_info.a > 5`, scans: []string{"[e_info]"}, prune: "(struct_extract(e_info@0, 'a') > 5)"},
		{sql: `select count(*) from events group by e_info`, scans: []string{"[e_info]"}},
		{sql: `select e_info from events union all select e_info from events`, scans: []string{"[e_info]", "[e_info]"}},
		{sql: `select e_id from events where e_info is not null and e_info.a = 1`, scans: []string{"[e_id e_info]"},
			prune: "((e_info@1 IS NOT NULL) AND (struct_extract(e_info@1, 'a') = 1))"},
		{sql: `select e_id from events order by e_info`, scans: []string{"[e_id e_info]"}},
		{sql: `select a.e_id from events a join events b on a.e_info = b.e_info where a.e_info.a = 1`, scans: []string{"[e_id e_info]", "[e_info]"},
			prune: "(struct_extract(a.e_info@1, 'a') = 1)"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			p, err := Plan(context.Background(), tc.sql, testCatalog, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var scans []string
			prune := ""
			for _, st := range p.Graph.Stages {
				walkNodes(st.Root, func(n *plan.Node) {
					if n.Kind == plan.KindScan {
						names := n.Scan.ColumnNames()
						scans = append(scans, fmt.Sprint(names))
						if n.Scan.Filter != nil {
							prune = n.Scan.Filter.String()
						}
					}
				})
			}
			slices.Sort(scans)
			want := slices.Clone(tc.scans)
			slices.Sort(want)
			if !slices.Equal(scans, want) {
				t.Errorf("scans read %v, want %v\n%s", scans, want, Explain(p))
			}
			if fired := slices.Contains(p.Rules, "nested_paths"); fired != tc.fired {
				t.Errorf("nested_paths fired: %v, want %v", fired, tc.fired)
			}
			if prune != tc.prune {
				t.Errorf("pruning filter %q, want %q", prune, tc.prune)
			}
		})
	}
}

func walkNodes(n *plan.Node, f func(*plan.Node)) {
	if n == nil {
		return
	}
	f(n)
	for _, in := range n.Inputs {
		walkNodes(in, f)
	}
}
