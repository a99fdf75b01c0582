package pgwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5/pgproto3"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/function/redact"
	"github.com/sluicedb/sluice/planner/plan"
)

// statement is a prepared statement of the extended protocol.
type statement struct {
	sql       string
	paramOIDs []uint32 // as declared in Parse; 0 (or missing) is unknown
}

// portal is a bound statement: parameters substituted, result formats
// chosen. It runs when first described or executed.
type portal struct {
	sql     string
	formats []int16
	res     *result
	ran     bool
	cur     *rowCursor // a portal suspended by Execute's row limit
}

// close drops the portal's result and its suspended rows.
func (p *portal) close() {
	if p.cur != nil {
		p.cur.close()
		p.cur = nil
	}
	if p.res != nil {
		p.res.release()
		p.res = nil
	}
	p.ran = false
}

// result is the answer to one statement.
type result struct {
	tag    string        // command tag when schema is nil (SET, BEGIN)
	empty  bool          // an empty query
	schema *arrow.Schema // nil: a command without rows
	recs   []arrow.RecordBatch
	job    string // a sluice job whose result records stream out
}

func (r *result) release() {
	for _, rec := range r.recs {
		rec.Release()
	}
	r.recs = nil
}

func (c *conn) loop(ctx context.Context) error {
	failed := false // an extended-protocol error: skip to Sync
	defer func() {
		for _, p := range c.portals {
			p.close()
		}
	}()
	for {
		msg, err := c.be.Receive()
		if err != nil {
			return err
		}
		if failed {
			if _, ok := msg.(*pgproto3.Sync); !ok {
				if _, ok := msg.(*pgproto3.Terminate); ok {
					return nil
				}
				continue
			}
		}
		switch m := msg.(type) {
		case *pgproto3.Query:
			c.simpleQuery(ctx, m.String)
			if err := c.send(&pgproto3.ReadyForQuery{TxStatus: 'I'}); err != nil {
				return err
			}
		case *pgproto3.Parse:
			c.stmts[m.Name] = &statement{sql: m.Query, paramOIDs: m.ParameterOIDs}
			c.be.Send(&pgproto3.ParseComplete{})
		case *pgproto3.Bind:
			err = c.bind(m)
			if err == nil {
				c.be.Send(&pgproto3.BindComplete{})
			}
		case *pgproto3.Describe:
			err = c.describe(ctx, m)
		case *pgproto3.Execute:
			err = c.execute(ctx, m)
		case *pgproto3.Close:
			if m.ObjectType == 'S' {
				delete(c.stmts, m.Name)
			} else if p := c.portals[m.Name]; p != nil {
				p.close()
				delete(c.portals, m.Name)
			}
			c.be.Send(&pgproto3.CloseComplete{})
		case *pgproto3.Sync:
			failed = false
			if p := c.portals[""]; p != nil {
				p.close()
			}
			delete(c.portals, "") // the unnamed portal ends with its transaction
			if err := c.send(&pgproto3.ReadyForQuery{TxStatus: 'I'}); err != nil {
				return err
			}
		case *pgproto3.Flush:
			if err := c.be.Flush(); err != nil {
				return err
			}
		case *pgproto3.Terminate:
			return nil
		default:
			err = &paramError{state: "0A000", msg: fmt.Sprintf("message %T is not supported", msg)}
		}
		if err != nil {
			var ioErr *writeError
			if errors.As(err, &ioErr) {
				return ioErr.err
			}
			c.be.Send(errorResponse(err))
			failed = true
			if err := c.be.Flush(); err != nil {
				return err
			}
		}
	}
}

// writeError is a failure to write to the client: the connection is gone.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }

// simpleQuery runs every statement of a Query message, stopping at the
// first error.
func (c *conn) simpleQuery(ctx context.Context, sql string) {
	stmts, err := pg_query.SplitWithScanner(sql, true)
	if err != nil || len(stmts) == 0 {
		stmts = []string{strings.TrimSpace(sql)}
	}
	if len(stmts) == 1 && stmts[0] == "" {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return
	}
	for _, s := range stmts {
		if s == "" {
			continue
		}
		res, err := c.run(ctx, s)
		if err == nil {
			err = c.writeResult(ctx, res, nil, true)
			res.release()
		}
		if err != nil {
			c.be.Send(errorResponse(err))
			return
		}
	}
}

func (c *conn) bind(m *pgproto3.Bind) error {
	st := c.stmts[m.PreparedStatement]
	if st == nil {
		return &paramError{state: "26000", msg: fmt.Sprintf("prepared statement %q does not exist", m.PreparedStatement)}
	}
	lits := make([]string, len(m.Parameters))
	for i, v := range m.Parameters {
		var oid uint32
		if i < len(st.paramOIDs) {
			oid = st.paramOIDs[i]
		}
		format := int16(0)
		switch {
		case len(m.ParameterFormatCodes) == 1:
			format = m.ParameterFormatCodes[0]
		case i < len(m.ParameterFormatCodes):
			format = m.ParameterFormatCodes[i]
		}
		lit, err := literal(oid, format, v, i+1)
		if err != nil {
			return err
		}
		lits[i] = lit
	}
	sql, err := substitute(st.sql, lits)
	if err != nil {
		return err
	}
	if old := c.portals[m.DestinationPortal]; old != nil {
		old.close()
	}
	c.portals[m.DestinationPortal] = &portal{sql: sql, formats: m.ResultFormatCodes}
	return nil
}

func (c *conn) describe(ctx context.Context, m *pgproto3.Describe) error {
	if m.ObjectType == 'S' {
		st := c.stmts[m.Name]
		if st == nil {
			return &paramError{state: "26000", msg: fmt.Sprintf("prepared statement %q does not exist", m.Name)}
		}
		n := max(maxParam(st.sql), len(st.paramOIDs))
		oids := make([]uint32, n)
		copy(oids, st.paramOIDs)
		nulls := make([]string, n)
		for i := range nulls {
			nulls[i] = "NULL"
		}
		c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: oids})
		sql, err := substitute(st.sql, nulls)
		if err != nil {
			return err
		}
		schema, err := c.describeSQL(ctx, sql)
		if err != nil {
			return err
		}
		if schema == nil {
			c.be.Send(&pgproto3.NoData{})
			return nil
		}
		c.be.Send(&pgproto3.RowDescription{Fields: fields(schema, nil)})
		return nil
	}
	p := c.portals[m.Name]
	if p == nil {
		return &paramError{state: "34000", msg: fmt.Sprintf("portal %q does not exist", m.Name)}
	}
	if err := c.runPortal(ctx, p); err != nil {
		return err
	}
	if p.res.schema == nil {
		c.be.Send(&pgproto3.NoData{})
		return nil
	}
	c.be.Send(&pgproto3.RowDescription{Fields: fields(p.res.schema, p.formats)})
	return nil
}

func (c *conn) runPortal(ctx context.Context, p *portal) error {
	if p.ran {
		return nil
	}
	res, err := c.run(ctx, p.sql)
	if err != nil {
		return err
	}
	p.res, p.ran = res, true
	return nil
}

// execute runs a portal (unless Describe ran it) and sends its rows, at
// most MaxRows of them when that is set: then the portal is suspended
// (PortalSuspended) and the next Execute continues where it stopped.
func (c *conn) execute(ctx context.Context, m *pgproto3.Execute) error {
	p := c.portals[m.Portal]
	if p == nil {
		return &paramError{state: "34000", msg: fmt.Sprintf("portal %q does not exist", m.Portal)}
	}
	if err := c.runPortal(ctx, p); err != nil {
		return err
	}
	if p.res.empty || p.res.schema == nil {
		err := c.writeResult(ctx, p.res, p.formats, false)
		p.close() // executing again runs the statement again
		return err
	}
	if p.cur == nil {
		p.cur = c.openCursor(ctx, p.res)
	}
	n, suspended, err := c.writeRows(p.cur, fields(p.res.schema, p.formats), int64(m.MaxRows))
	if err != nil {
		p.close()
		return err
	}
	if suspended {
		c.be.Send(&pgproto3.PortalSuspended{})
		return nil
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT " + strconv.FormatInt(n, 10))})
	p.close() // executing again runs the statement again
	return nil
}

// describeSQL is the result schema of sql without running it (nil for a
// command without rows).
func (c *conn) describeSQL(ctx context.Context, sql string) (*arrow.Schema, error) {
	if res, ok, err := c.answer(ctx, sql, true); ok || err != nil {
		if err != nil {
			return nil, err
		}
		defer res.release()
		return res.schema, nil
	}
	d, ok := c.s.Engine.(describer)
	if !ok {
		return nil, &paramError{state: "0A000", msg: "this server cannot describe statements before they run"}
	}
	return d.Describe(ctx, sql)
}

// describer plans SQL without running it.
type describer interface {
	Describe(ctx context.Context, sql string) (*arrow.Schema, error)
}

// run answers one statement: locally when it is a session or catalog
// statement, else as a sluice job.
func (c *conn) run(ctx context.Context, sql string) (*result, error) {
	if strings.TrimSpace(strings.TrimRight(strings.TrimSpace(sql), ";")) == "" {
		return &result{empty: true}, nil
	}
	if res, ok, err := c.answer(ctx, sql, false); ok || err != nil {
		return res, err
	}
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.running = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running = nil
		c.mu.Unlock()
		cancel()
	}()
	job, err := c.s.Engine.Submit(ctx, sql)
	if err != nil {
		return nil, err
	}
	log := c.log.With("job", job)
	log.Info("pgwire query", "user", c.user)
	if err := c.s.Engine.Wait(ctx, job); err != nil {
		if ctx.Err() != nil {
			// The client cancelled (or went away): stop the job too.
			cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 5e9)
			defer ccancel()
			if cerr := c.s.Engine.Cancel(cctx, job); cerr != nil {
				log.Warn("cancel job", "err", cerr)
			}
			return nil, errCancelled
		}
		return nil, err
	}
	schema, err := c.s.Engine.Schema(ctx, job)
	if err != nil {
		return nil, err
	}
	return &result{schema: schema, job: job}, nil
}

var errCancelled = errors.New("canceling statement due to user request")

// writeResult sends a whole result: RowDescription (when describe), its
// rows in formats, and CommandComplete.
func (c *conn) writeResult(ctx context.Context, res *result, formats []int16, describe bool) error {
	if res.empty {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	if res.schema == nil {
		c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(res.tag)})
		return nil
	}
	fs := fields(res.schema, formats)
	if describe {
		c.be.Send(&pgproto3.RowDescription{Fields: fs})
	}
	cur := c.openCursor(ctx, res)
	defer cur.close()
	n, _, err := c.writeRows(cur, fs, 0)
	if err != nil {
		return err
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT " + strconv.FormatInt(n, 10))})
	return nil
}

// rowCursor reads a result's records one at a time: a local result's, or
// a job's, streamed from the bucket by a reader goroutine that waits for
// the protocol loop (so a portal suspended by Execute's row limit holds
// its place without holding the result in memory).
type rowCursor struct {
	recs []arrow.RecordBatch    // a local result's
	ch   chan arrow.RecordBatch // a job's, from the reader
	errc chan error             // the reader's end
	stop context.CancelFunc     // stops the reader
	cur  arrow.RecordBatch      // the record being sent
	off  int                    // its next row
}

func (c *conn) openCursor(ctx context.Context, res *result) *rowCursor {
	cur := &rowCursor{recs: res.recs}
	if res.job == "" {
		return cur
	}
	ctx, cur.stop = context.WithCancel(ctx)
	cur.ch, cur.errc = make(chan arrow.RecordBatch), make(chan error, 1)
	go func() {
		defer close(cur.ch)
		_, err := c.s.Engine.Result(ctx, res.job, func(rec arrow.RecordBatch) error {
			rec.Retain()
			select {
			case cur.ch <- rec:
				return nil
			case <-ctx.Done():
				rec.Release()
				return ctx.Err()
			}
		})
		cur.errc <- err
	}()
	return cur
}

// next returns the record with rows left to send (io.EOF at the end).
func (r *rowCursor) next() (arrow.RecordBatch, error) {
	for r.cur == nil || r.off >= int(r.cur.NumRows()) {
		if r.cur != nil && r.ch != nil {
			r.cur.Release()
		}
		r.cur, r.off = nil, 0
		switch {
		case r.ch != nil:
			rec, ok := <-r.ch
			if !ok {
				if err := <-r.errc; err != nil {
					r.errc <- err // for a caller that asks again
					return nil, err
				}
				r.errc <- nil
				return nil, io.EOF
			}
			r.cur = rec
		case len(r.recs) > 0:
			r.cur, r.recs = r.recs[0], r.recs[1:]
		default:
			return nil, io.EOF
		}
	}
	return r.cur, nil
}

// close stops the reader and releases what it read.
func (r *rowCursor) close() {
	if r.ch == nil {
		return
	}
	r.stop()
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	for rec := range r.ch {
		rec.Release()
	}
}

// writeRows sends up to max rows (0: all) of the cursor as DataRows. It
// returns the rows sent and whether the limit stopped it with rows
// perhaps left (a suspended portal, as Postgres: reaching the limit
// exactly still suspends).
func (c *conn) writeRows(cur *rowCursor, fs []pgproto3.FieldDescription, max int64) (int64, bool, error) {
	var n int64
	var buf []byte
	row := &pgproto3.DataRow{}
	for max <= 0 || n < max {
		rec, err := cur.next()
		if errors.Is(err, io.EOF) {
			return n, false, nil
		}
		if err != nil {
			return n, false, err
		}
		cols := rec.Columns()
		end := int(rec.NumRows())
		if max > 0 && int64(end-cur.off) > max-n {
			end = cur.off + int(max-n)
		}
		for i := cur.off; i < end; i++ {
			buf = buf[:0]
			row.Values = row.Values[:0]
			offs := make([]int, 0, len(cols))
			nulls := make([]bool, 0, len(cols))
			for j, col := range cols {
				offs = append(offs, len(buf))
				if col.IsNull(i) {
					nulls = append(nulls, true)
					continue
				}
				nulls = append(nulls, false)
				buf = appendValue(buf, col, i, fs[j].Format)
			}
			for j := range cols {
				if nulls[j] {
					row.Values = append(row.Values, nil)
					continue
				}
				end := len(buf)
				if j+1 < len(offs) {
					end = offs[j+1]
				}
				row.Values = append(row.Values, buf[offs[j]:end:end])
			}
			c.be.Send(row) // Send copies the message into its buffer
		}
		n += int64(end - cur.off)
		cur.off = end
		if err := c.be.Flush(); err != nil {
			return n, false, &writeError{err}
		}
	}
	return n, true, nil
}

// SQLSTATEs of the sluice error codes (docs/pgwire.md lists them).
var sqlstates = map[string]string{
	plan.CodeSyntax:           "42601", // syntax_error
	plan.CodeUnknownTbl:       "42P01", // undefined_table
	plan.CodeUnknownCol:       "42703", // undefined_column
	plan.CodeType:             "42804", // datatype_mismatch
	plan.CodeUnsupported:      "0A000", // feature_not_supported
	plan.CodeAmbiguous:        "42702", // ambiguous_column
	plan.CodeGrouping:         "42803", // grouping_error
	plan.CodeValue:            "22023", // invalid_parameter_value
	plan.CodeSQLTooLarge:      "54000", // program_limit_exceeded
	plan.CodeRuntime:          "22000", // data_exception
	plan.CodeInvalidCast:      "22P02", // invalid_text_representation
	plan.CodeIntegerOverflow:  "22003", // numeric_value_out_of_range
	plan.CodeDecimalOverflow:  "22003", // numeric_value_out_of_range
	plan.CodeMemoryLimit:      "53200", // out_of_memory
	plan.CodeBadInput:         "22P04", // bad_copy_file_format
	plan.CodeCorruptInput:     "XX001", // data_corrupted
	plan.CodeRetriesExhausted: "58000", // system_error
	plan.CodeTaskTimeout:      "57014", // query_canceled (as statement_timeout)
	plan.CodeInputsLost:       "58030", // io_error
	plan.CodeInternal:         "XX000", // internal_error
	plan.CodeBadSpec:          "XX000", // internal_error
}

// SQLState returns the SQLSTATE a sluice error code is sent with.
func SQLState(code string) string {
	if s, ok := sqlstates[code]; ok {
		return s
	}
	if plan.ClassOf(code) == plan.ClassUser {
		return "22000"
	}
	return "XX000"
}

// errorResponse describes err for the client: the SQLSTATE of its sluice
// code, a message that starts with the code, and the position.
func errorResponse(err error) *pgproto3.ErrorResponse {
	var pe *paramError
	if errors.As(err, &pe) {
		return &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: pe.state, Message: pe.msg}
	}
	if errors.Is(err, errCancelled) || errors.Is(err, coordinator.ErrJobCancelled) {
		return &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: "57014", Message: errCancelled.Error()}
	}
	code := plan.CodeOf(err)
	msg := redact.String(err.Error())
	if code != "" && !strings.HasPrefix(msg, code) {
		msg = code + ": " + msg
	}
	e := &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: SQLState(code), Message: msg,
		Position: int32(plan.PositionOf(err))}
	if code != "" {
		e.Detail = "sluice error code " + code + " (docs/errors.md)"
	}
	return e
}
