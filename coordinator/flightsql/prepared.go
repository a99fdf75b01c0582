package flightsql

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	fsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluicedb/sluice/coordinator/sqlliteral"
	"github.com/sluicedb/sluice/planner/plan"
)

// Prepared statements are stateless: the handle carries the statement's
// text and, once parameters are bound, their SQL literals. Binding
// (DoPut) answers a new handle, which Flight SQL clients use from then on
// (arrow-go's client, ADBC and the JDBC driver do), so any coordinator
// can execute it, nothing is kept between calls and ClosePreparedStatement
// has nothing to free. A handle is the client's own SQL: it grants
// nothing a statement could not, and every call takes the bearer token.

// handlePrefix marks a sluice prepared statement handle (version 1).
var handlePrefix = []byte("sluice-prepared-v1:")

// prepared is what a handle holds.
type prepared struct {
	SQL string `json:"sql"`
	// Params are the bound parameters' SQL literals (nil: none bound).
	Params []string `json:"params,omitempty"`
}

func (p prepared) handle() ([]byte, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("prepared statement handle: %w", err)
	}
	return append(bytes.Clone(handlePrefix), b...), nil
}

func parseHandle(h []byte) (prepared, error) {
	var p prepared
	body, ok := bytes.CutPrefix(h, handlePrefix)
	if !ok {
		return p, status.Error(codes.InvalidArgument, "not a sluice prepared statement handle")
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return p, status.Errorf(codes.InvalidArgument, "bad prepared statement handle: %v", err)
	}
	return p, nil
}

// nparams is the number of parameters the statement takes.
func (p prepared) nparams() int { return sqlliteral.Count(p.SQL, sqlliteral.DollarOrQuestion) }

// bound is the statement with its parameters substituted: a statement
// with parameters not bound is SL008.
func (p prepared) bound() (string, error) {
	return sqlliteral.Substitute(p.SQL, p.Params, sqlliteral.DollarOrQuestion)
}

// describe is the statement's result schema, planned but not run. Its
// unbound parameters are NULLs there.
func (s *Server) describe(ctx context.Context, p prepared) (*arrow.Schema, error) {
	lits := p.Params
	if lits == nil {
		lits = sqlliteral.Nulls(p.nparams())
	}
	sql, err := sqlliteral.Substitute(p.SQL, lits, sqlliteral.DollarOrQuestion)
	if err != nil {
		return nil, err
	}
	return s.Engine.Describe(ctx, sql)
}

// paramSchema is the parameter schema of a statement taking n: fields
// "$1".."$n" typed as the planner types them from their context (x = $1
// is x's type, LIMIT $1 bigint, $1 + col the number's), as Postgres infers
// an unspecified parameter's type; a parameter no context types, or every
// one when the statement cannot be typed, is of type null: any of the
// types literal takes can be bound to it.
func (s *Server) paramSchema(ctx context.Context, p prepared, n int) *arrow.Schema {
	var types []plan.DataType
	if n > 0 {
		refs := make([]string, n)
		for i := range refs {
			refs[i] = fmt.Sprintf("$%d", i+1) // ? placeholders as $n
		}
		sql, err := sqlliteral.Substitute(p.SQL, refs, sqlliteral.DollarOrQuestion)
		if err == nil {
			types, err = s.Engine.ParamTypes(ctx, sql)
		}
		if err != nil {
			s.Log.Debug("flight sql prepare: parameters not typed", "err", err)
			types = nil
		}
	}
	fs := make([]arrow.Field, n)
	for i := range fs {
		t := arrow.DataType(arrow.Null)
		if i < len(types) {
			t = types[i].Arrow()
		}
		fs[i] = arrow.Field{Name: fmt.Sprintf("$%d", i+1), Type: t, Nullable: true}
	}
	return arrow.NewSchema(fs, nil)
}

// CreatePreparedStatement plans the statement for its result schema (its
// parameters NULL) and answers a handle, the dataset schema and the
// parameter schema. A statement without parameters that does not plan is
// an error here; with parameters, the dataset schema is left out when it
// cannot be planned with NULLs (LIMIT $1) and the error waits for the
// execution.
func (s *Server) CreatePreparedStatement(ctx context.Context, req fsql.ActionCreatePreparedStatementRequest) (fsql.ActionCreatePreparedStatementResult, error) {
	var res fsql.ActionCreatePreparedStatementResult
	if len(req.GetTransactionId()) > 0 {
		return res, status.Error(codes.Unimplemented, "transactions are not supported")
	}
	p := prepared{SQL: req.GetQuery()}
	n := p.nparams()
	if _, err := sqlliteral.Substitute(p.SQL, sqlliteral.Nulls(n), sqlliteral.DollarOrQuestion); err != nil {
		return res, grpcError(err)
	}
	schema, err := s.describe(ctx, p)
	if err != nil && n == 0 {
		return res, grpcError(err)
	}
	if err != nil {
		s.Log.Debug("flight sql prepare: no dataset schema with NULL parameters", "err", err)
	}
	h, err := p.handle()
	if err != nil {
		return res, grpcError(err)
	}
	isUpdate := false
	res.Handle, res.DatasetSchema, res.ParameterSchema, res.IsUpdate = h, schema, s.paramSchema(ctx, p, n), &isUpdate
	return res, nil
}

// ClosePreparedStatement has nothing to free: handles are stateless.
func (s *Server) ClosePreparedStatement(_ context.Context, req fsql.ActionClosePreparedStatementRequest) error {
	_, err := parseHandle(req.GetPreparedStatementHandle())
	return err
}

// DoPutPreparedStatementQuery binds parameters: a record batch with one
// column per parameter and one row, answered with a new handle that holds
// their literals. Several rows (a batch of executions) are SL005; a
// column count other than the statement's parameters is SL008.
func (s *Server) DoPutPreparedStatementQuery(_ context.Context, cmd fsql.PreparedStatementQuery, rdr flight.MessageReader, _ flight.MetadataWriter) ([]byte, error) {
	p, err := parseHandle(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	var lits []string
	rows := 0
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			if rows++; rows > 1 {
				continue
			}
			if lits, err = literals(rec, i); err != nil {
				return nil, grpcError(err)
			}
		}
	}
	if err := rdr.Err(); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "reading parameters: %v", err)
	}
	switch n := p.nparams(); {
	case rows > 1:
		return nil, grpcError(plan.Errorf(plan.CodeUnsupported, "%d rows of parameters: a query binds one row per execution", rows))
	case rows == 1 && len(lits) != n:
		return nil, grpcError(plan.Errorf(plan.CodeValue, "%d parameters bound, the statement takes %d", len(lits), n))
	case rows == 0:
		lits = nil
	}
	p.Params = lits
	h, err := p.handle()
	if err != nil {
		return nil, grpcError(err)
	}
	return h, nil
}

// GetFlightInfoPreparedStatement runs the statement with its bound
// parameters, as GetFlightInfoStatement does.
func (s *Server) GetFlightInfoPreparedStatement(ctx context.Context, cmd fsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	p, err := parseHandle(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	sql, err := p.bound()
	if err != nil {
		return nil, grpcError(err)
	}
	return s.run(ctx, sql, desc)
}

// DoGetPreparedStatement runs the statement and streams its result, for
// clients that DoGet the command itself rather than GetFlightInfo's
// ticket.
func (s *Server) DoGetPreparedStatement(ctx context.Context, cmd fsql.PreparedStatementQuery) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	p, err := parseHandle(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, nil, err
	}
	sql, err := p.bound()
	if err != nil {
		return nil, nil, grpcError(err)
	}
	job, err := s.runJob(ctx, sql)
	if err != nil {
		return nil, nil, err
	}
	return s.stream(ctx, job)
}

// GetSchemaStatement plans the statement, without running it, for its
// result schema.
func (s *Server) GetSchemaStatement(ctx context.Context, cmd fsql.StatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	schema, err := s.describe(ctx, prepared{SQL: cmd.GetQuery()})
	if err != nil {
		return nil, grpcError(err)
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(schema, s.Alloc)}, nil
}

// GetSchemaPreparedStatement plans the prepared statement (its bound
// parameters, or NULLs) for its result schema.
func (s *Server) GetSchemaPreparedStatement(ctx context.Context, cmd fsql.PreparedStatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	p, err := parseHandle(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	schema, err := s.describe(ctx, p)
	if err != nil {
		return nil, grpcError(err)
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(schema, s.Alloc)}, nil
}
