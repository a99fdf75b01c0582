package coordinator

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// TableInfo describes one registered table for clients (`\d` in the shell,
// `GET /v1/tables`).
type TableInfo struct {
	Name     string       `json:"name"`
	Format   string       `json:"format"`
	Location string       `json:"location"`
	Columns  []plan.Field `json:"columns"`
	Files    int          `json:"files"`
	Rows     int64        `json:"rows"`
	// RowsEstimated is true when Rows is an estimate (CSV tables).
	RowsEstimated bool  `json:"rows_estimated,omitempty"`
	Bytes         int64 `json:"bytes"`
	// View is the query text of a view (Format "view").
	View string `json:"view,omitempty"`
}

// ErrNoTable is returned by a TableLister for a table it does not have.
var ErrNoTable = errors.New("no such table")

// TableLister is implemented by planners whose catalog can be listed; the
// API serves /v1/tables only when the planner is one.
type TableLister interface {
	ListTables(ctx context.Context) ([]TableInfo, error)
}

func (a *API) tables(w http.ResponseWriter, r *http.Request) {
	tl, ok := a.c.planner.(TableLister)
	if !ok {
		writeErr(w, http.StatusNotImplemented, errors.New("this coordinator's planner cannot list tables"))
		return
	}
	ts, err := tl.ListTables(r.Context())
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err)
		return
	}
	if name := r.PathValue("name"); name != "" {
		for _, t := range ts {
			if strings.EqualFold(t.Name, name) {
				writeJSON(w, http.StatusOK, t)
				return
			}
		}
		writeErr(w, http.StatusNotFound, errors.New("unknown table "+name))
		return
	}
	if ts == nil {
		ts = []TableInfo{}
	}
	writeJSON(w, http.StatusOK, ts)
}

// Tables lists the coordinator's tables.
func (c *Client) Tables(ctx context.Context) ([]TableInfo, error) {
	var out []TableInfo
	err := c.getJSON(ctx, http.MethodGet, "/v1/tables", nil, &out)
	return out, err
}

// Table describes one table.
func (c *Client) Table(ctx context.Context, name string) (*TableInfo, error) {
	var out TableInfo
	if err := c.getJSON(ctx, http.MethodGet, "/v1/tables/"+name, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
