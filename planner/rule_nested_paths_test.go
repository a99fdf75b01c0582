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
		lists bool   // list_fields fired
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
		// Whole for nested_paths, but its NULLs are any leaf's: the
		// struct is read with the field used only (list_fields).
		{sql: `select e_id from events where e_info is not null and e_info.a = 1`, scans: []string{"[e_id e_info{a}]"},
			prune: "((e_info@1 IS NOT NULL) AND (struct_extract(e_info@1, 'a') = 1))", lists: true},
		{sql: `select count(e_info), count(*) filter (where e_info is null) from events`, scans: []string{"[e_info{a}]"}, lists: true},
		// Maps: the keys alone for map_keys and the shape (the key leaf),
		// whole for a value.
		{sql: `select map_keys(e_attrs), cardinality(e_attrs), e_attrs is null from events`, scans: []string{"[e_attrs{key}]"}, lists: true},
		{sql: `select e_attrs['x'], map_keys(e_attrs) from events`, scans: []string{"[e_attrs]"}},
		{sql: `select map_values(e_attrs) from events`, scans: []string{"[e_attrs]"}},
		{sql: `select count(e_attrs) from events`, scans: []string{"[e_attrs{key}]"}, lists: true},
		{sql: `select e_id from events order by e_info`, scans: []string{"[e_id e_info]"}},
		{sql: `select a.e_id from events a join events b on a.e_info = b.e_info where a.e_info.a = 1`, scans: []string{"[e_id e_info]", "[e_info]"},
			prune: "(struct_extract(a.e_info@1, 'a') = 1)"},
		// Lists of structs: the element fields used (list_fields).
		{sql: `select e_items[1].a from events`, scans: []string{"[e_items{a}]"}, lists: true},
		{sql: `select e_items[1].c.x, e_items[-1].a from events where len(e_id::varchar) > 1`, scans: []string{"[e_id e_items{a, c.x}]"}, lists: true},
		{sql: `select x.a, x.c.y from events, unnest(e_items) as u(x)`, scans: []string{"[e_items{a, c.y}]"}, lists: true},
		{sql: `select struct_extract(unnest(e_items), 'b') from events`, scans: []string{"[e_items{b}]"}, lists: true},
		{sql: `select e_items[2:3][1].b from events`, scans: []string{"[e_items{b}]"}, lists: true},
		{sql: `select e_deep.l[1].p from events`, scans: []string{"[e_deep.l{p}]"}, fired: true, lists: true},
		{sql: `select x.q, e_deep.k from events, unnest(e_deep.l) as u(x)`, scans: []string{"[e_deep.l{q} e_deep.k]"}, fired: true, lists: true},
		{sql: `select e_items[1].c from events`, scans: []string{"[e_items{c}]"}, lists: true},
		// Lists used whole, or every field used: read whole.
		// Only the shape (len, IS NULL): one leaf, a number's.
		{sql: `select e_items[1].b, len(e_items) from events`, scans: []string{"[e_items{b}]"}, lists: true},
		{sql: `select len(e_items), e_items is null from events`, scans: []string{"[e_items{a}]"}, lists: true},
		{sql: `select e_items[1].c is null, len(e_deep.l) from events`, scans: []string{"[e_items{c.x} e_deep.l{p}]"}, fired: true, lists: true},
		{sql: `select e_items[1].c.y, e_items[2].c is not null from events`, scans: []string{"[e_items{c.y}]"}, lists: true},
		{sql: `select count(*) from events, unnest(e_items) as u(x) where x is not null`, scans: []string{"[e_items{a}]"}, lists: true},
		{sql: `select e_items[1] from events`, scans: []string{"[e_items]"}},
		{sql: `select x, x.a from events, unnest(e_items) as u(x)`, scans: []string{"[e_items]"}},
		{sql: `select count(x.a) from events, unnest(e_items) as u(x) group by x`, scans: []string{"[e_items]"}},
		{sql: `select e_items[1].a, e_items[1].b, e_items[1].c from events`, scans: []string{"[e_items]"}},
		{sql: `select e_items[1].a from events union all select e_items[1].a from (select e_items from events)`, scans: []string{"[e_items{a}]", "[e_items]"}, lists: true},
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
						var names []string
						for i := range n.Scan.Columns {
							names = append(names, n.Scan.ColumnRead(i))
						}
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
			if fired := slices.Contains(p.Rules, "list_fields"); fired != tc.lists {
				t.Errorf("list_fields fired: %v, want %v", fired, tc.lists)
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
