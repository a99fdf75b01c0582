package pgwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5/pgproto3"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/function/redact"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/planner/sqlparse"
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
	sent    int64      // a FETCH portal's rows sent so far
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
	p.ran, p.sent = false, 0
}

// result is the answer to one statement.
type result struct {
	tag     string        // command tag when schema is nil (SET, BEGIN), or of a result with rows whose tag has no count (SHOW)
	empty   bool          // an empty query
	schema  *arrow.Schema // nil: a command without rows
	recs    []arrow.RecordBatch
	job     string                   // a sluice job whose result records stream out
	notice  *pgproto3.NoticeResponse // a warning sent before the command completes
	formats []int16                  // result formats that override the client's (a BINARY cursor's)
	copy    *copyFormat              // COPY ... TO STDOUT: the rows go out as CopyData
	from    *sqlCursor               // FETCH: the rows come from this cursor ...
	limit   int64                    // ... at most this many
}

// release drops the result's records (a FETCH's belong to its cursor).
func (r *result) release() {
	for _, rec := range r.recs {
		rec.Release()
	}
	r.recs = nil
}

// rowTag is the command tag of a result with rows.
func (r *result) rowTag(n int64) string {
	if r.from != nil {
		return "FETCH " + strconv.FormatInt(n, 10)
	}
	if r.tag != "" {
		return r.tag
	}
	return "SELECT " + strconv.FormatInt(n, 10)
}

func (c *conn) loop(ctx context.Context) error {
	failed := false // an extended-protocol error: skip to Sync
	defer func() {
		for _, p := range c.portals {
			p.close()
		}
		c.closeCursors(true)
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
			if err := c.send(&pgproto3.ReadyForQuery{TxStatus: c.txStatus.status()}); err != nil {
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
			sctx, done := c.statement(ctx)
			err = c.describe(sctx, m)
			done()
		case *pgproto3.Execute:
			sctx, done := c.statement(ctx)
			err = c.execute(sctx, m)
			done()
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
			if c.txStatus == txIdle {
				c.closeCursors(false)
			}
			c.commitSettings()
			if err := c.send(&pgproto3.ReadyForQuery{TxStatus: c.txStatus.status()}); err != nil {
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
			c.failed()
			if c.txStatus == txIdle {
				c.rollbackSettings() // the implicit transaction up to Sync failed
			}
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
// first error. Several statements outside a transaction block are one
// implicit block: cursors declared in it close at its end.
func (c *conn) simpleQuery(ctx context.Context, sql string) {
	stmts, err := pg_query.SplitWithScanner(sql, true)
	if err != nil || len(stmts) == 0 {
		stmts = []string{strings.TrimSpace(sql)}
	}
	if len(stmts) == 1 && stmts[0] == "" {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return
	}
	c.implicit = len(stmts) > 1 && c.txStatus == txIdle
	defer func() {
		c.implicit = false
		if c.txStatus == txIdle {
			c.closeCursors(false)
		}
		c.commitSettings() // a failure rolled them back already
	}()
	for _, s := range stmts {
		if s == "" {
			continue
		}
		sctx, done := c.statement(ctx)
		res, err := c.run(sctx, s)
		if err == nil {
			err = c.writeResult(sctx, res, nil, true)
			res.release()
		}
		done()
		if err != nil {
			c.be.Send(errorResponse(err))
			c.failed()
			if c.txStatus == txIdle {
				c.rollbackSettings() // the implicit transaction failed
			}
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
		if slices.Contains(oids, 0) {
			// Parameters the client left untyped get the type their context
			// gives them (x = $1: x's type; LIMIT $1: bigint), as Postgres
			// infers them; the client then encodes its values for those
			// types, and Bind decodes them so. A query the engine cannot
			// type (a catalog query) keeps them unknown.
			if types, err := c.s.Engine.ParamTypes(ctx, c.sessionValues(st.sql)); err == nil {
				for i, t := range types {
					if i < n && oids[i] == 0 {
						oids[i] = paramOID(t)
					}
				}
				st.paramOIDs = oids
			}
		}
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
	if p.res.schema == nil || p.res.copy != nil {
		c.be.Send(&pgproto3.NoData{})
		return nil
	}
	c.be.Send(&pgproto3.RowDescription{Fields: fields(p.res.schema, p.res.formatsOr(p.formats))})
	return nil
}

// formatsOr returns the result formats of r: its own, else the client's.
func (r *result) formatsOr(client []int16) []int16 {
	if r.formats != nil {
		return r.formats
	}
	return client
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
// (PortalSuspended) and the next Execute continues where it stopped. A
// FETCH's portal sends at most the FETCH's count over its Executes.
func (c *conn) execute(ctx context.Context, m *pgproto3.Execute) error {
	p := c.portals[m.Portal]
	if p == nil {
		return &paramError{state: "34000", msg: fmt.Sprintf("portal %q does not exist", m.Portal)}
	}
	if err := c.runPortal(ctx, p); err != nil {
		return err
	}
	if p.res.empty || p.res.schema == nil || p.res.copy != nil {
		err := c.writeResult(ctx, p.res, p.formats, false)
		p.close() // executing again runs the statement again
		return err
	}
	max, capped := int64(m.MaxRows), false
	var cur *rowCursor
	if p.res.from != nil {
		if name := p.res.from.name; p.res.from.closed {
			p.close()
			return noCursor(name)
		}
		cur = p.res.from.rows
		if left := p.res.limit - p.sent; max <= 0 || max >= left {
			max, capped = left, true
		}
	} else {
		if p.cur == nil {
			p.cur = c.openCursor(ctx, p.res)
		}
		cur = p.cur
	}
	var n int64
	suspended := false
	if max > 0 || !capped {
		var err error
		n, suspended, err = c.writeRows(ctx, cur, fields(p.res.schema, p.res.formatsOr(p.formats)), max)
		if p.res.from != nil {
			p.res.from.pos += n
			p.sent += n
		}
		if err != nil {
			p.close()
			return err
		}
	}
	if suspended && !capped {
		c.be.Send(&pgproto3.PortalSuspended{})
		return nil
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(p.res.rowTag(n))})
	p.close() // executing again runs the statement again
	return nil
}

// describeSQL is the result schema of sql without running it (nil for a
// command without rows).
func (c *conn) describeSQL(ctx context.Context, sql string) (*arrow.Schema, error) {
	n := parseOne(sql)
	if res, ok, err := c.answer(ctx, sql, n, true); ok || err != nil {
		if err != nil {
			return nil, err
		}
		defer res.release()
		if res.copy != nil {
			return nil, nil
		}
		return res.schema, nil
	}
	d, ok := c.s.Engine.(describer)
	if !ok {
		return nil, &paramError{state: "0A000", msg: "this server cannot describe statements before they run"}
	}
	schema, err := d.Describe(ctx, c.sessionValues(sql))
	if err != nil {
		return nil, err
	}
	return pgNames(n, schema), nil
}

// describer plans SQL without running it.
type describer interface {
	Describe(ctx context.Context, sql string) (*arrow.Schema, error)
}

// parseOne is the parse tree of a statement, nil when sql is not one
// statement Postgres's grammar reads (sluice's own syntax: QUALIFY, ...).
func parseOne(sql string) *pg_query.Node {
	tree, err := sqlparse.Parse(sql) // too deep: the engine's planner says so
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	return tree.Stmts[0].Stmt
}

// run answers one statement: locally when it is a session, catalog,
// cursor or COPY statement, else as a sluice job.
func (c *conn) run(ctx context.Context, sql string) (*result, error) {
	if strings.TrimSpace(strings.TrimRight(strings.TrimSpace(sql), ";")) == "" {
		return &result{empty: true}, nil
	}
	n := parseOne(sql)
	if res, ok, err := c.answer(ctx, sql, n, false); ok || err != nil {
		return res, err
	}
	return c.runJob(ctx, sql, n)
}

// query runs the query inside a COPY or DECLARE: in the catalog emulation
// when it reads the catalog, else as a sluice job.
func (c *conn) query(ctx context.Context, sql string) (*result, error) {
	n := parseOne(sql)
	if n != nil && n.GetSelectStmt() != nil {
		if res, ok, err := c.answer(ctx, sql, n, false); ok || err != nil {
			return res, err
		}
	}
	return c.runJob(ctx, sql, n)
}

// runJob runs sql as a sluice job and waits for it; its result columns
// get the names Postgres would give them (n is the statement's parse tree,
// nil when Postgres's grammar cannot read it). When ctx ends first (a
// cancel request, statement_timeout, the client gone) the job is
// cancelled.
func (c *conn) runJob(ctx context.Context, sql string, n *pg_query.Node) (*result, error) {
	job, err := c.s.Engine.Submit(ctx, c.sessionValues(sql))
	if err != nil {
		if ctx.Err() != nil {
			return nil, stopped(ctx)
		}
		return nil, err
	}
	log := c.log.With("job", job)
	log.Info("pgwire query", "user", c.user)
	if err := c.s.Engine.Wait(ctx, job); err != nil {
		if ctx.Err() != nil {
			// The client cancelled, the statement timed out, or the
			// client went away: stop the job too.
			cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer ccancel()
			if cerr := c.s.Engine.Cancel(cctx, job); cerr != nil {
				log.Warn("cancel job", "err", cerr)
			}
			err := stopped(ctx)
			log.Info("pgwire query stopped", "why", err)
			return nil, err
		}
		return nil, err
	}
	schema, err := c.s.Engine.Schema(ctx, job)
	if err != nil {
		return nil, err
	}
	return &result{schema: pgNames(n, schema), job: job}, nil
}

var errCancelled = errors.New("canceling statement due to user request")

// writeResult sends a whole result: RowDescription (when describe), its
// rows in formats, and CommandComplete; a COPY's rows over the copy-out
// protocol.
func (c *conn) writeResult(ctx context.Context, res *result, formats []int16, describe bool) error {
	if res.empty {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	if res.notice != nil {
		c.be.Send(res.notice)
	}
	if res.copy != nil {
		return c.writeCopy(ctx, res)
	}
	if res.schema == nil {
		c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(res.tag)})
		return nil
	}
	fs := fields(res.schema, res.formatsOr(formats))
	if describe {
		c.be.Send(&pgproto3.RowDescription{Fields: fs})
	}
	var n int64
	if res.from != nil {
		if res.limit > 0 {
			var err error
			n, _, err = c.writeRows(ctx, res.from.rows, fs, res.limit)
			res.from.pos += n
			if err != nil {
				return err
			}
		}
	} else {
		cur := c.openCursor(ctx, res)
		defer cur.close()
		var err error
		if n, _, err = c.writeRows(ctx, cur, fs, 0); err != nil {
			return err
		}
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(res.rowTag(n))})
	return nil
}

// rowCursor reads a result's records one at a time: a local result's, or
// a job's, streamed from the bucket by a reader goroutine that waits for
// the protocol loop (so a portal suspended by Execute's row limit, or a
// SQL cursor between FETCHes, holds its place without holding the result
// in memory). The reader outlives the statement that opened it: it ends
// with close.
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
	ctx, cur.stop = context.WithCancel(context.WithoutCancel(ctx))
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

// next returns the record with rows left to send (io.EOF at the end). A
// wait for the reader ends with ctx (the statement's: a cancel request or
// statement_timeout); the cursor stays usable.
func (r *rowCursor) next(ctx context.Context) (arrow.RecordBatch, error) {
	for r.cur == nil || r.off >= int(r.cur.NumRows()) {
		if r.cur != nil && r.ch != nil {
			r.cur.Release()
		}
		r.cur, r.off = nil, 0
		switch {
		case r.ch != nil:
			var rec arrow.RecordBatch
			var ok bool
			select {
			case rec, ok = <-r.ch:
			case <-ctx.Done():
				return nil, stopped(ctx)
			}
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

// flushBytes is how many bytes of DataRows writeRows buffers before it
// writes them to the connection.
const flushBytes = 64 << 10

// writeRows sends up to max rows (0: all) of the cursor as DataRows. It
// returns the rows sent and whether the limit stopped it with rows
// perhaps left (a suspended portal, as Postgres: reaching the limit
// exactly still suspends).
func (c *conn) writeRows(ctx context.Context, cur *rowCursor, fs []pgproto3.FieldDescription, max int64) (int64, bool, error) {
	var n int64
	var buf []byte
	var offs []int
	var nulls []bool
	pending := 0 // bytes sent since the last flush
	row := &pgproto3.DataRow{}
	for max <= 0 || n < max {
		rec, err := cur.next(ctx)
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
			offs, nulls = offs[:0], nulls[:0]
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
			pending += 7 + 4*len(cols) + len(buf)
			if pending >= flushBytes {
				// Flush as the rows pile up: a buffer grown to the
				// whole record would be copied over and over.
				if err := c.be.Flush(); err != nil {
					return n + int64(i+1-cur.off), false, &writeError{err}
				}
				pending = 0
			}
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
		return &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: pe.state, Message: pe.msg, Hint: pe.hint}
	}
	if errors.Is(err, errStatementTimeout) {
		return &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: "57014", Message: errStatementTimeout.Error()}
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
