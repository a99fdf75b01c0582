package planner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// macroCatalog is a FunctionCatalog with one constant table and a few SQL
// functions.
type macroCatalog struct{}

func (macroCatalog) Table(_ context.Context, name string) (*TableInfo, error) {
	if name != "kv" && name != "pg_catalog.kv" {
		return nil, fmt.Errorf("macro catalog: %q: %w", name, ErrUnknownTable)
	}
	return &TableInfo{Name: "kv", Constant: true, Columns: []plan.Field{{Name: "k", Type: plan.Int64Type}, {Name: "v", Type: plan.StringType, Nullable: true}, {Name: "arr", Type: plan.NullType, Nullable: true}},
		Values: [][]plan.Value{{{I: 1}, {S: "a"}, {Null: true}}, {{I: 2}, {Null: true}, {Null: true}}}}, nil
}

func (macroCatalog) Function(name string, args []*plan.Expr) (string, bool, error) {
	switch name {
	case "twice":
		return "$1 + $1", args == nil || len(args) == 1, nil
	case "loop":
		return "loop($1)", true, nil
	case "::thing":
		if args != nil && len(args) == 1 && args[0].Op == plan.OpLiteral && args[0].Type.ID == plan.String && args[0].Value.S == "bad" {
			return "", true, plan.Errorf(CodeUnknownTbl, "no thing %q", args[0].Value.S)
		}
		return "CAST(length(CAST($1 AS VARCHAR)) AS BIGINT)", true, nil
	}
	return "", false, nil
}

func (macroCatalog) TableFunction(name string, _ []plan.Value) (*TableInfo, bool) {
	if name != "kvs" {
		return nil, false
	}
	t, _ := macroCatalog{}.Table(context.Background(), "kv")
	return t, true
}

// TestVirtualCatalog: constant tables bind as Values leaves (no scan), SQL
// functions bind as their bodies, casts and table functions too, and the
// Postgres options change only what they name.
func TestVirtualCatalog(t *testing.T) {
	for _, tc := range []struct {
		sql      string
		postgres bool
		want     string // a substring of the plan text, or the error code
	}{
		{"SELECT k, v FROM pg_catalog.kv WHERE v LIKE 'a%'", false, "Values: rows=2"},
		{"SELECT twice(k) FROM kv", false, "Values: rows=2"},
		{"SELECT twice(k, k) FROM kv", false, CodeUnsupported},
		{"SELECT loop(k) FROM kv", false, CodeUnsupported},
		{"SELECT 'abc'::thing FROM kv", false, "Values: rows=2"},
		{"SELECT 'bad'::thing FROM kv", false, CodeUnknownTbl},
		{"SELECT k FROM kvs() WHERE k = 1", false, "Values: rows=2"},
		{"SELECT k FROM kv WHERE 1 = ANY(arr)", false, CodeUnsupported},
		{"SELECT k FROM kv WHERE 1 = ANY(arr)", true, "Values: rows=2"},
		{"SELECT arr[1], unnest(arr) FROM kv", true, "Values: rows=2"},
		{"SELECT unnest(ARRAY[1, 2]) FROM kv", true, CodeUnsupported},
		{"SELECT v FROM kv ORDER BY v COLLATE \"C\"", true, "Values: rows=2"},
		{"SELECT v FROM kv ORDER BY v COLLATE \"de_DE\"", true, CodeUnsupported},
	} {
		p, err := Plan(context.Background(), tc.sql, macroCatalog{}, Options{Postgres: tc.postgres})
		if strings.HasPrefix(tc.want, "SL") {
			if plan.CodeOf(err) != tc.want {
				t.Errorf("%s: err %v, want %s", tc.sql, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		text := p.Logical
		if !strings.Contains(text, tc.want) {
			t.Errorf("%s: plan lacks %q:\n%s", tc.sql, tc.want, text)
		}
		for _, s := range p.Graph.Stages {
			plan.Walk(s.Root, func(n *plan.Node) {
				if n.Kind == plan.KindScan {
					t.Errorf("%s: a scan of a constant table", tc.sql)
				}
			})
		}
	}
}
