package planner

import "testing"

// TestMaskGroupByAll checks the same-length rewrite of DuckDB's GROUP BY
// ALL and that it leaves Postgres's GROUP BY ALL <items>, strings and
// comments alone.
func TestMaskGroupByAll(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"select a, count(*) from t group by all", "select a, count(*) from t group by () "},
		{"select a from t GROUP BY ALL having count(*) > 1", "select a from t GROUP BY ()  having count(*) > 1"},
		{"select (select a from t group by all) x", "select (select a from t group by () ) x"},
		{"select a from t group by all a", "select a from t group by all a"},
		{"select 'group by all' from t", "select 'group by all' from t"},
		{"select a from t -- group by all", "select a from t -- group by all"},
		{"select a from t group by all + 1", "select a from t group by all + 1"},
	} {
		if got := maskGroupByAll(tc.in); got != tc.want {
			t.Errorf("maskGroupByAll(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestMaskOrderByAll checks the same-length rewrite of DuckDB's ORDER BY
// ALL and that strings, comments and ORDER BY ALL-like text that is not
// the whole clause are left alone.
func TestMaskOrderByAll(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"select a, b from t order by all", "select a, b from t order by '' "},
		{"select a from t ORDER BY ALL DESC NULLS FIRST limit 3", "select a from t ORDER BY ''  DESC NULLS FIRST limit 3"},
		{"select * from (select a from t order by all limit 2) x", "select * from (select a from t order by ''  limit 2) x"},
		{"select a from t order by all_cols", "select a from t order by all_cols"},
		{"select 'order by all' from t", "select 'order by all' from t"},
		{"select a from t -- order by all", "select a from t -- order by all"},
		{"select a from t order by all + 1", "select a from t order by all + 1"},
	} {
		if got := maskOrderByAll(tc.in); got != tc.want {
			t.Errorf("maskOrderByAll(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSplitQualify checks which SELECT each QUALIFY clause belongs to and
// that the rest of the statement keeps its byte offsets.
func TestSplitQualify(t *testing.T) {
	for _, tc := range []struct {
		in, masked string
		owners     []int32 // the SELECT keyword offset of each clause
	}{
		{"select a from t qualify x = 1", "select a from t              ", []int32{0}},
		{"select a from t qualify x = 1 order by a", "select a from t               order by a", []int32{0}},
		{"select * from (select a from t qualify x) s qualify y", "select * from (select a from t          ) s          ", []int32{15, 0}},
		{"select 'qualify' from t", "select 'qualify' from t", nil},
		{"select a from t qualify x union all select b from u qualify y", "select a from t           union all select b from u          ", []int32{0, 36}},
	} {
		masked, q, err := splitQualify(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if masked != tc.masked {
			t.Errorf("%q: masked %q, want %q", tc.in, masked, tc.masked)
		}
		var owners []int32
		if q != nil {
			for _, c := range q.clauses {
				owners = append(owners, c.selectPos)
			}
		}
		if len(owners) != len(tc.owners) {
			t.Errorf("%q: owners %v, want %v", tc.in, owners, tc.owners)
			continue
		}
		for i := range owners {
			if owners[i] != tc.owners[i] {
				t.Errorf("%q: owners %v, want %v", tc.in, owners, tc.owners)
				break
			}
		}
	}
}
