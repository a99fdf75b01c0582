// Package sqlsession is the SQL session of sluice: the planner, the
// catalog and the table statements put together for a coordinator
// (Session). It lives apart from the coordinator, which plans only through
// its coordinator.Planner interface and so does not link the SQL front
// end, and apart from the embedded stack (local), since `coordinator
// serve` uses it too.
package sqlsession

import (
	"context"
	"fmt"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/catalog"
	"github.com/sluicedb/sluice/planner/plan"
)

// Session is the SQL session of a coordinator: it plans queries against
// the catalog (coordinator.Planner), lists tables, and runs the table
// statements (RunStatement: CREATE EXTERNAL TABLE, CREATE TABLE AS, COPY,
// INSERT, DROP, SHOW, DESCRIBE, EXPLAIN). `coordinator serve`, the
// embedded stack (local.Start) and the front ends run SQL through it.
type Session struct {
	Catalog planner.Catalog
	Options planner.Options
}

// Plan implements coordinator.Planner.
func (p *Session) Plan(ctx context.Context, sql string) (*plan.Graph, string, error) {
	st, err := planner.ParseStatement(sql)
	if err != nil {
		return nil, "", err
	}
	if st.Kind != planner.StmtQuery {
		return nil, "", &planner.Error{Code: plan.CodeNotStatement, Pos: 1,
			Msg: fmt.Sprintf("%s is a statement, not a query: run it through POST /v1/statements (sluice sql and sluice submit do)", st.Kind)}
	}
	pl, err := planner.Plan(ctx, sql, p.Catalog, p.Options)
	if err != nil {
		return nil, "", err
	}
	text := planner.Explain(pl)
	if tables, ok := p.Catalog.(coordinator.Tables); ok {
		pruning, err := coordinator.ExplainPruning(ctx, tables, pl.Graph)
		if err != nil {
			return nil, "", err
		}
		text += pruning
	}
	return pl.Graph, text, nil
}

// ParamTypes implements coordinator.ParamTyper.
func (p *Session) ParamTypes(ctx context.Context, sql string) ([]plan.DataType, error) {
	return planner.ParamTypes(ctx, sql, p.Catalog, p.Options)
}

// ListTables implements coordinator.TableLister when the catalog is the
// Redis catalog.
func (p *Session) ListTables(ctx context.Context) ([]coordinator.TableInfo, error) {
	st, ok := p.Catalog.(*catalog.Store)
	if !ok {
		return nil, fmt.Errorf("catalog %T cannot list tables", p.Catalog)
	}
	ts, err := st.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]coordinator.TableInfo, len(ts))
	for i, t := range ts {
		out[i] = coordinator.TableInfo{Name: t.Name, Format: t.Format, Location: t.Location, Columns: t.Columns,
			Files: len(t.Files), Rows: t.Rows, RowsEstimated: t.RowsEstimated, Bytes: t.Bytes, View: t.View}
	}
	return out, nil
}

// Format implements coordinator.Planner.
func (p *Session) Format(g *plan.Graph) string { return planner.FormatGraph(g) }
