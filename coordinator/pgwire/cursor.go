package pgwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// SQL cursors: DECLARE name [BINARY] [NO SCROLL] CURSOR [WITH[OUT] HOLD]
// FOR query runs the query as a job (to the end, so that its errors
// surface at DECLARE, as its plan's would in Postgres); FETCH and MOVE read
// on through the job's result objects as the rows are asked for, with the
// same reader that streams a query's result (rowCursor), so an open cursor
// holds a record batch or two, never the result. A cursor reads forward
// only: SCROLL is refused at DECLARE, and a FETCH that would go back is
// refused as Postgres refuses it for a NO SCROLL cursor (55000).
// Without HOLD a cursor lives until its transaction block ends (COMMIT,
// ROLLBACK, or the end of a Query message of several statements, which
// is one implicit block); WITH HOLD until CLOSE or the end of the
// connection (the job's result objects are kept while its record is).

// DeclareCursorStmt options (parsenodes.h CURSOR_OPT_*).
const (
	cursorOptBinary = 0x01
	cursorOptScroll = 0x02
	cursorOptHold   = 0x20
)

// sqlCursor is a DECLAREd cursor.
type sqlCursor struct {
	name    string
	schema  *arrow.Schema // with the Postgres column names
	binary  bool          // DECLARE ... BINARY: rows in binary format
	hold    bool          // WITH HOLD: outlives its transaction
	inBlock bool          // declared in the transaction block still open
	res     *result
	rows    *rowCursor
	pos     int64 // rows fetched or moved over (the current row's number)
	closed  bool  // a FETCH portal of the extended protocol may outlive it
}

func (s *sqlCursor) close() {
	s.rows.close()
	s.res.release()
	s.closed = true
}

// formats are the result formats of the cursor's rows (nil: text).
func (s *sqlCursor) formats() []int16 {
	if s.binary {
		return []int16{1}
	}
	return nil
}

// closeCursors closes every cursor (all) or those without HOLD.
func (c *conn) closeCursors(all bool) {
	for name, cur := range c.cursors {
		if all || !cur.hold {
			cur.close()
			delete(c.cursors, name)
		}
	}
}

func noCursor(name string) error {
	return &paramError{state: "34000", msg: fmt.Sprintf("cursor \"%s\" does not exist", name)}
}

// declare runs DECLARE CURSOR.
func (c *conn) declare(ctx context.Context, sql string, d *pg_query.DeclareCursorStmt, describe bool) (*result, error) {
	res := &result{tag: "DECLARE CURSOR"}
	if describe {
		return res, nil
	}
	hold := d.Options&cursorOptHold != 0
	if !hold && c.txStatus == txIdle && !c.implicit {
		return nil, &paramError{state: "25P01", msg: "DECLARE CURSOR can only be used in transaction blocks"}
	}
	if d.Options&cursorOptScroll != 0 {
		return nil, plan.Errorf(plan.CodeUnsupported, "unsupported: SCROLL cursors (sluice cursors read forward only); declare it NO SCROLL")
	}
	if _, dup := c.cursors[d.Portalname]; dup {
		return nil, &paramError{state: "42P03", msg: fmt.Sprintf("cursor \"%s\" already exists", d.Portalname)}
	}
	q, ok := queryText(sql, pg_query.Token_CURSOR)
	if !ok || d.Query == nil {
		return nil, plan.Errorf(plan.CodeSyntax, "syntax error: DECLARE %s CURSOR without a query", d.Portalname)
	}
	rows, err := c.query(ctx, q)
	if err != nil {
		return nil, err
	}
	if rows.schema == nil {
		rows.release()
		return nil, &paramError{state: "42P11", msg: "DECLARE CURSOR must be a query that returns rows"}
	}
	if c.cursors == nil {
		c.cursors = map[string]*sqlCursor{}
	}
	c.cursors[d.Portalname] = &sqlCursor{name: d.Portalname, schema: rows.schema, binary: d.Options&cursorOptBinary != 0,
		hold: hold, inBlock: c.txStatus != txIdle, res: rows, rows: c.openCursor(ctx, rows)}
	return res, nil
}

// fetch runs FETCH and MOVE. A FETCH's rows are read when its result is
// written (so that an Execute row limit can split them); a MOVE reads
// over its rows here.
func (c *conn) fetch(ctx context.Context, f *pg_query.FetchStmt, describe bool) (*result, error) {
	cur := c.cursors[f.Portalname]
	if cur == nil {
		return nil, noCursor(f.Portalname)
	}
	// skip is the rows to go over first, count the rows to return.
	var skip, count int64
	backward := false
	switch n := f.HowMany; f.Direction {
	case pg_query.FetchDirection_FETCH_FORWARD:
		// FETCH n, FORWARD n, NEXT (1), ALL and FORWARD ALL (MaxInt64);
		// FETCH -n goes back, FORWARD 0 re-reads the current row.
		count, backward = n, n <= 0
	case pg_query.FetchDirection_FETCH_ABSOLUTE:
		// Row n: forward only when it is past the current one.
		skip, count, backward = n-cur.pos-1, 1, n <= cur.pos
	case pg_query.FetchDirection_FETCH_RELATIVE:
		skip, count, backward = n-1, 1, n <= 0
	default: // BACKWARD, PRIOR, FIRST, LAST (LAST reads to the end and back one)
		backward = true
	}
	if backward {
		return nil, &paramError{state: "55000", msg: "cursor can only scan forward",
			hint: "sluice cursors read forward only: FETCH [FORWARD] n, NEXT, ALL, ABSOLUTE or RELATIVE past the current row."}
	}
	if describe {
		if f.Ismove {
			return &result{tag: "MOVE"}, nil
		}
		return &result{schema: cur.schema, formats: cur.formats()}, nil
	}
	if skip > 0 {
		moved, err := cur.rows.skip(ctx, skip)
		cur.pos += moved
		if err != nil {
			return nil, err
		}
		if moved < skip { // past the end: nothing to return
			count = 0
		}
	}
	if f.Ismove {
		moved, err := cur.rows.skip(ctx, count)
		cur.pos += moved
		if err != nil {
			return nil, err
		}
		return &result{tag: "MOVE " + strconv.FormatInt(moved, 10)}, nil
	}
	return &result{schema: cur.schema, formats: cur.formats(), from: cur, limit: count}, nil
}

// closeCursor runs CLOSE name and CLOSE ALL.
func (c *conn) closeCursor(name string, describe bool) (*result, error) {
	if name == "" {
		if !describe {
			c.closeCursors(true)
		}
		return &result{tag: "CLOSE CURSOR ALL"}, nil
	}
	cur := c.cursors[name]
	if cur == nil {
		return nil, noCursor(name)
	}
	if !describe {
		cur.close()
		delete(c.cursors, name)
	}
	return &result{tag: "CLOSE CURSOR"}, nil
}

// skip goes over up to n rows of the cursor and returns how many it went
// over (fewer at the end).
func (r *rowCursor) skip(ctx context.Context, n int64) (int64, error) {
	var moved int64
	for moved < n {
		rec, err := r.next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return moved, err
		}
		k := min(int64(rec.NumRows())-int64(r.off), n-moved)
		r.off += int(k)
		moved += k
	}
	return moved, nil
}
