// Package pgwire serves the Postgres wire protocol (version 3) in front of
// a coordinator, so that psql, pgx, JDBC and BI tools can run sluice SQL.
// Protocol messages come from github.com/jackc/pgx/v5/pgproto3. Queries
// take the coordinator's own path (coordinator.Queries: submit a job, wait
// for it, read the result records from the bucket); the statements clients
// send around queries (SET, SHOW, BEGIN, catalog probes) are answered here
// (catalog.go). See docs/pgwire.md.
package pgwire

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/planner/plan"
)

// Auth methods.
const (
	AuthMD5       = "md5"
	AuthCleartext = "password" // only sensible with TLS
)

// Server is a Postgres wire protocol server.
type Server struct {
	Engine coordinator.Engine // *coordinator.Queries in production
	// User and Password are the one login the server accepts. With an
	// empty Password any user gets in without one (loopback only: the
	// command line refuses it elsewhere).
	User, Password string
	// Auth is AuthMD5 (the default) or AuthCleartext.
	Auth string
	// TLS, when set, is offered to clients that ask (sslmode=prefer or
	// require); with RequireTLS a client that does not is refused.
	TLS        *tls.Config
	RequireTLS bool
	// AllowCleartextWithoutTLS lets AuthCleartext take a password over a
	// connection without TLS, where anyone on the path can read it. Without
	// it such a client is refused (28000) and told to use TLS.
	AllowCleartextWithoutTLS bool
	// Version is what version() and server_version report after the
	// Postgres version clients parse.
	Version string
	Log     *slog.Logger

	// StartupTimeout bounds the startup phase of a connection (TLS, the
	// startup message, authentication): a client that has not logged in
	// by then is dropped. 0 is DefaultStartupTimeout.
	StartupTimeout time.Duration
	// MaxConns bounds the connections served at once, logged in or not;
	// one more is told "too many clients" (53300) and closed. 0 is
	// DefaultMaxConns.
	MaxConns int
	// MaxSQLBytes is the longest SQL text a client may send; a message
	// after login may be twice as long plus 64 KiB (parameters, framing)
	// before the connection is closed (54000), while text over the limit
	// in a message under it is refused by the engine (SL090). 0 is the
	// Engine's MaxSQLBytes() when it has one, else
	// coordinator.DefaultMaxSQLBytes.
	MaxSQLBytes int

	mu     sync.Mutex
	conns  map[uint32]*conn // by process id, for cancel requests
	active int              // connections being served
	wg     sync.WaitGroup
}

// Connection limits.
const (
	DefaultStartupTimeout = 30 * time.Second
	DefaultMaxConns       = 100
	// maxStartupBody bounds a message before login (a password): what
	// Postgres allows a startup packet, MAX_STARTUP_PACKET_LENGTH.
	maxStartupBody = 10_000
)

func (s *Server) startupTimeout() time.Duration {
	if s.StartupTimeout > 0 {
		return s.StartupTimeout
	}
	return DefaultStartupTimeout
}

func (s *Server) maxConns() int {
	if s.MaxConns > 0 {
		return s.MaxConns
	}
	return DefaultMaxConns
}

// maxMessageBytes bounds a message after login.
func (s *Server) maxMessageBytes() int {
	limit := s.MaxSQLBytes
	if limit <= 0 {
		if e, ok := s.Engine.(interface{ MaxSQLBytes() int }); ok {
			limit = e.MaxSQLBytes()
		}
	}
	if limit <= 0 {
		limit = coordinator.DefaultMaxSQLBytes
	}
	return 2*limit + 64<<10
}

// serverVersion is the Postgres version the server claims: clients pick
// their catalog queries by it.
const serverVersion = "15.0"

// Serve accepts connections on ln until ctx ends or ln is closed. A
// temporary accept error (out of file descriptors, a connection reset
// before it was accepted) is logged and retried after a pause that doubles
// from 5ms to 1s, as net/http does; connections over MaxConns are refused.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	go func() {
		<-ctx.Done()
		_ = ln.Close()
	}()
	defer s.wg.Wait()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			if !temporary(err) {
				return fmt.Errorf("pgwire accept: %w", err)
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.Log.Warn("pgwire accept failed, retrying", "err", err, "retry_in", delay)
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		delay = 0
		if !s.acquire() {
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.refuse(nc)
			}()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.release()
			s.serveConn(ctx, nc)
		}()
	}
}

// temporary reports whether an accept error may go away: the process or
// system is out of file descriptors or buffers, or a connection failed
// before it was accepted.
func temporary(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EAGAIN, syscall.EINTR, syscall.EPROTO, syscall.EPERM} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// acquire counts a connection in, unless MaxConns are served already.
func (s *Server) acquire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active >= s.maxConns() {
		return false
	}
	s.active++
	return true
}

func (s *Server) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
}

// refuse tells a connection over MaxConns so, as Postgres does, and closes
// it; the client has a second to read it.
func (s *Server) refuse(nc net.Conn) {
	defer nc.Close()
	s.Log.Warn("pgwire connection refused: too many clients", "remote", nc.RemoteAddr().String(), "max_conns", s.maxConns())
	_ = nc.SetDeadline(time.Now().Add(time.Second))
	be := pgproto3.NewBackend(nc, nc)
	be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "53300",
		Message: fmt.Sprintf("sorry, too many clients already (this server serves %d connections at once: --pg-max-conns)", s.maxConns())})
	_ = be.Flush()
}

func (s *Server) register(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil {
		s.conns = map[uint32]*conn{}
	}
	for {
		var b [4]byte
		_, _ = rand.Read(b[:])
		c.pid = binary.BigEndian.Uint32(b[:]) & 0x7fffffff
		if _, taken := s.conns[c.pid]; !taken && c.pid != 0 {
			break
		}
	}
	c.secret = make([]byte, 4)
	_, _ = rand.Read(c.secret)
	s.conns[c.pid] = c
}

func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c.pid)
}

// cancel handles a CancelRequest: the connection's running query, if the
// key matches, is cancelled (its job too).
func (s *Server) cancel(req *pgproto3.CancelRequest) {
	s.mu.Lock()
	c := s.conns[req.ProcessID]
	s.mu.Unlock()
	if c == nil || subtle.ConstantTimeCompare(c.secret, req.SecretKey) != 1 {
		return
	}
	c.cancelRunning()
}

func (s *Server) serveConn(ctx context.Context, nc net.Conn) {
	defer nc.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		_ = nc.Close()
	}()
	c := &conn{s: s, nc: nc, log: s.Log.With("remote", nc.RemoteAddr().String()),
		stmts: map[string]*statement{}, portals: map[string]*portal{}, cursors: map[string]*sqlCursor{},
		settings: defaultSettings()}
	c.in, c.be = nc, newBackend(nc, nc, maxStartupBody)
	s.register(c)
	defer s.unregister(c)
	// The whole startup phase, TLS handshake and login included, has
	// StartupTimeout: a client that connects and stays silent (or trickles)
	// holds a connection slot no longer.
	_ = nc.SetDeadline(time.Now().Add(s.startupTimeout()))
	ok, err := c.startup()
	if err != nil {
		if c.tooLarge(err) {
			return
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.log.Info("pgwire startup timed out", "timeout", s.startupTimeout())
			return
		}
		if !errors.Is(err, io.EOF) {
			c.log.Info("pgwire startup", "err", err)
		}
		return
	}
	if !ok {
		return
	}
	if err := c.nc.SetDeadline(time.Time{}); err != nil {
		return
	}
	// From here on the connection is read ahead, so that a client that
	// disconnects mid-query cancels its job.
	c.in = watchConn(ctx, c.nc, func() {
		c.log.Debug("pgwire client gone")
		cancel()
	})
	c.be = newBackend(c.in, c.nc, s.maxMessageBytes())
	c.loggedIn = true
	if err := c.loop(ctx); err != nil && !c.tooLarge(err) && !errors.Is(err, io.EOF) && ctx.Err() == nil {
		c.log.Info("pgwire connection", "err", err)
	}
}

// newBackend reads messages of at most maxBody bytes from r: a message
// claiming more fails before its body is read (pgproto3 would otherwise
// allocate whatever length a client claims).
func newBackend(r io.Reader, w io.Writer, maxBody int) *pgproto3.Backend {
	be := pgproto3.NewBackend(r, w)
	be.SetMaxBodyLen(maxBody)
	return be
}

// tooLarge reports whether err is a message over the size limit, and if so
// tells the client before the connection closes (the message is not read
// into memory, so the connection cannot go on). After login what the
// client is still sending of it is read and dropped for a few seconds (at
// most maxDrainBytes), so that it gets to read the error instead of a
// reset; before login nothing is.
func (c *conn) tooLarge(err error) bool {
	var me *pgproto3.ExceededMaxBodyLenErr
	if !errors.As(err, &me) {
		return false
	}
	c.log.Warn("pgwire message too large", "bytes", me.ActualBodyLen, "limit", me.MaxExpectedBodyLen)
	_ = c.nc.SetDeadline(time.Now().Add(drainTimeout))
	_ = c.fatal("54000", fmt.Sprintf("%s: a message of %d bytes is larger than the limit of %d bytes (SQL text: coordinator --max-sql-bytes)",
		plan.CodeSQLTooLarge, me.ActualBodyLen, me.MaxExpectedBodyLen))
	if c.loggedIn {
		_, _ = io.CopyN(io.Discard, c.in, int64(min(me.ActualBodyLen, maxDrainBytes)))
	}
	return true
}

// How long and how much of a message over the limit is read and dropped.
const (
	drainTimeout  = 5 * time.Second
	maxDrainBytes = 256 << 20
)

// conn is one client connection.
type conn struct {
	s   *Server
	nc  net.Conn
	be  *pgproto3.Backend
	log *slog.Logger
	// lastCatalogPath is who answered the last catalog SELECT (for
	// tests: catalog_engine.go).
	lastCatalogPath catalogPath

	pid      uint32
	secret   []byte
	tls      bool      // the connection is encrypted
	in       io.Reader // what be reads from
	loggedIn bool
	user, db string
	settings map[string]string

	stmts   map[string]*statement
	portals map[string]*portal
	cursors map[string]*sqlCursor // DECLAREd cursors

	txStatus   txState
	implicit   bool              // running a Query message of several statements outside a block
	localSaved map[string]string // settings before SET LOCAL, restored at the block's end
	settingsAt map[string]string // settings before the transaction's first SET, restored if it rolls back

	mu      sync.Mutex
	running context.CancelFunc // the query running now, nil when none
}

func (c *conn) cancelRunning() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running != nil {
		c.running()
	}
}

func (c *conn) send(msgs ...pgproto3.BackendMessage) error {
	for _, m := range msgs {
		c.be.Send(m)
	}
	return c.be.Flush()
}

func (c *conn) fatal(code, msg string) error {
	return c.send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: code, Message: msg})
}

// startup runs the startup phase: TLS negotiation, the startup message,
// authentication and the parameters clients expect. ok is false when the
// connection is done (a cancel request, a refused login).
func (c *conn) startup() (ok bool, err error) {
	for {
		msg, err := c.be.ReceiveStartupMessage()
		if err != nil {
			return false, err
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if c.s.TLS == nil || c.tls {
				if _, err := c.nc.Write([]byte{'N'}); err != nil {
					return false, err
				}
				continue
			}
			if _, err := c.nc.Write([]byte{'S'}); err != nil {
				return false, err
			}
			tc := tls.Server(c.nc, c.s.TLS)
			if err := tc.Handshake(); err != nil {
				return false, fmt.Errorf("TLS handshake: %w", err)
			}
			c.nc, c.tls = tc, true
			c.in, c.be = tc, newBackend(tc, tc, maxStartupBody)
		case *pgproto3.GSSEncRequest:
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return false, err
			}
		case *pgproto3.CancelRequest:
			c.s.cancel(m)
			return false, nil
		case *pgproto3.StartupMessage:
			if c.s.RequireTLS && !c.tls {
				return false, c.fatal("28000", "this server requires TLS (sslmode=require)")
			}
			c.user, c.db = m.Parameters["user"], m.Parameters["database"]
			if c.db == "" {
				c.db = c.user
			}
			if err := c.authenticate(); err != nil {
				return false, err
			}
			if err := c.startupOptions(m.Parameters); err != nil {
				var pe *paramError
				if errors.As(err, &pe) {
					return false, c.fatal(pe.state, pe.msg)
				}
				return false, err
			}
			return true, c.ready()
		default:
			return false, c.fatal("08P01", fmt.Sprintf("unexpected startup message %T", msg))
		}
	}
}

var errAuthFailed = errors.New("password authentication failed")

func (c *conn) authenticate() error {
	if c.s.Password == "" {
		return nil
	}
	fail := func() error {
		_ = c.fatal("28P01", fmt.Sprintf("password authentication failed for user %q", c.user))
		return errAuthFailed
	}
	if c.s.Auth == AuthCleartext {
		if !c.tls && !c.s.AllowCleartextWithoutTLS {
			_ = c.fatal("28000", "this server takes passwords in cleartext only over TLS: connect with sslmode=require")
			return errAuthFailed
		}
		if err := c.send(&pgproto3.AuthenticationCleartextPassword{}); err != nil {
			return err
		}
		pw, err := c.password(pgproto3.AuthTypeCleartextPassword)
		if err != nil {
			return err
		}
		if c.user != c.s.User || subtle.ConstantTimeCompare([]byte(pw), []byte(c.s.Password)) != 1 {
			return fail()
		}
		return nil
	}
	var salt [4]byte
	_, _ = rand.Read(salt[:])
	if err := c.send(&pgproto3.AuthenticationMD5Password{Salt: salt}); err != nil {
		return err
	}
	pw, err := c.password(pgproto3.AuthTypeMD5Password)
	if err != nil {
		return err
	}
	if c.user != c.s.User || subtle.ConstantTimeCompare([]byte(pw), []byte(md5Password(c.s.User, c.s.Password, salt))) != 1 {
		return fail()
	}
	return nil
}

// md5Password is what a client sends for md5 auth:
// "md5" + md5hex(md5hex(password + user) + salt).
func md5Password(user, password string, salt [4]byte) string {
	inner := md5.Sum([]byte(password + user))
	h := md5.New()
	h.Write([]byte(hex.EncodeToString(inner[:])))
	h.Write(salt[:])
	return "md5" + hex.EncodeToString(h.Sum(nil))
}

func (c *conn) password(authType uint32) (string, error) {
	if err := c.be.SetAuthType(authType); err != nil {
		return "", err
	}
	msg, err := c.be.Receive()
	if err != nil {
		return "", err
	}
	pm, ok := msg.(*pgproto3.PasswordMessage)
	if !ok {
		_ = c.fatal("08P01", fmt.Sprintf("expected a password message, got %T", msg))
		return "", errAuthFailed
	}
	return pm.Password, nil
}

func (c *conn) ready() error {
	c.be.Send(&pgproto3.AuthenticationOk{})
	for _, k := range []string{"server_version", "server_encoding", "client_encoding", "DateStyle", "IntervalStyle",
		"TimeZone", "integer_datetimes", "standard_conforming_strings", "application_name", "is_superuser", "session_authorization"} {
		c.be.Send(&pgproto3.ParameterStatus{Name: k, Value: c.setting(k)})
	}
	c.be.Send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: c.secret})
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	return c.be.Flush()
}

func (c *conn) setting(k string) string {
	switch k {
	case "session_authorization", "current_user", "session_user":
		return c.user
	}
	return c.settings[lower(k)]
}

func defaultSettings() map[string]string {
	return map[string]string{
		"server_version": serverVersion, "server_version_num": "150000", "server_encoding": "UTF8",
		"client_encoding": "UTF8", "datestyle": "ISO, MDY", "intervalstyle": "postgres", "timezone": "UTC",
		"integer_datetimes": "on", "standard_conforming_strings": "on", "application_name": "",
		"is_superuser": "off", "search_path": `"$user", public`, "transaction_isolation": "read committed",
		"default_transaction_isolation": "read committed", "transaction_read_only": "on", "max_identifier_length": "63",
		"extra_float_digits": "1", "lc_collate": "C", "lc_ctype": "C", "lc_messages": "C", "statement_timeout": "0",
		// Read-only limits clients read (pgjdbc getImportedKeys needs max_index_keys).
		"max_index_keys": "32", "max_function_args": "100", "block_size": "8192", "segment_size": "131072",
	}
}
