// Package flightsql serves Arrow Flight SQL in front of a coordinator.
// A statement runs as a sluice job through coordinator.Queries: the
// FlightInfo answer comes when the job is done, and DoGet streams the
// result records read from the bucket as they are, without conversion.
// Prepared statements are stateless handles holding the SQL and its bound
// parameters' literals ($1.. or ? placeholders, substituted as literals by
// package sqlliteral); GetSchema plans a statement without running it.
// GetCatalogs, GetDbSchemas, GetTables and GetTableTypes answer from the
// sluice catalog (one catalog "sluice", one schema "public", tables only);
// the key calls answer no rows. Authentication is the coordinator's bearer
// token, in the "authorization" gRPC header; TLS is optional.
package flightsql

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	fsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/function/redact"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
)

// Catalog and Schema are the names Flight SQL clients see.
const (
	Catalog = "sluice"
	Schema  = "public"
)

// Server is the Flight SQL service.
type Server struct {
	fsql.BaseServer
	Engine coordinator.Engine // *coordinator.Queries in production
	// Token, when set, must come as "authorization: Bearer TOKEN".
	Token string
	// Version is the server version GetSqlInfo reports (default "dev").
	Version string
	// TLS, when set, is the Flight port's TLS configuration (grpc+tls://);
	// otherwise the port is plain gRPC.
	TLS *tls.Config
	Log *slog.Logger
}

// registerSqlInfo registers what GetSqlInfo answers: the server's name and
// versions, and the SQL it takes through Flight SQL (queries only: DDL,
// COPY and transactions go through POST /v1/statements or not at all).
// Asking for an id not registered here is NotFound (arrow-go's BaseServer).
func (s *Server) registerSqlInfo() error {
	version := s.Version
	if version == "" {
		version = "dev"
	}
	for id, v := range map[fsql.SqlInfo]any{
		fsql.SqlInfoFlightSqlServerName:         "sluice",
		fsql.SqlInfoFlightSqlServerVersion:      version,
		fsql.SqlInfoFlightSqlServerArrowVersion: arrow.PkgVersion,
		fsql.SqlInfoFlightSqlServerReadOnly:     true,
		fsql.SqlInfoFlightSqlServerSql:          true,
		fsql.SqlInfoFlightSqlServerSubstrait:    false,
		fsql.SqlInfoFlightSqlServerTransaction:  int32(fsql.SqlTransactionNone),
		fsql.SqlInfoFlightSqlServerCancel:       false,
		fsql.SqlInfoTransactionsSupported:       false,
		fsql.SqlInfoDDLCatalog:                  false,
		fsql.SqlInfoDDLSchema:                   false,
		fsql.SqlInfoDDLTable:                    false,
		fsql.SqlInfoIdentifierCase:              int32(fsql.SqlCaseSensitivityLowerCase),
		fsql.SqlInfoIdentifierQuoteChar:         `"`,
		fsql.SqlInfoNullOrdering:                int32(fsql.SqlNullOrderingSortAtEnd), // NULLS LAST both ways, as DuckDB
	} {
		if err := s.RegisterSqlInfo(id, v); err != nil {
			return fmt.Errorf("flight sql info %d: %w", id, err)
		}
	}
	return nil
}

// Listen serves s on addr in the background and returns the address and a
// function that stops it.
func (s *Server) Listen(addr string, opts ...grpc.ServerOption) (string, func(), error) {
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	s.Alloc = memory.DefaultAllocator
	if err := s.registerSqlInfo(); err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("flight sql listen on %s: %w", addr, err)
	}
	// A message may carry SQL up to the coordinator's limit (which
	// Submit enforces, CodeSQLTooLarge) when that is above gRPC's 4 MiB.
	if e, ok := s.Engine.(interface{ MaxSQLBytes() int }); ok {
		opts = append([]grpc.ServerOption{grpc.MaxRecvMsgSize(max(4<<20, 2*e.MaxSQLBytes()+64<<10))}, opts...)
	}
	if s.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.TLS)))
	}
	srv := flight.NewServerWithMiddleware([]flight.ServerMiddleware{s.auth()}, opts...)
	srv.RegisterFlightService(fsql.NewFlightServer(s))
	srv.InitListener(ln)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(); err != nil {
			s.Log.Error("flight sql serve", "err", err)
		}
	}()
	return ln.Addr().String(), func() { srv.Shutdown(); <-done }, nil
}

func (s *Server) check(ctx context.Context) error {
	if s.Token == "" {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		if subtle.ConstantTimeCompare([]byte(v), []byte("Bearer "+s.Token)) == 1 {
			return nil
		}
	}
	return status.Error(codes.Unauthenticated, "missing or wrong bearer token (authorization: Bearer TOKEN)")
}

func (s *Server) auth() flight.ServerMiddleware {
	return flight.ServerMiddleware{
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := s.check(ctx); err != nil {
				return nil, err
			}
			return h(ctx, req)
		},
		Stream: func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := s.check(ss.Context()); err != nil {
				return err
			}
			return h(srv, ss)
		},
	}
}

// grpcError maps an error to a gRPC status: user errors (a sluice code of
// class user or unsupported) are InvalidArgument or Unimplemented, and the
// message starts with the code.
func grpcError(err error) error {
	if _, ok := status.FromError(err); ok && status.Code(err) != codes.Unknown {
		return err
	}
	code := plan.CodeOf(err)
	msg := redact.String(err.Error())
	if code != "" && !strings.HasPrefix(msg, code) {
		msg = code + ": " + msg
	}
	if p := plan.PositionOf(err); p > 0 {
		msg += fmt.Sprintf(" (position %d)", p)
	}
	switch {
	case errors.Is(err, coordinator.ErrJobCancelled), errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, msg)
	case code == "":
		return status.Error(codes.Internal, msg)
	}
	switch plan.ClassOf(code) {
	case plan.ClassUser:
		return status.Error(codes.InvalidArgument, msg)
	case plan.ClassUnsupported:
		return status.Error(codes.Unimplemented, msg)
	case plan.ClassTransient:
		return status.Error(codes.Unavailable, msg)
	}
	return status.Error(codes.Internal, msg)
}

// GetFlightInfoStatement runs the statement as a job and answers when it
// is done, with its result schema and a ticket naming the job.
func (s *Server) GetFlightInfoStatement(ctx context.Context, cmd fsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.run(ctx, cmd.GetQuery(), desc)
}

// run runs sql as a job and answers, when it is done, its result schema
// and a statement ticket naming the job (served by DoGetStatement).
func (s *Server) run(ctx context.Context, sql string, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	job, err := s.runJob(ctx, sql)
	if err != nil {
		return nil, err
	}
	schema, err := s.Engine.Schema(ctx, job)
	if err != nil {
		return nil, grpcError(err)
	}
	tkt, err := fsql.CreateStatementQueryTicket([]byte(job))
	if err != nil {
		return nil, err
	}
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, s.Alloc),
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: tkt}}},
		FlightDescriptor: desc,
		TotalRecords:     -1,
		TotalBytes:       -1,
	}, nil
}

// runJob submits sql and waits for its job to succeed; a job the client
// gives up on is cancelled.
func (s *Server) runJob(ctx context.Context, sql string) (string, error) {
	job, err := s.Engine.Submit(ctx, sql)
	if err != nil {
		return "", grpcError(err)
	}
	s.Log.Info("flight sql statement", "job", job)
	if err := s.Engine.Wait(ctx, job); err != nil {
		if ctx.Err() != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = s.Engine.Cancel(cctx, job)
		}
		return "", grpcError(err)
	}
	return job, nil
}

// DoGetStatement streams a done job's result records.
func (s *Server) DoGetStatement(ctx context.Context, tkt fsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	job := string(tkt.GetStatementHandle())
	if err := shuffle.ValidateJobID(job); err != nil {
		return nil, nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return s.stream(ctx, job)
}

// stream streams a done job's result records.
func (s *Server) stream(ctx context.Context, job string) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	schema, err := s.Engine.Schema(ctx, job)
	if err != nil {
		return nil, nil, grpcError(err)
	}
	ch := make(chan flight.StreamChunk, 2)
	go func() {
		defer close(ch)
		_, err := s.Engine.Result(ctx, job, func(rec arrow.RecordBatch) error {
			rec.Retain() // the Flight SQL server releases it once written
			select {
			case ch <- flight.StreamChunk{Data: rec}:
				return nil
			case <-ctx.Done():
				rec.Release()
				return ctx.Err()
			}
		})
		if err != nil {
			select {
			case ch <- flight.StreamChunk{Err: grpcError(err)}:
			case <-ctx.Done():
			}
		}
	}()
	return schema, ch, nil
}

func (s *Server) info(desc *flight.FlightDescriptor, schema *arrow.Schema) *flight.FlightInfo {
	return &flight.FlightInfo{
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: desc.Cmd}}},
		FlightDescriptor: desc,
		Schema:           flight.SerializeSchema(schema, s.Alloc),
		TotalRecords:     -1,
		TotalBytes:       -1,
	}
}

func (s *Server) GetFlightInfoCatalogs(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.info(desc, schema_ref.Catalogs), nil
}

func (s *Server) DoGetCatalogs(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return one(s.Alloc, schema_ref.Catalogs, [][]any{{Catalog}})
}

func (s *Server) GetFlightInfoSchemas(_ context.Context, _ fsql.GetDBSchemas, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.info(desc, schema_ref.DBSchemas), nil
}

func (s *Server) DoGetDBSchemas(_ context.Context, cmd fsql.GetDBSchemas) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	var rows [][]any
	if matchCatalog(cmd.GetCatalog()) && like(cmd.GetDBSchemaFilterPattern(), Schema) {
		rows = append(rows, []any{Catalog, Schema})
	}
	return one(s.Alloc, schema_ref.DBSchemas, rows)
}

func (s *Server) GetFlightInfoTables(_ context.Context, cmd fsql.GetTables, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if cmd.GetIncludeSchema() {
		return s.info(desc, schema_ref.TablesWithIncludedSchema), nil
	}
	return s.info(desc, schema_ref.Tables), nil
}

func (s *Server) DoGetTables(ctx context.Context, cmd fsql.GetTables) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	ts, err := s.Engine.Tables(ctx)
	if err != nil {
		return nil, nil, grpcError(err)
	}
	schema := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		schema = schema_ref.TablesWithIncludedSchema
	}
	typeOK := len(cmd.GetTableTypes()) == 0
	for _, t := range cmd.GetTableTypes() {
		typeOK = typeOK || strings.EqualFold(t, TableType)
	}
	var rows [][]any
	if typeOK && matchCatalog(cmd.GetCatalog()) && like(cmd.GetDBSchemaFilterPattern(), Schema) {
		for _, t := range ts {
			if !like(cmd.GetTableNameFilterPattern(), t.Name) {
				continue
			}
			r := []any{Catalog, Schema, t.Name, TableType}
			if cmd.GetIncludeSchema() {
				fs := make([]arrow.Field, len(t.Columns))
				for i, c := range t.Columns {
					fs[i] = arrow.Field{Name: c.Name, Type: c.Type.Arrow(), Nullable: c.Nullable}
				}
				r = append(r, flight.SerializeSchema(arrow.NewSchema(fs, nil), s.Alloc))
			}
			rows = append(rows, r)
		}
	}
	return one(s.Alloc, schema, rows)
}

// TableType is the one table type sluice has (GetTables, GetTableTypes).
const TableType = "TABLE"

func (s *Server) GetFlightInfoTableTypes(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.info(desc, schema_ref.TableTypes), nil
}

func (s *Server) DoGetTableTypes(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return one(s.Alloc, schema_ref.TableTypes, [][]any{{TableType}})
}

// sluice tables declare no keys: GetPrimaryKeys, GetImportedKeys,
// GetExportedKeys and GetCrossReference answer no rows, in their schemas.

func (s *Server) GetFlightInfoPrimaryKeys(_ context.Context, _ fsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.info(desc, schema_ref.PrimaryKeys), nil
}

func (s *Server) DoGetPrimaryKeys(context.Context, fsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return one(s.Alloc, schema_ref.PrimaryKeys, nil)
}

func (s *Server) GetFlightInfoImportedKeys(_ context.Context, _ fsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.info(desc, schema_ref.ImportedKeys), nil
}

func (s *Server) DoGetImportedKeys(context.Context, fsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return one(s.Alloc, schema_ref.ImportedKeys, nil)
}

func (s *Server) GetFlightInfoExportedKeys(_ context.Context, _ fsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.info(desc, schema_ref.ExportedKeys), nil
}

func (s *Server) DoGetExportedKeys(context.Context, fsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return one(s.Alloc, schema_ref.ExportedKeys, nil)
}

func (s *Server) GetFlightInfoCrossReference(_ context.Context, _ fsql.CrossTableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.info(desc, schema_ref.CrossReference), nil
}

func (s *Server) DoGetCrossReference(context.Context, fsql.CrossTableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return one(s.Alloc, schema_ref.CrossReference, nil)
}

func matchCatalog(c *string) bool { return c == nil || *c == "" || *c == Catalog }

// like matches s against a SQL LIKE pattern (% and _); nil matches all.
func like(pattern *string, s string) bool {
	if pattern == nil || *pattern == "" {
		return true
	}
	var b strings.Builder
	b.WriteString("^")
	for _, r := range *pattern {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	ok, _ := regexp.MatchString(b.String(), s)
	return ok
}

// one streams rows (strings and []byte) as a single record of schema.
func one(mem memory.Allocator, schema *arrow.Schema, rows [][]any) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for _, r := range rows {
		for i, v := range r {
			switch fb := b.Field(i).(type) {
			case *array.StringBuilder:
				fb.Append(v.(string))
			case *array.BinaryBuilder:
				fb.Append(v.([]byte))
			}
		}
	}
	ch := make(chan flight.StreamChunk, 1)
	ch <- flight.StreamChunk{Data: b.NewRecordBatch()}
	close(ch)
	return schema, ch, nil
}
