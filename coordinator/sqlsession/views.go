package sqlsession

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/catalog"
	"github.com/sluicedb/sluice/planner/plan"
)

// createView carries out CREATE [OR REPLACE] VIEW [IF NOT EXISTS] name
// [(cols)] AS query. The query is planned now, so a view that cannot run
// is refused at once with the query's own error; the catalog keeps its
// text (a column list wraps it as a derived table with those names) and
// its output columns for DESCRIBE and the clients' catalogs. A view is
// bound afresh each time a query names it, so it sees the tables as they
// are then.
func (p *Session) createView(ctx context.Context, cat *catalog.Store, st *planner.Statement) (*coordinator.StatementResult, error) {
	if err := checkName(st); err != nil {
		return nil, err
	}
	old, err := cat.Get(ctx, st.Name)
	switch {
	case errors.Is(err, planner.ErrUnknownTable):
	case err != nil:
		return nil, err
	case old.View == "":
		return nil, &planner.Error{Code: planner.CodeWrongKind, Pos: st.NamePos,
			Msg: fmt.Sprintf("%s is a table, not a view (DROP TABLE %s first to use the name for a view)", old.Name, old.Name)}
	case st.IfNotExists:
		return status("view %s exists, not created", old.Name), nil
	case !st.OrReplace:
		return nil, &planner.Error{Code: planner.CodeTableExists, Pos: st.NamePos,
			Msg: fmt.Sprintf("view %s already exists (CREATE OR REPLACE VIEW replaces it, DROP VIEW %s drops it)", old.Name, old.Name)}
	}
	text := st.Query
	if st.Schema != "" {
		text = fmt.Sprintf("SELECT * FROM (%s) AS %s(%s)", st.Query, quoteIdent(st.Name), st.Schema)
	}
	pl, err := planner.Plan(ctx, text, p.Catalog, p.Options)
	if err != nil {
		if st.Schema == "" {
			return nil, st.QueryError(err)
		}
		return nil, err
	}
	g := pl.Graph
	res := g.Stage(g.Result).Root.Schema
	cols := make([]plan.Field, len(res))
	seen := map[string]bool{}
	for i, f := range res {
		f.Name = g.Columns[i]
		k := strings.ToLower(f.Name)
		if seen[k] {
			return nil, &planner.Error{Code: planner.CodeAmbiguous, Pos: st.QueryOffset + 1,
				Msg: fmt.Sprintf("CREATE VIEW %s: column %q appears more than once (give the columns distinct aliases)", st.Name, f.Name)}
		}
		seen[k] = true
		cols[i] = f
	}
	t := &catalog.Table{Name: st.Name, Format: "view", View: text, Columns: cols}
	if err := cat.Put(ctx, t); err != nil {
		return nil, err
	}
	verb := "created"
	if old != nil {
		verb = "replaced"
	}
	return status("%s view %s (%d columns)", verb, st.Name, len(t.Columns)), nil
}

// dropView carries out DROP VIEW [IF EXISTS] name; a table is refused.
func (p *Session) dropView(ctx context.Context, cat *catalog.Store, st *planner.Statement) (*coordinator.StatementResult, error) {
	t, err := cat.Get(ctx, st.Name)
	if err != nil {
		if errors.Is(err, planner.ErrUnknownTable) && st.IfExists {
			return status("view %s does not exist, nothing dropped", st.Name), nil
		}
		return nil, unknownTable(st, err)
	}
	if t.View == "" {
		return nil, &planner.Error{Code: planner.CodeWrongKind, Pos: st.NamePos,
			Msg: fmt.Sprintf("%s is a table, not a view (use DROP TABLE %s)", t.Name, t.Name)}
	}
	if err := cat.Drop(ctx, st.Name); err != nil {
		return nil, err
	}
	return status("dropped view %s", t.Name), nil
}
