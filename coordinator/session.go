package coordinator

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
)

// Engine is how the SQL front ends in process (the Postgres wire
// protocol, coordinator/pgwire, and Flight SQL, coordinator/flightsql)
// run SQL: one interface for both, declared beside its production
// implementation, Queries, which both front ends already import (each
// used to declare its own copy). A front end may also ask for
// MaxSQLBytes() int, which Queries has and test fakes need not.
type Engine interface {
	// Submit plans sql and starts its job.
	Submit(ctx context.Context, sql string) (string, error)
	Wait(ctx context.Context, job string) error
	Cancel(ctx context.Context, job string) error
	// Result streams a finished job's result and returns its schema.
	Result(ctx context.Context, job string, fn func(arrow.RecordBatch) error) (*arrow.Schema, error)
	Schema(ctx context.Context, job string) (*arrow.Schema, error)
	Tables(ctx context.Context) ([]TableInfo, error)
	// Describe plans sql without running it and returns its result schema.
	Describe(ctx context.Context, sql string) (*arrow.Schema, error)
	// ParamTypes types sql's $n parameters from their context (NullType
	// where none does).
	ParamTypes(ctx context.Context, sql string) ([]plan.DataType, error)
}

var _ Engine = (*Queries)(nil)

// Queries is the coordinator's query path for in-process front ends (the
// Postgres wire protocol and Flight SQL servers): the same steps the HTTP
// API takes for POST /v1/jobs, GET /v1/jobs/{id} and GET /v1/jobs/{id}/result,
// without the HTTP round trips. Results are read from the bucket as the
// Arrow records the final stage committed.
type Queries struct{ c *Coordinator }

// Queries returns the coordinator's query path.
func (c *Coordinator) Queries() *Queries { return &Queries{c: c} }

// MaxSQLBytes is the longest SQL text the coordinator takes: front ends
// bound their messages by it.
func (q *Queries) MaxSQLBytes() int { return q.c.MaxSQLBytes() }

// Submit plans sql and starts its job (a planning error carries its code
// and position).
func (q *Queries) Submit(ctx context.Context, sql string) (string, error) {
	return q.c.Submit(ctx, sql, SubmitOptions{})
}

// Wait blocks until job is terminal. A failed job's error is returned as a
// *JobError with the job's code; a cancelled job gives ErrJobCancelled.
func (q *Queries) Wait(ctx context.Context, job string) error {
	m, err := q.c.Wait(ctx, job)
	if err != nil {
		return err
	}
	switch m.State {
	case StateSucceeded:
		return nil
	case StateCancelled:
		return fmt.Errorf("job %s: %w", job, ErrJobCancelled)
	default:
		return m.Failure(job)
	}
}

// ErrJobCancelled is returned by Queries.Wait for a cancelled job.
var ErrJobCancelled = errors.New("job cancelled")

// Cancel asks the job to stop.
func (q *Queries) Cancel(ctx context.Context, job string) error { return q.c.store.Cancel(ctx, job) }

// Schema returns the result schema of a succeeded job, with the user's
// column names.
func (q *Queries) Schema(ctx context.Context, job string) (*arrow.Schema, error) {
	_, schema, err := q.c.store.ResultObjects(ctx, job)
	return schema, err
}

// Result calls fn with every record of a succeeded job's result, in order,
// with the user's column names, and returns the result schema. Every
// result object is checked before the first record goes out, as the HTTP
// API does.
func (q *Queries) Result(ctx context.Context, job string, fn func(arrow.RecordBatch) error) (*arrow.Schema, error) {
	refs, schema, err := q.c.store.ResultObjects(ctx, job)
	if err != nil {
		return nil, err
	}
	src, err := resultSource(ctx, q.c.bucket, refs, q.c.cfg.SmallResultBytes)
	if err != nil {
		return nil, fmt.Errorf("result of job %s cannot be read: %w", job, err)
	}
	err = shuffle.ReadObjects(ctx, src, refs, func(rec arrow.RecordBatch) error {
		renamed := renameColumns(rec, schema)
		defer renamed.Release()
		return fn(renamed)
	})
	return schema, err
}

// Tables lists the catalog's tables (ErrNoTableLister when the planner's
// catalog cannot be listed).
func (q *Queries) Tables(ctx context.Context) ([]TableInfo, error) {
	tl, ok := q.c.planner.(TableLister)
	if !ok {
		return nil, ErrNoTableLister
	}
	return tl.ListTables(ctx)
}

// ErrNoTableLister is returned by Queries.Tables when the planner cannot
// list its catalog.
var ErrNoTableLister = errors.New("this coordinator's planner cannot list tables")

// Explain returns the plan text of sql.
func (q *Queries) Explain(ctx context.Context, sql string) (string, error) {
	if err := q.c.CheckSQL(sql); err != nil {
		return "", err
	}
	_, text, err := q.c.planner.Plan(ctx, sql)
	return text, err
}

// Describe plans sql without running it and returns its result schema.
func (q *Queries) Describe(ctx context.Context, sql string) (*arrow.Schema, error) {
	if err := q.c.CheckSQL(sql); err != nil {
		return nil, err
	}
	g, _, err := q.c.planner.Plan(ctx, sql)
	if err != nil {
		return nil, err
	}
	return ResultSchema(g), nil
}

// ParamTyper is a planner that can type a statement's $n parameters from
// their context (the SQL front end's planner.ParamTypes).
type ParamTyper interface {
	ParamTypes(ctx context.Context, sql string) ([]plan.DataType, error)
}

// ParamTypes returns the types of sql's parameters $1..$n as their
// context gives them (plan.NullType where none does; all of them when
// the planner cannot type parameters).
func (q *Queries) ParamTypes(ctx context.Context, sql string) ([]plan.DataType, error) {
	if err := q.c.CheckSQL(sql); err != nil {
		return nil, err
	}
	pt, ok := q.c.planner.(ParamTyper)
	if !ok {
		return nil, nil
	}
	return pt.ParamTypes(ctx, sql)
}
