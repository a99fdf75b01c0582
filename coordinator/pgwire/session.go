package pgwire

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5/pgproto3"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// txState is where a connection is with transaction blocks.
type txState int

const (
	txIdle   txState = iota // not in a transaction block
	txBlock                 // in a transaction block (BEGIN)
	txFailed                // in a failed transaction block: only COMMIT / ROLLBACK run
)

// status is the state as ReadyForQuery reports it.
func (s txState) status() byte {
	switch s {
	case txBlock:
		return 'T'
	case txFailed:
		return 'E'
	}
	return 'I'
}

// sluice is read-only, so a transaction block changes no data; it is kept
// for what clients see of it: the status ReadyForQuery reports (libpq,
// psycopg2 and JDBC read it), the cursors that live until its end, SET
// LOCAL, and the failed state after an error, in which Postgres runs
// nothing but COMMIT and ROLLBACK.

// errAborted is what a statement in a failed transaction block gets.
var errAborted = &paramError{state: "25P02", msg: "current transaction is aborted, commands ignored until end of transaction block"}

// endsAborted reports whether n may run in a failed transaction block.
func endsAborted(n *pg_query.Node) bool {
	ts := n.GetTransactionStmt()
	if ts == nil {
		return false
	}
	switch ts.Kind {
	case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT, pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK,
		pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return true
	}
	return false
}

// failed moves a transaction block to the failed state after an error.
func (c *conn) failed() {
	if c.txStatus == txBlock {
		c.txStatus = txFailed
	}
}

// transaction runs BEGIN, COMMIT, ROLLBACK and the savepoint statements.
func (c *conn) transaction(ts *pg_query.TransactionStmt, describe bool) (*result, error) {
	warn := func(code, msg string) *pgproto3.NoticeResponse {
		return &pgproto3.NoticeResponse{Severity: "WARNING", SeverityUnlocalized: "WARNING", Code: code, Message: msg}
	}
	outside := func(what string) error {
		return &paramError{state: "25P01", msg: what + " can only be used in transaction blocks"}
	}
	res := &result{}
	switch ts.Kind {
	case pg_query.TransactionStmtKind_TRANS_STMT_BEGIN, pg_query.TransactionStmtKind_TRANS_STMT_START:
		res.tag = "BEGIN"
		if ts.Kind == pg_query.TransactionStmtKind_TRANS_STMT_START {
			res.tag = "START TRANSACTION"
		}
		if describe {
			return res, nil
		}
		if c.txStatus != txIdle {
			res.notice = warn("25001", "there is already a transaction in progress")
			return res, nil
		}
		c.txStatus = txBlock
	case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT, pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		res.tag = "COMMIT"
		if ts.Kind == pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK || c.txStatus == txFailed {
			res.tag = "ROLLBACK" // COMMIT of a failed block rolls it back
		}
		if describe {
			return res, nil
		}
		if c.txStatus == txIdle {
			res.notice = warn("25P01", "there is no transaction in progress")
		}
		c.endTransaction(res.tag == "COMMIT")
	case pg_query.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
		res.tag = "SAVEPOINT"
		if !describe && c.txStatus == txIdle {
			return nil, outside("SAVEPOINT")
		}
	case pg_query.TransactionStmtKind_TRANS_STMT_RELEASE:
		res.tag = "RELEASE"
		if !describe && c.txStatus == txIdle {
			return nil, outside("RELEASE SAVEPOINT")
		}
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		// Savepoints are not tracked: rolling back to one leaves the
		// failed state (what JDBC's autosave relies on).
		res.tag = "ROLLBACK"
		if describe {
			return res, nil
		}
		if c.txStatus == txIdle {
			return nil, outside("ROLLBACK TO SAVEPOINT")
		}
		c.txStatus = txBlock
	default:
		return nil, plan.Errorf(plan.CodeUnsupported, "unsupported: two-phase commit (sluice is read-only)")
	}
	return res, nil
}

// endTransaction ends a transaction block: its cursors are closed (but
// the WITH HOLD ones a commit keeps) and SET LOCAL values are undone.
func (c *conn) endTransaction(commit bool) {
	for name, cur := range c.cursors {
		if !cur.hold || (!commit && cur.inBlock) {
			cur.close()
			delete(c.cursors, name)
		} else {
			cur.inBlock = false
		}
	}
	if commit {
		for k, v := range c.localSaved {
			c.settings[k] = v
		}
		c.settingsAt = nil
	} else {
		c.rollbackSettings()
	}
	c.localSaved = nil
	c.txStatus = txIdle
}

// Settings are transactional, as in Postgres: a SET (or RESET) in a
// transaction that rolls back is undone, whether the transaction was a
// block (BEGIN ... ROLLBACK, or COMMIT of a failed block) or the implicit
// one around a Query message of several statements or the extended
// messages up to a Sync. The settings as they were before the
// transaction's first SET are kept in settingsAt until it ends.

// saveSettings remembers the settings before the transaction's first SET.
func (c *conn) saveSettings() {
	if c.settingsAt == nil {
		c.settingsAt = maps.Clone(c.settings)
	}
}

// commitSettings ends an implicit transaction that succeeded: its SETs stay.
// In a block it does nothing (the block's end decides).
func (c *conn) commitSettings() {
	if c.txStatus == txIdle {
		c.settingsAt = nil
	}
}

// rollbackSettings undoes the SETs of the transaction that failed.
func (c *conn) rollbackSettings() {
	if c.settingsAt != nil {
		c.settings = c.settingsAt
		c.settingsAt = nil
	}
	c.localSaved = nil
}

// set runs SET / RESET. A value that a setting sluice acts on cannot take
// is refused as Postgres refuses it (22023).
func (c *conn) set(s *pg_query.VariableSetStmt) error {
	name := lower(s.Name)
	var value string
	switch s.Kind {
	case pg_query.VariableSetKind_VAR_RESET, pg_query.VariableSetKind_VAR_SET_DEFAULT:
		value = defaultSettings()[name]
	case pg_query.VariableSetKind_VAR_RESET_ALL:
		c.saveSettings()
		c.settings = defaultSettings()
		return nil
	case pg_query.VariableSetKind_VAR_SET_VALUE:
		var vals []string
		for _, a := range s.Args {
			if v, ok := constValue(a); ok {
				if str, isStr := v.(string); isStr && name == "search_path" {
					// a list of names: each is quoted where it must be,
					// as Postgres flattens it (public, "$user")
					v = quoteIdent(str)
				}
				vals = append(vals, fmt.Sprint(v))
			}
		}
		value = strings.Join(vals, ", ")
	default:
		return nil
	}
	if name == "" {
		return nil
	}
	v, err := checkSetting(name, value)
	if err != nil {
		return err
	}
	c.saveSettings()
	if s.IsLocal {
		if c.txStatus == txIdle {
			return nil // Postgres warns and ignores it
		}
		if c.localSaved == nil {
			c.localSaved = map[string]string{}
		}
		if _, saved := c.localSaved[name]; !saved {
			c.localSaved[name] = c.settings[name]
		}
	} else if _, saved := c.localSaved[name]; saved {
		// A plain SET after SET LOCAL outlives the block: its end
		// restores this value.
		c.localSaved[name] = v
	}
	c.settings[name] = v
	return nil
}

// checkSetting validates the value of a setting that sluice acts on and
// returns it as SHOW reports it; others are kept as given.
func checkSetting(name, value string) (string, error) {
	switch name {
	case "statement_timeout":
		ms, err := parseMillis(value)
		if err != nil {
			return "", &paramError{state: "22023", msg: fmt.Sprintf("invalid value for parameter \"%s\": \"%s\"", name, value)}
		}
		if ms < 0 || ms > math.MaxInt32 {
			return "", &paramError{state: "22023", msg: fmt.Sprintf("%d ms is outside the valid range for parameter \"%s\" (0 .. %d)",
				ms, name, math.MaxInt32)}
		}
		return showMillis(ms), nil
	}
	return value, nil
}

// timeUnits are the units of a time setting, in milliseconds.
var timeUnits = []struct {
	name string
	ms   float64
}{{"d", 86400000}, {"h", 3600000}, {"min", 60000}, {"s", 1000}, {"ms", 1}, {"us", 0.001}}

// parseMillis reads a time setting as Postgres does: a number, integer or
// not, optionally followed by a unit (us, ms, s, min, h, d; none is
// milliseconds), rounded to whole milliseconds.
func parseMillis(v string) (int64, error) {
	v = strings.TrimSpace(v)
	i := strings.IndexFunc(v, func(r rune) bool { return unicode.IsLetter(r) })
	num, unit := v, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(v[:i]), v[i:]
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("not a number: %q", v)
	}
	mult := 1.0
	if unit != "" {
		found := false
		for _, u := range timeUnits {
			if u.name == unit {
				mult, found = u.ms, true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown unit %q", unit)
		}
	}
	ms := math.Round(f * mult)
	if ms > math.MaxInt32 || ms < math.MinInt32 {
		return 0, fmt.Errorf("out of range: %q", v)
	}
	return int64(ms), nil
}

// showMillis writes milliseconds as SHOW does: in the largest unit that
// divides them.
func showMillis(ms int64) string {
	if ms == 0 {
		return "0"
	}
	for _, u := range timeUnits[:5] {
		if ms%int64(u.ms) == 0 {
			return strconv.FormatInt(ms/int64(u.ms), 10) + u.name
		}
	}
	return strconv.FormatInt(ms, 10) + "ms"
}

// statementTimeout is the connection's statement_timeout (0: none).
func (c *conn) statementTimeout() time.Duration {
	ms, err := parseMillis(c.settings["statement_timeout"])
	if err != nil || ms <= 0 {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// errStatementTimeout ends a statement that ran past statement_timeout.
var errStatementTimeout = errors.New("canceling statement due to statement timeout")

// statement returns the context one statement runs in: cancelled by a
// CancelRequest (cause errCancelled) or when statement_timeout elapses
// (cause errStatementTimeout). done ends it.
func (c *conn) statement(ctx context.Context) (sctx context.Context, done func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := func() {}
	if d := c.statementTimeout(); d > 0 {
		var cancelTimeout context.CancelFunc
		ctx, cancelTimeout = context.WithTimeoutCause(ctx, d, errStatementTimeout)
		stop = func() { cancelTimeout() }
	}
	c.mu.Lock()
	c.running = func() { cancel(errCancelled) }
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		c.running = nil
		c.mu.Unlock()
		stop()
		cancel(nil)
	}
}

// stopped is the error a statement whose context ended gets: why it was
// cancelled (a cancel request, statement_timeout), else errCancelled (the
// connection is going away).
func stopped(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, errStatementTimeout) || errors.Is(cause, errCancelled) {
		return cause
	}
	return errCancelled
}

// startupOptions applies the settings of a startup message: its
// parameters, and the -c name=value (or --name=value) switches of its
// options parameter (libpq's PGOPTIONS, options=-c statement_timeout=5s in
// a connection string).
func (c *conn) startupOptions(params map[string]string) error {
	apply := func(name, value string) error {
		name = lower(name)
		v, err := checkSetting(name, value)
		if err != nil {
			return err
		}
		c.settings[name] = v
		return nil
	}
	for k, v := range params {
		switch k {
		case "user", "database":
			continue
		case "options":
			opts := splitOptions(v)
			for i := 0; i < len(opts); i++ {
				o := opts[i]
				switch {
				case o == "-c" && i+1 < len(opts):
					i++
					o = opts[i]
				case strings.HasPrefix(o, "-c"):
					o = o[2:]
				case strings.HasPrefix(o, "--"):
					o = o[2:]
				default:
					continue // a server switch sluice has no use for
				}
				name, value, ok := strings.Cut(o, "=")
				if !ok {
					return &paramError{state: "42601", msg: fmt.Sprintf("-c %s requires a value", o)}
				}
				if err := apply(strings.ReplaceAll(name, "-", "_"), value); err != nil {
					return err
				}
			}
			continue
		}
		if err := apply(k, v); err != nil {
			return err
		}
	}
	return nil
}

// splitOptions splits the options startup parameter at whitespace; a
// backslash takes the next character as it is (pg_split_opts).
func splitOptions(s string) []string {
	var out []string
	var b strings.Builder
	in, esc := false, false
	for _, r := range s {
		switch {
		case esc:
			b.WriteRune(r)
			esc, in = false, true
		case r == '\\':
			esc = true
		case unicode.IsSpace(r):
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// sessionValues replaces the session's SQL value functions in a query for
// the engine (CURRENT_USER, SESSION_USER, USER, CURRENT_ROLE,
// CURRENT_CATALOG) with their values as string literals: the engine has
// no session, and these are constants of the connection, as the catalog
// makes them (pgCatalog.function). It reads the query's tokens, so a
// quoted identifier or a string that spells one is left alone; these
// words are reserved in Postgres, so an unquoted one is always the
// function. Result columns keep the names Postgres gives (pgNames reads
// the client's parse tree).
func (c *conn) sessionValues(sql string) string {
	sr, err := pg_query.Scan(sql)
	if err != nil {
		return sql
	}
	var b strings.Builder
	last := 0
	for _, t := range sr.Tokens {
		var v string
		switch t.Token {
		case pg_query.Token_CURRENT_USER, pg_query.Token_SESSION_USER, pg_query.Token_USER, pg_query.Token_CURRENT_ROLE:
			v = c.user
		case pg_query.Token_CURRENT_CATALOG:
			v = c.db
		default:
			continue
		}
		b.WriteString(sql[last:t.Start])
		b.WriteString(quoteLit(v))
		last = int(t.End)
	}
	if last == 0 {
		return sql
	}
	b.WriteString(sql[last:])
	return b.String()
}

// discard runs DISCARD. DISCARD ALL returns the session to its state at
// connection (what a pooler such as PgBouncer sends between clients):
// every cursor closed, every prepared statement gone, every setting back
// to its default; like Postgres it refuses to run in a transaction block.
// Sluice has no temporary tables, sequences or cached plans, so the other
// targets only answer.
func (c *conn) discard(d *pg_query.DiscardStmt, describe bool) (*result, error) {
	switch d.Target {
	case pg_query.DiscardMode_DISCARD_PLANS:
		return &result{tag: "DISCARD PLANS"}, nil
	case pg_query.DiscardMode_DISCARD_SEQUENCES:
		return &result{tag: "DISCARD SEQUENCES"}, nil
	case pg_query.DiscardMode_DISCARD_TEMP:
		return &result{tag: "DISCARD TEMP"}, nil
	}
	res := &result{tag: "DISCARD ALL"}
	if describe {
		return res, nil
	}
	if c.txStatus != txIdle || c.implicit {
		return nil, &paramError{state: "25001", msg: "DISCARD ALL cannot run inside a transaction block"}
	}
	c.closeCursors(true)
	c.dropStatements()
	c.saveSettings()
	c.settings = defaultSettings()
	return res, nil
}

// deallocate runs DEALLOCATE: the prepared statements of the SQL level
// and of the protocol share one namespace, as in Postgres.
func (c *conn) deallocate(d *pg_query.DeallocateStmt, describe bool) (*result, error) {
	res := &result{tag: "DEALLOCATE"}
	if d.Isall || d.Name == "" {
		res.tag = "DEALLOCATE ALL"
	}
	if describe {
		return res, nil
	}
	if res.tag == "DEALLOCATE ALL" {
		c.dropStatements()
		return res, nil
	}
	if _, ok := c.stmts[d.Name]; !ok {
		return nil, &paramError{state: "26000", msg: fmt.Sprintf("prepared statement \"%s\" does not exist", d.Name)}
	}
	delete(c.stmts, d.Name)
	return res, nil
}

// dropStatements drops every named prepared statement (the unnamed one
// lives until the next Parse).
func (c *conn) dropStatements() {
	for name := range c.stmts {
		if name != "" {
			delete(c.stmts, name)
		}
	}
}
