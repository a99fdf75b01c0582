package planner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/planner/plan"
)

// foldCatalog looks tables up regardless of case, as the real catalog
// does, and keeps the names' case for display.
type foldCatalog map[string]*TableInfo

func (c foldCatalog) Table(_ context.Context, name string) (*TableInfo, error) {
	if t, ok := c[strings.ToLower(name)]; ok {
		return t, nil
	}
	return nil, ErrUnknownTable
}

// TestNamesIgnoreCase: column, table, alias and CTE names match
// regardless of case, as in DuckDB; columns that differ only in case are
// ambiguous when referenced.
func TestNamesIgnoreCase(t *testing.T) {
	cat := foldCatalog{
		"people": table("People", 10, 100, "Id", plan.Int64Type, "Customer Name", plan.StringType),
		"dup":    table("Dup", 10, 100, "id", plan.Int64Type, "ID", plan.Int64Type),
	}
	for _, tc := range []struct {
		sql  string
		code string // "" when it plans
		msg  string
	}{
		{sql: `select id, "Id", ID, "customer name", "Customer Name" from people`},
		{sql: `select P.id, p."ID" from PEOPLE p where P.Id > 1 order by ID`},
		{sql: `select people.id from People`},
		{sql: `select count(*) from people a join people b using (ID)`},
		{sql: `select * from people a natural join (select id as "ID" from people) b`},
		{sql: `with Cte as (select id from people) select cte.ID from CTE`},
		{sql: `select id as Key from people order by key`},
		{sql: `select * from dup`},
		{sql: `select id from dup`, code: CodeAmbiguous, msg: `column reference "id" is ambiguous`},
		{sql: `select d."Id" from dup d`, code: CodeAmbiguous, msg: `table "d" has several columns of that name regardless of case`},
		{sql: `select * from people, PEOPLE`, code: CodeAmbiguous, msg: "specified more than once"},
		{sql: `select nope from people`, code: CodeUnknownCol, msg: `unknown column "nope" in table "People"`},
	} {
		_, err := Plan(context.Background(), tc.sql, cat, Options{})
		if tc.code == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.sql, err)
			}
			continue
		}
		var pe *Error
		if !errors.As(err, &pe) || pe.Code != tc.code || !strings.Contains(pe.Error(), tc.msg) {
			t.Errorf("%s: got %v, want %s containing %q", tc.sql, err, tc.code, tc.msg)
		}
	}
}
